/*
 * `gpufl graph` output (whatif_out.h): the dependency graph as JSON (one
 * document: nodes, then edges) or as Graphviz dot (a node per line, an
 * edge per line; inferred edges dashed, NCCL kernels boxed in red). Both
 * list only what meets the window asked for.
 *
 * Sizes: a line per node and per edge; a session of a million launches
 * makes a graph dot cannot lay out, which is what --from/--to is for.
 */
#include <stdlib.h>
#include <string.h>

#include "core/names.h"
#include "gpufl/gpufl.h"
#include "present/report/jwriter.h"
#include "present/report/whatif_out.h"

static bool in_window(const gpufl__gnode *n, uint64_t from, uint64_t to) { return n->end >= from && n->start <= to; }

/* The node's name: a kernel's, a copy's kind, a sync's kind, a mark's range. */
static const char *label(const gpufl__graph *g, const gpufl__gnode *n)
{
    const char *s = NULL;
    switch (n->kind) {
    case GPUFL__GN_KERNEL:
    case GPUFL__GN_MARK: s = gpufl_trace_string(g->t, n->name); break;
    case GPUFL__GN_COPY: s = gpufl__copy_kind(n->sub)->key; break;
    case GPUFL__GN_SYNC: s = gpufl__sync_kind(n->sub)->key; break;
    default: break;
    }
    return s && *s ? s : gpufl__gnode_kind_name(n->kind);
}

int gpufl__graph_write_json(const gpufl__graph *g, uint64_t from, uint64_t to, FILE *out)
{
    jw w;
    gpufl__jw_init(&w);
    gpufl__jw_obj(&w, NULL);
    gpufl__jw_str(&w, "schema", "gpufl-graph");
    gpufl__jw_u64(&w, "schema_version", 1);
    gpufl__jw_u64(&w, "from_ns", from);
    gpufl__jw_u64(&w, "to_ns", to == UINT64_MAX ? g->last : to);
    gpufl__jw_u64(&w, "launch_latency_min_ns", g->lmin[0]);
    gpufl__jw_arr(&w, "nodes");
    for (size_t i = 0; i < g->n; i++) {
        const gpufl__gnode *n = &g->nodes[i];
        if (!in_window(n, from, to))
            continue;
        gpufl__jw_obj(&w, NULL);
        gpufl__jw_u64(&w, "id", i);
        gpufl__jw_str(&w, "kind", gpufl__gnode_kind_name(n->kind));
        gpufl__jw_str(&w, "name", label(g, n));
        gpufl__jw_u64(&w, "start_ns", n->start);
        gpufl__jw_u64(&w, "end_ns", n->end);
        gpufl__jw_u64(&w, "tid", n->tid);
        if (n->kind != GPUFL__GN_MARK) {
            gpufl__jw_u64(&w, "device", n->device);
            gpufl__jw_u64(&w, "stream", n->stream);
            gpufl__jw_u64(&w, "correlation", n->correlation);
        }
        if (n->kind == GPUFL__GN_SYNC)
            gpufl__jw_u64(&w, "sync_id", n->row); /* what --remove-sync takes */
        if (n->kind == GPUFL__GN_MARK)
            gpufl__jw_str(&w, "mark", n->sub ? "end" : "begin");
        if (n->kind == GPUFL__GN_KERNEL)
            gpufl__jw_bool(&w, "nccl", n->nccl);
        if (n->graph_id)
            gpufl__jw_u64(&w, "graph_id", n->graph_id);
        gpufl__jw_obj_end(&w);
    }
    gpufl__jw_arr_end(&w);
    gpufl__jw_arr(&w, "edges");
    for (size_t i = 0; i < g->nedges; i++) {
        const gpufl__gedge *e = &g->edges[i];
        const gpufl__gnode *a = &g->nodes[e->from], *b = &g->nodes[e->to];
        if (!in_window(a, from, to) || !in_window(b, from, to))
            continue;
        gpufl__jw_obj(&w, NULL);
        gpufl__jw_u64(&w, "from", e->from);
        gpufl__jw_u64(&w, "to", e->to);
        gpufl__jw_str(&w, "kind", gpufl__gedge_kind_name(e->kind));
        gpufl__jw_bool(&w, "inferred", e->inferred);
        if (e->kind == GPUFL__GE_HOST)
            gpufl__jw_i64(&w, "gap_ns", (int64_t)(b->start - a->end));
        gpufl__jw_obj_end(&w);
    }
    gpufl__jw_arr_end(&w);
    gpufl__jw_u64(&w, "inferred_edges", g->inferred);
    gpufl__jw_obj_end(&w);
    return gpufl__jw_write(&w, out);
}

/* Text inside a dot string: quotes and backslashes escaped, control bytes
 * dropped. */
static void dot_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, out);
    }
}

int gpufl__graph_write_dot(const gpufl__graph *g, uint64_t from, uint64_t to, FILE *out)
{
    static const char *const shape[GPUFL__GN_KIND_COUNT] = {"box", "box", "box", "ellipse", "octagon", "plaintext"};
    fprintf(out, "digraph gpufl {\n  rankdir=LR;\n  node [fontsize=10];\n");
    for (size_t i = 0; i < g->n; i++) {
        const gpufl__gnode *n = &g->nodes[i];
        if (!in_window(n, from, to))
            continue;
        fprintf(out, "  n%zu [shape=%s%s, label=\"%s ", i, shape[n->kind], n->nccl ? ", color=red" : "",
                gpufl__gnode_kind_name(n->kind));
        dot_text(out, label(g, n));
        fprintf(out, "\\n%llu ns\"];\n", (unsigned long long)(n->end - n->start));
    }
    for (size_t i = 0; i < g->nedges; i++) {
        const gpufl__gedge *e = &g->edges[i];
        if (!in_window(&g->nodes[e->from], from, to) || !in_window(&g->nodes[e->to], from, to))
            continue;
        fprintf(out, "  n%u -> n%u [label=\"%s%s\"%s];\n", e->from, e->to, gpufl__gedge_kind_name(e->kind),
                e->inferred ? " (inferred)" : "", e->inferred ? ", style=dashed" : "");
    }
    fprintf(out, "}\n");
    return fflush(out) == 0 && !ferror(out) ? 0 : GPUFL_EIO;
}
