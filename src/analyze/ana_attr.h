/*
 * Scope attribution: the two trees of gpufl__ana_scopes (gpufl scopes and
 * NVTX ranges) and, for any piece of GPU work, the node of each tree that
 * its launching call was made in (the rules are analysis.h's, "GPU time
 * inside a node"). Shared by the scopes and the hotspots analyses, so the
 * node indices they report agree.
 *
 * gpufl scopes: the work's caller records the scope id, so the node is a
 * per-caller lookup. NVTX: the range depends on when the call was made, so
 * each thread's ranges are kept sorted by begin with their parent rows,
 * and a lookup is a search from where the previous lookup of that thread
 * on the same stream stopped, then a walk up the parent chain. Work comes
 * in start order, which on one stream is launch order, so the search is a
 * step or two; across streams launches lag by up to the queue's depth
 * (milliseconds, thousands of ranges), so one cursor per thread alone
 * would jump back and forth. And an answer is remembered for its caller
 * row with the stretch of time it holds for: the other launches of that
 * caller (one framework op launches several kernels) usually fall in it.
 * Caller rows are numbered in order of first use, so the callers of work
 * that runs at about the same time have nearby numbers, and a table of the
 * last ANA_ATTR_MEMO of them, indexed by row modulo its size, keeps them.
 *
 * Threads: one; a lookup moves the cursors and the remembered answers.
 */
#ifndef GPUFL_ANALYZE_ANA_ATTR_H
#define GPUFL_ANALYZE_ANA_ATTR_H

#include <stdint.h>

#include "analyze/ana_op_rows.h"
#include "analyze/ana_util.h"
#include "analyze/analysis.h"
#include "read/rows.h"

#define ANA_ATTR_MEMO 4096 /* callers remembered (a power of two): 96 KB */

/* Where the last NVTX lookup of work on one stream ended: a thread and a
 * position in that thread's ranges. */
typedef struct ana_attr_stream {
    uint32_t thread, pos; /* thread GPUFL__ANA_NONE: none yet */
} ana_attr_stream;

/* An NVTX lookup's answer (a row of the NVTX table), which holds for any
 * call of the same caller row that began in [lo, hi). */
typedef struct ana_attr_memo {
    uint64_t lo, hi;
    uint32_t caller, row;
} ana_attr_memo;

typedef struct ana_attr {
    const gpufl__rows *a;
    gpufl__ana_scope_tree trees[GPUFL__ANA_TREE_COUNT]; /* owned until taken */
    uint32_t *row_node[GPUFL__ANA_TREE_COUNT];          /* per row of a->scopes, a->nvtx */
    uint32_t *caller_scope_node;                        /* per caller row: gpufl scope node, or NONE */
    /* NVTX ranges by thread */
    uint32_t *caller_thread; /* per caller row: thread index, or NONE */
    size_t nthreads;
    uint32_t *thread_start;   /* ranges of thread k: rows[thread_start[k]..thread_start[k+1]) */
    uint32_t *rows;           /* NVTX rows by thread, then begin ascending, end descending */
    uint32_t *cursor;         /* per thread: the position the last lookup found */
    ana_attr_stream *streams; /* per stream row: where the last lookup of its work ended */
    ana_attr_memo *memo;      /* ANA_ATTR_MEMO answers, by caller row modulo that */
    uint32_t *parent;         /* per NVTX row: the parent range's row, or NONE */
    /* PyTorch ops: what each NVTX row is, and the op (key) each op row's
     * work counts for */
    gpufl__ana_op_rows ops;
    ana_op_keys op_keys;
} ana_attr;

/* Builds both trees of a's trace and the PyTorch op rows. Returns 0 or
 * GPUFL_ENOMEM (x zeroed). */
int gpufl__ana_attr_open(ana_attr *x, const gpufl__rows *a) __attribute__((warn_unused_result));

/* The gpufl scope node of work made by caller row c, or GPUFL__ANA_NONE. */
static inline uint32_t ana_attr_scope_node(const ana_attr *x, uint32_t c)
{
    return x->caller_scope_node ? x->caller_scope_node[c] : GPUFL__ANA_NONE;
}

/* The NVTX range (its row of the NVTX table) that work made by caller row
 * c in a call that began at api_start (0 unknown) is given to, or
 * GPUFL__ANA_NONE. stream_row: the row of the streams table the work ran
 * on (where the search starts; any row gives the same answer). */
uint32_t gpufl__ana_attr_nvtx_row(ana_attr *x, uint32_t c, uint32_t stream_row, uint64_t api_start);

/* The NVTX node of an NVTX row (GPUFL__ANA_NONE for none). */
static inline uint32_t ana_attr_row_node(const ana_attr *x, uint32_t row)
{
    return row == GPUFL__ANA_NONE ? GPUFL__ANA_NONE : x->row_node[GPUFL__ANA_TREE_NVTX][row];
}

/* The NVTX node of such work, or GPUFL__ANA_NONE. */
static inline uint32_t gpufl__ana_attr_nvtx_node(ana_attr *x, uint32_t c, uint32_t stream_row, uint64_t api_start)
{
    return ana_attr_row_node(x, gpufl__ana_attr_nvtx_row(x, c, stream_row, api_start));
}

/* The op range (its NVTX row) that work given to NVTX row `row` was
 * launched in: the innermost op range at or around it; GPUFL__ANA_NONE. */
static inline uint32_t ana_attr_op_row(const ana_attr *x, uint32_t row)
{
    return row == GPUFL__ANA_NONE || !x->ops.op ? GPUFL__ANA_NONE : x->ops.op[row];
}

/* The NVTX ranges' parents (per row: the parent range's row, or NONE; marks
 * have none) and the ranges in an order where a parent comes before its
 * children (by thread, then begin), as the trees nest them, without
 * building the trees. Returns 0, or GPUFL_ENOMEM with both NULL. */
int gpufl__ana_nvtx_parents(const gpufl__rows *a, uint32_t **parent, uint32_t **order, size_t *norder)
    __attribute__((warn_unused_result));

/* Moves the trees into out (x keeps the lookups). */
void gpufl__ana_attr_take_trees(ana_attr *x, gpufl__ana_scope_tree out[GPUFL__ANA_TREE_COUNT]);

void gpufl__ana_attr_close(ana_attr *x);

/* The body of an analysis built on the attribution: checks the arguments
 * (out zeroed), opens the attribution of t, runs with(x, out) and closes
 * it. Returns GPUFL_EINVAL, GPUFL_ENOMEM or what with returned. */
int gpufl__ana_attr_run(const gpufl_trace *t, void *out, size_t size, int (*with)(ana_attr *x, void *out))
    __attribute__((warn_unused_result));

#endif /* GPUFL_ANALYZE_ANA_ATTR_H */
