/*
 * Scope attribution (ana_attr.h): both trees, the per-caller gpufl scope
 * nodes, the per-thread NVTX index with its lookup, and the PyTorch op rows
 * (ana_op_rows.c) over that index's nesting.
 */
#include "analyze/ana_attr.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_tree.h"

/* An NVTX range's end for containment: one that never ended contains all
 * after its begin (its end_ns, the session's last time, is only where it
 * is drawn to). */
static inline uint64_t open_end(const gpufl_trace_scopes *s, uint32_t r)
{
    return gpufl__s_unended(s, r) ? UINT64_MAX : s->end_ns[r];
}

static int build_scope_tree(ana_attr *x)
{
    const gpufl__rows *a = x->a;
    const gpufl_trace_scopes *s = a->scopes;
    ana_map row_of_id = {0};
    uint32_t *parent = malloc((s->n ? s->n : 1) * sizeof *parent);
    int rc = parent ? 0 : GPUFL_ENOMEM;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        uint32_t v;
        int put = gpufl__ana_map_put(&row_of_id, gpufl__s_id(s, i), 0, (uint32_t)i, &v);
        rc = put < 0 ? put : 0;
    }
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        uint32_t p = GPUFL__ANA_NONE;
        if (gpufl__s_parent(s, i) == 0 || !gpufl__ana_map_get(&row_of_id, gpufl__s_parent(s, i), 0, &p))
            p = GPUFL__ANA_NONE;
        parent[i] = p;
    }
    if (rc == 0)
        rc = gpufl__ana_tree_build(a->t, GPUFL__ANA_TREE_SCOPES, s, parent, NULL, gpufl__span(a->start_ns, a->end_ns),
                                   &x->trees[GPUFL__ANA_TREE_SCOPES], &x->row_node[GPUFL__ANA_TREE_SCOPES]);
    free(parent);
    size_t nc = a->callers->n;
    if (rc == 0 && s->n && nc) {
        if (!(x->caller_scope_node = malloc(nc * sizeof *x->caller_scope_node)))
            rc = GPUFL_ENOMEM;
        for (size_t c = 0; c < nc && rc == 0; c++) {
            uint32_t row;
            uint64_t id = gpufl__caller_scope(a, (uint32_t)c);
            x->caller_scope_node[c] = id && gpufl__ana_map_get(&row_of_id, id, 0, &row)
                                          ? x->row_node[GPUFL__ANA_TREE_SCOPES][row]
                                          : GPUFL__ANA_NONE;
        }
    }
    gpufl__ana_map_free(&row_of_id);
    return rc;
}

/* Groups the NVTX ranges (not marks) by thread, keeping begin order, and
 * puts ranges that begin together outermost first. */
static int index_threads(ana_attr *x, ana_map *thread_of_tid)
{
    const gpufl_trace_scopes *s = x->a->nvtx;
    uint32_t *count = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (gpufl__s_instant(s, i))
            continue;
        uint32_t k;
        int put = gpufl__ana_map_put(thread_of_tid, gpufl__s_tid(s, i), 0, (uint32_t)x->nthreads, &k);
        if (put < 0) {
            free(count);
            return put;
        }
        if (put == 0) {
            if (gpufl__ana_grow(&count, &cap, ++x->nthreads, sizeof *count) != 0) {
                free(count);
                return GPUFL_ENOMEM;
            }
            count[k] = 0;
        }
        count[k]++;
    }
    x->thread_start = calloc(x->nthreads + 1, sizeof *x->thread_start);
    x->rows = malloc((s->n ? s->n : 1) * sizeof *x->rows);
    x->cursor = calloc(x->nthreads ? x->nthreads : 1, sizeof *x->cursor);
    if (!x->thread_start || !x->rows || !x->cursor) {
        free(count);
        return GPUFL_ENOMEM;
    }
    for (size_t k = 0; k < x->nthreads; k++)
        x->thread_start[k + 1] = x->thread_start[k] + count[k];
    for (size_t k = 0; k < x->nthreads; k++)
        count[k] = x->thread_start[k];
    for (size_t i = 0; i < s->n; i++) {
        uint32_t k;
        if (!gpufl__s_instant(s, i) && gpufl__ana_map_get(thread_of_tid, gpufl__s_tid(s, i), 0, &k))
            x->rows[count[k]++] = (uint32_t)i;
    }
    free(count);
    /* within a run of equal begins, the longer range first (insertion sort:
     * such runs are short) */
    size_t n = x->nthreads ? x->thread_start[x->nthreads] : 0;
    for (size_t j = 1; j < n; j++) {
        uint32_t r = x->rows[j];
        size_t i = j;
        for (; i > 0 && s->begin_ns[x->rows[i - 1]] == s->begin_ns[r] && open_end(s, x->rows[i - 1]) < open_end(s, r);
             i--)
            x->rows[i] = x->rows[i - 1];
        x->rows[i] = r;
    }
    return rc;
}

