/*
 * Merging the segments of a session into its trace (see segment.h).
 *
 * Segments come in session order (file order of their chunks or lines),
 * each with its rows sorted by time, its own tables of distinct launch
 * configurations, streams and callers, and (NDJSON) its own string ids.
 * The merge gives what one segment holding the whole session would give:
 *
 *   1. strings: every string of every segment's table, segment by segment
 *      and in id order, is interned into the trace's table, so the trace's
 *      ids number strings in the order of their first appearance;
 *   2. configurations, streams, callers: the same, record by record (after
 *      their string ids are translated), so the trace's rows number them in
 *      the order of their first use (merge_distinct.c);
 *   3. per row table, the order of the merged rows: a stable merge of the
 *      segments' sorted rows, equal times keeping segment order (which is
 *      what a stable sort of the whole session gives), kept as runs of
 *      consecutive rows of one segment; segments that do not overlap in
 *      time, the usual case, are one run each;
 *   4. per column, its values in that order, run by run, with rows of the
 *      distinct value tables and string ids translated; a segment's column
 *      is freed as soon as it has been copied, and columns are copied one
 *      after another, so the merge needs little more memory than the trace
 *      it makes.
 *
 * Scope begins and ends (joined into one row per scope), trace windows'
 * openings and closings (joined the same way) and device descriptions are
 * taken in session order on one thread while the other
 * tables are planned. Everything else runs on up to nthreads threads: step
 * 2 by segment and then by hash partition, step 3 one job per table, step 4
 * one job per block of rows of a column.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/idmap.h"
#include "gpufl/gpufl.h"
#include "read/merge_distinct.h"
#include "read/segment.h"
#include "read/work_pool.h"

/* What the numbers of one segment become in the trace. */
typedef struct seg_maps {
    const uint32_t *rec[GFL_X_COUNT]; /* GFL_X_CONFIG, _STREAM, _CALLER: row -> the trace's row */
    uint32_t nrec[GFL_X_COUNT];
} seg_maps;

/* Rows [out, out + n) of a table are rows [row, row + n) of segment seg. */
typedef struct run {
    uint64_t out;
    uint32_t seg, row, n;
} run;

/* How one row table is put together: its rows as runs of segments' rows,
 * in order (one run per segment when they do not overlap in time). */
typedef struct plan {
    size_t n;
    run *runs;
    size_t nruns, cap;
    size_t block_rows; /* rows per column job (the last one may have fewer) */
    size_t nblocks;
    uint32_t *seg_first, *seg_last; /* per segment: the blocks its rows fall in */
} plan;

/* Column jobs copy blocks of rows, so that a table's widest columns spread
 * over every thread: about 4 blocks per thread, of at least MIN_BLOCK and
 * at most MAX_BLOCK rows. */
#define MIN_BLOCK (1u << 12)
#define MAX_BLOCK (1u << 20)

typedef struct merge {
    gpufl_trace *t;
    gpufl__segment *const *segs;
    size_t nsegs;
    gpufl__str_map *str; /* per segment */
    seg_maps *maps;      /* per segment */
    gpufl__distinct distinct;
    plan plans[GFL_T_COUNT];
    int table_rc[GFL_T_COUNT];
    unsigned (*jobs)[3]; /* column jobs: table, column, block of rows */
    size_t njobs;
    /* per table, column and segment: blocks that read the segment's column
     * and are not yet copied; the job that copies the last frees it, so
     * that segments give their memory back while the trace's is filled */
    atomic_uint *left;
    gpufl__idmap open_scopes;
    gpufl__idmap windows; /* trace window index -> its row */
    size_t devices_cap;
} merge;

/* ---- 1, 2: strings and the tables of distinct values ------------------------ */

static int map_strings(merge *m)
{
    for (size_t s = 0; s < m->nsegs; s++) {
        const gpufl__strtab *st = m->segs[s]->strings;
        gpufl__str_map *sm = &m->str[s];
        if (!st)
            continue;
        sm->id = malloc((st->n ? st->n : 1) * sizeof *sm->id);
        if (!sm->id)
            return GPUFL_ENOMEM;
        sm->n = st->n;
        for (uint32_t id = 0; id < st->n; id++) {
            uint32_t len;
            const char *text = gpufl__strtab_str(st, id, &len);
            if (gpufl__strtab_intern(&m->t->strings, text, len, &sm->id[id]) != 0)
                return GPUFL_ENOMEM;
        }
    }
    return 0;
}

