/*
 * The one timeline of a trace: what every timeline that gpufl draws is made
 * of (the Perfetto and Chrome exports, the HTML report's timeline and
 * `gpufl view`). Built once per trace; each output then lays it out its own
 * way (nested slices with overflow lanes, rows per depth, decimated marks)
 * from the same tracks, the same order and the same names.
 *
 * Tracks, in the order they are described:
 *   the process (app name, pid)
 *     one track per thread (by tid): gpufl scopes, NVTX ranges and marks
 *       (with, on request, what each NVTX range is to PyTorch: an op, its
 *       forward op and module), and the API calls that launched kernels,
 *       copies and memsets (api_start..api_end)
 *     one track per device ("GPU 0 (NVIDIA H200)")
 *       one per stream ("GPU 0 stream 7"): its kernels, copies and memsets,
 *         which CUDA runs one after another on a stream
 *       one per stream with syncs ("GPU 0 stream 7 syncs"): a sync is the
 *         host waiting for the stream, so it spans the stream's work and
 *         gets a track of its own (or, built with GPUFL__TL_SYNCS_BY_THREAD,
 *         is on the track of the thread that waited)
 *       counters: utilization (%), memory used (bytes), power (W),
 *         temperature (C), SM clock (MHz), where the samples have them
 *     host counters: CPU of the process and of the machine (%), RSS (bytes)
 *     "gpufl", when the session has trace windows or triggers (and the
 *       output asked for them): the windows device tracing ran in, as
 *       slices, and the triggers that fired, as instants; first after the
 *       process, because they say how to read everything below (device
 *       work exists only inside the windows)
 *
 * Items. Each thread, stream and syncs track holds its items (a row of a
 * table, or the launching call of a kernel, copy or memset), in order of
 * start, longer first on equal starts, stably (rows that tie on both keep
 * table order: kernels, copies, memsets, syncs, scopes, NVTX, then calls).
 * A call without a thread is on no track. Ends are clipped: an end before
 * the start (damaged input) gives a zero-length item, a call lasts at least
 * until it started, and a scope or NVTX range that never ended ends at the
 * session's last recorded time (gpufl_trace_info.last_ns), as the reader
 * gives it.
 *
 * Built for sessions of tens of millions of events: rows are assigned to
 * tracks with a hash lookup each (cached for runs of one stream or thread)
 * and bucketed by a counting sort; each track is then sorted on its own by
 * a natural merge sort, which is linear on what the reader already sorted
 * (a stream's kernels, copies and memsets are three sorted runs) and
 * n log n only on what arrives out of order (a thread's launch calls
 * across streams). Memory: 8 bytes per item, plus 32 bytes per item of the
 * largest track while it is sorted. Read-only once built; any thread.
 */
#ifndef GPUFL_PRESENT_TIMELINE_TIMELINE_H
#define GPUFL_PRESENT_TIMELINE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "core/idmap.h"
#include "read/rows.h"

#define GPUFL__TL_NONE UINT32_MAX

