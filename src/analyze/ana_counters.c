/*
 * The stall, SASS and hardware counter sections (analysis.h). Warp stalls
 * come from PC sampling (ana_stalls.c); the SASS and hardware counter
 * sections have no rows in the trace format yet, and say which engine
 * fills them, so a report can tell the user what to turn on instead of
 * leaving a blank.
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
    if (out->sass.rows)
        out->sass.status = GPUFL__ANA_SECTION_ROWS;
    out->hw = empty("range_profiler");
    const gpufl_trace_pc_samples *p = gpufl_trace_get_pc_samples(t);
    if (!p || !p->n)
        return 0;
    out->stalls.status = GPUFL__ANA_SECTION_ROWS;
    out->stalls.rows = p->n;
    return gpufl__analyze_stalls(t, &out->pcs);
}

void gpufl__ana_counters_free(gpufl__ana_counters *c)
{
    if (!c)
        return;
    gpufl__ana_stalls_free(&c->pcs);
    memset(c, 0, sizeof *c);
}
