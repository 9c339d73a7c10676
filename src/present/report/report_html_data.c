/*
 * The HTML report's timeline and chart data (report_html.h): one JSON
 * object that the page's script draws from.
 *
 * Lanes: one per stream (its kernels, copies and memsets, by device and
 * stream id), then per thread one for its gpufl scopes, one for its NVTX
 * ranges and marks, one for its syncs. Within a lane a slice goes on the
 * first row whose slices all ended by its start, so nested scopes land
 * one row per depth; past GPUFL__HTML_MAX_ROWS rows it is laid over the
 * last row and counted ("overlaid").
 *
 * Size: when the session has more slices than GPUFL__HTML_SLICE_BUDGET, a
 * resolution q is chosen, and consecutive slices of one kind on a row that
 * are shorter than q and start within q of the first are merged into one
 * mark (its span, the number of slices and their summed time, the name of
 * the longest); slices of q or longer stay whole. A row then holds at most
 * about 2 * wall / q marks. Memory: the marks kept (32 bytes each), one
 * entry per stream, thread and distinct name; the trace is read in a
 * single pass per attempt (a second attempt with a coarser q only if the
 * estimate fell short).
 *
 * Every row's starts are deltas from the previous start (the first from
 * the session start), durations and counts plain integers.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/idmap.h"
#include "gpufl/gpufl.h"
#include "present/report/report_html.h"
#include "present/report/report_html_parts.h"

#define NONE UINT32_MAX

enum { LANE_STREAM = 0, LANE_SCOPES, LANE_NVTX, LANE_SYNCS };
static const char *const lane_type_name[] = {"stream", "scopes", "nvtx", "syncs"};

static const char *const copy_names[] = {"memcpy",      "memcpy HtoD", "memcpy DtoH",
                                         "memcpy DtoD", "memcpy HtoH", "memcpy PtoP"};
static const char *const sync_names[] = {"sync", "sync event", "stream wait event", "sync stream", "sync context"};

/* ---- lanes, rows, marks ------------------------------------------------------ */

typedef struct mark {
    uint64_t start, dur, busy; /* busy: summed time of the slices merged */
    uint32_t name;             /* index in the page's name table */
    uint32_t count;            /* slices merged; 1 for a whole slice */
} mark;

/* A slice as it arrives: its name is a key until it is kept. */
typedef struct slice {
    uint64_t start, end;
    uint8_t kind;
    uint32_t id;      /* string id, or copy / sync kind for fixed names */
    const char *text; /* its text */
} slice;

typedef struct row {
    mark *v;
    size_t n, cap;
    uint64_t last_end;
    bool pending; /* a merge in progress */
    slice pend;   /* its span (start, end), kind; name: the longest slice's */
    uint64_t pend_busy, pend_longest;
    uint32_t pend_count;
} row;

typedef struct lane {
    uint8_t type; /* LANE_* */
    uint32_t device, stream, tid;
    uint64_t items, overlaid;
    uint32_t nrows;
    row rows[GPUFL__HTML_MAX_ROWS];
} lane;

typedef struct builder {
    const gpufl_trace *t;
    uint64_t t0, t_end, wall, q;
    lane *lanes;
    size_t nlanes;
    uint32_t *stream_lane;   /* per row of the streams table: lane, or NONE */
    gpufl__idmap tid_lanes;  /* (tid << 2 | LANE_*) -> lane */
    gpufl__idmap name_index; /* (kind << 32 | id) -> index in names */
    slice *names;            /* kind, text of each name kept */
    size_t nnames, names_cap;
    uint64_t kept;   /* marks kept */
    bool count_only; /* a first pass that only counts each lane's slices */
    int err;
} builder;

