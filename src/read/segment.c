/*
 * Events into the rows of a segment (see segment.h), and the descriptions
 * of the trace's row tables that segments and the merge share.
 */
#include "read/segment.h"

#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"

/* ---- the tables ----------------------------------------------------------- */

#define SIZE_OF(pubtype, prefix, f) [prefix##_##f] = (uint8_t)sizeof(*((pubtype *)0)->f),
#define SC_SIZE(f) SIZE_OF(gpufl_trace_scopes, SC, f)
#define KC_SIZE(f) SIZE_OF(gpufl_trace_kernels, KC, f)
#define TC_SIZE(f) SIZE_OF(gpufl_trace_transfers, TC, f)
#define YC_SIZE(f) SIZE_OF(gpufl_trace_syncs, YC, f)
#define MC_SIZE(f) SIZE_OF(gpufl_trace_memory, MC, f)
#define DC_SIZE(f) SIZE_OF(gpufl_trace_device_samples, DC, f)
#define HC_SIZE(f) SIZE_OF(gpufl_trace_host_samples, HC, f)
#define RC_SIZE(f) SIZE_OF(gpufl_trace_triggers, RC, f)
#define WC_SIZE(f) SIZE_OF(gpufl_trace_windows, WC, f)
#define AC_SIZE(f) SIZE_OF(gpufl_trace_allocator, AC, f)
#define PC_SIZE(f) SIZE_OF(gpufl_trace_pc_samples, PC, f)
#define PM_SIZE(f) SIZE_OF(gpufl_trace_pm_samples, PM, f)
#define RM_SIZE(f) SIZE_OF(gpufl_trace_range_metrics, RM, f)
#define QC_SIZE(f) SIZE_OF(gpufl_trace_sass_metrics, QC, f)
#define CK_SIZE(f) SIZE_OF(gpufl_trace_clocks, CK, f)
#define NC_SIZE(f) SIZE_OF(gpufl_trace_nccl_collectives, NC, f)

static const uint8_t scope_sizes[] = {SCOPE_COLS(SC_SIZE)};
static const uint8_t kernel_sizes[] = {KERNEL_COLS(KC_SIZE)};
static const uint8_t transfer_sizes[] = {TRANSFER_COLS(TC_SIZE)};
static const uint8_t sync_sizes[] = {SYNC_COLS(YC_SIZE)};
static const uint8_t memory_sizes[] = {MEMORY_COLS(MC_SIZE)};
static const uint8_t device_sample_sizes[] = {DEVICE_SAMPLE_COLS(DC_SIZE)};
static const uint8_t host_sample_sizes[] = {HOST_SAMPLE_COLS(HC_SIZE)};
static const uint8_t trigger_sizes[] = {TRIGGER_COLS(RC_SIZE)};
static const uint8_t window_sizes[] = {WINDOW_COLS(WC_SIZE)};
static const uint8_t allocator_sizes[] = {ALLOCATOR_COLS(AC_SIZE)};
static const uint8_t pc_sample_sizes[] = {PC_SAMPLE_COLS(PC_SIZE)};
static const uint8_t pm_sample_sizes[] = {PM_SAMPLE_COLS(PM_SIZE)};
static const uint8_t range_metric_sizes[] = {RANGE_METRIC_COLS(RM_SIZE)};
static const uint8_t sass_sizes[] = {SASS_COLS(QC_SIZE)};
static const uint8_t clock_sizes[] = {CLOCK_COLS(CK_SIZE)};
static const uint8_t nccl_sizes[] = {NCCL_COLL_COLS(NC_SIZE)};

static const uint8_t scope_xlat[SC_COUNT] = {[SC_name] = GFL_X_STRING, [SC_domain] = GFL_X_STRING};
static const uint8_t kernel_xlat[KC_COUNT] = {
    [KC_config_row] = GFL_X_CONFIG, [KC_stream_row] = GFL_X_STREAM, [KC_caller_row] = GFL_X_CALLER};
static const uint8_t transfer_xlat[TC_COUNT] = {[TC_stream_row] = GFL_X_STREAM, [TC_caller_row] = GFL_X_CALLER};
static const uint8_t sync_xlat[YC_COUNT] = {[YC_stream_row] = GFL_X_STREAM, [YC_caller_row] = GFL_X_CALLER};
static const uint8_t memory_xlat[MC_COUNT] = {[MC_stream_row] = GFL_X_STREAM, [MC_caller_row] = GFL_X_CALLER};
static const uint8_t trigger_xlat[RC_COUNT] = {
    [RC_kind] = GFL_X_STRING, [RC_detail] = GFL_X_STRING, [RC_dump] = GFL_X_STRING};
