/*
 * The one read model over a trace's columns (include/gpufl/trace.h): every
 * reader above src/read (the analyses, the exporters, the HTML report, the
 * timeline view) reads rows through the functions here, so a change of the
 * trace's layout (a column become a table of distinct values, a 64-bit time
 * become an offset) is absorbed in this one file.
 *
 * Shape:
 *   gpufl__rows          the trace's tables, bound once (gpufl__rows_open)
 *   GPUFL__TBL_*         the one numbering of the tables
 *   gpufl__k_*, _x_*, _y_*, _m_*, _s_*, _d_*
 *                        typed column reads of one row of kernels, transfers
 *                        (copies or memsets), syncs, memory, scopes or NVTX
 *                        ranges, device samples: what hot loops call
 *   gpufl__row_*(r, tbl, i)
 *                        the same reads for a row named by table and index,
 *                        for code that walks several tables alike
 *   gpufl__*_row_get     a whole row into a plain struct (exports, CSV)
 *   gpufl__ops           GPU work (kernels, copies, memsets) as one sequence
 *                        in start order
 *
 * Times are session nanoseconds; names are the trace's string ids. Times of
 * device work read the trace's 32-bit offset columns inline and call the
 * trace's own accessor (a search of `exact`) only for the rare rows whose
 * offsets do not fit: the same values, without a call per row. The whole-row
 * getters and gpufl__stream_get / gpufl__caller_get read a stream, caller or
 * launch configuration row the trace does not have (damaged input) as zeros.
 *
 * Rates: the typed reads run a few times per event in scans of tens of
 * millions of rows; they compile to one or two loads. Threads: any; nothing
 * here writes.
 */
#ifndef GPUFL_READ_ROWS_H
#define GPUFL_READ_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gpufl/trace.h"

/* The tables, by one numbering. Kernels, copies and memsets come first and
 * in this order: merges of GPU work break ties of equal starts by it. */
enum {
    GPUFL__TBL_KERNEL = 0,
    GPUFL__TBL_COPY = 1,
    GPUFL__TBL_MEMSET = 2,
    GPUFL__TBL_SYNC = 3,
    GPUFL__TBL_SCOPE = 4,
    GPUFL__TBL_NVTX = 5,
    GPUFL__TBL_DEVICE_SAMPLE = 6,
    GPUFL__TBL_MEMORY = 7,
    GPUFL__TBL_HOST_SAMPLE = 8,
    GPUFL__TBL_COUNT
};

typedef struct gpufl__rows {
    const gpufl_trace *t;
    const gpufl_trace_info *info;
    const gpufl_trace_kernels *kernels;
    const gpufl_trace_transfers *copies, *memsets;
    const gpufl_trace_syncs *syncs;
    const gpufl_trace_memory *memory;
    const gpufl_trace_scopes *scopes, *nvtx;
    const gpufl_trace_device_samples *dev;
    const gpufl_trace_host_samples *host;
    const gpufl_trace_launch_configs *configs;
    const gpufl_trace_streams *streams;
    const gpufl_trace_callers *callers;
    const gpufl_trace_triggers *triggers;
    const gpufl_trace_allocator *allocator;
    const gpufl_trace_pm_samples *pm_samples;
    const gpufl_trace_range_metrics *range_metrics;
    const gpufl_trace_sass_metrics *sass;
    const gpufl_trace_clocks *clocks;
    const gpufl_trace_nccl_collectives *nccl;
    const gpufl_trace_windows *windows; /* trace windows */
    uint64_t start_ns;
    uint64_t end_ns; /* the session's end; when it did not end, its last recorded time
                        (gpufl_trace_info.last_ns) */
    bool ended;
} gpufl__rows;

/* Binds r to t (a table t lacks reads as empty) and takes the session's
 * end from its info. Cannot fail. */
void gpufl__rows_open(gpufl__rows *r, const gpufl_trace *t);

static inline const char *gpufl__rows_str(const gpufl__rows *r, uint32_t id) { return gpufl_trace_string(r->t, id); }

