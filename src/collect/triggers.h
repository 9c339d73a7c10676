/*
 * Triggers: what makes the flight window be written out (issue 13). The
 * collector owns them: it checks the dump_rules against the events it
 * delivers (a slow scope's end, an NVML sample over a threshold), and it
 * picks up requests other threads leave (gpufl_dump(), the dump signal, the
 * device plugin's out-of-memory) once per pass. Every trigger that fires
 * becomes a GFL_EV_TRIGGER event; whether it dumps is decided here, once:
 * no flight window, or a dump younger than dump_min_interval_s (a storm),
 * and it is only recorded. A dump itself is the session's to write
 * (session/dumps.h), through the hooks.
 *
 * Requests never block and never allocate: the signal handler only counts,
 * and other threads take one of a few fixed slots (a request finding them
 * all taken is counted and folded into the next one of its kind).
 */
#ifndef GPUFL_COLLECT_TRIGGERS_H
#define GPUFL_COLLECT_TRIGGERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/options.h"

typedef struct gpufl__triggers gpufl__triggers;

typedef struct gpufl__trigger_hooks {
    void *ctx;
    /* Writes the flight window out as dump `name`, with ev (the trigger
     * event, already delivered to the window) in it. Collector thread.
     * wait: return only once it is on disk (a crash: the process is about
     * to end). token: the gpufl_dump() call this answers, 0 for none. */
    void (*write_dump)(void *ctx, const gfl_event *ev, const char *name, uint64_t token, bool wait);
    /* A gpufl_dump() call (token) whose trigger dumped nothing, and why. */
    void (*refused)(void *ctx, uint64_t token, gfl_trigger_outcome outcome);
    /* A trigger fired and trace_on_trigger is set: open a trace window.
     * Never blocks. NULL: no trace windows. */
    void (*trace)(void *ctx);
} gpufl__trigger_hooks;

/* Sets triggers up from the session's options (window, rules, storm gap).
 * has_window: the session keeps a flight window. Returns 0, or
 * GPUFL_ENOMEM / GPUFL_ECONFIG with a message in err. */
int gpufl__triggers_create(gpufl__triggers **out, const gpufl_options *o, bool has_window,
                           const gpufl__trigger_hooks *hooks, char *err, size_t err_len)
    __attribute__((warn_unused_result));
void gpufl__triggers_free(gpufl__triggers *t);

/* ---- any thread -------------------------------------------------------- */

/* Asks for a trigger of `kind` ("dump", "oom", ...) with a detail (copied,
 * cut at 255 bytes); token: what the hooks' write_dump/refused get back (0 for
 * none). Returns 0, or -1 when every slot is taken (the request is counted
 * and folded into the next of its kind). */
int gpufl__triggers_request(gpufl__triggers *t, const char *kind, const char *detail, uint64_t token);

/* The dump signal's handler: async-signal-safe. */
void gpufl__triggers_signal(gpufl__triggers *t);

/* ---- collector thread --------------------------------------------------- */

/* Emits one event into the session (the collector's delivery). */
typedef void (*gpufl__trigger_emit_fn)(void *ctx, const gfl_event *ev);

/* Checks a delivered event against the rules; a rule that fires is queued
 * for the next gpufl__triggers_poll. Cheap for every other event. */
void gpufl__triggers_check(gpufl__triggers *t, const gfl_event *ev);

/* Whether a trigger waits to fire (a request, a signal, a rule's hit). */
bool gpufl__triggers_pending(gpufl__triggers *t);

/* Fires what is queued: for each trigger, a GFL_EV_TRIGGER event through
 * emit, then the dump or the refusal through the hooks. */
void gpufl__triggers_poll(gpufl__triggers *t, uint64_t now_ns, gpufl__trigger_emit_fn emit, void *ctx);

/* The program is dying of a fatal signal (collect/crash.h), whose events
 * are delivered: fires a "crash" trigger now and, with dump_on_crash, waits
 * for its dump. The storm gap does not apply: there is no later. */
void gpufl__triggers_crash(gpufl__triggers *t, const char *detail, uint64_t now_ns, gpufl__trigger_emit_fn emit,
                           void *ctx);

/* Triggers fired so far (all outcomes), for tests and the summary. */
uint64_t gpufl__triggers_fired(const gpufl__triggers *t);

#endif /* GPUFL_COLLECT_TRIGGERS_H */
