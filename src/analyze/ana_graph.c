/*
 * Builds the dependency graph (ana_graph.h) from a trace: the nodes, then
 * the recorded edges (host order, launch, stream order, syncs, synchronous
 * copies, copy engines); ana_graph_infer.c adds the inferred ones.
 *
 * One pass per table plus sorts: the work in start order (gpufl__ops), the
 * host nodes by thread and time, the work of each stream in start order.
 * Threads: the caller's.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_graph.h"
#include "analyze/ana_nccl.h"
#include "analyze/ana_util.h"
#include "core/event.h"
#include "read/rows.h"

typedef struct build {
    gpufl__graph *g;
    gpufl__rows r;
    size_t cap;
    uint32_t *stream_ops; /* work nodes grouped by stream row, each group in start order */
    size_t *stream_at;    /* group s: stream_ops[stream_at[s] .. stream_at[s + 1]) */
    size_t nstreams;
    uint64_t from, to; /* the window: nodes that meet it */
} build;

static bool keep(const build *b, uint64_t start, uint64_t end) { return end >= b->from && start <= b->to; }

static int add_node(build *b, const gpufl__gnode *n, uint32_t *id)
{
    gpufl__graph *g = b->g;
    if (g->n >= GPUFL__GNONE - 1 || gpufl__ana_grow(&g->nodes, &b->cap, g->n + 1, sizeof *g->nodes) != 0)
        return GPUFL_ENOMEM;
    g->nodes[g->n] = *n;
    *id = (uint32_t)g->n++;
    return 0;
}

int gpufl__graph_add_edge(gpufl__graph *g, uint32_t from, uint32_t to, unsigned kind, bool inferred)
{
    if (from == to || from == GPUFL__GNONE || to == GPUFL__GNONE)
        return 0;
    if (gpufl__ana_grow(&g->edges, &g->ncap, g->nedges + 1, sizeof *g->edges) != 0)
        return GPUFL_ENOMEM;
    g->edges[g->nedges++] = (gpufl__gedge){from, to, (uint8_t)kind, (uint8_t)inferred};
    return 0;
}

static int by_to(const void *a, const void *b)
{
    const gpufl__gedge *x = a, *y = b;
    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

int gpufl__graph_index(gpufl__graph *g)
{
    qsort(g->edges, g->nedges, sizeof *g->edges, by_to);
    size_t w = 0;
    g->inferred = 0;
    for (size_t i = 0; i < g->nedges; i++) {
        /* one edge per (from, to): a recorded one wins over an inferred one */
        if (w && g->edges[w - 1].from == g->edges[i].from && g->edges[w - 1].to == g->edges[i].to) {
            if (!g->edges[i].inferred)
                g->edges[w - 1].inferred = 0;
            continue;
        }
        g->edges[w++] = g->edges[i];
    }
    g->nedges = w;
    if (w && w < g->ncap) { /* give back what growing left over: the graph is read from here on */
        gpufl__gedge *e = realloc(g->edges, w * sizeof *e);
        if (e) {
            g->edges = e;
            g->ncap = w;
        }
    }
    free(g->in);
    if (!(g->in = calloc(g->n + 1, sizeof *g->in)))
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < w; i++) {
        g->in[g->edges[i].to + 1]++;
        g->inferred += g->edges[i].inferred;
    }
    for (size_t i = 0; i < g->n; i++)
        g->in[i + 1] += g->in[i];
    return 0;
}

/* ---- nodes ------------------------------------------------------------------ */

/* The call node of work with correlation corr, made on first sight (a
 * graph's kernels share their launch's). corr 0 is no id: a call each. */
