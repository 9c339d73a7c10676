/*
 * One event -> one NDJSON line (docs/FORMAT.md is the contract).
 *
 * Runs on the collector thread for every event, so it formats by hand into
 * the writer's buffer. Optional fields are left out rather than written as
 * zero: a missing "scope" means the kernel ran outside any scope, a missing
 * "temp_c" means the driver could not say.
 */
#include "format/ndjson_format.h"

#include <stdbool.h>

#include "format/json_out.h"

#define FIXED_PART_BOUND 1536

static size_t name_bound(const gpufl__string_lookup *names, uint32_t id)
{
    uint32_t len = 0;
    (void)gpufl__lookup(names, id, &len);
    return GFL_JSTR_BOUND(len);
}

/* Frames a stack piece really holds: a plugin's count is not trusted. */
static unsigned stack_count(const gfl_stack_payload *s)
{
    return s->count < GFL_STACK_FRAMES_PER_EVENT ? s->count : GFL_STACK_FRAMES_PER_EVENT;
}

static size_t stack_modules_bound(const gfl_stack_payload *s, const gpufl__string_lookup *names)
{
    size_t n = 0;
    for (unsigned i = 0; i < stack_count(s); i++)
        n += name_bound(names, s->frames[i].module);
    return n;
}

size_t gpufl__ndjson_bound(const gfl_event *ev, const gpufl__string_lookup *names)
{
    switch (ev->h.type) {
    case GFL_EV_SCOPE_BEGIN:
    case GFL_EV_SCOPE_END: return FIXED_PART_BOUND + name_bound(names, ev->u.scope.name);
    case GFL_EV_SYSTEM_START:
    case GFL_EV_SYSTEM_STOP: return FIXED_PART_BOUND + name_bound(names, ev->u.window.name);
    case GFL_EV_KERNEL:
        return FIXED_PART_BOUND + name_bound(names, ev->u.kernel.name) + name_bound(names, ev->u.kernel.mangled_name) +
               name_bound(names, ev->u.kernel.nvtx);
    case GFL_EV_MEMCPY: return FIXED_PART_BOUND + name_bound(names, ev->u.memcpy.nvtx);
    case GFL_EV_MEMSET: return FIXED_PART_BOUND + name_bound(names, ev->u.memset.nvtx);
    case GFL_EV_SYNC: return FIXED_PART_BOUND + name_bound(names, ev->u.sync.nvtx);
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE: return FIXED_PART_BOUND + name_bound(names, ev->u.mem.nvtx);
    case GFL_EV_NVTX_RANGE:
    case GFL_EV_NVTX_MARK:
        return FIXED_PART_BOUND + name_bound(names, ev->u.nvtx.name) + name_bound(names, ev->u.nvtx.domain);
    case GFL_EV_GRAPH_LAUNCH: return FIXED_PART_BOUND + name_bound(names, ev->u.graph.nvtx);
    case GFL_EV_STACK:
    case GFL_EV_CRASH_STACK: return FIXED_PART_BOUND + stack_modules_bound(&ev->u.stack, names);
    case GFL_EV_CRASH_SCOPE: return FIXED_PART_BOUND + name_bound(names, ev->u.scope.name);
    case GFL_EV_LOG: return FIXED_PART_BOUND + name_bound(names, ev->u.log.message);
    case GFL_EV_ENGINE:
        return FIXED_PART_BOUND + name_bound(names, ev->u.engine.requested) + name_bound(names, ev->u.engine.ran) +
               name_bound(names, ev->u.engine.plugin) + name_bound(names, ev->u.engine.reason);
    case GFL_EV_DEVICE_INFO:
        return FIXED_PART_BOUND + name_bound(names, ev->u.info.name) + name_bound(names, ev->u.info.uuid) +
               name_bound(names, ev->u.info.pci_bus_id) + name_bound(names, ev->u.info.driver_version);
    default: return FIXED_PART_BOUND;
    }
}

