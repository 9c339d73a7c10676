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

/* gpufl_dump(): asks for a dump and waits for it. */
int gpufl__dumps_request(const char *reason);

/* The device plugin's trigger hook (plugin_api.h): never blocks. */
void gpufl__dumps_plugin_trigger(const char *kind, const char *detail);

/* The note's path for pid (the CLI reads it): 0, or -1 when it does not fit. */
int gpufl__dump_note_path(int pid, char *out, size_t len);

#endif /* GPUFL_SESSION_DUMPS_H */
