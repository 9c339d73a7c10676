/*
 * An out-of-memory diagnosed (see ana_oom.h).
 */
#include "analyze/ana_oom.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/ana_live_at.h"
#include "analyze/ana_util.h"
#include "core/event.h"
#include "read/rows.h"

/* Finds the incident: the last "oom" trigger and the last failed allocation
 * at or before it, else the first failed allocation. */
static void incident(const gpufl__rows *a, gpufl__ana_oom *o)
{
    const gpufl_trace_triggers *g = a->triggers;
    size_t trig = SIZE_MAX;
    for (size_t i = 0; i < g->n; i++)
        if (!strcmp(gpufl__rows_str(a, g->kind[i]), "oom"))
            trig = i;
    size_t failed = SIZE_MAX;
    for (size_t i = 0; i < gpufl__m_n(a); i++) {
        if (!gpufl__m_failed(a, i))
            continue;
        if (trig == SIZE_MAX) {
            failed = i;
            break;
        }
        if (gpufl__m_ts(a, i) > g->ts_ns[trig])
            break; /* rows come in time order */
        failed = i;
    }
    if (trig == SIZE_MAX && failed == SIZE_MAX)
        return;
    o->found = true;
    if (trig != SIZE_MAX) {
        o->has_trigger = true;
        o->at_ns = g->ts_ns[trig];
        o->tid = g->tid[trig];
        o->detail = g->detail[trig];
        o->dump = g->dump[trig];
    }
    if (failed != SIZE_MAX) {
        uint32_t c = gpufl__m_caller(a, failed);
        o->has_failed = o->has_requested = true;
        o->at_ns = gpufl__m_ts(a, failed);
        o->requested_bytes = gpufl__m_bytes(a, failed);
        o->device = gpufl__m_device(a, failed);
        if (gpufl__caller_tid(a, c))
            o->tid = gpufl__caller_tid(a, c);
        o->source = a->memory->framework[failed] ? GPUFL__OOM_SOURCE_FRAMEWORK : GPUFL__OOM_SOURCE_CUDA;
    }
    o->time_ns = gpufl__span(a->start_ns, o->at_ns);
}

/* The allocator's last state at or before the OOM on its device; without a
 * failed allocation, its last state on any device gives the device. */
static void allocator(const gpufl__rows *a, gpufl__ana_oom *o)
{
    const gpufl_trace_allocator *al = a->allocator;
    size_t last = SIZE_MAX, last_oom = SIZE_MAX;
    for (size_t i = 0; i < al->n && al->ts_ns[i] <= o->at_ns; i++) {
        if (o->has_failed && al->device[i] != o->device)
            continue;
        last = i;
        if (al->requested[i] && !strcmp(gpufl__rows_str(a, al->reason[i]), "oom"))
            last_oom = i;
    }
    if (last == SIZE_MAX)
        return;
    /* the framework's OOM state is stamped when its observer was called;
     * gpufl's record of the failure comes after the live blocks' snapshot,
     * which can take seconds: the state dates the OOM, and is the state of
     * it (a sample taken meanwhile is not) */
    if (last_oom != SIZE_MAX && o->source == GPUFL__OOM_SOURCE_FRAMEWORK &&
        (!o->has_requested || al->requested[last_oom] == o->requested_bytes)) {
        last = last_oom;
        o->at_ns = al->ts_ns[last_oom];
        o->time_ns = gpufl__span(a->start_ns, o->at_ns);
    }
    if (!o->has_failed) { /* the framework's own record of the OOM says what and where */
        o->device = al->device[last];
        o->source = GPUFL__OOM_SOURCE_FRAMEWORK;
        if (last_oom != SIZE_MAX) {
            o->has_requested = true;
            o->requested_bytes = al->requested[last_oom];
        }
    }
    o->has_allocator = true;
    o->framework = al->framework[last];
    o->allocated = al->allocated[last];
    o->reserved = al->reserved[last];
    o->active = al->active[last];
    o->inactive_split = al->inactive_split[last];
    o->largest_free = al->largest_free[last];
    o->alloc_retries = al->alloc_retries[last];
    o->ooms = al->ooms[last];
    if (al->device_free[last]) {
        o->has_free = true;
        o->device_free_bytes = al->device_free[last];
        o->memory_source = GPUFL__OOM_MEM_ALLOCATOR;
    }
}