/* A range's parent: the innermost range of its thread open at its begin
 * that ends no earlier (a stack per thread, in begin order). */
static int find_parents(ana_attr *x)
{
    const gpufl_trace_scopes *s = x->a->nvtx;
    x->parent = malloc((s->n ? s->n : 1) * sizeof *x->parent);
    uint32_t *stack = malloc((s->n ? s->n : 1) * sizeof *stack);
    if (!x->parent || !stack) {
        free(stack);
        return GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < s->n; i++)
        x->parent[i] = GPUFL__ANA_NONE;
    for (size_t k = 0; k < x->nthreads; k++) {
        size_t top = 0;
        for (uint32_t j = x->thread_start[k]; j < x->thread_start[k + 1]; j++) {
            uint32_t r = x->rows[j];
            while (top > 0 && open_end(s, stack[top - 1]) <= s->begin_ns[r])
                top--;
            for (size_t d = top; d > 0; d--)
                if (open_end(s, stack[d - 1]) >= open_end(s, r)) {
                    x->parent[r] = stack[d - 1];
                    break;
                }
            stack[top++] = r;
        }
    }
    free(stack);
    return 0;
}

static int build_nvtx_tree(ana_attr *x)
{
    const gpufl__rows *a = x->a;
    const gpufl_trace_scopes *s = a->nvtx;
    ana_map thread_of_tid = {0};
    int rc = index_threads(x, &thread_of_tid);
    if (rc == 0)
        rc = find_parents(x);
    if (rc == 0)
        rc = gpufl__ana_tree_build(a->t, GPUFL__ANA_TREE_NVTX, s, x->parent, s->instant,
                                   gpufl__span(a->start_ns, a->end_ns), &x->trees[GPUFL__ANA_TREE_NVTX],
                                   &x->row_node[GPUFL__ANA_TREE_NVTX]);
    size_t nc = a->callers->n, nst = gpufl__streams_n(a);
    if (rc == 0 && x->nthreads && nc) {
        if (!(x->caller_thread = malloc(nc * sizeof *x->caller_thread)) ||
            !(x->streams = malloc((nst ? nst : 1) * sizeof *x->streams)) ||
            !(x->memo = calloc(ANA_ATTR_MEMO, sizeof *x->memo))) /* lo == hi: holds for none */
            rc = GPUFL_ENOMEM;
        for (size_t st = 0; st < nst && rc == 0; st++)
            x->streams[st] = (ana_attr_stream){GPUFL__ANA_NONE, 0};
        for (size_t c = 0; c < nc && rc == 0; c++) {
            uint32_t k;
            x->caller_thread[c] =
                gpufl__ana_map_get(&thread_of_tid, gpufl__caller_tid(a, (uint32_t)c), 0, &k) ? k : GPUFL__ANA_NONE;
        }
    }
    gpufl__ana_map_free(&thread_of_tid);
    return rc;
}

int gpufl__ana_attr_open(ana_attr *x, const gpufl__rows *a)
{
    memset(x, 0, sizeof *x);
    x->a = a;
    int rc = build_scope_tree(x);
    if (rc == 0)
        rc = build_nvtx_tree(x);
    if (rc == 0)
        rc = gpufl__ana_op_rows_build(a, x->parent, x->rows, x->nthreads ? x->thread_start[x->nthreads] : 0, &x->ops);
    if (rc == 0)
        rc = gpufl__ana_op_keys_build(a, &x->ops, x->parent, &x->op_keys);
    if (rc != 0) {
        gpufl__ana_attr_close(x);
        return rc;
    }
    return 0;
}

/* The position after the last of R[0..m) that begins at or before t (0:
 * none), searched outwards from j, the previous answer's position. */
static size_t after_last_begun(const gpufl_trace_scopes *s, const uint32_t *R, size_t m, size_t j, uint64_t t)
{
    if (j >= m)
        j = m - 1;
    size_t lo, hi; /* begin(R[lo]) <= t < begin(R[hi]), hi == m meaning past the end */
    if (s->begin_ns[R[j]] <= t) {
        lo = j;
        size_t step = 1;
        for (hi = j + 1; hi < m && s->begin_ns[R[hi]] <= t; step *= 2, hi = lo + step < m ? lo + step : m)
            lo = hi;
    } else {
        hi = j;
        size_t step = 1;
        for (;;) {
            if (hi == 0)
                return 0;
            lo = hi > step ? hi - step : 0;
            if (s->begin_ns[R[lo]] <= t)
                break;
            if (lo == 0)
                return 0;
            hi = lo;
            step *= 2;
        }
    }
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->begin_ns[R[mid]] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo + 1;
}

