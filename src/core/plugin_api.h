/*
 * The interface between libgpufl and a device plugin: libgpufl_cupti.so
 * (Trace engine and up) and libgpufl_synthetic.so (the test backend) are
 * separate shared objects that the core dlopen()s, so everything crosses
 * here as plain C: a table of core functions handed to the plugin, and a
 * table of plugin functions it returns. Both carry their size and an ABI
 * number and only ever grow at the end.
 *
 * Threads: push(), intern(), now_ns() and current_scope() may be called from
 * any thread, concurrently (CUDA 13 delivers activity buffers on several
 * threads). push() copies the event into the calling thread's own ring: it
 * never blocks, and a full ring drops and counts.
 */
#ifndef GPUFL_CORE_PLUGIN_API_H
#define GPUFL_CORE_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "gpufl/gpufl.h"

#define GPUFL_PLUGIN_ABI 1
#define GPUFL_PLUGIN_ENTRY "gpufl_plugin_entry"

typedef struct gpufl_plugin_host {
    uint32_t size;
    uint32_t abi;
    const gpufl_options *options; /* resolved options of the session */
    const char *session_dir;
    uint64_t session_start_ns;
    uint64_t (*now_ns)(void); /* the session timebase, for CUPTI's timestamp callback */
    uint32_t (*intern)(const char *s, size_t n);
    /* 0, or -1 when the event was dropped (ring full, malformed, not recording) */
    int (*push)(const gfl_event *ev);
    /* innermost open scope of the calling thread, 0 = none */
    uint64_t (*current_scope)(void);
    /* counts n events the plugin itself lost (e.g. CUPTI's own drops) */
    void (*count_lost)(uint8_t reason, uint8_t channel, uint64_t n);
    void (*log)(int level, const char *message);
    /* For the plugin's own background threads, never a thread of the
     * program: like push(), but waits while the ring is full instead of
     * dropping, until the event fits or recording stops (-1); and a tid of
     * 0 stays 0 ("launching thread unknown") instead of becoming the
     * caller's, which push() fills in. */
    int (*push_wait)(const gfl_event *ev);
    /* A trigger fired in the plugin (kind "oom": a CUDA allocation failed
     * for lack of memory): the session records it and, per its options,
     * dumps the flight window. Push what the dump should hold first. Never
     * blocks; any thread. */
    void (*trigger)(const char *kind, const char *detail);
    /* Nonzero: start with the vendor's tracing interface let go, as after
     * pause(), until the first resume(): trace windows (the session's
     * trace_every_s / trace_every_steps) with none open at start, so that
     * nothing is traced before the first window and CUPTI is not taken
     * only to be let go at once. Requires pause and resume. */
    uint32_t start_paused;
    /* The plugin records with a lesser engine than options->profiling_engine
     * (a gpufl_engine): a profiling API the GPU, the driver or the
     * permissions refuse, counters another tool holds, an engine started
     * after the program's first CUDA context. `reason` says why, in words.
     * During start() it sets what the session's engine event says; later
     * (a context created afterwards refused it) it records a new engine
     * event and logs a warning. Any thread; never blocks. */
    void (*engine_ran)(uint32_t engine, const char *reason);
    /* A source file that line info named (a path as the build wrote it:
     * absolute, or relative to the program's working directory), while
     * options->enable_source_collection is on. The session keeps the
     * distinct paths and copies the files into <session>/sources/ when the
     * plugin has stopped; nothing is read here. Any thread; takes a mutex,
     * so call it off the program's launch path (the plugin's worker). */
    void (*source_file)(const char *path);
} gpufl_plugin_host;

typedef struct gpufl_plugin {
    uint32_t size;
    uint32_t abi;
    const char *name;
    /* Returns 0, or a negative gpufl_err with the reason in err. */
    int (*start)(const gpufl_plugin_host *host, char *err, size_t err_len);
    /* Pushes everything buffered so far. */
    void (*flush)(void);
    /* Flushes, then stops; no push() after it returns. */
    void (*stop)(void);
    /* Optional (a plugin whose size ends before them has neither): lets go
     * of the vendor's tracing interface so that another tool can take it
     * (pause, after pushing everything recorded so far), and takes it back
     * (resume). Each returns 0, or a negative gpufl_err with the reason in
     * err; a failed resume leaves the plugin paused, to be retried. Called
     * under the session's lifecycle lock, never concurrently with stop. */
    int (*pause)(char *err, size_t err_len);
    int (*resume)(char *err, size_t err_len);
    /* Optional: a scope of the calling thread begins (begin != 0) or ends
     * (name: its string id). Called on the program's thread right after
     * the scope's own record, only while the session's engine needs scope
     * boundaries on the device (range_profiler), and possibly once more
     * while stop() runs: the plugin serialises. */
    void (*scope)(int begin, uint64_t scope_id, uint32_t name);
} gpufl_plugin;

typedef const gpufl_plugin *(*gpufl_plugin_entry_fn)(void);

#endif /* GPUFL_CORE_PLUGIN_API_H */
