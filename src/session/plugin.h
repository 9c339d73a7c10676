/*
 * Loading the device plugin for engines above Monitor. A plugin that is
 * missing or fails to start is a logged downgrade to Monitor, never an
 * error for the program. Called by the session, under its lifecycle lock.
 */
#ifndef GPUFL_SESSION_PLUGIN_H
#define GPUFL_SESSION_PLUGIN_H

#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/session_info.h"

/* Which engine a session asked for, which one records it and why they
 * differ: no device backend, a plugin that could not be loaded or could
 * not start, a profiling API the plugin could not use (it says why). */
typedef struct gpufl__engine_choice {
    gpufl_engine requested;
    gpufl_engine ran;
    const char *plugin; /* name of the running plugin, NULL none */
    char reason[640];   /* "" when ran == requested */
} gpufl__engine_choice;

/* The engine event that records *c (names interned), at ts. */
void gpufl__engine_event(const gpufl__engine_choice *c, uint64_t ts, gfl_event *ev);

/* Loads and starts the plugin the session's options call for, if any, and
 * says in *choice what records (every failure is a downgrade, logged once
 * as a warning). Returns true when a plugin is running. */
bool gpufl__plugin_start(const gpufl__session_info *info, gpufl__engine_choice *choice);

/* Flushes and stops the running plugin (it stays loaded). */
void gpufl__plugin_stop(void);

/* gpufl_trace_pause() / gpufl_trace_resume() for the running plugin: 0, or
 * a negative gpufl_err with gpufl_last_error() set. The caller holds the
 * session's lifecycle lock. The gap is recorded in the session's log. */
int gpufl__plugin_pause(void);
int gpufl__plugin_resume(void);

/* Trace windows: the plugin lets go between windows (let_go) and takes
 * the interface back for one, quietly (the windows' events say when).
 * While the user's pause holds, only the state changes. 0, or the
 * plugin's negative gpufl_err with its reason in err (a failed resume
 * leaves the gap). Caller holds the trace windows' lock. */
int gpufl__plugin_set_gap(bool let_go, char *err, size_t err_len);

/* Whether a plugin runs and can let go and take back its interface. */
bool gpufl__plugin_can_pause(void);

/* Whether gpufl_trace_pause() holds (until gpufl_trace_resume()). */
bool gpufl__plugin_user_paused(void);

/* The CUPTI plugin's path: beside libgpufl where it is installed, else
 * its bare name for the loader's search. */
void gpufl__plugin_default_path(char *buf, size_t len);

/* The running plugin's scope callback while its engine needs scope
 * boundaries, else NULL. Stored with release after the plugin started, so
 * that a thread that loads it (acquire) sees the plugin's state; cleared
 * before the plugin stops. */
typedef void (*gpufl__scope_hook_fn)(int begin, uint64_t scope_id, uint32_t name);
extern _Atomic(gpufl__scope_hook_fn) gpufl__scope_hook;

/* The scope path's cost when no engine needs it: one load and a branch. */
static inline void gpufl__scope_hook_call(int begin, uint64_t scope_id, uint32_t name)
{
    gpufl__scope_hook_fn fn = atomic_load_explicit(&gpufl__scope_hook, memory_order_acquire);
    if (__builtin_expect(fn != NULL, 0))
        fn(begin, scope_id, name);
}

/* Name of the running plugin, or NULL. */
const char *gpufl__plugin_name(void);

#endif /* GPUFL_SESSION_PLUGIN_H */