static int map_records(merge *m, unsigned nthreads)
{
    if (gpufl__distinct_merge(&m->distinct, m->t, m->segs, m->nsegs, m->str, nthreads) != 0)
        return GPUFL_ENOMEM;
    for (size_t s = 0; s < m->nsegs; s++)
        for (unsigned x = GFL_X_CONFIG; x <= GFL_X_CALLER; x++)
            m->maps[s].rec[x] = gpufl__distinct_rows(&m->distinct, x, s, &m->maps[s].nrec[x]);
    return 0;
}

/* ---- scopes and devices, in session order ------------------------------------ */

#define SSET(f, r, v)                                                                                                  \
    do {                                                                                                               \
        __typeof__(*((gpufl_trace_scopes *)0)->f) x_ = (__typeof__(x_))(v);                                            \
        if (gpufl__col_put(&R->t, &R->cols[SC_##f], (r), &x_, sizeof x_) != 0)                                         \
            return GPUFL_ENOMEM;                                                                                       \
    } while (0)

static int scope_begin(merge *m, const gpufl__str_map *sm, const gfl_event *ev)
{
    gpufl__rows *R = &m->t->rows[GFL_T_SCOPES];
    const gfl_scope_payload *s = &ev->u.scope;
    size_t r;
    if (gpufl__table_add_row(&R->t, &r) != 0)
        return GPUFL_ENOMEM;
    SSET(begin_ns, r, ev->h.ts);
    SSET(end_ns, r, 0);
    SSET(id, r, s->id);
    SSET(parent, r, s->parent_id);
    SSET(name, r, gpufl__str_map_get(sm, s->name));
    SSET(tid, r, ev->h.tid);
    SSET(depth, r, s->depth);
    SSET(implicit, r, 0);
    SSET(domain, r, 0);
    SSET(instant, r, 0);
    SSET(unended, r, 0); /* decided once the session's last time is known */
    SSET(has_seq, r, 0);
    SSET(seq, r, 0);
    return gpufl__idmap_put(&m->open_scopes, s->id, (uint32_t)r);
}

static int scope_end(merge *m, const gpufl__str_map *sm, const gfl_event *ev)
{
    gpufl__rows *R = &m->t->rows[GFL_T_SCOPES];
    uint32_t row;
    if (!gpufl__idmap_get(&m->open_scopes, ev->u.scope.id, &row)) {
        /* its begin was not read (lost, or before the file): the end line
         * describes the whole scope */
        gfl_event begin = *ev;
        begin.h.ts = ev->u.scope.begin_ts;
        int rc = scope_begin(m, sm, &begin);
        if (rc != 0 || !gpufl__idmap_get(&m->open_scopes, ev->u.scope.id, &row))
            return rc ? rc : GPUFL_ENOMEM;
    }
    SSET(end_ns, row, ev->h.ts);
    SSET(implicit, row, (ev->h.flags & GFL_F_SCOPE_IMPLICIT) != 0);
    return 0;
}

static int device_info(merge *m, const gpufl__str_map *sm, const gfl_event *ev)
{
    gpufl_trace *t = m->t;
    const gfl_device_info_payload *d = &ev->u.info;
    if (t->info.ndevices == m->devices_cap) {
        size_t cap = m->devices_cap ? m->devices_cap * 2 : 8;
        gpufl_trace_device *p = realloc(t->devices, cap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        t->devices = p;
        m->devices_cap = cap;
    }
    gpufl_trace_device *out = &t->devices[t->info.ndevices++];
    memset(out, 0, sizeof *out);
    out->index = ev->h.device;
    out->name = gpufl__str_map_get(sm, d->name);
    out->uuid = gpufl__str_map_get(sm, d->uuid);
    out->pci_bus_id = gpufl__str_map_get(sm, d->pci_bus_id);
    out->cc_major = d->cc_major;
    out->cc_minor = d->cc_minor;
    out->sm_count = d->sm_count;
    out->memory_total_bytes = d->memory_total_bytes;
    out->power_limit_mw = d->power_limit_mw;
    out->max_sm_clock_mhz = d->max_sm_clock_mhz;
    out->max_mem_clock_mhz = d->max_mem_clock_mhz;
    out->pcie_max_gen = d->pcie_max_gen;
    out->pcie_max_width = d->pcie_max_width;
    if (!t->info.driver_version)
        t->info.driver_version = gpufl__str_map_get(sm, d->driver_version);
    if (!t->info.cuda_driver_version && d->cuda_driver_version > 0) {
        char v[32];
        snprintf(v, sizeof v, "%d.%d", d->cuda_driver_version / 1000, d->cuda_driver_version % 1000 / 10);
        if (gpufl__strtab_intern(&t->strings, v, strlen(v), &t->info.cuda_driver_version) != 0)
            return GPUFL_ENOMEM;
    }
    return 0;
}

/* ---- the crash: its head, its stack's pieces and its open scopes, in
 * file order (a torn file may lack some; the first crash is the session's) */

static int crash_head(merge *m, const gfl_event *ev)
{
    gpufl_trace *t = m->t;
    gpufl_trace_crash *c = &t->crash;
    if (t->has_crash)
        return 0;
    const gfl_crash_payload *p = &ev->u.crash;
    c->ts_ns = ev->h.ts;
    c->tid = ev->h.tid;
    c->signal = p->signal;
    c->code = p->code;
    c->action = p->action;
    c->address = p->address;
    c->sender_pid = p->sender_pid;
    c->stack_unavailable = (ev->h.flags & GFL_F_CRASH_NO_UNWIND) != 0;
    c->stack_truncated = p->stack_truncated;
    c->scopes_lost = p->scopes_lost;
    const char *name = gpufl__signal_name(p->signal);
    const char *code = gpufl__signal_code_name(p->signal, p->code);
    if (gpufl__strtab_intern(&t->strings, name, strlen(name), &c->signal_name) != 0 ||
        (code && gpufl__strtab_intern(&t->strings, code, strlen(code), &c->code_name) != 0))
        return GPUFL_ENOMEM;
    t->has_crash = 1;
    return 0;
}

static int crash_stack(merge *m, const gpufl__str_map *sm, const gfl_event *ev)
{
    gpufl_trace *t = m->t;
    const gfl_stack_payload *p = &ev->u.stack;
    if (p->count > GFL_STACK_FRAMES_PER_EVENT || (uint32_t)p->first + p->count > p->total)
        return 0; /* not ours to place: the crash keeps the frames it can */
    if (p->total > t->crash.nframes) {
        gpufl_trace_crash_frame *f = realloc(t->crash_frames, p->total * sizeof *f);
        if (!f)
            return GPUFL_ENOMEM;
        memset(f + t->crash.nframes, 0, (p->total - t->crash.nframes) * sizeof *f);
        t->crash_frames = f;
        t->crash.frames = f;
        t->crash.nframes = p->total;
    }
    for (unsigned i = 0; i < p->count; i++) {
        gpufl_trace_crash_frame *f = &t->crash_frames[p->first + i];
        f->module = gpufl__str_map_get(sm, p->frames[i].module);
        f->offset = p->frames[i].offset;
        f->present = 1;
    }
    if (p->truncated)
        t->crash.stack_truncated = 1;
    return 0;
}

static int crash_scope(merge *m, const gpufl__str_map *sm, const gfl_event *ev)
{
    gpufl_trace *t = m->t;
    if (t->crash.nscopes == t->crash_scopes_cap) {
        size_t cap = t->crash_scopes_cap ? 2 * t->crash_scopes_cap : 16;
        gpufl_trace_crash_scope *v = realloc(t->crash_scopes, cap * sizeof *v);
        if (!v)
            return GPUFL_ENOMEM;
        t->crash_scopes = v;
        t->crash_scopes_cap = cap;
    }
    gpufl_trace_crash_scope *s = &t->crash_scopes[t->crash.nscopes++];
    s->id = ev->u.scope.id;
    s->parent = ev->u.scope.parent_id;
    s->begin_ns = ev->u.scope.begin_ts;
    s->tid = ev->h.tid;
    s->name = gpufl__str_map_get(sm, ev->u.scope.name);
    s->depth = ev->u.scope.depth;
    t->crash.scopes = t->crash_scopes;
    return 0;
}

#define WSET(f, r, v)                                                                                                  \
    do {                                                                                                               \
        __typeof__(*((gpufl_trace_windows *)0)->f) x_ = (__typeof__(x_))(v);                                           \
        if (gpufl__col_put(&R->t, &R->cols[WC_##f], (r), &x_, sizeof x_) != 0)                                         \
            return GPUFL_ENOMEM;                                                                                       \
    } while (0)

/* A trace window's opening (end_ts 0) or closing, joined by index into one
 * row. A closing event holds the whole window (its ts is the begin), so a
 * window whose opening was not read, or came after it, is still whole; one
 * that never closed keeps end 0 until gpufl__trace_end_open ends it. */
static int trace_window(merge *m, const gpufl__str_map *sm, const gfl_event *ev)
{
    gpufl__rows *R = &m->t->rows[GFL_T_TRACE_WINDOWS];
    const gfl_trace_window_payload *w = &ev->u.trace_window;
    uint32_t row;
    if (!gpufl__idmap_get(&m->windows, w->index, &row)) {
        size_t r;
        if (gpufl__table_add_row(&R->t, &r) != 0)
            return GPUFL_ENOMEM;
        WSET(begin_ns, r, ev->h.ts);
        WSET(end_ns, r, 0);
        WSET(index, r, w->index);
        WSET(reason, r, gpufl__str_map_get(sm, w->reason));
        WSET(detail, r, gpufl__str_map_get(sm, w->detail));
        WSET(unended, r, 0);
        row = (uint32_t)r;
        if (gpufl__idmap_put(&m->windows, w->index, row) != 0)
            return GPUFL_ENOMEM;
    }
    if (w->end_ts) {
        WSET(begin_ns, row, ev->h.ts);
        WSET(end_ns, row, w->end_ts);
    }
    return 0;
}

/* Which engine recorded the session; the last record wins. */
static int engine(merge *m, const gpufl__str_map *sm, const gfl_event *ev)
{
    gpufl_trace_info *i = &m->t->info;
    i->engine_requested = gpufl__str_map_get(sm, ev->u.engine.requested);
    i->engine = gpufl__str_map_get(sm, ev->u.engine.ran);
    i->engine_plugin = gpufl__str_map_get(sm, ev->u.engine.plugin);
    i->engine_reason = gpufl__str_map_get(sm, ev->u.engine.reason);
    return 0;
}

static int take_one(merge *m, const gpufl__str_map *sm, const gfl_event *ev)
{
    switch (ev->h.type) {
    case GFL_EV_SCOPE_BEGIN: return scope_begin(m, sm, ev);
    case GFL_EV_SCOPE_END: return scope_end(m, sm, ev);
    case GFL_EV_CRASH: return crash_head(m, ev);
    case GFL_EV_CRASH_STACK: return crash_stack(m, sm, ev);
    case GFL_EV_CRASH_SCOPE: return crash_scope(m, sm, ev);
    case GFL_EV_ENGINE: return engine(m, sm, ev);
    case GFL_EV_TRACE_WINDOW: return trace_window(m, sm, ev);
    default: return device_info(m, sm, ev);
    }
}

/* The events kept in order, all segments, then the scope and trace window
 * rows sorted. */
static int take_ordered(merge *m)
{
    for (size_t s = 0; s < m->nsegs; s++) {
        gpufl__segment *g = m->segs[s];
        for (size_t i = 0; i < g->nordered; i++) {
            const gfl_event *ev = &g->ordered[i];
            int rc = take_one(m, &m->str[s], ev);
            if (rc != 0)
                return rc;
        }
        free(g->ordered); /* taken in */
        g->ordered = NULL;
        g->nordered = g->ordered_cap = 0;
    }
    if (gpufl__table_finish(&m->t->rows[GFL_T_SCOPES].t, NULL) != 0)
        return GPUFL_ENOMEM;
    return gpufl__table_finish(&m->t->rows[GFL_T_TRACE_WINDOWS].t, NULL);
}

/* ---- 3: the order of the rows ---------------------------------------------------- */

static inline uint64_t key_at(const gpufl__segment *g, unsigned tab, size_t r)
{
    const gpufl__rows *R = &g->rows[tab];
    const gpufl__col *c = &R->cols[R->t.key];
    return c->data ? ((const uint64_t *)(const void *)c->data)[r] : 0;
}

/* A heap of segments by (key of their next row, segment number). */
typedef struct cursor {
    uint64_t key;
    uint32_t seg;
    uint32_t row;
} cursor;

static inline int before(const cursor *a, const cursor *b)
{
    return a->key < b->key || (a->key == b->key && a->seg < b->seg);
}

static void sift_down(cursor *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, min = i;
        if (l < n && before(&h[l], &h[min]))
            min = l;
        if (r < n && before(&h[r], &h[min]))
            min = r;
        if (min == i)
            return;
        cursor tmp = h[i];
        h[i] = h[min];
        h[min] = tmp;
        i = min;
    }
}

/* Appends rows [row, row + 1) of segment seg as the next output row,
 * extending the last run when it continues it. 0 or GPUFL_ENOMEM. */
static int emit(plan *p, uint64_t out, uint32_t seg, uint32_t row)
{
    if (p->nruns) {
        run *last = &p->runs[p->nruns - 1];
        if (last->seg == seg && last->row + last->n == row) {
            last->n++;
            return 0;
        }
    }
    if (p->nruns == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        run *v = realloc(p->runs, cap * sizeof *v);
        if (!v)
            return GPUFL_ENOMEM;
        p->runs = v;
        p->cap = cap;
    }
    p->runs[p->nruns++] = (run){out, seg, row, 1};
    return 0;
}

/* The stable merge of the segments' sorted rows of table tab into runs,
 * and their exact times renumbered into the trace's list as rows come out. */
static int merge_order(merge *m, unsigned tab, plan *p)
{
    gpufl__exact_vec *exact = &m->t->rows[tab].exact;
    cursor *heap = malloc(m->nsegs * sizeof *heap);
    size_t *next_exact = calloc(m->nsegs, sizeof *next_exact);
    if (!heap || !next_exact) {
        free(heap);
        free(next_exact);
        return GPUFL_ENOMEM;
    }
    size_t nh = 0;
    for (size_t s = 0; s < m->nsegs; s++)
        if (m->segs[s]->rows[tab].t.n)
            heap[nh++] = (cursor){key_at(m->segs[s], tab, 0), (uint32_t)s, 0};
    for (size_t i = nh; i-- > 0;)
        sift_down(heap, nh, i);
    size_t out = 0;
    int rc = 0;
    while (nh && rc == 0) {
        cursor *c = &heap[0];
        const gpufl__segment *g = m->segs[c->seg];
        const gpufl__rows *R = &g->rows[tab];
        /* the run of this segment that comes before every other's next row */
        cursor limit = {UINT64_MAX, UINT32_MAX, 0};
        if (nh > 1)
            limit = heap[1];
        if (nh > 2 && before(&heap[2], &limit))
            limit = heap[2];
        do {
            if (next_exact[c->seg] < R->exact.n && R->exact.v[next_exact[c->seg]].row == c->row) {
                gpufl_trace_exact e = R->exact.v[next_exact[c->seg]++];
                e.row = out;
                if ((rc = gpufl__exact_push(exact, &e)) != 0)
                    break;
            }
            if ((rc = emit(p, out++, c->seg, c->row)) != 0)
                break;
            if (++c->row == R->t.n) {
                heap[0] = heap[--nh];
                break;
            }
            c->key = key_at(g, tab, c->row);
        } while (before(c, &limit));
        sift_down(heap, nh, 0);
    }
    free(heap);
    free(next_exact);
    return rc;
}

static int plan_table(merge *m, unsigned tab)
{
    if (tab == GFL_T_SCOPES)
        return take_ordered(m);
    if (tab == GFL_T_TRACE_WINDOWS)
        return 0; /* take_ordered's */
    plan *p = &m->plans[tab];
    bool in_order = true;
    uint64_t last = 0;
    for (size_t s = 0; s < m->nsegs; s++) {
        size_t n = m->segs[s]->rows[tab].t.n;
        if (!n)
            continue;
        if (key_at(m->segs[s], tab, 0) < last)
            in_order = false;
        last = key_at(m->segs[s], tab, n - 1);
        p->n += n;
    }
    if (p->n > UINT32_MAX)
        return GPUFL_ENOMEM; /* rows are numbered by 32-bit row numbers */
    if (!in_order)
        return merge_order(m, tab, p);
    /* one run per segment */
    gpufl__exact_vec *exact = &m->t->rows[tab].exact;
    size_t base = 0;
    for (size_t s = 0; s < m->nsegs; s++) {
        const gpufl__rows *R = &m->segs[s]->rows[tab];
        for (size_t i = 0; i < R->exact.n; i++) {
            gpufl_trace_exact e = R->exact.v[i];
            e.row += base;
            if (gpufl__exact_push(exact, &e) != 0)
                return GPUFL_ENOMEM;
        }
        if (R->t.n) {
            if (emit(p, base, (uint32_t)s, 0) != 0)
                return GPUFL_ENOMEM;
            p->runs[p->nruns - 1].n = (uint32_t)R->t.n;
        }
        base += R->t.n;
    }
    return 0;
}

static void plan_job(void *ctx, size_t job, unsigned worker)
{
    (void)worker;
    merge *m = ctx;
    m->table_rc[job] = plan_table(m, (unsigned)job);
}

/* ---- 4: the columns ------------------------------------------------------------ */

/* n 32-bit values through map (src NULL: n zeros). */
static void copy_mapped(uint32_t *dst, const uint8_t *src, size_t n, const uint32_t *map, uint32_t nmap)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t v = 0;
        if (src)
            memcpy(&v, src + 4 * i, 4);
        dst[i] = v < nmap ? map[v] : 0;
    }
}

/* The map of column values of kind x for segment s; NULL when values stay. */
static const uint32_t *value_map(const merge *m, size_t s, unsigned x, uint32_t *n)
{
    const seg_maps *sm = &m->maps[s];
    if (x == GFL_X_STRING) {
        *n = m->str[s].n;
        return m->str[s].id;
    }
    *n = sm->nrec[x];
    return x != GFL_X_NONE ? sm->rec[x] : NULL;
}

/* Whether column c of table tab has a nonzero value anywhere once merged. */
static bool column_needed(const merge *m, unsigned tab, unsigned c)
{
    unsigned x = gpufl__tables[tab].xlat[c];
    for (size_t s = 0; s < m->nsegs; s++) {
        const gpufl__rows *R = &m->segs[s]->rows[tab];
        uint32_t nmap;
        const uint32_t *map = value_map(m, s, x, &nmap);
        if (R->cols[c].data || (map && R->t.n && nmap && map[0] != 0))
            return true;
    }
    return false;
}

/* The first run that holds row `row` of p. */
static size_t run_at(const plan *p, uint64_t row)
{
    size_t lo = 0, hi = p->nruns;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->runs[mid].out <= row)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Copies rows [a, b) of column c of table tab from the segments. */
static void copy_block(merge *m, unsigned tab, unsigned c, uint64_t a, uint64_t b)
{
    const plan *p = &m->plans[tab];
    size_t size = gpufl__tables[tab].sizes[c];
    unsigned x = gpufl__tables[tab].xlat[c];
    uint8_t *dst = m->t->rows[tab].cols[c].data;
    for (size_t k = run_at(p, a); k < p->nruns && p->runs[k].out < b; k++) {
        const run *r = &p->runs[k];
        uint64_t lo = r->out > a ? r->out : a, hi = r->out + r->n < b ? r->out + r->n : b;
        size_t row = r->row + (size_t)(lo - r->out), n = (size_t)(hi - lo);
        const uint8_t *src = m->segs[r->seg]->rows[tab].cols[c].data;
        uint32_t nmap;
        const uint32_t *map = value_map(m, r->seg, x, &nmap);
        if (map)
            copy_mapped((uint32_t *)(void *)(dst + 4 * lo), src ? src + 4 * row : NULL, n, map, nmap);
        else if (src)
            memcpy(dst + size * lo, src + size * row, n * size);
    }
}

static void column_job(void *ctx, size_t job, unsigned worker)
{
    (void)worker;
    merge *m = ctx;
    unsigned tab = m->jobs[job][0], c = m->jobs[job][1];
    uint64_t a = (uint64_t)m->jobs[job][2] * m->plans[tab].block_rows, b = a + m->plans[tab].block_rows;
    if (b > m->plans[tab].n)
        b = m->plans[tab].n;
    if (m->t->rows[tab].cols[c].data)
        copy_block(m, tab, c, a, b);
    const plan *p = &m->plans[tab];
    unsigned block = m->jobs[job][2];
    for (size_t s = 0; s < m->nsegs; s++) {
        if (p->seg_first[s] > block || p->seg_last[s] < block)
            continue;
        /* acq_rel: the last job sees every other job's reads of the
         * segment's column done before it frees it */
        atomic_uint *left = &m->left[((size_t)tab * GFL_MAX_COLS + c) * m->nsegs + s];
        if (atomic_fetch_sub_explicit(left, 1, memory_order_acq_rel) == 1)
            gpufl__col_free(&m->segs[s]->rows[tab].cols[c]);
    }
}

/* The blocks of rows each segment's rows fall in, for freeing (plan). */
static int segment_blocks(merge *m, plan *p)
{
    p->seg_first = malloc((m->nsegs ? m->nsegs : 1) * sizeof *p->seg_first);
    p->seg_last = malloc((m->nsegs ? m->nsegs : 1) * sizeof *p->seg_last);
    if (!p->seg_first || !p->seg_last)
        return GPUFL_ENOMEM;
    for (size_t s = 0; s < m->nsegs; s++) {
        p->seg_first[s] = UINT32_MAX;
        p->seg_last[s] = 0;
    }
    for (size_t k = 0; k < p->nruns; k++) {
        const run *r = &p->runs[k];
        uint32_t first = (uint32_t)(r->out / p->block_rows), last = (uint32_t)((r->out + r->n - 1) / p->block_rows);
        if (first < p->seg_first[r->seg])
            p->seg_first[r->seg] = first;
        if (last > p->seg_last[r->seg])
            p->seg_last[r->seg] = last;
    }
    return 0;
}

/* ---- the whole merge --------------------------------------------------------------- */

/* The tables in the order their columns are copied: widest first, so the
 * longest jobs start early; column by column, so that the segments' memory
 * is given back while the trace's is filled. */
static const unsigned copy_order[] = {
    GFL_T_KERNELS,        GFL_T_NVTX,         GFL_T_COPIES,   GFL_T_MEMSETS,         GFL_T_SYNCS,      GFL_T_MEMORY,
    GFL_T_DEVICE_SAMPLES, GFL_T_HOST_SAMPLES, GFL_T_TRIGGERS, GFL_T_ALLOCATOR,       GFL_T_PC_SAMPLES, GFL_T_PM_SAMPLES,
    GFL_T_RANGE_METRICS,  GFL_T_SASS_METRICS, GFL_T_CLOCKS,   GFL_T_NCCL_COLLECTIVES};

static int merge_rows(merge *m, unsigned nthreads)
{
    gpufl__parallel_for(nthreads, GFL_T_COUNT, plan_job, m);
    for (unsigned tab = 0; tab < GFL_T_COUNT; tab++)
        if (m->table_rc[tab] != 0)
            return m->table_rc[tab];
    /* the trace's columns (mapped, not yet touched), and the jobs */
    m->left = malloc((size_t)GFL_T_COUNT * GFL_MAX_COLS * (m->nsegs ? m->nsegs : 1) * sizeof *m->left);
    if (!m->left)
        return GPUFL_ENOMEM;
    size_t njobs = 0;
    for (size_t k = 0; k < sizeof copy_order / sizeof copy_order[0]; k++) {
        unsigned tab = copy_order[k];
        plan *p = &m->plans[tab];
        p->block_rows = p->n / ((size_t)nthreads * 4);
        p->block_rows = p->block_rows < MIN_BLOCK ? MIN_BLOCK : p->block_rows > MAX_BLOCK ? MAX_BLOCK : p->block_rows;
        p->nblocks = p->n ? (p->n + p->block_rows - 1) / p->block_rows : 1;
        if (segment_blocks(m, p) != 0)
            return GPUFL_ENOMEM;
        for (unsigned c = 0; c < gpufl__tables[tab].ncols; c++) {
            if (column_needed(m, tab, c) && gpufl__col_alloc_rows(&m->t->rows[tab].cols[c], p->n) != 0)
                return GPUFL_ENOMEM;
            for (size_t s = 0; s < m->nsegs; s++) {
                unsigned blocks = p->seg_first[s] <= p->seg_last[s] ? p->seg_last[s] - p->seg_first[s] + 1 : 0;
                atomic_init(&m->left[((size_t)tab * GFL_MAX_COLS + c) * m->nsegs + s], blocks);
            }
            njobs += p->nblocks;
        }
    }
    m->jobs = malloc(njobs * sizeof *m->jobs);
    if (!m->jobs)
        return GPUFL_ENOMEM;
    for (size_t k = 0; k < sizeof copy_order / sizeof copy_order[0]; k++) {
        unsigned tab = copy_order[k];
        for (unsigned c = 0; c < gpufl__tables[tab].ncols; c++)
            for (size_t i = 0; i < m->plans[tab].nblocks; i++) {
                unsigned *j = m->jobs[m->njobs++];
                j[0] = tab;
                j[1] = c;
                j[2] = (unsigned)i;
            }
    }
    gpufl__parallel_for(nthreads, m->njobs, column_job, m);
    for (unsigned tab = 0; tab < GFL_T_COUNT; tab++) {
        if (tab == GFL_T_SCOPES || tab == GFL_T_TRACE_WINDOWS)
            continue;
        gpufl__table *T = &m->t->rows[tab].t;
        T->n = T->cap = m->plans[tab].n;
    }
    return 0;
}

int gpufl__trace_merge(gpufl_trace *t, gpufl__segment *const *segs, size_t nsegs, unsigned nthreads)
{
    merge m = {.t = t, .segs = segs, .nsegs = nsegs};
    m.maps = calloc(nsegs ? nsegs : 1, sizeof *m.maps);
    m.str = calloc(nsegs ? nsegs : 1, sizeof *m.str);
    int rc = m.maps && m.str ? 0 : GPUFL_ENOMEM;
    if (rc == 0)
        rc = map_strings(&m);
    if (rc == 0)
        rc = map_records(&m, nthreads ? nthreads : 1);
    if (rc == 0)
        rc = merge_rows(&m, nthreads ? nthreads : 1);
    for (size_t s = 0; s < nsegs; s++) {
        for (unsigned ty = 0; ty < 256; ty++)
            t->counts[ty] += segs[s]->counts[ty];
        for (unsigned ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
            for (unsigned r = 0; r < 16; r++)
                t->dropped[ch][r] += segs[s]->dropped[ch][r];
        if (segs[s]->last_ns > t->info.last_ns)
            t->info.last_ns = segs[s]->last_ns;
    }
    for (unsigned tab = 0; tab < GFL_T_COUNT; tab++) {
        free(m.plans[tab].runs);
        free(m.plans[tab].seg_first);
        free(m.plans[tab].seg_last);
    }
    free(m.left);
    if (m.str)
        for (size_t s = 0; s < nsegs; s++)
            free(m.str[s].id);
    gpufl__distinct_free(&m.distinct);
    free(m.str);
    free(m.maps);
    free(m.jobs);
    gpufl__idmap_free(&m.open_scopes);
    gpufl__idmap_free(&m.windows);
    return rc;
}
