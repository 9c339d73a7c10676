/*
 * The idle time analysis (analysis.h): per device and per stream, the gaps
 * between pieces of GPU work, split into host, sync and other after
 * Holistic Trace Analysis's breakdown.
 *
 * One merged walk over the work in start order: every device and stream
 * row keeps its busy frontier (the latest end so far), so a piece of work
 * that starts after it closes a gap. A gap is classified with two indexes
 * built first: per thread, the union of its sync calls with prefix sums (the
 * sync time inside any stretch in O(log n)), and per stream the times of
 * the stream-wait-event calls made on it.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/trace_access.h"
#include "core/event.h"

/* The union of one thread's sync calls: [s[j], e[j]) sorted and disjoint,
 * before[j] the length of those before j. at: where the last search ended,
 * the next one's starting point. */
typedef struct sync_thread {
    uint64_t *s, *e, *before;
    size_t n;
    size_t at;
} sync_thread;

typedef struct row_state {
    gpufl__ana_idle_row r;
    uint64_t run_start;   /* start of the current busy stretch */
    uint64_t prev_launch; /* streams: when the previous work was launched (its API call, else
                             its start) */
    uint32_t swe;         /* streams: index in swe_of of the stream-wait-event list, or NONE */
} row_state;

typedef struct idle_build {
    const ta *a;
    sync_thread *threads;
    size_t nthreads;
    uint32_t *caller_thread; /* per caller row */
    uint64_t *swe_ts;        /* stream-wait-event call starts, grouped by stream */
    size_t *swe_start;       /* group g: swe_ts[swe_start[g]..swe_start[g+1]) */
    size_t nswe;
    row_state *rows;
    size_t nrows, cap;
    ana_map row_of;                 /* (device, stream or ALL_STREAMS) -> rows index */
    uint32_t *dev_row, *stream_row; /* per row of the streams table */
} idle_build;

static int index_syncs(idle_build *b)
{
    const ta *a = b->a;
    size_t n = ta_y_n(a);
    ana_map thread_of = {0};
    uint32_t *k_of = malloc((n ? n : 1) * sizeof *k_of);
    int rc = k_of ? 0 : GPUFL_ENOMEM;
    size_t cap = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        uint32_t k;
        int put = gpufl__ana_map_put(&thread_of, ta_y_tid(a, i), 0, (uint32_t)b->nthreads, &k);
        if (put < 0 || (put == 0 && gpufl__ana_grow(&b->threads, &cap, b->nthreads + 1, sizeof *b->threads) != 0)) {
            rc = GPUFL_ENOMEM;
            break;
        }
        if (put == 0)
            memset(&b->threads[b->nthreads++], 0, sizeof *b->threads);
        b->threads[k].n++;
        k_of[i] = k;
    }
    for (size_t k = 0; k < b->nthreads && rc == 0; k++) {
        sync_thread *th = &b->threads[k];
        th->s = malloc(th->n * sizeof *th->s);
        th->e = malloc(th->n * sizeof *th->e);
        th->before = malloc(th->n * sizeof *th->before);
        if (!th->s || !th->e || !th->before)
            rc = GPUFL_ENOMEM;
        th->n = 0;
    }
    /* syncs come by start: merging each thread's in that order */
    for (size_t i = 0; i < n && rc == 0; i++) {
        sync_thread *th = &b->threads[k_of[i]];
        uint64_t s = ta_y_start(a, i), e = ta_y_end(a, i);
        if (e <= s)
            continue;
        if (th->n && s <= th->e[th->n - 1]) {
            if (e > th->e[th->n - 1])
                th->e[th->n - 1] = e;
            continue;
        }
        th->before[th->n] = th->n ? th->before[th->n - 1] + (th->e[th->n - 1] - th->s[th->n - 1]) : 0;
        th->s[th->n] = s;
        th->e[th->n++] = e;
    }
    size_t nc = a->cl->n;
    if (rc == 0 && nc && !(b->caller_thread = malloc(nc * sizeof *b->caller_thread)))
        rc = GPUFL_ENOMEM;
    for (size_t c = 0; c < nc && rc == 0; c++) {
        uint32_t k;
        b->caller_thread[c] =
            gpufl__ana_map_get(&thread_of, ta_caller_tid(a, (uint32_t)c), 0, &k) ? k : GPUFL__ANA_NONE;
    }
    free(k_of);
    gpufl__ana_map_free(&thread_of);
    return rc;
}

/* Time of thread k inside a sync call before t. Gaps come in nearly
 * increasing time, so the search starts where the previous one ended (a
 * binary search per gap was this analysis's largest cost). */
static uint64_t synced_before(sync_thread *th, uint64_t t)
{
    size_t p = gpufl__ana_count_le(th->s, th->n, th->at, t);
    th->at = p;
    if (p == 0)
        return 0;
    size_t j = p - 1; /* the last call begun by t */
    uint64_t in = (t < th->e[j] ? t : th->e[j]) - th->s[j];
    return th->before[j] + in;
}

