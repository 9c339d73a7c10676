/*
 * A what-if from a trace to its figures (ana_whatif_run.c): the graph, the
 * steps (or a time window), the unchanged and the changed schedules, what
 * the steps took in each and the critical paths of the steps, all steps
 * together: what `gpufl whatif` prints (present/report/whatif_out.h).
 *
 * Threads: any; no shared state.
 */
#ifndef GPUFL_ANALYZE_ANA_WHATIF_RUN_H
#define GPUFL_ANALYZE_ANA_WHATIF_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/ana_critpath.h"
#include "analyze/ana_whatif.h"

typedef struct gpufl__whatif {
    gpufl__graph g;
    gpufl__step *steps;
    size_t nsteps;
    uint32_t step_name;          /* string id */
    uint64_t recorded_median_ns; /* the steps as recorded */
    uint64_t recorded_total_ns;
    gpufl__step_stats before; /* the unchanged replay */
    gpufl__step_stats after;  /* under the change */
    gpufl__critpath cp_before, cp_after;
    size_t changed; /* kernels sped up */
    bool window;    /* the one step is a time window (gpufl__whatif_run_window) */
} gpufl__whatif;

/* scope: the step's scope or NVTX range name (NULL: the one
 * gpufl__graph_steps picks); c NULL: no change. Returns 0, GPUFL_EINVAL
 * (a bad change), GPUFL_ENOTFOUND (no such step), GPUFL_ECORRUPT (a cycle)
 * or GPUFL_ENOMEM, with the problem in err; *w is zeroed on failure. */
int gpufl__whatif_run(const gpufl_trace *t, const char *scope, const gpufl__whatif_change *c, gpufl__whatif *w,
                      char *err, size_t len) __attribute__((warn_unused_result));
/* The same for the time window [from, to] (session ns) as the one step:
 * from the first node that starts in it to the node that ends last in it,
 * both followed into the changed schedule. GPUFL_ENOTFOUND when nothing
 * starts and ends in it. */
int gpufl__whatif_run_window(const gpufl_trace *t, uint64_t from, uint64_t to, const gpufl__whatif_change *c,
                             gpufl__whatif *w, char *err, size_t len) __attribute__((warn_unused_result));
void gpufl__whatif_free(gpufl__whatif *w);

#endif /* GPUFL_ANALYZE_ANA_WHATIF_RUN_H */