static const uint8_t window_xlat[WC_COUNT] = {[WC_reason] = GFL_X_STRING, [WC_detail] = GFL_X_STRING};
static const uint8_t allocator_xlat[AC_COUNT] = {
    [AC_framework] = GFL_X_STRING, [AC_reason] = GFL_X_STRING, [AC_caller_row] = GFL_X_CALLER};
static const uint8_t pc_sample_xlat[PC_COUNT] = {
    [PC_function] = GFL_X_STRING, [PC_file] = GFL_X_STRING, [PC_reason] = GFL_X_STRING};
static const uint8_t pm_sample_xlat[PM_COUNT] = {[PM_metric] = GFL_X_STRING};
static const uint8_t range_metric_xlat[RM_COUNT] = {[RM_name] = GFL_X_STRING, [RM_metric] = GFL_X_STRING};
static const uint8_t sass_xlat[QC_COUNT] = {
    [QC_function] = GFL_X_STRING, [QC_file] = GFL_X_STRING, [QC_caller_row] = GFL_X_CALLER};
static const uint8_t clock_xlat[CK_COUNT] = {[CK_point] = GFL_X_STRING, [CK_ntp] = GFL_X_STRING};
static const uint8_t nccl_xlat[NC_COUNT] = {
    [NC_func] = GFL_X_STRING, [NC_datatype] = GFL_X_STRING, [NC_algo] = GFL_X_STRING, [NC_proto] = GFL_X_STRING};
static const uint8_t plain_xlat[GFL_MAX_COLS] = {0};

_Static_assert(DC_COUNT <= GFL_MAX_COLS && TC_COUNT <= GFL_MAX_COLS, "GFL_MAX_COLS too small");

const gpufl__table_desc gpufl__tables[GFL_T_COUNT] = {
    [GFL_T_SCOPES] = {SC_COUNT, SC_begin_ns, scope_sizes, scope_xlat},
    [GFL_T_NVTX] = {SC_COUNT, SC_begin_ns, scope_sizes, scope_xlat},
    [GFL_T_KERNELS] = {KC_COUNT, KC_start_ns, kernel_sizes, kernel_xlat},
    [GFL_T_COPIES] = {TC_COUNT, TC_start_ns, transfer_sizes, transfer_xlat},
    [GFL_T_MEMSETS] = {TC_COUNT, TC_start_ns, transfer_sizes, transfer_xlat},
    [GFL_T_SYNCS] = {YC_COUNT, YC_start_ns, sync_sizes, sync_xlat},
    [GFL_T_MEMORY] = {MC_COUNT, MC_ts_ns, memory_sizes, memory_xlat},
    [GFL_T_DEVICE_SAMPLES] = {DC_COUNT, DC_ts_ns, device_sample_sizes, plain_xlat},
    [GFL_T_HOST_SAMPLES] = {HC_COUNT, HC_ts_ns, host_sample_sizes, plain_xlat},
    [GFL_T_TRIGGERS] = {RC_COUNT, RC_ts_ns, trigger_sizes, trigger_xlat},
    [GFL_T_TRACE_WINDOWS] = {WC_COUNT, WC_begin_ns, window_sizes, window_xlat},
    [GFL_T_ALLOCATOR] = {AC_COUNT, AC_ts_ns, allocator_sizes, allocator_xlat},
    [GFL_T_PC_SAMPLES] = {PC_COUNT, PC_ts_ns, pc_sample_sizes, pc_sample_xlat},
    [GFL_T_PM_SAMPLES] = {PM_COUNT, PM_ts_ns, pm_sample_sizes, pm_sample_xlat},
    [GFL_T_RANGE_METRICS] = {RM_COUNT, RM_ts_ns, range_metric_sizes, range_metric_xlat},
    [GFL_T_SASS_METRICS] = {QC_COUNT, QC_ts_ns, sass_sizes, sass_xlat},
    [GFL_T_CLOCKS] = {CK_COUNT, CK_ts_ns, clock_sizes, clock_xlat},
    [GFL_T_NCCL_COLLECTIVES] = {NC_COUNT, NC_start_ns, nccl_sizes, nccl_xlat},
};

void gpufl__rows_init(gpufl__rows *r, unsigned table)
{
    const gpufl__table_desc *d = &gpufl__tables[table];
    memset(r, 0, sizeof *r);
    r->t.cols = r->cols;
    r->t.ncols = d->ncols;
    r->t.key = d->key;
    for (unsigned i = 0; i < d->ncols; i++)
        r->cols[i].size = d->sizes[i];
}

void gpufl__rows_free(gpufl__rows *r)
{
    gpufl__table_free(&r->t);
    free(r->exact.v);
    r->exact = (gpufl__exact_vec){0};
}

