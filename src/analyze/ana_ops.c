/*
 * The ops analysis (analysis.h, "PyTorch ops"): the GPU work and the
 * allocations given to the op ranges their launching calls were made in,
 * added up per (module, op) key (ana_op_rows.h), then per op and per
 * module.
 *
 * One pass over the work and one over the allocations, each row an NVTX
 * lookup (ana_attr) and two array reads; in a session without op ranges
 * the pass only adds up the work's time. The rest is per key (distinct
 * (module, op) pairs: hundreds).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_attr.h"
#include "analyze/ana_internal.h"
#include "analyze/ana_util.h"

#define NONE GPUFL__ANA_NONE

typedef struct op_list {
    const gpufl_trace *t;
    const gpufl__ana_op *ops;
    const uint32_t *module_rank; /* per entry of ops: its module's rank; NULL: none */
} op_list;

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

/* Module rank, then total_ns descending, then name text, forward before
 * backward_only, then module text. */
static int op_cmp(const void *x, const void *y, void *ctx)
{
    const op_list *l = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const gpufl__ana_op *p = &l->ops[i], *q = &l->ops[j];
    int c = l->module_rank ? cmp_u64(l->module_rank[i], l->module_rank[j]) : 0;
    if (!c)
        c = -cmp_u64(p->total_ns, q->total_ns);
    if (!c)
        c = gpufl__ana_strcmp(l->t, p->name, q->name);
    if (!c)
        c = (p->backward_only > q->backward_only) - (p->backward_only < q->backward_only);
    if (!c)
        c = gpufl__ana_strcmp(l->t, p->module, q->module);
    if (!c)
        c = cmp_u64(p->name, q->name);
    return c ? c : cmp_u64(p->module, q->module);
}

typedef struct module_list {
    const gpufl_trace *t;
    const gpufl__ana_op_module *m;
} module_list;

static int module_cmp(const void *x, const void *y, void *ctx)
{
    const module_list *l = ctx;
    const gpufl__ana_op_module *p = &l->m[*(const uint32_t *)x], *q = &l->m[*(const uint32_t *)y];
    int c = -cmp_u64(p->total_ns, q->total_ns);
    if (!c)
        c = gpufl__ana_strcmp(l->t, p->module, q->module);
    return c ? c : cmp_u64(p->module, q->module);
}

static void add_into(gpufl__ana_op *d, const gpufl__ana_op *s)
{
    d->calls += s->calls;
    d->backward_calls += s->backward_calls;
    d->kernels += s->kernels;
    d->work += s->work;
    d->forward_ns += s->forward_ns;
    d->backward_ns += s->backward_ns;
    d->total_ns += s->total_ns;
    d->allocs += s->allocs;
    d->alloc_bytes += s->alloc_bytes;
}

/* Sorts n entries of v (size bytes each) by the permutation sort gives. */
static int permute(void *v, size_t n, size_t size, const uint32_t *perm)
{
    if (n == 0)
        return 0; /* v may be NULL: nothing was recorded */
    char *tmp = malloc(n * size);
    if (!tmp)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < n; i++)
        memcpy(tmp + i * size, (char *)v + (size_t)perm[i] * size, size);
    memcpy(v, tmp, n * size);
    free(tmp);
    return 0;
}

static uint32_t *identity(size_t n)
{
    uint32_t *p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (uint32_t)i;
    return p;
}

/* The work and the allocations, given to keys (out->module_ops, one entry
 * per key, in key order). */
