/*
 * The edges the recorder does not capture, inferred from timing and marked
 * `inferred` (ana_graph.h says why each is needed):
 *
 *   a cudaStreamWaitEvent on stream S: the first work issued on S after the
 *   wait depends on the work of another stream of the device, issued
 *   before the wait, that ended last before that first work started;
 *   a cudaEventSynchronize (or a sync of unknown kind): the host depends on
 *   the work of the device, issued before the sync, that ended last while
 *   the host waited (none when nothing ended then: it did not wait);
 *   a CUDA graph's node: on the node of the same launch, on another
 *   stream, that ended last before it started.
 *
 * Each is the constraint the recording can show, never one it contradicts:
 * the source always ended before the work (or the sync's return) it is
 * made a dependence of. Searches look back at most SCAN_MAX pieces of
 * work of the device, so a session of millions costs linear time.
 */
#include <stdlib.h>

#include "analyze/ana_graph.h"
#include "core/event.h"

#define SCAN_MAX 4096

typedef struct dev_index {
    uint32_t *ids; /* work nodes by (device, start) */
    size_t n;
} dev_index;

static int by_device_start(const void *a, const void *b, void *arg)
{
    const gpufl__gnode *nodes = arg;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const gpufl__gnode *x = &nodes[i], *y = &nodes[j];
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return i < j ? -1 : 1;
}

static uint64_t issued(const gpufl__graph *g, uint32_t w)
{
    const gpufl__gnode *n = &g->nodes[w];
    return n->call != GPUFL__GNONE ? g->nodes[n->call].start : n->start;
}

/* The index of the first entry of device dev starting after ts (the end of
 * the entries starting at or before it). */
static size_t upper(const gpufl__graph *g, const dev_index *x, uint32_t dev, uint64_t ts)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const gpufl__gnode *n = &g->nodes[x->ids[mid]];
        if (n->device < dev || (n->device == dev && n->start <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The work that a stream-wait-event w holds back: the first on w's stream
 * issued at or after the wait. GPUFL__GNONE when none. */
static uint32_t waiting_work(const gpufl__graph *g, const dev_index *x, const gpufl__gnode *w)
{
    size_t j = upper(g, x, w->device, w->start);
    /* work issued after the wait starts after it began, so look forward */
    for (size_t k = j ? j - 1 : 0, seen = 0; k < x->n && seen < SCAN_MAX; k++, seen++) {
        const gpufl__gnode *n = &g->nodes[x->ids[k]];
        if (n->device != w->device)
            break;
        if (n->stream == w->stream && issued(g, x->ids[k]) >= w->start)
            return x->ids[k];
    }
    return GPUFL__GNONE;
}

/* The work of device dev on a stream other than `stream` (any when
 * GPUFL__GNONE), issued at or before `issued_by`, with the latest end in
 * (after, until]. */
static uint32_t last_end(const gpufl__graph *g, const dev_index *x, uint32_t dev, uint32_t stream, uint64_t issued_by,
                         uint64_t after, uint64_t until)
{
    size_t j = upper(g, x, dev, until);
    uint32_t best = GPUFL__GNONE;
    uint64_t best_end = after;
    for (size_t k = j, seen = 0; k-- > 0 && seen < SCAN_MAX; seen++) {
        const gpufl__gnode *n = &g->nodes[x->ids[k]];
        if (n->device != dev)
            break;
        if (stream != GPUFL__GNONE && n->stream == stream)
            continue;
        if (n->end > best_end && n->end <= until && issued(g, x->ids[k]) <= issued_by) {
            best = x->ids[k];
            best_end = n->end;
        }
    }
    return best;
}

static int sync_edges(gpufl__graph *g, const dev_index *x)
{
    int rc = 0;
    for (size_t i = 0; i < g->syncs && rc == 0; i++) {
        uint32_t y = g->sync_node[i];
        if (y == GPUFL__GNONE)
            continue;
        const gpufl__gnode *s = &g->nodes[y];
        if (s->sub == GFL_SYNC_STREAM_WAIT_EVENT) {
            uint32_t q = waiting_work(g, x, s);
            if (q == GPUFL__GNONE)
                continue;
            uint32_t src = last_end(g, x, s->device, s->stream, s->start, 0, g->nodes[q].start);
            rc = gpufl__graph_add_edge(g, src, q, GPUFL__GE_WAIT, true);
        } else if (s->sub == GFL_SYNC_EVENT || s->sub == GFL_SYNC_UNKNOWN) {
            uint32_t src = last_end(g, x, s->device, GPUFL__GNONE, s->start, s->start, s->end);
            rc = gpufl__graph_add_edge(g, src, y, GPUFL__GE_SYNC, true);
        }
    }
    return rc;
}

/* A graph node after the node of its launch, on another stream, that
 * ended last before it started. */
static int graph_edges(gpufl__graph *g, const dev_index *x)
{
    int rc = 0;
    for (size_t k = 0; k < x->n && rc == 0; k++) {
        const gpufl__gnode *q = &g->nodes[x->ids[k]];
        if (!q->graph_id || !q->correlation)
            continue;
        uint32_t best = GPUFL__GNONE;
        uint64_t best_end = 0;
        for (size_t j = k, seen = 0; j-- > 0 && seen < SCAN_MAX; seen++) {
            const gpufl__gnode *p = &g->nodes[x->ids[j]];
            if (p->device != q->device)
                break;
            if (p->correlation == q->correlation && p->stream != q->stream && p->end <= q->start && p->end > best_end) {
                best = x->ids[j];
                best_end = p->end;
            }
        }
        rc = gpufl__graph_add_edge(g, best, x->ids[k], GPUFL__GE_GRAPH, true);
    }
    return rc;
}

int gpufl__graph_infer(gpufl__graph *g)
{
    dev_index x = {0};
    if (!(x.ids = malloc((g->n ? g->n : 1) * sizeof *x.ids)))
        return GPUFL_ENOMEM;
    for (uint32_t i = 0; i < g->n; i++)
        if (gpufl__gnode_is_work(&g->nodes[i]))
            x.ids[x.n++] = i;
    qsort_r(x.ids, x.n, sizeof *x.ids, by_device_start, g->nodes);
    int rc = sync_edges(g, &x);
    if (rc == 0)
        rc = graph_edges(g, &x);
    free(x.ids);
    return rc;
}
