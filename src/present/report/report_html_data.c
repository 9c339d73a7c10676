/*
 * The HTML report's timeline and chart data (report_html.h): one JSON
 * object that the page's script draws from.
 *
 * Lanes, from the one timeline (present/timeline): one per stream track
 * (its kernels, copies and memsets, by device and stream id), then per
 * thread track one for its gpufl scopes, one for its NVTX ranges and
 * marks, one for its syncs (the timeline built with syncs on the thread
 * that waited), each in the timeline's order. Within a lane a slice goes on the
 * first row whose slices all ended by its start, so nested scopes land
 * one row per depth; past GPUFL__HTML_MAX_ROWS rows it is laid over the
 * last row and counted ("overlaid").
 *
 * Size: when the session has more slices than GPUFL__HTML_SLICE_BUDGET, a
 * resolution q is chosen, and consecutive slices of one kind on a row that
 * are shorter than q and start within q of the first are merged into one
 * mark (its span, the number of slices and their summed time, the name of
 * the longest); slices of q or longer stay whole. A row then holds at most
 * about 2 * wall / q marks. Memory: the timeline (8 bytes per slice), the
 * marks kept (32 bytes each), one entry per stream, thread and distinct
 * name; the timeline is read in a single pass per attempt (a second attempt with a coarser q only if the
 * estimate fell short).
 *
 * Every row's starts are deltas from the previous start (the first from
 * the session start), durations and counts plain integers.
 *
 * Charts: "series", the NVML samples per device (below), and, when the
 * session has PM samples, "pm" (report_html_pm.c).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/idmap.h"
#include "analyze/ana_critpath.h"
#include "core/names.h"
#include "gpufl/gpufl.h"
#include "present/report/report_html.h"
#include "present/report/report_html_parts.h"
#include "present/timeline/timeline_names.h"
#include "read/rows.h"

#define NONE UINT32_MAX

enum { LANE_STREAM = 0, LANE_SCOPES, LANE_NVTX, LANE_SYNCS, LANE_WINDOWS, LANE_TRIGGERS, LANE_CRITPATH, LANE_COUNT };
static const char *const lane_type_name[] = {"stream", "scopes", "nvtx", "syncs", "windows", "triggers", "critpath"};

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
    const gpufl__ana_critpath *critpath; /* the report's: drawn as a lane of its own, first */
    uint32_t critpath_lane;              /* NONE without one */
    gpufl__rows r;
    uint64_t t0, t_end, wall, q;
    lane *lanes;
    size_t nlanes;
    gpufl__timeline tl;
    uint32_t (*track_lane)[LANE_COUNT]; /* per track of tl, per LANE_*: its lane, or NONE */
    gpufl__idmap name_index;            /* (kind << 32 | id) -> index in names */
    slice *names;                       /* kind, text of each name kept */
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
    if (GPUFL__GROW(b->names, b->nnames, b->names_cap, 256) != 0) {
        b->err = GPUFL_ENOMEM;
        return 0;
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
    if (GPUFL__GROW(r->v, r->n, r->cap, 64) != 0) {
        b->err = GPUFL_ENOMEM;
        return;
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

/* The items the page draws: device work, syncs (with the thread that
 * waited), scopes and NVTX, and the recorder's trace windows and triggers
 * (a band and marks at the top: device work exists only in the windows). */
#define DRAWN_ITEMS                                                                                                    \
    (GPUFL__TL_ITEM(GPUFL__TBL_KERNEL) | GPUFL__TL_ITEM(GPUFL__TBL_COPY) | GPUFL__TL_ITEM(GPUFL__TBL_MEMSET) |         \
     GPUFL__TL_ITEM(GPUFL__TBL_SYNC) | GPUFL__TL_ITEM(GPUFL__TBL_SCOPE) | GPUFL__TL_ITEM(GPUFL__TBL_NVTX) |            \
     GPUFL__TL_ITEM(GPUFL__TL_WINDOW) | GPUFL__TL_ITEM(GPUFL__TL_TRIGGER) | GPUFL__TL_SYNCS_BY_THREAD)

/* The lane type of an item of a thread or of the "gpufl" track. */
static unsigned thread_lane_type(unsigned kind)
{
    switch (kind) {
    case GPUFL__TBL_SCOPE: return LANE_SCOPES;
    case GPUFL__TBL_NVTX: return LANE_NVTX;
    case GPUFL__TL_WINDOW: return LANE_WINDOWS;
    case GPUFL__TL_TRIGGER: return LANE_TRIGGERS;
    default: return LANE_SYNCS;
    }
}

static void new_lane(builder *b, uint32_t track, unsigned type)
{
    lane *l = &b->lanes[b->nlanes];
    const gpufl__tl_track *tr = &b->tl.tracks[track];
    l->type = (uint8_t)type;
    l->device = tr->device;
    l->stream = tr->stream;
    l->tid = tr->tid;
    b->track_lane[track][type] = (uint32_t)b->nlanes++;
}

/* The lanes of types first..last of track t that it has items for. */
static void item_lanes(builder *b, uint32_t t, unsigned first, unsigned last)
{
    bool has[LANE_COUNT] = {false};
    size_t n;
    const uint64_t *item = gpufl__tl_items(&b->tl, t, &n);
    for (size_t i = 0; i < n; i++)
        has[thread_lane_type(GPUFL__TL_REF_KIND(item[i]))] = true;
    for (unsigned type = first; type <= last; type++)
        if (has[type])
            new_lane(b, t, type);
}

/* Makes the lanes from the timeline's tracks: the "gpufl" track's trace
 * windows and triggers when the session has them (first, as the timeline
 * has them: they say how to read the rest), streams with work by (device,
 * stream), then threads by tid, each with its scopes, NVTX and syncs lanes
 * when it has rows. */
static int make_lanes(builder *b)
{
    int rc = gpufl__timeline_build(&b->tl, &b->r, DRAWN_ITEMS);
    if (rc != 0)
        return rc;
    size_t nt = b->tl.ntracks;
    b->track_lane = malloc((nt ? nt : 1) * sizeof *b->track_lane);
    b->lanes = calloc(3 * nt + 2, sizeof *b->lanes);
    if (!b->track_lane || !b->lanes)
        return GPUFL_ENOMEM;
    for (size_t t = 0; t < nt; t++)
        for (unsigned k = 0; k < LANE_COUNT; k++)
            b->track_lane[t][k] = NONE;
    b->critpath_lane = NONE;
    if (b->critpath && b->critpath->nwork) {
        lane *l = &b->lanes[b->nlanes];
        memset(l, 0, sizeof *l);
        l->type = LANE_CRITPATH;
        b->critpath_lane = (uint32_t)b->nlanes++;
    }
    if (b->tl.flight != GPUFL__TL_NONE)
        item_lanes(b, b->tl.flight, LANE_WINDOWS, LANE_TRIGGERS);
    for (uint32_t t = 0; t < nt; t++)
        if (b->tl.tracks[t].kind == GPUFL__TL_STREAM)
            new_lane(b, t, LANE_STREAM);
    for (uint32_t t = 0; t < nt; t++)
        if (b->tl.tracks[t].kind == GPUFL__TL_THREAD)
            item_lanes(b, t, LANE_SCOPES, LANE_SYNCS);
    return 0;
}

/* ---- feeding the slices -------------------------------------------------------- */

/* The slice of a trace window (named by its reason: "steps", "trigger") or
 * of a trigger (an instant, named by its kind: "oom", "dump"). */
static slice flight_slice(const gpufl__rows *r, unsigned kind, size_t i)
{
    if (kind == GPUFL__TL_WINDOW) {
        gpufl__window_row w;
        gpufl__window_row_get(r, i, &w);
        return (slice){w.begin, w.end, (uint8_t)gpufl__tl_src_names(GPUFL__TL_SRC_WINDOW)->page, w.reason,
                       w.reason ? gpufl__rows_str(r, w.reason) : "trace window"};
    }
    gpufl__trigger_row g;
    gpufl__trigger_row_get(r, i, &g);
    return (slice){g.ts, g.ts, (uint8_t)gpufl__tl_src_names(GPUFL__TL_SRC_TRIGGER)->page_instant, g.kind,
                   g.kind ? gpufl__rows_str(r, g.kind) : "trigger"};
}

/* The slice of an item (its end as the trace has it; add() makes an end
 * before the start zero-length). A scope or NVTX range that never ended
 * ends at the session's last time, as the trace gives it. */
static slice item_slice(const builder *b, unsigned tbl, size_t i)
{
    const gpufl__rows *r = &b->r;
    if (tbl == GPUFL__TL_WINDOW || tbl == GPUFL__TL_TRIGGER)
        return flight_slice(r, tbl, i);
    slice s = {gpufl__row_start(r, tbl, i), gpufl__row_end(r, tbl, i), (uint8_t)gpufl__tl_src_names(tbl)->page, 0,
               "memset"};
    switch (tbl) {
    case GPUFL__TBL_KERNEL:
        s.id = gpufl__k_name(r, i);
        s.text = gpufl__rows_str(r, s.id);
        break;
    case GPUFL__TBL_COPY: {
        uint32_t kind = gpufl__row_copy_kind(r, tbl, i);
        s.id = kind < GFL_COPY_KIND_COUNT ? kind : 0;
        s.text = gpufl__copy_kind((uint8_t)s.id)->slice;
        break;
    }
    case GPUFL__TBL_SYNC: {
        uint32_t kind = gpufl__y_kind(r, i) < GFL_SYNC_KIND_COUNT ? gpufl__y_kind(r, i) : 0;
        s.id = kind;
        s.text = gpufl__sync_kind((uint8_t)kind)->label;
        break;
    }
    case GPUFL__TBL_SCOPE:
    case GPUFL__TBL_NVTX:
        s.id = gpufl__row_name(r, tbl, i);
        s.text = gpufl__rows_str(r, s.id);
        if (gpufl__row_instant(r, tbl, i)) {
            s.end = s.start;
            s.kind = (uint8_t)gpufl__tl_src_names(tbl)->page_instant;
        }
        break;
    default: break;
    }
    return s;
}

/* Every lane's items, in the timeline's order (by start, longer first):
 * the row assignment needs each lane's slices sorted. Streams first, so
 * that the names that repeat most (kernels) get the shortest numbers. */
static void feed_tracks(builder *b, bool streams)
{
    for (uint32_t t = 0; t < b->tl.ntracks && !b->err; t++) {
        bool stream = b->tl.tracks[t].kind == GPUFL__TL_STREAM;
        if (stream != streams)
            continue;
        size_t n;
        const uint64_t *item = gpufl__tl_items(&b->tl, t, &n);
        for (size_t i = 0; i < n && !b->err; i++) {
            unsigned kind = GPUFL__TL_REF_KIND(item[i]);
            uint32_t li = b->track_lane[t][stream ? LANE_STREAM : thread_lane_type(kind)];
            add(b, li, item_slice(b, kind, GPUFL__TL_REF_ROW(item[i])));
        }
    }
}

static int by_start(const void *x, const void *y)
{
    const slice *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->end > b->end ? -1 : a->end < b->end;
}

/* The work on the critical path (analyze/ana_critpath.h), in start order
 * as a lane's slices must come. */
static void feed_critpath(builder *b)
{
    const gpufl__ana_critpath *p = b->critpath;
    if (b->critpath_lane == NONE)
        return;
    slice *v = malloc(p->nwork * sizeof *v);
    if (!v) {
        b->err = GPUFL_ENOMEM;
        return;
    }
    for (size_t i = 0; i < p->nwork; i++)
        v[i] = item_slice(b, p->work[i].table, p->work[i].row);
    qsort(v, p->nwork, sizeof *v, by_start);
    for (size_t i = 0; i < p->nwork && !b->err; i++)
        add(b, b->critpath_lane, v[i]);
    free(v);
}

static void feed(builder *b)
{
    feed_critpath(b);
    feed_tracks(b, true);
    feed_tracks(b, false);
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
    feed(b);
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
        feed(b);
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
    free(b->track_lane);
    gpufl__timeline_free(&b->tl);
    free(b->names);
    gpufl__idmap_free(&b->name_index);
}

/* ---- JSON ---------------------------------------------------------------------- */

void gpufl__html_device_label(gpufl__hout *o, const gpufl__rows *r, uint32_t dev)
{
    char buf[400];
    const gpufl_trace_device *d = gpufl__rows_device(r, dev);
    const char *name = d ? gpufl__rows_str(r, d->name) : "";
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
            gpufl__html_device_label(o, &b->r, l->device);
            snprintf(label, sizeof label, "stream %" PRIu32, l->stream);
        } else if (l->type == LANE_CRITPATH) {
            gpufl__hout_json_str(o, "critical path");
            snprintf(label, sizeof label, "step %zu of %zu", b->critpath->occurrence, b->critpath->steps);
        } else if (l->type >= LANE_WINDOWS) {
            gpufl__hout_json_str(o, "gpufl");
            snprintf(label, sizeof label, "%s", l->type == LANE_WINDOWS ? "trace windows" : "triggers");
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

static double metric_value(const gpufl__dev_row *d, int m)
{
    switch (m) {
    case M_UTIL: return d->gpu_util_pct;
    case M_MEM: return (double)d->mem_used_bytes / (1024.0 * 1024.0);
    case M_POWER: return d->power_mw / 1000.0;
    default: return d->temp_c;
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

static void emit_series_of(gpufl__hout *o, const gpufl__rows *r, uint32_t dev, uint64_t t0)
{
    size_t n = 0, nsamples = gpufl__d_n(r);
    uint64_t mem_total = 0;
    for (size_t i = 0; i < nsamples; i++)
        if (gpufl__d_device(r, i) == dev) {
            n++;
            if ((gpufl__d_valid(r, i) & GPUFL__DS_MEMORY) && gpufl__d_mem_total(r, i))
                mem_total = gpufl__d_mem_total(r, i);
        }
    size_t per = (n + GPUFL__HTML_MAX_POINTS - 1) / GPUFL__HTML_MAX_POINTS;
    if (per == 0)
        per = 1;
    gpufl__hout_printf(o, "{\"dev\":%" PRIu32 ",\"label\":", dev);
    gpufl__html_device_label(o, r, dev);
    gpufl__hout_printf(o, ",\"memTotal\":%.1f,\"per\":%zu", (double)mem_total / (1024.0 * 1024.0), per);
    for (int m = -1; m < M_COUNT; m++) {
        gpufl__hout_printf(o, ",\"%s\":[", m < 0 ? "t" : metric_key[m]);
        size_t in_bucket = 0, buckets = 0, valid = 0;
        double sum = 0;
        uint64_t first = 0;
        for (size_t i = 0; i < nsamples; i++) {
            if (gpufl__d_device(r, i) != dev)
                continue;
            if (in_bucket == 0)
                first = gpufl__d_ts(r, i);
            if (m >= 0 && (gpufl__d_valid(r, i) & metric_bit[m])) {
                gpufl__dev_row d;
                gpufl__dev_row_get(r, i, &d);
                sum += metric_value(&d, m);
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

static void emit_series(gpufl__hout *o, const gpufl__rows *r, uint64_t t0)
{
    /* devices in index order: at most 65536 of them (uint16), few in practice */
    uint8_t seen[65536 / 8];
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < gpufl__d_n(r); i++)
        seen[gpufl__d_device(r, i) >> 3] |= (uint8_t)(1u << (gpufl__d_device(r, i) & 7));
    gpufl__hout_raw(o, "\"series\":[");
    bool first = true;
    for (uint32_t d = 0; d < 65536; d++) {
        if (!(seen[d >> 3] & (1u << (d & 7))))
            continue;
        if (!first)
            gpufl__hout_raw(o, ",\n");
        first = false;
        emit_series_of(o, r, d, t0);
    }
    gpufl__hout_raw(o, "]");
}

int gpufl__html_data(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    builder b;
    memset(&b, 0, sizeof b);
    b.t = t;
    b.critpath = r->critpath;
    gpufl__rows_open(&b.r, t);
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
                       gpufl__rows_n(&b.r, GPUFL__TBL_KERNEL), gpufl__rows_n(&b.r, GPUFL__TBL_COPY),
                       gpufl__rows_n(&b.r, GPUFL__TBL_MEMSET), gpufl__rows_n(&b.r, GPUFL__TBL_SYNC),
                       gpufl__rows_n(&b.r, GPUFL__TBL_SCOPE), gpufl__rows_n(&b.r, GPUFL__TBL_NVTX));
    /* only when there are some: the data of a session without them is unchanged */
    if (b.r.windows->n || b.r.triggers->n)
        gpufl__hout_printf(o, "\"flight\":{\"windows\":%zu,\"triggers\":%zu},\n", b.r.windows->n, b.r.triggers->n);
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
    emit_series(o, &b.r, b.t0);
    rc = gpufl__html_pm_data(o, t, &b.r, b.t0);
    gpufl__hout_raw(o, "}");
    builder_free(&b);
    return rc;
}
