/*
 * The HTML report's critical path section, only for a session with a
 * repeated step (analyze/ana_critpath.h; docs/REPORT.md): the text
 * report's table, sortable. The timeline draws the same path as a lane of
 * its own, first, its slices outlined (report_html_data.c).
 */
#include <inttypes.h>
#include <stdio.h>

#include "analyze/ana_critpath.h"
#include "present/report/report_html_parts.h"
#include "present/report/whatif_out.h"

void gpufl__html_critpath(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    const gpufl__ana_critpath *p = r->critpath;
    if (!p)
        return;
    char buf[32];
    gpufl__hout_printf(o, "<section id=critpath><h2>Critical path</h2>\n<p>%s <code>",
                       p->nvtx ? "NVTX range" : "Scope");
    gpufl__hout_text(o, gpufl_trace_string(t, p->step_name));
    gpufl__hout_printf(o,
                       "</code>, its median-long occurrence (%zu of %zu, %s): what it ran through, back from its "
                       "end. host: the thread's own work between its calls; call: inside launch calls; launch "
                       "latency: from a call to when its work could start; queue: work ready but not started; "
                       "sync: waiting for the GPU. The timeline's first lane holds the path's GPU work. "
                       "<code>gpufl whatif</code> re-schedules the session with a change.</p>\n",
                       p->occurrence, p->steps, gpufl__hfmt_ns(buf, sizeof buf, p->end_ns - p->begin_ns));
    static const char *const cols[] = {"on the path", "name", "time", "share", "pieces", NULL};
    gpufl__html_table_head(o, "critpath-items", cols);
    uint64_t whole = p->path.window_ns;
    for (size_t i = 0; i < p->path.n; i++) {
        const gpufl__cp_item *it = &p->path.items[i];
        double share = whole ? (double)it->ns * 100.0 / (double)whole : 0;
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_text(o, gpufl__cp_kind_name(it->kind));
        const char *name = gpufl__cp_item_name(t, it);
        gpufl__html_td_text(o, *name ? name : "-");
        gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu64 "\">%s</td>", it->ns,
                           gpufl__hfmt_ns(buf, sizeof buf, it->ns));
        gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%.1f %%</td>", share, share);
        gpufl__html_td_u64(o, it->count);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}
