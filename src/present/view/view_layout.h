/*
 * What the timeline view (`gpufl view`) shows in a window, column by
 * column, before any text is made of it: a pure function of the lanes
 * (view_index.h), the window and the number of columns.
 *
 * Rules:
 * - The window [from, to) is cut into ncols columns of equal length (to the
 *   nanosecond: column c starts at from + (to - from) * c / ncols).
 * - Rows, in order: when the session has trace windows, "traced" (a
 *   column is traced when a window covers any of it), when it has
 *   triggers, "triggers" (a column holds the triggers that fired in it);
 *   per device that has anything in the window, a header,
 *   a utilization row and one row per stream with work in it; then per
 *   thread with scopes or NVTX ranges in the window, a header, one row per
 *   scope depth and one per NVTX depth (up to GPUFL__VIEW_MAX_LEVELS).
 * - A stream or scope row shows in each column what occupied most of that
 *   column's time. Where rows of one lane overlap, the one that started
 *   last occupies the time until it ends (then the one under it again, as
 *   with nesting). A stream column says kernel (a legend letter, or
 *   "other"), copy (by kind) or memset, and whether the column was mostly
 *   idle; a scope column says which scope (so that a run of columns of one
 *   scope can be drawn as one bar with its name).
 * - The legend: the GPUFL__VIEW_LETTERS kernel names with the most kernel
 *   time in the window, over every device, longest first (ties by name).
 * - Utilization: where the device has NVML samples that cover the window,
 *   each sample stands for the time back to the previous sample (at most
 *   1 s: NVML's own averaging period), and a column shows the mean over
 *   the part of it that samples cover; otherwise, and for "busy", the
 *   fraction of the column during which at least one kernel ran.
 * Each lane is walked once over the window's rows, found by binary search:
 * the cost is the rows in the window plus the columns, never their product.
 */
#ifndef GPUFL_PRESENT_VIEW_VIEW_LAYOUT_H
#define GPUFL_PRESENT_VIEW_VIEW_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "present/view/view_index.h"

#define GPUFL__VIEW_LETTERS 10
#define GPUFL__VIEW_COPY_KINDS GFL_COPY_KIND_COUNT /* a cell per gfl_copy_kind */

/* What a stream row's cell holds. */
enum {
    GPUFL__VG_NONE = 0,
    GPUFL__VG_KERNEL = 1, /* 1 .. GPUFL__VIEW_LETTERS: the legend's kernels, in its order */
    GPUFL__VG_OTHER = GPUFL__VG_KERNEL + GPUFL__VIEW_LETTERS, /* a kernel not in the legend */
    GPUFL__VG_COPY = GPUFL__VG_OTHER + 1,                     /* + gfl_copy_kind */
    GPUFL__VG_MEMSET = GPUFL__VG_COPY + GPUFL__VIEW_COPY_KINDS,
    GPUFL__VG_COUNT
};

/* Row kinds. */
enum {
    GPUFL__VR_DEVICE, /* header of a device's rows */
    GPUFL__VR_UTIL,
    GPUFL__VR_STREAM,
    GPUFL__VR_THREAD, /* header of a thread's rows */
    GPUFL__VR_SCOPE,
    GPUFL__VR_NVTX,
    GPUFL__VR_TRACED,  /* where device tracing was on (the session has trace windows) */
    GPUFL__VR_TRIGGERS /* where triggers fired (the session has triggers) */
};

typedef struct gpufl__vcell {
    /* UTIL: level 0 (nothing) .. 8 (100 %); STREAM: GPUFL__VG_*; SCOPE, NVTX:
     * 1 + the offset of the scope in its lane, 0 for none; TRACED: 1 where a
     * window covers part of the column; TRIGGERS: the triggers in it. */
    uint32_t key;
    bool idle; /* STREAM: the column was idle for more than half of its time */
} gpufl__vcell;

typedef struct gpufl__vrow {
    unsigned kind;            /* GPUFL__VR_* */
    const gpufl__vlane *lane; /* STREAM, SCOPE, NVTX */
    uint32_t device, stream;  /* DEVICE, UTIL, STREAM */
    uint32_t tid, level;      /* THREAD, SCOPE, NVTX */
    bool nvml;                /* UTIL: from NVML samples, not kernel time */
    gpufl__vcell *cell;       /* ncols cells; NULL for headers */
} gpufl__vrow;

typedef struct gpufl__vlegend {
    uint32_t name;  /* string id */
    uint64_t ns;    /* kernel time inside the window */
    uint64_t count; /* kernels that overlap the window */
} gpufl__vlegend;

typedef struct gpufl__vdevice {
    uint32_t device;
    uint64_t busy_ns;                /* time in the window when a kernel ran */
    size_t kernels, copies, memsets; /* overlapping the window */
    bool nvml;
    size_t samples;     /* NVML samples covering the window */
    unsigned util_mean; /* their mean GPU utilization, % */
} gpufl__vdevice;

typedef struct gpufl__view_layout {
    const gpufl__view_index *ix;
    uint64_t from, to; /* session timebase ns */
    unsigned ncols;
    gpufl__vrow *row;
    size_t nrows;
    gpufl__vlegend legend[GPUFL__VIEW_LETTERS];
    size_t nlegend;
    uint64_t kernel_ns; /* all kernel time in the window */
    size_t other_names; /* kernel names in the window not in the legend */
    gpufl__vdevice *device;
    size_t ndevices;
    size_t threads, scopes, nvtx; /* in the window */
    size_t windows, triggers;     /* trace windows overlapping the window, triggers in it */
    uint64_t traced_ns;           /* time in the window that trace windows cover */
    gpufl__vcell *cells;          /* every row's cells */
} gpufl__view_layout;

/*
 * Lays out [from, to) (to > from) in ncols (>= 1) columns. Returns 0, or
 * GPUFL_ENOMEM with *lo empty (safe to free).
 */
int gpufl__view_layout_build(gpufl__view_layout *lo, const gpufl__view_index *ix, uint64_t from, uint64_t to,
                             unsigned ncols) __attribute__((warn_unused_result));
void gpufl__view_layout_free(gpufl__view_layout *lo);

/* Where column c begins (c == ncols: the window's end). */
uint64_t gpufl__view_col_start(const gpufl__view_layout *lo, unsigned c);

#endif /* GPUFL_PRESENT_VIEW_VIEW_LAYOUT_H */
