/*
 * The PC sampling engine (profiling_engine pc_sampling, and deep): CUPTI's
 * PC sampling API in its continuous mode, where kernels keep running
 * concurrently (the kernel-serialized mode would change the program's
 * timing, which a recorder left on in production must not). The SMs
 * sample each warp's program counter every 2^period cycles together with
 * why the warp is not issuing (its stall reason); CUPTI decodes the
 * hardware buffer on its own threads, and the plugin's worker collects the
 * result every 100 ms and pushes it as pc_sample events: per function,
 * PC and stall reason, a count of samples, with the PC's source line when
 * the module has line info (cubin_store.h).
 *
 * Sampling is enabled per CUDA context: when one is created (the
 * resource callback), and at start on the contexts that already exist
 * (an engine started after the program's first CUDA call: the modules
 * loaded before then have no source lines). Samples of a module must be
 * collected before it is unloaded and of a context before it is
 * destroyed: the callbacks below do it on the program's thread.
 *
 * Threads: every function may be called from any thread; one mutex
 * serializes them (CUPTI's calls on one context must not overlap).
 */
#ifndef GPUFL_BACKEND_CUPTI_PC_SAMPLING_H
#define GPUFL_BACKEND_CUPTI_PC_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/cupti/cupti_api.h"
#include "core/plugin_api.h"

typedef struct gfl_pcs_config {
    const gpufl_plugin_host *host;
    const gfl_cupti_api *api;
    uint32_t period;   /* 2^period cycles between samples of an SM, 5..31; 0: CUPTI's default */
    bool source_lines; /* look each PC's line up in the kept cubins */
} gfl_pcs_config;

/* Checks that this CUPTI has the PC sampling API and enables it on the
 * contexts that exist already. 0, or -1 with the reason in err (then
 * nothing is enabled). *late is set when contexts existed. */
int gfl_pcs_start(const gfl_pcs_config *cfg, bool *late, char *err, size_t err_len);

/* A context was created (resource callback): sampling on it. 0, or -1
 * with the reason in err (CUPTI's refusal, named: privileges, counters
 * held by another tool, an unsupported GPU). */
int gfl_pcs_context_created(CUcontext ctx, char *err, size_t err_len);

/* Collects what CUPTI has of every context (the worker, every 100 ms),
 * or of one before its module is unloaded or it is destroyed. `wait`:
 * push with push_wait (the plugin's own thread), else push (the
 * program's thread: a full ring drops and counts). */
void gfl_pcs_collect_all(bool wait);
void gfl_pcs_collect_context(CUcontext ctx, bool wait);

/* A context is being destroyed: collects, disables, forgets it. */
void gfl_pcs_context_destroying(CUcontext ctx);

/* Collects, disables on every context (unless !disable_too: at the
 * process's exit, when the CUDA runtime may be gone and disabling would
 * crash inside CUPTI), frees. The log line says what was sampled and
 * lost. */
void gfl_pcs_stop(bool disable_too);

#endif /* GPUFL_BACKEND_CUPTI_PC_SAMPLING_H */
