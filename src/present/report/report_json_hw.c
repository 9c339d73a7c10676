/*
 * The JSON report's hardware counters (docs/REPORT.md, `counters.hw`): the
 * section's status with the range profiler's metrics per scope or NVTX
 * range name, every row, each value in the metric's own unit.
 */
#include "present/report/report_json_parts.h"

static const char *text(const gpufl_trace *t, uint32_t id)
{
    const char *s = gpufl_trace_string(t, id);
    return s ? s : "";
}

static void values(jw *w, const gpufl_trace *t, const gpufl__ana_hw *hw, const gpufl__ana_hw_row *r)
{
    gpufl__jw_u64(w, "ranges", r->ranges);
    gpufl__jw_obj(w, "values");
    for (uint32_t k = 0; k < hw->nmetrics; k++)
        if (r->has[k])
            gpufl__jw_real(w, text(t, hw->metrics[k]), r->values[k], 4);
    gpufl__jw_obj_end(w);
}

void gpufl__rj_hw(jw *w, const gpufl_trace *t, const gpufl__ana_section *sec, const gpufl__ana_hw *hw)
{
    gpufl__jw_obj(w, "hw");
    gpufl__jw_str(w, "status", sec->status == GPUFL__ANA_SECTION_ROWS ? "rows" : "empty");
    gpufl__jw_str(w, "engine", sec->engine);
    gpufl__jw_u64(w, "rows", sec->rows);
    if (hw->session.ranges) {
        gpufl__jw_arr(w, "metrics");
        for (uint32_t k = 0; k < hw->nmetrics; k++) {
            gpufl__jw_obj(w, NULL);
            gpufl__jw_str(w, "name", text(t, hw->metrics[k]));
            gpufl__jw_str(w, "over_ranges", hw->summed[k] ? "total" : "mean");
            gpufl__jw_obj_end(w);
        }
        gpufl__jw_arr_end(w);
        gpufl__jw_obj(w, "session");
        values(w, t, hw, &hw->session);
        gpufl__jw_obj_end(w);
        gpufl__jw_arr(w, "scopes");
        for (uint32_t i = 0; i < hw->nrows; i++) {
            gpufl__jw_obj(w, NULL);
            gpufl__jw_str(w, "name", text(t, hw->rows[i].name));
            values(w, t, hw, &hw->rows[i]);
            gpufl__jw_obj_end(w);
        }
        gpufl__jw_arr_end(w);
    }
    gpufl__jw_obj_end(w);
}
