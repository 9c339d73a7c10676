/*
 * The flight window in a session (issue 13): the window sink, the triggers
 * the collector checks, the thread that writes dumps, the dump signal and
 * the note `gpufl dump PID` finds the session by.
 *
 * Started with the collector (gpufl__dumps_open fills the collector's
 * config), stopped after it: dumps asked for until the end are written
 * before gpufl_shutdown() returns.
 */
#ifndef GPUFL_SESSION_DUMPS_H
#define GPUFL_SESSION_DUMPS_H

#include <stdbool.h>
#include <stddef.h>

#include "collect/collector.h"
#include "core/session_info.h"

/* Where `gpufl dump PID` finds a running session's directory and dump
 * signal: $XDG_RUNTIME_DIR/gpufl/<pid> or /tmp/gpufl-<uid>/<pid>, two lines
 * (the signal number, the session directory). Written only while the
 * session keeps a flight window and its signal handler is installed. */
#define GPUFL_DUMP_NOTE_DIR_ENV "XDG_RUNTIME_DIR"

/* Sets up the window (when flight_window_s > 0) as one more sink of cc and
 * the triggers as cc->triggers. Before the collector starts; under the
 * lifecycle lock. Returns 0, or a negative gpufl_err with a message in err
 * and nothing left set up. */
int gpufl__dumps_open(const gpufl__session_info *info, gpufl__collector_config *cc, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Once recording: the dump signal's handler and the note for `gpufl dump`. */
void gpufl__dumps_arm(void);

/* The signal handler off, the note gone: before the collector stops. */
void gpufl__dumps_disarm(void);

/* After the collector has stopped: writes the dumps still queued, stops
 * the dump thread, frees the triggers. */
void gpufl__dumps_close(void);

/* gpufl_dump() and gpufl_report_oom() (api: their name, for messages): a
 * trigger of kind with detail (NULL: none), and waits for its dump. The
 * collector drains every ring once more before it fires, so what the
 * calling thread recorded before is in the dump. 0, or as gpufl_dump(). */
int gpufl__dumps_request(const char *api, const char *kind, const char *detail);

/* The device plugin's trigger hook (plugin_api.h): never blocks. An "oom"
 * is ignored while the framework reports its own (gpufl__dumps_framework_oom). */
void gpufl__dumps_plugin_trigger(const char *kind, const char *detail);

/* gpufl_set_framework_oom(): any thread, any time. */
void gpufl__dumps_framework_oom(bool on);

/* The note's path for pid (the CLI reads it): 0, or -1 when it does not fit. */
int gpufl__dump_note_path(int pid, char *out, size_t len);

#endif /* GPUFL_SESSION_DUMPS_H */
