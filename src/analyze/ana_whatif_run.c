/*
 * A what-if from a trace to its figures (ana_whatif_run.h):
 * what `gpufl whatif` prints and the report's critical path section reads.
 *
 * The unchanged schedule is computed as well as the changed one: the
 * prediction is read against the replay of the session as recorded, which
 * gives the recorded step times back (tests/test_whatif.c holds it to 2 %
 * on the fixtures and the bundled samples).
 *
 * Threads: the caller's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_whatif_run.h"
#include "analyze/ana_util.h"
#include "read/rows.h"

static int paths(const gpufl__whatif *w, const gpufl__sched *s, gpufl__critpath *cp)
{
    int rc = 0;
    for (size_t i = 0; i < w->nsteps && rc == 0; i++)
        rc = gpufl__critpath_add(&w->g, s, w->steps[i].end, s->start[w->steps[i].begin], cp);
    gpufl__critpath_sort(&w->g, cp);
    return rc;
}

static int recorded(gpufl__whatif *w)
{
    uint64_t *v = malloc((w->nsteps ? w->nsteps : 1) * sizeof *v);
    if (!v)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < w->nsteps; i++) {
        v[i] = gpufl__span(w->g.nodes[w->steps[i].begin].start, w->g.nodes[w->steps[i].end].end);
        w->recorded_total_ns += v[i];
    }
    gpufl__ana_dist d;
    int rc = gpufl__ana_dist_of(v, w->nsteps, false, &d);
    w->recorded_median_ns = (uint64_t)d.p50;
    free(v);
    return rc;
}

/* The window [from, to] as one step: from the first node that starts in
 * it to the node that ends last in it. GPUFL_ENOTFOUND when none does. */
static int window_step(gpufl__whatif *w, uint64_t from, uint64_t to)
{
    uint32_t b = GPUFL__GNONE, e = GPUFL__GNONE;
    for (uint32_t i = 0; i < w->g.n; i++) {
        const gpufl__gnode *n = &w->g.nodes[i];
        if (n->start >= from && n->start <= to && (b == GPUFL__GNONE || n->start < w->g.nodes[b].start))
            b = i;
        if (n->end <= to && n->end >= from && (e == GPUFL__GNONE || n->end > w->g.nodes[e].end))
            e = i;
    }
    if (b == GPUFL__GNONE || e == GPUFL__GNONE || w->g.nodes[e].end < w->g.nodes[b].start)
        return GPUFL_ENOTFOUND;
    if (!(w->steps = malloc(sizeof *w->steps)))
        return GPUFL_ENOMEM;
    w->steps[0] = (gpufl__step){b, e};
    w->nsteps = 1;
    w->window = true;
    return 0;
}

/* scope, or window when scope is NULL and window is not. */
static int run(const gpufl_trace *t, const char *scope, const uint64_t *window, const gpufl__whatif_change *c,
               gpufl__whatif *w, char *err, size_t len)
{
    if (!w)
        return GPUFL_EINVAL;
    memset(w, 0, sizeof *w);
    int rc = gpufl__graph_build(t, &w->g);
    if (rc) {
        snprintf(err, len, "%s", rc == GPUFL_ENOMEM ? "out of memory building the graph" : "no session");
        return rc;
    }
    gpufl__whatif_change none = gpufl__whatif_none();
    if ((rc = gpufl__whatif_check(&w->g, c ? c : &none, err, len)) != 0)
        goto fail;
    if (window)
        rc = window_step(w, window[0], window[1]);
    else
        rc = gpufl__graph_steps(&w->g, scope, &w->steps, &w->nsteps, &w->step_name);
    if (rc == GPUFL_ENOTFOUND) {
        if (window)
            snprintf(err, len, "no work, call, sync or mark starts and ends in the window");
        else if (scope)
            snprintf(err, len, "no scope or NVTX range called '%s' in the session", scope);
        else
            snprintf(err, len, "no repeated outermost scope or NVTX range to take for the step: name one with --scope");
        goto fail;
    }
    if (rc || (rc = recorded(w)) != 0)
        goto nomem;
    /* one schedule at a time: each is ~40 bytes a node */
    gpufl__sched s;
    if ((rc = gpufl__whatif_schedule(&w->g, NULL, &s, err, len)) != 0)
        goto fail;
    rc = gpufl__step_stats_of(&w->g, &s, w->steps, w->nsteps, &w->before);
    if (rc == 0)
        rc = paths(w, &s, &w->cp_before);
    gpufl__sched_free(&s);
    if (rc)
        goto nomem;
    if ((rc = gpufl__whatif_schedule(&w->g, c, &s, err, len)) != 0)
        goto fail;
    w->changed = s.changed;
    rc = gpufl__step_stats_of(&w->g, &s, w->steps, w->nsteps, &w->after);
    if (rc == 0)
        rc = paths(w, &s, &w->cp_after);
    gpufl__sched_free(&s);
    if (rc == 0)
        return 0;
nomem:
    snprintf(err, len, "out of memory");
fail:
    gpufl__whatif_free(w);
    return rc;
}

int gpufl__whatif_run(const gpufl_trace *t, const char *scope, const gpufl__whatif_change *c, gpufl__whatif *w,
                      char *err, size_t len)
{
    return run(t, scope, NULL, c, w, err, len);
}

int gpufl__whatif_run_window(const gpufl_trace *t, uint64_t from, uint64_t to, const gpufl__whatif_change *c,
                             gpufl__whatif *w, char *err, size_t len)
{
    const uint64_t window[2] = {from, to};
    return run(t, NULL, window, c, w, err, len);
}

void gpufl__whatif_free(gpufl__whatif *w)
{
    if (!w)
        return;
    gpufl__graph_free(&w->g);
    free(w->steps);
    gpufl__critpath_free(&w->cp_before);
    gpufl__critpath_free(&w->cp_after);
    memset(w, 0, sizeof *w);
}