/* Groups the stream-wait-event calls by the (device, stream) they made wait. */
static int index_waits(idle_build *b, ana_map *swe_of)
{
    const ta *a = b->a;
    size_t n = ta_y_n(a), cap = 0;
    uint32_t *g_of = malloc((n ? n : 1) * sizeof *g_of);
    size_t *count = NULL;
    int rc = g_of ? 0 : GPUFL_ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        g_of[i] = GPUFL__ANA_NONE;
        if (ta_y_kind(a, i) != GFL_SYNC_STREAM_WAIT_EVENT)
            continue;
        uint32_t s = ta_y_stream_row(a, i), g;
        int put = gpufl__ana_map_put(swe_of, ta_stream_device(a, s), ta_stream_id(a, s), (uint32_t)b->nswe, &g);
        if (put < 0 || (put == 0 && gpufl__ana_grow(&count, &cap, b->nswe + 2, sizeof *count) != 0)) {
            rc = GPUFL_ENOMEM;
            break;
        }
        if (put == 0)
            count[b->nswe++] = 0;
        count[g]++;
        g_of[i] = g;
    }
    if (rc == 0 && b->nswe) {
        b->swe_start = calloc(b->nswe + 1, sizeof *b->swe_start);
        size_t total = 0;
        for (size_t g = 0; g < b->nswe; g++)
            total += count[g];
        b->swe_ts = malloc(total * sizeof *b->swe_ts);
        if (!b->swe_start || !b->swe_ts)
            rc = GPUFL_ENOMEM;
        for (size_t g = 0; g < b->nswe && rc == 0; g++)
            b->swe_start[g + 1] = b->swe_start[g] + count[g];
        for (size_t g = 0; g < b->nswe && rc == 0; g++)
            count[g] = b->swe_start[g];
        for (size_t i = 0; i < n && rc == 0; i++)
            if (g_of[i] != GPUFL__ANA_NONE)
                b->swe_ts[count[g_of[i]]++] = ta_y_start(a, i); /* by start, as the table is */
    }
    free(count);
    free(g_of);
    return rc;
}

/* Whether a stream-wait-event call on the stream of list g began in
 * [from, to). */
static bool waited(const idle_build *b, uint32_t g, uint64_t from, uint64_t to)
{
    if (g == GPUFL__ANA_NONE || from >= to)
        return false;
    size_t lo = b->swe_start[g], hi = b->swe_start[g + 1]; /* first ts >= from */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->swe_ts[mid] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < b->swe_start[g + 1] && b->swe_ts[lo] < to;
}

static int row_for(idle_build *b, uint32_t dev, uint32_t stream, const ana_map *swe_of, uint32_t *out)
{
    int put = gpufl__ana_map_put(&b->row_of, dev, stream, (uint32_t)b->nrows, out);
    if (put < 0)
        return put;
    if (put == 1)
        return 0;
    if (gpufl__ana_grow(&b->rows, &b->cap, b->nrows + 1, sizeof *b->rows) != 0)
        return GPUFL_ENOMEM;
    row_state *r = &b->rows[b->nrows++];
    memset(r, 0, sizeof *r);
    r->r.device = dev;
    r->r.stream = stream;
    r->swe = GPUFL__ANA_NONE;
    uint32_t g;
    if (stream != GPUFL__ANA_ALL_STREAMS && gpufl__ana_map_get(swe_of, dev, stream, &g))
        r->swe = g;
    return 0;
}

/* A gap [g0, g1) split by cause. */
typedef struct gap_split {
    uint64_t g0; /* UINT64_MAX: none computed */
    uint64_t host, sync, other;
} gap_split;

/* Splits the gap [g0, g1) before work op (on stream st) by cause. */
static void classify(idle_build *b, const ta_op *op, const row_state *st, uint64_t g0, uint64_t g1, gap_split *out)
{
    *out = (gap_split){.g0 = g0};
    uint64_t a = op->api_start;
    uint32_t k = b->caller_thread ? b->caller_thread[op->caller] : GPUFL__ANA_NONE;
    if (a == 0) {
        out->other = g1 - g0;
        return;
    }
    uint64_t cut = a < g0 ? g0 : a > g1 ? g1 : a; /* before it: not launched yet */
    uint64_t synced = k == GPUFL__ANA_NONE ? 0 : synced_before(&b->threads[k], cut) - synced_before(&b->threads[k], g0);
    out->sync = synced;
    out->host = (cut - g0) - synced;
    if (cut < g1) {
        if (waited(b, st->swe, st->prev_launch, a))
            out->sync += g1 - cut;
        else
            out->other = g1 - cut;
    }
}

