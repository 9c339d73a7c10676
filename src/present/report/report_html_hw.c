/*
 * The HTML report's hardware counters (range profiler): the text report's
 * table as a sortable one, every scope or NVTX range name, one column per
 * metric (its full name in the column's title), values in the metric's
 * unit; totals for summed metrics, means weighted by GPU time otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "present/report/report_html_parts.h"

#define S(id) gpufl_trace_string(t, (id))

static void td_value(gpufl__hout *o, double v, int unit, bool has)
{
    if (!has) {
        gpufl__hout_raw(o, "<td class=n data-v=\"-1\">-</td>");
        return;
    }
    switch (unit) {
    case GPUFL__HW_BYTES: gpufl__html_td_bytes(o, v > 0 ? (uint64_t)(v + 0.5) : 0); return;
    case GPUFL__HW_NS: gpufl__hout_printf(o, "<td class=n data-v=\"%.0f\">%.3f ms</td>", v, v / 1e6); return;
    case GPUFL__HW_PCT: gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%.1f %%</td>", v, v); return;
    default: gpufl__hout_printf(o, "<td class=n data-v=\"%.6g\">%.4g</td>", v, v); return;
    }
}

static void row(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_hw *hw, const gpufl__ana_hw_row *r,
                const char *name)
{
    gpufl__hout_raw(o, "<tr>");
    gpufl__html_td_text(o, name);
    gpufl__html_td_u64(o, r->ranges);
    for (uint32_t k = 0; k < hw->nmetrics; k++) {
        int unit;
        (void)gpufl__ana_hw_label(S(hw->metrics[k]), &unit);
        td_value(o, r->values[k], unit, r->has[k]);
    }
    gpufl__hout_raw(o, "</tr>\n");
}

void gpufl__html_hw(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    const gpufl__ana_hw *hw = &r->counters.ranges;
    if (!hw->session.ranges)
        return;
    gpufl__hout_printf(o,
                       "<section id=hw><h2>Hardware counters per scope (range profiler)</h2>\n<p>%llu ranges: "
                       "the GPU work of each scope instance with no scope open inside it. Bytes, time and "
                       "counts are totals; the other metrics are means weighted by GPU time.</p>\n",
                       (unsigned long long)hw->session.ranges);
    const char *cols[GPUFL__ANA_HW_MAX_METRICS + 3];
    unsigned n = 0;
    cols[n++] = "scope";
    cols[n++] = "ranges";
    for (uint32_t k = 0; k < hw->nmetrics; k++) {
        int unit;
        cols[n++] = gpufl__ana_hw_label(S(hw->metrics[k]), &unit);
    }
    cols[n] = NULL;
    gpufl__html_table_head(o, "hw-scopes", cols);
    for (uint32_t i = 0; i < hw->nrows; i++)
        row(o, t, hw, &hw->rows[i], S(hw->rows[i].name));
    row(o, t, hw, &hw->session, "(all ranges)");
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "<p>Metrics:</p><ul>\n");
    for (uint32_t k = 0; k < hw->nmetrics; k++) {
        int unit;
        gpufl__hout_raw(o, "<li>");
        gpufl__hout_text(o, gpufl__ana_hw_label(S(hw->metrics[k]), &unit));
        gpufl__hout_raw(o, ": <code>");
        gpufl__hout_text(o, S(hw->metrics[k]));
        gpufl__hout_raw(o, hw->summed[k] ? "</code> (total)</li>\n" : "</code> (mean)</li>\n");
    }
    gpufl__hout_raw(o, "</ul>\n</section>\n");
}
