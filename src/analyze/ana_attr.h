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
 * stopped (work comes in start order, so calls of one thread come nearly in
 * order: the search is a few steps), then a walk up the parent chain.
 *
 * Threads: one; a lookup moves the per-thread cursors.
 */
#ifndef GPUFL_ANALYZE_ANA_ATTR_H
#define GPUFL_ANALYZE_ANA_ATTR_H

#include <stdint.h>

#include "analyze/ana_util.h"
#include "analyze/analysis.h"
#include "analyze/trace_access.h"

typedef struct ana_attr {
    const ta *a;
    gpufl__ana_scope_tree trees[GPUFL__ANA_TREE_COUNT]; /* owned until taken */
    uint32_t *row_node[GPUFL__ANA_TREE_COUNT];          /* per row of a->sc, a->nv */
    uint32_t *caller_scope_node; /* per caller row: gpufl scope node, or NONE */
    /* NVTX ranges by thread */
    uint32_t *caller_thread;     /* per caller row: thread index, or NONE */
    size_t nthreads;
    uint32_t *thread_start;      /* ranges of thread k: rows[thread_start[k]..thread_start[k+1]) */
    uint32_t *rows;              /* NVTX rows by thread, then begin ascending, end descending */
    uint32_t *cursor;            /* per thread: the position the last lookup found */
    uint32_t *parent;            /* per NVTX row: the parent range's row, or NONE */
} ana_attr;

/* Builds both trees of a's trace. Returns 0 or GPUFL_ENOMEM (x zeroed). */
int ana_attr_open(ana_attr *x, const ta *a) __attribute__((warn_unused_result));

/* The gpufl scope node of work made by caller row c, or GPUFL__ANA_NONE. */
static inline uint32_t ana_attr_scope_node(const ana_attr *x, uint32_t c)
{
    return x->caller_scope_node ? x->caller_scope_node[c] : GPUFL__ANA_NONE;
}

/* The NVTX node of work made by caller row c in a call that began at
 * api_start (0 unknown), or GPUFL__ANA_NONE. */
uint32_t ana_attr_nvtx_node(ana_attr *x, uint32_t c, uint64_t api_start);

/* Moves the trees into out (x keeps the lookups). */
void ana_attr_take_trees(ana_attr *x, gpufl__ana_scope_tree out[GPUFL__ANA_TREE_COUNT]);

void ana_attr_close(ana_attr *x);

#endif /* GPUFL_ANALYZE_ANA_ATTR_H */
