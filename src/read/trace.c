/*
 * The public reader API (include/gpufl/trace.h): opening (trace_load.c
 * picks the loader), binding the public structs to the merged columns, the
 * accessors of exact times, and the memory a trace holds. Everything after
 * gpufl_trace_open() only reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/names.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "read/trace_internal.h"

/* ---- life cycle -------------------------------------------------------------- */

gpufl_trace *gpufl__trace_new(void)
{
    gpufl_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (gpufl__strtab_init(&t->strings) != 0) {
        free(t);
        return NULL;
    }
    for (unsigned tab = 0; tab < GFL_T_COUNT; tab++)
        gpufl__rows_init(&t->rows[tab], tab);
    gpufl__recset_init(&t->configs, sizeof(gpufl__config_rec));
    gpufl__recset_init(&t->streams, sizeof(gpufl__stream_rec));
    gpufl__recset_init(&t->callers, sizeof(gpufl__caller_rec));
    /* a trace built other than by opening files (tests) read nothing named */
    t->read_pub = (gpufl_trace_read){sizeof t->read_pub, GPUFL_TRACE_NDJSON, t->read_files, t->read_why, 1};
    return t;
}

void gpufl__trace_free(gpufl_trace *t)
{
    if (!t)
        return;
    for (unsigned tab = 0; tab < GFL_T_COUNT; tab++)
        gpufl__rows_free(&t->rows[tab]);
    gpufl__recset_free(&t->configs);
    gpufl__recset_free(&t->streams);
    gpufl__recset_free(&t->callers);
    free(t->dedup_cols);
    if (t->zero)
        munmap(t->zero, t->zero_bytes);
    gpufl__strtab_free(&t->strings);
    free(t->devices);
    free(t->crash_frames);
    free(t->crash_scopes);
    free(t);
}

/* ---- binding ------------------------------------------------------------------- */

#define BIND(prefix, f) pub->f = gpufl__col_values(&R->cols[prefix##_##f], zero);
#define SC_BIND(f) BIND(SC, f)
#define KC_BIND(f) BIND(KC, f)
#define TC_BIND(f) BIND(TC, f)
#define YC_BIND(f) BIND(YC, f)
#define MC_BIND(f) BIND(MC, f)
#define DC_BIND(f) BIND(DC, f)
#define HC_BIND(f) BIND(HC, f)
#define RC_BIND(f) BIND(RC, f)
#define WC_BIND(f) BIND(WC, f)
#define AC_BIND(f) BIND(AC, f)
#define PC_BIND(f) BIND(PC, f)
#define PM_BIND(f) BIND(PM, f)
#define RM_BIND(f) BIND(RM, f)
#define QC_BIND(f) BIND(QC, f)
#define CK_BIND(f) BIND(CK, f)
#define NC_BIND(f) BIND(NC, f)

static void bind_scopes(gpufl_trace_scopes *pub, const gpufl__rows *R, const void *zero)
{
    pub->n = R->t.n;
    SCOPE_COLS(SC_BIND)
}

static void bind_transfers(gpufl_trace *t, gpufl_trace_transfers *pub, const gpufl__rows *R, const void *zero)
{
    pub->n = R->t.n;
    TRANSFER_COLS(TC_BIND)
    pub->nexact = R->exact.n;
    pub->exact = R->exact.v;
    pub->streams = &t->streams_pub;
    pub->callers = &t->callers_pub;
}