static char *key_u64(char *p, const char *key, size_t key_len, uint64_t v)
{
    p = gpufl__jput_raw(p, key, key_len);
    return gpufl__jput_u64(p, v);
}
#define KU(p, lit, v) key_u64((p), (lit), sizeof(lit) - 1, (v))

static char *key_name(char *p, const gpufl__string_lookup *names, const char *key, size_t key_len, uint32_t id)
{
    uint32_t len;
    const char *s = gpufl__lookup(names, id, &len);
    p = gpufl__jput_raw(p, key, key_len);
    return gpufl__jput_str(p, s, len);
}
#define KN(p, lit, id) key_name((p), names, (lit), sizeof(lit) - 1, (id))

static char *key_text(char *p, const char *key, size_t key_len, const char *s)
{
    p = gpufl__jput_raw(p, key, key_len);
    return gpufl__jput_str(p, s, strlen(s));
}
#define KT(p, lit, s) key_text((p), (lit), sizeof(lit) - 1, (s))

static char *type_field(char *p, uint8_t type)
{
    p = GFL_JLIT(p, "{\"type\":\"");
    const char *name = gpufl__event_type_name(type);
    p = gpufl__jput_raw(p, name, strlen(name));
    return GFL_JLIT(p, "\"");
}

/* start/end/duration of interval events; a clock glitch never gives a
 * negative duration, it gives 0 (the reader sees start and end anyway). */
static char *interval(char *p, uint64_t start, uint64_t end)
{
    p = KU(p, ",\"start_ns\":", start);
    p = KU(p, ",\"end_ns\":", end);
    return KU(p, ",\"dur_ns\":", end > start ? end - start : 0);
}

/* Who launched it: thread, scope, NVTX range, framework id, CPU stack.
 * Each is left out when unknown. */
typedef struct launch_info {
    uint32_t tid;
    uint64_t scope;
    uint32_t nvtx;
    uint64_t ext;
    uint8_t ext_kind;
    uint32_t stack;
    uint64_t api_start, api_end;
} launch_info;

static char *attribution(char *p, const gpufl__string_lookup *names, const launch_info *a)
{
    if (a->tid)
        p = KU(p, ",\"tid\":", a->tid);
    if (a->scope)
        p = KU(p, ",\"scope\":", a->scope);
    if (a->nvtx)
        p = KN(p, ",\"nvtx\":", a->nvtx);
    if (a->ext) {
        p = KU(p, ",\"ext_id\":", a->ext);
        if (a->ext_kind)
            p = KU(p, ",\"ext_kind\":", a->ext_kind);
    }
    if (a->stack)
        p = KU(p, ",\"stack\":", a->stack);
    if (a->api_start) {
        p = KU(p, ",\"api_start_ns\":", a->api_start);
        p = KU(p, ",\"api_end_ns\":", a->api_end);
    }
    return p;
}

static char *device_ids(char *p, const gfl_event *ev, uint32_t context, uint32_t stream, uint32_t corr)
{
    p = KU(p, ",\"device\":", ev->h.device);
    p = KU(p, ",\"context\":", context);
    p = KU(p, ",\"stream\":", stream);
    return KU(p, ",\"corr\":", corr);
}

static char *scope_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_scope_payload *s = &ev->u.scope;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = KU(p, ",\"tid\":", ev->h.tid);
    p = KU(p, ",\"id\":", s->id);
    p = KU(p, ",\"parent\":", s->parent_id);
    p = KU(p, ",\"depth\":", s->depth);
    p = KN(p, ",\"name\":", s->name);
    if (ev->h.type == GFL_EV_SCOPE_END) {
        p = KU(p, ",\"begin_ns\":", s->begin_ts);
        p = KU(p, ",\"dur_ns\":", ev->h.ts > s->begin_ts ? ev->h.ts - s->begin_ts : 0);
        if (ev->h.flags & GFL_F_SCOPE_IMPLICIT)
            p = GFL_JLIT(p, ",\"implicit\":true");
    }
    return p;
}

