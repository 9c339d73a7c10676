/*
 * What each NVTX row is to PyTorch (analysis.h, "PyTorch ops"), and the op
 * each op range's work counts for (ana_op_rows.h).
 *
 * The Python analyzer's ops() rules, one pass each: names are classified
 * once per distinct name (a map from string id to class); the seq rules
 * sort the op rows that carry a seq, by seq; the nesting rules (module,
 * inheritance, innermost op) walk the ranges parents first, so that each
 * row reads only what its parent has settled.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "analyze/ana_op_rows.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_attr.h"
#include "analyze/ana_util.h"

#define NONE GPUFL__ANA_NONE
#define PREFIX_LEN (sizeof GPUFL__ANA_MODULE_PREFIX - 1)

enum { NAME_OP = 1, NAME_BACKWARD = 2, NAME_MODULE = 4 };

/* ---- names ------------------------------------------------------------------ */

static bool ascii_ident(unsigned c, bool first)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* Whether the UTF-8 text at z (n bytes left) opens with a character that
 * Python's \s matches in a str pattern (str.isspace(): ASCII 9-13 and
 * 28-32, U+0085, U+00A0, U+1680, U+2000-200A, U+2028, U+2029, U+202F,
 * U+205F, U+3000). The lead bytes tested are never continuation bytes, so
 * testing every byte of a name finds exactly these characters. */
static bool py_space(const unsigned char *z, size_t n)
{
    unsigned c = z[0];
    if ((c >= 9 && c <= 13) || (c >= 28 && c <= 32))
        return true;
    if (c == 0xc2 && n >= 2)
        return z[1] == 0x85 || z[1] == 0xa0;
    if (n < 3)
        return false;
    if (c == 0xe1)
        return z[1] == 0x9a && z[2] == 0x80;
    if (c == 0xe2 && z[1] == 0x80)
        return (z[2] >= 0x80 && z[2] <= 0x8a) || z[2] == 0xa8 || z[2] == 0xa9 || z[2] == 0xaf;
    if (c == 0xe2 && z[1] == 0x81)
        return z[2] == 0x9f;
    return c == 0xe3 && z[1] == 0x80 && z[2] == 0x80;
}

/* NAME_* of a range's name, as _scopes.py's MODULE_PREFIX, _OP_NAME
 * (re.match of [A-Za-z_][A-Za-z0-9_]*::[^\s]+$) and _BACKWARD_NAME
 * (re.search of Backward\d*$) say. */
static unsigned name_class(const char *text)
{
    const unsigned char *z = (const unsigned char *)text;
    size_t n = strlen(text);
    if (strncmp(text, GPUFL__ANA_MODULE_PREFIX, PREFIX_LEN) == 0)
        return NAME_MODULE;
    if (n && z[n - 1] == '\n')
        n--; /* Python's $ matches before a final newline too */
    size_t e = n;
    while (e > 0 && z[e - 1] >= '0' && z[e - 1] <= '9')
        e--;
    if (e >= 8 && memcmp(z + e - 8, "Backward", 8) == 0)
        return NAME_OP | NAME_BACKWARD;
    if (!n || !ascii_ident(z[0], true))
        return 0;
    size_t i = 1;
    while (i < n && ascii_ident(z[i], false))
        i++;
    if (i + 2 >= n || z[i] != ':' || z[i + 1] != ':')
        return 0;
    for (i += 2; i < n; i++)
        if (py_space(z + i, n - i))
            return 0;
    return NAME_OP;
}

const char *gpufl__ana_module_path(const char *range_name)
{
    if (!range_name)
        return "";
    return strncmp(range_name, GPUFL__ANA_MODULE_PREFIX, PREFIX_LEN) == 0 ? range_name + PREFIX_LEN : range_name;
}

/* ---- rows ------------------------------------------------------------------- */

static inline bool has_seq(const gpufl_trace_scopes *s, size_t i) { return s->has_seq && s->has_seq[i]; }
static inline uint32_t domain_of(const gpufl_trace_scopes *s, size_t i) { return s->domain ? s->domain[i] : 0; }

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

/* (seq, begin, row): the order in which the first range of a seq began */
static int by_seq_begin(const void *x, const void *y, void *ctx)
{
    const gpufl_trace_scopes *s = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    int c = cmp_u64(s->seq[i], s->seq[j]);
    if (!c)
        c = cmp_u64(s->begin_ns[i], s->begin_ns[j]);
    return c ? c : cmp_u64(i, j);
}

