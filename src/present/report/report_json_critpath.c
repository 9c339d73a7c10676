/*
 * The JSON report's `critical_path` (docs/REPORT.md), written only for a
 * session with a repeated step (analyze/ana_critpath.h), so that reports of
 * other sessions keep their members.
 */
#include "analyze/ana_critpath.h"
#include "present/report/report_json_parts.h"
#include "present/report/whatif_out.h"

void gpufl__rj_critpath(jw *w, const gpufl_trace *t, const gpufl__ana_report *r)
{
    const gpufl__ana_critpath *p = r->critpath;
    if (!p)
        return;
    gpufl__jw_obj(w, "critical_path");
    gpufl__jw_str(w, "step", gpufl_trace_string(t, p->step_name));
    gpufl__jw_str(w, "step_kind", p->nvtx ? "nvtx" : "scope");
    gpufl__jw_u64(w, "steps", p->steps);
    gpufl__jw_u64(w, "occurrence", p->occurrence);
    gpufl__jw_u64(w, "begin_ns", p->begin_ns);
    gpufl__jw_u64(w, "end_ns", p->end_ns);
    gpufl__jw_u64(w, "path_ns", p->path.path_ns);
    gpufl__jw_arr(w, "items");
    for (size_t i = 0; i < p->path.n; i++) {
        const gpufl__cp_item *it = &p->path.items[i];
        const char *name = gpufl__cp_item_name(t, it);
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "kind", gpufl__cp_kind_name(it->kind));
        if (*name)
            gpufl__jw_str(w, "name", name);
        else
            gpufl__jw_null(w, "name");
        gpufl__jw_u64(w, "ns", it->ns);
        gpufl__jw_real(w, "share", p->path.window_ns ? (double)it->ns / (double)p->path.window_ns : 0, 6);
        gpufl__jw_u64(w, "pieces", it->count);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_u64(w, "work_on_path", p->nwork);
    gpufl__jw_obj_end(w);
}
