/*
 * The what-if schedule (ana_whatif.h): the change checked, the recorded
 * residuals and gaps measured on the graph as recorded, the edges changed
 * (overlap_copies), then one pass in dependency order (Kahn's algorithm)
 * that gives every node its start and end and says what set them.
 *
 * Linear in nodes and edges, plus the sort of the changed edges.
 * Threads: the caller's.
 */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "read/rows.h"
#include "analyze/ana_whatif.h"
#include "core/event.h"

/* ---- the change ---------------------------------------------------------------- */

/* Marks the kernels the change speeds up in fast[] (may be NULL: count
 * only); *matched: how many. Returns 0 or GPUFL_EINVAL (bad regex). */
static int match_kernels(const gpufl__graph *g, const char *kernel, bool *fast, size_t *matched, char *err, size_t len)
{
    regex_t re;
    bool is_re = kernel[0] == '~';
    *matched = 0;
    if (is_re) {
        int rc = regcomp(&re, kernel + 1, REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char why[256];
            regerror(rc, &re, why, sizeof why);
            snprintf(err, len, "--kernel '%s': not a regular expression: %s", kernel, why);
            return GPUFL_EINVAL;
        }
    }
    ana_map seen = {0}; /* name id -> 1 match, 2 no match */
    for (size_t i = 0; i < g->n; i++) {
        const gpufl__gnode *n = &g->nodes[i];
        if (n->kind != GPUFL__GN_KERNEL)
            continue;
        uint32_t v;
        if (!gpufl__ana_map_get(&seen, n->name, 0, &v)) {
            const char *name = gpufl_trace_string(g->t, n->name);
            name = name ? name : "";
            bool yes = is_re ? regexec(&re, name, 0, NULL, 0) == 0 : strcmp(name, kernel) == 0;
            v = yes ? 1 : 2;
            if (gpufl__ana_map_put(&seen, n->name, 0, v, &v) < 0) {
                /* out of memory for the cache: decide this one without it */
                v = yes ? 1 : 2;
            }
        }
        if (v == 1) {
            (*matched)++;
            if (fast)
                fast[i] = true;
        }
    }
    gpufl__ana_map_free(&seen);
    if (is_re)
        regfree(&re);
    return 0;
}

int gpufl__whatif_check(const gpufl__graph *g, const gpufl__whatif_change *c, char *err, size_t len)
{
    if (!g || !c)
        return GPUFL_EINVAL;
    if (c->kernel && !c->kernel[0]) {
        snprintf(err, len, "--kernel: an empty name");
        return GPUFL_EINVAL;
    }
    if (c->kernel && !(c->speedup > 0 && isfinite(c->speedup))) {
        snprintf(err, len, "--speedup %g: must be a number above 0", c->speedup);
        return GPUFL_EINVAL;
    }
    if (c->kernel) {
        size_t matched;
        int rc = match_kernels(g, c->kernel, NULL, &matched, err, len);
        if (rc)
            return rc;
        if (!matched) {
            snprintf(err, len, "--kernel '%s' matches no kernel of the session (a name, or ~REGEX)", c->kernel);
            return GPUFL_EINVAL;
        }
    }
    for (size_t i = 0; i < c->nremove; i++) {
        if (c->remove[i] >= g->syncs) {
            snprintf(err, len,
                     "--remove-sync %llu: no such sync (the session has %zu: ids 0 to %zu; gpufl graph "
                     "lists them)",
                     (unsigned long long)c->remove[i], g->syncs, g->syncs ? g->syncs - 1 : 0);
            return GPUFL_EINVAL;
        }
        if (g->sync_node[c->remove[i]] == GPUFL__GNONE) {
            snprintf(err, len, "--remove-sync %llu: outside the graph's window", (unsigned long long)c->remove[i]);
            return GPUFL_EINVAL;
        }
        const gpufl__gnode *y = &g->nodes[g->sync_node[c->remove[i]]];
        if (y->sub == GFL_SYNC_STREAM_WAIT_EVENT) {
            snprintf(err, len,
                     "--remove-sync %llu: a stream-wait-event does not block the host; removing one is not "
                     "modelled (its inferred wait edge is not tied to it)",
                     (unsigned long long)c->remove[i]);
            return GPUFL_EINVAL;
        }
        if (!y->tid) {
            snprintf(err, len, "--remove-sync %llu: the sync's thread was not recorded",
                     (unsigned long long)c->remove[i]);
            return GPUFL_EINVAL;
        }
    }
    if (!(c->host_gap_scale >= 0 && isfinite(c->host_gap_scale))) {
        snprintf(err, len, "--host-gap-scale %g: must be a number of at least 0", c->host_gap_scale);
        return GPUFL_EINVAL;
    }
    return 0;
}