static void bind_rows(gpufl_trace *t)
{
    const void *zero = t->zero;
    bind_scopes(&t->scopes_pub, &t->rows[GFL_T_SCOPES], zero);
    bind_scopes(&t->nvtx_pub, &t->rows[GFL_T_NVTX], zero);
    {
        gpufl_trace_kernels *pub = &t->kernels_pub;
        const gpufl__rows *R = &t->rows[GFL_T_KERNELS];
        pub->n = R->t.n;
        KERNEL_COLS(KC_BIND)
        pub->nexact = R->exact.n;
        pub->exact = R->exact.v;
        pub->configs = &t->configs_pub;
        pub->streams = &t->streams_pub;
        pub->callers = &t->callers_pub;
    }
    bind_transfers(t, &t->copies_pub, &t->rows[GFL_T_COPIES], zero);
    bind_transfers(t, &t->memsets_pub, &t->rows[GFL_T_MEMSETS], zero);
    {
        gpufl_trace_syncs *pub = &t->syncs_pub;
        const gpufl__rows *R = &t->rows[GFL_T_SYNCS];
        pub->n = R->t.n;
        SYNC_COLS(YC_BIND)
        pub->nexact = R->exact.n;
        pub->exact = R->exact.v;
        pub->streams = &t->streams_pub;
        pub->callers = &t->callers_pub;
    }
    {
        gpufl_trace_memory *pub = &t->memory_pub;
        const gpufl__rows *R = &t->rows[GFL_T_MEMORY];
        pub->n = R->t.n;
        MEMORY_COLS(MC_BIND)
        pub->streams = &t->streams_pub;
        pub->callers = &t->callers_pub;
    }
    {
        gpufl_trace_device_samples *pub = &t->device_samples_pub;
        const gpufl__rows *R = &t->rows[GFL_T_DEVICE_SAMPLES];
        pub->n = R->t.n;
        DEVICE_SAMPLE_COLS(DC_BIND)
    }
    {
        gpufl_trace_host_samples *pub = &t->host_samples_pub;
        const gpufl__rows *R = &t->rows[GFL_T_HOST_SAMPLES];
        pub->n = R->t.n;
        HOST_SAMPLE_COLS(HC_BIND)
    }
    {
        gpufl_trace_triggers *pub = &t->triggers_pub;
        const gpufl__rows *R = &t->rows[GFL_T_TRIGGERS];
        pub->n = R->t.n;
        TRIGGER_COLS(RC_BIND)
    }
    {
        gpufl_trace_windows *pub = &t->windows_pub;
        const gpufl__rows *R = &t->rows[GFL_T_TRACE_WINDOWS];
        pub->n = R->t.n;
        WINDOW_COLS(WC_BIND)
    }
    {
        gpufl_trace_allocator *pub = &t->allocator_pub;
        const gpufl__rows *R = &t->rows[GFL_T_ALLOCATOR];
        pub->n = R->t.n;
        ALLOCATOR_COLS(AC_BIND)
        pub->callers = &t->callers_pub;
    }
    {
        gpufl_trace_pc_samples *pub = &t->pc_samples_pub;
        const gpufl__rows *R = &t->rows[GFL_T_PC_SAMPLES];
        pub->n = R->t.n;
        PC_SAMPLE_COLS(PC_BIND)
    }
    {
        gpufl_trace_pm_samples *pub = &t->pm_samples_pub;
        const gpufl__rows *R = &t->rows[GFL_T_PM_SAMPLES];
        pub->n = R->t.n;
        PM_SAMPLE_COLS(PM_BIND)
    }
    {
        gpufl_trace_range_metrics *pub = &t->range_metrics_pub;
        const gpufl__rows *R = &t->rows[GFL_T_RANGE_METRICS];
        pub->n = R->t.n;
        RANGE_METRIC_COLS(RM_BIND)
    }
    {
        gpufl_trace_sass_metrics *pub = &t->sass_pub;
        const gpufl__rows *R = &t->rows[GFL_T_SASS_METRICS];
        pub->n = R->t.n;
        SASS_COLS(QC_BIND)
        pub->callers = &t->callers_pub;
    }
    {
        gpufl_trace_clocks *pub = &t->clocks_pub;
        const gpufl__rows *R = &t->rows[GFL_T_CLOCKS];
        pub->n = R->t.n;
        CLOCK_COLS(CK_BIND)
    }
    {
        gpufl_trace_nccl_collectives *pub = &t->nccl_pub;
        const gpufl__rows *R = &t->rows[GFL_T_NCCL_COLLECTIVES];
        pub->n = R->t.n;
        NCCL_COLL_COLS(NC_BIND)
    }
}

/* Carves the next n values of `size` bytes (aligned to 8) out of *p. */
static void *carve(uint8_t **p, size_t n, size_t size)
{
    void *at = *p;
    *p += (n * size + 7) / 8 * 8;
    return at;
}

static size_t carved(size_t n, size_t size) { return (n * size + 7) / 8 * 8; }

/* The tables of distinct values as columns, in one block; the record
 * sets they were built in are freed. 0 or GPUFL_ENOMEM. */
