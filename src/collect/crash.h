/*
 * The crash case: fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT)
 * recorded before the process dies.
 *
 * gpufl_init installs one handler for the five (collect/crash.c), chained to
 * whatever the program had installed before; gpufl_shutdown puts the
 * program's actions back where ours are still in place. The handler runs on
 * the thread the signal was delivered to, with any lock of the program held,
 * so it only does async-signal-safe work: it fills the one crash record
 * below (the signal, the thread, its stack as raw addresses, every thread's
 * open gpufl scopes, read without locks), publishes it and waits, with a
 * deadline, for the collector thread, which writes it out
 * (collect/collector.c with collect/crash_events.c). Then the program's own
 * handler runs, or the default action: the process dies by the same signal,
 * with the same core dump, as it would have without gpufl.
 *
 * Sizes: one record per process (the first crash of a session is the one
 * recorded), 64 frames, GFL_CRASH_MAX_SCOPES open scopes over all threads.
 */
#ifndef GPUFL_COLLECT_CRASH_H
#define GPUFL_COLLECT_CRASH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"

#define GFL_CRASH_MAX_FRAMES 64
#define GFL_CRASH_MAX_SCOPES 2048

/* How long the crashing thread waits for its record to be written before
 * it lets the signal through anyway: writing takes milliseconds; this only
 * bounds a collector that cannot run (a lock it needs is held by the
 * crashed thread, a hung file system), so that a crash always ends the
 * process. */
#define GFL_CRASH_WAIT_MS 5000

typedef struct gpufl__crash_scope {
    uint64_t id, parent, begin_ts;
    uint32_t tid;
    uint32_t name; /* string id */
    uint16_t depth;
} gpufl__crash_scope;

typedef struct gpufl__crash_record {
    uint64_t ts;                            /* when the handler caught it */
    uint32_t tid;                           /* the thread it was delivered to */
    uint8_t flags;                          /* GFL_F_CRASH_* */
    gfl_crash_payload info;                 /* signal, code, address, sender, action; counts filled in */
    uintptr_t frames[GFL_CRASH_MAX_FRAMES]; /* [0]: the interrupted instruction */
    gpufl__crash_scope scopes[GFL_CRASH_MAX_SCOPES];
} gpufl__crash_record;

/* gpufl_init, under the lifecycle lock: installs the handler for the five
 * signals (and an alternate signal stack on the calling thread, which has
 * none, so that a stack overflow there is caught too). Loads libunwind
 * the first time; without it crashes are recorded with no stack. */
void gpufl__crash_install(void);

/* gpufl_shutdown, under the lifecycle lock: gives each signal back to the
 * action the program had, where our handler is still the one installed (a
 * program that replaced it after gpufl_init keeps its own). */
void gpufl__crash_uninstall(void);

/* The collector thread calls this once it runs: a crash on the thread that
 * writes crashes cannot wait for itself, and goes straight to the
 * program's action. */
void gpufl__crash_mark_writer_thread(void);

/* Collector thread: the crash record waiting to be written, or NULL (one
 * relaxed-cost acquire load: it is called on every pass). */
const gpufl__crash_record *gpufl__crash_pending(void);

/* Collector thread, after writing a pending record: `head` once the crash
 * and its open scopes are on disk, then `done` after its stack. The
 * crashing thread stops waiting at `done`. */
void gpufl__crash_written_head(void);
void gpufl__crash_written_done(void);

/* collect/crash_events.c: the record as events, for the collector. */
void gpufl__crash_event(const gpufl__crash_record *r, gfl_event *out);
void gpufl__crash_scope_event(const gpufl__crash_record *r, uint32_t i, gfl_event *out);
/* The stack pieces: frames turned into module + offset (dladdr, which takes
 * the dynamic loader's lock: written after everything else for that
 * reason). Returns the number of events written to out (at most
 * GFL_CRASH_MAX_FRAMES / GFL_STACK_FRAMES_PER_EVENT + 1). */
#define GFL_CRASH_STACK_EVENTS ((GFL_CRASH_MAX_FRAMES + GFL_STACK_FRAMES_PER_EVENT - 1) / GFL_STACK_FRAMES_PER_EVENT)
unsigned gpufl__crash_stack_events(const gpufl__crash_record *r, gfl_event out[GFL_CRASH_STACK_EVENTS]);

#endif /* GPUFL_COLLECT_CRASH_H */
