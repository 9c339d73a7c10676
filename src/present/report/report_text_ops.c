/*
 * The text report's PyTorch ops (analysis.h, "PyTorch ops"): GPU time by
 * op, forward and backward, then by module with each module's ops. Shown
 * only when the session has op ranges; the hotspots' per-kernel op line is
 * here too.
 */
#include <string.h>

#include "present/report/report_text_util.h"

#define OP_WIDTH 52
#define MAX_OPS 20
#define MAX_MODULES 10
#define MAX_MODULE_OPS 5
#define BACKWARD_ONLY " (backward only)"

/* An op's label, indented: its name cut to fit, marked when it is
 * backward work with no forward op found. */
static void op_label(const rt *c, const gpufl__ana_op *o, size_t indent, char *label)
{
    char cut[OP_WIDTH + 1];
    size_t room = OP_WIDTH - indent - (o->backward_only ? strlen(BACKWARD_ONLY) : 0);
    gpufl__rt_fit(gpufl__rt_str(c, o->name)[0] ? gpufl__rt_str(c, o->name) : "(unnamed)", room, cut);
    snprintf(label, OP_WIDTH + 1, "%*s%s%s", (int)indent, "", cut, o->backward_only ? BACKWARD_ONLY : "");
}

static void times(const rt *c, uint64_t kernels, uint64_t fwd, uint64_t bwd, uint64_t total, double share)
{
    fprintf(c->out, " %8s %11s %11s %11s %7s\n", gpufl__rt_count(kernels).s, gpufl__rt_dur(fwd).s, gpufl__rt_dur(bwd).s,
            gpufl__rt_dur(total).s, gpufl__rt_pct(share * 100.0).s);
}

static void op_row(const rt *c, const gpufl__ana_op *o, size_t indent)
{
    char label[OP_WIDTH + 1];
    op_label(c, o, indent, label);
    fprintf(c->out, "  %-*s %7s %7s", OP_WIDTH, label, gpufl__rt_count(o->calls).s,
            gpufl__rt_count(o->backward_calls).s);
    times(c, o->kernels, o->forward_ns, o->backward_ns, o->total_ns, o->share);
}

static void header(const rt *c, const char *first)
{
    fprintf(c->out, "  %-*s %7s %7s %8s %11s %11s %11s %7s\n", OP_WIDTH, first, "calls", "bwd", "kernels", "forward",
            "backward", "total", "share");
}

static void more(const rt *c, const char *indent, uint32_t n, const char *what)
{
    if (n)
        fprintf(c->out, "  %s... %s more %s%s\n", indent, gpufl__rt_count(n).s, what, n == 1 ? "" : "s");
}

static void by_module(const rt *c, const gpufl__ana_ops *o)
{
    fprintf(c->out, "\n  by module (the innermost nn.Module range around each op; backward ops: their forward op's)\n");
    header(c, "module / op");
    uint32_t shown = o->nmodules < MAX_MODULES ? o->nmodules : MAX_MODULES;
    for (uint32_t m = 0; m < shown; m++) {
        const gpufl__ana_op_module *md = &o->modules[m];
        char label[OP_WIDTH + 1];
        gpufl__rt_fit(md->module ? gpufl__ana_module_path(gpufl__rt_str(c, md->module)) : "(no module)", OP_WIDTH,
                      label);
        fprintf(c->out, "  %-*s %7s %7s", OP_WIDTH, label, "", "");
        times(c, md->kernels, md->forward_ns, md->backward_ns, md->total_ns, md->share);
        uint32_t nops = md->nops < MAX_MODULE_OPS ? md->nops : MAX_MODULE_OPS;
        for (uint32_t i = 0; i < nops; i++)
            op_row(c, &o->module_ops[md->first + i], 2);
        more(c, "  ", md->nops - nops, "op");
    }
    more(c, "", o->nmodules - shown, "module");
}

void gpufl__rt_section_ops(const rt *c)
{
    const gpufl__ana_ops *o = &c->r->ops;
    FILE *out = c->out;
    if (!o->op_ranges)
        return;
    gpufl__rt_title(c, "PyTorch ops");
    fprintf(
        out,
        "  %s op range%s (%s backward) in %s module range%s; GPU work launched in ops: %s (%s), outside any op: %s\n",
        gpufl__rt_count(o->op_ranges).s, gpufl__rt_plural(o->op_ranges), gpufl__rt_count(o->backward_ranges).s,
        gpufl__rt_count(o->module_ranges).s, gpufl__rt_plural(o->module_ranges), gpufl__rt_dur(o->in_ops_ns).s,
        gpufl__rt_pct(gpufl__rt_share(o->in_ops_ns, o->work_ns)).s, gpufl__rt_dur(o->outside_ns).s);
    fprintf(out, "  (GPU time: kernels, copies and memsets launched in the op's ranges, not in ops inside them;\n"
                 "   backward: in its backward ops (AddmmBackward0 for aten::addmm, matched by autograd's sequence\n"
                 "   number) and the ops they run; calls: its ranges not inside one of its own, bwd: backward\n"
                 "   ones; share: of all GPU time)\n\n");
    header(c, "op");
    uint32_t shown = o->n < MAX_OPS ? o->n : MAX_OPS;
    for (uint32_t i = 0; i < shown; i++)
        op_row(c, &o->ops[i], 0);
    more(c, "", o->n - shown, "op");
    if (o->allocs)
        fprintf(out, "  allocations made in ops: %s (%s); outside any op: %s\n", gpufl__rt_count(o->allocs).s,
                gpufl__rt_bytes(o->alloc_bytes).s, gpufl__rt_count(o->outside_allocs).s);
    if (o->nmodules)
        by_module(c, o);
}

void gpufl__rt_hot_ops(const rt *c, const gpufl__ana_hotspot *h)
{
    if (!c->r->ops.op_ranges || (!h->nops && !h->unop_ns))
        return;
    fprintf(c->out, "      ops     ");
    for (uint32_t i = 0; i < h->nops; i++) {
        const gpufl__ana_hot_op *o = &h->ops[i];
        char name[61], module[61];
        gpufl__rt_fit(gpufl__rt_str(c, o->name), 60, name);
        gpufl__rt_fit(gpufl__ana_module_path(gpufl__rt_str(c, o->module)), 60, module);
        fprintf(c->out, "%s%s%s%s%s %s (%s launch%s)", i ? "; " : "", name, o->backward_only ? BACKWARD_ONLY : "",
                o->module ? " in " : "", o->module ? module : "", gpufl__rt_pct(o->share * 100.0).s,
                gpufl__rt_count(o->launches).s, o->launches == 1 ? "" : "es");
    }
    if (h->unop_ns)
        fprintf(c->out, "%soutside any: %s", h->nops ? "; " : "",
                gpufl__rt_pct(gpufl__rt_share(h->unop_ns, (uint64_t)h->dur.total)).s);
    fputc('\n', c->out);
}