size_t gpufl__rows_memory(const gpufl__rows *r)
{
    return gpufl__table_memory(&r->t) + r->exact.cap * sizeof *r->exact.v;
}

/* ---- building rows --------------------------------------------------------- */

/* Stores v as the value of field f (of public struct P, column C) of row r
 * of the rows R in scope. */
#define SETF(P, C, f, v)                                                                                               \
    do {                                                                                                               \
        __typeof__(*((P *)0)->f) x_ = (__typeof__(*((P *)0)->f))(v);                                                   \
        if (gpufl__col_put(&R->t, &R->cols[C], r, &x_, sizeof x_) != 0)                                                \
            return GPUFL_ENOMEM;                                                                                       \
    } while (0)
#define SSET(f, v) SETF(gpufl_trace_scopes, SC_##f, f, v)
#define KSET(f, v) SETF(gpufl_trace_kernels, KC_##f, f, v)
#define TSET(f, v) SETF(gpufl_trace_transfers, TC_##f, f, v)
#define YSET(f, v) SETF(gpufl_trace_syncs, YC_##f, f, v)
#define MSET(f, v) SETF(gpufl_trace_memory, MC_##f, f, v)
#define DSET(f, v) SETF(gpufl_trace_device_samples, DC_##f, f, v)
#define HSET(f, v) SETF(gpufl_trace_host_samples, HC_##f, f, v)
#define RSET(f, v) SETF(gpufl_trace_triggers, RC_##f, f, v)
#define ASET(f, v) SETF(gpufl_trace_allocator, AC_##f, f, v)
#define PSET(f, v) SETF(gpufl_trace_pc_samples, PC_##f, f, v)
#define PMSET(f, v) SETF(gpufl_trace_pm_samples, PM_##f, f, v)
#define RMSET(f, v) SETF(gpufl_trace_range_metrics, RM_##f, f, v)
#define QSET(f, v) SETF(gpufl_trace_sass_metrics, QC_##f, f, v)
#define CKSET(f, v) SETF(gpufl_trace_clocks, CK_##f, f, v)
#define NCSET(f, v) SETF(gpufl_trace_nccl_collectives, NC_##f, f, v)
#define ROW(R, r)                                                                                                      \
    do {                                                                                                               \
        if (gpufl__table_add_row(&(R)->t, &(r)) != 0)                                                                  \
            return GPUFL_ENOMEM;                                                                                       \
    } while (0)

int gpufl__exact_push(gpufl__exact_vec *x, const gpufl_trace_exact *e)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 16;
        gpufl_trace_exact *v = realloc(x->v, cap * sizeof *v);
        if (!v)
            return GPUFL_ENOMEM;
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n++] = *e;
    return 0;
}

/* The times of an interval row as a 64-bit start (set by the caller) and
 * 32-bit offsets: duration in column c_dur, and, with c_lead nonzero, the
 * API call's lead and duration in c_lead and c_api_dur (trace.h). A value
 * that does not fit makes the column GPUFL_TRACE_EXACT and the row's times
 * go to the exact list, whole. */
static int put_times(gpufl__rows *R, size_t r, unsigned c_dur, unsigned c_lead, unsigned c_api_dur, uint64_t start,
                     uint64_t end, uint64_t api_start, uint64_t api_end)
{
    uint64_t dur = end - start;
    uint32_t dur32 = dur < GPUFL_TRACE_EXACT ? (uint32_t)dur : GPUFL_TRACE_EXACT;
    uint32_t lead32 = 0, api32 = 0;
    bool exact = dur32 == GPUFL_TRACE_EXACT;
    if (api_start || api_end) {
        /* a lead of 0 would read as "no API call" */
        uint64_t lead = start - api_start, api = api_end - api_start;
        if (lead != 0 && lead < GPUFL_TRACE_EXACT && api < GPUFL_TRACE_EXACT) {
            lead32 = (uint32_t)lead;
            api32 = (uint32_t)api;
        } else {
            lead32 = api32 = GPUFL_TRACE_EXACT;
            exact = true;
        }
    }
    if (gpufl__col_put(&R->t, &R->cols[c_dur], r, &dur32, 4) != 0)
        return GPUFL_ENOMEM;
    if (c_lead && (gpufl__col_put(&R->t, &R->cols[c_lead], r, &lead32, 4) != 0 ||
                   gpufl__col_put(&R->t, &R->cols[c_api_dur], r, &api32, 4) != 0))
        return GPUFL_ENOMEM;
    if (exact) {
        gpufl_trace_exact e = {r, end, api_start, api_end};
        return gpufl__exact_push(&R->exact, &e);
    }
    return 0;
}