/* ---- the edges under the change ---------------------------------------------- */

static bool moved(const gpufl__gnode *n)
{
    return n->kind == GPUFL__GN_COPY && (n->sub == GFL_COPY_HTOD || n->sub == GFL_COPY_DTOH);
}

/* Copies moved to a stream per device and direction: the old streams'
 * chains close over them, data edges keep what they feed or drain. */
static int overlap_edges(const gpufl__graph *g, gpufl__graph *e)
{
    uint32_t *prev = malloc((g->n ? g->n : 1) * sizeof *prev), *next = malloc((g->n ? g->n : 1) * sizeof *next);
    int rc = prev && next ? 0 : GPUFL_ENOMEM;
    for (size_t i = 0; rc == 0 && i < g->n; i++)
        prev[i] = next[i] = GPUFL__GNONE;
    size_t w = 0;
    for (size_t i = 0; rc == 0 && i < e->nedges; i++) {
        gpufl__gedge x = e->edges[i];
        if (x.kind == GPUFL__GE_STREAM) {
            prev[x.to] = x.from;
            next[x.from] = x.to;
            if (moved(&g->nodes[x.from]) || moved(&g->nodes[x.to]))
                continue;
        }
        e->edges[w++] = x;
    }
    e->nedges = w;
    ana_map last = {0};
    for (uint32_t i = 0; rc == 0 && i < g->n; i++) {
        const gpufl__gnode *n = &g->nodes[i];
        if (!gpufl__gnode_is_work(n))
            continue;
        if (!moved(n)) { /* the old stream's chain, closed over moved copies */
            uint32_t p = prev[i];
            bool skipped = false;
            while (p != GPUFL__GNONE && moved(&g->nodes[p])) {
                p = prev[p];
                skipped = true;
            }
            if (skipped)
                rc = gpufl__graph_add_edge(e, p, i, GPUFL__GE_STREAM, false);
            continue;
        }
        uint32_t d = i;
        if (n->sub == GFL_COPY_HTOD) { /* it feeds the next work on its old stream */
            do
                d = next[d];
            while (d != GPUFL__GNONE && moved(&g->nodes[d]));
            rc = gpufl__graph_add_edge(e, i, d, GPUFL__GE_DATA, false);
        } else { /* it drains the last work before it */
            do
                d = prev[d];
            while (d != GPUFL__GNONE && moved(&g->nodes[d]));
            rc = gpufl__graph_add_edge(e, d, i, GPUFL__GE_DATA, false);
        }
        uint32_t p, v;
        if (rc == 0 && gpufl__ana_map_get(&last, n->device, n->sub, &p)) {
            rc = gpufl__graph_add_edge(e, p, i, GPUFL__GE_STREAM, false);
            gpufl__ana_map_set(&last, n->device, n->sub, i);
        } else if (rc == 0 && gpufl__ana_map_put(&last, n->device, n->sub, i, &v) < 0) {
            rc = GPUFL_ENOMEM;
        }
    }
    gpufl__ana_map_free(&last);
    free(prev);
    free(next);
    return rc;
}

/* ---- the schedule --------------------------------------------------------------- */

typedef struct sim {
    const gpufl__graph *g;
    gpufl__sched *s;
    const gpufl__gedge *edges; /* the changed edges, by `to` */
    const size_t *in;
    uint64_t *resid; /* work: recorded start - the recorded latest constraint; syncs: from their
                        work's end to their return (wake-up) */
    uint64_t *base;  /* per sync row: the shortest it takes */
    bool *fast, *removed;
    double speedup, scale;
} sim;

static uint64_t lmin_of(const gpufl__graph *g, const gpufl__gnode *v) { return g->lmin[v->kind != GPUFL__GN_KERNEL]; }

