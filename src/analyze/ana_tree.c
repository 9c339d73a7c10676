/*
 * Building a tree of paths from scope instances (ana_tree.h).
 *
 * Nodes are first made in the order rows meet them (a hash map from
 * (parent node, name, domain) to a node), then each node's wall times are
 * gathered into one array grouped by node (a counting sort of the rows)
 * for the nearest-rank percentiles, and last the nodes are renumbered into
 * the pre-order the result promises.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "analyze/ana_tree.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/trace_access.h"

#define UNSET (UINT32_MAX - 1) /* row_node: not resolved yet */
#define BUSY (UINT32_MAX - 2)  /* row_node: on the chain being resolved */

typedef struct tmp_node {
    uint32_t parent, name, domain;
    uint64_t count, unended;
    uint32_t threads;
    gpufl__ana_dist wall;
} tmp_node;

typedef struct tree_build {
    const gpufl_trace *t;
    const gpufl_trace_scopes *s;
    tmp_node *nodes;
    size_t n, cap;
    ana_map by_key;
    uint32_t *row_node;
    uint32_t *chain;
    size_t chain_cap;
} tree_build;

static int node_for(tree_build *b, uint32_t parent, uint32_t name, uint32_t domain, uint32_t *node)
{
    int rc = gpufl__ana_map_put(&b->by_key, parent, ((uint64_t)name << 32) | domain, (uint32_t)b->n, node);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (gpufl__ana_grow(&b->nodes, &b->cap, b->n + 1, sizeof *b->nodes) != 0)
        return GPUFL_ENOMEM;
    b->nodes[b->n++] = (tmp_node){.parent = parent, .name = name, .domain = domain};
    return 0;
}

static inline bool resolved(uint32_t v) { return v < BUSY; }

/* Gives row i, and the unresolved rows above it, their nodes: walks up to
 * the first resolved ancestor (or a root), then assigns nodes downwards. */
static int resolve(tree_build *b, size_t i, const uint32_t *parent_row, const uint8_t *skip)
{
    size_t depth = 0;
    uint32_t r = (uint32_t)i;
    for (;;) {
        if (gpufl__ana_grow(&b->chain, &b->chain_cap, depth + 1, sizeof *b->chain) != 0)
            return GPUFL_ENOMEM;
        b->chain[depth++] = r;
        b->row_node[r] = BUSY;
        uint32_t p = parent_row[r];
        if (p == GPUFL__ANA_NONE || p >= b->s->n || (skip && skip[p]) || b->row_node[p] != UNSET)
            break;
        r = p;
    }
    uint32_t p = parent_row[b->chain[depth - 1]];
    uint32_t up = GPUFL__ANA_NONE;
    if (p != GPUFL__ANA_NONE && p < b->s->n && !(skip && skip[p]) && resolved(b->row_node[p]))
        up = b->row_node[p]; /* else a root, or the row where a loop closed */
    while (depth > 0) {
        uint32_t row = b->chain[--depth];
        int rc = node_for(b, up, b->s->name[row], b->s->domain ? b->s->domain[row] : 0, &up);
        if (rc != 0)
            return rc;
        b->row_node[row] = up;
    }
    return 0;
}

/* Wall times and threads of every node: rows grouped by node, each group
 * sorted. */
static int measure(tree_build *b, const uint8_t *skip)
{
    const gpufl_trace_scopes *s = b->s;
    size_t *start = calloc(b->n + 1, sizeof *start);
    uint64_t *dur = malloc((s->n ? s->n : 1) * sizeof *dur);
    uint64_t *tid = malloc((s->n ? s->n : 1) * sizeof *tid);
    int rc = GPUFL_ENOMEM;
    if (!start || !dur || !tid)
        goto out;
    for (size_t i = 0; i < s->n; i++)
        if (!(skip && skip[i]))
            start[b->row_node[i] + 1]++;
    for (size_t k = 0; k < b->n; k++)
        start[k + 1] += start[k];
    for (size_t i = 0; i < s->n; i++) {
        if (skip && skip[i])
            continue;
        tmp_node *nd = &b->nodes[b->row_node[i]];
        /* one that never ended runs to the session's last recorded time,
         * which the trace gave it as its end */
        uint64_t end = ta_s_end(s, i);
        nd->unended += ta_s_unended(s, i);
        size_t at = start[b->row_node[i]]++;
        dur[at] = end > s->begin_ns[i] ? end - s->begin_ns[i] : 0;
        tid[at] = s->tid[i];
    }
    /* start[k] is now the end of group k, which is where group k + 1 begins */
    for (size_t k = 0, lo = 0; k < b->n; lo = start[k], k++) {
        size_t m = start[k] - lo;
        tmp_node *nd = &b->nodes[k];
        if ((rc = gpufl__ana_sort_u64(dur + lo, m, NULL)) != 0 || (rc = gpufl__ana_sort_u64(tid + lo, m, NULL)) != 0)
            goto out;
        gpufl__ana_dist_sorted(dur + lo, m, &nd->wall);
        nd->count = m;
        for (size_t j = 0; j < m; j++)
            nd->threads += j == 0 || tid[lo + j] != tid[lo + j - 1];
    }
    rc = 0;
out:
    free(start);
    free(dur);
    free(tid);
    return rc;
}

/* Siblings: wall.total descending, then name text, then domain text, then
 * the order met (so the order is total). */