static char *host_line(char *p, const gfl_event *ev)
{
    const gfl_host_metrics_payload *m = &ev->u.host;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = KU(p, ",\"cpu_count\":", m->cpu_count);
    if (m->valid & GFL_HOST_PROC_CPU) {
        p = GFL_JLIT(p, ",\"proc_cpu_pct\":");
        p = gpufl__jput_fixed(p, m->proc_cpu_pct_x100, 2);
    }
    if (m->valid & GFL_HOST_SYS_CPU) {
        p = GFL_JLIT(p, ",\"sys_cpu_pct\":");
        p = gpufl__jput_fixed(p, m->sys_cpu_pct_x100, 2);
    }
    if (m->valid & GFL_HOST_RAM) {
        p = KU(p, ",\"ram_used_bytes\":", m->ram_used_bytes);
        p = KU(p, ",\"ram_total_bytes\":", m->ram_total_bytes);
    }
    if (m->valid & GFL_HOST_RSS)
        p = KU(p, ",\"proc_rss_bytes\":", m->proc_rss_bytes);
    return p;
}

static char *device_metrics_line(char *p, const gfl_event *ev)
{
    const gfl_device_metrics_payload *m = &ev->u.dev;
    uint32_t v = m->valid;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = KU(p, ",\"device\":", ev->h.device);
    if (v & GFL_DEV_GPU_UTIL)
        p = KU(p, ",\"gpu_util_pct\":", m->gpu_util_pct);
    if (v & GFL_DEV_MEM_UTIL)
        p = KU(p, ",\"mem_util_pct\":", m->mem_util_pct);
    if (v & GFL_DEV_MEM) {
        p = KU(p, ",\"mem_used_bytes\":", m->mem_used_bytes);
        p = KU(p, ",\"mem_free_bytes\":", m->mem_free_bytes);
        p = KU(p, ",\"mem_total_bytes\":", m->mem_total_bytes);
    }
    if (v & GFL_DEV_PROC_MEM)
        p = KU(p, ",\"proc_mem_bytes\":", m->proc_mem_bytes);
    if (v & GFL_DEV_TEMP) {
        p = GFL_JLIT(p, ",\"temp_c\":");
        p = gpufl__jput_i64(p, m->temp_c);
    }
    if (v & GFL_DEV_MEM_TEMP) {
        p = GFL_JLIT(p, ",\"mem_temp_c\":");
        p = gpufl__jput_i64(p, m->mem_temp_c);
    }
    if (v & GFL_DEV_POWER)
        p = KU(p, ",\"power_mw\":", m->power_mw);
    if (v & GFL_DEV_POWER_LIMIT)
        p = KU(p, ",\"power_limit_mw\":", m->power_limit_mw);
    if (v & GFL_DEV_ENERGY)
        p = KU(p, ",\"energy_mj\":", m->energy_mj);
    if (v & GFL_DEV_CLOCKS) {
        p = KU(p, ",\"sm_clock_mhz\":", m->sm_clock_mhz);
        p = KU(p, ",\"mem_clock_mhz\":", m->mem_clock_mhz);
        p = KU(p, ",\"gfx_clock_mhz\":", m->gfx_clock_mhz);
    }
    if (v & GFL_DEV_THROTTLE) {
        p = KU(p, ",\"throttle_mask\":", m->throttle_reasons);
        p = GFL_JLIT(p, ",\"throttle\":[");
        bool first = true;
        for (unsigned b = 0; b < GFL_THROTTLE_REASON_COUNT; b++) {
            if (!(m->throttle_reasons & (1ull << b)))
                continue;
            if (!first)
                *p++ = ',';
            first = false;
            const char *name = gpufl__throttle_reason_name(b);
            p = gpufl__jput_str(p, name, strlen(name));
        }
        *p++ = ']';
    }
    if (v & GFL_DEV_PCIE) {
        p = KU(p, ",\"pcie_rx_kbps\":", m->pcie_rx_kbps);
        p = KU(p, ",\"pcie_tx_kbps\":", m->pcie_tx_kbps);
    }
    if (v & GFL_DEV_FAN)
        p = KU(p, ",\"fan_pct\":", m->fan_pct);
    if (v & GFL_DEV_ECC) {
        p = KU(p, ",\"ecc_corrected\":", m->ecc_corrected);
        p = KU(p, ",\"ecc_uncorrected\":", m->ecc_uncorrected);
    }
    return p;
}

