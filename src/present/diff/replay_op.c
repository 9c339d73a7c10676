/*
 * Ops, lanes and changes of `gpufl replay-check` in words (replay_op.h).
 */
#include "present/diff/replay_op.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/names.h"

const char *gpufl__replay_op_word(unsigned what)
{
    switch (what) {
    case GPUFL__RP_KERNEL: return "kernel";
    case GPUFL__RP_COPY: return "memcpy";
    case GPUFL__RP_MEMSET: return "memset";
    case GPUFL__RP_ALLOC: return "alloc";
    case GPUFL__RP_FREE: return "free";
    case GPUFL__RP_ALLOCATOR: return "allocator";
    default: return "op";
    }
}

const char *gpufl__replay_lane_key(unsigned kind)
{
    switch (kind) {
    case GPUFL__RP_LANE_STREAM: return "stream";
    case GPUFL__RP_LANE_ALLOCS: return "allocations";
    case GPUFL__RP_LANE_BLOCKS: return "framework_blocks";
    default: return "allocator";
    }
}

const char *gpufl__replay_lane_words(unsigned kind)
{
    switch (kind) {
    case GPUFL__RP_LANE_STREAM: return "stream";
    case GPUFL__RP_LANE_ALLOCS: return "driver allocations";
    case GPUFL__RP_LANE_BLOCKS: return "framework blocks";
    default: return "allocator records";
    }
}

const char *gpufl__replay_change_key(unsigned change)
{
    switch (change) {
    case GPUFL__RP_SAME: return "same";
    case GPUFL__RP_CH_NAME: return "name";
    case GPUFL__RP_CH_CONFIG: return "launch_config";
    case GPUFL__RP_CH_SIZE: return "size";
    case GPUFL__RP_CH_OTHER: return "other_op";
    case GPUFL__RP_CH_EXTRA: return "extra";
    case GPUFL__RP_CH_MISSING: return "missing";
    case GPUFL__RP_CH_REPLACED: return "replaced";
    case GPUFL__RP_CH_DIVERGED: return "diverged";
    case GPUFL__RP_CH_ONLY_A: return "only_a";
    default: return "only_b";
    }
}

const char *gpufl__replay_field_key(unsigned bit)
{
    switch (bit) {
    case GPUFL__RP_F_GRID: return "grid";
    case GPUFL__RP_F_BLOCK: return "block";
    case GPUFL__RP_F_REGISTERS: return "registers";
    case GPUFL__RP_F_SMEM_STATIC: return "smem_static";
    case GPUFL__RP_F_SMEM_DYNAMIC: return "smem_dynamic";
    default: return "graph";
    }
}

/* name, cut to width bytes with "..." (never inside a UTF-8 sequence),
 * control characters as '?'. */
static void fit(const char *name, size_t width, char *buf, size_t len)
{
    size_t n = strlen(name);
    bool cut = width && n > width;
    if (cut) {
        n = width - 3;
        while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
            n--;
    }
    if (n + 4 > len)
        n = len > 4 ? len - 4 : 0;
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
    strcpy(buf + n, cut ? "..." : "");
}

void gpufl__replay_op_text(const gpufl__rp_key *k, size_t name_width, char *buf, size_t len)
{
    const char *graph = k->graph ? " (graph)" : "";
    switch (k->what) {
    case GPUFL__RP_KERNEL: {
        char name[512];
        fit(k->name, name_width, name, sizeof name);
        if (k->grid[0] == 0 && k->block[0] == 0) /* compared by name only */
            snprintf(buf, len, "kernel %s%s", name, graph);
        else
            snprintf(buf, len, "kernel %s grid(%u,%u,%u) block(%u,%u,%u) regs %u smem %u+%u%s", name, k->grid[0],
                     k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2], k->registers, k->smem_static,
                     k->smem_dynamic, graph);
        break;
    }
    case GPUFL__RP_COPY:
        snprintf(buf, len, "memcpy %s %s->%s %" PRIu64 " B%s", gpufl__copy_kind(k->kind)->key,
                 gpufl__mem_kind(k->src_kind)->key, gpufl__mem_kind(k->dst_kind)->key, k->bytes, graph);
        break;
    case GPUFL__RP_MEMSET:
        snprintf(buf, len, "memset %s %" PRIu64 " B value %u%s", gpufl__mem_kind(k->kind)->key, k->bytes, k->value,
                 graph);
        break;
    case GPUFL__RP_ALLOC:
    case GPUFL__RP_FREE:
        snprintf(buf, len, "%s%s %s %" PRIu64 " B", k->what == GPUFL__RP_ALLOC ? "alloc" : "free",
                 k->failed ? " FAILED" : "", gpufl__mem_kind(k->kind)->key, k->bytes);
        break;
    case GPUFL__RP_ALLOCATOR: {
        char reason[80];
        fit(k->name, 40, reason, sizeof reason);
        snprintf(buf, len, "allocator %s: allocated %" PRIu64 " B, reserved %" PRIu64 " B", reason, k->bytes,
                 k->reserved);
        break;
    }
    default: snprintf(buf, len, "op"); break;
    }
}