static int bind_distinct(gpufl_trace *t)
{
    size_t nc = t->configs.n, ns = t->streams.n, nl = t->callers.n;
    size_t bytes = carved(nc, 4) * 2 + carved(nc, 12) + carved(nc, 6) + carved(nc, 2) * 2 + carved(nc, 4) * 3 +
                   carved(nc, 1) + carved(ns, 2) + carved(ns, 4) * 2 + carved(nl, 4) * 3 + carved(nl, 8) * 2 +
                   carved(nl, 1);
    uint8_t *p = malloc(bytes ? bytes : 8);
    if (!p)
        return GPUFL_ENOMEM;
    t->dedup_cols = p;
    t->dedup_bytes = bytes;

    gpufl_trace_launch_configs *g = &t->configs_pub;
    uint32_t *name = carve(&p, nc, 4), *mangled = carve(&p, nc, 4);
    uint32_t(*grid)[3] = carve(&p, nc, 12);
    uint16_t(*block)[3] = carve(&p, nc, 6);
    uint16_t *registers = carve(&p, nc, 2), *occupancy = carve(&p, nc, 2);
    uint32_t *static_smem = carve(&p, nc, 4), *dynamic_smem = carve(&p, nc, 4), *local_mem = carve(&p, nc, 4);
    uint8_t *limiter = carve(&p, nc, 1);
    for (size_t i = 0; i < nc; i++) {
        const gpufl__config_rec *r = gpufl__recset_at(&t->configs, (uint32_t)i);
        name[i] = r->name;
        mangled[i] = r->mangled;
        memcpy(grid[i], r->grid, sizeof grid[i]);
        memcpy(block[i], r->block, sizeof block[i]);
        registers[i] = r->registers;
        occupancy[i] = r->occupancy_x10000;
        static_smem[i] = r->static_smem;
        dynamic_smem[i] = r->dynamic_smem;
        local_mem[i] = r->local_mem;
        limiter[i] = r->limiter;
    }
    *g = (gpufl_trace_launch_configs){nc,
                                      name,
                                      mangled,
                                      (const uint32_t(*)[3])grid,
                                      (const uint16_t(*)[3])block,
                                      registers,
                                      static_smem,
                                      dynamic_smem,
                                      local_mem,
                                      occupancy,
                                      limiter};

    uint16_t *device = carve(&p, ns, 2);
    uint32_t *context = carve(&p, ns, 4), *stream = carve(&p, ns, 4);
    for (size_t i = 0; i < ns; i++) {
        const gpufl__stream_rec *r = gpufl__recset_at(&t->streams, (uint32_t)i);
        device[i] = r->device;
        context[i] = r->context;
        stream[i] = r->stream;
    }
    t->streams_pub = (gpufl_trace_streams){ns, device, context, stream};

    uint32_t *tid = carve(&p, nl, 4), *nvtx = carve(&p, nl, 4), *stack = carve(&p, nl, 4);
    uint64_t *scope = carve(&p, nl, 8), *external_id = carve(&p, nl, 8);
    uint8_t *external_kind = carve(&p, nl, 1);
    for (size_t i = 0; i < nl; i++) {
        const gpufl__caller_rec *r = gpufl__recset_at(&t->callers, (uint32_t)i);
        tid[i] = r->tid;
        nvtx[i] = r->nvtx;
        stack[i] = r->stack;
        scope[i] = r->scope;
        external_id[i] = r->external_id;
        external_kind[i] = r->external_kind;
    }
    t->callers_pub = (gpufl_trace_callers){nl, tid, scope, nvtx, external_id, external_kind, stack};

    gpufl__recset_free(&t->configs);
    gpufl__recset_free(&t->streams);
    gpufl__recset_free(&t->callers);
    return 0;
}

int gpufl__trace_bind(gpufl_trace *t)
{
    if (gpufl__trace_end_open(t) != 0)
        return GPUFL_ENOMEM;
    size_t longest = 0;
    for (unsigned tab = 0; tab < GFL_T_COUNT; tab++)
        if (t->rows[tab].t.n > longest)
            longest = t->rows[tab].t.n;
    /* every column that is 0 in every row points here: 8 bytes per row is
     * the widest column of a row table */
    size_t page = 4096;
    t->zero_bytes = (longest * 8 + page) / page * page;
    t->zero = mmap(NULL, t->zero_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t->zero == MAP_FAILED) {
        t->zero = NULL;
        return GPUFL_ENOMEM;
    }
    if (bind_distinct(t) != 0)
        return GPUFL_ENOMEM;
    bind_rows(t);
    t->info.devices = t->devices;
    t->info.source = t->source;
    return 0;
}