static int sibling_cmp(const void *x, const void *y, void *ctx)
{
    const tree_build *b = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const tmp_node *p = &b->nodes[i], *q = &b->nodes[j];
    if (p->wall.total != q->wall.total)
        return p->wall.total > q->wall.total ? -1 : 1;
    int c = gpufl__ana_strcmp(b->t, p->name, q->name);
    if (c == 0)
        c = gpufl__ana_strcmp(b->t, p->domain, q->domain);
    return c ? c : (i > j) - (i < j);
}

/* Renumbers the nodes into pre-order and fills out->nodes. perm[tmp] is
 * the final index. */
static int order(tree_build *b, uint64_t wall_ns, gpufl__ana_scope_tree *out, uint32_t *perm)
{
    size_t n = b->n;
    /* kids[start[p]..start[p+1]) are the children of tmp node p; slot n
     * (parent NONE) holds the roots */
    size_t *start = calloc(n + 2, sizeof *start);
    size_t *fill = malloc((n + 1) * sizeof *fill);
    uint32_t *kids = malloc((n ? n : 1) * sizeof *kids);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    out->nodes = calloc(n ? n : 1, sizeof *out->nodes);
    if (!start || !fill || !kids || !stack || !out->nodes) {
        free(start);
        free(fill);
        free(kids);
        free(stack);
        free(out->nodes);
        out->nodes = NULL;
        return GPUFL_ENOMEM;
    }
#define PSLOT(k) (b->nodes[k].parent == GPUFL__ANA_NONE ? n : b->nodes[k].parent)
    for (size_t k = 0; k < n; k++)
        start[PSLOT(k) + 1]++;
    for (size_t p = 0; p <= n; p++)
        start[p + 1] += start[p];
    memcpy(fill, start, (n + 1) * sizeof *fill);
    for (size_t k = 0; k < n; k++)
        kids[fill[PSLOT(k)]++] = (uint32_t)k;
    free(fill);
    for (size_t p = 0; p <= n; p++)
        qsort_r(kids + start[p], start[p + 1] - start[p], sizeof *kids, sibling_cmp, b);
    size_t top = 0, next = 0;
    for (size_t r = start[n + 1]; r > start[n]; r--)
        stack[top++] = kids[r - 1];
    while (top > 0) {
        uint32_t k = stack[--top];
        uint32_t f = (uint32_t)next++;
        perm[k] = f;
        const tmp_node *src = &b->nodes[k];
        gpufl__ana_scope_node *d = &out->nodes[f];
        d->tree = out->tree;
        d->name = src->name;
        d->domain = src->domain;
        d->parent = src->parent == GPUFL__ANA_NONE ? GPUFL__ANA_NONE : perm[src->parent];
        d->depth = d->parent == GPUFL__ANA_NONE ? 0 : out->nodes[d->parent].depth + 1;
        d->children = (uint32_t)(start[k + 1] - start[k]);
        d->count = src->count;
        d->unended = src->unended;
        d->threads = src->threads;
        d->wall = src->wall;
        int64_t div = d->parent == GPUFL__ANA_NONE ? (int64_t)wall_ns : out->nodes[d->parent].wall.total;
        d->share_of_parent = div > 0 ? (double)d->wall.total / (double)div : 0;
        for (size_t r = start[k + 1]; r > start[k]; r--)
            stack[top++] = kids[r - 1];
    }
#undef PSLOT
    out->n = (uint32_t)n;
    out->roots = (uint32_t)(start[n + 1] - start[n]);
    free(start);
    free(kids);
    free(stack);
    return 0;
}

int gpufl__ana_tree_build(const gpufl_trace *t, uint8_t tree, const gpufl_trace_scopes *s, const uint32_t *parent_row,
                          const uint8_t *skip, uint64_t wall_ns, gpufl__ana_scope_tree *out, uint32_t **row_node)
{
    memset(out, 0, sizeof *out);
    out->tree = tree;
    *row_node = NULL;
    tree_build b = {.t = t, .s = s};
    uint32_t *perm = NULL;
    int rc = GPUFL_ENOMEM;
    b.row_node = malloc((s->n ? s->n : 1) * sizeof *b.row_node);
    if (!b.row_node)
        goto fail;
    for (size_t i = 0; i < s->n; i++)
        b.row_node[i] = skip && skip[i] ? GPUFL__ANA_NONE : UNSET;
    for (size_t i = 0; i < s->n; i++) {
        if (b.row_node[i] == UNSET && (rc = resolve(&b, i, parent_row, skip)) != 0)
            goto fail;
        out->instances += !(skip && skip[i]);
    }
    if ((rc = measure(&b, skip)) != 0)
        goto fail;
    rc = GPUFL_ENOMEM;
    if (!(perm = malloc((b.n ? b.n : 1) * sizeof *perm)))
        goto fail;
    if ((rc = order(&b, wall_ns, out, perm)) != 0)
        goto fail;
    for (size_t i = 0; i < s->n; i++)
        if (b.row_node[i] != GPUFL__ANA_NONE)
            b.row_node[i] = perm[b.row_node[i]];
    free(perm);
    free(b.nodes);
    free(b.chain);
    gpufl__ana_map_free(&b.by_key);
    *row_node = b.row_node;
    return 0;
fail:
    free(perm);
    free(b.nodes);
    free(b.chain);
    free(b.row_node);
    gpufl__ana_map_free(&b.by_key);
    memset(out, 0, sizeof *out);
    return rc;
}