static char *device_info_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_device_info_payload *d = &ev->u.info;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = KU(p, ",\"device\":", ev->h.device);
    p = KN(p, ",\"name\":", d->name);
    p = KN(p, ",\"uuid\":", d->uuid);
    p = KN(p, ",\"pci_bus_id\":", d->pci_bus_id);
    if (d->cc_major >= 0) {
        p = GFL_JLIT(p, ",\"compute_capability\":\"");
        p = gpufl__jput_u64(p, (uint64_t)d->cc_major);
        *p++ = '.';
        p = gpufl__jput_u64(p, (uint64_t)(d->cc_minor >= 0 ? d->cc_minor : 0));
        *p++ = '"';
    }
    if (d->sm_count)
        p = KU(p, ",\"sm_count\":", d->sm_count);
    if (d->memory_total_bytes)
        p = KU(p, ",\"memory_total_bytes\":", d->memory_total_bytes);
    if (d->power_limit_mw)
        p = KU(p, ",\"power_limit_mw\":", d->power_limit_mw);
    if (d->max_sm_clock_mhz)
        p = KU(p, ",\"max_sm_clock_mhz\":", d->max_sm_clock_mhz);
    if (d->max_mem_clock_mhz)
        p = KU(p, ",\"max_mem_clock_mhz\":", d->max_mem_clock_mhz);
    if (d->pcie_max_gen)
        p = KU(p, ",\"pcie_max_gen\":", d->pcie_max_gen);
    if (d->pcie_max_width)
        p = KU(p, ",\"pcie_max_width\":", d->pcie_max_width);
    p = KN(p, ",\"driver_version\":", d->driver_version);
    if (d->cuda_driver_version > 0) {
        p = GFL_JLIT(p, ",\"cuda_driver_version\":\"");
        p = gpufl__jput_u64(p, (uint64_t)d->cuda_driver_version / 1000);
        *p++ = '.';
        p = gpufl__jput_u64(p, (uint64_t)d->cuda_driver_version % 1000 / 10);
        *p++ = '"';
    }
    return p;
}

static char *nvtx_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_nvtx_payload *n = &ev->u.nvtx;
    if (ev->h.type == GFL_EV_NVTX_RANGE) {
        p = interval(p, ev->h.ts, n->end_ts);
    } else {
        p = KU(p, ",\"ts_ns\":", ev->h.ts);
    }
    p = KU(p, ",\"tid\":", ev->h.tid);
    p = KN(p, ",\"name\":", n->name);
    if (n->domain)
        p = KN(p, ",\"domain\":", n->domain);
    if (ev->h.type == GFL_EV_NVTX_RANGE && !(ev->h.flags & GFL_F_NVTX_START_END))
        p = KU(p, ",\"depth\":", n->depth);
    return KU(p, ",\"id\":", n->id);
}

static char *graph_launch_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_graph_launch_payload *g = &ev->u.graph;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = KU(p, ",\"end_ns\":", g->end_ts);
    p = KU(p, ",\"corr\":", g->correlation);
    launch_info a = {ev->h.tid, g->scope_id, g->nvtx, g->external_id, 0, g->stack_id, 0, 0};
    return attribution(p, names, &a);
}

static char *dims(char *p, const char *key, size_t key_len, uint32_t x, uint32_t y, uint32_t z)
{
    p = gpufl__jput_raw(p, key, key_len);
    *p++ = '[';
    p = gpufl__jput_u64(p, x);
    *p++ = ',';
    p = gpufl__jput_u64(p, y);
    *p++ = ',';
    p = gpufl__jput_u64(p, z);
    *p++ = ']';
    return p;
}