/* When the host is free after host node p: a synchronous copy's call
 * returns as long after its copy as it did. */
static uint64_t host_end(const gpufl__graph *g, const gpufl__sched *s, uint32_t p)
{
    const gpufl__gnode *n = &g->nodes[p];
    if (n->kind == GPUFL__GN_CALL && n->block_op != GPUFL__GNONE) {
        uint64_t tail = gpufl__span(g->nodes[n->block_op].end, n->end);
        uint64_t e = s->end[n->block_op] + tail;
        uint64_t mine = s->start[p];
        if (e > mine) {
            s->end_bind[p] = n->block_op;
            s->end[p] = e;
            return e;
        }
        s->end_bind[p] = GPUFL__GNONE;
        s->end[p] = mine;
        return mine;
    }
    return s->end[p];
}

/* The latest constraint on work v from edges[lo..hi) with the times of s
 * (NULL: the recorded ones): *bind the predecessor, *kind its edge. 0 and
 * GPUFL__GNONE without one. */
static uint64_t work_ready(const gpufl__graph *g, const gpufl__gedge *edges, size_t lo, size_t hi,
                           const gpufl__sched *s, uint32_t v, uint32_t *bind, uint8_t *kind)
{
    uint64_t ready = 0;
    *bind = GPUFL__GNONE;
    *kind = 0;
    for (size_t j = lo; j < hi; j++) {
        const gpufl__gedge *x = &edges[j];
        uint32_t f = x->from;
        uint64_t t = x->kind == GPUFL__GE_LAUNCH ? (s ? s->start[f] : g->nodes[f].start) + lmin_of(g, &g->nodes[v])
                                                 : (s ? s->end[f] : g->nodes[f].end);
        if (*bind == GPUFL__GNONE || t > ready) {
            ready = t;
            *bind = x->from;
            *kind = x->kind;
        }
    }
    return ready;
}

static uint64_t add_signed(uint64_t t, int64_t d) { return d < 0 && (uint64_t)-d > t ? 0 : t + (uint64_t)d; }

/* What the recording says of each node: gaps, residuals, sync times. */
static void measure(sim *m)
{
    const gpufl__graph *g = m->g;
    uint64_t base_min = UINT64_MAX;
    for (uint32_t v = 0; v < g->n; v++) {
        const gpufl__gnode *n = &g->nodes[v];
        size_t lo = g->in[v], hi = g->in[v + 1];
        if (gpufl__gnode_is_work(n)) {
            uint32_t b;
            uint8_t k;
            uint64_t r = work_ready(g, g->edges, lo, hi, NULL, v, &b, &k);
            m->resid[v] = b != GPUFL__GNONE ? gpufl__span(r, n->start) : 0;
            continue;
        }
        if (n->kind != GPUFL__GN_SYNC)
            continue;
        uint64_t target = 0;
        for (size_t j = lo; j < hi; j++)
            if (g->edges[j].kind == GPUFL__GE_SYNC && g->nodes[g->edges[j].from].end > target)
                target = g->nodes[g->edges[j].from].end;
        if (target > n->start) { /* it waited */
            m->resid[v] = gpufl__span(target, n->end);
            m->base[g->nodes[v].row] = UINT64_MAX; /* set below */
        } else {
            m->base[g->nodes[v].row] = n->end - n->start;
            base_min = m->base[g->nodes[v].row] < base_min ? m->base[g->nodes[v].row] : base_min;
        }
    }
    if (base_min == UINT64_MAX)
        base_min = 0;
    for (uint32_t v = 0; v < g->n; v++)
        if (g->nodes[v].kind == GPUFL__GN_SYNC && m->base[g->nodes[v].row] == UINT64_MAX)
            m->base[g->nodes[v].row] =
                base_min < g->nodes[v].end - g->nodes[v].start ? base_min : g->nodes[v].end - g->nodes[v].start;
}

