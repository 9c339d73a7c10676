/*
 * The hotspots analysis (analysis.h): kernels by total GPU time, with their
 * time distribution, launch configuration, and where they were launched
 * from (scopes, NVTX ranges, PyTorch ops, CPU stacks).
 *
 * Pass 1 adds up per launch configuration (a small table: every launch of
 * a configuration has one name), which gives every kernel name's totals
 * without touching a hash map per launch. Pass 2 visits only the launches
 * of the top kernels: their durations (grouped by kernel, then counted, for
 * the percentiles), streams, scope nodes and stacks. GPU time per (kernel,
 * scope node) is added up in a table indexed by both (the trees have
 * hundreds of nodes), or, when that table would pass DENSE_MAX entries
 * (thousands of kernels listed, thousands of nodes), in the hash map the
 * stacks use; both give the same lists.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_internal.h"
#include "analyze/ana_select.h"
#include "analyze/ana_util.h"

#define DENSE_MAX (1u << 20) /* (kernel, node) entries of a per-tree table: 16 MB */
/* `where` lists besides the trees' */
#define W_STACKS GPUFL__ANA_TREE_COUNT
#define W_OPS (GPUFL__ANA_TREE_COUNT + 1) /* keys of the PyTorch ops (ana_op_rows.h) */

typedef struct cfg_sum {
    uint64_t count, total;
    uint64_t min, max;
    size_t first; /* row of its first launch */
} cfg_sum;

typedef struct name_sum {
    uint32_t name;
    uint64_t count, total, min, max;
} name_sum;

/* What a top kernel got from one scope node, stack or op. */
typedef struct where {
    uint32_t rank; /* of the kernel */
    uint8_t tree;  /* GPUFL__ANA_TREE_*, W_STACKS or W_OPS */
    uint32_t key;  /* node, stack id or op key (keys are in text order) */
    uint64_t launches, gpu_ns;
} where;

typedef struct hot_build {
    const gpufl__rows *a;
    ana_attr *x;
    const gpufl__ana_options *o;
    cfg_sum *cfg;
    name_sum *names;
    size_t nnames, names_cap;
    uint32_t *name_of_cfg;  /* index in names */
    uint32_t *rank_of_cfg;  /* rank of its name, NONE when not listed */
    uint32_t *order;        /* names by total descending */
    uint32_t *rank_of_name; /* NONE when not listed */
    uint32_t ntop;
    uint64_t *dur;      /* durations of top kernels, grouped by rank */
    size_t *fill;       /* per rank: where its next duration goes */
    uint8_t *on_stream; /* rank x stream row */
    where *wh;
    size_t nwh, wh_cap;
    ana_map wh_of;                             /* (rank, tree, key) -> index in wh */
    uint64_t *node_sum[GPUFL__ANA_TREE_COUNT]; /* per tree, when dense: rank x node x
                                                  {launches, gpu_ns}; else NULL */
} hot_build;

/* The launch configuration of config row c, in the result's widths (the
 * trace's columns have the same). */
static void config_of(const gpufl__rows *a, uint32_t c, gpufl__ana_launch_config *out)
{
    gpufl__config_row g;
    gpufl__config_row_get(a, c, &g);
    for (int d = 0; d < 3; d++) {
        out->grid[d] = g.grid[d];
        out->block[d] = (uint16_t)g.block[d];
    }
    out->registers = (uint16_t)g.registers;
    out->static_smem = g.static_smem;
    out->dynamic_smem = g.dynamic_smem;
    out->local_mem = g.local_mem;
    out->occupancy_x10000 = (uint16_t)g.occupancy_x10000;
    out->limiter = g.limiter;
}