/* (seq, depth, begin, row): the last of a seq is its forward op */
static int by_seq_depth(const void *x, const void *y, void *ctx)
{
    const gpufl_trace_scopes *s = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    int c = cmp_u64(s->seq[i], s->seq[j]);
    if (!c)
        c = cmp_u64(s->depth[i], s->depth[j]);
    if (!c)
        c = cmp_u64(s->begin_ns[i], s->begin_ns[j]);
    return c ? c : cmp_u64(i, j);
}

/* Flags from the names alone: op, backward by name, module. Counts the op
 * ranges, the module ranges and the op ranges with a seq. */
static int classify(const gpufl__rows *a, uint8_t *flags, uint64_t *nops, uint64_t *nmodules, size_t *nseq)
{
    const gpufl_trace_scopes *s = a->nvtx;
    ana_map class_of = {0}; /* string id -> NAME_* */
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        if (gpufl__s_instant(s, i))
            continue;
        uint32_t cls;
        if (!gpufl__ana_map_get(&class_of, s->name[i], 0, &cls)) {
            cls = name_class(gpufl__rows_str(a, s->name[i]));
            int put = gpufl__ana_map_put(&class_of, s->name[i], 0, cls, &cls);
            rc = put < 0 ? put : 0;
        }
        if (cls & NAME_MODULE) {
            flags[i] = GPUFL__ANA_OPROW_MODULE;
            ++*nmodules;
        } else if (domain_of(s, i) == 0 && (has_seq(s, i) || (cls & NAME_OP))) {
            flags[i] = GPUFL__ANA_OPROW_OP | ((cls & NAME_BACKWARD) ? GPUFL__ANA_OPROW_BACKWARD : 0);
            ++*nops;
            *nseq += has_seq(s, i);
        }
    }
    gpufl__ana_map_free(&class_of);
    return rc;
}

/* The seq rules: backward across threads, and each backward op's forward
 * op. idx: room for the op rows with a seq. */
static void seq_rules(const gpufl_trace_scopes *s, gpufl__ana_op_rows *r, uint32_t *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++)
        if ((r->flags[i] & GPUFL__ANA_OPROW_OP) && has_seq(s, i) && !(r->flags[i] & GPUFL__ANA_OPROW_BACKWARD))
            idx[m++] = (uint32_t)i;
    qsort_r(idx, m, sizeof *idx, by_seq_begin, (void *)s);
    /* the thread of the first to begin is the forward pass's; autograd runs
     * the ranges of the same seq on others */
    for (size_t j = 0, first = 0; j < m; j++) {
        if (s->seq[idx[j]] != s->seq[idx[first]])
            first = j;
        if (s->tid[idx[j]] != s->tid[idx[first]])
            r->flags[idx[j]] |= GPUFL__ANA_OPROW_BACKWARD;
    }
    size_t f = 0;
    for (size_t j = 0; j < m; j++)
        if (!(r->flags[idx[j]] & GPUFL__ANA_OPROW_BACKWARD))
            idx[f++] = idx[j];
    qsort_r(idx, f, sizeof *idx, by_seq_depth, (void *)s);
    size_t nbest = 0; /* the forward op of each seq, by seq */
    for (size_t j = 0; j < f; j++)
        if (j + 1 == f || s->seq[idx[j + 1]] != s->seq[idx[j]])
            idx[nbest++] = idx[j];
    for (size_t i = 0; i < r->n && nbest; i++) {
        if ((r->flags[i] & (GPUFL__ANA_OPROW_OP | GPUFL__ANA_OPROW_BACKWARD)) !=
                (GPUFL__ANA_OPROW_OP | GPUFL__ANA_OPROW_BACKWARD) ||
            !has_seq(s, i))
            continue;
        size_t lo = 0, hi = nbest;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s->seq[idx[mid]] < s->seq[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < nbest && s->seq[idx[lo]] == s->seq[i])
            r->forward[i] = idx[lo];
    }
}