static int call_node(build *b, ana_map *calls, const gpufl__gnode *w, uint64_t api_start, uint64_t api_end,
                     uint32_t *id)
{
    uint32_t v;
    if (w->correlation && gpufl__ana_map_get(calls, w->correlation, w->device, &v)) {
        *id = v;
        return 0;
    }
    gpufl__gnode c = {.start = api_start,
                      .end = api_end > api_start ? api_end : api_start,
                      .device = w->device,
                      .stream = w->stream,
                      .tid = w->tid,
                      .row = GPUFL__GNONE,
                      .call = GPUFL__GNONE,
                      .block_op = GPUFL__GNONE,
                      .correlation = w->correlation,
                      .graph_id = w->graph_id,
                      .kind = GPUFL__GN_CALL};
    int rc = add_node(b, &c, id);
    if (rc == 0 && w->correlation && gpufl__ana_map_put(calls, w->correlation, w->device, *id, &v) < 0)
        rc = GPUFL_ENOMEM;
    return rc;
}

static bool is_nccl(const gpufl__rows *r, uint32_t name, ana_map *seen)
{
    uint32_t v;
    if (gpufl__ana_map_get(seen, name, 0, &v))
        return v != 0;
    gpufl__nccl_kind k;
    bool yes = name && gpufl__nccl_classify(gpufl__rows_str(r, name), &k);
    if (gpufl__ana_map_put(seen, name, 0, yes, &v) < 0)
        return yes;
    return yes;
}

/* Work nodes in start order, then their calls; the streams' groups. */
static int add_work(build *b)
{
    const gpufl__rows *r = &b->r;
    ana_map calls = {0}, nccl = {0};
    gpufl__ops it;
    gpufl__op op;
    int rc = 0;
    b->nstreams = gpufl__streams_n(r);
    b->stream_at = calloc(b->nstreams + 2, sizeof *b->stream_at);
    if (!b->stream_at)
        return GPUFL_ENOMEM;
    gpufl__ops_begin(&it, r);
    while (rc == 0 && gpufl__ops_next(&it, &op)) {
        if (!keep(b, op.start, op.end))
            continue;
        gpufl__work_row w;
        gpufl__work_row_get(r, op.table, op.row, &w);
        gpufl__gnode n = {.start = w.start,
                          .end = w.end > w.start ? w.end : w.start,
                          .device = w.device,
                          .stream = w.stream,
                          .tid = w.tid,
                          .name = op.table == GPUFL__TBL_KERNEL ? w.name : 0,
                          .row = (uint32_t)op.row,
                          .call = GPUFL__GNONE,
                          .block_op = GPUFL__GNONE,
                          .correlation = w.correlation,
                          .graph_id = w.graph_id,
                          .kind = op.table == GPUFL__TBL_KERNEL ? GPUFL__GN_KERNEL
                                  : op.table == GPUFL__TBL_COPY ? GPUFL__GN_COPY
                                                                : GPUFL__GN_MEMSET,
                          .sub = w.kind};
        if (n.kind == GPUFL__GN_KERNEL)
            n.nccl = is_nccl(r, n.name, &nccl);
        uint32_t id;
        if ((rc = add_node(b, &n, &id)) != 0)
            break;
        if (op.stream_row < b->nstreams)
            b->stream_at[op.stream_row + 2]++;
        if (w.api_start) {
            uint32_t c;
            if ((rc = call_node(b, &calls, &n, w.api_start, w.api_end, &c)) != 0)
                break;
            gpufl__gnode *k = &b->g->nodes[id], *cn = &b->g->nodes[c];
            k->call = c;
            /* a copy whose call returned after it ended: the host waited for it */
            if (k->kind == GPUFL__GN_COPY && cn->end >= k->end && cn->block_op == GPUFL__GNONE)
                cn->block_op = id;
            rc = gpufl__graph_add_edge(b->g, c, id, GPUFL__GE_LAUNCH, false);
        }
    }
    gpufl__ana_map_free(&calls);
    gpufl__ana_map_free(&nccl);
    if (rc)
        return rc;
    /* group the work by stream row, in start order (node order) */
    size_t nwork = 0;
    for (size_t s = 0; s < b->nstreams; s++)
        b->stream_at[s + 2] += b->stream_at[s + 1];
    nwork = b->stream_at[b->nstreams + 1];
    if (!(b->stream_ops = malloc((nwork ? nwork : 1) * sizeof *b->stream_ops)))
        return GPUFL_ENOMEM;
    gpufl__ops_begin(&it, r);
    for (uint32_t id = 0; gpufl__ops_next(&it, &op); id++) {
        if (!keep(b, op.start, op.end)) {
            id--;
            continue;
        }
        /* calls were added between work nodes: find the work node again */
        while (id < b->g->n && !gpufl__gnode_is_work(&b->g->nodes[id]))
            id++;
        if (op.stream_row < b->nstreams)
            b->stream_ops[b->stream_at[op.stream_row + 1]++] = id;
    }
    return 0;
}

