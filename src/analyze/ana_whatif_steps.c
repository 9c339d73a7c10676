/*
 * Steps of a what-if (ana_whatif.h): the occurrences of a scope or NVTX
 * range, and what they took in a schedule (step times, GPU busy and idle
 * time inside them, the host's syncs).
 *
 * Work and syncs are sorted by their scheduled start once; each step's
 * window is then a binary search and a scan of what overlaps it.
 * Threads: the caller's.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "read/rows.h"
#include "analyze/ana_whatif.h"

static int by_begin(const void *a, const void *b, void *arg)
{
    const gpufl__gnode *nodes = arg;
    const gpufl__step *x = a, *y = b;
    uint64_t p = nodes[x->begin].start, q = nodes[y->begin].start;
    if (p != q)
        return p < q ? -1 : 1;
    return x->begin < y->begin ? -1 : 1;
}

/* The repeated name to take for the steps: see ana_whatif.h. */
static uint32_t auto_name(const gpufl__graph *g)
{
    ana_map count = {0};
    uint32_t best = 0, best_n = 0;
    bool best_step = false;
    for (size_t i = 0; i < g->n; i++) {
        const gpufl__gnode *n = &g->nodes[i];
        if (n->kind != GPUFL__GN_MARK || n->sub != 0 || n->stream != 0 || !n->name)
            continue; /* begins of outermost ranges (a mark's stream is its depth) */
        uint32_t c;
        if (gpufl__ana_map_put(&count, n->name, 0, 0, &c) < 0)
            break;
        gpufl__ana_map_set(&count, n->name, 0, ++c);
        const char *s = gpufl_trace_string(g->t, n->name);
        bool step = s && strcasestr(s, "step");
        if (c >= 2 && ((step && !best_step) || (step == best_step && c > best_n))) {
            best = n->name;
            best_n = c;
            best_step = step;
        }
    }
    gpufl__ana_map_free(&count);
    return best;
}

int gpufl__graph_steps(const gpufl__graph *g, const char *name, gpufl__step **steps, size_t *n, uint32_t *name_id)
{
    *steps = NULL;
    *n = 0;
    *name_id = 0;
    uint32_t want = name ? 0 : auto_name(g);
    if (!name && !want)
        return GPUFL_ENOTFOUND;
    size_t cap = 0;
    for (uint32_t i = 0; i + 1 < g->n; i++) {
        const gpufl__gnode *b = &g->nodes[i];
        if (b->kind != GPUFL__GN_MARK || b->sub != 0)
            continue;
        if (want && b->name != want)
            continue;
        if (!want) {
            const char *s = gpufl_trace_string(g->t, b->name);
            if (!s || strcmp(s, name) != 0)
                continue;
        }
        /* a range's end mark is made right after its begin (ana_graph.c) */
        if (gpufl__ana_grow(steps, &cap, *n + 1, sizeof **steps) != 0) {
            free(*steps);
            *steps = NULL;
            *n = 0;
            return GPUFL_ENOMEM;
        }
        (*steps)[(*n)++] = (gpufl__step){i, i + 1};
        *name_id = b->name;
    }
    if (!*n)
        return GPUFL_ENOTFOUND;
    qsort_r(*steps, *n, sizeof **steps, by_begin, g->nodes);
    return 0;
}

/* ---- what they took ----------------------------------------------------------- */

typedef struct by_start {
    uint32_t *ids;
    size_t n;
    uint64_t maxdur;
} by_start;

static int cmp_start(const void *a, const void *b, void *arg)
{
    const uint64_t *start = arg;
    uint64_t p = start[*(const uint32_t *)a], q = start[*(const uint32_t *)b];
    return p < q ? -1 : p > q;
}

static int sorted(const gpufl__graph *g, const gpufl__sched *s, bool work, by_start *o)
{
    o->n = 0;
    o->maxdur = 0;
    if (!(o->ids = malloc((g->n ? g->n : 1) * sizeof *o->ids)))
        return GPUFL_ENOMEM;
    for (uint32_t i = 0; i < g->n; i++) {
        const gpufl__gnode *n = &g->nodes[i];
        if (work ? gpufl__gnode_is_work(n) : n->kind == GPUFL__GN_SYNC) {
            o->ids[o->n++] = i;
            uint64_t d = gpufl__span(s->start[i], s->end[i]);
            o->maxdur = d > o->maxdur ? d : o->maxdur;
        }
    }
    qsort_r(o->ids, o->n, sizeof *o->ids, cmp_start, s->start);
    return 0;
}

/* The first entry that may overlap a window beginning at t. */
static size_t first_from(const by_start *o, const gpufl__sched *s, uint64_t t)
{
    uint64_t from = t > o->maxdur ? t - o->maxdur : 0;
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->start[o->ids[mid]] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void window(const gpufl__graph *g, const gpufl__sched *s, const by_start *work, const by_start *syncs,
                   uint64_t wb, uint64_t we, uint32_t tid, gpufl__step_stats *o)
{
    uint64_t cur = wb;
    for (size_t j = first_from(work, s, wb); j < work->n && s->start[work->ids[j]] < we; j++) {
        uint32_t w = work->ids[j];
        uint64_t a = s->start[w] > wb ? s->start[w] : wb, b = s->end[w] < we ? s->end[w] : we;
        if (b <= a)
            continue;
        if (a > cur) { /* a gap, ended by w */
            if (s->bind_kind[w] == GPUFL__GE_LAUNCH && s->bind[w] != GPUFL__GNONE)
                o->idle_host_ns += a - cur;
            else
                o->idle_other_ns += a - cur;
            cur = a;
        }
        if (b > cur) {
            o->busy_ns += b - cur;
            cur = b;
        }
    }
    if (we > cur) /* nothing more ran in the step: the GPU waited for the host */
        o->idle_host_ns += we - cur;
    for (size_t j = first_from(syncs, s, wb); j < syncs->n && s->start[syncs->ids[j]] < we; j++) {
        uint32_t y = syncs->ids[j];
        uint64_t a = s->start[y] > wb ? s->start[y] : wb, b = s->end[y] < we ? s->end[y] : we;
        if (b > a && g->nodes[y].tid == tid)
            o->sync_ns += b - a;
    }
}

int gpufl__step_stats_of(const gpufl__graph *g, const gpufl__sched *s, const gpufl__step *steps, size_t n,
                         gpufl__step_stats *out)
{
    memset(out, 0, sizeof *out);
    by_start work = {0}, syncs = {0};
    uint64_t *times = malloc((n ? n : 1) * sizeof *times);
    int rc = times ? 0 : GPUFL_ENOMEM;
    if (rc == 0)
        rc = sorted(g, s, true, &work);
    if (rc == 0)
        rc = sorted(g, s, false, &syncs);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint64_t wb = s->start[steps[i].begin], we = s->end[steps[i].end];
        times[i] = gpufl__span(wb, we);
        out->total_ns += times[i];
        window(g, s, &work, &syncs, wb, we, g->nodes[steps[i].begin].tid, out);
    }
    if (rc == 0 && n) {
        gpufl__ana_dist d;
        rc = gpufl__ana_dist_of(times, n, false, &d);
        out->steps = n;
        out->median_ns = (uint64_t)d.p50;
        out->min_ns = (uint64_t)d.min;
        out->max_ns = (uint64_t)d.max;
    }
    free(times);
    free(work.ids);
    free(syncs.ids);
    return rc;
}