/* The nesting rules, parents first: modules, inheritance, innermost op. */
static void nesting_rules(gpufl__ana_op_rows *r, const uint32_t *parent, const uint32_t *order, size_t norder)
{
    uint8_t *fl = r->flags;
    /* for now module[] holds every range's innermost enclosing module range */
    for (size_t j = 0; j < norder; j++) {
        uint32_t row = order[j], p = parent[row];
        r->module[row] = p == NONE ? NONE : (fl[p] & GPUFL__ANA_OPROW_MODULE) ? p : r->module[p];
    }
    /* a backward op found by its seq belongs to its forward op's module
     * (forward ops, never changed here, keep theirs) */
    for (size_t i = 0; i < r->n; i++)
        if ((fl[i] & GPUFL__ANA_OPROW_OP) && r->forward[i] != NONE)
            r->module[i] = r->module[r->forward[i]];
    const uint8_t bwd = GPUFL__ANA_OPROW_OP | GPUFL__ANA_OPROW_BACKWARD;
    for (size_t j = 0; j < norder; j++) {
        uint32_t row = order[j], p = parent[row];
        if ((fl[row] & bwd) == GPUFL__ANA_OPROW_OP && p != NONE && (fl[p] & bwd) == bwd) {
            fl[row] |= GPUFL__ANA_OPROW_BACKWARD | GPUFL__ANA_OPROW_INHERITED;
            r->forward[row] = r->forward[p];
            if (r->module[row] == NONE)
                r->module[row] = r->module[p];
        }
        r->op[row] = (fl[row] & GPUFL__ANA_OPROW_OP) ? row : p == NONE ? NONE : r->op[p];
    }
    for (size_t i = 0; i < r->n; i++) {
        if (!(fl[i] & GPUFL__ANA_OPROW_OP))
            r->module[i] = NONE;
        r->backward_ops += (fl[i] & bwd) == bwd;
    }
}

