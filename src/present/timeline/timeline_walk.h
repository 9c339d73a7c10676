/*
 * The timeline (timeline.h) walked as properly nested slices, the way the
 * Perfetto and Chrome exports draw it: each track's items become slices
 * that begin and end in order, with flows from each launching call to the
 * work it launched.
 *
 * Nesting rule. A track's items are taken in their order (by start, longer
 * first). A slice goes on the track when it nests in the slice open there
 * (starts at or after it, ends at or before it) or nothing is open once the
 * slices that ended by its start are closed; a slice that overlaps without
 * nesting (ranges from a program that ends them out of order, a copy that
 * the clock shows running into the next kernel) goes on the first overflow
 * lane where it nests: a child track "<track> #2", "#3", ... made when
 * first needed. Nothing is clipped or dropped, so every slice keeps its
 * true times, and every lane's begins and ends balance and nest. A scope or
 * NVTX range that never ended (open when the program died) is counted in
 * `unended`.
 *
 * Flows: each kernel, copy or memset whose launching call is known (an
 * api_start and a thread) gets a flow id (gpufl__tl_flow_id) carried by the
 * call's slice and terminated on the work's slice. The calls of one CUDA
 * graph launch (the same thread, interval and correlation id) are one
 * slice carrying one flow per kernel.
 *
 * Single-threaded per walk; the timeline is only read.
 */
#ifndef GPUFL_PRESENT_TIMELINE_TIMELINE_WALK_H
#define GPUFL_PRESENT_TIMELINE_TIMELINE_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "present/timeline/timeline.h"

/* gpufl__tl_slice.src of a launching API call (the tables' own slices
 * carry their GPUFL__TBL_*). */
#define GPUFL__TL_API GPUFL__TBL_COUNT
/* ... of a trace window (a slice) and of a trigger (an instant). */
#define GPUFL__TL_SRC_WINDOW (GPUFL__TL_API + 1)
#define GPUFL__TL_SRC_TRIGGER (GPUFL__TL_API + 2)

/* What an NVTX range that is a PyTorch op range is (analysis.h, "PyTorch
 * ops"); its seq is the range's own (gpufl__range_row). */
typedef struct gpufl__tl_torch_op {
    uint8_t backward;    /* a backward op range */
    uint32_t forward_op; /* string id of its forward op's name; 0 none */
    uint32_t module;     /* string id of its module range's name ("nn.Module: Net.fc"); 0 none */
} gpufl__tl_torch_op;

typedef struct gpufl__tl_slice {
    uint64_t start, end; /* end >= start; end == start for instants */
    uint8_t src;         /* GPUFL__TBL_*; GPUFL__TL_API: a launching call; GPUFL__TL_SRC_* */
    uint8_t instant;     /* an NVTX mark, a trigger */
    uint8_t op_src;      /* GPUFL__TL_API: the table of the launched work */
    size_t row;          /* in its table (API: the first launched row) */
    /* at begin only (NULL at end): */
    const gpufl__work_row *op;       /* kernels, copies, memsets, syncs, API calls */
    const gpufl__range_row *range;   /* scopes, NVTX */
    const gpufl__tl_torch_op *torch; /* NVTX op ranges, when the timeline has the op rows
                                        (GPUFL__TL_TORCH_OPS); NULL otherwise */
    uint64_t flow;                   /* device work: flow id from its call, 0 none */
    const uint64_t *flows;           /* API calls: a flow per launched row */
    size_t nflows;
    const gpufl__window_row *window;   /* trace windows */
    const gpufl__trigger_row *trigger; /* triggers */
} gpufl__tl_slice;

/* What an export does with the timeline. A callback returning non-zero
 * stops the walk, which returns that value. */
typedef struct gpufl__tl_sink {
    void *ctx;
    int (*track)(void *ctx, const gpufl__tl_track *t);
    /* a slice begins (or an instant happens) on track t */
    int (*begin)(void *ctx, const gpufl__tl_track *t, const gpufl__tl_slice *s);
    /* the slice ends, at s->end; slices end in the reverse order they began */
    int (*end)(void *ctx, const gpufl__tl_track *t, const gpufl__tl_slice *s);
    int (*counter)(void *ctx, const gpufl__tl_track *t, uint64_t ts, double value);
} gpufl__tl_sink;

typedef struct gpufl__tl_stats {
    uint64_t tracks, lanes; /* lanes: overflow lanes made */
    uint64_t slices, instants, api_calls, flows, counters;
    uint64_t overlapped; /* slices put on an overflow lane */
    uint64_t unended;    /* scopes and NVTX ranges that never ended */
    uint64_t events;     /* rows of the trace exported (slices from rows, samples, trace
                            windows and triggers) */
} gpufl__tl_stats;

/* The flow id of device work (kernel, copy, memset) row of src: unique in
 * the trace, from 1, below 2^53 (exact in JSON). */
uint64_t gpufl__tl_flow_id(const gpufl__rows *x, unsigned src, size_t row);
/* The highest flow id of x (its kernels, copies and memsets): a job export
 * numbers the next rank's flows after it. */
uint64_t gpufl__tl_flow_ids(const gpufl__rows *x);

/* Adds the counts of b to a (a job export's, summed over its ranks). */
void gpufl__tl_stats_add(gpufl__tl_stats *a, const gpufl__tl_stats *b);

/* Feeds tl to sink: every track first (lanes when first needed), then each
 * track's slices in time order, then the counters. Returns 0, what a
 * callback returned, or GPUFL_ENOMEM. */
int gpufl__timeline_walk(const gpufl__timeline *tl, const gpufl__tl_sink *sink, gpufl__tl_stats *stats)
    __attribute__((warn_unused_result));

/* Builds the timeline of x, walks it and frees it. */
int gpufl__timeline_run(const gpufl__rows *x, const gpufl__tl_sink *sink, gpufl__tl_stats *stats)
    __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_TIMELINE_TIMELINE_WALK_H */