static char *kernel_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_kernel_payload *k = &ev->u.kernel;
    p = interval(p, ev->h.ts, k->end_ts);
    p = device_ids(p, ev, k->context, k->stream, k->correlation);
    p = KN(p, ",\"name\":", k->name);
    if (k->mangled_name && k->mangled_name != k->name)
        p = KN(p, ",\"mangled\":", k->mangled_name);
    p = dims(p, ",\"grid\":", sizeof(",\"grid\":") - 1, k->grid[0], k->grid[1], k->grid[2]);
    p = dims(p, ",\"block\":", sizeof(",\"block\":") - 1, k->block[0], k->block[1], k->block[2]);
    p = KU(p, ",\"regs\":", k->registers);
    p = KU(p, ",\"smem_static\":", k->static_smem);
    p = KU(p, ",\"smem_dynamic\":", k->dynamic_smem);
    p = KU(p, ",\"local_mem\":", k->local_mem);
    if (k->occupancy_x10000) {
        p = GFL_JLIT(p, ",\"occupancy\":");
        p = gpufl__jput_fixed(p, k->occupancy_x10000, 4);
    }
    if (k->limiter)
        p = KT(p, ",\"limiter\":", gpufl__limiter_name(k->limiter));
    if (k->graph_id)
        p = KU(p, ",\"graph_id\":", k->graph_id);
    launch_info a = {ev->h.tid,        k->scope_id, k->nvtx,         k->external_id,
                     k->external_kind, k->stack_id, k->api_start_ts, k->api_end_ts};
    return attribution(p, names, &a);
}

static char *memcpy_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_memcpy_payload *m = &ev->u.memcpy;
    p = interval(p, ev->h.ts, m->end_ts);
    p = device_ids(p, ev, m->context, m->stream, m->correlation);
    p = KT(p, ",\"kind\":", gpufl__copy_kind_name(m->copy_kind));
    p = KT(p, ",\"src_kind\":", gpufl__mem_kind_name(m->src_kind));
    p = KT(p, ",\"dst_kind\":", gpufl__mem_kind_name(m->dst_kind));
    p = KU(p, ",\"bytes\":", m->bytes);
    if (m->copy_kind == GFL_COPY_PTOP)
        p = KU(p, ",\"dst_device\":", m->dst_device);
    if (m->graph_id)
        p = KU(p, ",\"graph_id\":", m->graph_id);
    launch_info a = {ev->h.tid, m->scope_id, m->nvtx, m->external_id, 0, m->stack_id, m->api_start_ts, m->api_end_ts};
    return attribution(p, names, &a);
}

static char *memset_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_memset_payload *m = &ev->u.memset;
    p = interval(p, ev->h.ts, m->end_ts);
    p = device_ids(p, ev, m->context, m->stream, m->correlation);
    p = KU(p, ",\"bytes\":", m->bytes);
    p = KU(p, ",\"value\":", m->value);
    p = KT(p, ",\"mem_kind\":", gpufl__mem_kind_name(m->mem_kind));
    if (m->graph_id)
        p = KU(p, ",\"graph_id\":", m->graph_id);
    launch_info a = {ev->h.tid, m->scope_id, m->nvtx, m->external_id, 0, 0, m->api_start_ts, m->api_end_ts};
    return attribution(p, names, &a);
}

static char *sync_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_sync_payload *s = &ev->u.sync;
    p = interval(p, ev->h.ts, s->end_ts);
    p = device_ids(p, ev, s->context, s->stream, s->correlation);
    p = KT(p, ",\"kind\":", gpufl__sync_kind_name(s->sync_kind));
    if (s->cuda_event)
        p = KU(p, ",\"cuda_event\":", s->cuda_event);
    launch_info a = {ev->h.tid, s->scope_id, s->nvtx, s->external_id, 0, s->stack_id, 0, 0};
    return attribution(p, names, &a);
}

