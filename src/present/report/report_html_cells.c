/*
 * The tables' frame and the cells the HTML report's tables share
 * (report_html_parts.h): numbers carry their value in data-v, which the
 * page's sort reads.
 */
#include <inttypes.h>

#include "present/report/report_html_parts.h"

void gpufl__html_td_text(gpufl__hout *o, const char *s)
{
    gpufl__hout_raw(o, "<td>");
    gpufl__hout_text(o, s);
    gpufl__hout_raw(o, "</td>");
}

void gpufl__html_td_u64(gpufl__hout *o, uint64_t v)
{
    gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", v, v);
}

void gpufl__html_td_bytes(gpufl__hout *o, uint64_t v)
{
    char buf[32];
    gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu64 "\">%s</td>", v, gpufl__hfmt_bytes(buf, sizeof buf, v));
}

void gpufl__html_td_ns(gpufl__hout *o, int64_t ns)
{
    char buf[32];
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    gpufl__hout_printf(o, "<td class=n data-v=\"%" PRId64 "\">%s%s</td>", ns, ns < 0 ? "-" : "",
                       gpufl__hfmt_ns(buf, sizeof buf, mag));
}

void gpufl__html_td_pct(gpufl__hout *o, double pct)
{
    gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%.1f %%</td>", pct, pct);
}

void gpufl__html_td_since(gpufl__hout *o, const gpufl_trace *t, uint64_t ns)
{
    char buf[32];
    uint64_t start = gpufl_trace_get_info(t)->start_ns, d = ns > start ? ns - start : 0;
    gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu64 "\">%s</td>", d, gpufl__hfmt_ns(buf, sizeof buf, d));
}

void gpufl__html_table_head(gpufl__hout *o, const char *id, const char *const *cols)
{
    if (id)
        gpufl__hout_printf(o, "<table class=sortable id=%s><thead><tr>", id);
    else
        gpufl__hout_raw(o, "<table class=sortable><thead><tr>");
    for (; *cols; cols++)
        gpufl__hout_printf(o, "<th>%s</th>", *cols);
    gpufl__hout_raw(o, "</tr></thead><tbody>\n");
}

void gpufl__html_table_end(gpufl__hout *o) { gpufl__hout_raw(o, "</tbody></table>\n"); }