/* ---- the API ---------------------------------------------------------------------- */

static void set_err(char *err, size_t err_len, const char *msg)
{
    if (err && err_len)
        snprintf(err, err_len, "%s", msg);
}

GPUFL_API int gpufl_trace_open(const char *path, gpufl_trace **out, char *err, size_t err_len)
{
    char msg[1024] = "";
    if (!out) {
        set_err(err, err_len, "gpufl_trace_open: out is NULL");
        return GPUFL_EINVAL;
    }
    int rc = gpufl__trace_open(path, 0, out, msg, sizeof msg);
    if (rc != 0)
        set_err(err, err_len, msg);
    return rc;
}

GPUFL_API void gpufl_trace_close(gpufl_trace *t) { gpufl__trace_free(t); }

GPUFL_API const gpufl_trace_info *gpufl_trace_get_info(const gpufl_trace *t) { return &t->info; }

GPUFL_API const gpufl_trace_read *gpufl_trace_get_read(const gpufl_trace *t) { return &t->read_pub; }

GPUFL_API const gpufl_trace_job *gpufl_trace_get_job(const gpufl_trace *t) { return &t->job_pub; }

GPUFL_API const char *gpufl_trace_string(const gpufl_trace *t, uint32_t id)
{
    return gpufl__strtab_str(&t->strings, id, NULL);
}

GPUFL_API const gpufl_trace_scopes *gpufl_trace_get_scopes(const gpufl_trace *t) { return &t->scopes_pub; }
GPUFL_API const gpufl_trace_scopes *gpufl_trace_get_nvtx(const gpufl_trace *t) { return &t->nvtx_pub; }

GPUFL_API const gpufl_trace_launch_configs *gpufl_trace_get_launch_configs(const gpufl_trace *t)
{
    return &t->configs_pub;
}

GPUFL_API const gpufl_trace_streams *gpufl_trace_get_streams(const gpufl_trace *t) { return &t->streams_pub; }

GPUFL_API const gpufl_trace_callers *gpufl_trace_get_callers(const gpufl_trace *t) { return &t->callers_pub; }

GPUFL_API const gpufl_trace_kernels *gpufl_trace_get_kernels(const gpufl_trace *t) { return &t->kernels_pub; }

GPUFL_API const gpufl_trace_transfers *gpufl_trace_get_copies(const gpufl_trace *t) { return &t->copies_pub; }

GPUFL_API const gpufl_trace_transfers *gpufl_trace_get_memsets(const gpufl_trace *t) { return &t->memsets_pub; }

GPUFL_API const gpufl_trace_syncs *gpufl_trace_get_syncs(const gpufl_trace *t) { return &t->syncs_pub; }

GPUFL_API const gpufl_trace_memory *gpufl_trace_get_memory(const gpufl_trace *t) { return &t->memory_pub; }

GPUFL_API const gpufl_trace_device_samples *gpufl_trace_get_device_samples(const gpufl_trace *t)
{
    return &t->device_samples_pub;
}

GPUFL_API const gpufl_trace_host_samples *gpufl_trace_get_host_samples(const gpufl_trace *t)
{
    return &t->host_samples_pub;
}

GPUFL_API const gpufl_trace_crash *gpufl_trace_get_crash(const gpufl_trace *t)
{
    return t->has_crash ? &t->crash : NULL;
}

GPUFL_API const gpufl_trace_triggers *gpufl_trace_get_triggers(const gpufl_trace *t) { return &t->triggers_pub; }

GPUFL_API const gpufl_trace_windows *gpufl_trace_get_trace_windows(const gpufl_trace *t) { return &t->windows_pub; }

GPUFL_API const gpufl_trace_allocator *gpufl_trace_get_allocator(const gpufl_trace *t) { return &t->allocator_pub; }

GPUFL_API const gpufl_trace_pc_samples *gpufl_trace_get_pc_samples(const gpufl_trace *t) { return &t->pc_samples_pub; }
GPUFL_API const gpufl_trace_pm_samples *gpufl_trace_get_pm_samples(const gpufl_trace *t) { return &t->pm_samples_pub; }
GPUFL_API const gpufl_trace_sass_metrics *gpufl_trace_get_sass_metrics(const gpufl_trace *t) { return &t->sass_pub; }