static void attribute(ana_attr *x, gpufl__ana_ops *out)
{
    const gpufl__rows *a = x->a;
    const ana_op_keys *k = &x->op_keys;
    gpufl__ops it;
    gpufl__op op;
    gpufl__ops_begin(&it, a);
    while (gpufl__ops_next(&it, &op)) {
        uint64_t dur = op.end - op.start;
        out->work++;
        out->work_ns += dur;
        uint32_t row =
            k->n ? ana_attr_op_row(x, gpufl__ana_attr_nvtx_row(x, op.caller, op.stream_row, op.api_start)) : NONE;
        uint32_t key = ana_op_key_of(k, row);
        if (key == NONE) {
            out->outside++;
            out->outside_ns += dur;
            continue;
        }
        gpufl__ana_op *o = &out->module_ops[key];
        o->work++;
        o->kernels += op.table == GPUFL__TBL_KERNEL;
        if (x->ops.flags[row] & GPUFL__ANA_OPROW_BACKWARD)
            o->backward_ns += dur;
        else
            o->forward_ns += dur;
    }
    for (size_t i = 0; i < gpufl__m_n(a); i++) {
        if (gpufl__m_is_free(a, i) || gpufl__m_failed(a, i))
            continue;
        uint64_t bytes = gpufl__m_bytes(a, i);
        uint32_t row = k->n ? ana_attr_op_row(x, gpufl__ana_attr_nvtx_row(x, gpufl__m_caller(a, i),
                                                                          a->memory->stream_row[i], gpufl__m_ts(a, i)))
                            : NONE;
        uint32_t key = ana_op_key_of(k, row);
        if (key == NONE) {
            out->outside_allocs++;
            out->outside_alloc_bytes += bytes;
            continue;
        }
        out->module_ops[key].allocs++;
        out->module_ops[key].alloc_bytes += bytes;
        out->allocs++;
        out->alloc_bytes += bytes;
    }
}

/* ops from module_ops: one per (name, backward_only). */
static int gather_ops(gpufl__ana_ops *out)
{
    ana_map idx = {0};
    size_t cap = 0;
    int rc = 0;
    for (uint32_t i = 0; i < out->nmodule_ops && rc == 0; i++) {
        const gpufl__ana_op *s = &out->module_ops[i];
        uint32_t j;
        int put = gpufl__ana_map_put(&idx, s->name, s->backward_only, out->n, &j);
        if (put < 0) {
            rc = put;
            break;
        }
        if (put == 0) {
            if (gpufl__ana_grow(&out->ops, &cap, out->n + 1, sizeof *out->ops) != 0) {
                rc = GPUFL_ENOMEM;
                break;
            }
            out->ops[out->n++] = (gpufl__ana_op){.name = s->name, .backward_only = s->backward_only};
        }
        add_into(&out->ops[j], s);
    }
    gpufl__ana_map_free(&idx);
    return rc;
}

/* modules from module_ops, and the rank of each module_ops entry's module
 * (*rank, per entry) once the modules are sorted. */
static int gather_modules(const gpufl_trace *t, gpufl__ana_ops *out, uint32_t **rank)
{
    ana_map idx = {0};
    size_t cap = 0;
    uint32_t *perm = NULL, *inv = NULL;
    int rc = (*rank = malloc((out->nmodule_ops ? out->nmodule_ops : 1) * sizeof **rank)) ? 0 : GPUFL_ENOMEM;
    for (uint32_t i = 0; i < out->nmodule_ops && rc == 0; i++) {
        const gpufl__ana_op *s = &out->module_ops[i];
        uint32_t j;
        int put = gpufl__ana_map_put(&idx, s->module, 0, out->nmodules, &j);
        if (put < 0) {
            rc = put;
            break;
        }
        if (put == 0) {
            if (gpufl__ana_grow(&out->modules, &cap, out->nmodules + 1, sizeof *out->modules) != 0) {
                rc = GPUFL_ENOMEM;
                break;
            }
            out->modules[out->nmodules++] = (gpufl__ana_op_module){.module = s->module};
        }
        gpufl__ana_op_module *m = &out->modules[j];
        m->kernels += s->kernels;
        m->work += s->work;
        m->forward_ns += s->forward_ns;
        m->backward_ns += s->backward_ns;
        m->total_ns += s->total_ns;
        m->allocs += s->allocs;
        m->alloc_bytes += s->alloc_bytes;
        m->nops++;
        (*rank)[i] = j; /* the module's index until sorted */
    }
    if (rc == 0 && (!(perm = identity(out->nmodules)) || !(inv = malloc((out->nmodules + 1) * sizeof *inv))))
        rc = GPUFL_ENOMEM;
    if (rc == 0) {
        module_list l = {t, out->modules};
        qsort_r(perm, out->nmodules, sizeof *perm, module_cmp, &l);
        for (uint32_t r = 0; r < out->nmodules; r++)
            inv[perm[r]] = r;
        for (uint32_t i = 0; i < out->nmodule_ops; i++)
            (*rank)[i] = inv[(*rank)[i]];
        rc = permute(out->modules, out->nmodules, sizeof *out->modules, perm);
    }
    for (uint32_t r = 0, first = 0; rc == 0 && r < out->nmodules; first += out->modules[r++].nops)
        out->modules[r].first = first;
    gpufl__ana_map_free(&idx);
    free(perm);
    free(inv);
    return rc;
}

