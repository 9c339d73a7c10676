/*
 * The exporters' one window onto a trace's columns (include/gpufl/trace.h).
 * The timeline view reads the same bound tables (gpufl__xtrace) through
 * its own accessors by table, view_columns.h.
 *
 * Every read of a trace column by src/present/export_* goes through the
 * inline functions here, so that a change in how the reader lays a table
 * out (shared launch configurations, a table of streams, 32-bit durations
 * behind accessors) is absorbed in this one file. The exporters see plain
 * rows: times in session nanoseconds, ids as the trace's string ids.
 *
 * Read-only; any thread. The light accessors (gpufl__x_op_start, _end,
 * _where, _call, gpufl__x_range_start, _tid) run a few times per event in
 * the timeline's passes; gpufl__x_op and gpufl__x_range once per slice; the
 * full rows (gpufl__x_kernel, ...) once per CSV line. Times come from the
 * trace's accessors (gpufl_trace_kernel_end(), ...), never from adding its
 * offsets here. A row that refers to a stream, caller or launch
 * configuration the trace does not have (damaged input) reads as zeros.
 */
#ifndef GPUFL_PRESENT_EXPORT_EXPORT_ROWS_H
#define GPUFL_PRESENT_EXPORT_EXPORT_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpufl/trace.h"

/* Tables that become slices (and the calls that launched them). */
enum {
    GPUFL__XS_KERNEL = 0,
    GPUFL__XS_COPY = 1,
    GPUFL__XS_MEMSET = 2,
    GPUFL__XS_SYNC = 3,
    GPUFL__XS_SCOPE = 4,
    GPUFL__XS_NVTX = 5,
    GPUFL__XS_API = 6, /* the API call of a kernel, copy or memset (api_start..api_end) */
    GPUFL__XS_COUNT
};

typedef struct gpufl__xtrace {
    const gpufl_trace *t;
    const gpufl_trace_info *info;
    const gpufl_trace_kernels *kernels;
    const gpufl_trace_transfers *copies, *memsets;
    const gpufl_trace_syncs *syncs;
    const gpufl_trace_scopes *scopes, *nvtx;
    const gpufl_trace_launch_configs *configs;
    const gpufl_trace_streams *streams;
    const gpufl_trace_callers *callers;
    const gpufl_trace_memory *memory;
    const gpufl_trace_device_samples *dev;
    const gpufl_trace_host_samples *host;
} gpufl__xtrace;

static inline void gpufl__xtrace_init(gpufl__xtrace *x, const gpufl_trace *t)
{
    x->t = t;
    x->info = gpufl_trace_get_info(t);
    x->kernels = gpufl_trace_get_kernels(t);
    x->copies = gpufl_trace_get_copies(t);
    x->memsets = gpufl_trace_get_memsets(t);
    x->syncs = gpufl_trace_get_syncs(t);
    x->scopes = gpufl_trace_get_scopes(t);
    x->nvtx = gpufl_trace_get_nvtx(t);
    x->configs = gpufl_trace_get_launch_configs(t);
    x->streams = gpufl_trace_get_streams(t);
    x->callers = gpufl_trace_get_callers(t);
    x->memory = gpufl_trace_get_memory(t);
    x->dev = gpufl_trace_get_device_samples(t);
    x->host = gpufl_trace_get_host_samples(t);
}

static inline const char *gpufl__x_str(const gpufl__xtrace *x, uint32_t id) { return gpufl_trace_string(x->t, id); }

/* Rows of a slice table (GPUFL__XS_KERNEL..NVTX). */
static inline size_t gpufl__x_rows(const gpufl__xtrace *x, unsigned src)
{
    switch (src) {
    case GPUFL__XS_KERNEL: return x->kernels->n;
    case GPUFL__XS_COPY: return x->copies->n;
    case GPUFL__XS_MEMSET: return x->memsets->n;
    case GPUFL__XS_SYNC: return x->syncs->n;
    case GPUFL__XS_SCOPE: return x->scopes->n;
    case GPUFL__XS_NVTX: return x->nvtx->n;
    default: return 0;
    }
}

/* ---- device work: kernels, copies, memsets, syncs ------------------------- */