static int pass_configs(hot_build *b)
{
    const gpufl__rows *a = b->a;
    size_t nc = a->configs->n;
    b->cfg = calloc(nc ? nc : 1, sizeof *b->cfg);
    b->name_of_cfg = malloc((nc ? nc : 1) * sizeof *b->name_of_cfg);
    if (!b->cfg || !b->name_of_cfg)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < gpufl__k_n(a); i++) {
        cfg_sum *c = &b->cfg[gpufl__k_config(a, i)];
        uint64_t d = gpufl__k_dur(a, i);
        if (c->count++ == 0) {
            c->first = i;
            c->min = c->max = d;
        }
        c->total += d;
        c->min = d < c->min ? d : c->min;
        c->max = d > c->max ? d : c->max;
    }
    ana_map name_idx = {0};
    int rc = 0;
    for (size_t c = 0; c < nc && rc == 0; c++) {
        b->name_of_cfg[c] = GPUFL__ANA_NONE;
        if (!b->cfg[c].count)
            continue;
        uint32_t g;
        int put = gpufl__ana_map_put(&name_idx, gpufl__cfg_name(a, (uint32_t)c), 0, (uint32_t)b->nnames, &g);
        if (put < 0) {
            rc = put;
            break;
        }
        if (put == 0) {
            if (gpufl__ana_grow(&b->names, &b->names_cap, b->nnames + 1, sizeof *b->names) != 0) {
                rc = GPUFL_ENOMEM;
                break;
            }
            b->names[b->nnames++] = (name_sum){.name = gpufl__cfg_name(a, (uint32_t)c), .min = UINT64_MAX};
        }
        name_sum *s = &b->names[g];
        const cfg_sum *cs = &b->cfg[c];
        s->count += cs->count;
        s->total += cs->total;
        s->min = cs->min < s->min ? cs->min : s->min;
        s->max = cs->max > s->max ? cs->max : s->max;
        b->name_of_cfg[c] = g;
    }
    gpufl__ana_map_free(&name_idx);
    return rc;
}

static int by_total(const void *x, const void *y, void *ctx)
{
    const hot_build *b = ctx;
    const name_sum *p = &b->names[*(const uint32_t *)x], *q = &b->names[*(const uint32_t *)y];
    if (p->total != q->total)
        return p->total > q->total ? -1 : 1;
    int c = gpufl__ana_strcmp(b->a->t, p->name, q->name);
    return c ? c : (p->name > q->name) - (p->name < q->name);
}

static int pick_top(hot_build *b)
{
    b->order = malloc((b->nnames ? b->nnames : 1) * sizeof *b->order);
    b->rank_of_name = malloc((b->nnames ? b->nnames : 1) * sizeof *b->rank_of_name);
    if (!b->order || !b->rank_of_name)
        return GPUFL_ENOMEM;
    for (size_t g = 0; g < b->nnames; g++) {
        b->order[g] = (uint32_t)g;
        b->rank_of_name[g] = GPUFL__ANA_NONE;
    }
    qsort_r(b->order, b->nnames, sizeof *b->order, by_total, b);
    b->ntop = (uint32_t)(b->nnames < b->o->top_kernels ? b->nnames : b->o->top_kernels);
    size_t ndur = 0;
    for (uint32_t r = 0; r < b->ntop; r++) {
        b->rank_of_name[b->order[r]] = r;
        ndur += b->names[b->order[r]].count;
    }
    size_t nc = b->a->configs->n;
    if (!(b->rank_of_cfg = malloc((nc ? nc : 1) * sizeof *b->rank_of_cfg)))
        return GPUFL_ENOMEM;
    for (size_t c = 0; c < nc; c++)
        b->rank_of_cfg[c] = b->name_of_cfg[c] == GPUFL__ANA_NONE ? GPUFL__ANA_NONE : b->rank_of_name[b->name_of_cfg[c]];
    for (int t = 0; t < GPUFL__ANA_TREE_COUNT; t++) {
        size_t cells = (size_t)b->ntop * b->x->trees[t].n;
        if (cells && cells <= DENSE_MAX && !(b->node_sum[t] = calloc(2 * cells, sizeof *b->node_sum[t])))
            return GPUFL_ENOMEM;
    }
    size_t nst = gpufl__streams_n(b->a);
    b->dur = malloc((ndur ? ndur : 1) * sizeof *b->dur);
    b->fill = malloc((b->ntop + 1) * sizeof *b->fill);
    b->on_stream = calloc((size_t)b->ntop * nst + 1, 1);
    if (!b->dur || !b->fill || !b->on_stream)
        return GPUFL_ENOMEM;
    b->fill[0] = 0;
    for (uint32_t r = 0; r < b->ntop; r++)
        b->fill[r + 1] = b->fill[r] + b->names[b->order[r]].count;
    return 0;
}