/* The segment's row of a stream, of a caller: the same as the last row's
 * mostly. 0 or GPUFL_ENOMEM. */
static int stream_of(gpufl__segment *s, uint16_t device, uint32_t context, uint32_t stream, uint32_t *out)
{
    gpufl__stream_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.device = device;
    rec.context = context;
    rec.stream = stream;
    if (s->last_stream && memcmp(gpufl__recset_at(&s->streams, s->last_stream - 1), &rec, sizeof rec) == 0) {
        *out = s->last_stream - 1;
        return 0;
    }
    if (gpufl__recset_put(&s->streams, &rec, out) != 0)
        return GPUFL_ENOMEM;
    s->last_stream = *out + 1;
    return 0;
}

static int caller_of(gpufl__segment *s, uint32_t tid, uint64_t scope, uint32_t nvtx, uint64_t external_id,
                     uint8_t external_kind, uint32_t stack, uint32_t *out)
{
    gpufl__caller_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.tid = tid;
    rec.scope = scope;
    rec.nvtx = nvtx;
    rec.external_id = external_id;
    rec.external_kind = external_kind;
    rec.stack = stack;
    if (s->last_caller && memcmp(gpufl__recset_at(&s->callers, s->last_caller - 1), &rec, sizeof rec) == 0) {
        *out = s->last_caller - 1;
        return 0;
    }
    if (gpufl__recset_put(&s->callers, &rec, out) != 0)
        return GPUFL_ENOMEM;
    s->last_caller = *out + 1;
    return 0;
}

/* A kernel's launch configuration: most often the last one of its name. */
static int config_of(gpufl__segment *s, const gfl_kernel_payload *k, uint32_t *out)
{
    gpufl__config_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.name = k->name;
    rec.mangled = k->mangled_name;
    memcpy(rec.grid, k->grid, sizeof rec.grid);
    memcpy(rec.block, k->block, sizeof rec.block);
    rec.registers = k->registers;
    rec.static_smem = k->static_smem;
    rec.dynamic_smem = k->dynamic_smem;
    rec.local_mem = k->local_mem;
    rec.occupancy_x10000 = k->occupancy_x10000;
    rec.limiter = k->limiter;
    uint32_t *slot = &s->config_cache[(k->name * 2654435761u) >> 24 & (GFL_SEG_CONFIG_CACHE - 1)];
    if (*slot && memcmp(gpufl__recset_at(&s->configs, *slot - 1), &rec, sizeof rec) == 0) {
        *out = *slot - 1;
        return 0;
    }
    if (gpufl__recset_put(&s->configs, &rec, out) != 0)
        return GPUFL_ENOMEM;
    *slot = *out + 1;
    return 0;
}

static int nvtx_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_NVTX];
    const gfl_nvtx_payload *n = &ev->u.nvtx;
    bool mark = ev->h.type == GFL_EV_NVTX_MARK;
    size_t r;
    ROW(R, r);
    SSET(begin_ns, ev->h.ts);
    SSET(end_ns, mark ? ev->h.ts : n->end_ts);
    SSET(id, n->id);
    SSET(parent, 0);
    SSET(name, n->name);
    SSET(tid, ev->h.tid);
    SSET(depth, n->depth);
    SSET(implicit, 0);
    SSET(domain, n->domain);
    SSET(instant, mark);
    SSET(unended, 0); /* decided once the session's last time is known */
    bool seq = !mark && (ev->h.flags & GFL_F_NVTX_SEQ);
    SSET(has_seq, seq);
    SSET(seq, seq ? n->seq : 0);
    return 0;
}

static int kernel_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_KERNELS];
    const gfl_kernel_payload *k = &ev->u.kernel;
    uint32_t config, stream, caller;
    if (config_of(s, k, &config) != 0 || stream_of(s, ev->h.device, k->context, k->stream, &stream) ||
        caller_of(s, ev->h.tid, k->scope_id, k->nvtx, k->external_id, k->external_kind, k->stack_id, &caller))
        return GPUFL_ENOMEM;
    size_t r;
    ROW(R, r);
    KSET(start_ns, ev->h.ts);
    KSET(config_row, config);
    KSET(stream_row, stream);
    KSET(caller_row, caller);
    KSET(correlation, k->correlation);
    KSET(graph_id, k->graph_id);
    return put_times(R, r, KC_dur_ns, KC_api_lead_ns, KC_api_dur_ns, ev->h.ts, k->end_ts, k->api_start_ts,
                     k->api_end_ts);
}

