/*
 * The one place where the analyses read the trace's columns
 * (include/gpufl/trace.h). Every analysis goes through these small inline
 * functions, so a change of the trace's layout (a column split into a table
 * of distinct values, a 64-bit time become an offset) is absorbed here.
 *
 * Also: GPU work ("ops": kernels, copies, memsets) as one sequence in start
 * order, which busy time and idle time walk.
 *
 * Threads: any; everything here only reads the trace.
 */
#ifndef GPUFL_ANALYZE_TRACE_ACCESS_H
#define GPUFL_ANALYZE_TRACE_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "gpufl/trace.h"

typedef struct ta {
    const gpufl_trace *t;
    const gpufl_trace_info *info;
    const gpufl_trace_kernels *k;
    const gpufl_trace_transfers *cp, *ms; /* copies, memsets */
    const gpufl_trace_syncs *sy;
    const gpufl_trace_memory *mem;
    const gpufl_trace_scopes *sc, *nv; /* gpufl scopes, NVTX */
    const gpufl_trace_device_samples *ds;
    const gpufl_trace_launch_configs *cfg;
    const gpufl_trace_streams *st;
    const gpufl_trace_callers *cl;
    uint64_t start_ns;
    uint64_t end_ns; /* the session's end; when it did not end, its last recorded time
                         (gpufl_trace_info.last_ns) */
    bool ended;
} ta;

/* Binds a to t and takes the session's end from its info. */
void gpufl__ta_open(ta *a, const gpufl_trace *t);