static uint32_t name_of(builder *b, const slice *s)
{
    uint64_t key = (uint64_t)s->kind << 32 | s->id;
    uint32_t i;
    if (gpufl__idmap_get(&b->name_index, key, &i))
        return i;
    if (b->nnames == b->names_cap) {
        size_t cap = b->names_cap ? b->names_cap * 2 : 256;
        slice *v = realloc(b->names, cap * sizeof *v);
        if (!v) {
            b->err = GPUFL_ENOMEM;
            return 0;
        }
        b->names = v;
        b->names_cap = cap;
    }
    if (gpufl__idmap_put(&b->name_index, key, (uint32_t)b->nnames) != 0) {
        b->err = GPUFL_ENOMEM;
        return 0;
    }
    b->names[b->nnames] = *s;
    return (uint32_t)b->nnames++;
}

static void keep(builder *b, row *r, const slice *name, uint64_t start, uint64_t end, uint64_t busy, uint32_t count)
{
    if (b->err)
        return;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        mark *v = realloc(r->v, cap * sizeof *v);
        if (!v) {
            b->err = GPUFL_ENOMEM;
            return;
        }
        r->v = v;
        r->cap = cap;
    }
    uint32_t nm = name_of(b, name);
    r->v[r->n++] = (mark){start, end - start, busy, nm, count};
    b->kept++;
}

static void flush_pending(builder *b, row *r)
{
    if (!r->pending)
        return;
    keep(b, r, &r->pend, r->pend.start, r->pend.end, r->pend_busy, r->pend_count);
    r->pending = false;
}

static void add(builder *b, uint32_t li, slice s)
{
    if (li == NONE || b->err)
        return;
    lane *l = &b->lanes[li];
    if (s.end < s.start) /* damaged input: zero length, as the exports do */
        s.end = s.start;
    l->items++;
    if (b->count_only)
        return;
    uint32_t ri = 0;
    while (ri < l->nrows && l->rows[ri].last_end > s.start)
        ri++;
    if (ri == l->nrows) {
        if (l->nrows < GPUFL__HTML_MAX_ROWS) {
            l->nrows++;
        } else {
            ri = l->nrows - 1;
            l->overlaid++;
        }
    }
    row *r = &l->rows[ri];
    if (s.end > r->last_end)
        r->last_end = s.end;
    uint64_t dur = s.end - s.start;
    if (b->q == 0 || dur >= b->q) {
        flush_pending(b, r);
        keep(b, r, &s, s.start, s.end, dur, 1);
        return;
    }
    if (r->pending && r->pend.kind == s.kind && s.start - r->pend.start < b->q) {
        if (s.end > r->pend.end)
            r->pend.end = s.end;
        r->pend_busy += dur;
        r->pend_count++;
        if (dur > r->pend_longest) {
            r->pend_longest = dur;
            r->pend.id = s.id;
            r->pend.text = s.text;
        }
        return;
    }
    flush_pending(b, r);
    r->pending = true;
    r->pend = s;
    r->pend_busy = dur;
    r->pend_longest = dur;
    r->pend_count = 1;
}

/* ---- the lanes of a trace ------------------------------------------------------ */