/* The shared tables that rows of device work refer to (trace.h): the stream
 * a row ran on and the API call that caused it. */
static inline void gpufl__x_stream_of(const gpufl__xtrace *x, uint32_t stream_row, uint32_t *device, uint32_t *context,
                                      uint32_t *stream)
{
    const gpufl_trace_streams *s = x->streams;
    if (stream_row >= s->n) { /* damaged input: no such stream */
        *device = *context = *stream = 0;
        return;
    }
    *device = s->device[stream_row];
    *context = s->context[stream_row];
    *stream = s->stream[stream_row];
}

typedef struct gpufl__xcaller {
    uint32_t tid, nvtx, stack;
    uint8_t external_kind;
    uint64_t scope, external_id;
} gpufl__xcaller;

static inline void gpufl__x_caller_of(const gpufl__xtrace *x, uint32_t caller_row, gpufl__xcaller *r)
{
    const gpufl_trace_callers *c = x->callers;
    if (caller_row >= c->n) {
        memset(r, 0, sizeof *r);
        return;
    }
    r->tid = c->tid[caller_row];
    r->nvtx = c->nvtx[caller_row];
    r->stack = c->stack[caller_row];
    r->external_kind = c->external_kind[caller_row];
    r->scope = c->scope[caller_row];
    r->external_id = c->external_id[caller_row];
}

/* The thread, scope and external id of the call a row came from: the
 * columns every exported row of device work and memory carries. */
static inline void gpufl__x_call_ids(const gpufl__xtrace *x, uint32_t caller_row, uint32_t *tid, uint64_t *scope,
                                     uint64_t *external_id)
{
    gpufl__xcaller who;
    gpufl__x_caller_of(x, caller_row, &who);
    *tid = who.tid;
    *scope = who.scope;
    *external_id = who.external_id;
}

static inline uint32_t gpufl__x_caller_tid(const gpufl__xtrace *x, uint32_t caller_row)
{
    return caller_row < x->callers->n ? x->callers->tid[caller_row] : 0;
}

static inline const gpufl_trace_transfers *gpufl__x_transfers(const gpufl__xtrace *x, unsigned src)
{
    return src == GPUFL__XS_COPY ? x->copies : x->memsets;
}

/* Only the start: the timeline's sort key. */
static inline uint64_t gpufl__x_op_start(const gpufl__xtrace *x, unsigned src, size_t i)
{
    switch (src) {
    case GPUFL__XS_KERNEL: return x->kernels->start_ns[i];
    case GPUFL__XS_COPY: return x->copies->start_ns[i];
    case GPUFL__XS_MEMSET: return x->memsets->start_ns[i];
    default: return x->syncs->start_ns[i];
    }
}

static inline uint64_t gpufl__x_op_end(const gpufl__xtrace *x, unsigned src, size_t i)
{
    switch (src) {
    case GPUFL__XS_KERNEL: return gpufl_trace_kernel_end(x->kernels, i);
    case GPUFL__XS_COPY: return gpufl_trace_transfer_end(x->copies, i);
    case GPUFL__XS_MEMSET: return gpufl_trace_transfer_end(x->memsets, i);
    default: return gpufl_trace_sync_end(x->syncs, i);
    }
}

static inline uint32_t gpufl__x_op_correlation(const gpufl__xtrace *x, unsigned src, size_t i)
{
    switch (src) {
    case GPUFL__XS_KERNEL: return x->kernels->correlation[i];
    case GPUFL__XS_COPY: return x->copies->correlation[i];
    case GPUFL__XS_MEMSET: return x->memsets->correlation[i];
    default: return x->syncs->correlation[i];
    }
}

/* The device and stream a row ran on. */
static inline void gpufl__x_op_where(const gpufl__xtrace *x, unsigned src, size_t i, uint32_t *device, uint32_t *stream)
{
    uint32_t row, context;
    switch (src) {
    case GPUFL__XS_KERNEL: row = x->kernels->stream_row[i]; break;
    case GPUFL__XS_COPY: row = x->copies->stream_row[i]; break;
    case GPUFL__XS_MEMSET: row = x->memsets->stream_row[i]; break;
    default: row = x->syncs->stream_row[i]; break;
    }
    gpufl__x_stream_of(x, row, device, &context, stream);
}