uint32_t gpufl__ana_attr_nvtx_row(ana_attr *x, uint32_t c, uint32_t stream_row, uint64_t api_start)
{
    if (!x->caller_thread || api_start == 0)
        return GPUFL__ANA_NONE;
    const gpufl__rows *a = x->a;
    ana_attr_memo *memo = &x->memo[c & (ANA_ATTR_MEMO - 1)];
    if (memo->caller == c && api_start >= memo->lo && api_start < memo->hi)
        return memo->row;
    ana_attr_stream *st = stream_row < gpufl__streams_n(a) ? &x->streams[stream_row] : NULL;
    uint32_t want = gpufl__caller_nvtx(a, c), k = x->caller_thread[c];
    if (want == 0 || k == GPUFL__ANA_NONE)
        return GPUFL__ANA_NONE;
    const gpufl_trace_scopes *s = a->nvtx;
    const uint32_t *R = x->rows + x->thread_start[k];
    size_t m = x->thread_start[k + 1] - x->thread_start[k];
    size_t p = after_last_begun(s, R, m, st && st->thread == k ? st->pos : x->cursor[k], api_start);
    if (p == 0)
        return GPUFL__ANA_NONE;
    x->cursor[k] = (uint32_t)(p - 1);
    uint32_t r = R[p - 1];
    /* the answer holds while the same range is the last one begun and is
     * still open: from its begin to the next range's begin or its end */
    uint64_t next_begin = p < m ? s->begin_ns[R[p]] : UINT64_MAX;
    uint64_t lo = s->begin_ns[r], hi = open_end(s, r) < next_begin ? open_end(s, r) : next_begin;
    while (r != GPUFL__ANA_NONE && open_end(s, r) <= api_start)
        r = x->parent[r];
    while (r != GPUFL__ANA_NONE && s->name[r] != want)
        r = x->parent[r];
    if (st)
        *st = (ana_attr_stream){k, (uint32_t)(p - 1)};
    *memo = (ana_attr_memo){lo, hi, c, r};
    return r;
}

int gpufl__ana_nvtx_parents(const gpufl__rows *a, uint32_t **parent, uint32_t **order, size_t *norder)
{
    ana_attr x;
    memset(&x, 0, sizeof x);
    x.a = a;
    ana_map thread_of_tid = {0};
    int rc = index_threads(&x, &thread_of_tid);
    if (rc == 0)
        rc = find_parents(&x);
    gpufl__ana_map_free(&thread_of_tid);
    *parent = rc == 0 ? x.parent : NULL;
    *order = rc == 0 ? x.rows : NULL;
    *norder = rc == 0 && x.nthreads ? x.thread_start[x.nthreads] : 0;
    if (rc == 0)
        x.parent = x.rows = NULL; /* handed over */
    gpufl__ana_attr_close(&x);
    return rc;
}

void gpufl__ana_attr_take_trees(ana_attr *x, gpufl__ana_scope_tree out[GPUFL__ANA_TREE_COUNT])
{
    for (int i = 0; i < GPUFL__ANA_TREE_COUNT; i++) {
        out[i] = x->trees[i];
        memset(&x->trees[i], 0, sizeof x->trees[i]);
    }
}

void gpufl__ana_attr_close(ana_attr *x)
{
    for (int i = 0; i < GPUFL__ANA_TREE_COUNT; i++) {
        free(x->trees[i].nodes);
        free(x->row_node[i]);
    }
    free(x->caller_scope_node);
    free(x->caller_thread);
    free(x->thread_start);
    free(x->rows);
    free(x->cursor);
    free(x->streams);
    free(x->memo);
    free(x->parent);
    gpufl__ana_op_rows_free(&x->ops);
    gpufl__ana_op_keys_free(&x->op_keys);
    memset(x, 0, sizeof *x);
}

int gpufl__ana_attr_run(const gpufl_trace *t, void *out, size_t size, int (*with)(ana_attr *x, void *out))
{
    if (!ana_args_ok(t, out, size))
        return GPUFL_EINVAL;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    ana_attr x;
    int rc = gpufl__ana_attr_open(&x, &a);
    if (rc == 0)
        rc = with(&x, out);
    gpufl__ana_attr_close(&x);
    return rc;
}