static int add_syncs(build *b)
{
    const gpufl__rows *r = &b->r;
    gpufl__graph *g = b->g;
    g->syncs = gpufl__y_n(r);
    if (!(g->sync_node = malloc((g->syncs ? g->syncs : 1) * sizeof *g->sync_node)))
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < g->syncs; i++) {
        gpufl__sync_row y;
        gpufl__sync_row_get(r, i, &y);
        g->sync_node[i] = GPUFL__GNONE;
        if (!keep(b, y.start, y.end))
            continue;
        gpufl__gnode n = {.start = y.start,
                          .end = y.end > y.start ? y.end : y.start,
                          .device = y.device,
                          .stream = y.stream,
                          .tid = y.tid,
                          .row = (uint32_t)i,
                          .call = GPUFL__GNONE,
                          .block_op = GPUFL__GNONE,
                          .correlation = y.correlation,
                          .cuda_event = y.cuda_event,
                          .kind = GPUFL__GN_SYNC,
                          .sub = y.kind};
        int rc = add_node(b, &n, &g->sync_node[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static int add_marks(build *b)
{
    const gpufl__rows *r = &b->r;
    for (unsigned tbl = GPUFL__TBL_SCOPE; tbl <= GPUFL__TBL_NVTX; tbl++) {
        const gpufl_trace_scopes *s = gpufl__rows_ranges(r, tbl);
        for (size_t i = 0; i < s->n; i++) {
            if (gpufl__s_instant(s, i) || !gpufl__s_tid(s, i) || !keep(b, gpufl__s_begin(s, i), gpufl__s_end(s, i)))
                continue;
            for (int end = 0; end < 2; end++) {
                uint64_t ts = end ? gpufl__s_end(s, i) : gpufl__s_begin(s, i);
                gpufl__gnode n = {.start = ts,
                                  .end = ts,
                                  .tid = gpufl__s_tid(s, i),
                                  .name = gpufl__s_name(s, i),
                                  .row = (uint32_t)i,
                                  .call = GPUFL__GNONE,
                                  .block_op = GPUFL__GNONE,
                                  .stream = gpufl__s_depth(s, i), /* marks: nesting depth, for the order */
                                  .kind = GPUFL__GN_MARK,
                                  .sub = (uint8_t)end,
                                  .range = tbl == GPUFL__TBL_NVTX};
                uint32_t id;
                int rc = add_node(b, &n, &id);
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

/* ---- edges ------------------------------------------------------------------ */

/* Host nodes of a thread in the order they happened: by time; at one
 * instant, ends of ranges (innermost first), then begins (outermost
 * first), then calls and syncs. */
static int host_order(const void *a, const void *b, void *arg)
{
    const gpufl__gnode *nodes = arg;
    const gpufl__gnode *x = &nodes[*(const uint32_t *)a], *y = &nodes[*(const uint32_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    int rx = x->kind == GPUFL__GN_MARK ? x->sub == 1 ? 0 : 1 : 2;
    int ry = y->kind == GPUFL__GN_MARK ? y->sub == 1 ? 0 : 1 : 2;
    if (rx != ry)
        return rx - ry;
    if (rx == 0 && x->stream != y->stream) /* ends: deeper first */
        return x->stream > y->stream ? -1 : 1;
    if (rx == 1 && x->stream != y->stream) /* begins: shallower first */
        return x->stream < y->stream ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int by_end(const void *a, const void *b, void *arg)
{
    const gpufl__gnode *nodes = arg;
    uint64_t x = nodes[*(const uint32_t *)a].end, y = nodes[*(const uint32_t *)b].end;
    return x < y ? -1 : x > y;
}

/* Host gaps shorter than this are the thread's own work, never a wait. */
#define WAKE_MIN_GAP_NS 10000

/* The host node of a thread other than tid that ended last in (after,
 * until); GPUFL__GNONE. e: host nodes by end. Strictly before `until`:
 * every inferred host edge then goes forward in time, and with the
 * threads' own orders can make no cycle. */
static uint32_t other_ended(const gpufl__graph *g, const uint32_t *e, size_t n, uint32_t tid, uint64_t after,
                            uint64_t until)
{
    size_t lo = 0, hi = n; /* the entries ending before until: [0, lo) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->nodes[e[mid]].end < until)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t seen = 0; lo > 0 && seen < 256; lo--, seen++) {
        const gpufl__gnode *u = &g->nodes[e[lo - 1]];
        if (u->end <= after)
            break;
        if (u->tid != tid)
            return e[lo - 1];
    }
    return GPUFL__GNONE;
}

/*
 * Waits of one thread for another, which the recorder does not see (a
 * condition variable, a queue, a thread's start: PyTorch's autograd
 * thread runs backward while the main thread waits, and starts when the
 * main thread calls backward()). Inferred: a thread's first host node
 * follows the host node of another thread that ended last before it; a
 * host node after a gap of its thread (WAKE_MIN_GAP_NS or more) follows
 * the host node of another thread that ended last in that gap, when that
 * was in its second half (the thread went on soon after it). The
 * simulator then takes the thread to have waited in that gap
 * (ana_whatif.c): it goes on when the other thread's node ends, plus the
 * recorded delay. h: the host nodes by thread and time.
 */
static int wake_edges(gpufl__graph *g, const uint32_t *h, size_t n)
{
    uint32_t *e = malloc((n ? n : 1) * sizeof *e);
    if (!e)
        return GPUFL_ENOMEM;
    memcpy(e, h, n * sizeof *e);
    qsort_r(e, n, sizeof *e, by_end, g->nodes);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const gpufl__gnode *v = &g->nodes[h[i]];
        uint32_t u;
        if (!i || g->nodes[h[i - 1]].tid != v->tid) {
            u = other_ended(g, e, n, v->tid, 0, v->start);
        } else {
            const gpufl__gnode *p = &g->nodes[h[i - 1]];
            if (v->start < p->end + WAKE_MIN_GAP_NS)
                continue;
            u = other_ended(g, e, n, v->tid, p->end, v->start);
            if (u != GPUFL__GNONE && 2 * (v->start - g->nodes[u].end) > v->start - p->end)
                u = GPUFL__GNONE;
        }
        if (u != GPUFL__GNONE)
            rc = gpufl__graph_add_edge(g, u, h[i], GPUFL__GE_HOST, true);
    }
    free(e);
    return rc;
}

static int host_edges(build *b)
{
    gpufl__graph *g = b->g;
    uint32_t *h = malloc((g->n ? g->n : 1) * sizeof *h);
    if (!h)
        return GPUFL_ENOMEM;
    size_t n = 0;
    for (uint32_t i = 0; i < g->n; i++)
        if (!gpufl__gnode_is_work(&g->nodes[i]) && g->nodes[i].tid)
            h[n++] = i;
    qsort_r(h, n, sizeof *h, host_order, g->nodes);
    int rc = wake_edges(g, h, n);
    for (size_t i = 1; i < n && rc == 0; i++) {
        const gpufl__gnode *p = &g->nodes[h[i - 1]];
        if (p->tid != g->nodes[h[i]].tid)
            continue;
        rc = gpufl__graph_add_edge(g, h[i - 1], h[i], GPUFL__GE_HOST, false);
        if (rc == 0 && p->kind == GPUFL__GN_CALL && p->block_op != GPUFL__GNONE)
            rc = gpufl__graph_add_edge(g, p->block_op, h[i], GPUFL__GE_BLOCK, false);
    }
    free(h);
    return rc;
}

/* When the work was issued: its call's start, else its own start. */
static uint64_t issued(const gpufl__graph *g, uint32_t w)
{
    const gpufl__gnode *n = &g->nodes[w];
    return n->call != GPUFL__GNONE ? g->nodes[n->call].start : n->start;
}

/* The last work of stream group s issued at or before ts; GPUFL__GNONE. */
static uint32_t last_issued(const build *b, size_t s, uint64_t ts)
{
    /* a stream's work is issued in its order (by one thread, or by threads
     * taking turns), so its issue times rise along the group: a binary
     * search, not a scan, as a session can sync millions of times */
    size_t lo = b->stream_at[s], hi = b->stream_at[s + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (issued(b->g, b->stream_ops[mid]) <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > b->stream_at[s] ? b->stream_ops[lo - 1] : GPUFL__GNONE;
}

static int stream_and_sync_edges(build *b)
{
    gpufl__graph *g = b->g;
    const gpufl__rows *r = &b->r;
    int rc = 0;
    for (size_t s = 0; s < b->nstreams && rc == 0; s++)
        for (size_t j = b->stream_at[s] + 1; j < b->stream_at[s + 1] && rc == 0; j++)
            rc = gpufl__graph_add_edge(g, b->stream_ops[j - 1], b->stream_ops[j], GPUFL__GE_STREAM, false);
    for (size_t i = 0; i < g->syncs && rc == 0; i++) {
        uint32_t y = g->sync_node[i];
        if (y == GPUFL__GNONE)
            continue;
        const gpufl__gnode *n = &g->nodes[y];
        if (n->sub != GFL_SYNC_STREAM && n->sub != GFL_SYNC_CONTEXT)
            continue; /* event syncs and waits: ana_graph_infer.c */
        bool found = false;
        if (n->sub == GFL_SYNC_STREAM) {
            for (size_t s = 0; s < b->nstreams && rc == 0; s++) {
                if (gpufl__stream_device(r, (uint32_t)s) != n->device || gpufl__stream_id(r, (uint32_t)s) != n->stream)
                    continue;
                uint32_t w = last_issued(b, s, n->start);
                if (w != GPUFL__GNONE) {
                    found = true;
                    rc = gpufl__graph_add_edge(g, w, y, GPUFL__GE_SYNC, false);
                }
            }
        }
        /* a context sync, or a stream sync of a stream with no work: every stream of the device */
        for (size_t s = 0; !found && s < b->nstreams && rc == 0; s++)
            if (gpufl__stream_device(r, (uint32_t)s) == n->device)
                rc = gpufl__graph_add_edge(g, last_issued(b, s, n->start), y, GPUFL__GE_SYNC, false);
    }
    return rc;
}

/* Copies of one direction on one device in start order: chained when they
 * never overlapped (one engine), left alone otherwise (the device ran
 * several at once: its limit is not known). */
static int engine_edges(build *b)
{
    gpufl__graph *g = b->g;
    const unsigned dirs[2] = {GFL_COPY_HTOD, GFL_COPY_DTOH};
    ana_map last = {0};
    int rc = 0;
    for (int d = 0; d < 2 && rc == 0; d++) {
        /* first pass: which devices overlap (value 1 in `bad`) */
        ana_map bad = {0};
        for (uint32_t i = 0; i < g->n && rc == 0; i++) {
            const gpufl__gnode *n = &g->nodes[i];
            if (n->kind != GPUFL__GN_COPY || n->sub != dirs[d])
                continue;
            uint32_t p, v;
            if (gpufl__ana_map_get(&last, n->device, d, &p)) {
                if (g->nodes[p].end > n->start && gpufl__ana_map_put(&bad, n->device, 0, 1, &v) < 0)
                    rc = GPUFL_ENOMEM;
                gpufl__ana_map_set(&last, n->device, d, i);
            } else if (gpufl__ana_map_put(&last, n->device, d, i, &v) < 0) {
                rc = GPUFL_ENOMEM;
            }
        }
        gpufl__ana_map_free(&last);
        last = (ana_map){0};
        for (uint32_t i = 0; i < g->n && rc == 0; i++) {
            const gpufl__gnode *n = &g->nodes[i];
            uint32_t p, v;
            if (n->kind != GPUFL__GN_COPY || n->sub != dirs[d] || gpufl__ana_map_get(&bad, n->device, 0, &v))
                continue;
            if (gpufl__ana_map_get(&last, n->device, d, &p)) {
                if (g->nodes[p].stream != n->stream)
                    rc = gpufl__graph_add_edge(g, p, i, GPUFL__GE_ENGINE, false);
                gpufl__ana_map_set(&last, n->device, d, i);
            } else if (gpufl__ana_map_put(&last, n->device, d, i, &v) < 0) {
                rc = GPUFL_ENOMEM;
            }
        }
        gpufl__ana_map_free(&last);
        last = (ana_map){0};
        gpufl__ana_map_free(&bad);
    }
    return rc;
}

/* The shortest launch latency seen (work start - call start), kernels and
 * the rest apart: how soon after its call work can start at best. */
static void launch_floor(gpufl__graph *g)
{
    bool seen[2] = {false, false};
    g->first = UINT64_MAX;
    for (size_t i = 0; i < g->n; i++) {
        const gpufl__gnode *n = &g->nodes[i];
        g->first = n->start < g->first ? n->start : g->first;
        g->last = n->end > g->last ? n->end : g->last;
        if (!gpufl__gnode_is_work(n) || n->call == GPUFL__GNONE || n->graph_id)
            continue;
        const gpufl__gnode *c = &g->nodes[n->call];
        uint64_t lat = n->start > c->start ? n->start - c->start : 0;
        int k = n->kind != GPUFL__GN_KERNEL;
        if (!seen[k] || lat < g->lmin[k])
            g->lmin[k] = lat;
        seen[k] = true;
    }
    if (!g->n)
        g->first = 0;
}

int gpufl__graph_build(const gpufl_trace *t, gpufl__graph *g) { return gpufl__graph_build_window(t, 0, UINT64_MAX, g); }

int gpufl__graph_build_window(const gpufl_trace *t, uint64_t from, uint64_t to, gpufl__graph *g)
{
    if (!g)
        return GPUFL_EINVAL;
    memset(g, 0, sizeof *g);
    if (!t)
        return GPUFL_EINVAL;
    build b = {.g = g, .from = from, .to = to};
    g->t = t;
    gpufl__rows_open(&b.r, t);
    int rc = add_work(&b);
    if (rc == 0)
        rc = add_syncs(&b);
    if (rc == 0)
        rc = add_marks(&b);
    if (rc == 0)
        rc = host_edges(&b);
    if (rc == 0)
        rc = stream_and_sync_edges(&b);
    if (rc == 0)
        rc = engine_edges(&b);
    free(b.stream_ops);
    free(b.stream_at);
    if (rc == 0) {
        launch_floor(g);
        rc = gpufl__graph_infer(g);
    }
    if (rc == 0)
        rc = gpufl__graph_index(g);
    if (rc) {
        gpufl__graph_free(g);
        g->t = NULL;
    }
    return rc;
}

void gpufl__graph_free(gpufl__graph *g)
{
    if (!g)
        return;
    free(g->nodes);
    free(g->edges);
    free(g->in);
    free(g->sync_node);
    memset(g, 0, sizeof *g);
}

const char *gpufl__gnode_kind_name(unsigned kind)
{
    static const char *const names[GPUFL__GN_KIND_COUNT] = {"kernel", "copy", "memset", "call", "sync", "mark"};
    return kind < GPUFL__GN_KIND_COUNT ? names[kind] : "unknown";
}

const char *gpufl__gedge_kind_name(unsigned kind)
{
    static const char *const names[GPUFL__GE_KIND_COUNT] = {"host",   "launch", "stream", "sync", "block",
                                                            "engine", "wait",   "graph",  "data"};
    return kind < GPUFL__GE_KIND_COUNT ? names[kind] : "unknown";
}
