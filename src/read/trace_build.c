/*
 * Building a gpufl_trace from an event source (see trace_internal.h):
 * every event becomes a row of its table, scope begins and ends are joined
 * into one row per scope, names are re-interned into the trace's own string
 * table, and at the end every table is sorted by time.
 *
 * Called once per gpufl_trace_open(), on the caller's thread. Per event it
 * is a type switch and a handful of stores; the sort is linear when the
 * rows arrive in time order (they mostly do).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/idmap.h"
#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "read/trace_internal.h"
#include "sink/disk_budget.h"

typedef struct builder {
    gpufl_trace *t;
    gpufl__event_source *src;
    uint32_t *remap;        /* source string id -> trace string id + 1 */
    size_t remap_cap;
    gpufl__idmap open_scopes; /* scope id -> row */
    size_t devices_cap;
} builder;

/* Stores v as the value of column f of row r of table T (prefix C). */
#define SET(T, C, f, r, v)                                                                         \
    do {                                                                                           \
        __typeof__(*(T)->pub.f) x_ = (__typeof__(*(T)->pub.f))(v);                                 \
        if (gpufl__col_put(&(T)->t, &(T)->cols[C##_##f], (r), &x_, sizeof x_) != 0)                \
            return GPUFL_ENOMEM;                                                                   \
    } while (0)
#define SET_PTR(T, C, f, r, p)                                                                     \
    do {                                                                                           \
        if (gpufl__col_put(&(T)->t, &(T)->cols[C##_##f], (r), (p), sizeof *(T)->pub.f) != 0)       \
            return GPUFL_ENOMEM;                                                                   \
    } while (0)
#define ROW(T, r)                                                                                  \
    do {                                                                                           \
        if (gpufl__table_add_row(&(T)->t, &(r)) != 0)                                              \
            return GPUFL_ENOMEM;                                                                   \
    } while (0)

/* ---- strings ------------------------------------------------------------- */

/* The trace's id for the source's string id. 0 or GPUFL_ENOMEM. */
static int str_slow(builder *b, uint32_t id, uint32_t *out)
{
    if (id >= b->remap_cap) {
        size_t cap = b->remap_cap ? b->remap_cap : 1024;
        while (cap <= id)
            cap *= 2;
        uint32_t *r = realloc(b->remap, cap * sizeof *r);
        if (!r)
            return GPUFL_ENOMEM;
        memset(r + b->remap_cap, 0, (cap - b->remap_cap) * sizeof *r);
        b->remap = r;
        b->remap_cap = cap;
    }
    uint32_t len;
    const char *s = gpufl__lookup(&b->src->strings, id, &len);
    if (gpufl__strtab_intern(&b->t->strings, s, len, out) != 0)
        return GPUFL_ENOMEM;
    b->remap[id] = *out + 1;
    return 0;
}

static inline int str(builder *b, uint32_t id, uint32_t *out)
{
    if (id == 0) {
        *out = 0;
        return 0;
    }
    if (id < b->remap_cap && b->remap[id]) {
        *out = b->remap[id] - 1;
        return 0;
    }
    return str_slow(b, id, out);
}

#define STR(id, out)                                                                               \
    do {                                                                                           \
        if (str(b, (id), &(out)) != 0)                                                             \
            return GPUFL_ENOMEM;                                                                   \
    } while (0)

static int text(builder *b, const char *s, uint32_t *out)
{
    return gpufl__strtab_intern(&b->t->strings, s, strlen(s), out);
}

/* ---- one event ----------------------------------------------------------- */

static int scope_begin(builder *b, gpufl__scope_table *T, const gfl_event *ev)
{
    const gfl_scope_payload *s = &ev->u.scope;
    uint32_t name;
    size_t r;
    STR(s->name, name);
    ROW(T, r);
    SET(T, SC, begin_ns, r, ev->h.ts);
    SET(T, SC, end_ns, r, 0);
    SET(T, SC, id, r, s->id);
    SET(T, SC, parent, r, s->parent_id);
    SET(T, SC, name, r, name);
    SET(T, SC, tid, r, ev->h.tid);
    SET(T, SC, depth, r, s->depth);
    SET(T, SC, implicit, r, 0);
    SET(T, SC, domain, r, 0);
    SET(T, SC, instant, r, 0);
    return gpufl__idmap_put(&b->open_scopes, s->id, (uint32_t)r);
}

static int scope_end(builder *b, gpufl__scope_table *T, const gfl_event *ev)
{
    uint32_t row;
    if (!gpufl__idmap_get(&b->open_scopes, ev->u.scope.id, &row)) {
        /* its begin was not read (lost, or before the file): the end line
         * describes the whole scope */
        gfl_event begin = *ev;
        begin.h.ts = ev->u.scope.begin_ts;
        int rc = scope_begin(b, T, &begin);
        if (rc != 0 || !gpufl__idmap_get(&b->open_scopes, ev->u.scope.id, &row))
            return rc ? rc : GPUFL_ENOMEM;
    }
    SET(T, SC, end_ns, row, ev->h.ts);
    SET(T, SC, implicit, row, (ev->h.flags & GFL_F_SCOPE_IMPLICIT) != 0);
    return 0;
}

static int nvtx(builder *b, gpufl__scope_table *T, const gfl_event *ev)
{
    const gfl_nvtx_payload *n = &ev->u.nvtx;
    uint32_t name, domain;
    size_t r;
    STR(n->name, name);
    STR(n->domain, domain);
    bool mark = ev->h.type == GFL_EV_NVTX_MARK;
    ROW(T, r);
    SET(T, SC, begin_ns, r, ev->h.ts);
    SET(T, SC, end_ns, r, mark ? ev->h.ts : n->end_ts);
    SET(T, SC, id, r, n->id);
    SET(T, SC, parent, r, 0);
    SET(T, SC, name, r, name);
    SET(T, SC, tid, r, ev->h.tid);
    SET(T, SC, depth, r, n->depth);
    SET(T, SC, implicit, r, 0);
    SET(T, SC, domain, r, domain);
    SET(T, SC, instant, r, mark);
    return 0;
}

static int kernel(builder *b, const gfl_event *ev)
{
    gpufl__kernel_table *T = &b->t->kernels;
    const gfl_kernel_payload *k = &ev->u.kernel;
    uint32_t name, mangled, nvtx_name;
    size_t r;
    STR(k->name, name);
    STR(k->mangled_name, mangled);
    STR(k->nvtx, nvtx_name);
    ROW(T, r);
    SET(T, KC, start_ns, r, ev->h.ts);
    SET(T, KC, end_ns, r, k->end_ts);
    SET(T, KC, name, r, name);
    SET(T, KC, mangled, r, mangled);
    SET(T, KC, device, r, ev->h.device);
    SET(T, KC, stream, r, k->stream);
    SET(T, KC, context, r, k->context);
    SET(T, KC, correlation, r, k->correlation);
    SET_PTR(T, KC, grid, r, k->grid);
    SET_PTR(T, KC, block, r, k->block);
    SET(T, KC, registers, r, k->registers);
    SET(T, KC, static_smem, r, k->static_smem);
    SET(T, KC, dynamic_smem, r, k->dynamic_smem);
    SET(T, KC, local_mem, r, k->local_mem);
    SET(T, KC, occupancy_x10000, r, k->occupancy_x10000);
    SET(T, KC, limiter, r, k->limiter);
    SET(T, KC, tid, r, ev->h.tid);
    SET(T, KC, scope, r, k->scope_id);
    SET(T, KC, nvtx, r, nvtx_name);
    SET(T, KC, external_id, r, k->external_id);
    SET(T, KC, stack, r, k->stack_id);
    SET(T, KC, graph_id, r, k->graph_id);
    SET(T, KC, api_start_ns, r, k->api_start_ts);
    SET(T, KC, api_end_ns, r, k->api_end_ts);
    SET(T, KC, external_kind, r, k->external_kind);
    return 0;
}

/* Copies and memsets share a table layout. */
static int transfer(gpufl__transfer_table *T, const gfl_event *ev)
{
    size_t r;
    ROW(T, r);
    SET(T, TC, start_ns, r, ev->h.ts);
    SET(T, TC, device, r, ev->h.device);
    SET(T, TC, tid, r, ev->h.tid);
    if (ev->h.type == GFL_EV_MEMCPY) {
        const gfl_memcpy_payload *m = &ev->u.memcpy;
        SET(T, TC, end_ns, r, m->end_ts);
        SET(T, TC, bytes, r, m->bytes);
        SET(T, TC, dst_device, r, m->dst_device);
        SET(T, TC, stream, r, m->stream);
        SET(T, TC, correlation, r, m->correlation);
        SET(T, TC, kind, r, m->copy_kind);
        SET(T, TC, src_kind, r, m->src_kind);
        SET(T, TC, dst_kind, r, m->dst_kind);
        SET(T, TC, scope, r, m->scope_id);
        SET(T, TC, api_start_ns, r, m->api_start_ts);
        SET(T, TC, api_end_ns, r, m->api_end_ts);
        SET(T, TC, context, r, m->context);
        SET(T, TC, value, r, 0);
        SET(T, TC, external_id, r, m->external_id);
    } else {
        const gfl_memset_payload *m = &ev->u.memset;
        SET(T, TC, end_ns, r, m->end_ts);
        SET(T, TC, bytes, r, m->bytes);
        SET(T, TC, dst_device, r, 0);
        SET(T, TC, stream, r, m->stream);
        SET(T, TC, correlation, r, m->correlation);
        SET(T, TC, kind, r, 0);
        SET(T, TC, src_kind, r, 0);
        SET(T, TC, dst_kind, r, m->mem_kind);
        SET(T, TC, scope, r, m->scope_id);
        SET(T, TC, api_start_ns, r, m->api_start_ts);
        SET(T, TC, api_end_ns, r, m->api_end_ts);
        SET(T, TC, context, r, m->context);
        SET(T, TC, value, r, m->value);
        SET(T, TC, external_id, r, m->external_id);
    }
    return 0;
}

static int sync_row(gpufl__sync_table *T, const gfl_event *ev)
{
    const gfl_sync_payload *s = &ev->u.sync;
    size_t r;
    ROW(T, r);
    SET(T, YC, start_ns, r, ev->h.ts);
    SET(T, YC, end_ns, r, s->end_ts);
    SET(T, YC, device, r, ev->h.device);
    SET(T, YC, stream, r, s->stream);
    SET(T, YC, correlation, r, s->correlation);
    SET(T, YC, kind, r, s->sync_kind);
    SET(T, YC, tid, r, ev->h.tid);
    SET(T, YC, scope, r, s->scope_id);
    SET(T, YC, context, r, s->context);
    SET(T, YC, cuda_event, r, s->cuda_event);
    SET(T, YC, external_id, r, s->external_id);
    return 0;
}

static int memory_row(gpufl__memory_table *T, const gfl_event *ev)
{
    const gfl_mem_payload *m = &ev->u.mem;
    size_t r;
    ROW(T, r);
    SET(T, MC, ts_ns, r, ev->h.ts);
    SET(T, MC, address, r, m->address);
    SET(T, MC, bytes, r, m->bytes);
    SET(T, MC, device, r, ev->h.device);
    SET(T, MC, is_free, r, ev->h.type == GFL_EV_MEM_FREE);
    SET(T, MC, kind, r, m->mem_kind);
    SET(T, MC, stream, r, m->stream);
    SET(T, MC, tid, r, ev->h.tid);
    SET(T, MC, scope, r, m->scope_id);
    SET(T, MC, context, r, m->context);
    SET(T, MC, correlation, r, m->correlation);
    SET(T, MC, external_id, r, m->external_id);
    return 0;
}

static int device_sample(gpufl__device_sample_table *T, const gfl_event *ev)
{
    const gfl_device_metrics_payload *m = &ev->u.dev;
    size_t r;
    ROW(T, r);
    SET(T, DC, ts_ns, r, ev->h.ts);
    SET(T, DC, device, r, ev->h.device);
    SET(T, DC, valid, r, m->valid);
    SET(T, DC, gpu_util_pct, r, m->gpu_util_pct);
    SET(T, DC, mem_util_pct, r, m->mem_util_pct);
    SET(T, DC, mem_used_bytes, r, m->mem_used_bytes);
    SET(T, DC, mem_total_bytes, r, m->mem_total_bytes);
    SET(T, DC, proc_mem_bytes, r, m->proc_mem_bytes);
    SET(T, DC, energy_mj, r, m->energy_mj);
    SET(T, DC, temp_c, r, m->temp_c);
    SET(T, DC, power_mw, r, m->power_mw);
    SET(T, DC, sm_clock_mhz, r, m->sm_clock_mhz);
    SET(T, DC, mem_clock_mhz, r, m->mem_clock_mhz);
    SET(T, DC, throttle_reasons, r, m->throttle_reasons);
    SET(T, DC, pcie_rx_kbps, r, m->pcie_rx_kbps);
    SET(T, DC, pcie_tx_kbps, r, m->pcie_tx_kbps);
    SET(T, DC, mem_free_bytes, r, m->mem_free_bytes);
    SET(T, DC, ecc_corrected, r, m->ecc_corrected);
    SET(T, DC, ecc_uncorrected, r, m->ecc_uncorrected);
    SET(T, DC, power_limit_mw, r, m->power_limit_mw);
    SET(T, DC, gfx_clock_mhz, r, m->gfx_clock_mhz);
    SET(T, DC, mem_temp_c, r, m->mem_temp_c);
    SET(T, DC, fan_pct, r, m->fan_pct);
    return 0;
}

static int host_sample(gpufl__host_sample_table *T, const gfl_event *ev)
{
    const gfl_host_metrics_payload *m = &ev->u.host;
    size_t r;
    ROW(T, r);
    SET(T, HC, ts_ns, r, ev->h.ts);
    SET(T, HC, valid, r, m->valid);
    SET(T, HC, proc_cpu_pct_x100, r, m->proc_cpu_pct_x100);
    SET(T, HC, sys_cpu_pct_x100, r, m->sys_cpu_pct_x100);
    SET(T, HC, ram_used_bytes, r, m->ram_used_bytes);
    SET(T, HC, ram_total_bytes, r, m->ram_total_bytes);
    SET(T, HC, proc_rss_bytes, r, m->proc_rss_bytes);
    SET(T, HC, cpu_count, r, m->cpu_count);
    return 0;
}

static int device_info(builder *b, const gfl_event *ev)
{
    gpufl_trace *t = b->t;
    const gfl_device_info_payload *d = &ev->u.info;
    if (t->info.ndevices == b->devices_cap) {
        size_t cap = b->devices_cap ? b->devices_cap * 2 : 8;
        gpufl_trace_device *p = realloc(t->devices, cap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        t->devices = p;
        b->devices_cap = cap;
    }
    gpufl_trace_device *out = &t->devices[t->info.ndevices];
    memset(out, 0, sizeof *out);
    out->index = ev->h.device;
    STR(d->name, out->name);
    STR(d->uuid, out->uuid);
    STR(d->pci_bus_id, out->pci_bus_id);
    out->cc_major = d->cc_major;
    out->cc_minor = d->cc_minor;
    out->sm_count = d->sm_count;
    out->memory_total_bytes = d->memory_total_bytes;
    out->power_limit_mw = d->power_limit_mw;
    out->max_sm_clock_mhz = d->max_sm_clock_mhz;
    out->max_mem_clock_mhz = d->max_mem_clock_mhz;
    t->info.ndevices++;
    if (!t->info.driver_version)
        STR(d->driver_version, t->info.driver_version);
    if (!t->info.cuda_driver_version && d->cuda_driver_version > 0) {
        char v[32];
        snprintf(v, sizeof v, "%d.%d", d->cuda_driver_version / 1000,
                 d->cuda_driver_version % 1000 / 10);
        if (text(b, v, &t->info.cuda_driver_version) != 0)
            return GPUFL_ENOMEM;
    }
    return 0;
}

static int add_event(builder *b, const gfl_event *ev)
{
    gpufl_trace *t = b->t;
    t->counts[ev->h.type]++;
    switch (ev->h.type) {
    case GFL_EV_SCOPE_BEGIN: return scope_begin(b, &t->scopes, ev);
    case GFL_EV_SCOPE_END: return scope_end(b, &t->scopes, ev);
    case GFL_EV_NVTX_RANGE:
    case GFL_EV_NVTX_MARK: return nvtx(b, &t->nvtx, ev);
    case GFL_EV_KERNEL: return kernel(b, ev);
    case GFL_EV_MEMCPY: return transfer(&t->copies, ev);
    case GFL_EV_MEMSET: return transfer(&t->memsets, ev);
    case GFL_EV_SYNC: return sync_row(&t->syncs, ev);
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE: return memory_row(&t->memory, ev);
    case GFL_EV_DEVICE_METRICS: return device_sample(&t->device_samples, ev);
    case GFL_EV_HOST_METRICS: return host_sample(&t->host_samples, ev);
    case GFL_EV_DEVICE_INFO: return device_info(b, ev);
    case GFL_EV_DROPPED:
        if (ev->u.dropped.reason < 16)
            t->info.dropped[ev->u.dropped.reason] += ev->u.dropped.count;
        return 0;
    default:
        return 0; /* counted only: windows, logs, graph launches, stacks */
    }
}

/* ---- the tables ---------------------------------------------------------- */

#define SIZE_OF(pubtype, prefix, f) [prefix##_##f] = (uint8_t)sizeof(*((pubtype *)0)->f),
#define SC_SIZE(f) SIZE_OF(gpufl_trace_scopes, SC, f)
#define KC_SIZE(f) SIZE_OF(gpufl_trace_kernels, KC, f)
#define TC_SIZE(f) SIZE_OF(gpufl_trace_transfers, TC, f)
#define YC_SIZE(f) SIZE_OF(gpufl_trace_syncs, YC, f)
#define MC_SIZE(f) SIZE_OF(gpufl_trace_memory, MC, f)
#define DC_SIZE(f) SIZE_OF(gpufl_trace_device_samples, DC, f)
#define HC_SIZE(f) SIZE_OF(gpufl_trace_host_samples, HC, f)

static void init_table(gpufl__table *t, gpufl__col *cols, unsigned n, const uint8_t *sizes,
                       unsigned key)
{
    memset(t, 0, sizeof *t);
    t->cols = cols;
    t->ncols = n;
    t->key = key;
    for (unsigned i = 0; i < n; i++)
        cols[i] = (gpufl__col){NULL, 0, sizes[i]};
}

/* Calls F(table, column array, sizes, count, key column) for every table. */
#define FOR_TABLES(F, t)                                                                           \
    F(&(t)->scopes.t, (t)->scopes.cols, scope_sizes, SC_COUNT, SC_begin_ns)                        \
    F(&(t)->nvtx.t, (t)->nvtx.cols, scope_sizes, SC_COUNT, SC_begin_ns)                            \
    F(&(t)->kernels.t, (t)->kernels.cols, kernel_sizes, KC_COUNT, KC_start_ns)                     \
    F(&(t)->copies.t, (t)->copies.cols, transfer_sizes, TC_COUNT, TC_start_ns)                     \
    F(&(t)->memsets.t, (t)->memsets.cols, transfer_sizes, TC_COUNT, TC_start_ns)                   \
    F(&(t)->syncs.t, (t)->syncs.cols, sync_sizes, YC_COUNT, YC_start_ns)                           \
    F(&(t)->memory.t, (t)->memory.cols, memory_sizes, MC_COUNT, MC_ts_ns)                          \
    F(&(t)->device_samples.t, (t)->device_samples.cols, device_sample_sizes, DC_COUNT, DC_ts_ns)   \
    F(&(t)->host_samples.t, (t)->host_samples.cols, host_sample_sizes, HC_COUNT, HC_ts_ns)

static const uint8_t scope_sizes[] = {SCOPE_COLS(SC_SIZE)};
static const uint8_t kernel_sizes[] = {KERNEL_COLS(KC_SIZE)};
static const uint8_t transfer_sizes[] = {TRANSFER_COLS(TC_SIZE)};
static const uint8_t sync_sizes[] = {SYNC_COLS(YC_SIZE)};
static const uint8_t memory_sizes[] = {MEMORY_COLS(MC_SIZE)};
static const uint8_t device_sample_sizes[] = {DEVICE_SAMPLE_COLS(DC_SIZE)};
static const uint8_t host_sample_sizes[] = {HOST_SAMPLE_COLS(HC_SIZE)};

#define INIT_TABLE(tab, cols, sizes, ncols, key) init_table(tab, cols, ncols, sizes, key);
#define FINISH_TABLE(tab, cols, sizes, ncols, key)                                                 \
    if (rc == 0)                                                                                   \
        rc = gpufl__table_finish(tab);                                                             \
    if ((tab)->n * 12 > rows_bytes)                                                                \
        rows_bytes = (tab)->n * 12;

#define BIND(pub, prefix, f) (pub)->f = gpufl__col_values(&cols[prefix##_##f], zero);
#define SC_BIND(f) BIND(pub, SC, f)
#define KC_BIND(f) BIND(pub, KC, f)
#define TC_BIND(f) BIND(pub, TC, f)
#define YC_BIND(f) BIND(pub, YC, f)
#define MC_BIND(f) BIND(pub, MC, f)
#define DC_BIND(f) BIND(pub, DC, f)
#define HC_BIND(f) BIND(pub, HC, f)

static void bind_scopes(gpufl__scope_table *s, const void *zero)
{
    gpufl_trace_scopes *pub = &s->pub;
    const gpufl__col *cols = s->cols;
    pub->n = s->t.n;
    SCOPE_COLS(SC_BIND)
}

static void bind(gpufl_trace *t)
{
    const void *zero = t->zero;
    bind_scopes(&t->scopes, zero);
    bind_scopes(&t->nvtx, zero);
    {
        gpufl_trace_kernels *pub = &t->kernels.pub;
        const gpufl__col *cols = t->kernels.cols;
        pub->n = t->kernels.t.n;
        KERNEL_COLS(KC_BIND)
    }
    gpufl__transfer_table *transfers[2] = {&t->copies, &t->memsets};
    for (int i = 0; i < 2; i++) {
        gpufl_trace_transfers *pub = &transfers[i]->pub;
        const gpufl__col *cols = transfers[i]->cols;
        pub->n = transfers[i]->t.n;
        TRANSFER_COLS(TC_BIND)
    }
    {
        gpufl_trace_syncs *pub = &t->syncs.pub;
        const gpufl__col *cols = t->syncs.cols;
        pub->n = t->syncs.t.n;
        SYNC_COLS(YC_BIND)
    }
    {
        gpufl_trace_memory *pub = &t->memory.pub;
        const gpufl__col *cols = t->memory.cols;
        pub->n = t->memory.t.n;
        MEMORY_COLS(MC_BIND)
    }
    {
        gpufl_trace_device_samples *pub = &t->device_samples.pub;
        const gpufl__col *cols = t->device_samples.cols;
        pub->n = t->device_samples.t.n;
        DEVICE_SAMPLE_COLS(DC_BIND)
    }
    {
        gpufl_trace_host_samples *pub = &t->host_samples.pub;
        const gpufl__col *cols = t->host_samples.cols;
        pub->n = t->host_samples.t.n;
        HOST_SAMPLE_COLS(HC_BIND)
    }
}

/* Sorts every table and points every column that is all zero at one
 * read-only zero mapping big enough for the longest table. */
static int finish(gpufl_trace *t)
{
    int rc = 0;
    size_t rows_bytes = 0;
    FOR_TABLES(FINISH_TABLE, t)
    if (rc != 0)
        return rc;
    size_t page = 4096;
    t->zero_bytes = (rows_bytes + page) / page * page;
    t->zero = mmap(NULL, t->zero_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t->zero == MAP_FAILED) {
        t->zero = NULL;
        return GPUFL_ENOMEM;
    }
    bind(t);
    return 0;
}

/* ---- session facts -------------------------------------------------------- */

static int session_facts(builder *b)
{
    gpufl_trace *t = b->t;
    const gpufl__event_source *src = b->src;
    const gpufl__session_meta *m = &src->meta;
    gpufl_trace_info *i = &t->info;
    if (text(b, m->session_id, &i->session_id) || text(b, m->app_name, &i->app_name) ||
        text(b, m->host, &i->host) || text(b, m->gpufl_version, &i->gpufl_version))
        return GPUFL_ENOMEM;
    i->format_version = src->format_version;
    i->source_format = src->format == GFL_SOURCE_GFLT ? GPUFL_TRACE_GFLT : GPUFL_TRACE_NDJSON;
    i->pid = (int32_t)m->pid;
    i->start_ns = m->start_ns;
    i->start_wall_ns = m->start_wall_ns;
    i->end_ns = m->ended ? m->end_ns : 0;
    i->skipped_bytes = src->skipped_bytes;
    i->skipped_lines = src->skipped_records;
    i->skipped_chunks = src->skipped_chunks;
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        i->lost[ch] = m->lost[ch];
        i->dropped[GFL_DROP_DISK_LIMIT] += m->lost[ch];
    }
    if (m->stop_reason) {
        if (text(b, gpufl__stop_reason_name((gpufl__stop_reason)m->stop_reason), &i->stop_reason) ||
            text(b, m->stop_detail, &i->stop_detail))
            return GPUFL_ENOMEM;
        i->stopped_at_ns = m->stopped_at_ns;
    }
    snprintf(t->source, sizeof t->source, "%s", src->path);
    i->source = t->source;
    i->devices = t->devices;
    return 0;
}

int gpufl__trace_build(gpufl__event_source *src, gpufl_trace **out, char *err, size_t err_len)
{
    *out = NULL;
    gpufl_trace *t = calloc(1, sizeof *t);
    if (!t || gpufl__strtab_init(&t->strings) != 0) {
        free(t);
        snprintf(err, err_len, "%s: out of memory", src->path);
        return GPUFL_ENOMEM;
    }
    FOR_TABLES(INIT_TABLE, t)
    builder b = {.t = t, .src = src};
    const gfl_event *ev;
    int rc;
    while ((rc = gpufl__source_next(src, &ev)) == 1)
        if ((rc = add_event(&b, ev)) != 0)
            break;
    if (rc < 0 && rc != GPUFL_ENOMEM)
        snprintf(err, err_len, "%s", src->err);
    else if (rc == 0 && (rc = session_facts(&b)) == 0)
        rc = finish(t);
    if (rc == GPUFL_ENOMEM)
        snprintf(err, err_len, "%s: out of memory loading the trace", src->path);
    free(b.remap);
    gpufl__idmap_free(&b.open_scopes);
    if (rc != 0) {
        gpufl__trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