static char *mem_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_mem_payload *m = &ev->u.mem;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = device_ids(p, ev, m->context, m->stream, m->correlation);
    p = GFL_JLIT(p, ",\"address\":");
    p = gpufl__jput_hex(p, m->address);
    p = KU(p, ",\"bytes\":", m->bytes);
    p = KT(p, ",\"kind\":", gpufl__mem_kind_name(m->mem_kind));
    if (m->is_async)
        p = GFL_JLIT(p, ",\"async\":true");
    launch_info a = {ev->h.tid, m->scope_id, m->nvtx, m->external_id, 0, m->stack_id, 0, 0};
    return attribution(p, names, &a);
}

/* A piece of a stack definition: frames [first, first + count) of `total`,
 * each [module path or null, "0x<offset>"]. A crash's stack is the
 * crash's, and has no id. */
static char *stack_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_stack_payload *s = &ev->u.stack;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = KU(p, ",\"tid\":", ev->h.tid);
    if (ev->h.type == GFL_EV_STACK)
        p = KU(p, ",\"id\":", s->id);
    p = KU(p, ",\"first\":", s->first);
    p = KU(p, ",\"total\":", s->total);
    if (s->truncated)
        p = GFL_JLIT(p, ",\"truncated\":true");
    p = GFL_JLIT(p, ",\"frames\":[");
    for (unsigned i = 0; i < stack_count(s); i++) {
        const gfl_stack_frame *f = &s->frames[i];
        if (i)
            *p++ = ',';
        *p++ = '[';
        if (f->module) {
            uint32_t len;
            const char *path = gpufl__lookup(names, f->module, &len);
            p = gpufl__jput_str(p, path, len);
        } else {
            p = GFL_JLIT(p, "null");
        }
        *p++ = ',';
        p = gpufl__jput_hex(p, f->offset);
        *p++ = ']';
    }
    *p++ = ']';
    return p;
}

/* A fatal signal (collect/crash.h); its stack and open scopes follow in
 * crash_stack and crash_scope lines. Names of the signal and code are for
 * people: readers take the numbers. */
static char *crash_line(char *p, const gfl_event *ev)
{
    const gfl_crash_payload *c = &ev->u.crash;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = KU(p, ",\"tid\":", ev->h.tid);
    p = GFL_JLIT(p, ",\"signal\":");
    p = gpufl__jput_i64(p, c->signal);
    p = KT(p, ",\"signal_name\":", gpufl__signal_name(c->signal));
    p = GFL_JLIT(p, ",\"code\":");
    p = gpufl__jput_i64(p, c->code);
    const char *code = gpufl__signal_code_name(c->signal, c->code);
    if (code)
        p = KT(p, ",\"code_name\":", code);
    p = GFL_JLIT(p, ",\"address\":");
    p = gpufl__jput_hex(p, c->address);
    if (c->sender_pid)
        p = KU(p, ",\"pid\":", c->sender_pid);
    p = KT(p, ",\"action\":", gpufl__crash_action_name(c->action));
    p = KU(p, ",\"stack_frames\":", c->frames);
    if (c->stack_truncated)
        p = GFL_JLIT(p, ",\"stack_truncated\":true");
    if (ev->h.flags & GFL_F_CRASH_NO_UNWIND)
        p = GFL_JLIT(p, ",\"stack_unavailable\":true");
    p = KU(p, ",\"open_scopes\":", c->open_scopes);
    if (c->scopes_lost)
        p = KU(p, ",\"open_scopes_lost\":", c->scopes_lost);
    return p;
}

/* A scope open when the program crashed: scope_begin's fields, with the
 * crash's time. */
static char *crash_scope_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_scope_payload *s = &ev->u.scope;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = KU(p, ",\"tid\":", ev->h.tid);
    p = KU(p, ",\"id\":", s->id);
    p = KU(p, ",\"parent\":", s->parent_id);
    p = KU(p, ",\"depth\":", s->depth);
    p = KN(p, ",\"name\":", s->name);
    return KU(p, ",\"begin_ns\":", s->begin_ts);
}