static void place(sim *m, uint32_t v)
{
    const gpufl__graph *g = m->g;
    gpufl__sched *s = m->s;
    const gpufl__gnode *n = &g->nodes[v];
    size_t lo = m->in[v], hi = m->in[v + 1];
    s->bind[v] = GPUFL__GNONE;
    if (gpufl__gnode_is_work(n)) {
        uint8_t k;
        uint64_t r = work_ready(g, m->edges, lo, hi, s, v, &s->bind[v], &k);
        s->bind_kind[v] = k;
        if (s->bind[v] == GPUFL__GNONE)
            r = n->start, s->start[v] = n->start;
        else
            s->start[v] = r + m->resid[v];
        s->ready[v] = r;
        uint64_t dur = n->end - n->start;
        if (m->fast && m->fast[v])
            dur = (uint64_t)llround((double)dur / m->speedup);
        s->end[v] = s->start[v] + dur;
        return;
    }
    /* After the host node before it on its thread, by the recorded gap
     * (positive gaps scaled); after another thread's node it waited for
     * (an inferred host edge: ana_graph.c), by the recorded delay, and
     * then its own gap was a wait: it only needs its node before done. */
    bool waited = false, own = false;
    for (size_t j = lo; j < hi; j++)
        if (m->edges[j].kind == GPUFL__GE_HOST) {
            waited |= m->edges[j].inferred;
            own |= !m->edges[j].inferred;
        }
    s->start[v] = n->start;
    bool first = true;
    for (size_t j = lo; j < hi; j++) {
        const gpufl__gedge *x = &m->edges[j];
        if (x->kind != GPUFL__GE_HOST)
            continue;
        int64_t gap = (int64_t)(n->start - g->nodes[x->from].end);
        if (waited && own && !x->inferred)
            gap = gap < 0 ? gap : 0;
        else if (gap > 0)
            gap = (int64_t)llround((double)gap * m->scale);
        uint64_t t = add_signed(host_end(g, s, x->from), gap);
        if (first || t > s->start[v]) {
            s->start[v] = t;
            s->bind[v] = s->host_pred[v] = x->from;
            s->bind_kind[v] = GPUFL__GE_HOST;
            first = false;
        }
    }
    s->ready[v] = s->start[v];
    if (n->kind == GPUFL__GN_CALL) {
        s->end[v] = s->start[v] + (n->end - n->start);
    } else if (n->kind == GPUFL__GN_SYNC) {
        if (m->removed[v]) {
            s->end[v] = s->start[v];
            return;
        }
        uint64_t e = s->start[v] + m->base[g->nodes[v].row];
        for (size_t j = lo; j < hi; j++) {
            const gpufl__gedge *x = &m->edges[j];
            if (x->kind == GPUFL__GE_SYNC && s->end[x->from] + m->resid[v] > e) {
                e = s->end[x->from] + m->resid[v];
                s->bind[v] = x->from;
                s->bind_kind[v] = GPUFL__GE_SYNC;
            }
        }
        s->end[v] = e;
    } else {
        s->end[v] = s->start[v];
    }
}

/* Kahn's order over the changed edges; GPUFL_ECORRUPT on a cycle. */
static int run(sim *m, size_t nedges, char *err, size_t len)
{
    const gpufl__graph *g = m->g;
    size_t n = g->n;
    size_t *out_at = calloc(n + 1, sizeof *out_at);
    uint32_t *deg = calloc(n ? n : 1, sizeof *deg);
    uint32_t *out = malloc((nedges ? nedges : 1) * sizeof *out), *queue = malloc((n ? n : 1) * sizeof *queue);
    int rc = out_at && deg && out && queue ? 0 : GPUFL_ENOMEM;
    if (rc == 0) {
        for (size_t j = 0; j < nedges; j++)
            out_at[m->edges[j].from + 1]++;
        for (size_t i = 0; i < n; i++)
            out_at[i + 1] += out_at[i];
        for (size_t j = 0; j < nedges; j++)
            out[deg[m->edges[j].from]++ + out_at[m->edges[j].from]] = m->edges[j].to;
        size_t qn = 0, qi = 0;
        for (size_t i = 0; i < n; i++)
            if ((deg[i] = (uint32_t)(m->in[i + 1] - m->in[i])) == 0)
                queue[qn++] = (uint32_t)i;
        while (qi < qn) {
            uint32_t v = queue[qi++];
            place(m, v);
            for (size_t j = out_at[v]; j < out_at[v + 1]; j++)
                if (--deg[out[j]] == 0)
                    queue[qn++] = out[j];
        }
        if (qn < n) {
            snprintf(err, len,
                     "the dependencies form a cycle (%zu of %zu nodes could not be placed): a damaged "
                     "recording?",
                     n - qn, n);
            rc = GPUFL_ECORRUPT;
        }
        /* synchronous copies' calls with no host node after them */
        for (uint32_t v = 0; rc == 0 && v < n; v++)
            if (g->nodes[v].kind == GPUFL__GN_CALL && g->nodes[v].block_op != GPUFL__GNONE)
                (void)host_end(g, m->s, v);
    }
    free(out_at);
    free(deg);
    free(out);
    free(queue);
    return rc;
}