/* The API call that launched a kernel, copy or memset: its thread and
 * times. Returns 1 when the call is known (a start time and a thread), 0
 * otherwise (syncs: always 0, they carry no API times). */
static inline int gpufl__x_op_call(const gpufl__xtrace *x, unsigned src, size_t i, uint64_t *api_start,
                                   uint64_t *api_end, uint32_t *tid)
{
    uint32_t caller_row;
    if (src == GPUFL__XS_KERNEL) {
        const gpufl_trace_kernels *k = x->kernels;
        if (k->api_lead_ns[i] == 0)
            return 0;
        *api_start = gpufl_trace_kernel_api_start(k, i);
        *api_end = gpufl_trace_kernel_api_end(k, i);
        caller_row = k->caller_row[i];
    } else if (src == GPUFL__XS_COPY || src == GPUFL__XS_MEMSET) {
        const gpufl_trace_transfers *c = gpufl__x_transfers(x, src);
        if (c->api_lead_ns[i] == 0)
            return 0;
        *api_start = gpufl_trace_transfer_api_start(c, i);
        *api_end = gpufl_trace_transfer_api_end(c, i);
        caller_row = c->caller_row[i];
    } else {
        return 0;
    }
    *tid = gpufl__x_caller_tid(x, caller_row);
    return *api_start != 0 && *tid != 0;
}

/* What the timeline needs of one kernel, copy, memset or sync. end may be
 * 0 or before start in damaged input; callers clip. */
typedef struct gpufl__xop {
    uint64_t start, end;
    uint64_t api_start, api_end; /* the launching call; 0 unknown (syncs: always 0) */
    uint32_t device, stream, correlation, tid;
    uint32_t name;                         /* kernels: string id of the name (the mangled one when there is
                          no demangled one); 0 otherwise */
    uint32_t graph_id;                     /* kernels: launched as part of this CUDA graph, 0 none */
    uint8_t kind;                          /* copies: gfl_copy_kind; syncs: gfl_sync_kind; else 0 */
    uint32_t grid[3], block[3], registers; /* kernels */
    uint32_t launch;                       /* kernels: 1 + an index of the launch configuration (grid, block,
                          registers, ...), the same for kernels launched alike, below
                          gpufl__x_launch_count(); 0 none */
    uint64_t bytes;                        /* copies and memsets */
} gpufl__xop;

/* The bound of gpufl__xop.launch. */
static inline size_t gpufl__x_launch_count(const gpufl__xtrace *x) { return x->configs->n + 1; }

static inline void gpufl__x_op(const gpufl__xtrace *x, unsigned src, size_t i, gpufl__xop *o)
{
    memset(o, 0, sizeof *o);
    o->start = gpufl__x_op_start(x, src, i);
    o->end = gpufl__x_op_end(x, src, i);
    gpufl__x_op_where(x, src, i, &o->device, &o->stream);
    if (!gpufl__x_op_call(x, src, i, &o->api_start, &o->api_end, &o->tid))
        o->api_start = o->api_end = 0;
    if (src == GPUFL__XS_KERNEL) {
        const gpufl_trace_kernels *k = x->kernels;
        const gpufl_trace_launch_configs *c = x->configs;
        uint32_t cr = k->config_row[i];
        o->correlation = k->correlation[i];
        o->graph_id = k->graph_id[i];
        if (!o->tid)
            o->tid = gpufl__x_caller_tid(x, k->caller_row[i]);
        if (cr < c->n) {
            o->name = c->name[cr] ? c->name[cr] : c->mangled[cr];
            for (int d = 0; d < 3; d++) {
                o->grid[d] = c->grid[cr][d];
                o->block[d] = c->block[cr][d];
            }
            o->registers = c->registers[cr];
            o->launch = cr + 1;
        }
    } else if (src == GPUFL__XS_SYNC) {
        const gpufl_trace_syncs *s = x->syncs;
        o->correlation = s->correlation[i];
        o->tid = gpufl__x_caller_tid(x, s->caller_row[i]);
        o->kind = s->kind[i];
    } else {
        const gpufl_trace_transfers *c = gpufl__x_transfers(x, src);
        o->correlation = c->correlation[i];
        if (!o->tid)
            o->tid = gpufl__x_caller_tid(x, c->caller_row[i]);
        o->graph_id = c->graph_id[i];
        o->kind = src == GPUFL__XS_COPY ? c->kind[i] : 0;
        o->bytes = c->bytes[i];
    }
}