static int cmp_stream_rows(const void *pa, const void *pb, void *ctx)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const gpufl_trace_streams *s = ctx;
    if (s->device[a] != s->device[b])
        return s->device[a] < s->device[b] ? -1 : 1;
    if (s->stream[a] != s->stream[b])
        return s->stream[a] < s->stream[b] ? -1 : 1;
    if (s->context[a] != s->context[b])
        return s->context[a] < s->context[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

static uint32_t sync_tid(const gpufl_trace_syncs *y, size_t i) { return y->callers->tid[y->caller_row[i]]; }

/* Makes the lanes: streams with work by (device, stream), then threads by
 * tid, each with its scopes, NVTX and syncs lanes when it has rows. */
static int make_lanes(builder *b)
{
    const gpufl_trace *t = b->t;
    const gpufl_trace_streams *st = gpufl_trace_get_streams(t);
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    const gpufl_trace_transfers *cp = gpufl_trace_get_copies(t), *ms = gpufl_trace_get_memsets(t);
    const gpufl_trace_scopes *sc = gpufl_trace_get_scopes(t), *nv = gpufl_trace_get_nvtx(t);
    const gpufl_trace_syncs *sy = gpufl_trace_get_syncs(t);

    uint32_t *used = calloc(st->n + 1, sizeof *used);
    b->stream_lane = malloc((st->n + 1) * sizeof *b->stream_lane);
    if (!used || !b->stream_lane) {
        free(used);
        return GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < k->n; i++)
        used[k->stream_row[i]] = 1;
    for (size_t i = 0; i < cp->n; i++)
        used[cp->stream_row[i]] = 1;
    for (size_t i = 0; i < ms->n; i++)
        used[ms->stream_row[i]] = 1;
    uint32_t *order = malloc((st->n + 1) * sizeof *order);
    if (!order) {
        free(used);
        return GPUFL_ENOMEM;
    }
    size_t nstreams = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        b->stream_lane[i] = NONE;
        if (used[i])
            order[nstreams++] = i;
    }
    free(used);
    qsort_r(order, nstreams, sizeof *order, cmp_stream_rows, (void *)st);

    /* threads and their lane types, as (tid << 2 | type), sorted, distinct */
    gpufl__idmap seen = {0};
    uint64_t *keys = NULL;
    size_t nkeys = 0, keys_cap = 0;
    int rc = 0;
    for (int pass = 0; pass < 3 && rc == 0; pass++) {
        const gpufl_trace_scopes *s = pass == 0 ? sc : nv;
        size_t n = pass == 2 ? sy->n : s->n;
        uint64_t type = pass == 0 ? LANE_SCOPES : pass == 1 ? LANE_NVTX : LANE_SYNCS;
        for (size_t i = 0; i < n && rc == 0; i++) {
            uint64_t tid = pass == 2 ? sync_tid(sy, i) : s->tid[i];
            uint64_t key = tid << 2 | type;
            uint32_t unused;
            if (gpufl__idmap_get(&seen, key, &unused))
                continue;
            if (nkeys == keys_cap) {
                size_t cap = keys_cap ? keys_cap * 2 : 64;
                uint64_t *v = realloc(keys, cap * sizeof *v);
                if (!v) {
                    rc = GPUFL_ENOMEM;
                    break;
                }
                keys = v;
                keys_cap = cap;
            }
            keys[nkeys++] = key;
            rc = gpufl__idmap_put(&seen, key, 0);
        }
    }
    gpufl__idmap_free(&seen);
    if (rc == 0 && nkeys)
        qsort(keys, nkeys, sizeof *keys, cmp_u64);

    if (rc == 0) {
        b->lanes = calloc(nstreams + nkeys + 1, sizeof *b->lanes);
        if (!b->lanes)
            rc = GPUFL_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < nstreams; i++) {
        lane *l = &b->lanes[b->nlanes];
        l->type = LANE_STREAM;
        l->device = st->device[order[i]];
        l->stream = st->stream[order[i]];
        b->stream_lane[order[i]] = (uint32_t)b->nlanes++;
    }
    for (size_t i = 0; rc == 0 && i < nkeys; i++) {
        lane *l = &b->lanes[b->nlanes];
        l->type = (uint8_t)(keys[i] & 3);
        l->tid = (uint32_t)(keys[i] >> 2);
        rc = gpufl__idmap_put(&b->tid_lanes, keys[i], (uint32_t)b->nlanes++);
    }
    free(order);
    free(keys);
    return rc;
}

static uint32_t tid_lane(const builder *b, uint32_t tid, unsigned type)
{
    uint32_t found;
    return gpufl__idmap_get(&b->tid_lanes, (uint64_t)tid << 2 | type, &found) ? found : NONE;
}

/* ---- feeding the slices -------------------------------------------------------- */

static slice kernel_slice(const gpufl_trace_kernels *k, size_t i, const gpufl_trace *t)
{
    uint32_t name = k->configs->name[k->config_row[i]];
    return (slice){k->start_ns[i], gpufl_trace_kernel_end(k, i), GPUFL__HK_KERNEL, name, gpufl_trace_string(t, name)};
}