int gpufl__ana_op_rows_build(const gpufl__rows *a, const uint32_t *parent, const uint32_t *order, size_t norder,
                             gpufl__ana_op_rows *out)
{
    memset(out, 0, sizeof *out);
    const gpufl_trace_scopes *s = a->nvtx;
    size_t n = s->n, nseq = 0;
    if (!n)
        return 0;
    uint64_t nops = 0, nmodules = 0;
    uint8_t *flags = calloc(n, 1);
    int rc = flags ? classify(a, flags, &nops, &nmodules, &nseq) : GPUFL_ENOMEM;
    if (rc != 0 || (!nops && !nmodules)) {
        free(flags);
        return rc;
    }
    uint32_t *own_parent = NULL, *own_order = NULL, *idx = NULL;
    if (!parent) {
        if ((rc = gpufl__ana_nvtx_parents(a, &own_parent, &own_order, &norder)) != 0) {
            free(flags);
            return rc;
        }
        parent = own_parent;
        order = own_order;
    }
    out->n = n;
    out->flags = flags;
    out->ops = nops;
    out->modules = nmodules;
    out->forward = malloc(n * sizeof *out->forward);
    out->module = malloc(n * sizeof *out->module);
    out->op = malloc(n * sizeof *out->op);
    idx = malloc((nseq ? nseq : 1) * sizeof *idx);
    if (!out->forward || !out->module || !out->op || !idx) {
        rc = GPUFL_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        out->forward[i] = out->module[i] = out->op[i] = NONE;
    seq_rules(s, out, idx);
    nesting_rules(out, parent, order, norder);
out:
    free(idx);
    free(own_parent);
    free(own_order);
    if (rc != 0)
        gpufl__ana_op_rows_free(out);
    return rc;
}

int gpufl__analyze_op_rows(const gpufl_trace *t, gpufl__ana_op_rows *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    return gpufl__ana_op_rows_build(&a, NULL, NULL, 0, out);
}

void gpufl__ana_op_rows_free(gpufl__ana_op_rows *r)
{
    if (!r)
        return;
    free(r->flags);
    free(r->forward);
    free(r->module);
    free(r->op);
    memset(r, 0, sizeof *r);
}

/* ---- keys ------------------------------------------------------------------- */

typedef struct key_order {
    const gpufl_trace *t;
    const ana_op_key *keys;
} key_order;

static int by_text(const void *x, const void *y, void *ctx)
{
    const key_order *o = ctx;
    const ana_op_key *p = &o->keys[*(const uint32_t *)x], *q = &o->keys[*(const uint32_t *)y];
    int c = gpufl__ana_strcmp(o->t, p->name, q->name);
    if (!c)
        c = gpufl__ana_strcmp(o->t, p->module, q->module);
    if (!c)
        c = (p->backward_only > q->backward_only) - (p->backward_only < q->backward_only);
    if (!c)
        c = cmp_u64(p->name, q->name);
    return c ? c : cmp_u64(p->module, q->module);
}

/* Renumbers the keys in text order. */
static int sort_keys(const gpufl__rows *a, ana_op_keys *k, size_t nrows)
{
    uint32_t *perm = malloc((k->n ? k->n : 1) * sizeof *perm), *rank = malloc((k->n ? k->n : 1) * sizeof *rank);
    ana_op_key *sorted = malloc((k->n ? k->n : 1) * sizeof *sorted);
    if (!perm || !rank || !sorted) {
        free(perm);
        free(rank);
        free(sorted);
        return GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < k->n; i++)
        perm[i] = (uint32_t)i;
    key_order o = {a->t, k->keys};
    qsort_r(perm, k->n, sizeof *perm, by_text, &o);
    for (size_t i = 0; i < k->n; i++) {
        rank[perm[i]] = (uint32_t)i;
        sorted[i] = k->keys[perm[i]];
    }
    for (size_t i = 0; i < nrows; i++)
        if (k->of_row[i] != NONE)
            k->of_row[i] = rank[k->of_row[i]];
    free(k->keys);
    k->keys = sorted;
    free(perm);
    free(rank);
    return 0;
}

int gpufl__ana_op_keys_build(const gpufl__rows *a, const gpufl__ana_op_rows *r, const uint32_t *parent,
                             ana_op_keys *out)
{
    memset(out, 0, sizeof *out);
    if (!r->ops)
        return 0;
    const gpufl_trace_scopes *s = a->nvtx;
    ana_map by_key = {0};
    size_t cap = 0;
    /* the op ranges some backward op names as its forward op: the ops that
     * have a gradient (aten::convolution), whose row then holds the forward
     * work of the ops run inside them (aten::cudnn_convolution) beside its
     * backward work, rather than splitting one layer over two names */
    uint8_t *has_backward = calloc(r->n, 1);
    int rc = (out->of_row = malloc(r->n * sizeof *out->of_row)) && has_backward ? 0 : GPUFL_ENOMEM;
    for (size_t i = 0; i < r->n && rc == 0; i++)
        if ((r->flags[i] & GPUFL__ANA_OPROW_OP) && r->forward[i] != NONE)
            has_backward[r->forward[i]] = 1;
    for (size_t i = 0; i < r->n && rc == 0; i++) {
        out->of_row[i] = NONE;
        if (!(r->flags[i] & GPUFL__ANA_OPROW_OP))
            continue;
        uint32_t e = gpufl__ana_op_effective(r, (uint32_t)i);
        if (!(r->flags[i] & GPUFL__ANA_OPROW_BACKWARD)) {
            uint32_t up = (uint32_t)i;
            while (up != NONE && !has_backward[up])
                up = parent[up] == NONE ? NONE : r->op[parent[up]];
            e = up != NONE ? up : (uint32_t)i;
        }
        uint8_t orphan = (r->flags[i] & GPUFL__ANA_OPROW_BACKWARD) && r->forward[i] == NONE;
        uint32_t module_row = r->module[e] != NONE ? r->module[e] : r->module[i];
        uint32_t name = s->name[e], module = module_row != NONE ? s->name[module_row] : 0;
        uint32_t k = NONE;
        int put = gpufl__ana_map_put(&by_key, module, (uint64_t)name << 1 | orphan, (uint32_t)out->n, &k);
        if (put < 0) {
            rc = put;
        } else if (put == 0) {
            if (gpufl__ana_grow(&out->keys, &cap, out->n + 1, sizeof *out->keys) != 0)
                rc = GPUFL_ENOMEM;
            else
                out->keys[out->n++] = (ana_op_key){.name = name, .module = module, .backward_only = orphan};
        }
        out->of_row[i] = k;
    }
    gpufl__ana_map_free(&by_key);
    free(has_backward);
    /* a call: an op range not inside a range of the same op (aten::mm run by
     * AddmmBackward0 is part of that backward call of aten::addmm) */
    for (size_t i = 0; i < r->n && rc == 0; i++) {
        if (!(r->flags[i] & GPUFL__ANA_OPROW_OP))
            continue;
        uint32_t up = parent[i] == NONE ? NONE : r->op[parent[i]];
        ana_op_key *k = &out->keys[out->of_row[i]];
        if (up != NONE && out->of_row[up] == out->of_row[i])
            continue;
        if (r->flags[i] & GPUFL__ANA_OPROW_BACKWARD)
            k->backward_calls++;
        else
            k->calls++;
    }
    if (rc == 0)
        rc = sort_keys(a, out, r->n);
    if (rc != 0)
        gpufl__ana_op_keys_free(out);
    return rc;
}

void gpufl__ana_op_keys_free(ana_op_keys *k)
{
    if (!k)
        return;
    free(k->of_row);
    free(k->keys);
    memset(k, 0, sizeof *k);
}
