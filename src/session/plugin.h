/*
 * Loading the device plugin for engines above Monitor. A plugin that is
 * missing or fails to start is a logged downgrade to Monitor, never an
 * error for the program. Called by the session, under its lifecycle lock.
 */
#ifndef GPUFL_SESSION_PLUGIN_H
#define GPUFL_SESSION_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

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

/* Name of the running plugin, or NULL. */
const char *gpufl__plugin_name(void);

#endif /* GPUFL_SESSION_PLUGIN_H */
