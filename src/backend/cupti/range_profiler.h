/*
 * The range profiler engine (profiling_engine=range_profiler): CUPTI's
 * range profiling API in user-range mode with user replay, one pass, on
 * one context: the GPU work the program issues while one of its gpufl
 * scopes (or, with range_profiler_nvtx, NVTX ranges) is the innermost one
 * open on the profiled thread is one range, and each range's metrics
 * become range_metric events (core/event.h).
 *
 * Why this mode: a program being observed cannot replay its own work, so
 * only what CUPTI counts in a single pass is measured; a metric list that
 * needs more passes is refused at start (which metrics, how many passes).
 * Kernel replay (CUPTI re-running each kernel once per pass, saving and
 * restoring its memory) would lift that limit at the cost of serialising
 * and re-running every kernel, which is Nsight Compute's job, not a
 * recorder's. Ranges do not nest in one pass (CUPTI profiles one nesting
 * level per pass), so a scope opened inside another ends the outer range
 * and starts its own: each range holds the work of its scope alone, as
 * kernels are attributed to their innermost scope everywhere in gpufl.
 *
 * Threads: gfl_rp_scope() and gfl_rp_nvtx() run on the program's threads
 * (only the profiled one, the first to open a scope once a context is
 * known, does anything); the resource callbacks on the thread that
 * creates or destroys a context; start and stop on the session's. One
 * lock serialises them: a range boundary costs two CUPTI calls under it,
 * and every GFL_RP_RANGES_PER_PASS ranges the pass is decoded on the
 * profiled thread (a wait for the GPU, and one evaluation per range).
 */
#ifndef GPUFL_BACKEND_CUPTI_RANGE_PROFILER_H
#define GPUFL_BACKEND_CUPTI_RANGE_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/cupti/cupti_api.h"
#include "core/plugin_api.h"

/* Ranges decoded together: the counter data image holds this many. */
#define GFL_RP_RANGES_PER_PASS 512
/* The metrics of range_profiler_metrics=default, in the order they are
 * kept when not all fit one pass. */
extern const char *const gfl_rp_default_metrics[];
extern const size_t gfl_rp_n_default_metrics;

typedef struct gfl_rp_config {
    const gpufl_plugin_host *host;
    const gfl_cupti_api *api;
    const char *metrics; /* "default", or CUPTI metric names, comma-separated */
    bool nvtx;           /* NVTX ranges make ranges too */
    /* The profiler could not go on (reason in words): the caller records
     * the step down. Called at most once, under the profiler's lock. */
    void (*failed)(const char *reason);
} gfl_rp_config;

/* Checks the metrics against device 0's chip and builds their config:
 * 0, or -1 with the reason in err (unknown metric, more than one pass,
 * no profiler API, counters taken). late: the program already has a CUDA
 * context (profiling then starts on it at the first scope). */
int gfl_rp_start(const gfl_rp_config *cfg, bool late, char *err, size_t err_len);

/* A scope of the calling thread begins or ends (name: string id). */
void gfl_rp_scope(bool begin, uint64_t scope_id, uint32_t name);

/* An NVTX range of the calling thread is pushed or popped (name: string
 * id); nothing unless the config asked for NVTX ranges. */
void gfl_rp_nvtx(bool push, uint32_t name);

/* A context was created (the first one is profiled) or is being
 * destroyed (its ranges are decoded while it still exists). */
void gfl_rp_context_created(CUcontext ctx);
void gfl_rp_context_destroying(CUcontext ctx);

/* Decodes what is left, pushes its events and lets go of the profiler.
 * Safe when not started. */
void gfl_rp_stop(void);

/* For the stop line: ranges measured, ranges CUPTI dropped, scope events
 * of threads other than the profiled one. */
void gfl_rp_stats(uint64_t *ranges, uint64_t *dropped, uint64_t *other_threads);

#endif /* GPUFL_BACKEND_CUPTI_RANGE_PROFILER_H */