#define NVML_AFTER_NS 2000000000ull /* 2 s: a few sampling intervals */

/* The NVML sample nearest the OOM (below) for the memory figures; the
 * device's description's total when there is none. */
static void device_memory(const gpufl__rows *a, gpufl__ana_oom *o)
{
    /* The first sample after the OOM, when one came within NVML_AFTER_NS,
     * else the last one before: the memory that failed the request is still
     * held until the program handles the error, and a sample from before
     * the OOM may predate the very allocations that filled the GPU. */
    size_t last = SIZE_MAX, last_proc = SIZE_MAX, next = SIZE_MAX, next_proc = SIZE_MAX;
    for (size_t i = 0; i < gpufl__d_n(a) && gpufl__d_ts(a, i) <= o->at_ns + NVML_AFTER_NS; i++) {
        if (gpufl__d_device(a, i) != o->device)
            continue;
        bool after = gpufl__d_ts(a, i) > o->at_ns;
        if (gpufl__d_valid(a, i) & GPUFL__DS_MEMORY) {
            if (!after)
                last = i;
            else if (next == SIZE_MAX)
                next = i;
        }
        if (gpufl__d_valid(a, i) & GPUFL__DS_PROC_MEM) {
            if (!after)
                last_proc = i;
            else if (next_proc == SIZE_MAX)
                next_proc = i;
        }
    }
    if (next != SIZE_MAX)
        last = next;
    if (next_proc != SIZE_MAX)
        last_proc = next_proc;
    if (last != SIZE_MAX) {
        uint64_t used = gpufl__d_mem_used(a, last), total = gpufl__d_mem_total(a, last);
        uint64_t free_b = a->dev->mem_free_bytes[last];
        if (!free_b && total > used) /* written before free was recorded */
            free_b = total - used;
        o->has_all_used = true;
        o->all_processes_used_bytes = used;
        if (total) {
            o->has_total = true;
            o->device_total_bytes = total;
        }
        if (!o->has_free) {
            o->has_free = true;
            o->device_free_bytes = free_b;
            o->memory_source = GPUFL__OOM_MEM_NVML;
        }
    }
    if (last_proc != SIZE_MAX) {
        o->has_process_used = true;
        o->process_used_bytes = gpufl__d_proc_mem(a, last_proc);
    }
    const gpufl_trace_device *d = gpufl__rows_device(a, o->device);
    if (!o->has_total && d && d->memory_total_bytes) {
        o->has_total = true;
        o->device_total_bytes = d->memory_total_bytes;
        if (o->memory_source == GPUFL__OOM_MEM_NONE)
            o->memory_source = GPUFL__OOM_MEM_DEVICE_INFO;
    }
}

/* Whether allocation x goes before y among the largest. */
static bool larger(const gpufl__ana_oom_live *x, const gpufl__ana_oom_live *y)
{
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes;
    if (x->ts_ns != y->ts_ns)
        return x->ts_ns < y->ts_ns;
    return x->address < y->address;
}

static uint32_t scope_name(const gpufl__rows *a, uint64_t id)
{
    for (size_t i = 0; id && i < a->scopes->n; i++)
        if (gpufl__s_id(a->scopes, i) == id)
            return gpufl__s_name(a->scopes, i);
    return 0;
}

static void keep_largest(const gpufl__rows *a, gpufl__ana_oom *o, size_t i)
{
    uint32_t c = gpufl__m_caller(a, i);
    gpufl__ana_oom_live l = {.ts_ns = gpufl__m_ts(a, i),
                             .address = gpufl__m_address(a, i),
                             .bytes = gpufl__m_bytes(a, i),
                             .framework = a->memory->framework[i] != 0,
                             .tid = gpufl__caller_tid(a, c),
                             .scope = gpufl__caller_scope(a, c),
                             .nvtx = gpufl__caller_nvtx(a, c),
                             .stack = gpufl__caller_stack(a, c)};
    uint32_t k = o->nlive < GPUFL__ANA_OOM_LIVE ? o->nlive++ : GPUFL__ANA_OOM_LIVE;
    while (k > 0 && larger(&l, &o->live[k - 1])) {
        if (k < GPUFL__ANA_OOM_LIVE)
            o->live[k] = o->live[k - 1];
        k--;
    }
    if (k < GPUFL__ANA_OOM_LIVE)
        o->live[k] = l;
}