/* Every column of a kernel, for the CSV. */
typedef struct gpufl__xkernel {
    uint64_t start, end;
    uint32_t name, mangled;
    uint32_t device, stream, context, correlation;
    uint32_t grid[3], block[3];
    uint32_t registers, static_smem, dynamic_smem, local_mem;
    uint32_t occupancy_x10000;
    uint8_t limiter, external_kind;
    uint32_t tid, nvtx, stack, graph_id;
    uint64_t scope, external_id, api_start, api_end;
} gpufl__xkernel;

static inline void gpufl__x_kernel(const gpufl__xtrace *x, size_t i, gpufl__xkernel *r)
{
    const gpufl_trace_kernels *k = x->kernels;
    const gpufl_trace_launch_configs *c = x->configs;
    memset(r, 0, sizeof *r);
    r->start = k->start_ns[i];
    r->end = gpufl_trace_kernel_end(k, i);
    uint32_t cr = k->config_row[i];
    if (cr < c->n) {
        r->name = c->name[cr];
        r->mangled = c->mangled[cr];
        for (int d = 0; d < 3; d++) {
            r->grid[d] = c->grid[cr][d];
            r->block[d] = c->block[cr][d];
        }
        r->registers = c->registers[cr];
        r->static_smem = c->static_smem[cr];
        r->dynamic_smem = c->dynamic_smem[cr];
        r->local_mem = c->local_mem[cr];
        r->occupancy_x10000 = c->occupancy_x10000[cr];
        r->limiter = c->limiter[cr];
    }
    gpufl__x_stream_of(x, k->stream_row[i], &r->device, &r->context, &r->stream);
    gpufl__xcaller who;
    gpufl__x_caller_of(x, k->caller_row[i], &who);
    r->tid = who.tid;
    r->nvtx = who.nvtx;
    r->stack = who.stack;
    r->scope = who.scope;
    r->external_id = who.external_id;
    r->external_kind = who.external_kind;
    r->correlation = k->correlation[i];
    r->graph_id = k->graph_id[i];
    if (k->api_lead_ns[i]) {
        r->api_start = gpufl_trace_kernel_api_start(k, i);
        r->api_end = gpufl_trace_kernel_api_end(k, i);
    }
}

/* Every column of a copy or memset (src GPUFL__XS_COPY or _MEMSET). */
typedef struct gpufl__xtransfer {
    uint64_t start, end, bytes;
    uint32_t device, dst_device, stream, context, correlation, tid, value, graph_id;
    uint8_t kind, src_kind, dst_kind;
    uint64_t scope, external_id, api_start, api_end;
} gpufl__xtransfer;

static inline void gpufl__x_transfer(const gpufl__xtrace *x, unsigned src, size_t i, gpufl__xtransfer *r)
{
    const gpufl_trace_transfers *c = gpufl__x_transfers(x, src);
    memset(r, 0, sizeof *r);
    r->start = c->start_ns[i];
    r->end = gpufl_trace_transfer_end(c, i);
    r->bytes = c->bytes[i];
    gpufl__x_stream_of(x, c->stream_row[i], &r->device, &r->context, &r->stream);
    gpufl__x_call_ids(x, c->caller_row[i], &r->tid, &r->scope, &r->external_id);
    r->dst_device = c->dst_device[i];
    r->correlation = c->correlation[i];
    r->value = c->value[i];
    r->graph_id = c->graph_id[i];
    r->kind = c->kind[i];
    r->src_kind = c->src_kind[i];
    r->dst_kind = c->dst_kind[i];
    if (c->api_lead_ns[i]) {
        r->api_start = gpufl_trace_transfer_api_start(c, i);
        r->api_end = gpufl_trace_transfer_api_end(c, i);
    }
}

