/*
 * libgpufl_cupti_guard.so (src/inject/cupti_guard.c): notices the CUPTI clients that gpufl shuts out.
 *
 * CUPTI before 13.2 serves one subscriber per process. While gpufl's Trace
 * engine holds it, another client (torch.profiler, a hand-written CUPTI
 * tool) has its cuptiSubscribe refused and, in practice, records nothing
 * without saying so. `gpufl run` preloads this library (LD_PRELOAD), so the
 * program's own calls to cuptiSubscribe / cuptiSubscribe_v2 /
 * cuptiActivityRegisterCallbacks reach it first; it passes each on to the
 * real libcupti unchanged and returns its answer. gpufl's CUPTI plugin
 * binds libcupti by handle, so it never comes through here: every call
 * this library sees is another client's.
 *
 * When such a subscription is refused while gpufl holds CUPTI, it says so
 * on stderr once per process, and counts it for the plugin to log in the
 * session. An activity-callback registration by another client that CUPTI
 * accepts while gpufl holds CUPTI would take gpufl's buffers: it is counted
 * too, so that the session says its device records may be incomplete.
 *
 * The plugin finds the two functions below with dlsym(RTLD_DEFAULT), so
 * they exist only where the guard was preloaded; a program that loads
 * libgpufl itself (the Python package) hands CUPTI over explicitly with
 * gpufl_trace_pause() / gpufl_trace_resume() instead.
 */
#ifndef GPUFL_BACKEND_CUPTI_GUARD_H
#define GPUFL_BACKEND_CUPTI_GUARD_H

#include <stddef.h>

#define GPUFL_CUPTI_GUARD_NAME "libgpufl_cupti_guard.so"

/* What the guard saw of other clients while gpufl held CUPTI. */
typedef struct gpufl_cupti_guard_counts {
    unsigned refused;       /* subscriptions CUPTI refused */
    unsigned took_buffers;  /* activity callbacks registered over ours */
    char first_client[128]; /* the library that made the first such call */
} gpufl_cupti_guard_counts;

/* Called by the CUPTI plugin: holding is 1 from its subscription until it
 * lets CUPTI go. */
typedef void gpufl_cupti_guard_hold_fn(int holding);
#define GPUFL_CUPTI_GUARD_HOLD "gpufl_cupti_guard_hold"

/* Copies what was seen since the process started. */
typedef void gpufl_cupti_guard_seen_fn(gpufl_cupti_guard_counts *out);
#define GPUFL_CUPTI_GUARD_SEEN "gpufl_cupti_guard_seen"

#endif