static slice transfer_slice(const gpufl_trace_transfers *x, size_t i, bool memset)
{
    if (memset)
        return (slice){x->start_ns[i], gpufl_trace_transfer_end(x, i), GPUFL__HK_MEMSET, 0, "memset"};
    uint32_t kind = x->kind[i] < sizeof copy_names / sizeof copy_names[0] ? x->kind[i] : 0;
    return (slice){x->start_ns[i], gpufl_trace_transfer_end(x, i), GPUFL__HK_COPY, kind, copy_names[kind]};
}

/* The device work of every stream, in start order across the three tables
 * (a stream's rows must arrive sorted for the row assignment). */
static void feed_streams(builder *b)
{
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(b->t);
    const gpufl_trace_transfers *cp = gpufl_trace_get_copies(b->t), *ms = gpufl_trace_get_memsets(b->t);
    size_t ik = 0, ic = 0, im = 0;
    while (!b->err && (ik < k->n || ic < cp->n || im < ms->n)) {
        uint64_t tk = ik < k->n ? k->start_ns[ik] : UINT64_MAX;
        uint64_t tc = ic < cp->n ? cp->start_ns[ic] : UINT64_MAX;
        uint64_t tm = im < ms->n ? ms->start_ns[im] : UINT64_MAX;
        if (tk <= tc && tk <= tm) {
            add(b, b->stream_lane[k->stream_row[ik]], kernel_slice(k, ik, b->t));
            ik++;
        } else if (tc <= tm) {
            add(b, b->stream_lane[cp->stream_row[ic]], transfer_slice(cp, ic, false));
            ic++;
        } else {
            add(b, b->stream_lane[ms->stream_row[im]], transfer_slice(ms, im, true));
            im++;
        }
    }
}

static void feed_threads(builder *b)
{
    const gpufl_trace_scopes *sc = gpufl_trace_get_scopes(b->t), *nv = gpufl_trace_get_nvtx(b->t);
    const gpufl_trace_syncs *sy = gpufl_trace_get_syncs(b->t);
    for (int pass = 0; pass < 2; pass++) {
        const gpufl_trace_scopes *s = pass == 0 ? sc : nv;
        for (size_t i = 0; i < s->n && !b->err; i++) {
            uint64_t end = s->end_ns[i]; /* never ended: the session's last time, as the trace gives it */
            uint8_t kind = pass == 0 ? GPUFL__HK_SCOPE : s->instant[i] ? GPUFL__HK_MARK : GPUFL__HK_NVTX;
            if (kind == GPUFL__HK_MARK)
                end = s->begin_ns[i];
            add(b, tid_lane(b, s->tid[i], pass == 0 ? LANE_SCOPES : LANE_NVTX),
                (slice){s->begin_ns[i], end, kind, s->name[i], gpufl_trace_string(b->t, s->name[i])});
        }
    }
    for (size_t i = 0; i < sy->n && !b->err; i++) {
        uint32_t kind = sy->kind[i] < sizeof sync_names / sizeof sync_names[0] ? sy->kind[i] : 0;
        add(b, tid_lane(b, sync_tid(sy, i), LANE_SYNCS),
            (slice){sy->start_ns[i], gpufl_trace_sync_end(sy, i), GPUFL__HK_SYNC, kind, sync_names[kind]});
    }
}

static void reset_rows(builder *b)
{
    for (size_t i = 0; i < b->nlanes; i++) {
        lane *l = &b->lanes[i];
        for (uint32_t r = 0; r < GPUFL__HTML_MAX_ROWS; r++) {
            free(l->rows[r].v);
            memset(&l->rows[r], 0, sizeof l->rows[r]);
        }
        l->nrows = 0;
        l->items = l->overlaid = 0;
    }
    b->kept = 0;
}

/* Marks an attempt at resolution q keeps at most (per lane: its slices, or
 * two marks per q of the session for each row it may use, counted as one:
 * most lanes have one busy row). */
static uint64_t estimate(const uint64_t *items, size_t nlanes, uint64_t wall, uint64_t q)
{
    uint64_t sum = 0, per_lane = 2 * (wall / q) + 2;
    for (size_t i = 0; i < nlanes; i++)
        sum += items[i] < per_lane ? items[i] : per_lane;
    return sum;
}