static int sort_ops(const gpufl_trace *t, gpufl__ana_op *ops, uint32_t n, const uint32_t *module_rank)
{
    uint32_t *perm = identity(n);
    if (!perm)
        return GPUFL_ENOMEM;
    op_list l = {t, ops, module_rank};
    qsort_r(perm, n, sizeof *perm, op_cmp, &l);
    int rc = permute(ops, n, sizeof *ops, perm);
    free(perm);
    return rc;
}

int gpufl__ana_ops_with(ana_attr *x, gpufl__ana_ops *out)
{
    memset(out, 0, sizeof *out);
    const gpufl_trace *t = x->a->t;
    const ana_op_keys *k = &x->op_keys;
    out->op_ranges = x->ops.ops;
    out->backward_ranges = x->ops.backward_ops;
    out->module_ranges = x->ops.modules;
    out->nmodule_ops = (uint32_t)k->n;
    if (k->n && !(out->module_ops = calloc(k->n, sizeof *out->module_ops)))
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < k->n; i++)
        out->module_ops[i] = (gpufl__ana_op){.name = k->keys[i].name,
                                             .module = k->keys[i].module,
                                             .backward_only = k->keys[i].backward_only,
                                             .calls = k->keys[i].calls,
                                             .backward_calls = k->keys[i].backward_calls};
    attribute(x, out);
    for (uint32_t i = 0; i < out->nmodule_ops; i++) {
        gpufl__ana_op *o = &out->module_ops[i];
        o->total_ns = o->forward_ns + o->backward_ns;
        o->share = out->work_ns ? (double)o->total_ns / (double)out->work_ns : 0;
        out->in_ops += o->work;
        out->in_ops_ns += o->total_ns;
        out->forward_ns += o->forward_ns;
        out->backward_ns += o->backward_ns;
    }
    uint32_t *rank = NULL;
    int rc = gather_ops(out);
    if (rc == 0)
        rc = gather_modules(t, out, &rank);
    if (rc == 0)
        rc = sort_ops(t, out->ops, out->n, NULL);
    if (rc == 0)
        rc = sort_ops(t, out->module_ops, out->nmodule_ops, rank);
    for (uint32_t i = 0; i < out->n; i++)
        out->ops[i].share = out->work_ns ? (double)out->ops[i].total_ns / (double)out->work_ns : 0;
    for (uint32_t i = 0; i < out->nmodules; i++)
        out->modules[i].share = out->work_ns ? (double)out->modules[i].total_ns / (double)out->work_ns : 0;
    free(rank);
    if (rc != 0)
        gpufl__ana_ops_free(out);
    return rc;
}

static int ops_with(ana_attr *x, void *out) { return gpufl__ana_ops_with(x, out); }

int gpufl__analyze_ops(const gpufl_trace *t, gpufl__ana_ops *out)
{
    return gpufl__ana_attr_run(t, out, sizeof *out, ops_with);
}

void gpufl__ana_ops_free(gpufl__ana_ops *o)
{
    if (!o)
        return;
    free(o->ops);
    free(o->modules);
    free(o->module_ops);
    memset(o, 0, sizeof *o);
}
