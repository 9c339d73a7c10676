/*
 * The JSON report's PM sampling (docs/REPORT.md, `pm_sampling`): the text
 * report's "PM sampling" rows, one per device and metric, with the unit
 * the metric's name gives.
 */
#include "present/report/report_json_parts.h"

#define VALUE_DECIMALS 4 /* as recorded: value_x10000 */

void gpufl__rj_pm(jw *w, const gpufl_trace *t)
{
    gpufl__ana_pm pm = {0};
    if (gpufl__analyze_pm(t, &pm) != 0) {
        w->failed = true; /* out of memory: the whole document fails, as any other member's would */
        return;
    }
    gpufl__jw_arr(w, "pm_sampling");
    for (uint32_t i = 0; i < pm.n; i++) {
        const gpufl__ana_pm_row *r = &pm.rows[i];
        const char *metric = gpufl_trace_string(t, r->metric);
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "device", r->device);
        gpufl__jw_str(w, "metric", metric ? metric : "");
        gpufl__jw_str(w, "unit", gpufl__ana_pm_unit_name(gpufl__ana_pm_unit(metric)));
        gpufl__jw_u64(w, "samples", r->samples);
        gpufl__jw_u64(w, "time_ns", r->ns);
        gpufl__jw_real(w, "mean", r->mean, VALUE_DECIMALS);
        gpufl__jw_real(w, "max", r->max, VALUE_DECIMALS);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__ana_pm_free(&pm);
}