GPUFL_API const gpufl_trace_range_metrics *gpufl_trace_get_range_metrics(const gpufl_trace *t)
{
    return &t->range_metrics_pub;
}

GPUFL_API const gpufl_trace_clocks *gpufl_trace_get_clocks(const gpufl_trace *t) { return &t->clocks_pub; }

GPUFL_API const gpufl_trace_nccl_collectives *gpufl_trace_get_nccl_collectives(const gpufl_trace *t)
{
    return &t->nccl_pub;
}

GPUFL_API size_t gpufl_trace_event_count(const gpufl_trace *t, unsigned event_type)
{
    return event_type < 256 ? (size_t)t->counts[event_type] : 0;
}

GPUFL_API const char *gpufl_trace_enum_name(unsigned family, unsigned value)
{
    /* trace.h's GPUFL_TRACE_ENUM_* are core/names.h's families */
    _Static_assert((int)GPUFL_TRACE_ENUM_COPY_KIND == (int)GPUFL__NAMES_COPY_KIND &&
                       (int)GPUFL_TRACE_ENUM_MEM_KIND == (int)GPUFL__NAMES_MEM_KIND &&
                       (int)GPUFL_TRACE_ENUM_SYNC_KIND == (int)GPUFL__NAMES_SYNC_KIND &&
                       (int)GPUFL_TRACE_ENUM_LIMITER == (int)GPUFL__NAMES_LIMITER &&
                       (int)GPUFL_TRACE_ENUM_DROP_REASON == (int)GPUFL__NAMES_DROP_REASON &&
                       (int)GPUFL_TRACE_ENUM_EVENT_TYPE == (int)GPUFL__NAMES_EVENT_TYPE &&
                       (int)GPUFL_TRACE_ENUM_TRIGGER_OUTCOME == (int)GPUFL__NAMES_TRIGGER_OUTCOME,
                   "trace.h's enum families are core/names.h's");
    return gpufl__names_key(family, value);
}

/* ---- exact times ------------------------------------------------------------------- */

/* The exact times of row i, or NULL (never for a row whose column says
 * GPUFL_TRACE_EXACT: the loader lists every such row). */
static const gpufl_trace_exact *find_exact(const gpufl_trace_exact *v, size_t n, size_t i)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].row < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].row == i ? &v[lo] : NULL;
}

static uint64_t end_of(uint64_t start, uint32_t dur, const gpufl_trace_exact *v, size_t n, size_t i)
{
    if (dur != GPUFL_TRACE_EXACT)
        return start + dur;
    const gpufl_trace_exact *e = find_exact(v, n, i);
    return e ? e->end_ns : start;
}

static uint64_t api_start_of(uint64_t start, uint32_t lead, const gpufl_trace_exact *v, size_t n, size_t i)
{
    if (lead == 0)
        return 0;
    if (lead != GPUFL_TRACE_EXACT)
        return start - lead;
    const gpufl_trace_exact *e = find_exact(v, n, i);
    return e ? e->api_start_ns : 0;
}

static uint64_t api_end_of(uint64_t start, uint32_t lead, uint32_t dur, const gpufl_trace_exact *v, size_t n, size_t i)
{
    if (lead == 0)
        return 0;
    if (lead != GPUFL_TRACE_EXACT && dur != GPUFL_TRACE_EXACT)
        return start - lead + dur;
    const gpufl_trace_exact *e = find_exact(v, n, i);
    return e ? e->api_end_ns : 0;
}

GPUFL_API uint64_t gpufl_trace_kernel_end(const gpufl_trace_kernels *k, size_t i)
{
    return end_of(k->start_ns[i], k->dur_ns[i], k->exact, k->nexact, i);
}

GPUFL_API uint64_t gpufl_trace_kernel_api_start(const gpufl_trace_kernels *k, size_t i)
{
    return api_start_of(k->start_ns[i], k->api_lead_ns[i], k->exact, k->nexact, i);
}

GPUFL_API uint64_t gpufl_trace_kernel_api_end(const gpufl_trace_kernels *k, size_t i)
{
    return api_end_of(k->start_ns[i], k->api_lead_ns[i], k->api_dur_ns[i], k->exact, k->nexact, i);
}