static int build(builder *b)
{
    int rc = make_lanes(b);
    if (rc != 0)
        return rc;
    /* count the slices of each lane, to choose q */
    b->count_only = true;
    feed_streams(b);
    feed_threads(b);
    b->count_only = false;
    if (b->err)
        return b->err;
    uint64_t *items = malloc((b->nlanes + 1) * sizeof *items), total = 0;
    if (!items)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < b->nlanes; i++)
        total += items[i] = b->lanes[i].items;
    uint64_t q = 0;
    if (total > GPUFL__HTML_SLICE_BUDGET) {
        uint64_t lo = 1, hi = b->wall + 1;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (estimate(items, b->nlanes, b->wall, mid) <= GPUFL__HTML_SLICE_BUDGET)
                hi = mid;
            else
                lo = mid + 1;
        }
        q = lo;
    }
    free(items);
    for (;;) {
        reset_rows(b);
        b->q = q;
        feed_streams(b);
        feed_threads(b);
        for (size_t i = 0; i < b->nlanes && !b->err; i++)
            for (uint32_t r = 0; r < b->lanes[i].nrows; r++)
                flush_pending(b, &b->lanes[i].rows[r]);
        if (b->err)
            return b->err;
        if (q == 0 || b->kept <= 2 * (uint64_t)GPUFL__HTML_SLICE_BUDGET || q > b->wall)
            return 0;
        q *= 2; /* the estimate fell short (many busy rows): coarser */
    }
}

static void builder_free(builder *b)
{
    reset_rows(b);
    free(b->lanes);
    free(b->stream_lane);
    free(b->names);
    gpufl__idmap_free(&b->tid_lanes);
    gpufl__idmap_free(&b->name_index);
}

/* ---- JSON ---------------------------------------------------------------------- */

static const char *device_name(const gpufl_trace *t, uint32_t dev)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    for (uint32_t i = 0; i < info->ndevices; i++)
        if (info->devices[i].index == dev)
            return gpufl_trace_string(t, info->devices[i].name);
    return "";
}

static void device_label(gpufl__hout *o, const gpufl_trace *t, uint32_t dev)
{
    char buf[400];
    const char *name = device_name(t, dev);
    snprintf(buf, sizeof buf, "GPU %u%s%s", dev, *name ? " \xc2\xb7 " : "", name);
    gpufl__hout_json_str(o, buf);
}

/* The fields of a row's marks that go out as a plain array each. */
enum { MARK_DUR, MARK_NAME, MARK_COUNT, MARK_BUSY };

static uint64_t mark_field(const mark *m, int field)
{
    switch (field) {
    case MARK_DUR: return m->dur;
    case MARK_NAME: return m->name;
    case MARK_COUNT: return m->count;
    default: return m->busy;
    }
}

/* open (`,"d":[`), then field of every mark of r, then the closing ]. */
static void emit_mark_field(gpufl__hout *o, const char *open, const row *r, int field)
{
    gpufl__hout_raw(o, open);
    for (size_t i = 0; i < r->n; i++)
        gpufl__hout_printf(o, i ? ",%" PRIu64 : "%" PRIu64, mark_field(&r->v[i], field));
    gpufl__hout_raw(o, "]");
}

static void emit_row(gpufl__hout *o, const row *r, uint64_t t0)
{
    bool merged = false;
    for (size_t i = 0; i < r->n && !merged; i++)
        merged = r->v[i].count != 1;
    gpufl__hout_raw(o, "{\"s\":[");
    uint64_t prev = t0;
    for (size_t i = 0; i < r->n; i++) {
        gpufl__hout_printf(o, i ? ",%" PRId64 : "%" PRId64, (int64_t)(r->v[i].start - prev));
        prev = r->v[i].start;
    }
    gpufl__hout_raw(o, "]");
    emit_mark_field(o, ",\"d\":[", r, MARK_DUR);
    emit_mark_field(o, ",\"n\":[", r, MARK_NAME);
    if (merged) {
        emit_mark_field(o, ",\"c\":[", r, MARK_COUNT);
        emit_mark_field(o, ",\"b\":[", r, MARK_BUSY);
    }
    gpufl__hout_raw(o, "}");
}

