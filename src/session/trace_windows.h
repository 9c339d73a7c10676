/*
 * Trace windows: device tracing (the plugin, Trace engine and up) switched
 * on for a window and off again, so that Monitor runs all the time and
 * CUPTI costs only while it matters. Windows open on a schedule
 * (trace_every_s / trace_for_s), every trace_every_steps begins of the
 * scope trace_step_scope (for trace_steps steps), on request
 * (gpufl_trace_window) and on a trigger (gpufl__trace_windows_request).
 * Each window is two GFL_EV_TRACE_WINDOW events (core/event.h).
 *
 * Threads: the session starts and stops the controller under its lifecycle
 * lock; a thread of the controller's own ("gpufl-trace") runs the schedule,
 * the time limits and triggers; the program's thread that begins and ends
 * the step scope opens and closes step windows itself, synchronously, so
 * that exactly those steps are traced. One lock of this file serializes
 * every pause and resume of the plugin (the user's too), below the
 * lifecycle lock.
 */
#ifndef GPUFL_SESSION_TRACE_WINDOWS_H
#define GPUFL_SESSION_TRACE_WINDOWS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/session_info.h"

/* The interned name of the step scope while step windows run, 0 otherwise
 * (no scope name interns to 0, so the scope path's compare never matches). */
extern _Atomic uint32_t gpufl__trace_step_name;

void gpufl__trace_windows_step_begin(void);
void gpufl__trace_windows_step_end(void);

/* The scope path's whole cost: one relaxed load and a compare. Relaxed is
 * enough: the name is stored before gpufl_init() returns, and a thread that
 * misses the store misses one step's count, which is harmless. */
static inline void gpufl__trace_step_begin_check(uint32_t name)
{
    if (__builtin_expect(name == atomic_load_explicit(&gpufl__trace_step_name, memory_order_relaxed), 0))
        gpufl__trace_windows_step_begin();
}

static inline void gpufl__trace_step_end_check(uint32_t name)
{
    if (__builtin_expect(name == atomic_load_explicit(&gpufl__trace_step_name, memory_order_relaxed), 0))
        gpufl__trace_windows_step_end();
}

/* Whether the session's options ask for windows (an engine above Monitor
 * and trace_every_s or trace_every_steps): the plugin is then started
 * paused unless the schedule opens the first window at once. */
bool gpufl__trace_windows_wanted(const gpufl_options *o);

/* Whether the plugin should start paused: windows wanted, and none opens
 * at start (the schedule's first window opens at start). */
bool gpufl__trace_windows_start_paused(const gpufl_options *o);

/* Starts the controller for a session whose plugin started (tracing) at
 * plugin_start_ns, or records that there is none (tracing false). With
 * windows wanted, a plugin that cannot pause is a logged downgrade to
 * tracing all the time. Never fails the session. Lifecycle lock held. */
void gpufl__trace_windows_start(const gpufl_options *o, bool tracing, uint64_t plugin_start_ns);

/* The session's end, around the plugin's stop. stop: no window opens or
 * closes any more, the controller's thread ends; an open window stays
 * open. end, after the plugin has stopped: the open window closes (its
 * closing event), so that its end comes after the start of every record
 * the plugin pushed (closed before the stop, the kernels recorded between
 * the two fell outside every window). Lifecycle lock held. */
void gpufl__trace_windows_stop(void);
void gpufl__trace_windows_end(void);

/* gpufl_trace_pause() / gpufl_trace_resume(): the plugin's, plus the
 * windows' part (an open window closes; none opens while paused). 0 or a
 * negative gpufl_err with gpufl_last_error() set. Lifecycle lock held. */
int gpufl__trace_windows_user_pause(void);
int gpufl__trace_windows_user_resume(void);

/* A trigger asks for a window of ns from now (reason: the trigger's kind,
 * copied). Any thread, the collector's included; never blocks: the
 * controller's thread opens it. 0; GPUFL_EINVAL for ns 0; GPUFL_ESTATE
 * when no windows run (no session, no tracing, or tracing all the time). */
int gpufl__trace_windows_request(uint64_t ns, const char *reason);

#endif /* GPUFL_SESSION_TRACE_WINDOWS_H */
