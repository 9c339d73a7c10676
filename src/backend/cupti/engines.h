/*
 * The profiling engines above Trace inside the CUPTI plugin, and which of
 * them runs: the plugin's attach and detach start and stop them, its
 * worker collects them, its resource callback tells them of contexts and
 * modules. When one cannot run (an API the GPU or the permissions refuse,
 * counters another tool holds, gpufl started after the program's first
 * CUDA context) the session steps down, in the order the engines build on
 * each other (deep -> pc_sampling -> trace; range_profiler -> trace), and
 * says why through the host's engine_ran. PC sampling and the range
 * profiler both need the SMs' performance counters, so no engine runs
 * both; PM sampling (pm_sampling_metrics) needs them too, and when both
 * it and the range profiler are asked for, PM sampling keeps them.
 */
#ifndef GPUFL_BACKEND_CUPTI_ENGINES_H
#define GPUFL_BACKEND_CUPTI_ENGINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/cupti/cupti_api.h"
#include "core/plugin_api.h"

/* At the plugin's start, before the first attach. */
void gfl_engines_init(const gpufl_plugin_host *host, const gfl_cupti_api *api);

/* Whether kernels are to be traced with CUPTI_ACTIVITY_KIND_KERNEL, which
 * runs them one at a time, rather than CONCURRENT_KERNEL: SASS metrics
 * (engines sass_metrics and deep) counted nothing under concurrent kernel
 * tracing on an H100 (every value 0; with KIND_KERNEL, ncu's figures). */
bool gfl_engines_serial_kernels(void);

/* Whether the plugin's worker may ask CUPTI for a default flush of its own
 * accord (every 100 ms). Not while SASS metrics patch kernels: on an H200
 * (CUPTI 13.0.1, driver 580) about one run in five of
 * `test_sass_metrics late` hung for good with the worker in
 * cuptiActivityFlushAll, waiting on CUPTI's own thread, that thread
 * waiting for the driver's lock for writing, and the program's thread in
 * cuLaunchKernel, inside CUPTI, waiting on a mutex. Full buffers still
 * come back (CUPTI's own thread returns them), and the forced flushes of
 * an out-of-memory dump, a pause and the end still run: on the program's
 * thread, or after the engine has stopped. */
bool gfl_engines_worker_may_flush(void);

/* Whether engine e runs SASS metrics (sass_metrics, deep), so that the
 * worker will not flush while it records (above). For sizing what must
 * wait for late records before the engines start. */
bool gfl_engines_unflushed(gpufl_engine e);

/* The resource callbacks the engines need, on the plugin's subscriber:
 * 0, or -1 with the reason in err. */
int gfl_engines_callbacks(const gfl_cupti_api *api, CUpti_SubscriberHandle sub, char *err, size_t err_len);

/* Starts the engines the options ask for (resumed: after a pause, when
 * the program's contexts existing is expected, not a late start). Never
 * fails: an engine that cannot run is stepped down from. */
void gfl_engines_start(bool resumed);

/* A resource callback (context created or being destroyed, module loaded
 * or being unloaded), on the program's thread. */
void gfl_engines_resource(CUpti_CallbackId cbid, const void *data);

/* A scope of the program's calling thread begins or ends (the session's
 * scope hook), and an NVTX range is pushed or popped: the range
 * profiler's boundaries. name: string id. */
void gfl_engines_scope(bool begin, uint64_t scope_id, uint32_t name);
void gfl_engines_nvtx(bool push, uint32_t name);

/* The worker's periodic collection. */
void gfl_engines_collect(void);

/* Collects and stops every engine (a pause, or the end); !disable_too at
 * the process's exit. */
void gfl_engines_stop(bool disable_too);

/* The plugin stops: frees what the engines kept across pauses (cubins). */
void gfl_engines_end(void);

#endif /* GPUFL_BACKEND_CUPTI_ENGINES_H */