typedef struct gpufl__xsync {
    uint64_t start, end;
    uint32_t device, stream, context, correlation, tid, cuda_event;
    uint8_t kind;
    uint64_t scope, external_id;
} gpufl__xsync;

static inline void gpufl__x_sync(const gpufl__xtrace *x, size_t i, gpufl__xsync *r)
{
    const gpufl_trace_syncs *s = x->syncs;
    r->start = s->start_ns[i];
    r->end = gpufl_trace_sync_end(s, i);
    gpufl__x_stream_of(x, s->stream_row[i], &r->device, &r->context, &r->stream);
    gpufl__x_call_ids(x, s->caller_row[i], &r->tid, &r->scope, &r->external_id);
    r->correlation = s->correlation[i];
    r->cuda_event = s->cuda_event[i];
    r->kind = s->kind[i];
}

/* ---- host intervals: gpufl scopes and NVTX ranges ------------------------- */

typedef struct gpufl__xrange {
    uint64_t start, end; /* one that never ended: the session's last recorded time */
    uint64_t id, parent;
    uint32_t name, tid, domain;
    uint32_t depth;
    uint8_t implicit, instant;
    uint8_t unended; /* never ended (gpufl_trace_scopes.unended) */
} gpufl__xrange;

static inline void gpufl__x_range(const gpufl__xtrace *x, unsigned src, size_t i, gpufl__xrange *r)
{
    const gpufl_trace_scopes *s = src == GPUFL__XS_SCOPE ? x->scopes : x->nvtx;
    r->start = s->begin_ns[i];
    r->end = s->end_ns[i];
    r->id = s->id[i];
    r->parent = s->parent[i];
    r->name = s->name[i];
    r->tid = s->tid[i];
    r->domain = s->domain[i];
    r->depth = s->depth[i];
    r->implicit = s->implicit[i];
    r->instant = s->instant[i];
    r->unended = s->unended[i];
}

static inline uint64_t gpufl__x_range_start(const gpufl__xtrace *x, unsigned src, size_t i)
{
    return (src == GPUFL__XS_SCOPE ? x->scopes : x->nvtx)->begin_ns[i];
}

static inline uint32_t gpufl__x_range_tid(const gpufl__xtrace *x, unsigned src, size_t i)
{
    return (src == GPUFL__XS_SCOPE ? x->scopes : x->nvtx)->tid[i];
}

/* ---- allocations ---------------------------------------------------------- */

typedef struct gpufl__xmem {
    uint64_t ts, address, bytes, scope, external_id;
    uint32_t device, stream, tid, context, correlation;
    uint8_t is_free, kind;
} gpufl__xmem;

static inline size_t gpufl__x_mem_rows(const gpufl__xtrace *x) { return x->memory->n; }

static inline void gpufl__x_mem(const gpufl__xtrace *x, size_t i, gpufl__xmem *r)
{
    const gpufl_trace_memory *m = x->memory;
    r->ts = m->ts_ns[i];
    r->address = m->address[i];
    r->bytes = m->bytes[i];
    gpufl__x_stream_of(x, m->stream_row[i], &r->device, &r->context, &r->stream);
    gpufl__x_call_ids(x, m->caller_row[i], &r->tid, &r->scope, &r->external_id);
    r->correlation = m->correlation[i];
    r->is_free = m->is_free[i];
    r->kind = m->kind[i];
}

/* ---- samples -------------------------------------------------------------- */

/* GPU sample fields by their bit in `valid` (trace.h). */
enum {
    GPUFL__XD_GPU_UTIL = 1,
    GPUFL__XD_MEM_UTIL = 2,
    GPUFL__XD_MEMORY = 4,
    GPUFL__XD_TEMP = 8,
    GPUFL__XD_MEM_TEMP = 16,
    GPUFL__XD_POWER = 32,
    GPUFL__XD_POWER_LIMIT = 64,
    GPUFL__XD_ENERGY = 128,
    GPUFL__XD_CLOCKS = 256,
    GPUFL__XD_THROTTLE = 512,
    GPUFL__XD_PCIE = 1024,
    GPUFL__XD_FAN = 2048,
    GPUFL__XD_ECC = 4096,
    GPUFL__XD_PROC_MEM = 8192,
};

