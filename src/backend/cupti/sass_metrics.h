/*
 * The SASS metrics engine (profiling_engine sass_metrics, and half of
 * deep): CUPTI's SASS metrics API counts, per SASS instruction of every
 * kernel launched, the warp-level executions, the active threads over
 * them, the global memory sectors against the ideal, and the branch
 * targets reached divergently. gpufl turns each launch's counts into
 * GFL_EV_SASS_METRIC events carrying the launch's correlation id, so that
 * analysis attributes them through the kernel event (scope, op, stream).
 *
 * Where the counts are read: the API accumulates counts per instruction
 * in the context from cuptiSassMetricsEnable on, until
 * cuptiSassMetricsFlushData hands them over and clears them. To keep one
 * launch's counts apart from the next, they are flushed at the exit of
 * every launch call (cudaLaunchKernel, cuLaunchKernel, graph launches),
 * after synchronizing the context: each launch waits for its kernel. This
 * is what makes SASS metrics a diagnosis engine rather than an always-on
 * one; the instrumented kernels themselves also run several times slower.
 *
 * When to configure: cuptiSassMetricsSetConfig and cuptiSassMetricsEnable
 * need a CUDA context (CUPTI_ERROR_INVALID_CONTEXT before one exists),
 * while gpufl usually starts before the program's first CUDA call. So
 * start() only checks that the API is there, and each context is
 * configured (its device once) and enabled with lazy patching at the entry
 * of its first launch call, before the kernel runs. Starting late is
 * therefore no loss beyond the kernels launched before start: lazy
 * patching instruments a function at its first execution inside the
 * enabled range, however long ago its module was loaded.
 *
 * Threads: the launch hooks run on the program's launching threads; one
 * mutex serializes configuration and flushes (CUPTI's flush of a context
 * is not documented as safe against a concurrent one), taken only when the
 * engine is on. start and stop run on the session's thread.
 */
#ifndef GPUFL_BACKEND_CUPTI_SASS_METRICS_H
#define GPUFL_BACKEND_CUPTI_SASS_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cupti.h>

#include "backend/cupti/cupti_api.h"
#include "backend/cupti/launch_table.h"
#include "core/plugin_api.h"

/* The metrics gpufl asks for, by CUPTI's names. The first is required:
 * a chip that lacks it cannot record SASS metrics. */
#define GFL_SASS_METRIC_NAMES                                                                                          \
    "smsp__sass_inst_executed", "smsp__sass_thread_inst_executed", "smsp__sass_sectors_mem_global",                    \
        "smsp__sass_sectors_mem_global_ideal", "smsp__sass_branch_targets",                                            \
        "smsp__sass_branch_targets_threads_divergent", "smsp__sass_data_bytes_mem_global"

/* Checks that this CUPTI has the SASS metrics API and gets ready to
 * enable each context at its first launch. Returns 0, or
 * GPUFL_EUNSUPPORTED with the reason in err (the API missing: a CUPTI
 * older than 12.5), nothing left to undo. */
int gfl_sass_metrics_start(const gfl_cupti_api *api, const gpufl_plugin_host *host, gfl_launch_table *launches,
                           char *err, size_t err_len) __attribute__((warn_unused_result));

/* Stops: every enabled context disabled and every configured device
 * unconfigured, unless the process is exiting (CUPTI may be torn down
 * then; the counts of an unfinished launch are lost either way). Counts
 * read before stop are all pushed. Safe to call when not started. */
void gfl_sass_metrics_stop(bool process_exiting);

/* Nonzero while started: the launch hooks below do nothing otherwise. */
extern _Atomic bool gfl_sass_metrics_on;

/* The outermost launch call's entry on the calling thread: enables the
 * context at its first launch. A context that cannot be enabled is logged
 * once, with CUPTI's reason, and left unmeasured. */
void gfl_sass_metrics_launch_enter(CUcontext ctx);

/* The outermost launch call's exit: waits for the context's work, reads
 * the counts of the instructions executed since the previous read and
 * pushes one event per instruction, attributed to this launch. */
void gfl_sass_metrics_launch_exit(CUcontext ctx, uint32_t correlation);

/* Events pushed and launches read since start (for the plugin's report). */
void gfl_sass_metrics_counts(uint64_t *events, uint64_t *launches, uint64_t *dropped);

#endif /* GPUFL_BACKEND_CUPTI_SASS_METRICS_H */
