/*
 * The lanes of the timeline view (`gpufl view`): a trace's rows grouped
 * into the sequences a timeline draws, each sorted by start time, built
 * once per trace in one pass over its tables so that drawing any window
 * costs a binary search and a walk over that window's rows per lane.
 *
 * A lane is the kernels, copies and memsets of one stream of one device;
 * all kernels of one device (its busy time); the device's samples that
 * carry GPU utilization; or the gpufl scopes, or the NVTX ranges, of one
 * thread at one nesting depth. Each entry keeps the latest end of its
 * lane's entries so far, which is what the binary search looks at: rows
 * of a lane may overlap (a long scope left open, unserialized work), so
 * start times alone cannot say where a window's first visible row is.
 *
 * Sized for sessions of tens of millions of rows: 12 bytes per entry (a
 * kernel is in two lanes). Read-only once built; any thread.
 */
#ifndef GPUFL_PRESENT_VIEW_VIEW_INDEX_H
#define GPUFL_PRESENT_VIEW_VIEW_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"
#include "read/rows.h"

/* Nesting depths drawn per thread and kind (scopes, NVTX); deeper rows are
 * counted in gpufl__view_index.deep. */
#define GPUFL__VIEW_MAX_LEVELS 8

/* Lane kinds, in the order the view draws them. */
enum {
    GPUFL__VLANE_DEVICE = 0,  /* every kernel of one device */
    GPUFL__VLANE_SAMPLES = 1, /* samples of one device with GPU utilization */
    GPUFL__VLANE_STREAM = 2,  /* kernels, copies and memsets of one stream of one device */
    GPUFL__VLANE_SCOPE = 3,   /* gpufl scopes of one thread at one depth */
    GPUFL__VLANE_NVTX = 4     /* NVTX ranges of one thread at one depth */
};

typedef struct gpufl__vlane {
    unsigned kind;   /* GPUFL__VLANE_* */
    uint32_t device; /* DEVICE, SAMPLES, STREAM */
    uint32_t stream; /* STREAM */
    uint32_t tid;    /* SCOPE, NVTX */
    uint32_t level;  /* SCOPE, NVTX: nesting depth */
    size_t first, n; /* entries: index row[first .. first + n) */
} gpufl__vlane;

/* An entry names its row: table (GPUFL__TBL_*; every table drawn is below
 * 8) in the top 3 bits, index in the table below. */
#define GPUFL__VROW_BITS 29
#define GPUFL__VROW_TABLE(e) ((unsigned)((e) >> GPUFL__VROW_BITS))
#define GPUFL__VROW_INDEX(e) ((size_t)((e) & ((1u << GPUFL__VROW_BITS) - 1)))

typedef struct gpufl__view_index {
    gpufl__rows src;
    uint32_t *row;      /* entries of every lane, lane after lane */
    uint64_t *max_end;  /* per entry: latest end of its lane up to and including it */
    gpufl__vlane *lane; /* sorted: by device (DEVICE, SAMPLES, STREAMs by stream id), then
                           by thread (SCOPE levels, then NVTX levels) */
    size_t nlanes;
    uint64_t last_ns;  /* the session's last recorded time (gpufl_trace_info.last_ns), where
                           the trace ends scopes and NVTX ranges that never ended */
    uint32_t max_name; /* 1 + the largest kernel name id */
    size_t deep;       /* scope and NVTX rows deeper than the levels drawn */
    size_t marks;      /* NVTX marks (instants): in no lane */
    /* the flight recorder's trace windows (begin, end: the reader's, an
     * unended one at the session's end) and triggers, in the timeline's
     * order (by start); drawn as the "traced" and "triggers" rows */
    uint64_t (*window)[2];
    size_t nwindows;
    uint64_t *trigger_ns;
    size_t ntriggers;
} gpufl__view_index;

/*
 * Builds the lanes of t (which must outlive the index). Returns 0, or
 * GPUFL_ENOMEM, or GPUFL_EUNSUPPORTED for a table of 2^29 rows or more;
 * on failure *ix is left empty (safe to free).
 */
int gpufl__view_index_build(gpufl__view_index *ix, const gpufl_trace *t) __attribute__((warn_unused_result));
void gpufl__view_index_free(gpufl__view_index *ix);

/* End of entry e of a lane as drawn: an interval is at least 1 ns long so
 * that it can be seen. */
uint64_t gpufl__view_entry_end(const gpufl__view_index *ix, uint32_t e);

/* The first entry of lane l (an offset in it) whose row may reach past
 * `from`: every entry before it ends at or before `from`. */
size_t gpufl__view_lane_seek(const gpufl__view_index *ix, const gpufl__vlane *l, uint64_t from);

#endif /* GPUFL_PRESENT_VIEW_VIEW_INDEX_H */