/* The engine asked for and the one recording; plugin and reason only when
 * there are. */
static char *engine_line(char *p, const gfl_event *ev, const gpufl__string_lookup *names)
{
    const gfl_engine_payload *e = &ev->u.engine;
    p = KU(p, ",\"ts_ns\":", ev->h.ts);
    p = KU(p, ",\"tid\":", ev->h.tid);
    p = KN(p, ",\"requested\":", e->requested);
    p = KN(p, ",\"engine\":", e->ran);
    if (e->plugin)
        p = KN(p, ",\"plugin\":", e->plugin);
    if (e->reason)
        p = KN(p, ",\"reason\":", e->reason);
    return p;
}

size_t gpufl__ndjson_format(const gfl_event *ev, const gpufl__string_lookup *names, char *buf)
{
    char *p = type_field(buf, ev->h.type);
    switch (ev->h.type) {
    case GFL_EV_SCOPE_BEGIN:
    case GFL_EV_SCOPE_END: p = scope_line(p, ev, names); break;
    case GFL_EV_SYSTEM_START:
    case GFL_EV_SYSTEM_STOP:
        p = KU(p, ",\"ts_ns\":", ev->h.ts);
        p = KU(p, ",\"tid\":", ev->h.tid);
        p = KN(p, ",\"name\":", ev->u.window.name);
        p = KU(p, ",\"open\":", ev->u.window.open_windows);
        break;
    case GFL_EV_HOST_METRICS: p = host_line(p, ev); break;
    case GFL_EV_DEVICE_METRICS: p = device_metrics_line(p, ev); break;
    case GFL_EV_KERNEL: p = kernel_line(p, ev, names); break;
    case GFL_EV_MEMCPY: p = memcpy_line(p, ev, names); break;
    case GFL_EV_MEMSET: p = memset_line(p, ev, names); break;
    case GFL_EV_SYNC: p = sync_line(p, ev, names); break;
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE: p = mem_line(p, ev, names); break;
    case GFL_EV_DROPPED:
        p = KU(p, ",\"ts_ns\":", ev->h.ts);
        if (ev->h.tid)
            p = KU(p, ",\"tid\":", ev->h.tid);
        p = KT(p, ",\"reason\":", gpufl__drop_reason_name(ev->u.dropped.reason));
        p = KT(p, ",\"channel\":", gpufl__channel_name(ev->u.dropped.channel));
        p = KU(p, ",\"count\":", ev->u.dropped.count);
        p = KU(p, ",\"total\":", ev->u.dropped.total);
        break;
    case GFL_EV_DEVICE_INFO: p = device_info_line(p, ev, names); break;
    case GFL_EV_NVTX_RANGE:
    case GFL_EV_NVTX_MARK: p = nvtx_line(p, ev, names); break;
    case GFL_EV_GRAPH_LAUNCH: p = graph_launch_line(p, ev, names); break;
    case GFL_EV_STACK:
    case GFL_EV_CRASH_STACK: p = stack_line(p, ev, names); break;
    case GFL_EV_CRASH: p = crash_line(p, ev); break;
    case GFL_EV_CRASH_SCOPE: p = crash_scope_line(p, ev, names); break;
    case GFL_EV_ENGINE: p = engine_line(p, ev, names); break;
    case GFL_EV_LOG:
        p = KU(p, ",\"ts_ns\":", ev->h.ts);
        p = KU(p, ",\"tid\":", ev->h.tid);
        p = KT(p, ",\"level\":", gpufl__log_level_name(ev->u.log.level));
        p = KN(p, ",\"message\":", ev->u.log.message);
        break;
    default: p = KU(p, ",\"ts_ns\":", ev->h.ts); break;
    }
    p = GFL_JLIT(p, "}\n");
    return (size_t)(p - buf);
}
