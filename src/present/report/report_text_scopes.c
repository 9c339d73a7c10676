/*
 * The text report's scope trees (gpufl scopes and NVTX ranges): wall time
 * per path, indented by depth, with the GPU work launched inside.
 */
#include <inttypes.h>
#include <string.h>

#include "present/report/report_text_util.h"

#define PATH_WIDTH 44
#define MAX_NODES 40

static void node_row(const rt *c, const gpufl__ana_scope_node *nd)
{
    char label[PATH_WIDTH + 64], cut[PATH_WIDTH + 1];
    size_t indent = nd->depth < 10 ? nd->depth * 2 : 20;
    memset(label, ' ', indent);
    if (nd->domain)
        snprintf(label + indent, sizeof label - indent, "%s (%s)", gpufl__rt_str(c, nd->name),
                 gpufl__rt_str(c, nd->domain));
    else
        snprintf(label + indent, sizeof label - indent, "%s", gpufl__rt_str(c, nd->name));
    gpufl__rt_fit(label, PATH_WIDTH, cut);
    fprintf(c->out, "  %-*s %8s %10s %7s %10s %10s %10s %10s %8s", PATH_WIDTH, cut, gpufl__rt_count(nd->count).s,
            gpufl__rt_dur((uint64_t)nd->wall.total).s, gpufl__rt_pct(nd->share_of_parent * 100.0).s,
            gpufl__rt_dur((uint64_t)nd->wall.mean).s, gpufl__rt_dur((uint64_t)nd->wall.p95).s,
            gpufl__rt_dur((uint64_t)nd->wall.max).s, gpufl__rt_dur(nd->gpu_ns).s, gpufl__rt_count(nd->gpu_ops).s);
    if (nd->unended)
        fprintf(c->out, "  %s unended", gpufl__rt_count(nd->unended).s);
    fputc('\n', c->out);
}

static void tree(const rt *c, const gpufl__ana_scope_tree *tr, const char *what, const char *none)
{
    FILE *out = c->out;
    if (!tr->n) {
        fprintf(out, "  %s: %s\n", what, none);
        return;
    }
    uint64_t gpu = tr->attributed_ns + tr->unattributed_ns;
    fprintf(out, "  %s: %s path%s from %s instance%s; GPU work launched inside: %s (%s), outside: %s\n", what,
            gpufl__rt_count(tr->n).s, gpufl__rt_plural(tr->n), gpufl__rt_count(tr->instances).s,
            gpufl__rt_plural(tr->instances), gpufl__rt_dur(tr->attributed_ns).s,
            gpufl__rt_pct(gpufl__rt_share(tr->attributed_ns, gpu)).s, gpufl__rt_dur(tr->unattributed_ns).s);
    fprintf(out, "  %-*s %8s %10s %7s %10s %10s %10s %10s %8s\n", PATH_WIDTH, "path", "count", "wall", "share", "mean",
            "p95", "max", "GPU time", "GPU ops");
    uint32_t shown = tr->n < MAX_NODES ? tr->n : MAX_NODES;
    for (uint32_t i = 0; i < shown; i++)
        node_row(c, &tr->nodes[i]);
    if (tr->n > shown)
        fprintf(out, "  ... %s more path%s (the tree is in pre-order, longest siblings first)\n",
                gpufl__rt_count(tr->n - shown).s, gpufl__rt_plural(tr->n - shown));
    fputc('\n', out);
}

void gpufl__rt_section_scopes(const rt *c)
{
    const gpufl__ana_scopes *s = &c->r->scopes;
    gpufl__rt_title(c, "Scopes");
    fprintf(c->out, "  (share: of the parent's wall time, or of the session's for a top-level path;\n"
                    "   GPU time: kernels, copies and memsets launched inside the path or below it)\n\n");
    tree(c, &s->trees[GPUFL__ANA_TREE_SCOPES], "gpufl scopes", "none recorded (gpufl_scope_begin / GFL_SCOPE)");
    tree(c, &s->trees[GPUFL__ANA_TREE_NVTX], "NVTX ranges",
         "none recorded (NVTX reaches gpufl with the trace engine and up)");
    if (s->nvtx_marks)
        fprintf(c->out, "  NVTX marks: %s (instants, not in the tree)\n", gpufl__rt_count(s->nvtx_marks).s);
}