GPUFL_API uint64_t gpufl_trace_transfer_end(const gpufl_trace_transfers *x, size_t i)
{
    return end_of(x->start_ns[i], x->dur_ns[i], x->exact, x->nexact, i);
}

GPUFL_API uint64_t gpufl_trace_transfer_api_start(const gpufl_trace_transfers *x, size_t i)
{
    return api_start_of(x->start_ns[i], x->api_lead_ns[i], x->exact, x->nexact, i);
}

GPUFL_API uint64_t gpufl_trace_transfer_api_end(const gpufl_trace_transfers *x, size_t i)
{
    return api_end_of(x->start_ns[i], x->api_lead_ns[i], x->api_dur_ns[i], x->exact, x->nexact, i);
}

GPUFL_API uint64_t gpufl_trace_sync_end(const gpufl_trace_syncs *y, size_t i)
{
    return end_of(y->start_ns[i], y->dur_ns[i], y->exact, y->nexact, i);
}

/* ---- memory ------------------------------------------------------------------------- */

GPUFL_API size_t gpufl_trace_table_memory_bytes(const gpufl_trace *t, unsigned table)
{
    /* the row tables are numbered as trace.h's up to the host samples; the
     * row tables trace.h appended later follow them (trace_internal.h) */
    if (table <= GPUFL_TRACE_TABLE_HOST_SAMPLES)
        return gpufl__rows_memory(&t->rows[table]);
    if (table == GPUFL_TRACE_TABLE_TRIGGERS)
        return gpufl__rows_memory(&t->rows[GFL_T_TRIGGERS]);
    if (table == GPUFL_TRACE_TABLE_TRACE_WINDOWS)
        return gpufl__rows_memory(&t->rows[GFL_T_TRACE_WINDOWS]);
    if (table == GPUFL_TRACE_TABLE_ALLOCATOR)
        return gpufl__rows_memory(&t->rows[GFL_T_ALLOCATOR]);
    if (table == GPUFL_TRACE_TABLE_PC_SAMPLES)
        return gpufl__rows_memory(&t->rows[GFL_T_PC_SAMPLES]);
    if (table == GPUFL_TRACE_TABLE_PM_SAMPLES)
        return gpufl__rows_memory(&t->rows[GFL_T_PM_SAMPLES]);
    if (table == GPUFL_TRACE_TABLE_RANGE_METRICS)
        return gpufl__rows_memory(&t->rows[GFL_T_RANGE_METRICS]);
    if (table == GPUFL_TRACE_TABLE_SASS_METRICS)
        return gpufl__rows_memory(&t->rows[GFL_T_SASS_METRICS]);
    if (table == GPUFL_TRACE_TABLE_CLOCKS)
        return gpufl__rows_memory(&t->rows[GFL_T_CLOCKS]);
    if (table == GPUFL_TRACE_TABLE_NCCL_COLLECTIVES)
        return gpufl__rows_memory(&t->rows[GFL_T_NCCL_COLLECTIVES]);
    const gpufl_trace_launch_configs *g = &t->configs_pub;
    const gpufl_trace_streams *s = &t->streams_pub;
    const gpufl_trace_callers *c = &t->callers_pub;
    switch (table) {
    case GPUFL_TRACE_TABLE_LAUNCH_CONFIGS:
        return carved(g->n, 4) * 2 + carved(g->n, 12) + carved(g->n, 6) + carved(g->n, 2) * 2 + carved(g->n, 4) * 3 +
               carved(g->n, 1);
    case GPUFL_TRACE_TABLE_STREAMS: return carved(s->n, 2) + carved(s->n, 4) * 2;
    case GPUFL_TRACE_TABLE_CALLERS: return carved(c->n, 4) * 3 + carved(c->n, 8) * 2 + carved(c->n, 1);
    case GPUFL_TRACE_TABLE_STRINGS: return gpufl__strtab_memory(&t->strings);
    default: return 0;
    }
}

GPUFL_API size_t gpufl_trace_memory_bytes(const gpufl_trace *t)
{
    size_t bytes = sizeof *t + t->info.ndevices * sizeof *t->devices;
    for (unsigned table = 0; table < GPUFL_TRACE_TABLE_COUNT; table++)
        bytes += gpufl_trace_table_memory_bytes(t, table);
    return bytes;
}
