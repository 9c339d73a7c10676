/*
 * The stall, SASS and hardware counter sections (analysis.h). Warp stalls
 * come from PC sampling (ana_stalls.c), hardware counters per scope from
 * the range profiler (ana_hw.c); the SASS section has no rows in the trace
 * format yet. An empty section says which engine fills it, so a report can
 * tell the user what to turn on instead of leaving a blank.
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
    const gpufl_trace_range_metrics *rm = gpufl_trace_get_range_metrics(t);
    if (rm && rm->n) {
        out->hw.status = GPUFL__ANA_SECTION_ROWS;
        out->hw.rows = rm->n;
        int rc = gpufl__analyze_hw(t, &out->ranges);
        if (rc != 0)
            return rc;
    }
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
    gpufl__ana_hw_free(&c->ranges);
    memset(c, 0, sizeof *c);
}