static inline uint64_t gpufl__span(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

/* Copies or memsets (tbl GPUFL__TBL_COPY or _MEMSET). */
static inline const gpufl_trace_transfers *gpufl__rows_xfers(const gpufl__rows *r, unsigned tbl)
{
    return tbl == GPUFL__TBL_COPY ? r->copies : r->memsets;
}

/* Scopes or NVTX ranges (tbl GPUFL__TBL_SCOPE or _NVTX). */
static inline const gpufl_trace_scopes *gpufl__rows_ranges(const gpufl__rows *r, unsigned tbl)
{
    return tbl == GPUFL__TBL_SCOPE ? r->scopes : r->nvtx;
}

static inline size_t gpufl__rows_n(const gpufl__rows *r, unsigned tbl)
{
    switch (tbl) {
    case GPUFL__TBL_KERNEL: return r->kernels->n;
    case GPUFL__TBL_COPY: return r->copies->n;
    case GPUFL__TBL_MEMSET: return r->memsets->n;
    case GPUFL__TBL_SYNC: return r->syncs->n;
    case GPUFL__TBL_SCOPE: return r->scopes->n;
    case GPUFL__TBL_NVTX: return r->nvtx->n;
    case GPUFL__TBL_DEVICE_SAMPLE: return r->dev->n;
    case GPUFL__TBL_MEMORY: return r->memory->n;
    case GPUFL__TBL_HOST_SAMPLE: return r->host->n;
    default: return 0;
    }
}

/* ---- streams, callers, launch configurations ------------------------------ */

static inline size_t gpufl__streams_n(const gpufl__rows *r) { return r->streams->n; }
static inline uint32_t gpufl__stream_device(const gpufl__rows *r, uint32_t s) { return r->streams->device[s]; }
static inline uint32_t gpufl__stream_id(const gpufl__rows *r, uint32_t s) { return r->streams->stream[s]; }

/* Every field of stream row s; zeros for a row the trace does not have. */
static inline void gpufl__stream_get(const gpufl__rows *r, uint32_t s, uint32_t *device, uint32_t *context,
                                     uint32_t *stream)
{
    const gpufl_trace_streams *st = r->streams;
    if (s >= st->n) {
        *device = *context = *stream = 0;
        return;
    }
    *device = st->device[s];
    *context = st->context[s];
    *stream = st->stream[s];
}

/* The thread of caller row c; 0 for a row the trace does not have. */
static inline uint32_t gpufl__caller_tid(const gpufl__rows *r, uint32_t c)
{
    return c < r->callers->n ? r->callers->tid[c] : 0;
}
static inline uint64_t gpufl__caller_scope(const gpufl__rows *r, uint32_t c) { return r->callers->scope[c]; }
static inline uint32_t gpufl__caller_nvtx(const gpufl__rows *r, uint32_t c) { return r->callers->nvtx[c]; }
static inline uint32_t gpufl__caller_stack(const gpufl__rows *r, uint32_t c) { return r->callers->stack[c]; }

typedef struct gpufl__caller_info {
    uint32_t tid, nvtx, stack;
    uint8_t external_kind;
    uint64_t scope, external_id;
} gpufl__caller_info;

/* Every field of caller row c; zeros for a row the trace does not have. */
static inline void gpufl__caller_get(const gpufl__rows *r, uint32_t c, gpufl__caller_info *out)
{
    const gpufl_trace_callers *cl = r->callers;
    if (c >= cl->n) {
        memset(out, 0, sizeof *out);
        return;
    }
    out->tid = cl->tid[c];
    out->nvtx = cl->nvtx[c];
    out->stack = cl->stack[c];
    out->external_kind = cl->external_kind[c];
    out->scope = cl->scope[c];
    out->external_id = cl->external_id[c];
}

/* The thread, scope and external id of caller row c: the columns every
 * exported row of device work and memory carries. */
static inline void gpufl__call_ids(const gpufl__rows *r, uint32_t c, uint32_t *tid, uint64_t *scope,
                                   uint64_t *external_id)
{
    gpufl__caller_info who;
    gpufl__caller_get(r, c, &who);
    *tid = who.tid;
    *scope = who.scope;
    *external_id = who.external_id;
}

static inline uint32_t gpufl__cfg_name(const gpufl__rows *r, uint32_t c) { return r->configs->name[c]; }
static inline uint32_t gpufl__cfg_mangled(const gpufl__rows *r, uint32_t c) { return r->configs->mangled[c]; }

/* The bound of gpufl__work_row.launch: one more than the configurations. */
static inline size_t gpufl__rows_launch_count(const gpufl__rows *r) { return r->configs->n + 1; }

/* ---- kernels ---------------------------------------------------------------- */

static inline size_t gpufl__k_n(const gpufl__rows *r) { return r->kernels->n; }
static inline uint64_t gpufl__k_start(const gpufl__rows *r, size_t i) { return r->kernels->start_ns[i]; }
static inline uint64_t gpufl__k_end(const gpufl__rows *r, size_t i)
{
    uint32_t d = r->kernels->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? r->kernels->start_ns[i] + d : gpufl_trace_kernel_end(r->kernels, i);
}
static inline uint64_t gpufl__k_dur(const gpufl__rows *r, size_t i)
{
    uint32_t d = r->kernels->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? d : gpufl__span(gpufl__k_start(r, i), gpufl__k_end(r, i));
}
/* 0: no API call known. */
static inline uint64_t gpufl__k_api_start(const gpufl__rows *r, size_t i)
{
    uint32_t l = r->kernels->api_lead_ns[i];
    return l == 0                   ? 0
           : l != GPUFL_TRACE_EXACT ? r->kernels->start_ns[i] - l
                                    : gpufl_trace_kernel_api_start(r->kernels, i);
}
static inline uint64_t gpufl__k_api_end(const gpufl__rows *r, size_t i)
{
    return gpufl_trace_kernel_api_end(r->kernels, i);
}
/* The launch call of kernel i: *lead = start - api_start, *call = api_end -
 * api_start (signed: damaged input can put them out of order). False when
 * the kernel has no API call times. */
static inline bool gpufl__k_launch(const gpufl__rows *r, size_t i, int64_t *lead, int64_t *call)
{
    const gpufl_trace_kernels *k = r->kernels;
    uint32_t l = k->api_lead_ns[i], c = k->api_dur_ns[i];
    if (l == 0)
        return false;
    if (l != GPUFL_TRACE_EXACT && c != GPUFL_TRACE_EXACT) {
        *lead = l;
        *call = c;
        return true;
    }
    uint64_t s = gpufl_trace_kernel_api_start(k, i), e = gpufl_trace_kernel_api_end(k, i);
    if (s == 0)
        return false;
    *lead = (int64_t)(k->start_ns[i] - s);
    *call = (int64_t)(e - s);
    return true;
}
/* The row of the launch configuration table: equal for two launches exactly
 * when name and whole configuration are equal. */
static inline uint32_t gpufl__k_config(const gpufl__rows *r, size_t i) { return r->kernels->config_row[i]; }
/* String id of the demangled name (0 when there is none). */
static inline uint32_t gpufl__k_name(const gpufl__rows *r, size_t i)
{
    return gpufl__cfg_name(r, gpufl__k_config(r, i));
}
static inline uint32_t gpufl__k_stream_row(const gpufl__rows *r, size_t i) { return r->kernels->stream_row[i]; }
static inline uint32_t gpufl__k_caller(const gpufl__rows *r, size_t i) { return r->kernels->caller_row[i]; }
static inline uint32_t gpufl__k_device(const gpufl__rows *r, size_t i)
{
    return gpufl__stream_device(r, gpufl__k_stream_row(r, i));
}
static inline uint32_t gpufl__k_tid(const gpufl__rows *r, size_t i)
{
    return gpufl__caller_tid(r, gpufl__k_caller(r, i));
}
static inline uint64_t gpufl__k_scope(const gpufl__rows *r, size_t i)
{
    return gpufl__caller_scope(r, gpufl__k_caller(r, i));
}
static inline uint32_t gpufl__k_nvtx(const gpufl__rows *r, size_t i)
{
    return gpufl__caller_nvtx(r, gpufl__k_caller(r, i));
}
static inline uint32_t gpufl__k_stack(const gpufl__rows *r, size_t i)
{
    return gpufl__caller_stack(r, gpufl__k_caller(r, i));
}

/* ---- copies and memsets (x: r->copies or r->memsets) ------------------------ */

static inline uint64_t gpufl__x_start(const gpufl_trace_transfers *x, size_t i) { return x->start_ns[i]; }
static inline uint64_t gpufl__x_end(const gpufl_trace_transfers *x, size_t i)
{
    uint32_t d = x->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? x->start_ns[i] + d : gpufl_trace_transfer_end(x, i);
}
static inline uint64_t gpufl__x_dur(const gpufl_trace_transfers *x, size_t i)
{
    uint32_t d = x->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? d : gpufl__span(gpufl__x_start(x, i), gpufl__x_end(x, i));
}
static inline uint64_t gpufl__x_api_start(const gpufl_trace_transfers *x, size_t i)
{
    uint32_t l = x->api_lead_ns[i];
    return l == 0 ? 0 : l != GPUFL_TRACE_EXACT ? x->start_ns[i] - l : gpufl_trace_transfer_api_start(x, i);
}
static inline uint64_t gpufl__x_bytes(const gpufl_trace_transfers *x, size_t i) { return x->bytes[i]; }
static inline uint8_t gpufl__x_kind(const gpufl_trace_transfers *x, size_t i) { return x->kind[i]; }
static inline uint8_t gpufl__x_src_kind(const gpufl_trace_transfers *x, size_t i) { return x->src_kind[i]; }
static inline uint8_t gpufl__x_dst_kind(const gpufl_trace_transfers *x, size_t i) { return x->dst_kind[i]; }
static inline uint32_t gpufl__x_stream_row(const gpufl_trace_transfers *x, size_t i) { return x->stream_row[i]; }
static inline uint32_t gpufl__x_caller(const gpufl_trace_transfers *x, size_t i) { return x->caller_row[i]; }

/* ---- syncs -------------------------------------------------------------------- */

static inline size_t gpufl__y_n(const gpufl__rows *r) { return r->syncs->n; }
static inline uint64_t gpufl__y_start(const gpufl__rows *r, size_t i) { return r->syncs->start_ns[i]; }
static inline uint64_t gpufl__y_end(const gpufl__rows *r, size_t i)
{
    uint32_t d = r->syncs->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? r->syncs->start_ns[i] + d : gpufl_trace_sync_end(r->syncs, i);
}
static inline uint8_t gpufl__y_kind(const gpufl__rows *r, size_t i) { return r->syncs->kind[i]; }
static inline uint32_t gpufl__y_stream_row(const gpufl__rows *r, size_t i) { return r->syncs->stream_row[i]; }
static inline uint32_t gpufl__y_tid(const gpufl__rows *r, size_t i)
{
    return gpufl__caller_tid(r, r->syncs->caller_row[i]);
}

/* ---- allocations ---------------------------------------------------------------- */

static inline size_t gpufl__m_n(const gpufl__rows *r) { return r->memory->n; }
static inline uint64_t gpufl__m_ts(const gpufl__rows *r, size_t i) { return r->memory->ts_ns[i]; }
static inline uint64_t gpufl__m_address(const gpufl__rows *r, size_t i) { return r->memory->address[i]; }
static inline uint64_t gpufl__m_bytes(const gpufl__rows *r, size_t i) { return r->memory->bytes[i]; }
static inline bool gpufl__m_is_free(const gpufl__rows *r, size_t i) { return r->memory->is_free[i] != 0; }
static inline uint8_t gpufl__m_kind(const gpufl__rows *r, size_t i) { return r->memory->kind[i]; }
static inline uint32_t gpufl__m_device(const gpufl__rows *r, size_t i)
{
    return gpufl__stream_device(r, r->memory->stream_row[i]);
}
static inline uint32_t gpufl__m_caller(const gpufl__rows *r, size_t i) { return r->memory->caller_row[i]; }
/* An allocation that failed for lack of memory: never live, never freed. */
static inline bool gpufl__m_failed(const gpufl__rows *r, size_t i) { return r->memory->failed[i] != 0; }
/* A block of a framework's caching allocator (a tensor inside a driver
 * allocation), not a driver allocation; its caller's stack is a source one. */
static inline bool gpufl__m_framework(const gpufl__rows *r, size_t i)
{
    return r->memory->framework && r->memory->framework[i] != 0;
}
static inline uint32_t gpufl__m_stream_row(const gpufl__rows *r, size_t i) { return r->memory->stream_row[i]; }

/* ---- triggers and trace windows ------------------------------------------- */

typedef struct gpufl__trigger_row {
    uint64_t ts;
    uint32_t tid, kind, detail, dump; /* kind, detail, dump: string ids */
    uint8_t outcome;                  /* gfl_trigger_outcome */
} gpufl__trigger_row;

static inline void gpufl__trigger_row_get(const gpufl__rows *r, size_t i, gpufl__trigger_row *o)
{
    const gpufl_trace_triggers *g = r->triggers;
    o->ts = g->ts_ns[i];
    o->tid = g->tid[i];
    o->kind = g->kind[i];
    o->detail = g->detail[i];
    o->dump = g->dump[i];
    o->outcome = g->outcome[i];
}

typedef struct gpufl__window_row {
    uint64_t begin, end;
    uint32_t index, reason, detail; /* reason, detail: string ids */
    bool unended;                   /* no closing event: ends at the session's last time */
} gpufl__window_row;

static inline void gpufl__window_row_get(const gpufl__rows *r, size_t i, gpufl__window_row *o)
{
    const gpufl_trace_windows *w = r->windows;
    o->begin = w->begin_ns[i];
    o->end = w->end_ns[i] > w->begin_ns[i] ? w->end_ns[i] : w->begin_ns[i];
    o->index = w->index[i];
    o->reason = w->reason[i];
    o->detail = w->detail[i];
    o->unended = w->unended[i] != 0;
}

/* ---- scopes and NVTX ranges (s: r->scopes or r->nvtx) -------------------------- */

static inline uint64_t gpufl__s_begin(const gpufl_trace_scopes *s, size_t i) { return s->begin_ns[i]; }
/* Its end; for one that never ended, the session's last recorded time
 * (gpufl_trace_info.last_ns), and gpufl__s_unended says so. */
static inline uint64_t gpufl__s_end(const gpufl_trace_scopes *s, size_t i) { return s->end_ns[i]; }
static inline bool gpufl__s_unended(const gpufl_trace_scopes *s, size_t i) { return s->unended[i] != 0; }
static inline uint64_t gpufl__s_id(const gpufl_trace_scopes *s, size_t i) { return s->id[i]; }
static inline uint64_t gpufl__s_parent(const gpufl_trace_scopes *s, size_t i) { return s->parent[i]; }
static inline uint32_t gpufl__s_name(const gpufl_trace_scopes *s, size_t i) { return s->name[i]; }
static inline uint32_t gpufl__s_domain(const gpufl_trace_scopes *s, size_t i) { return s->domain[i]; }
static inline uint32_t gpufl__s_tid(const gpufl_trace_scopes *s, size_t i) { return s->tid[i]; }
static inline unsigned gpufl__s_depth(const gpufl_trace_scopes *s, size_t i) { return s->depth[i]; }
static inline bool gpufl__s_instant(const gpufl_trace_scopes *s, size_t i) { return s->instant[i] != 0; }

/* ---- GPU samples and devices ----------------------------------------------------- */

/* Fields of a GPU sample by their bit in `valid` (trace.h). */
enum {
    GPUFL__DS_GPU_UTIL = 1,
    GPUFL__DS_MEM_UTIL = 2,
    GPUFL__DS_MEMORY = 4, /* mem_used_bytes, mem_total_bytes, mem_free_bytes */
    GPUFL__DS_TEMP = 8,
    GPUFL__DS_MEM_TEMP = 16,
    GPUFL__DS_POWER = 32,
    GPUFL__DS_POWER_LIMIT = 64,
    GPUFL__DS_ENERGY = 128,
    GPUFL__DS_CLOCKS = 256,
    GPUFL__DS_THROTTLE = 512,
    GPUFL__DS_PCIE = 1024,
    GPUFL__DS_FAN = 2048,
    GPUFL__DS_ECC = 4096,
    GPUFL__DS_PROC_MEM = 8192,
};

/* Fields of a host sample by their bit in `valid`. */
enum { GPUFL__HS_PROC_CPU = 1, GPUFL__HS_SYS_CPU = 2, GPUFL__HS_RAM = 4, GPUFL__HS_RSS = 8 };

static inline size_t gpufl__d_n(const gpufl__rows *r) { return r->dev->n; }
static inline size_t gpufl__h_n(const gpufl__rows *r) { return r->host->n; }
static inline uint64_t gpufl__d_ts(const gpufl__rows *r, size_t i) { return r->dev->ts_ns[i]; }
static inline uint32_t gpufl__d_device(const gpufl__rows *r, size_t i) { return r->dev->device[i]; }
static inline uint32_t gpufl__d_valid(const gpufl__rows *r, size_t i) { return r->dev->valid[i]; }
static inline uint32_t gpufl__d_util(const gpufl__rows *r, size_t i) { return r->dev->gpu_util_pct[i]; }
/* GPU utilization, %, or -1 when the sample has none. */
static inline int gpufl__d_util_or_none(const gpufl__rows *r, size_t i)
{
    return (r->dev->valid[i] & GPUFL__DS_GPU_UTIL) ? r->dev->gpu_util_pct[i] : -1;
}
static inline uint64_t gpufl__d_mem_used(const gpufl__rows *r, size_t i) { return r->dev->mem_used_bytes[i]; }
static inline uint64_t gpufl__d_mem_total(const gpufl__rows *r, size_t i) { return r->dev->mem_total_bytes[i]; }
static inline uint64_t gpufl__d_proc_mem(const gpufl__rows *r, size_t i) { return r->dev->proc_mem_bytes[i]; }

/* The device_info of device index dev, or NULL. */
const gpufl_trace_device *gpufl__rows_device(const gpufl__rows *r, uint32_t dev);
/* The PCIe link of dev from its device_info; 0 when unknown. */
void gpufl__rows_device_pcie(const gpufl__rows *r, uint32_t dev, uint32_t *gen, uint32_t *width);

/* ---- any row by table ---------------------------------------------------------------- */

/* Start of an interval, time of a sample or of an allocation. */
static inline uint64_t gpufl__row_start(const gpufl__rows *r, unsigned tbl, size_t i)
{
    switch (tbl) {
    case GPUFL__TBL_KERNEL: return gpufl__k_start(r, i);
    case GPUFL__TBL_COPY:
    case GPUFL__TBL_MEMSET: return gpufl__x_start(gpufl__rows_xfers(r, tbl), i);
    case GPUFL__TBL_SYNC: return gpufl__y_start(r, i);
    case GPUFL__TBL_SCOPE:
    case GPUFL__TBL_NVTX: return gpufl__s_begin(gpufl__rows_ranges(r, tbl), i);
    case GPUFL__TBL_DEVICE_SAMPLE: return gpufl__d_ts(r, i);
    case GPUFL__TBL_MEMORY: return gpufl__m_ts(r, i);
    default: return r->host->ts_ns[i];
    }
}

/* End of an interval (for a scope or NVTX range that never ended, the
 * session's last recorded time); of a sample or an allocation, its time.
 * It may be before the start in damaged input: callers clip. */
static inline uint64_t gpufl__row_end(const gpufl__rows *r, unsigned tbl, size_t i)
{
    switch (tbl) {
    case GPUFL__TBL_KERNEL: return gpufl__k_end(r, i);
    case GPUFL__TBL_COPY:
    case GPUFL__TBL_MEMSET: return gpufl__x_end(gpufl__rows_xfers(r, tbl), i);
    case GPUFL__TBL_SYNC: return gpufl__y_end(r, i);
    case GPUFL__TBL_SCOPE:
    case GPUFL__TBL_NVTX: return gpufl__s_end(gpufl__rows_ranges(r, tbl), i);
    default: return gpufl__row_start(r, tbl, i);
    }
}

/* Row of the streams table: kernels, copies, memsets, syncs, memory. */
static inline uint32_t gpufl__row_stream_row(const gpufl__rows *r, unsigned tbl, size_t i)
{
    switch (tbl) {
    case GPUFL__TBL_KERNEL: return gpufl__k_stream_row(r, i);
    case GPUFL__TBL_COPY:
    case GPUFL__TBL_MEMSET: return gpufl__x_stream_row(gpufl__rows_xfers(r, tbl), i);
    case GPUFL__TBL_SYNC: return gpufl__y_stream_row(r, i);
    default: return r->memory->stream_row[i];
    }
}

/* Device of device work, allocations and GPU samples; 0 for the others. */
static inline uint32_t gpufl__row_device(const gpufl__rows *r, unsigned tbl, size_t i)
{
    switch (tbl) {
    case GPUFL__TBL_KERNEL:
    case GPUFL__TBL_COPY:
    case GPUFL__TBL_MEMSET:
    case GPUFL__TBL_SYNC:
    case GPUFL__TBL_MEMORY: return gpufl__stream_device(r, gpufl__row_stream_row(r, tbl, i));
    case GPUFL__TBL_DEVICE_SAMPLE: return gpufl__d_device(r, i);
    default: return 0;
    }
}

/* CUPTI stream id of device work and allocations. */
static inline uint32_t gpufl__row_stream(const gpufl__rows *r, unsigned tbl, size_t i)
{
    return gpufl__stream_id(r, gpufl__row_stream_row(r, tbl, i));
}

/* The device and stream of device work; zeros for a stream row the trace
 * does not have. */
static inline void gpufl__row_where(const gpufl__rows *r, unsigned tbl, size_t i, uint32_t *device, uint32_t *stream)
{
    uint32_t context;
    gpufl__stream_get(r, gpufl__row_stream_row(r, tbl, i), device, &context, stream);
}

static inline uint32_t gpufl__row_correlation(const gpufl__rows *r, unsigned tbl, size_t i)
{
    switch (tbl) {
    case GPUFL__TBL_KERNEL: return r->kernels->correlation[i];
    case GPUFL__TBL_COPY:
    case GPUFL__TBL_MEMSET: return gpufl__rows_xfers(r, tbl)->correlation[i];
    case GPUFL__TBL_SYNC: return r->syncs->correlation[i];
    default: return r->memory->correlation[i];
    }
}

/* gfl_copy_kind of a copy; 0 for the others. */
static inline unsigned gpufl__row_copy_kind(const gpufl__rows *r, unsigned tbl, size_t i)
{
    return tbl == GPUFL__TBL_COPY ? gpufl__x_kind(r->copies, i) : 0;
}

/* String id of the name of a kernel (demangled), scope or NVTX range. */
static inline uint32_t gpufl__row_name(const gpufl__rows *r, unsigned tbl, size_t i)
{
    if (tbl == GPUFL__TBL_KERNEL)
        return gpufl__k_name(r, i);
    return gpufl__s_name(gpufl__rows_ranges(r, tbl), i);
}

/* The thread of a scope or NVTX range, or of the call behind device work
 * or an allocation (0 unknown). */
static inline uint32_t gpufl__row_tid(const gpufl__rows *r, unsigned tbl, size_t i)
{
    switch (tbl) {
    case GPUFL__TBL_KERNEL: return gpufl__k_tid(r, i);
    case GPUFL__TBL_COPY:
    case GPUFL__TBL_MEMSET: return gpufl__caller_tid(r, gpufl__x_caller(gpufl__rows_xfers(r, tbl), i));
    case GPUFL__TBL_SYNC: return gpufl__y_tid(r, i);
    case GPUFL__TBL_SCOPE:
    case GPUFL__TBL_NVTX: return gpufl__s_tid(gpufl__rows_ranges(r, tbl), i);
    case GPUFL__TBL_MEMORY: return gpufl__caller_tid(r, gpufl__m_caller(r, i));
    default: return 0;
    }
}

/* Nesting depth, instant-ness (an NVTX mark) and never having ended, of a
 * scope or NVTX range (tbl GPUFL__TBL_SCOPE or _NVTX). */
static inline unsigned gpufl__row_depth(const gpufl__rows *r, unsigned tbl, size_t i)
{
    return gpufl__s_depth(gpufl__rows_ranges(r, tbl), i);
}
static inline bool gpufl__row_instant(const gpufl__rows *r, unsigned tbl, size_t i)
{
    return gpufl__s_instant(gpufl__rows_ranges(r, tbl), i);
}
static inline bool gpufl__row_unended(const gpufl__rows *r, unsigned tbl, size_t i)
{
    return gpufl__s_unended(gpufl__rows_ranges(r, tbl), i);
}

/* The API call that launched a kernel, copy or memset: its thread and
 * times. Returns 1 when the call is known (a start time and a thread), 0
 * otherwise (syncs and the other tables: always 0, they carry no API
 * times). */
static inline int gpufl__row_call(const gpufl__rows *r, unsigned tbl, size_t i, uint64_t *api_start, uint64_t *api_end,
                                  uint32_t *tid)
{
    uint32_t caller;
    if (tbl == GPUFL__TBL_KERNEL) {
        const gpufl_trace_kernels *k = r->kernels;
        if (k->api_lead_ns[i] == 0)
            return 0;
        *api_start = gpufl_trace_kernel_api_start(k, i);
        *api_end = gpufl_trace_kernel_api_end(k, i);
        caller = k->caller_row[i];
    } else if (tbl == GPUFL__TBL_COPY || tbl == GPUFL__TBL_MEMSET) {
        const gpufl_trace_transfers *x = gpufl__rows_xfers(r, tbl);
        if (x->api_lead_ns[i] == 0)
            return 0;
        *api_start = gpufl_trace_transfer_api_start(x, i);
        *api_end = gpufl_trace_transfer_api_end(x, i);
        caller = x->caller_row[i];
    } else {
        return 0;
    }
    *tid = gpufl__caller_tid(r, caller);
    return *api_start != 0 && *tid != 0;
}

/* ---- whole rows --------------------------------------------------------------------- */

/* What a timeline needs of one kernel, copy, memset or sync. end may be 0
 * or before start in damaged input; callers clip. */
typedef struct gpufl__work_row {
    uint64_t start, end;
    uint64_t api_start, api_end; /* the launching call; 0 unknown (syncs: always 0) */
    uint32_t device, stream, correlation, tid;
    uint32_t name;                         /* kernels: string id of the name (the mangled one when there is
                          no demangled one); 0 otherwise */
    uint32_t graph_id;                     /* kernels: launched as part of this CUDA graph, 0 none */
    uint8_t kind;                          /* copies: gfl_copy_kind; syncs: gfl_sync_kind; else 0 */
    uint32_t grid[3], block[3], registers; /* kernels */
    uint32_t launch;                       /* kernels: 1 + the row of the launch configuration, the same for
                          kernels launched alike, below gpufl__rows_launch_count(); 0 none */
    uint64_t bytes;                        /* copies and memsets */
} gpufl__work_row;

/* Row i of tbl (kernel, copy, memset or sync) into *o. */
static inline void gpufl__work_row_get(const gpufl__rows *r, unsigned tbl, size_t i, gpufl__work_row *o)
{
    memset(o, 0, sizeof *o);
    o->start = gpufl__row_start(r, tbl, i);
    o->end = gpufl__row_end(r, tbl, i);
    gpufl__row_where(r, tbl, i, &o->device, &o->stream);
    if (!gpufl__row_call(r, tbl, i, &o->api_start, &o->api_end, &o->tid))
        o->api_start = o->api_end = 0;
    if (tbl == GPUFL__TBL_KERNEL) {
        const gpufl_trace_kernels *k = r->kernels;
        const gpufl_trace_launch_configs *c = r->configs;
        uint32_t cr = k->config_row[i];
        o->correlation = k->correlation[i];
        o->graph_id = k->graph_id[i];
        if (!o->tid)
            o->tid = gpufl__caller_tid(r, k->caller_row[i]);
        if (cr < c->n) {
            o->name = c->name[cr] ? c->name[cr] : c->mangled[cr];
            for (int d = 0; d < 3; d++) {
                o->grid[d] = c->grid[cr][d];
                o->block[d] = c->block[cr][d];
            }
            o->registers = c->registers[cr];
            o->launch = cr + 1;
        }
    } else if (tbl == GPUFL__TBL_SYNC) {
        const gpufl_trace_syncs *s = r->syncs;
        o->correlation = s->correlation[i];
        o->tid = gpufl__caller_tid(r, s->caller_row[i]);
        o->kind = s->kind[i];
    } else {
        const gpufl_trace_transfers *x = gpufl__rows_xfers(r, tbl);
        o->correlation = x->correlation[i];
        if (!o->tid)
            o->tid = gpufl__caller_tid(r, x->caller_row[i]);
        o->graph_id = x->graph_id[i];
        o->kind = tbl == GPUFL__TBL_COPY ? x->kind[i] : 0;
        o->bytes = x->bytes[i];
    }
}

/* Every column of a kernel, for the CSV. */
typedef struct gpufl__kernel_row {
    uint64_t start, end;
    uint32_t name, mangled;
    uint32_t device, stream, context, correlation;
    uint32_t grid[3], block[3];
    uint32_t registers, static_smem, dynamic_smem, local_mem;
    uint32_t occupancy_x10000;
    uint8_t limiter, external_kind;
    uint32_t tid, nvtx, stack, graph_id;
    uint64_t scope, external_id, api_start, api_end;
} gpufl__kernel_row;

static inline void gpufl__kernel_row_get(const gpufl__rows *r, size_t i, gpufl__kernel_row *o)
{
    const gpufl_trace_kernels *k = r->kernels;
    const gpufl_trace_launch_configs *c = r->configs;
    memset(o, 0, sizeof *o);
    o->start = k->start_ns[i];
    o->end = gpufl__k_end(r, i);
    uint32_t cr = k->config_row[i];
    if (cr < c->n) {
        o->name = c->name[cr];
        o->mangled = c->mangled[cr];
        for (int d = 0; d < 3; d++) {
            o->grid[d] = c->grid[cr][d];
            o->block[d] = c->block[cr][d];
        }
        o->registers = c->registers[cr];
        o->static_smem = c->static_smem[cr];
        o->dynamic_smem = c->dynamic_smem[cr];
        o->local_mem = c->local_mem[cr];
        o->occupancy_x10000 = c->occupancy_x10000[cr];
        o->limiter = c->limiter[cr];
    }
    gpufl__stream_get(r, k->stream_row[i], &o->device, &o->context, &o->stream);
    gpufl__caller_info who;
    gpufl__caller_get(r, k->caller_row[i], &who);
    o->tid = who.tid;
    o->nvtx = who.nvtx;
    o->stack = who.stack;
    o->scope = who.scope;
    o->external_id = who.external_id;
    o->external_kind = who.external_kind;
    o->correlation = k->correlation[i];
    o->graph_id = k->graph_id[i];
    if (k->api_lead_ns[i]) {
        o->api_start = gpufl_trace_kernel_api_start(k, i);
        o->api_end = gpufl_trace_kernel_api_end(k, i);
    }
}

/* The launch configuration of config row c into *out (fields as in
 * gpufl__kernel_row). */
typedef struct gpufl__config_row {
    uint32_t grid[3], block[3];
    uint32_t registers, static_smem, dynamic_smem, local_mem;
    uint32_t occupancy_x10000;
    uint8_t limiter;
} gpufl__config_row;

static inline void gpufl__config_row_get(const gpufl__rows *r, uint32_t c, gpufl__config_row *out)
{
    const gpufl_trace_launch_configs *g = r->configs;
    for (int d = 0; d < 3; d++) {
        out->grid[d] = g->grid[c][d];
        out->block[d] = g->block[c][d];
    }
    out->registers = g->registers[c];
    out->static_smem = g->static_smem[c];
    out->dynamic_smem = g->dynamic_smem[c];
    out->local_mem = g->local_mem[c];
    out->occupancy_x10000 = g->occupancy_x10000[c];
    out->limiter = g->limiter[c];
}

/* Every column of a copy or memset (tbl GPUFL__TBL_COPY or _MEMSET). */
typedef struct gpufl__transfer_row {
    uint64_t start, end, bytes;
    uint32_t device, dst_device, stream, context, correlation, tid, value, graph_id;
    uint8_t kind, src_kind, dst_kind;
    uint64_t scope, external_id, api_start, api_end;
} gpufl__transfer_row;

static inline void gpufl__transfer_row_get(const gpufl__rows *r, unsigned tbl, size_t i, gpufl__transfer_row *o)
{
    const gpufl_trace_transfers *x = gpufl__rows_xfers(r, tbl);
    memset(o, 0, sizeof *o);
    o->start = x->start_ns[i];
    o->end = gpufl__x_end(x, i);
    o->bytes = x->bytes[i];
    gpufl__stream_get(r, x->stream_row[i], &o->device, &o->context, &o->stream);
    gpufl__call_ids(r, x->caller_row[i], &o->tid, &o->scope, &o->external_id);
    o->dst_device = x->dst_device[i];
    o->correlation = x->correlation[i];
    o->value = x->value[i];
    o->graph_id = x->graph_id[i];
    o->kind = x->kind[i];
    o->src_kind = x->src_kind[i];
    o->dst_kind = x->dst_kind[i];
    if (x->api_lead_ns[i]) {
        o->api_start = gpufl_trace_transfer_api_start(x, i);
        o->api_end = gpufl_trace_transfer_api_end(x, i);
    }
}

typedef struct gpufl__sync_row {
    uint64_t start, end;
    uint32_t device, stream, context, correlation, tid, cuda_event;
    uint8_t kind;
    uint64_t scope, external_id;
} gpufl__sync_row;

static inline void gpufl__sync_row_get(const gpufl__rows *r, size_t i, gpufl__sync_row *o)
{
    const gpufl_trace_syncs *s = r->syncs;
    o->start = s->start_ns[i];
    o->end = gpufl__y_end(r, i);
    gpufl__stream_get(r, s->stream_row[i], &o->device, &o->context, &o->stream);
    gpufl__call_ids(r, s->caller_row[i], &o->tid, &o->scope, &o->external_id);
    o->correlation = s->correlation[i];
    o->cuda_event = s->cuda_event[i];
    o->kind = s->kind[i];
}

/* A gpufl scope or NVTX range (tbl GPUFL__TBL_SCOPE or _NVTX). */
typedef struct gpufl__range_row {
    uint64_t start, end; /* one that never ended: the session's last recorded time */
    uint64_t id, parent;
    uint32_t name, tid, domain;
    uint32_t depth;
    uint8_t implicit, instant;
    uint8_t unended; /* never ended (gpufl_trace_scopes.unended) */
    uint8_t has_seq; /* NVTX ranges of PyTorch's ops: seq is the op's sequence number */
    uint64_t seq;
} gpufl__range_row;

static inline void gpufl__range_row_get(const gpufl__rows *r, unsigned tbl, size_t i, gpufl__range_row *o)
{
    const gpufl_trace_scopes *s = gpufl__rows_ranges(r, tbl);
    o->start = s->begin_ns[i];
    o->end = s->end_ns[i];
    o->id = s->id[i];
    o->parent = s->parent[i];
    o->name = s->name[i];
    o->tid = s->tid[i];
    o->domain = s->domain[i];
    o->depth = s->depth[i];
    o->implicit = s->implicit[i];
    o->instant = s->instant[i];
    o->unended = s->unended[i];
    o->has_seq = s->has_seq[i];
    o->seq = s->seq[i];
}

typedef struct gpufl__mem_row {
    uint64_t ts, address, bytes, scope, external_id;
    uint32_t device, stream, tid, context, correlation;
    uint8_t is_free, kind, failed;
} gpufl__mem_row;

static inline void gpufl__mem_row_get(const gpufl__rows *r, size_t i, gpufl__mem_row *o)
{
    const gpufl_trace_memory *m = r->memory;
    o->ts = m->ts_ns[i];
    o->address = m->address[i];
    o->bytes = m->bytes[i];
    gpufl__stream_get(r, m->stream_row[i], &o->device, &o->context, &o->stream);
    gpufl__call_ids(r, m->caller_row[i], &o->tid, &o->scope, &o->external_id);
    o->correlation = m->correlation[i];
    o->is_free = m->is_free[i];
    o->kind = m->kind[i];
    o->failed = m->failed[i];
}

typedef struct gpufl__dev_row {
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
} gpufl__dev_row;

static inline void gpufl__dev_row_get(const gpufl__rows *r, size_t i, gpufl__dev_row *o)
{
    const gpufl_trace_device_samples *d = r->dev;
    o->ts = d->ts_ns[i];
    o->device = d->device[i];
    o->valid = d->valid[i];
    o->gpu_util_pct = d->gpu_util_pct[i];
    o->mem_util_pct = d->mem_util_pct[i];
    o->mem_used_bytes = d->mem_used_bytes[i];
    o->mem_free_bytes = d->mem_free_bytes[i];
    o->mem_total_bytes = d->mem_total_bytes[i];
    o->proc_mem_bytes = d->proc_mem_bytes[i];
    o->energy_mj = d->energy_mj[i];
    o->temp_c = d->temp_c[i];
    o->mem_temp_c = d->mem_temp_c[i];
    o->power_mw = d->power_mw[i];
    o->power_limit_mw = d->power_limit_mw[i];
    o->sm_clock_mhz = d->sm_clock_mhz[i];
    o->mem_clock_mhz = d->mem_clock_mhz[i];
    o->gfx_clock_mhz = d->gfx_clock_mhz[i];
    o->throttle_reasons = d->throttle_reasons[i];
    o->pcie_rx_kbps = d->pcie_rx_kbps[i];
    o->pcie_tx_kbps = d->pcie_tx_kbps[i];
    o->fan_pct = d->fan_pct[i];
    o->ecc_corrected = d->ecc_corrected[i];
    o->ecc_uncorrected = d->ecc_uncorrected[i];
}

typedef struct gpufl__host_row {
    uint64_t ts;
    uint32_t valid;
    uint32_t proc_cpu_pct_x100, sys_cpu_pct_x100, cpu_count;
    uint64_t ram_used_bytes, ram_total_bytes, proc_rss_bytes;
} gpufl__host_row;

static inline void gpufl__host_row_get(const gpufl__rows *r, size_t i, gpufl__host_row *o)
{
    const gpufl_trace_host_samples *h = r->host;
    o->ts = h->ts_ns[i];
    o->valid = h->valid[i];
    o->proc_cpu_pct_x100 = h->proc_cpu_pct_x100[i];
    o->sys_cpu_pct_x100 = h->sys_cpu_pct_x100[i];
    o->cpu_count = h->cpu_count[i];
    o->ram_used_bytes = h->ram_used_bytes[i];
    o->ram_total_bytes = h->ram_total_bytes[i];
    o->proc_rss_bytes = h->proc_rss_bytes[i];
}

/* ---- GPU work in start order --------------------------------------------------------- */

/* One piece of GPU work as the walks need it. */
typedef struct gpufl__op {
    uint8_t table; /* GPUFL__TBL_KERNEL, _COPY or _MEMSET */
    size_t row;
    uint64_t start, end;
    uint32_t stream_row; /* row of the streams table */
    uint32_t caller;     /* row of the callers table */
    uint64_t api_start;  /* 0 unknown */
} gpufl__op;

/* A merge of the three tables, which are each sorted by start: ops come by
 * start time; equal starts in the order kernels, copies, memsets, then row.
 * Kernels are nearly all the work, and come in runs between two copies:
 * while the next kernel starts no later than `upto` (the other tables'
 * next starts) it comes next, without comparing the three again. */
typedef struct gpufl__ops {
    const gpufl__rows *r;
    size_t next[3];
    bool kernel_run; /* the last op was a kernel, and upto is set */
    uint64_t upto;
} gpufl__ops;

static inline void gpufl__ops_begin(gpufl__ops *it, const gpufl__rows *r)
{
    it->r = r;
    it->next[0] = it->next[1] = it->next[2] = 0;
    it->kernel_run = false;
    it->upto = 0;
}

static inline void gpufl__op_kernel(const gpufl__rows *r, size_t i, gpufl__op *op)
{
    op->table = GPUFL__TBL_KERNEL;
    op->row = i;
    op->start = gpufl__k_start(r, i);
    op->end = op->start + gpufl__k_dur(r, i);
    op->stream_row = gpufl__k_stream_row(r, i);
    op->caller = gpufl__k_caller(r, i);
    op->api_start = gpufl__k_api_start(r, i);
}

/* The next op into *op when no run of kernels goes on: true, or false at
 * the end. */
bool gpufl__ops_next_slow(gpufl__ops *it, gpufl__op *op);

/* The next op into *op: true, or false at the end. */
static inline bool gpufl__ops_next(gpufl__ops *it, gpufl__op *op)
{
    size_t i = it->next[GPUFL__TBL_KERNEL];
    if (it->kernel_run && i < it->r->kernels->n && it->r->kernels->start_ns[i] <= it->upto) {
        it->next[GPUFL__TBL_KERNEL] = i + 1;
        gpufl__op_kernel(it->r, i, op);
        return true;
    }
    return gpufl__ops_next_slow(it, op);
}

#endif /* GPUFL_READ_ROWS_H */