/* Copies and memsets share a table layout. */
static int transfer_row(gpufl__segment *s, const gfl_event *ev)
{
    bool copy = ev->h.type == GFL_EV_MEMCPY;
    gpufl__rows *R = &s->rows[copy ? GFL_T_COPIES : GFL_T_MEMSETS];
    const gfl_memcpy_payload *c = &ev->u.memcpy;
    const gfl_memset_payload *m = &ev->u.memset;
    uint32_t stream, caller;
    if (copy ? stream_of(s, ev->h.device, c->context, c->stream, &stream) ||
                   caller_of(s, ev->h.tid, c->scope_id, c->nvtx, c->external_id, 0, c->stack_id, &caller)
             : stream_of(s, ev->h.device, m->context, m->stream, &stream) ||
                   caller_of(s, ev->h.tid, m->scope_id, m->nvtx, m->external_id, 0, 0, &caller))
        return GPUFL_ENOMEM;
    size_t r;
    ROW(R, r);
    TSET(start_ns, ev->h.ts);
    TSET(stream_row, stream);
    TSET(caller_row, caller);
    if (copy) {
        TSET(bytes, c->bytes);
        TSET(correlation, c->correlation);
        TSET(dst_device, c->dst_device);
        TSET(kind, c->copy_kind);
        TSET(src_kind, c->src_kind);
        TSET(dst_kind, c->dst_kind);
        TSET(value, 0);
        TSET(graph_id, c->graph_id);
        return put_times(R, r, TC_dur_ns, TC_api_lead_ns, TC_api_dur_ns, ev->h.ts, c->end_ts, c->api_start_ts,
                         c->api_end_ts);
    }
    TSET(bytes, m->bytes);
    TSET(correlation, m->correlation);
    TSET(dst_device, 0);
    TSET(kind, 0);
    TSET(src_kind, 0);
    TSET(dst_kind, m->mem_kind);
    TSET(value, m->value);
    TSET(graph_id, m->graph_id);
    return put_times(R, r, TC_dur_ns, TC_api_lead_ns, TC_api_dur_ns, ev->h.ts, m->end_ts, m->api_start_ts,
                     m->api_end_ts);
}

static int sync_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_SYNCS];
    const gfl_sync_payload *y = &ev->u.sync;
    uint32_t stream, caller;
    if (stream_of(s, ev->h.device, y->context, y->stream, &stream) ||
        caller_of(s, ev->h.tid, y->scope_id, y->nvtx, y->external_id, 0, y->stack_id, &caller))
        return GPUFL_ENOMEM;
    size_t r;
    ROW(R, r);
    YSET(start_ns, ev->h.ts);
    YSET(stream_row, stream);
    YSET(caller_row, caller);
    YSET(correlation, y->correlation);
    YSET(kind, y->sync_kind);
    YSET(cuda_event, y->cuda_event);
    return put_times(R, r, YC_dur_ns, 0, 0, ev->h.ts, y->end_ts, 0, 0);
}

static int memory_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_MEMORY];
    const gfl_mem_payload *m = &ev->u.mem;
    uint32_t stream, caller;
    if (stream_of(s, ev->h.device, m->context, m->stream, &stream) ||
        caller_of(s, ev->h.tid, m->scope_id, m->nvtx, m->external_id, 0, m->stack_id, &caller))
        return GPUFL_ENOMEM;
    size_t r;
    ROW(R, r);
    MSET(ts_ns, ev->h.ts);
    MSET(address, m->address);
    MSET(bytes, m->bytes);
    MSET(stream_row, stream);
    MSET(caller_row, caller);
    MSET(correlation, m->correlation);
    MSET(is_free, ev->h.type == GFL_EV_MEM_FREE);
    MSET(kind, m->mem_kind);
    MSET(failed, ev->h.type == GFL_EV_MEM_ALLOC && (ev->h.flags & GFL_F_MEM_FAILED));
    MSET(framework, (ev->h.flags & GFL_F_MEM_FRAMEWORK) != 0);
    return 0;
}

static int pm_sample_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_PM_SAMPLES];
    const gfl_pm_sample_payload *p = &ev->u.pm_sample;
    size_t r;
    ROW(R, r);
    PMSET(ts_ns, ev->h.ts);
    PMSET(end_ns, p->end_ts);
    PMSET(device, ev->h.device);
    PMSET(metric, p->metric);
    PMSET(value, (double)p->value_x10000 / 10000.0);
    return 0;
}

static int range_metric_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_RANGE_METRICS];
    const gfl_range_metric_payload *p = &ev->u.range_metric;
    size_t r;
    ROW(R, r);
    RMSET(ts_ns, ev->h.ts);
    RMSET(end_ns, p->end_ts);
    RMSET(device, ev->h.device);
    RMSET(range, p->range);
    RMSET(scope_id, p->scope_id);
    RMSET(name, p->name);
    RMSET(metric, p->metric);
    RMSET(value, (double)p->value_x10000 / 10000.0);
    return 0;
}