static int add_where(hot_build *b, uint32_t rank, uint8_t tree, uint32_t key, uint64_t dur)
{
    uint32_t w;
    int put = gpufl__ana_map_put(&b->wh_of, ((uint64_t)rank << 8) | tree, key, (uint32_t)b->nwh, &w);
    if (put < 0)
        return put;
    if (put == 0) {
        if (gpufl__ana_grow(&b->wh, &b->wh_cap, b->nwh + 1, sizeof *b->wh) != 0)
            return GPUFL_ENOMEM;
        b->wh[b->nwh++] = (where){rank, tree, key, 0, 0};
    }
    b->wh[w].launches++;
    b->wh[w].gpu_ns += dur;
    return 0;
}

/* Kernel of rank r got d ns from node of tree t (NONE: from none). */
static int add_node(hot_build *b, gpufl__ana_hotspot *h, uint32_t r, int t, uint32_t node, uint64_t d)
{
    if (node == GPUFL__ANA_NONE) {
        h->unscoped_ns[t] += d;
        return 0;
    }
    if (!b->node_sum[t])
        return add_where(b, r, (uint8_t)t, node, d);
    uint64_t *cell = &b->node_sum[t][2 * ((size_t)r * b->x->trees[t].n + node)];
    cell[0]++;
    cell[1] += d;
    return 0;
}

/* The launches of the top kernels, with what the result lists about them.
 * The fill offsets end up where the next rank's durations begin. */