/* Replays the device's allocations up to the OOM, the two layers apart (a
 * framework block shares its address with the segment holding it). */
static int live_at_oom(const gpufl__rows *a, gpufl__ana_oom *o)
{
    size_t n = gpufl__m_n(a);
    uint8_t *live;
    int rc = gpufl__ana_live_at(a, o->device, o->at_ns, true, &live);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!live[i])
            continue;
        unsigned layer = a->memory->framework[i] ? 1 : 0;
        o->live_count[layer]++;
        o->live_bytes[layer] += gpufl__m_bytes(a, i);
        keep_largest(a, o, i);
    }
    for (uint32_t k = 0; k < o->nlive; k++) {
        gpufl__ana_oom_live *l = &o->live[k];
        l->scope_name = scope_name(a, l->scope);
        /* a segment and the blocks in it are the same memory: say so */
        for (size_t i = 0; !l->framework && i < n && rc == 0; i++) {
            uint64_t at = gpufl__m_address(a, i);
            if (live[i] && a->memory->framework[i] && at >= l->address && at - l->address < l->bytes) {
                l->blocks_inside++;
                l->block_bytes_inside += gpufl__m_bytes(a, i);
            }
        }
    }
    free(live);
    return rc;
}

static void classify(gpufl__ana_oom *o)
{
    uint64_t req = o->requested_bytes, total = o->device_total_bytes;
    uint64_t free_b = o->has_free ? o->device_free_bytes : 0;
    if (o->has_all_used && o->has_process_used) {
        o->has_other = true;
        o->other_processes_bytes = o->all_processes_used_bytes > o->process_used_bytes
                                       ? o->all_processes_used_bytes - o->process_used_bytes
                                       : 0;
    }
    if (o->has_allocator)
        o->cached_free_bytes = o->reserved > o->allocated ? o->reserved - o->allocated : 0;
    o->reclaimable_bytes = o->cached_free_bytes + free_b;
    o->largest_block_bytes = o->largest_free > free_b ? o->largest_free : free_b;
    uint64_t other = o->other_processes_bytes;
    bool large_share = (total && other >= total / 4) || (req && other >= req);
    bool short_now = !o->has_free || free_b < req;
    if (o->has_other && other && large_share && short_now && free_b + other >= req) {
        o->classification = GPUFL__OOM_ANOTHER_PROCESS;
    } else if (o->has_requested && o->reclaimable_bytes >= req && o->largest_block_bytes < req) {
        o->classification = GPUFL__OOM_FRAGMENTATION;
    } else {
        o->classification = GPUFL__OOM_REAL_EXHAUSTION;
    }
}

int gpufl__analyze_oom(const gpufl_trace *t, gpufl__ana_oom *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    incident(&a, out);
    if (!out->found)
        return 0;
    allocator(&a, out);
    device_memory(&a, out);
    int rc = live_at_oom(&a, out);
    if (rc != 0) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    classify(out);
    return 0;
}

const char *gpufl__oom_classification_name(uint8_t c)
{
    static const char *const names[] = {"real_exhaustion", "fragmentation", "another_process"};
    return c < sizeof names / sizeof names[0] ? names[c] : "unknown";
}

const char *gpufl__oom_source_name(uint8_t s) { return s == GPUFL__OOM_SOURCE_FRAMEWORK ? "framework" : "cuda"; }

const char *gpufl__oom_memory_source_name(uint8_t m)
{
    static const char *const names[] = {"none", "allocator", "nvml", "device_info"};
    return m < sizeof names / sizeof names[0] ? names[m] : "unknown";
}