static int nccl_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_NCCL_COLLECTIVES];
    const gfl_nccl_coll_payload *p = &ev->u.nccl;
    size_t r;
    ROW(R, r);
    NCSET(start_ns, ev->h.ts);
    NCSET(end_ns, p->end_ts);
    NCSET(comm_hash, p->comm_hash);
    NCSET(seq, p->seq);
    NCSET(count, p->count);
    NCSET(bytes, (ev->h.flags & GFL_F_NCCL_BYTES) ? p->bytes : 0);
    NCSET(func, p->func);
    NCSET(datatype, p->datatype);
    NCSET(algo, p->algo);
    NCSET(proto, p->proto);
    NCSET(rank, p->rank);
    NCSET(root, p->root);
    NCSET(nranks, p->nranks);
    NCSET(tid, ev->h.tid);
    NCSET(device, ev->h.device);
    NCSET(channels, p->channels);
    NCSET(abi, p->abi);
    NCSET(bytes_known, (ev->h.flags & GFL_F_NCCL_BYTES) != 0);
    NCSET(p2p, (ev->h.flags & GFL_F_NCCL_P2P) != 0);
    return 0;
}

static int clock_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_CLOCKS];
    const gfl_clock_payload *p = &ev->u.clock;
    size_t r;
    ROW(R, r);
    CKSET(ts_ns, ev->h.ts);
    CKSET(mono_ns, p->mono_ns);
    CKSET(wall_ns, p->wall_ns);
    CKSET(uncertainty_ns, p->uncertainty_ns);
    CKSET(point, p->point);
    CKSET(ntp, p->ntp);
    CKSET(ntp_offset_ns, p->ntp_offset_ns);
    CKSET(ntp_maxerror_ns, p->ntp_maxerror_ns);
    CKSET(ntp_esterror_ns, p->ntp_esterror_ns);
    CKSET(ntp_status, p->ntp_status);
    return 0;
}

static int allocator_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_ALLOCATOR];
    const gfl_allocator_payload *p = &ev->u.allocator;
    uint32_t caller;
    if (caller_of(s, ev->h.tid, p->scope_id, 0, 0, 0, 0, &caller))
        return GPUFL_ENOMEM;
    size_t r;
    ROW(R, r);
    ASET(ts_ns, ev->h.ts);
    ASET(device, ev->h.device);
    ASET(framework, p->framework);
    ASET(reason, p->reason);
    ASET(allocated, p->allocated);
    ASET(reserved, p->reserved);
    ASET(active, p->active);
    ASET(inactive_split, p->inactive_split);
    ASET(largest_free, p->largest_free);
    ASET(peak_allocated, p->peak_allocated);
    ASET(peak_reserved, p->peak_reserved);
    ASET(requested, p->requested);
    ASET(device_free, p->device_free);
    ASET(alloc_retries, p->alloc_retries);
    ASET(ooms, p->ooms);
    ASET(caller_row, caller);
    return 0;
}

/* One row per stall pair: a reader sums them by what it groups on. */
static int pc_sample_rows(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_PC_SAMPLES];
    const gfl_pc_sample_payload *p = &ev->u.pc;
    unsigned n = p->count < GFL_PC_STALLS_PER_EVENT ? p->count : GFL_PC_STALLS_PER_EVENT;
    for (unsigned i = 0; i < n; i++) {
        if (!p->stalls[i].samples)
            continue;
        size_t r;
        ROW(R, r);
        PSET(ts_ns, ev->h.ts);
        PSET(since_ns, p->since_ts);
        PSET(device, ev->h.device);
        PSET(function, p->function);
        PSET(cubin_crc, p->cubin_crc);
        PSET(pc_offset, p->pc_offset);
        PSET(file, p->source_file);
        PSET(line, p->line);
        PSET(reason, p->stalls[i].reason);
        PSET(samples, p->stalls[i].samples);
    }
    return 0;
}

static int sass_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_SASS_METRICS];
    const gfl_sass_metric_payload *p = &ev->u.sass;
    uint32_t caller;
    if (caller_of(s, ev->h.tid, p->scope_id, 0, 0, 0, 0, &caller))
        return GPUFL_ENOMEM;
    size_t r;
    ROW(R, r);
    QSET(ts_ns, ev->h.ts);
    QSET(device, ev->h.device);
    QSET(correlation, p->correlation);
    QSET(function, p->function);
    QSET(function_index, p->function_index);
    QSET(cubin_crc, p->cubin_crc);
    QSET(pc_offset, p->pc_offset);
    QSET(valid, p->valid);
    QSET(inst_executed, p->inst_executed);
    QSET(thread_inst_executed, p->thread_inst_executed);
    QSET(sectors, p->sectors);
    QSET(sectors_ideal, p->sectors_ideal);
    QSET(branch_targets, p->branch_targets);
    QSET(divergent_targets, p->divergent_targets);
    QSET(file, p->file);
    QSET(line, p->line);
    QSET(caller_row, caller);
    return 0;
}