static int sched_alloc(gpufl__sched *s, size_t n)
{
    size_t k = n ? n : 1;
    s->n = n;
    s->start = malloc(k * sizeof *s->start);
    s->end = malloc(k * sizeof *s->end);
    s->ready = malloc(k * sizeof *s->ready);
    s->bind = malloc(k * sizeof *s->bind);
    s->bind_kind = calloc(k, sizeof *s->bind_kind);
    s->end_bind = malloc(k * sizeof *s->end_bind);
    s->host_pred = malloc(k * sizeof *s->host_pred);
    if (!s->start || !s->end || !s->ready || !s->bind || !s->bind_kind || !s->end_bind || !s->host_pred)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < n; i++)
        s->bind[i] = s->end_bind[i] = s->host_pred[i] = GPUFL__GNONE;
    return 0;
}

int gpufl__whatif_schedule(const gpufl__graph *g, const gpufl__whatif_change *c, gpufl__sched *s, char *err, size_t len)
{
    if (!s)
        return GPUFL_EINVAL;
    memset(s, 0, sizeof *s);
    gpufl__whatif_change none = gpufl__whatif_none();
    c = c ? c : &none;
    int rc = gpufl__whatif_check(g, c, err, len);
    if (rc)
        return rc;
    size_t k = g->n ? g->n : 1;
    sim m = {.g = g, .s = s, .speedup = c->speedup, .scale = c->host_gap_scale};
    m.resid = calloc(k, sizeof *m.resid);
    m.base = calloc(g->syncs ? g->syncs : 1, sizeof *m.base);
    m.fast = calloc(k, sizeof *m.fast);
    m.removed = calloc(k, sizeof *m.removed);
    gpufl__graph e = {.nodes = g->nodes, .n = g->n};
    if (!m.resid || !m.base || !m.fast || !m.removed)
        rc = GPUFL_ENOMEM;
    if (rc == 0)
        rc = sched_alloc(s, g->n);
    if (rc == 0) {
        measure(&m);
        if (c->kernel)
            rc = match_kernels(g, c->kernel, m.fast, &s->changed, err, len);
        for (size_t i = 0; i < c->nremove; i++)
            m.removed[g->sync_node[c->remove[i]]] = true;
    }
    /* the edges under the change: the graph's own, or a copy moved (overlap_copies) */
    if (rc == 0 && c->overlap_copies) {
        if (!(e.edges = malloc((g->nedges ? g->nedges : 1) * sizeof *e.edges)))
            rc = GPUFL_ENOMEM;
        if (rc == 0) {
            memcpy(e.edges, g->edges, g->nedges * sizeof *e.edges);
            e.nedges = e.ncap = g->nedges;
            rc = overlap_edges(g, &e);
        }
        if (rc == 0)
            rc = gpufl__graph_index(&e);
    }
    if (rc == 0) {
        m.edges = c->overlap_copies ? e.edges : g->edges;
        m.in = c->overlap_copies ? e.in : g->in;
        rc = run(&m, c->overlap_copies ? e.nedges : g->nedges, err, len);
    }
    free(e.edges);
    free(e.in);
    free(m.resid);
    free(m.base);
    free(m.fast);
    free(m.removed);
    if (rc)
        gpufl__sched_free(s);
    return rc;
}

void gpufl__sched_free(gpufl__sched *s)
{
    if (!s)
        return;
    free(s->start);
    free(s->end);
    free(s->ready);
    free(s->bind);
    free(s->bind_kind);
    free(s->end_bind);
    free(s->host_pred);
    memset(s, 0, sizeof *s);
}
