/*
 * The critical path of a step or a time window in a schedule (ana_whatif.h:
 * the recorded one is the unchanged schedule): walking back from the
 * step's end through what set each start (the binding constraint the
 * schedule kept), the kernels, copies, launch calls and latencies, host
 * gaps and syncs the time ran through, each with its time. The pieces tile
 * the window: their sum is its length (less what overlapping host nodes,
 * a damaged recording, leave out).
 *
 * Threads: any; no shared state.
 */
#ifndef GPUFL_ANALYZE_ANA_CRITPATH_H
#define GPUFL_ANALYZE_ANA_CRITPATH_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/ana_util.h"
#include "analyze/ana_whatif.h"

enum {
    GPUFL__CP_KERNEL = 0,
    GPUFL__CP_COPY,
    GPUFL__CP_MEMSET,
    GPUFL__CP_HOST,   /* the host thread's own work between its calls */
    GPUFL__CP_CALL,   /* inside a launch call */
    GPUFL__CP_LAUNCH, /* from a call's start until its work could start (launch latency) */
    GPUFL__CP_QUEUE,  /* work ready but not started: the recorded residual */
    GPUFL__CP_SYNC,   /* a sync's own time, or its wake-up after its work ended */
    GPUFL__CP_KIND_COUNT
};

typedef struct gpufl__cp_item {
    uint8_t kind;  /* GPUFL__CP_* */
    uint8_t sub;   /* copies: gfl_copy_kind */
    uint32_t name; /* kernels: string id of the name; 0 otherwise */
    uint64_t ns;   /* time on the path */
    size_t count;  /* pieces */
} gpufl__cp_item;

typedef struct gpufl__critpath {
    gpufl__cp_item *items; /* most time first, then kind, then name */
    size_t n, cap;
    uint64_t window_ns; /* the windows' lengths together */
    uint64_t path_ns;   /* the items' time together */
    uint32_t *work;     /* the work nodes on the path (for a timeline), in walk order */
    size_t nwork, wcap;
    ana_map index; /* (kind, sub, name) -> item: a path of millions of pieces over thousands of names */
} gpufl__critpath;

/* Adds the critical path of the window [from, node end] ending at node
 * `end` of schedule s to *cp (zero it first; it adds up over calls).
 * Returns 0 or GPUFL_ENOMEM. */
int gpufl__critpath_add(const gpufl__graph *g, const gpufl__sched *s, uint32_t end, uint64_t from, gpufl__critpath *cp)
    __attribute__((warn_unused_result));

/* The node of s that ends last at or before `to` (GPUFL__GNONE none). */
uint32_t gpufl__critpath_last_before(const gpufl__graph *g, const gpufl__sched *s, uint64_t to);

/* Orders the items (most time first); the path is then complete: add
 * nothing more to it. */
void gpufl__critpath_sort(const gpufl__graph *g, gpufl__critpath *cp);
void gpufl__critpath_free(gpufl__critpath *cp);

const char *gpufl__cp_kind_name(unsigned kind);

/*
 * The report's critical path (ana_critpath_report.c): of the step's
 * median-long occurrence, as recorded. The step is the most repeated
 * outermost scope or NVTX range (one that says "step" first); the graph is
 * built over that occurrence's window only, so a session of millions of
 * launches costs what one step holds.
 */
typedef struct gpufl__ana_cp_work {
    uint8_t table; /* GPUFL__TBL_KERNEL, _COPY or _MEMSET (read/rows.h) */
    uint32_t row;
} gpufl__ana_cp_work;

typedef struct gpufl__ana_critpath {
    uint32_t step_name; /* string id */
    uint8_t nvtx;       /* the step is an NVTX range (else a gpufl scope) */
    size_t steps;       /* its occurrences */
    size_t occurrence;  /* the one walked, from 1 in begin order */
    uint64_t begin_ns, end_ns;
    gpufl__critpath path;     /* items: names are string ids of the trace; path.work unused */
    gpufl__ana_cp_work *work; /* the kernels, copies and memsets on the path, latest first */
    size_t nwork;
} gpufl__ana_critpath;

/* *out: the critical path, or NULL when no scope or range repeats, when
 * the step's median occurrence holds more than a million pieces of GPU
 * work (gpufl whatif --scope walks any), or when the recording's
 * dependencies form a cycle (damaged input). Returns 0,
 * GPUFL_EINVAL or GPUFL_ENOMEM (*out NULL). */
int gpufl__ana_critpath_of(const gpufl_trace *t, gpufl__ana_critpath **out) __attribute__((warn_unused_result));
void gpufl__ana_critpath_free(gpufl__ana_critpath *c);

#endif /* GPUFL_ANALYZE_ANA_CRITPATH_H */
