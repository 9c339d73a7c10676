/*
 * The stall, SASS and hardware counter sections (analysis.h). The trace
 * format has no rows of these kinds yet: the profiling engines that record
 * them (PC sampling, SASS metrics, the range profiler) come later. Until
 * then each section says it is empty and which engine fills it, so a
 * report can tell the user what to turn on instead of leaving a blank.
 */
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/analysis.h"

static gpufl__ana_section empty(const char *engine)
{
    return (gpufl__ana_section){.status = GPUFL__ANA_SECTION_EMPTY, .engine = engine, .rows = 0};
}

int gpufl__analyze_counters(const gpufl_trace *t, gpufl__ana_counters *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    out->stalls = empty("pc_sampling");
    out->sass = empty("sass_metrics");
    const gpufl_trace_sass_metrics *s = gpufl_trace_get_sass_metrics(t);
    out->sass.rows = s ? s->n : 0; /* analyzed in ana_sass.c */
    out->hw = empty("range_profiler");
    return 0;
}

void gpufl__ana_counters_free(gpufl__ana_counters *c)
{
    if (c)
        memset(c, 0, sizeof *c);
}