static int device_sample_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_DEVICE_SAMPLES];
    const gfl_device_metrics_payload *m = &ev->u.dev;
    size_t r;
    ROW(R, r);
    DSET(ts_ns, ev->h.ts);
    DSET(device, ev->h.device);
    DSET(valid, m->valid);
    DSET(gpu_util_pct, m->gpu_util_pct);
    DSET(mem_util_pct, m->mem_util_pct);
    DSET(mem_used_bytes, m->mem_used_bytes);
    DSET(mem_total_bytes, m->mem_total_bytes);
    DSET(proc_mem_bytes, m->proc_mem_bytes);
    DSET(energy_mj, m->energy_mj);
    DSET(temp_c, m->temp_c);
    DSET(power_mw, m->power_mw);
    DSET(sm_clock_mhz, m->sm_clock_mhz);
    DSET(mem_clock_mhz, m->mem_clock_mhz);
    DSET(throttle_reasons, m->throttle_reasons);
    DSET(pcie_rx_kbps, m->pcie_rx_kbps);
    DSET(pcie_tx_kbps, m->pcie_tx_kbps);
    DSET(mem_free_bytes, m->mem_free_bytes);
    DSET(ecc_corrected, m->ecc_corrected);
    DSET(ecc_uncorrected, m->ecc_uncorrected);
    DSET(power_limit_mw, m->power_limit_mw);
    DSET(gfx_clock_mhz, m->gfx_clock_mhz);
    DSET(mem_temp_c, m->mem_temp_c);
    DSET(fan_pct, m->fan_pct);
    return 0;
}

static int host_sample_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_HOST_SAMPLES];
    const gfl_host_metrics_payload *m = &ev->u.host;
    size_t r;
    ROW(R, r);
    HSET(ts_ns, ev->h.ts);
    HSET(valid, m->valid);
    HSET(proc_cpu_pct_x100, m->proc_cpu_pct_x100);
    HSET(sys_cpu_pct_x100, m->sys_cpu_pct_x100);
    HSET(ram_used_bytes, m->ram_used_bytes);
    HSET(ram_total_bytes, m->ram_total_bytes);
    HSET(proc_rss_bytes, m->proc_rss_bytes);
    HSET(cpu_count, m->cpu_count);
    return 0;
}

static int trigger_row(gpufl__segment *s, const gfl_event *ev)
{
    gpufl__rows *R = &s->rows[GFL_T_TRIGGERS];
    const gfl_trigger_payload *p = &ev->u.trigger;
    size_t r;
    ROW(R, r);
    RSET(ts_ns, ev->h.ts);
    RSET(tid, ev->h.tid);
    RSET(kind, p->kind);
    RSET(detail, p->detail);
    RSET(dump, p->dump);
    RSET(outcome, p->outcome);
    return 0;
}

/* Kept whole, for the merge to take in session order. */
static int keep_ordered(gpufl__segment *s, const gfl_event *ev)
{
    if (s->nordered == s->ordered_cap) {
        size_t cap = s->ordered_cap ? s->ordered_cap * 2 : 64;
        gfl_event *v = realloc(s->ordered, cap * sizeof *v);
        if (!v)
            return GPUFL_ENOMEM;
        s->ordered = v;
        s->ordered_cap = cap;
    }
    s->ordered[s->nordered++] = *ev;
    return 0;
}

/* The latest time ev holds: its end for an interval, else its time. Every
 * type counts, those with no table of their own too (windows, logs), since
 * the last thing a dying program recorded may be any of them. */
static inline uint64_t latest_time(const gfl_event *ev)
{
    uint64_t end = 0;
    switch (ev->h.type) {
    case GFL_EV_KERNEL: end = ev->u.kernel.end_ts; break;
    case GFL_EV_MEMCPY: end = ev->u.memcpy.end_ts; break;
    case GFL_EV_MEMSET: end = ev->u.memset.end_ts; break;
    case GFL_EV_SYNC: end = ev->u.sync.end_ts; break;
    case GFL_EV_NVTX_RANGE: end = ev->u.nvtx.end_ts; break;
    case GFL_EV_GRAPH_LAUNCH: end = ev->u.graph.end_ts; break;
    case GFL_EV_TRACE_WINDOW: end = ev->u.trace_window.end_ts; break;
    case GFL_EV_PM_SAMPLE: end = ev->u.pm_sample.end_ts; break;
    case GFL_EV_RANGE_METRIC: end = ev->u.range_metric.end_ts; break;
    default: break;
    }
    return end > ev->h.ts ? end : ev->h.ts;
}

