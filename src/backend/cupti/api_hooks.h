/*
 * The CUDA API calls the trace engine watches as they happen, on the
 * program's thread: launches, graph launches, copies, memsets, syncs and
 * (with memory tracking) allocations. At entry we note what only that
 * thread knows at that instant — its id, innermost gpufl scope and NVTX
 * range, optionally its call stack — in the launch table under the call's
 * correlation id; at exit, when the call returned. The device records that
 * arrive later carry the same correlation id.
 *
 * Which callback ids are watched is decided once, by name (cudaLaunch*,
 * cuMemcpy*, ...), so new API versions need no table of numbers.
 */
#ifndef GPUFL_BACKEND_CUPTI_API_HOOKS_H
#define GPUFL_BACKEND_CUPTI_API_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include <cupti.h>

#include "backend/cupti/cupti_api.h"
#include "backend/cupti/launch_table.h"
#include "core/plugin_api.h"

typedef enum gfl_api_class {
    GFL_API_OTHER = 0,
    GFL_API_LAUNCH,
    GFL_API_GRAPH_LAUNCH,
    GFL_API_COPY,
    GFL_API_MEMSET,
    GFL_API_SYNC,
    GFL_API_ALLOC,
} gfl_api_class;

/* The class of an API function by its name as CUPTI reports it
 * ("cudaLaunchKernel_v7000", "cuMemcpyHtoDAsync_v2", ...). Pure. */
gfl_api_class gfl_api_classify(const char *name);

typedef struct gfl_api_hooks_config {
    const gpufl_plugin_host *host;
    gfl_launch_table *table;
    bool syncs;        /* enable_synchronization */
    bool allocations;  /* enable_memory_tracking */
    bool graph_events; /* enable_cuda_graphs_tracking: graph_launch events */
    bool stacks;       /* enable_stack_trace */
    /* dump_on_oom: an allocation call that fails for lack of memory is
     * handed here (a GFL_EV_MEM_ALLOC with GFL_F_MEM_FAILED and a detail
     * naming the call), on the program's thread; NULL: not watched. */
    void (*out_of_memory)(const gfl_event *failed, const char *detail);
} gfl_api_hooks_config;

/* The bytes an allocation call asked for, from its parameters (CUPTI's
 * <name>_params structs), or 0 for a call whose size is not its second
 * argument (cudaMallocPitch, cudaMalloc3D, arrays). Pure. */
uint64_t gfl_api_alloc_bytes(const char *name, const void *params);

/* Classifies every runtime and driver callback id and enables the ones the
 * configuration needs on `sub`. Returns the number enabled, or -1 with the
 * reason in err. */
int gfl_api_hooks_enable(const gfl_cupti_api *api, CUpti_SubscriberHandle sub, const gfl_api_hooks_config *cfg,
                         char *err, size_t err_len);

/* Turns CUPTI's API activity records on (or off) for exactly the calls
 * watched, which is what external correlation ids hang on: a framework's id
 * comes as a record just before the API record of each call made under it.
 * Far cheaper than every API record (a PyTorch op makes several calls we do
 * not watch). Returns the number of calls changed, or -1 when this CUPTI
 * cannot choose calls (then enable the RUNTIME and DRIVER kinds instead). */
int gfl_api_hooks_api_records(const gfl_cupti_api *api, uint8_t enable);

/* The CUPTI_CB_DOMAIN_RUNTIME_API / DRIVER_API callback. */
void gfl_api_hooks_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *data);

/* The time stamp counter (0 where there is none). */
static inline uint64_t gfl_cycles_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return 0;
#endif
}

/* Counts the time stamp counter's cycles spent inside the callback (on =
 * true resets the counts). Call before callbacks are enabled. */
void gfl_api_hooks_time(bool on);
/* Callbacks timed and their cycles since gfl_api_hooks_time(true). */
void gfl_api_hooks_timed(uint64_t *calls, uint64_t *cycles);

/* Stops recording from callbacks that CUPTI still delivers. */
void gfl_api_hooks_disable(void);

/* The calling thread's OS id (gettid), cached per thread and asked again in
 * a fork child: the launching thread of a launch, the starting thread of an
 * NVTX start/end range. Any thread; no system call after the first. */
uint32_t gfl_api_thread_id(void);

#endif /* GPUFL_BACKEND_CUPTI_API_HOOKS_H */
