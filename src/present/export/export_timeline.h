/*
 * The timeline that the Perfetto and Chrome JSON exports share: a trace
 * laid out as tracks of properly nested slices, counter tracks, and flows
 * from each launching API call to the work it launched. The exporters are
 * sinks that turn these callbacks into their format.
 *
 * Tracks, in the order they are described:
 *   the process (app name, pid)
 *     one track per thread (by tid): gpufl scopes, NVTX ranges and marks,
 *       and the API calls that launched kernels, copies and memsets
 *       (api_start..api_end)
 *     one track per device ("GPU 0 (NVIDIA H200)")
 *       one per stream ("GPU 0 stream 7"): its kernels, copies and memsets,
 *         which CUDA runs one after another on a stream
 *       one per stream with syncs ("GPU 0 stream 7 syncs"): a sync is the
 *         host waiting for the stream, so it spans the stream's work and
 *         gets a track of its own
 *       counters: utilization (%), memory used (bytes), power (W),
 *         temperature (C), SM clock (MHz), where the samples have them
 *     host counters: CPU of the process and of the machine (%), RSS (bytes)
 *
 * Nesting rule. A track's slices are taken in order of start (longer first
 * on equal starts). A slice goes on the track when it nests in the slice
 * open there (starts at or after it, ends at or before it) or nothing is
 * open once the slices that ended by its start are closed; a slice that
 * overlaps without nesting (ranges from a program that ends them out of
 * order, a copy that the clock shows running into the next kernel) goes on
 * the first overflow lane where it nests: a child track "<track> #2", "#3",
 * ... made when first needed. Nothing is clipped or dropped, so every
 * slice keeps its true times, and every lane's begins and ends balance and
 * nest. A scope or NVTX range that never ended (open when the program
 * died) ends where the trace ends it, at the session's last recorded time
 * (gpufl_trace_info.last_ns), and is counted in `unended`; a slice that
 * ends before it starts (damaged input) is made zero-length.
 *
 * Flows: each kernel, copy or memset whose launching call is known (an
 * api_start and a thread) gets a flow id (gpufl__tl_flow_id) carried by the
 * call's slice and terminated on the work's slice. The calls of one CUDA
 * graph launch (the same thread, interval and correlation id) are one
 * slice carrying one flow per kernel.
 *
 * Memory: 8 bytes per slice for the assignment to tracks, plus 32 bytes per
 * slice of the largest track while it is sorted. Single-threaded.
 */
#ifndef GPUFL_PRESENT_EXPORT_EXPORT_TIMELINE_H
#define GPUFL_PRESENT_EXPORT_EXPORT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "present/export/export_rows.h"

#define GPUFL__TL_NONE UINT32_MAX

typedef enum gpufl__tl_kind {
    GPUFL__TL_PROCESS = 0,
    GPUFL__TL_THREAD,
    GPUFL__TL_DEVICE,
    GPUFL__TL_STREAM,
    GPUFL__TL_SYNCS,
    GPUFL__TL_COUNTER,
    GPUFL__TL_LANE, /* an overflow lane of the track `of` */
} gpufl__tl_kind;

typedef struct gpufl__tl_track {
    uint32_t id;     /* 0, 1, ... in the order described; the process is 0 */
    uint32_t parent; /* id, GPUFL__TL_NONE for the process */
    uint8_t kind;    /* gpufl__tl_kind */
    uint8_t bytes;   /* counters: the values are bytes */
    uint32_t tid;    /* threads (and their lanes) */
    uint32_t device; /* devices, streams, syncs, device counters; GPUFL__TL_NONE otherwise */
    uint32_t stream; /* streams and syncs */
    uint32_t lane;   /* lanes: 2, 3, ...; 1 otherwise */
    uint32_t of;     /* lanes: the track they extend (kind of that track in of_kind) */
    uint8_t of_kind;
    char name[192];
} gpufl__tl_track;

typedef struct gpufl__tl_slice {
    uint64_t start, end; /* end >= start; end == start for instants */
    uint8_t src;         /* GPUFL__XS_*; GPUFL__XS_API: a launching call */
    uint8_t instant;     /* an NVTX mark */
    uint8_t op_src;      /* GPUFL__XS_API: the table of the launched work */
    size_t row;          /* in its table (API: the first launched row) */
    /* at begin only (NULL at end): */
    const gpufl__xop *op;       /* kernels, copies, memsets, syncs, API calls */
    const gpufl__xrange *range; /* scopes, NVTX */
    uint64_t flow;              /* device work: flow id from its call, 0 none */
    const uint64_t *flows;      /* API calls: a flow per launched row */
    size_t nflows;
} gpufl__tl_slice;

/* What an export does with the timeline. A callback returning non-zero
 * stops the run, which returns that value. */
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
    uint64_t events;     /* rows of the trace exported (slices from rows, samples) */
} gpufl__tl_stats;

/* The name of a slice: one of a fixed set ("memcpy HtoD", "sync stream",
 * "graph launch", ...), or a string of the trace (kernels, scopes, NVTX
 * ranges), which a launching call shows as "launch <kernel name>". */
#define GPUFL__XNAME_STRING UINT32_MAX
typedef struct gpufl__xname {
    uint32_t fixed;  /* index for gpufl__xname_fixed, or GPUFL__XNAME_STRING */
    uint32_t string; /* string id when not fixed */
    uint8_t launch;  /* prefix "launch " */
} gpufl__xname;

#define GPUFL__XNAME_LAUNCH "launch "
void gpufl__xname_of(const gpufl__xtrace *x, const gpufl__tl_slice *s, gpufl__xname *n);
const char *gpufl__xname_fixed(uint32_t fixed);
uint32_t gpufl__xname_fixed_count(void);

/* The flow id of device work (kernel, copy, memset) row of src: unique in
 * the trace, from 1, below 2^53 (exact in JSON). */
uint64_t gpufl__tl_flow_id(const gpufl__xtrace *x, unsigned src, size_t row);

/* Lays out x and feeds it to sink: every track first (lanes when first
 * needed), then each track's slices in time order, then the counters.
 * Returns 0, what a callback returned, or GPUFL_ENOMEM. */
int gpufl__timeline_run(const gpufl__xtrace *x, const gpufl__tl_sink *sink, gpufl__tl_stats *stats)
    __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_EXPORT_EXPORT_TIMELINE_H */