typedef struct gpufl__xdev_sample {
    uint64_t ts;
    uint32_t device, valid;
    uint32_t gpu_util_pct, mem_util_pct;
    uint64_t mem_used_bytes, mem_free_bytes, mem_total_bytes, proc_mem_bytes, energy_mj;
    int32_t temp_c, mem_temp_c;
    uint32_t power_mw, power_limit_mw;
    uint32_t sm_clock_mhz, mem_clock_mhz, gfx_clock_mhz;
    uint64_t throttle_reasons;
    uint32_t pcie_rx_kbps, pcie_tx_kbps, fan_pct;
    uint64_t ecc_corrected, ecc_uncorrected;
} gpufl__xdev_sample;

static inline size_t gpufl__x_dev_rows(const gpufl__xtrace *x) { return x->dev->n; }

static inline uint32_t gpufl__x_dev_device(const gpufl__xtrace *x, size_t i) { return x->dev->device[i]; }

static inline void gpufl__x_dev(const gpufl__xtrace *x, size_t i, gpufl__xdev_sample *r)
{
    const gpufl_trace_device_samples *d = x->dev;
    r->ts = d->ts_ns[i];
    r->device = d->device[i];
    r->valid = d->valid[i];
    r->gpu_util_pct = d->gpu_util_pct[i];
    r->mem_util_pct = d->mem_util_pct[i];
    r->mem_used_bytes = d->mem_used_bytes[i];
    r->mem_free_bytes = d->mem_free_bytes[i];
    r->mem_total_bytes = d->mem_total_bytes[i];
    r->proc_mem_bytes = d->proc_mem_bytes[i];
    r->energy_mj = d->energy_mj[i];
    r->temp_c = d->temp_c[i];
    r->mem_temp_c = d->mem_temp_c[i];
    r->power_mw = d->power_mw[i];
    r->power_limit_mw = d->power_limit_mw[i];
    r->sm_clock_mhz = d->sm_clock_mhz[i];
    r->mem_clock_mhz = d->mem_clock_mhz[i];
    r->gfx_clock_mhz = d->gfx_clock_mhz[i];
    r->throttle_reasons = d->throttle_reasons[i];
    r->pcie_rx_kbps = d->pcie_rx_kbps[i];
    r->pcie_tx_kbps = d->pcie_tx_kbps[i];
    r->fan_pct = d->fan_pct[i];
    r->ecc_corrected = d->ecc_corrected[i];
    r->ecc_uncorrected = d->ecc_uncorrected[i];
}

/* Host sample fields by their bit in `valid`. */
enum { GPUFL__XH_PROC_CPU = 1, GPUFL__XH_SYS_CPU = 2, GPUFL__XH_RAM = 4, GPUFL__XH_RSS = 8 };

typedef struct gpufl__xhost_sample {
    uint64_t ts;
    uint32_t valid;
    uint32_t proc_cpu_pct_x100, sys_cpu_pct_x100, cpu_count;
    uint64_t ram_used_bytes, ram_total_bytes, proc_rss_bytes;
} gpufl__xhost_sample;

static inline size_t gpufl__x_host_rows(const gpufl__xtrace *x) { return x->host->n; }

static inline void gpufl__x_host(const gpufl__xtrace *x, size_t i, gpufl__xhost_sample *r)
{
    const gpufl_trace_host_samples *h = x->host;
    r->ts = h->ts_ns[i];
    r->valid = h->valid[i];
    r->proc_cpu_pct_x100 = h->proc_cpu_pct_x100[i];
    r->sys_cpu_pct_x100 = h->sys_cpu_pct_x100[i];
    r->cpu_count = h->cpu_count[i];
    r->ram_used_bytes = h->ram_used_bytes[i];
    r->ram_total_bytes = h->ram_total_bytes[i];
    r->proc_rss_bytes = h->proc_rss_bytes[i];
}

#endif /* GPUFL_PRESENT_EXPORT_EXPORT_ROWS_H */