/* Adds op to row rs (its stream's row st). A gap before op ends at op's
 * start on every row, so the split depends only on where it begins: the
 * device row's gap is often its stream's, and *last (the split computed
 * last for op) is reused then. */
static void add_op(idle_build *b, row_state *rs, const row_state *st, const ta_op *op, gap_split *last)
{
    gpufl__ana_idle_row *r = &rs->r;
    if (r->ops++ == 0) {
        r->first_ns = op->start;
        rs->run_start = op->start;
        r->last_ns = op->end;
        return;
    }
    if (op->start > r->last_ns) {
        r->gaps++;
        r->idle_ns += op->start - r->last_ns;
        if (last->g0 != r->last_ns)
            classify(b, op, st, r->last_ns, op->start, last);
        r->host_ns += last->host;
        r->sync_ns += last->sync;
        r->other_ns += last->other;
        r->busy_ns += r->last_ns - rs->run_start;
        rs->run_start = op->start;
    }
    if (op->end > r->last_ns)
        r->last_ns = op->end;
}

static int walk(idle_build *b, const ana_map *swe_of)
{
    const ta *a = b->a;
    size_t nst = ta_streams_n(a);
    b->dev_row = malloc((nst ? nst : 1) * sizeof *b->dev_row);
    b->stream_row = malloc((nst ? nst : 1) * sizeof *b->stream_row);
    if (!b->dev_row || !b->stream_row)
        return GPUFL_ENOMEM;
    for (size_t s = 0; s < nst; s++)
        b->dev_row[s] = b->stream_row[s] = GPUFL__ANA_NONE;
    ta_ops it;
    ta_op op;
    ta_ops_begin(&it, a);
    while (ta_ops_next(&it, &op)) {
        uint32_t s = op.stream_row;
        if (b->dev_row[s] == GPUFL__ANA_NONE) {
            uint32_t dev = ta_stream_device(a, s);
            int rc = row_for(b, dev, GPUFL__ANA_ALL_STREAMS, swe_of, &b->dev_row[s]);
            if (rc == 0)
                rc = row_for(b, dev, ta_stream_id(a, s), swe_of, &b->stream_row[s]);
            if (rc != 0)
                return rc;
        }
        row_state *st = &b->rows[b->stream_row[s]];
        gap_split last = {.g0 = UINT64_MAX};
        add_op(b, st, st, &op, &last);
        add_op(b, &b->rows[b->dev_row[s]], st, &op, &last);
        st->prev_launch = op.api_start ? op.api_start : op.start;
    }
    for (size_t i = 0; i < b->nrows; i++) {
        gpufl__ana_idle_row *r = &b->rows[i].r;
        r->busy_ns += r->last_ns - b->rows[i].run_start;
        r->lead_ns = ta_span(a->start_ns, r->first_ns);
        r->tail_ns = ta_span(r->last_ns, a->end_ns);
    }
    return 0;
}

static int by_device_stream(const void *x, const void *y)
{
    const gpufl__ana_idle_row *p = x, *q = y;
    if (p->device != q->device)
        return p->device < q->device ? -1 : 1;
    bool pd = p->stream == GPUFL__ANA_ALL_STREAMS, qd = q->stream == GPUFL__ANA_ALL_STREAMS;
    if (pd != qd)
        return pd ? -1 : 1;
    return (p->stream > q->stream) - (p->stream < q->stream);
}

int gpufl__analyze_idle(const gpufl_trace *t, gpufl__ana_idle *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    ta a;
    gpufl__ta_open(&a, t);
    idle_build b = {.a = &a};
    ana_map swe_of = {0};
    int rc = index_syncs(&b);
    if (rc == 0)
        rc = index_waits(&b, &swe_of);
    if (rc == 0)
        rc = walk(&b, &swe_of);
    if (rc == 0 && b.nrows && !(out->rows = malloc(b.nrows * sizeof *out->rows)))
        rc = GPUFL_ENOMEM;
    if (rc == 0) {
        for (size_t i = 0; i < b.nrows; i++)
            out->rows[i] = b.rows[i].r;
        if (b.nrows)
            qsort(out->rows, b.nrows, sizeof *out->rows, by_device_stream);
        out->n = (uint32_t)b.nrows;
    }
    for (size_t k = 0; k < b.nthreads; k++) {
        free(b.threads[k].s);
        free(b.threads[k].e);
        free(b.threads[k].before);
    }
    free(b.threads);
    free(b.caller_thread);
    free(b.swe_ts);
    free(b.swe_start);
    free(b.rows);
    free(b.dev_row);
    free(b.stream_row);
    gpufl__ana_map_free(&b.row_of);
    gpufl__ana_map_free(&swe_of);
    return rc;
}

void gpufl__ana_idle_free(gpufl__ana_idle *i)
{
    if (!i)
        return;
    free(i->rows);
    memset(i, 0, sizeof *i);
}
