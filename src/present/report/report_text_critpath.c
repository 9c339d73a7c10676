/*
 * The text report's "Critical path" section (analyze/ana_critpath.h): what
 * the step's median-long occurrence ran through, from its end back to its
 * begin, each piece with its share of the step. Also the table gpufl
 * whatif prints (gpufl__critpath_write_text).
 */
#include <string.h>

#include "analyze/ana_critpath.h"
#include "core/names.h"
#include "present/report/report_text_util.h"
#include "present/report/whatif_out.h"

const char *gpufl__cp_item_name(const gpufl_trace *t, const gpufl__cp_item *it)
{
    if (it->kind == GPUFL__CP_KERNEL) {
        const char *s = gpufl_trace_string(t, it->name);
        return s && *s ? s : "(unnamed)";
    }
    if (it->kind == GPUFL__CP_COPY)
        return gpufl__copy_kind(it->sub)->key;
    return "";
}

void gpufl__critpath_write_text(const gpufl_trace *t, const gpufl__critpath *cp, size_t top, FILE *out)
{
    fprintf(out, "  %-15s %-48s %12s %7s %8s\n", "on the path", "name", "time", "share", "pieces");
    for (size_t i = 0; i < cp->n && i < top; i++) {
        const gpufl__cp_item *it = &cp->items[i];
        char name[49];
        gpufl__rt_fit(gpufl__cp_item_name(t, it), 48, name);
        fprintf(out, "  %-15s %-48s %12s %7s %8s\n", gpufl__cp_kind_name(it->kind), name, gpufl__rt_dur(it->ns).s,
                gpufl__rt_pct(gpufl__rt_share(it->ns, cp->window_ns)).s, gpufl__rt_count(it->count).s);
    }
    if (cp->n > top)
        fprintf(out, "  (%zu more)\n", cp->n - top);
}

void gpufl__rt_section_critpath(const rt *c)
{
    const gpufl__ana_critpath *p = c->r->critpath;
    if (!p)
        return;
    gpufl__rt_title(c, "Critical path");
    fprintf(c->out, "  %s `%s`, its median-long occurrence (%zu of %zu): %s; what it ran through, back from its end\n",
            p->nvtx ? "NVTX range" : "scope", gpufl__rt_str(c, p->step_name), p->occurrence, p->steps,
            gpufl__rt_dur(p->end_ns - p->begin_ns).s);
    gpufl__critpath_write_text(c->t, &p->path, 15, c->out);
    fprintf(c->out, "  (host: the thread's own work between its calls; call: inside launch calls; launch latency:\n"
                    "   from a call to when its work could start; queue: work ready but not started; sync: waiting\n"
                    "   for the GPU. gpufl whatif SESSION re-schedules it with a change)\n");
}
