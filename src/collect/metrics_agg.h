/*
 * What the metrics endpoint (option metrics_listen) serves that the
 * session's stats (stats.h) do not keep: a histogram of each scope name's
 * durations, the GPU time of the kernels launched inside each scope, and
 * the triggers by kind and outcome.
 *
 * Collector thread only: the collector feeds it every event it delivers
 * (when the session listens), so nothing is added to a producer's path,
 * and hands it to the renderer (session/metrics_own.c) on the same thread.
 *
 * A kernel event carries the id of the scope that was innermost on its
 * launching thread when it was launched (the CUPTI plugin reads the scope
 * stack at the launch call); the collector sees that scope's begin event
 * before the kernel (a kernel reaches it only when CUPTI hands over its
 * buffer), so a table of each thread's last GFL_METRICS_RECENT scopes'
 * ids (fewer where several threads' share of it overlaps), filled at scope
 * begin, names the scope of each kernel. A scope pushed out of it before
 * its kernels arrive leaves them under "(unknown)".
 *
 * Bounded: GFL_METRICS_MAX_SCOPES scope names (later names count under
 * "(other)"), GFL_METRICS_MAX_TRIGGERS trigger kinds; about 700 KiB,
 * allocated only when the session listens.
 */
#ifndef GPUFL_COLLECT_METRICS_AGG_H
#define GPUFL_COLLECT_METRICS_AGG_H

#include <stdint.h>

#include "collect/sink.h"
#include "collect/stats.h"
#include "core/event.h"

#define GFL_METRICS_MAX_SCOPES 256
#define GFL_METRICS_BUCKETS 18 /* finite bounds; a last bucket holds what exceeds them */
#define GFL_METRICS_RECENT (1u << 16)
#define GFL_METRICS_MAX_TRIGGERS 16

/* The histogram's upper bounds, ns (1 us to 300 s). */
extern const uint64_t gpufl__metrics_bounds_ns[GFL_METRICS_BUCKETS];

/* Rows past the named scopes' (0..nscopes-1). */
enum {
    GPUFL__METRICS_OTHER = GFL_METRICS_MAX_SCOPES, /* names past the cap */
    GPUFL__METRICS_NO_SCOPE,                       /* kernels launched outside every scope */
    GPUFL__METRICS_UNKNOWN,                        /* kernels whose scope left the recent table */
    GPUFL__METRICS_ROWS
};

typedef struct gpufl__metrics_scope {
    uint32_t name; /* string id; 0 for the rows past the named ones */
    uint64_t count, sum_ns;
    uint64_t bucket[GFL_METRICS_BUCKETS + 1]; /* per bucket (not cumulative); the last: over every bound */
    uint64_t kernels, kernel_ns;
} gpufl__metrics_scope;

typedef struct gpufl__metrics_trigger {
    uint32_t kind; /* string id; 0: the "(other)" row */
    uint64_t count[GFL_TRIGGER_OUTCOME_COUNT];
} gpufl__metrics_trigger;

typedef struct gpufl__metrics_agg {
    gpufl__metrics_scope rows[GPUFL__METRICS_ROWS];
    uint32_t nscopes;
    uint16_t row_of[4 * GFL_METRICS_MAX_SCOPES]; /* open addressing by name id: row + 1, 0 empty */
    uint32_t key_of[4 * GFL_METRICS_MAX_SCOPES];
    uint32_t last_name; /* the name last looked up and its row: loops repeat one */
    uint16_t last_row;
    uint64_t recent_id[GFL_METRICS_RECENT]; /* scope id -> its row, by its thread's sequence number */
    uint16_t recent_row[GFL_METRICS_RECENT];
    gpufl__metrics_trigger triggers[GFL_METRICS_MAX_TRIGGERS + 1]; /* the last: "(other)" */
    uint32_t ntriggers;
} gpufl__metrics_agg;

/* The session's figures at one moment, as the collector hands them to
 * the renderer. */
typedef struct gpufl__metrics_view {
    const gpufl__stats *stats;
    const gpufl__metrics_agg *agg;
    const gpufl__sink_status *sinks;
    uint64_t now_ns;
} gpufl__metrics_view;

/* Returns a zeroed aggregate (free()), or NULL when out of memory. */
gpufl__metrics_agg *gpufl__metrics_agg_new(void);
/* Counts one delivered event; O(1) (scope end: the bucket search). */
void gpufl__metrics_agg_add(gpufl__metrics_agg *a, const gfl_event *ev);

#endif /* GPUFL_COLLECT_METRICS_AGG_H */
