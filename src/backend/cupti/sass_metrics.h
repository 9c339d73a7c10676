/*
 * The SASS metrics engine (profiling_engine sass_metrics, and half of
 * deep): CUPTI's SASS metrics API counts, per SASS instruction of every
 * kernel launched, the warp-level executions, the active threads over
 * them, the global memory sectors against the ideal, and the branch
 * targets reached divergently. gpufl turns the counts into
 * GFL_EV_SASS_METRIC events, one per instruction and context, named by
 * their function as kernel events are.
 *
 * What the API allows, as measured on an H100 (CUPTI 13.0, 2026-11-27):
 * under concurrent kernel tracing (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
 * every count is 0, so the plugin traces kernels with KIND_KERNEL while
 * this engine runs (engines.h); counts of a patched function accumulate
 * in the context over its
 * launches; cuptiSassMetricsFlushData hands them over, and after it the
 * functions it read produce no records again (a second flush after a
 * second launch of the same kernel returned none, nor did a Disable and
 * Enable). So a context's counts are read once: at stop (end of the
 * session or of a trace window) or when the context is being destroyed.
 * The counts are therefore per instruction over the whole recording,
 * with no launch of their own: a kernel's figures are those of all its
 * launches together. That is also as cheap as the API allows: no
 * synchronize, no flush while the program runs; the cost is the
 * instrumented kernels' own, which run several times slower.
 *
 * When to configure: cuptiSassMetricsSetConfig and cuptiSassMetricsEnable
 * need a CUDA context (CUPTI_ERROR_INVALID_CONTEXT before one exists),
 * while gpufl usually starts before the program's first CUDA call. So
 * start() only checks that the API is there, and each context is
 * configured (its device once) and enabled with lazy patching at the entry
 * of its first launch call, before the kernel runs: lazy patching
 * instruments a function at its first execution inside the enabled
 * range, however long ago its module was loaded.
 *
 * Threads: the launch hook runs on the program's launching threads, the
 * context-destroyed hook on the destroying thread; one mutex serializes
 * configuration and reads, taken only at a context's first launch and at
 * its read. start and stop run on the session's thread.
 */
#ifndef GPUFL_BACKEND_CUPTI_SASS_METRICS_H
#define GPUFL_BACKEND_CUPTI_SASS_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <cupti.h>

#include "backend/cupti/cupti_api.h"
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
int gfl_sass_metrics_start(const gfl_cupti_api *api, const gpufl_plugin_host *host, void (*refused)(const char *why),
                           char *err, size_t err_len) __attribute__((warn_unused_result));

/* Stops: each context's counts read (the context made current on the
 * calling thread, its work waited for), every enabled context disabled
 * and every configured device unconfigured, unless the process is exiting
 * (CUPTI may be torn down then; the last launch's counts are lost). Safe
 * to call when not started. */
void gfl_sass_metrics_stop(bool process_exiting);

/* As stop, from a thread of the program (a launch callback that steps the
 * session down): what is read is pushed without waiting for room. */
void gfl_sass_metrics_stop_here(void);

/* Nonzero while started: the launch hooks below do nothing otherwise. */
extern _Atomic bool gfl_sass_metrics_on;

/* A launch call's entry on the calling thread (each level of the call
 * that names a context; NULL is ignored): enables the context at its
 * first launch. When a context cannot be measured (the chip lacks
 * smsp__sass_inst_executed, the counters are refused or held by another
 * tool), refused(why) is called once, on this thread, without the
 * engine's lock (start's argument; NULL: logged). A context that cannot
 * be enabled is logged once, with CUPTI's reason, and left unmeasured. */
void gfl_sass_metrics_launch_enter(CUcontext ctx);

/* A context is being destroyed (its thread): its counts are read, waiting
 * for room in the ring as stop does, and it is measured no more. A later
 * context at the same address is not measured either. */
void gfl_sass_metrics_context_destroying(CUcontext ctx);

#endif /* GPUFL_BACKEND_CUPTI_SASS_METRICS_H */
