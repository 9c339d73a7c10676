/*
 * The scopes analysis (analysis.h): both trees of paths with their wall
 * times, and the GPU time of the work launched inside each node.
 *
 * The trees come from ana_attr; this file walks the GPU work once, gives
 * each piece to the node its launching call was made in, and adds every
 * node's own time into its ancestors (children follow their parent in
 * pre-order, so one backward pass does it).
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_attr.h"
#include "analyze/ana_internal.h"
#include "analyze/ana_util.h"

static void give(gpufl__ana_scope_tree *tree, uint32_t node, uint64_t dur)
{
    if (node == GPUFL__ANA_NONE) {
        tree->unattributed_ns += dur;
        tree->unattributed_ops++;
        return;
    }
    tree->nodes[node].gpu_self_ns += dur;
    tree->nodes[node].gpu_self_ops++;
    tree->attributed_ns += dur;
    tree->attributed_ops++;
}

static void roll_up(gpufl__ana_scope_tree *tree)
{
    for (uint32_t i = 0; i < tree->n; i++) {
        tree->nodes[i].gpu_ns = tree->nodes[i].gpu_self_ns;
        tree->nodes[i].gpu_ops = tree->nodes[i].gpu_self_ops;
    }
    for (uint32_t i = tree->n; i-- > 0;) {
        uint32_t p = tree->nodes[i].parent;
        if (p != GPUFL__ANA_NONE) {
            tree->nodes[p].gpu_ns += tree->nodes[i].gpu_ns;
            tree->nodes[p].gpu_ops += tree->nodes[i].gpu_ops;
        }
    }
}

int gpufl__ana_scopes_with(ana_attr *x, gpufl__ana_scopes *out)
{
    memset(out, 0, sizeof *out);
    const gpufl__rows *a = x->a;
    gpufl__ana_attr_take_trees(x, out->trees);
    gpufl__ana_scope_tree *sc = &out->trees[GPUFL__ANA_TREE_SCOPES];
    gpufl__ana_scope_tree *nv = &out->trees[GPUFL__ANA_TREE_NVTX];
    gpufl__ops it;
    gpufl__op op;
    gpufl__ops_begin(&it, a);
    while (gpufl__ops_next(&it, &op)) {
        uint64_t dur = op.end - op.start;
        give(sc, ana_attr_scope_node(x, op.caller), dur);
        give(nv, gpufl__ana_attr_nvtx_node(x, op.caller, op.stream_row, op.api_start), dur);
    }
    roll_up(sc);
    roll_up(nv);
    for (size_t i = 0; i < a->nvtx->n; i++)
        out->nvtx_marks += gpufl__s_instant(a->nvtx, i);
    return 0;
}

static int scopes_with(ana_attr *x, void *out) { return gpufl__ana_scopes_with(x, out); }

int gpufl__analyze_scopes(const gpufl_trace *t, gpufl__ana_scopes *out)
{
    return gpufl__ana_attr_run(t, out, sizeof *out, scopes_with);
}

void gpufl__ana_scopes_free(gpufl__ana_scopes *s)
{
    if (!s)
        return;
    for (int i = 0; i < GPUFL__ANA_TREE_COUNT; i++)
        free(s->trees[i].nodes);
    memset(s, 0, sizeof *s);
}

size_t gpufl__ana_scope_path(const gpufl_trace *t, const gpufl__ana_scope_tree *tree, uint32_t i, const char *sep,
                             char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (!tree || i >= tree->n)
        return 0;
    size_t seplen = sep ? strlen(sep) : 0;
    /* the path's length first, then its pieces from the end backwards */
    size_t total = 0;
    for (uint32_t k = i; k != GPUFL__ANA_NONE; k = tree->nodes[k].parent)
        total += strlen(gpufl_trace_string(t, tree->nodes[k].name)) + (k != i ? seplen : 0);
    if (!len)
        return total;
    size_t pos = total;
    for (uint32_t k = i; k != GPUFL__ANA_NONE; k = tree->nodes[k].parent) {
        if (k != i) {
            pos -= seplen;
            for (size_t j = 0; j < seplen; j++)
                if (pos + j < len - 1)
                    buf[pos + j] = sep[j];
        }
        const char *name = gpufl_trace_string(t, tree->nodes[k].name);
        size_t nl = strlen(name);
        pos -= nl;
        for (size_t j = 0; j < nl; j++)
            if (pos + j < len - 1)
                buf[pos + j] = name[j];
    }
    buf[total < len - 1 ? total : len - 1] = '\0';
    return total;
}
