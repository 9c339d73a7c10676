/*
 * A trace's memory as series per device (analysis.h, "memory layers"):
 * what the layers, peaks and leak analyses read. Built in one pass over
 * the device samples, the allocator table and the memory table, which
 * replays the driver's allocations and the framework's blocks apart.
 *
 * A series is a step function: point k's value holds from ts[k] until
 * ts[k+1]; before ts[0] the series is unknown. The replays start with a
 * point of 0 at the session's start, since what they count began there.
 *
 * Threads: any; a built set is read-only except for the range-max trees,
 * built on first use (so one thread at a time per set). Sizes: a point per
 * sample, allocator state or allocation event: 16 bytes each, and 16 more
 * for a range-max tree.
 */
#ifndef GPUFL_ANALYZE_ANA_MEM_SERIES_H
#define GPUFL_ANALYZE_ANA_MEM_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "read/rows.h"

typedef struct ana_series {
    size_t n, cap;
    uint64_t *ts, *v;
    uint64_t *max_tree; /* 2n nodes for range maxima, NULL until asked */
} ana_series;

typedef struct ana_mem_dev {
    uint32_t device;
    ana_series s[GPUFL__ANA_MEM_SERIES];
    uint8_t framework_source; /* GPUFL__ANA_FW_* */
    uint32_t framework;       /* string id, 0 unknown */
    uint64_t total_bytes;     /* device memory; 0 unknown */
    uint64_t driver_rows, driver_frees;
    uint64_t block_rows; /* framework blocks (alloc and free rows) */
    ana_series blocks;   /* the blocks replayed, whatever framework_source is */
} ana_mem_dev;

typedef struct ana_mem_set {
    const gpufl__rows *a;
    uint32_t n;
    ana_mem_dev *devs; /* by device index */
} ana_mem_set;

/* Builds the series of a's trace. 0 or GPUFL_ENOMEM (out empty). */
int gpufl__ana_mem_set_build(const gpufl__rows *a, ana_mem_set *out) __attribute__((warn_unused_result));
void gpufl__ana_mem_set_free(ana_mem_set *m);

/* The device's entry, or NULL. */
ana_mem_dev *gpufl__ana_mem_set_dev(const ana_mem_set *m, uint32_t device);

static inline bool ana_series_known(const ana_series *s) { return s->n > 0; }

/* The value at time t (the last point at or before it): false when the
 * series is unknown then. */
bool gpufl__ana_series_at(const ana_series *s, uint64_t t, uint64_t *v);

/* The first point in [t, before): false when there is none. */
bool gpufl__ana_series_first_in(const ana_series *s, uint64_t t, uint64_t before, uint64_t *v);

/* The highest value over [b, e] (the value at b and every point up to e)
 * and the first time it held (b when it was the value at b). False when
 * the series is unknown all through. Builds the range-max tree on first
 * use: GPUFL_ENOMEM is reported through *rc (left untouched otherwise). */
bool gpufl__ana_series_max(ana_series *s, uint64_t b, uint64_t e, uint64_t *v, uint64_t *at, int *rc);

/* The series "live" means on this device for the peaks and leaks: the
 * framework's allocated bytes when known, else the driver's; or
 * GPUFL__ANA_MEM_SERIES when neither is. */
uint8_t gpufl__ana_mem_live_series(const ana_mem_dev *d);

/* The report's forms, over a set built once. */
int gpufl__ana_mem_layers_with(ana_mem_set *m, uint32_t max_points, gpufl__ana_mem_layers *out)
    __attribute__((warn_unused_result));
int gpufl__ana_mem_peaks_with(ana_mem_set *m, gpufl__ana_mem_peaks *out) __attribute__((warn_unused_result));
int gpufl__ana_leaks_with(ana_mem_set *m, const gpufl__ana_leak_options *o, gpufl__ana_leaks *out)
    __attribute__((warn_unused_result));

#endif /* GPUFL_ANALYZE_ANA_MEM_SERIES_H */