static inline uint64_t ta_span(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

/* ---- kernels ------------------------------------------------------------- */

static inline size_t ta_k_n(const ta *a) { return a->k->n; }
static inline uint64_t ta_k_start(const ta *a, size_t i) { return a->k->start_ns[i]; }
/* The accessors of times read the offset columns inline and call the
 * trace's own accessor (a search of `exact`) only for the rare rows whose
 * offsets do not fit, which is what that accessor does first: the same
 * values, without a call per row. */
static inline uint64_t ta_k_end(const ta *a, size_t i)
{
    uint32_t d = a->k->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? a->k->start_ns[i] + d : gpufl_trace_kernel_end(a->k, i);
}
static inline uint64_t ta_k_dur(const ta *a, size_t i)
{
    uint32_t d = a->k->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? d : ta_span(ta_k_start(a, i), ta_k_end(a, i));
}
static inline uint64_t ta_k_api_start(const ta *a, size_t i)
{
    uint32_t l = a->k->api_lead_ns[i];
    return l == 0 ? 0 : l != GPUFL_TRACE_EXACT ? a->k->start_ns[i] - l : gpufl_trace_kernel_api_start(a->k, i);
}
static inline uint64_t ta_k_api_end(const ta *a, size_t i) { return gpufl_trace_kernel_api_end(a->k, i); }
/* The row of the launch configuration table: equal for two launches exactly
 * when name and whole configuration are equal. */
static inline uint32_t ta_k_config_id(const ta *a, size_t i) { return a->k->config_row[i]; }
static inline uint32_t ta_cfg_name(const ta *a, uint32_t c) { return a->cfg->name[c]; }
static inline uint32_t ta_cfg_mangled(const ta *a, uint32_t c) { return a->cfg->mangled[c]; }
static inline void ta_cfg_get(const ta *a, uint32_t c, gpufl__ana_launch_config *out)
{
    const gpufl_trace_launch_configs *g = a->cfg;
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
/* The launch call of kernel i: *lead = start - api_start, *call = api_end -
 * api_start (signed: damaged input can put them out of order). False when
 * the kernel has no API call times. Reads the offset columns directly, and
 * the exact times only for the rare rows whose offsets do not fit. */
static inline bool ta_k_launch(const ta *a, size_t i, int64_t *lead, int64_t *call)
{
    uint32_t l = a->k->api_lead_ns[i], c = a->k->api_dur_ns[i];
    if (l == 0)
        return false;
    if (l != GPUFL_TRACE_EXACT && c != GPUFL_TRACE_EXACT) {
        *lead = l;
        *call = c;
        return true;
    }
    uint64_t s = gpufl_trace_kernel_api_start(a->k, i), e = gpufl_trace_kernel_api_end(a->k, i);
    if (s == 0)
        return false;
    *lead = (int64_t)(a->k->start_ns[i] - s);
    *call = (int64_t)(e - s);
    return true;
}
static inline uint32_t ta_k_name(const ta *a, size_t i) { return ta_cfg_name(a, ta_k_config_id(a, i)); }
static inline uint32_t ta_k_stream_row(const ta *a, size_t i) { return a->k->stream_row[i]; }
static inline uint32_t ta_k_caller(const ta *a, size_t i) { return a->k->caller_row[i]; }

/* ---- streams and callers --------------------------------------------------- */

static inline size_t ta_streams_n(const ta *a) { return a->st->n; }
static inline uint32_t ta_stream_device(const ta *a, uint32_t s) { return a->st->device[s]; }
static inline uint32_t ta_stream_id(const ta *a, uint32_t s) { return a->st->stream[s]; }

static inline uint32_t ta_caller_tid(const ta *a, uint32_t c) { return a->cl->tid[c]; }
static inline uint64_t ta_caller_scope(const ta *a, uint32_t c) { return a->cl->scope[c]; }
static inline uint32_t ta_caller_nvtx(const ta *a, uint32_t c) { return a->cl->nvtx[c]; }
static inline uint32_t ta_caller_stack(const ta *a, uint32_t c) { return a->cl->stack[c]; }

static inline uint32_t ta_k_device(const ta *a, size_t i) { return ta_stream_device(a, ta_k_stream_row(a, i)); }
static inline uint32_t ta_k_tid(const ta *a, size_t i) { return ta_caller_tid(a, ta_k_caller(a, i)); }
static inline uint64_t ta_k_scope(const ta *a, size_t i) { return ta_caller_scope(a, ta_k_caller(a, i)); }
static inline uint32_t ta_k_nvtx(const ta *a, size_t i) { return ta_caller_nvtx(a, ta_k_caller(a, i)); }
static inline uint32_t ta_k_stack(const ta *a, size_t i) { return ta_caller_stack(a, ta_k_caller(a, i)); }

/* ---- copies and memsets (x: a->cp or a->ms) --------------------------------- */

static inline uint64_t ta_x_start(const gpufl_trace_transfers *x, size_t i) { return x->start_ns[i]; }
static inline uint64_t ta_x_end(const gpufl_trace_transfers *x, size_t i)
{
    uint32_t d = x->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? x->start_ns[i] + d : gpufl_trace_transfer_end(x, i);
}
static inline uint64_t ta_x_dur(const gpufl_trace_transfers *x, size_t i)
{
    uint32_t d = x->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? d : ta_span(ta_x_start(x, i), ta_x_end(x, i));
}
static inline uint64_t ta_x_api_start(const gpufl_trace_transfers *x, size_t i)
{
    uint32_t l = x->api_lead_ns[i];
    return l == 0 ? 0 : l != GPUFL_TRACE_EXACT ? x->start_ns[i] - l : gpufl_trace_transfer_api_start(x, i);
}
static inline uint64_t ta_x_bytes(const gpufl_trace_transfers *x, size_t i) { return x->bytes[i]; }
static inline uint8_t ta_x_kind(const gpufl_trace_transfers *x, size_t i) { return x->kind[i]; }
static inline uint8_t ta_x_src_kind(const gpufl_trace_transfers *x, size_t i) { return x->src_kind[i]; }
static inline uint8_t ta_x_dst_kind(const gpufl_trace_transfers *x, size_t i) { return x->dst_kind[i]; }
static inline uint32_t ta_x_stream_row(const gpufl_trace_transfers *x, size_t i) { return x->stream_row[i]; }
static inline uint32_t ta_x_caller(const gpufl_trace_transfers *x, size_t i) { return x->caller_row[i]; }

/* ---- syncs ----------------------------------------------------------------- */

static inline size_t ta_y_n(const ta *a) { return a->sy->n; }
static inline uint64_t ta_y_start(const ta *a, size_t i) { return a->sy->start_ns[i]; }
static inline uint64_t ta_y_end(const ta *a, size_t i)
{
    uint32_t d = a->sy->dur_ns[i];
    return d != GPUFL_TRACE_EXACT ? a->sy->start_ns[i] + d : gpufl_trace_sync_end(a->sy, i);
}
static inline uint8_t ta_y_kind(const ta *a, size_t i) { return a->sy->kind[i]; }
static inline uint32_t ta_y_stream_row(const ta *a, size_t i) { return a->sy->stream_row[i]; }
static inline uint32_t ta_y_tid(const ta *a, size_t i) { return ta_caller_tid(a, a->sy->caller_row[i]); }

/* ---- allocations ------------------------------------------------------------ */

static inline size_t ta_m_n(const ta *a) { return a->mem->n; }
static inline uint64_t ta_m_ts(const ta *a, size_t i) { return a->mem->ts_ns[i]; }
static inline uint64_t ta_m_address(const ta *a, size_t i) { return a->mem->address[i]; }
static inline uint64_t ta_m_bytes(const ta *a, size_t i) { return a->mem->bytes[i]; }
static inline bool ta_m_is_free(const ta *a, size_t i) { return a->mem->is_free[i] != 0; }
static inline uint8_t ta_m_kind(const ta *a, size_t i) { return a->mem->kind[i]; }
static inline uint32_t ta_m_device(const ta *a, size_t i) { return ta_stream_device(a, a->mem->stream_row[i]); }
static inline uint32_t ta_m_caller(const ta *a, size_t i) { return a->mem->caller_row[i]; }

/* ---- scopes and NVTX ranges (s: a->sc or a->nv) ------------------------------ */

static inline uint64_t ta_s_begin(const gpufl_trace_scopes *s, size_t i) { return s->begin_ns[i]; }
/* Its end; for one that never ended, the session's last recorded time
 * (gpufl_trace_info.last_ns), and ta_s_unended says so. */
static inline uint64_t ta_s_end(const gpufl_trace_scopes *s, size_t i) { return s->end_ns[i]; }
static inline bool ta_s_unended(const gpufl_trace_scopes *s, size_t i) { return s->unended[i] != 0; }
static inline uint64_t ta_s_id(const gpufl_trace_scopes *s, size_t i) { return s->id[i]; }
static inline uint64_t ta_s_parent(const gpufl_trace_scopes *s, size_t i) { return s->parent[i]; }
static inline uint32_t ta_s_name(const gpufl_trace_scopes *s, size_t i) { return s->name[i]; }
static inline uint32_t ta_s_domain(const gpufl_trace_scopes *s, size_t i) { return s->domain[i]; }
static inline uint32_t ta_s_tid(const gpufl_trace_scopes *s, size_t i) { return s->tid[i]; }
static inline bool ta_s_instant(const gpufl_trace_scopes *s, size_t i) { return s->instant[i] != 0; }

/* ---- GPU samples and devices --------------------------------------------------- */

#define TA_DEV_UTIL 1u        /* gpu_util_pct */
#define TA_DEV_MEMORY 4u      /* mem_used_bytes, mem_total_bytes */
#define TA_DEV_PROC_MEM 8192u /* proc_mem_bytes */

static inline size_t ta_d_n(const ta *a) { return a->ds->n; }
static inline uint64_t ta_d_ts(const ta *a, size_t i) { return a->ds->ts_ns[i]; }
static inline uint32_t ta_d_device(const ta *a, size_t i) { return a->ds->device[i]; }
static inline uint32_t ta_d_valid(const ta *a, size_t i) { return a->ds->valid[i]; }
static inline uint32_t ta_d_util(const ta *a, size_t i) { return a->ds->gpu_util_pct[i]; }
static inline uint64_t ta_d_mem_used(const ta *a, size_t i) { return a->ds->mem_used_bytes[i]; }
static inline uint64_t ta_d_mem_total(const ta *a, size_t i) { return a->ds->mem_total_bytes[i]; }
static inline uint64_t ta_d_proc_mem(const ta *a, size_t i) { return a->ds->proc_mem_bytes[i]; }

/* The device_info of device index dev, or NULL. */
const gpufl_trace_device *gpufl__ta_device(const ta *a, uint32_t dev);
/* The PCIe link of dev from its device_info; 0 when unknown. */
void gpufl__ta_device_pcie(const ta *a, uint32_t dev, uint32_t *gen, uint32_t *width);

/* ---- GPU work in start order ------------------------------------------------- */

enum { TA_OP_KERNEL = 0, TA_OP_COPY = 1, TA_OP_MEMSET = 2 };

/* One piece of GPU work as the walks need it. */
typedef struct ta_op {
    uint8_t table; /* TA_OP_* */
    size_t row;
    uint64_t start, end;
    uint32_t stream_row; /* row of the streams table */
    uint32_t caller;     /* row of the callers table */
    uint64_t api_start;  /* 0 unknown */
} ta_op;

/* A merge of the three tables, which are each sorted by start: ops come by
 * start time; equal starts in the order kernels, copies, memsets, then row.
 * Kernels are nearly all the work, and come in runs between two copies:
 * while the next kernel starts no later than `upto` (the other tables'
 * next starts) it comes next, without comparing the three again. */
typedef struct ta_ops {
    const ta *a;
    size_t next[3];
    bool kernel_run; /* the last op was a kernel, and upto is set */
    uint64_t upto;
} ta_ops;

static inline void ta_ops_begin(ta_ops *it, const ta *a)
{
    it->a = a;
    it->next[0] = it->next[1] = it->next[2] = 0;
    it->kernel_run = false;
    it->upto = 0;
}

static inline void ta_op_kernel(const ta *a, size_t i, ta_op *op)
{
    op->table = TA_OP_KERNEL;
    op->row = i;
    op->start = ta_k_start(a, i);
    op->end = op->start + ta_k_dur(a, i);
    op->stream_row = ta_k_stream_row(a, i);
    op->caller = ta_k_caller(a, i);
    op->api_start = ta_k_api_start(a, i);
}

/* The next op into *op when no run of kernels goes on: true, or false at
 * the end. */
bool gpufl__ta_ops_next_slow(ta_ops *it, ta_op *op);

/* The next op into *op: true, or false at the end. */
static inline bool ta_ops_next(ta_ops *it, ta_op *op)
{
    size_t i = it->next[TA_OP_KERNEL];
    if (it->kernel_run && i < it->a->k->n && it->a->k->start_ns[i] <= it->upto) {
        it->next[TA_OP_KERNEL] = i + 1;
        ta_op_kernel(it->a, i, op);
        return true;
    }
    return gpufl__ta_ops_next_slow(it, op);
}

#endif /* GPUFL_ANALYZE_TRACE_ACCESS_H */