typedef enum gpufl__tl_kind {
    GPUFL__TL_PROCESS = 0,
    GPUFL__TL_THREAD,
    GPUFL__TL_DEVICE,
    GPUFL__TL_STREAM,
    GPUFL__TL_SYNCS,
    GPUFL__TL_COUNTER,
    GPUFL__TL_LANE,   /* an overflow lane of the track `of` (timeline_walk.h) */
    GPUFL__TL_FLIGHT, /* the recorder's own track: trace windows and triggers */
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

/* An item: its kind (GPUFL__TBL_* for a row of that table, or
 * GPUFL__TL_CALL_OF(table) for the launching call of a kernel, copy or
 * memset row) in the top byte, its row below. */
#define GPUFL__TL_CALLS GPUFL__TBL_COUNT
#define GPUFL__TL_CALL_OF(tbl) (GPUFL__TL_CALLS + (tbl))
/* Items of the "gpufl" track: a trace window (row of
 * gpufl__window_row_get) and a trigger (of gpufl__trigger_row_get). */
#define GPUFL__TL_WINDOW (GPUFL__TL_CALLS + GPUFL__TBL_COUNT)
#define GPUFL__TL_TRIGGER (GPUFL__TL_WINDOW + 1)
#define GPUFL__TL_REF(kind, row) ((uint64_t)(kind) << 56 | (uint64_t)(row))
#define GPUFL__TL_REF_KIND(ref) ((unsigned)((ref) >> 56))
#define GPUFL__TL_REF_ROW(ref) ((size_t)((ref) & ((1ull << 56) - 1)))

/* What a counter track plots (timeline_counters.c). */
typedef struct gpufl__tl_counter_def {
    const char *name;
    uint32_t bit; /* GPUFL__DS_* or GPUFL__HS_*: samples that have it */
    uint8_t bytes;
    uint8_t field;
} gpufl__tl_counter_def;

typedef struct gpufl__tl_counter {
    uint32_t track;
    uint32_t device; /* GPUFL__TL_NONE: host */
    const gpufl__tl_counter_def *def;
    uint32_t metric; /* a PM sampling metric's string id (def is gpufl__tl_pm_counter); else 0 */
} gpufl__tl_counter;

typedef struct gpufl__timeline {
    const gpufl__rows *x;
    gpufl__tl_track *tracks;
    size_t ntracks, cap;
    /* items of track t, in order: refs[off[t] .. off[t + 1]) */
    size_t *off;
    uint64_t *refs;
    gpufl__tl_counter *counters;
    size_t ncounters;
    gpufl__idmap threads, streams, syncs; /* key -> track id */
    uint32_t flight;                      /* the "gpufl" track; GPUFL__TL_NONE when none */
    gpufl__ana_op_rows ops;               /* with GPUFL__TL_TORCH_OPS: what each NVTX row is
                                             to PyTorch; empty otherwise */
} gpufl__timeline;

/* Which items a timeline holds: every kind, or those an output draws (a
 * bit per item kind), so that one that draws no launch calls does not
 * pay for sorting them. A thread or stream has a track when it has an
 * item of these kinds. */
#define GPUFL__TL_ITEM(kind) (1u << (kind))
#define GPUFL__TL_ALL 0x7fffffffu
/* With the items: syncs on the track of the thread that waited, instead of
 * a syncs track of the stream waited for (the HTML report's layout). */
#define GPUFL__TL_SYNCS_BY_THREAD 0x80000000u
/* With the NVTX items: the PyTorch op rows (analysis.h, "PyTorch ops"), so
 * that the slices of op ranges carry their op (timeline_walk.h). In
 * GPUFL__TL_ALL. */
#define GPUFL__TL_TORCH_OPS 0x40000000u

/* Builds the timeline of x (which must outlive it) with the item kinds in
 * items. Returns 0, or GPUFL_ENOMEM with *tl empty (safe to free). */
int gpufl__timeline_build(gpufl__timeline *tl, const gpufl__rows *x, uint32_t items)
    __attribute__((warn_unused_result));
void gpufl__timeline_free(gpufl__timeline *tl);

/* The rows of item kind (a table, the calls of one, windows or triggers). */
size_t gpufl__tl_kind_rows(const gpufl__rows *x, unsigned kind);

/* The items of track id (none for process, device and counter tracks). */
static inline const uint64_t *gpufl__tl_items(const gpufl__timeline *tl, uint32_t track, size_t *n)
{
    *n = tl->off[track + 1] - tl->off[track];
    return tl->refs + tl->off[track];
}

/* The track of thread tid, or of the work (GPUFL__TL_STREAM) or syncs
 * (GPUFL__TL_SYNCS) of a device's stream; GPUFL__TL_NONE when there is none. */
uint32_t gpufl__tl_thread_track(const gpufl__timeline *tl, uint32_t tid);
uint32_t gpufl__tl_stream_track(const gpufl__timeline *tl, uint8_t kind, uint32_t device, uint32_t stream);

/* An item's end from its row: an end before the start (damaged input)
 * makes it zero-length; a call returns, so lasts until at least its start. */
static inline uint64_t gpufl__tl_clip(uint64_t start, uint64_t end) { return end < start ? start : end; }
static inline uint64_t gpufl__tl_call_end(uint64_t api_start, uint64_t api_end)
{
    return gpufl__tl_clip(api_start, api_end);
}

/* Start and (clipped, see above) end of an item. */
uint64_t gpufl__tl_item_start(const gpufl__rows *x, uint64_t ref);
uint64_t gpufl__tl_item_end(const gpufl__rows *x, uint64_t ref);

/* The counters' definitions, and a sample's value for one of them: a
 * device sample for a device counter, a host sample for a host one. */
extern const gpufl__tl_counter_def gpufl__tl_device_counters[];
extern const size_t gpufl__tl_ndevice_counters;
extern const gpufl__tl_counter_def gpufl__tl_host_counters[];
extern const size_t gpufl__tl_nhost_counters;
/* A PM sampling metric's counter (one track per device and metric, named
 * by the metric): its values are the pm_samples rows'. */
extern const gpufl__tl_counter_def gpufl__tl_pm_counter;
double gpufl__tl_counter_value(const gpufl__tl_counter_def *def, const gpufl__dev_row *d, const gpufl__host_row *h);

#endif /* GPUFL_PRESENT_TIMELINE_TIMELINE_H */