static void emit_lanes(gpufl__hout *o, const builder *b)
{
    gpufl__hout_raw(o, "\"lanes\":[");
    for (size_t i = 0; i < b->nlanes; i++) {
        const lane *l = &b->lanes[i];
        char label[64];
        gpufl__hout_raw(o, i ? ",\n{\"g\":" : "\n{\"g\":");
        if (l->type == LANE_STREAM) {
            device_label(o, b->t, l->device);
            snprintf(label, sizeof label, "stream %" PRIu32, l->stream);
        } else {
            char g[32];
            snprintf(g, sizeof g, "thread %" PRIu32, l->tid);
            gpufl__hout_json_str(o, g);
            snprintf(label, sizeof label, "%s",
                     l->type == LANE_SCOPES ? "scopes"
                     : l->type == LANE_NVTX ? "NVTX"
                                            : "syncs");
        }
        gpufl__hout_raw(o, ",\"l\":");
        gpufl__hout_json_str(o, label);
        gpufl__hout_printf(o, ",\"t\":\"%s\",\"items\":%" PRIu64 ",\"o\":%" PRIu64 ",\"rows\":[",
                           lane_type_name[l->type], l->items, l->overlaid);
        for (uint32_t r = 0; r < l->nrows; r++) {
            if (r)
                gpufl__hout_raw(o, ",");
            emit_row(o, &l->rows[r], b->t0);
        }
        gpufl__hout_raw(o, "]}");
    }
    gpufl__hout_raw(o, "]");
}

/* NVML samples of one device, in at most GPUFL__HTML_MAX_POINTS buckets of
 * consecutive samples: each metric the mean of the samples that report it
 * (null when none does). Units: %, MiB, W, C. */
enum { M_UTIL, M_MEM, M_POWER, M_TEMP, M_COUNT };
static const char *const metric_key[M_COUNT] = {"util", "mem", "power", "temp"};
static const uint32_t metric_bit[M_COUNT] = {1u, 4u, 32u, 8u};

static double metric_value(const gpufl_trace_device_samples *ds, size_t i, int m)
{
    switch (m) {
    case M_UTIL: return ds->gpu_util_pct[i];
    case M_MEM: return (double)ds->mem_used_bytes[i] / (1024.0 * 1024.0);
    case M_POWER: return ds->power_mw[i] / 1000.0;
    default: return ds->temp_c[i];
    }
}

/* One bucket of a series: the time of its first sample from the session
 * start (m < 0), else metric m's mean over the valid samples, null when
 * none is. */
static void emit_bucket(gpufl__hout *o, int m, int64_t first, double sum, size_t valid)
{
    if (m < 0)
        gpufl__hout_i64(o, first);
    else if (valid)
        gpufl__hout_printf(o, "%.1f", sum / (double)valid);
    else
        gpufl__hout_raw(o, "null");
}

static void emit_series_of(gpufl__hout *o, const gpufl_trace *t, uint32_t dev, uint64_t t0)
{
    const gpufl_trace_device_samples *ds = gpufl_trace_get_device_samples(t);
    size_t n = 0;
    uint64_t mem_total = 0;
    for (size_t i = 0; i < ds->n; i++)
        if (ds->device[i] == dev) {
            n++;
            if ((ds->valid[i] & 4u) && ds->mem_total_bytes[i])
                mem_total = ds->mem_total_bytes[i];
        }
    size_t per = (n + GPUFL__HTML_MAX_POINTS - 1) / GPUFL__HTML_MAX_POINTS;
    if (per == 0)
        per = 1;
    gpufl__hout_printf(o, "{\"dev\":%" PRIu32 ",\"label\":", dev);
    device_label(o, t, dev);
    gpufl__hout_printf(o, ",\"memTotal\":%.1f,\"per\":%zu", (double)mem_total / (1024.0 * 1024.0), per);
    for (int m = -1; m < M_COUNT; m++) {
        gpufl__hout_printf(o, ",\"%s\":[", m < 0 ? "t" : metric_key[m]);
        size_t in_bucket = 0, buckets = 0, valid = 0;
        double sum = 0;
        uint64_t first = 0;
        for (size_t i = 0; i < ds->n; i++) {
            if (ds->device[i] != dev)
                continue;
            if (in_bucket == 0)
                first = ds->ts_ns[i];
            if (m >= 0 && (ds->valid[i] & metric_bit[m])) {
                sum += metric_value(ds, i, m);
                valid++;
            }
            if (++in_bucket < per)
                continue;
            if (buckets++)
                gpufl__hout_raw(o, ",");
            emit_bucket(o, m, (int64_t)(first - t0), sum, valid);
            in_bucket = valid = 0;
            sum = 0;
        }
        if (in_bucket) {
            if (buckets)
                gpufl__hout_raw(o, ",");
            emit_bucket(o, m, (int64_t)(first - t0), sum, valid);
        }
        gpufl__hout_raw(o, "]");
    }
    gpufl__hout_raw(o, "}");
}