static int pass_top(hot_build *b, gpufl__ana_hotspots *out)
{
    const gpufl__rows *a = b->a;
    size_t nst = gpufl__streams_n(a);
    for (size_t i = 0; i < gpufl__k_n(a); i++) {
        uint32_t r = b->rank_of_cfg[gpufl__k_config(a, i)];
        if (r == GPUFL__ANA_NONE)
            continue;
        uint64_t d = gpufl__k_dur(a, i);
        uint32_t st = gpufl__k_stream_row(a, i);
        b->dur[b->fill[r]++] = d;
        b->on_stream[(size_t)r * nst + st] = 1;
        uint32_t c = gpufl__k_caller(a, i);
        gpufl__ana_hotspot *h = &out->kernels[r];
        int rc = add_node(b, h, r, GPUFL__ANA_TREE_SCOPES, ana_attr_scope_node(b->x, c), d);
        uint32_t row = gpufl__ana_attr_nvtx_row(b->x, c, st, gpufl__k_api_start(a, i));
        if (rc == 0)
            rc = add_node(b, h, r, GPUFL__ANA_TREE_NVTX, ana_attr_row_node(b->x, row), d);
        uint32_t key = ana_op_key_of(&b->x->op_keys, ana_attr_op_row(b->x, row));
        if (key == GPUFL__ANA_NONE)
            h->unop_ns += d;
        else if (rc == 0)
            rc = add_where(b, r, W_OPS, key, d);
        uint32_t stack = gpufl__caller_stack(a, c);
        if (stack == 0)
            h->no_stack_launches++;
        else if (rc == 0)
            rc = add_where(b, r, W_STACKS, stack, d);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The dense tables' cells that got launches, as `where`s like the map's. */
static int dense_wheres(hot_build *b)
{
    for (int t = 0; t < GPUFL__ANA_TREE_COUNT; t++) {
        uint32_t n = b->x->trees[t].n;
        for (uint32_t r = 0; r < b->ntop && b->node_sum[t]; r++)
            for (uint32_t node = 0; node < n; node++) {
                const uint64_t *cell = &b->node_sum[t][2 * ((size_t)r * n + node)];
                if (!cell[0])
                    continue;
                if (gpufl__ana_grow(&b->wh, &b->wh_cap, b->nwh + 1, sizeof *b->wh) != 0)
                    return GPUFL_ENOMEM;
                b->wh[b->nwh++] = (where){r, (uint8_t)t, node, cell[0], cell[1]};
            }
    }
    return 0;
}

/* Per kernel and list: scopes by gpu_ns descending then node; ops by
 * gpu_ns descending then key (text order); stacks by launches descending,
 * then gpu_ns descending, then id. */
static int where_cmp(const void *x, const void *y)
{
    const where *p = x, *q = y;
    if (p->rank != q->rank)
        return p->rank < q->rank ? -1 : 1;
    if (p->tree != q->tree)
        return p->tree < q->tree ? -1 : 1;
    if (p->tree == W_STACKS && p->launches != q->launches)
        return p->launches > q->launches ? -1 : 1;
    if (p->gpu_ns != q->gpu_ns)
        return p->gpu_ns > q->gpu_ns ? -1 : 1;
    return (p->key > q->key) - (p->key < q->key);
}

static int fill_where(hot_build *b, gpufl__ana_hotspots *out)
{
    if (b->nwh)
        qsort(b->wh, b->nwh, sizeof *b->wh, where_cmp);
    for (size_t i = 0; i < b->nwh;) {
        size_t j = i;
        while (j < b->nwh && b->wh[j].rank == b->wh[i].rank && b->wh[j].tree == b->wh[i].tree)
            j++;
        const where *w = &b->wh[i];
        gpufl__ana_hotspot *h = &out->kernels[w->rank];
        double total = (double)h->dur.total;
        if (w->tree == W_OPS) {
            size_t m = j - i < b->o->top_scopes ? j - i : b->o->top_scopes;
            if (!(h->ops = calloc(m ? m : 1, sizeof *h->ops)))
                return GPUFL_ENOMEM;
            h->nops = (uint32_t)m;
            for (size_t k = 0; k < m; k++) {
                const ana_op_key *key = &b->x->op_keys.keys[w[k].key];
                h->ops[k] =
                    (gpufl__ana_hot_op){key->name,     key->module, key->backward_only,
                                        w[k].launches, w[k].gpu_ns, total > 0 ? (double)w[k].gpu_ns / total : 0};
            }
        } else if (w->tree == W_STACKS) {
            size_t m = j - i < b->o->top_stacks ? j - i : b->o->top_stacks;
            h->distinct_stacks = (uint32_t)(j - i);
            if (!(h->stacks = calloc(m ? m : 1, sizeof *h->stacks)))
                return GPUFL_ENOMEM;
            h->nstacks = (uint32_t)m;
            for (size_t k = 0; k < m; k++)
                h->stacks[k] = (gpufl__ana_hot_stack){w[k].key, w[k].launches, w[k].gpu_ns,
                                                      (double)w[k].launches / (double)h->dur.n};
        } else {
            size_t m = j - i < b->o->top_scopes ? j - i : b->o->top_scopes;
            gpufl__ana_hot_scope *s = calloc(m ? m : 1, sizeof *s);
            if (!s)
                return GPUFL_ENOMEM;
            h->scopes[w->tree] = s;
            h->nscopes[w->tree] = (uint32_t)m;
            const gpufl__ana_scope_tree *tree = &b->x->trees[w->tree];
            for (size_t k = 0; k < m; k++)
                s[k] = (gpufl__ana_hot_scope){w[k].key, w[k].key < tree->n ? tree->nodes[w[k].key].name : 0,
                                              w[k].launches, w[k].gpu_ns, total > 0 ? (double)w[k].gpu_ns / total : 0};
        }
        i = j;
    }
    return 0;
}

/* The configuration facts of kernel g: the most launched (ties: the one
 * launched first), how many, and the first launch's mangled name. */
static void fill_config(hot_build *b, uint32_t g, gpufl__ana_hotspot *h)
{
    const gpufl__rows *a = b->a;
    uint32_t best = GPUFL__ANA_NONE, first = GPUFL__ANA_NONE;
    for (size_t c = 0; c < a->configs->n; c++) {
        if (b->name_of_cfg[c] != g)
            continue;
        const cfg_sum *s = &b->cfg[c];
        h->configs++;
        if (best == GPUFL__ANA_NONE || s->count > b->cfg[best].count ||
            (s->count == b->cfg[best].count && s->first < b->cfg[best].first))
            best = (uint32_t)c;
        if (first == GPUFL__ANA_NONE || s->first < b->cfg[first].first)
            first = (uint32_t)c;
    }
    if (best == GPUFL__ANA_NONE)
        return;
    config_of(a, best, &h->config);
    h->config_launches = b->cfg[best].count;
    h->mangled = gpufl__cfg_mangled(a, first);
}

static int fill_kernel(hot_build *b, uint32_t r, gpufl__ana_hotspot *h, uint64_t all_ns)
{
    const gpufl__rows *a = b->a;
    uint32_t g = b->order[r];
    h->name = b->names[g].name;
    size_t lo = r ? b->fill[r - 1] : 0, m = b->fill[r] - lo;
    int rc = gpufl__ana_dist_select(b->dur + lo, m, false, &h->dur);
    if (rc != 0)
        return rc;
    h->share = all_ns ? (double)h->dur.total / (double)all_ns : 0;
    fill_config(b, g, h);
    size_t nst = gpufl__streams_n(a);
    ana_map seen = {0};
    for (size_t s = 0; s < nst; s++) {
        if (!b->on_stream[(size_t)r * nst + s])
            continue;
        uint32_t v;
        uint32_t dev = gpufl__stream_device(a, (uint32_t)s);
        int p1 = gpufl__ana_map_put(&seen, dev, UINT64_MAX, 0, &v); /* the device */
        int p2 = p1 < 0 ? p1 : gpufl__ana_map_put(&seen, dev, gpufl__stream_id(a, (uint32_t)s), 0, &v);
        if (p1 < 0 || p2 < 0) {
            gpufl__ana_map_free(&seen);
            return GPUFL_ENOMEM;
        }
        h->devices += p1 == 0;
        h->streams += p2 == 0;
    }
    gpufl__ana_map_free(&seen);
    return 0;
}

int gpufl__ana_hotspots_with(ana_attr *x, const gpufl__ana_options *o, gpufl__ana_hotspots *out)
{
    memset(out, 0, sizeof *out);
    hot_build b = {.a = x->a, .x = x, .o = o};
    int rc = pass_configs(&b);
    if (rc == 0)
        rc = pick_top(&b);
    if (rc == 0 && b.ntop && !(out->kernels = calloc(b.ntop, sizeof *out->kernels)))
        rc = GPUFL_ENOMEM;
    out->n = b.ntop;
    if (rc == 0)
        rc = pass_top(&b, out); /* moves fill[r] from the start of rank r's durations to its end */
    if (rc == 0)
        rc = dense_wheres(&b);
    for (size_t g = 0; g < b.nnames; g++) {
        out->launches += b.names[g].count;
        out->total_ns += b.names[g].total;
    }
    out->distinct = (uint32_t)b.nnames;
    for (uint32_t r = 0; r < b.ntop && rc == 0; r++)
        rc = fill_kernel(&b, r, &out->kernels[r], out->total_ns);
    if (rc == 0)
        rc = fill_where(&b, out);
    out->stack_frames = false; /* the trace keeps stack ids, not their frames */
    free(b.cfg);
    free(b.names);
    free(b.name_of_cfg);
    free(b.rank_of_cfg);
    for (int t = 0; t < GPUFL__ANA_TREE_COUNT; t++)
        free(b.node_sum[t]);
    free(b.order);
    free(b.rank_of_name);
    free(b.dur);
    free(b.fill);
    free(b.on_stream);
    free(b.wh);
    gpufl__ana_map_free(&b.wh_of);
    if (rc != 0)
        gpufl__ana_hotspots_free(out);
    return rc;
}

void gpufl__ana_options_fill(const gpufl__ana_options *o, gpufl__ana_options *f)
{
    gpufl__ana_options_default(f);
    if (!o)
        return;
    if (o->top_kernels)
        f->top_kernels = o->top_kernels;
    if (o->top_scopes)
        f->top_scopes = o->top_scopes;
    if (o->top_stacks)
        f->top_stacks = o->top_stacks;
    if (o->max_allocations)
        f->max_allocations = o->max_allocations;
}

int gpufl__analyze_hotspots(const gpufl_trace *t, const gpufl__ana_options *o, gpufl__ana_hotspots *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__ana_options f;
    gpufl__ana_options_fill(o, &f);
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    ana_attr x;
    int rc = gpufl__ana_attr_open(&x, &a);
    if (rc == 0)
        rc = gpufl__ana_hotspots_with(&x, &f, out);
    gpufl__ana_attr_close(&x);
    return rc;
}

void gpufl__ana_hotspots_free(gpufl__ana_hotspots *h)
{
    if (!h)
        return;
    for (uint32_t i = 0; i < h->n && h->kernels; i++) {
        for (int t = 0; t < GPUFL__ANA_TREE_COUNT; t++)
            free(h->kernels[i].scopes[t]);
        free(h->kernels[i].stacks);
        free(h->kernels[i].ops);
    }
    free(h->kernels);
    memset(h, 0, sizeof *h);
}