int gpufl__segment_add(gpufl__segment *s, const gfl_event *ev)
{
    s->counts[ev->h.type]++;
    uint64_t t = latest_time(ev);
    if (t > s->last_ns)
        s->last_ns = t;
    switch (ev->h.type) {
    case GFL_EV_KERNEL: return kernel_row(s, ev);
    case GFL_EV_NVTX_RANGE:
    case GFL_EV_NVTX_MARK: return nvtx_row(s, ev);
    case GFL_EV_MEMCPY:
    case GFL_EV_MEMSET: return transfer_row(s, ev);
    case GFL_EV_SYNC: return sync_row(s, ev);
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE: return memory_row(s, ev);
    case GFL_EV_DEVICE_METRICS: return device_sample_row(s, ev);
    case GFL_EV_HOST_METRICS: return host_sample_row(s, ev);
    case GFL_EV_TRIGGER: return trigger_row(s, ev);
    case GFL_EV_ALLOCATOR: return allocator_row(s, ev);
    case GFL_EV_PC_SAMPLE: return pc_sample_rows(s, ev);
    case GFL_EV_PM_SAMPLE: return pm_sample_row(s, ev);
    case GFL_EV_RANGE_METRIC: return range_metric_row(s, ev);
    case GFL_EV_SASS_METRIC: return sass_row(s, ev);
    case GFL_EV_CLOCK: return clock_row(s, ev);
    case GFL_EV_NCCL_COLL: return nccl_row(s, ev);
    case GFL_EV_SCOPE_BEGIN:
    case GFL_EV_SCOPE_END:
    case GFL_EV_DEVICE_INFO:
    case GFL_EV_CRASH:
    case GFL_EV_CRASH_STACK:
    case GFL_EV_CRASH_SCOPE:
    case GFL_EV_ENGINE:
    case GFL_EV_TRACE_WINDOW: return keep_ordered(s, ev);
    case GFL_EV_DROPPED:
        if (ev->u.dropped.reason < 16)
            s->dropped[gpufl__event_route(ev)][ev->u.dropped.reason] += ev->u.dropped.count;
        return 0;
    default: return 0; /* counted only: windows, logs, graph launches, stacks */
    }
}

/* ---- finishing ------------------------------------------------------------- */

static int exact_order(const void *a, const void *b)
{
    uint64_t x = ((const gpufl_trace_exact *)a)->row, y = ((const gpufl_trace_exact *)b)->row;
    return x < y ? -1 : x > y;
}

int gpufl__segment_finish(gpufl__segment *s)
{
    for (unsigned t = 0; t < GFL_T_COUNT; t++) {
        gpufl__rows *R = &s->rows[t];
        uint32_t *perm = NULL;
        if (gpufl__table_finish(&R->t, R->exact.n ? &perm : NULL) != 0)
            return GPUFL_ENOMEM;
        if (!perm)
            continue;
        /* the exact times follow their rows */
        uint32_t *where = malloc(R->t.n * sizeof *where);
        if (!where) {
            free(perm);
            return GPUFL_ENOMEM;
        }
        for (size_t i = 0; i < R->t.n; i++)
            where[perm[i]] = (uint32_t)i;
        for (size_t i = 0; i < R->exact.n; i++)
            R->exact.v[i].row = where[R->exact.v[i].row];
        qsort(R->exact.v, R->exact.n, sizeof *R->exact.v, exact_order);
        free(where);
        free(perm);
    }
    return 0;
}

void gpufl__segment_init(gpufl__segment *s, const gpufl__strtab *strings)
{
    memset(s, 0, sizeof *s);
    for (unsigned t = 0; t < GFL_T_COUNT; t++)
        gpufl__rows_init(&s->rows[t], t);
    gpufl__recset_init(&s->configs, sizeof(gpufl__config_rec));
    gpufl__recset_init(&s->streams, sizeof(gpufl__stream_rec));
    gpufl__recset_init(&s->callers, sizeof(gpufl__caller_rec));
    s->strings = strings;
}

void gpufl__segment_free(gpufl__segment *s)
{
    for (unsigned t = 0; t < GFL_T_COUNT; t++)
        gpufl__rows_free(&s->rows[t]);
    gpufl__recset_free(&s->configs);
    gpufl__recset_free(&s->streams);
    gpufl__recset_free(&s->callers);
    free(s->ordered);
    s->ordered = NULL;
    s->nordered = s->ordered_cap = 0;
}