static void emit_series(gpufl__hout *o, const gpufl_trace *t, uint64_t t0)
{
    const gpufl_trace_device_samples *ds = gpufl_trace_get_device_samples(t);
    /* devices in index order: at most 65536 of them (uint16), few in practice */
    uint8_t seen[65536 / 8];
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < ds->n; i++)
        seen[ds->device[i] >> 3] |= (uint8_t)(1u << (ds->device[i] & 7));
    gpufl__hout_raw(o, "\"series\":[");
    bool first = true;
    for (uint32_t d = 0; d < 65536; d++) {
        if (!(seen[d >> 3] & (1u << (d & 7))))
            continue;
        if (!first)
            gpufl__hout_raw(o, ",\n");
        first = false;
        emit_series_of(o, t, d, t0);
    }
    gpufl__hout_raw(o, "]");
}

int gpufl__html_data(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    builder b;
    memset(&b, 0, sizeof b);
    b.t = t;
    b.t0 = r->summary.start_ns;
    b.t_end = r->summary.end_ns > b.t0 ? r->summary.end_ns : b.t0;
    b.wall = b.t_end - b.t0;
    int rc = build(&b);
    if (rc != 0) {
        builder_free(&b);
        return rc;
    }
    uint64_t items = 0;
    for (size_t i = 0; i < b.nlanes; i++)
        items += b.lanes[i].items;
    gpufl__hout_printf(o,
                       "{\"v\":1,\"wall\":%" PRIu64 ",\"q\":%" PRIu64 ",\"budget\":%u,\"maxRows\":%u,"
                       "\"items\":%" PRIu64 ",\"kept\":%" PRIu64 ",\n",
                       b.wall, b.q, GPUFL__HTML_SLICE_BUDGET, GPUFL__HTML_MAX_ROWS, items, b.kept);
    gpufl__hout_printf(o,
                       "\"counts\":{\"kernels\":%zu,\"copies\":%zu,\"memsets\":%zu,\"syncs\":%zu,"
                       "\"scopes\":%zu,\"nvtx\":%zu},\n",
                       gpufl_trace_get_kernels(t)->n, gpufl_trace_get_copies(t)->n, gpufl_trace_get_memsets(t)->n,
                       gpufl_trace_get_syncs(t)->n, gpufl_trace_get_scopes(t)->n, gpufl_trace_get_nvtx(t)->n);
    gpufl__hout_raw(o, "\"names\":[");
    for (size_t i = 0; i < b.nnames; i++) {
        if (i)
            gpufl__hout_raw(o, i % 16 ? "," : ",\n");
        gpufl__hout_json_str(o, b.names[i].text);
    }
    gpufl__hout_raw(o, "],\n\"nk\":[");
    for (size_t i = 0; i < b.nnames; i++)
        gpufl__hout_printf(o, i ? ",%u" : "%u", b.names[i].kind);
    gpufl__hout_raw(o, "],\n");
    emit_lanes(o, &b);
    gpufl__hout_raw(o, ",\n");
    emit_series(o, t, b.t0);
    gpufl__hout_raw(o, "}");
    builder_free(&b);
    return 0;
}
