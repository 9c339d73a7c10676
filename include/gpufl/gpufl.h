/*
 * gpufl: a flight recorder for GPU workloads. Public C API.
 *
 * A program calls gpufl_init() once, marks the phases it cares about with
 * scopes, and calls gpufl_shutdown() before it exits (a library destructor
 * does it otherwise). Everything recorded goes to
 *     <log_path>/<session_id>/{session.json,device.log,scope.log,system.log}
 *
 * Every function here may be called from any thread, before init, after
 * shutdown and while disabled: such calls are cheap no-ops. The library never
 * aborts, exits or writes to stdout; problems go to stderr (one line each,
 * prefixed "gpufl:"), into the session's system.log and, for the call that
 * failed, gpufl_last_error().
 */
#ifndef GPUFL_GPUFL_H
#define GPUFL_GPUFL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GPUFL_STATIC_DEFINE)
#define GPUFL_API
#else
#define GPUFL_API __attribute__((visibility("default")))
#endif

#define GPUFL_VERSION_MAJOR 0
#define GPUFL_VERSION_MINOR 1
#define GPUFL_VERSION_PATCH 0
#define GPUFL_VERSION_STRING "0.1.0"

/* Which GPU vendor to record. AUTO picks what the machine has and records
 * host metrics and scopes when it has no GPU. Values are append-only. */
typedef enum gpufl_backend {
    GPUFL_BACKEND_AUTO = 0,
    GPUFL_BACKEND_NVIDIA = 1,
    GPUFL_BACKEND_AMD = 2,
    GPUFL_BACKEND_NONE = 3
} gpufl_backend;

/* How much to record, cheapest first. MONITOR (NVML, host metrics, scopes)
 * never loads CUPTI; every later engine loads the CUPTI plugin. */
typedef enum gpufl_engine {
    GPUFL_ENGINE_MONITOR = 0,
    GPUFL_ENGINE_TRACE = 1,
    GPUFL_ENGINE_PC_SAMPLING = 2,
    GPUFL_ENGINE_SASS_METRICS = 3,
    GPUFL_ENGINE_RANGE_PROFILER = 4,
    GPUFL_ENGINE_DEEP = 5
} gpufl_engine;

/* Which files a session writes (docs/FORMAT.md). Values are append-only. */
typedef enum gpufl_log_format {
    GPUFL_LOG_NDJSON = 0, /* device.log, scope.log, system.log: text, one JSON object per line */
    GPUFL_LOG_GFLT = 1,   /* trace.gflt: binary, about 25 times smaller */
    GPUFL_LOG_BOTH = 2,   /* both, under one disk budget */
    GPUFL_LOG_NONE = 3,   /* no logs: session.json, and dumps of the flight window */
    GPUFL_LOG_COMPACT = 4 /* trace.gflt for everything, NDJSON for all but device work */
} gpufl_log_format;

/* Error codes returned by int-valued functions. Append-only. */
typedef enum gpufl_err {
    GPUFL_OK = 0,
    GPUFL_EINVAL = -1,       /* a bad argument or option value */
    GPUFL_ENOMEM = -2,       /* out of memory */
    GPUFL_EIO = -3,          /* a file could not be read or written */
    GPUFL_ESTATE = -4,       /* not valid in the current state (e.g. no session) */
    GPUFL_ENOTFOUND = -5,    /* a file, library or session does not exist */
    GPUFL_EUNSUPPORTED = -6, /* not available on this machine or build */
    GPUFL_ECONFIG = -7,      /* a config file or environment variable is invalid */
    GPUFL_ECORRUPT = -8      /* a file is damaged, or not in the format it claims */
} gpufl_err;

/*
 * Options. Always start from gpufl_options_init(), which fills in the
 * defaults and struct_size; then set what you need. Strings are copied by
 * gpufl_init(); NULL and "" both mean "use the default".
 *
 * Precedence, lowest first: built-in defaults, config_file (JSON), environment
 * variables (GPUFL_<FIELD NAME IN CAPITALS>), fields set in code (a field set
 * in code is one whose value differs from its default). GPUFL_DISABLED=1 and
 * enabled=false win over everything. README.md has the full table.
 *
 * New fields are only ever appended; struct_size tells the library which
 * fields the caller knows about.
 */
typedef struct gpufl_options {
    size_t struct_size;                 /* set by gpufl_options_init() */
    const char *app_name;               /* "gpufl"; names the session */
    const char *log_path;               /* "" = a directory named after app_name */
    const char *backend_url;            /* collector server URL for uploads */
    const char *api_key;                /* never written to any file */
    const char *api_path;               /* "" = "/api/v1" */
    bool remote_upload;                 /* deprecated, no effect */
    bool enable_stack_trace;            /* CPU stacks at launch and sync points */
    bool enable_source_collection;      /* true: source lines, and sources/ copies */
    bool enable_external_correlation;   /* true: framework correlation ids */
    bool enable_synchronization;        /* true: record syncs (Trace and up) */
    bool enable_memory_tracking;        /* record device allocations */
    bool enable_cuda_graphs_tracking;   /* record CUDA graph launches */
    uint32_t system_sample_rate_ms;     /* host/GPU metric period; 0 = off */
    uint32_t kernel_sample_rate_ms;     /* deprecated, no effect */
    bool continuous_system_sampling;    /* sample from init to shutdown, not
                                        only inside scopes and system windows */
    gpufl_backend backend;              /* AUTO */
    gpufl_engine profiling_engine;      /* MONITOR */
    const char *config_file;            /* JSON file of options, "" = none */
    bool flush_logs_always;             /* fdatasync every write */
    bool enable_debug_output;           /* debug lines on stderr */
    bool enabled;                       /* true; false makes every call a no-op */
    uint64_t log_rotate_bytes;          /* 64 MiB; rotate a log past this size */
    uint64_t session_max_bytes;         /* 4 GiB; stop writing past this total */
    uint64_t min_free_bytes;            /* 512 MiB; stop when the disk has less */
    uint32_t ring_events;               /* 8192; per-thread ring capacity, in scope events (32 bytes) */
    const char *device_plugin;          /* "" = libgpufl_cupti.so; for tests */
    gpufl_log_format log_format;        /* COMPACT */
    uint32_t flight_window_s;           /* 0 = no flight window */
    uint64_t flight_window_bytes;       /* 256 MiB: the window's memory */
    const char *dump_signal;            /* "SIGUSR2"; "none" = no handler */
    bool dump_on_crash;                 /* true: a fatal signal dumps the window */
    bool dump_on_oom;                   /* true: a CUDA out-of-memory dumps it */
    const char *dump_rules;             /* "slow_scope=step:500,device_memory_pct=95,..." */
    uint32_t dump_max_count;            /* 10 dumps kept */
    uint64_t dump_max_bytes;            /* 4 GiB for all dumps */
    uint32_t dump_min_interval_s;       /* 10 s between two dumps */
    uint32_t trace_every_s;             /* 0 = trace all the time */
    uint32_t trace_for_s;               /* 1 s trace windows */
    uint32_t trace_every_steps;         /* 0 = no step windows */
    uint32_t trace_steps;               /* 1 step per step window */
    const char *trace_step_scope;       /* "step": the scope that counts steps */
    bool trace_on_trigger;              /* a trigger also opens a trace window */
    uint32_t pc_sampling_period;        /* 15: 2^15 cycles between samples (5..31); 0 = CUPTI's choice */
    const char *pm_sampling_metrics;    /* "" = off; "default" or CUPTI metric names, comma-separated */
    uint32_t pm_sampling_interval_us;   /* 10 us between PM samples */
    const char *range_profiler_metrics; /* "default" or CUPTI metric names, comma-separated */
    bool range_profiler_nvtx;           /* NVTX ranges make range profiler ranges too */
    const char *metrics_listen;         /* "" = off; "127.0.0.1:9400", ":9400": Prometheus endpoint */
} gpufl_options;

/* Fills *opts with the defaults. */
GPUFL_API void gpufl_options_init(gpufl_options *opts);

/*
 * Options by name, for bindings that should not mirror the struct's layout
 * (the Python package): allocate gpufl_options_size() bytes (aligned like a
 * uint64_t), call gpufl_options_init() on them, then set options from text.
 *
 * gpufl_option_name(i) is the name of option i, in the order of the struct,
 * for i = 0, 1, ... until it returns NULL; names are the field names, the
 * keys of config files and, in capitals after GPUFL_, the environment
 * variables.
 *
 * gpufl_options_set() parses value exactly as the environment and config
 * files are parsed: booleans 1/0, true/false, yes/no, on/off; integers in
 * decimal, sizes also as 64KiB, 64M, 4GiB; engines, backends and log formats
 * by name, any case, with or without '_' ("trace", "PcSampling", "none").
 * A string option keeps the pointer, not a copy, like a field set in code:
 * value must stay valid until gpufl_init() has returned (which copies it).
 * value NULL puts the option back to its default. As for fields set in
 * code, a value equal to the default counts as not set, so the environment
 * and config file still apply to it.
 * Returns 0; GPUFL_EINVAL, opts unchanged, when there is no such option,
 * opts or name is NULL, opts->struct_size does not cover the option (not
 * set up with gpufl_options_init), or the value does not parse or is out of
 * range; gpufl_last_error() then names the option and says what is wrong.
 */
GPUFL_API size_t gpufl_options_size(void);
GPUFL_API const char *gpufl_option_name(size_t i);
GPUFL_API int gpufl_options_set(gpufl_options *opts, const char *name, const char *value)
    __attribute__((warn_unused_result));

/*
 * Starts a session. opts may be NULL for all defaults. Returns true when a
 * session is recording, when gpufl is disabled (nothing is started then), and
 * when a session is already running (the new options are ignored, so a
 * program run under `gpufl run` that also calls gpufl_init is recorded once;
 * with its own static libgpufl, whichever copy started first records, and
 * gpufl_is_recording() is false in the other).
 * Returns false when the options, config file or environment are invalid or
 * the log directory cannot be created; gpufl_last_error() says why and
 * nothing is left running.
 */
GPUFL_API bool gpufl_init(const gpufl_options *opts);

/* Ends the session: drains every event, closes the logs and finishes
 * session.json. Harmless without a session. */
GPUFL_API void gpufl_shutdown(void);

/* True while a session is recording. */
GPUFL_API bool gpufl_is_recording(void);

/* The message for the last failed call on this thread, or "". */
GPUFL_API const char *gpufl_last_error(void);

/* Directory of the current or last session, or "" if there was none. */
GPUFL_API const char *gpufl_session_dir(void);

/* The library version, e.g. "0.1.0". */
GPUFL_API const char *gpufl_version(void);

/*
 * Scopes mark logical phases ("epoch", "forward", "allreduce"). They nest per
 * thread; each carries the thread id, its depth and its parent. A scope costs
 * one timestamp and one small ring record to begin, the same to end.
 *
 * gpufl_scope_begin() returns a token for gpufl_scope_end(). Ending a scope
 * also ends any scope opened inside it and still open (they are marked
 * "implicit"); ending a token twice, or the 0 token returned while not
 * recording, does nothing.
 */
typedef uint64_t gpufl_scope;
GPUFL_API gpufl_scope gpufl_scope_begin(const char *name);
GPUFL_API void gpufl_scope_end(gpufl_scope scope);

/* gpufl_scope_begin() for a call site whose name never changes (a string
 * literal): *name_cache, a static 0 of that site, keeps the name's id after
 * the first call, so later calls skip the name lookup. The GFL_SCOPE macros
 * use it for literal names; a name_cache shared by two names gives the
 * second the first one's name. */
GPUFL_API gpufl_scope gpufl_scope_begin_cached(const char *name, uint32_t *name_cache);

/* Runs fn(arg) inside a scope called name. */
GPUFL_API void gpufl_monitor(const char *name, void (*fn)(void *arg), void *arg);

/*
 * System metric windows. Without continuous_system_sampling, metrics are
 * sampled only while some thread is inside a scope or between a start and
 * the matching stop. Windows are counted per name (NULL = "system"); a stop
 * without a matching start is ignored.
 */
GPUFL_API void gpufl_system_start(const char *name);
GPUFL_API void gpufl_system_stop(const char *name);

/*
 * Writes the text report of the current session, or of the last one when
 * none is running, to output_path (NULL or "" = <session dir>/summary.txt):
 * the same text as `gpufl report SESSION` (session, summary and findings,
 * scopes, hot kernels with their launch configurations, scopes and stack
 * ids, occupancy, copies, idle time, launches, memory). The session is read
 * back from its directory: for a running one, what was recorded until the
 * call is written out first (device work that CUPTI has not delivered yet
 * is not in it). The call costs about 30-40 bytes of memory per recorded
 * event while it runs. Any thread; prints nothing.
 *
 * Returns 0; GPUFL_ESTATE before any session (gpufl_init was never
 * called, or gpufl is disabled); GPUFL_EIO when output_path cannot be
 * written; the reader's error (GPUFL_ENOTFOUND, GPUFL_ECORRUPT, ...) when
 * the session cannot be read back; GPUFL_ENOMEM. gpufl_last_error() then
 * says what failed and names the file.
 */
GPUFL_API int gpufl_generate_report(const char *output_path);

/*
 * Hands CUPTI to another tool for a while, and takes it back. CUPTI serves
 * one client at a time (before CUPTI 13.2, or when the other tool does not
 * ask to share): while gpufl's Trace engine holds it, torch.profiler,
 * Nsight Systems attached later or any other CUPTI client gets nothing.
 * gpufl_trace_pause() writes out every device record gpufl holds and lets
 * go of CUPTI; start the other tool after it. gpufl_trace_resume(), after
 * the other tool has stopped, takes CUPTI back and records again. The
 * session's log says when the trace was paused and resumed: device work in
 * between is in the other tool's output, not in gpufl's.
 *
 *     gpufl_trace_pause();
 *     with torch.profiler.profile(...): ...     // or any CUPTI tool
 *     gpufl_trace_resume();
 *
 * Both return 0; GPUFL_ESTATE with no session, with no device tracing
 * running (engine monitor, or CUPTI could not start), on a pause while
 * paused or a resume while not paused; GPUFL_EUNSUPPORTED when the device
 * plugin cannot hand over; a resume that finds CUPTI still taken by the
 * other tool fails (GPUFL_EUNSUPPORTED) and leaves the trace paused, to be
 * resumed later. gpufl_last_error() says why. Any thread; they wait for a
 * concurrent gpufl_init or gpufl_shutdown. Scopes, NVTX ranges and metrics
 * go on being recorded while paused.
 */
GPUFL_API int gpufl_trace_pause(void);
GPUFL_API int gpufl_trace_resume(void);

/*
 * The flight window (flight_window_s > 0) keeps the last minutes of the
 * session in memory. gpufl_dump() writes it out now, as a session of its
 * own under <session dir>/dumps/ (trace.gflt and a session.json that names
 * the trigger: kind "dump", detail reason), and returns once it is on disk;
 * the program goes on. The same happens, without waiting, on the dump
 * signal (dump_signal, `gpufl dump PID`), a fatal signal, a CUDA
 * out-of-memory and the dump_rules; dump_max_count, dump_max_bytes and
 * dump_min_interval_s bound what is kept.
 *
 * Returns 0; GPUFL_ESTATE with no session or no flight window, or when the
 * last dump is younger than dump_min_interval_s (the trigger is recorded,
 * not dumped); GPUFL_EIO when the dump could not be written. reason may be
 * NULL. Any thread but not a signal handler; it waits for the collector.
 */
GPUFL_API int gpufl_dump(const char *reason);

/*
 * Opens a trace window now for `seconds` (Trace engine with trace windows,
 * trace_every_s or trace_every_steps): device activity is recorded until
 * then, Monitor only after. A window already open is extended. Returns 0;
 * GPUFL_ESTATE with no session, no device tracing, or the trace paused by
 * gpufl_trace_pause(); GPUFL_EINVAL for seconds <= 0.
 */
GPUFL_API int gpufl_trace_window(double seconds);

/* ---- Framework memory -------------------------------------------------
 *
 * A framework with its own caching allocator (PyTorch) hands tensors
 * blocks of memory it got from cudaMalloc and keeps freed blocks for
 * reuse, so the driver's allocations alone say neither what the program
 * uses nor what leaks. Its package (gpufl.memory) records the third layer
 * of memory with these; the memory analysis shows the three side by side.
 */
typedef struct gpufl_allocator_state {
    size_t struct_size; /* sizeof(gpufl_allocator_state): members are only appended */
    uint32_t device;
    const char *framework; /* "pytorch"; NULL: "framework" */
    const char *reason;    /* why now: "sample", "step", "scope", "oom", "snapshot"; NULL: "sample" */
    uint64_t allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes;
    uint64_t largest_free_bytes; /* the largest free block in the segments; 0 unknown */
    uint64_t peak_allocated_bytes, peak_reserved_bytes;
    uint64_t requested_bytes;   /* reason "oom": what was asked for */
    uint64_t device_free_bytes; /* the driver's free memory, when known; 0 unknown */
    uint32_t alloc_retries, ooms;
    uint64_t ts_ns; /* when the figures were taken (CLOCK_MONOTONIC); 0 = now. An OOM observer
                       that records blocks before its state gives the moment it was called */
} gpufl_allocator_state;

/* One frame of an interpreted program's stack (Python): innermost first. */
typedef struct gpufl_source_frame {
    const char *file;
    const char *function;
    uint32_t line;
} gpufl_source_frame;

/* Records the allocator's state now. Returns 0; GPUFL_ESTATE with no
 * session; GPUFL_EINVAL for a NULL or too small state. Any thread. */
GPUFL_API int gpufl_record_allocator(const gpufl_allocator_state *state);

/* Records that the framework's allocator handed out (is_free 0) or took
 * back (is_free 1) the block at address of `bytes` on device, for stream
 * (the framework's handle; 0 the default), at ts_ns (CLOCK_MONOTONIC; 0 =
 * now), allocated by the source stack frames[0..nframes) (NULL: none; at
 * most 64 frames are kept). Returns 0; GPUFL_ESTATE with no session;
 * GPUFL_EINVAL for a block at address 0. Any thread. */
GPUFL_API int gpufl_record_block(uint32_t device, uint64_t address, uint64_t bytes, int is_free, uint64_t stream,
                                 uint64_t ts_ns, const gpufl_source_frame *frames, size_t nframes);

/*
 * The framework's out-of-memory. A caching allocator (PyTorch's) that
 * finds no room empties its cache and tries cudaMalloc again, so a failed
 * cudaMalloc is not yet an out-of-memory; only the framework knows when it
 * gives up. While gpufl_set_framework_oom(1) is in force (process-wide;
 * gpufl.memory sets it when it attaches), a failed CUDA allocation is
 * still recorded (a failed allocation in the trace) but fires no "oom"
 * trigger, and the framework calls gpufl_report_oom when it raises its
 * out-of-memory error. gpufl_set_framework_oom(0) gives the decision back
 * to the CUDA hook (dump_on_oom). Returns 0. Any thread.
 *
 * gpufl_report_oom records a failed allocation of requested_bytes on
 * device (of the framework's layer, on the calling thread), then fires a
 * trigger of kind "oom" with detail (e.g. "torch: tried to allocate 20.00
 * GiB on GPU 0"; NULL: one is made up) and, like gpufl_dump(), returns
 * once the dump is written. What the calling thread recorded just before
 * (the allocator's state with reason "oom", the live blocks) is in it. The
 * dump holds oom.json, the diagnosis (docs/FORMAT.md): what was asked for,
 * what the device, the allocator and other processes held, the largest
 * live allocations, and whether it was real exhaustion, fragmentation or
 * another process. Returns 0; GPUFL_ESTATE with no session or no flight
 * window, when dump_on_oom is off, or when the last dump is younger than
 * dump_min_interval_s (the trigger is recorded, not dumped); GPUFL_EIO when
 * the dump could not be written. Any thread but not a signal handler.
 */
GPUFL_API int gpufl_set_framework_oom(int on);
GPUFL_API int gpufl_report_oom(uint32_t device, uint64_t requested_bytes, const char *detail);

/* ---- Uploading sessions ------------------------------------------------
 *
 * Sends recorded sessions to a server that speaks docs/UPLOAD.md (`gpufl
 * serve`, or any backend with that contract): each session's session.json,
 * then its events channel by channel, gzip NDJSON in batches, each event
 * with its place in its channel. A cursor in the session directory
 * (.gpufl-upload-cursor.json) remembers what the server acknowledged, so an
 * upload that is interrupted and started again sends each event once.
 * Uploading runs on the calling thread and never while this process
 * records: call it after gpufl_shutdown(), or use `gpufl upload`.
 *
 * HTTP is libcurl, loaded at run time (libcurl.so.4); gzip is zlib. TLS is
 * always verified. The API key is sent only in the Authorization header and
 * is never written to a message, a warning or a file.
 */
typedef struct gpufl_upload_options {
    size_t struct_size; /* set by gpufl_upload_options_init(); members are only appended */
    /* a session directory, a directory of sessions (a log_path) or a job
     * directory; NULL/"" = $GPUFL_LOG_PATH, else "gpufl" */
    const char *log_path;
    const char *backend_url;     /* http(s)://host[:port]; NULL/"" = $GPUFL_BACKEND_URL */
    const char *api_key;         /* NULL/"" = $GPUFL_API_KEY; required */
    const char *api_path;        /* NULL/"" = $GPUFL_API_PATH, else "/api/v1" */
    const char *ca_file;         /* PEM file of the CAs to verify the server with; NULL/"" = libcurl's default */
    const char *session_id;      /* only the session of this id; NULL/"" = see all_sessions */
    bool all_sessions;           /* every session under log_path; false: the newest one (or job) */
    bool force;                  /* ignore the cursors: send every event again (the server counts duplicates) */
    uint32_t total_timeout_ms;   /* 300000 (5 min) for the whole upload; 0 = no limit */
    uint32_t connect_timeout_ms; /* 10000 */
    uint32_t read_timeout_ms;    /* 30000: a request that receives nothing this long has failed */
    uint32_t max_retries;        /* 8 retries of a request after a transient failure (5xx, cut, timeout) */
    uint32_t retry_delay_ms;     /* 500: the first wait, doubled each retry, at most 30 s */
    uint32_t batch_events;       /* 10000 events a request at most */
    uint32_t batch_bytes;        /* 4 MiB of NDJSON (before gzip) a request at most */
    /* Called with each warning as it happens (any number; the result keeps
     * the first few). Never given the key. NULL = none. */
    void (*on_warning)(const char *message, void *arg);
    void *on_warning_arg;
} gpufl_upload_options;

#define GPUFL_UPLOAD_WARNINGS_KEPT 8
#define GPUFL_UPLOAD_WARNING_LEN 256

typedef struct gpufl_upload_result {
    size_t struct_size;          /* set by the caller to sizeof(gpufl_upload_result); members are only appended */
    bool success;                /* every session chosen was sent whole and acknowledged */
    uint32_t sessions_processed; /* sessions sent (also those with nothing new to send) */
    uint32_t sessions_failed;    /* sessions not sent whole */
    uint64_t events_uploaded;    /* events the server acknowledged in this call (accepted + duplicates) */
    uint64_t events_duplicate;   /* of those, events it already held (a batch whose answer was lost) */
    uint64_t events_rejected;    /* lines the server refused (each one also a warning) */
    uint64_t bytes_uploaded;     /* gzip bytes of the request bodies the server answered (retries included) */
    uint64_t elapsed_ms;
    uint32_t warning_count; /* every warning, also those not kept below */
    /* the first ones, each cut to GPUFL_UPLOAD_WARNING_LEN - 1 bytes */
    char warnings[GPUFL_UPLOAD_WARNINGS_KEPT][GPUFL_UPLOAD_WARNING_LEN];
} gpufl_upload_result;

/* Fills *opts with the defaults. */
GPUFL_API void gpufl_upload_options_init(gpufl_upload_options *opts);

/*
 * Uploads the sessions opts names (NULL: all defaults) and fills *result
 * (may be NULL; else its struct_size must be set). Returns 0 when every
 * session was sent; otherwise a negative gpufl_err, with result->success
 * false and gpufl_last_error() saying what failed (naming the session or
 * file): GPUFL_EINVAL (bad options: no backend_url or key, a URL that is
 * not http(s)), GPUFL_ESTATE (a session is recording in this process),
 * GPUFL_ENOTFOUND (no session at log_path, or none of session_id),
 * GPUFL_EUNSUPPORTED (libcurl.so.4 not installed, or the library was built
 * without curl/zlib headers), GPUFL_ECORRUPT (a session that cannot be read),
 * GPUFL_EIO (the server refused the key, went away past the retries, or
 * answered what the contract does not allow). With GPUFL_DISABLED set it
 * sends nothing and returns 0 with success true and 0 events.
 */
GPUFL_API int gpufl_upload_logs(const gpufl_upload_options *opts, gpufl_upload_result *result);

/*
 * NCCL collectives with their payload. gpufl's NCCL profiler plugin
 * (libgpufl_nccl.so, which `gpufl run` names in NCCL_PROFILER_PLUGIN)
 * calls this for every collective NCCL enqueues; any other communication
 * library may feed it the same way. Strings are copied (interned) before
 * it returns; NULL or "" leaves a name out. bytes is count times the size
 * of datatype when datatype is one of NCCL's names ("ncclFloat32",
 * "ncclBfloat16", ...), else unknown: nothing is guessed.
 */
typedef struct gpufl_nccl_collective {
    size_t struct_size;   /* sizeof(gpufl_nccl_collective): members are only appended */
    uint64_t start_ns;    /* CLOCK_MONOTONIC; 0 = now */
    uint64_t end_ns;      /* the library finished enqueuing it; 0 = unknown */
    uint64_t comm_hash;   /* the communicator, the same number on every rank of it */
    uint64_t seq;         /* the collective's number in its communicator */
    uint64_t count;       /* elements */
    const char *func;     /* "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Send", ... */
    const char *datatype; /* "ncclFloat32", ... */
    const char *algo;     /* "Ring", "Tree", ...; NULL = not known */
    const char *proto;    /* "Simple", "LL", "LL128"; NULL = not known */
    int32_t rank;         /* in the communicator; -1 = unknown */
    int32_t root;         /* root of a rooted collective, peer of Send/Recv; -1 = none */
    uint32_t nranks;      /* ranks in the communicator; 0 = unknown */
    uint32_t channels;    /* channels used; 0 = not known (values above 255 are kept as 255) */
    uint32_t device;      /* the CUDA device, when known */
    uint32_t abi;         /* the NCCL profiler interface version that delivered it; 0 = none */
    int is_p2p;           /* a point-to-point call (root is the peer) */
} gpufl_nccl_collective;

/* Records one collective. Returns 0; GPUFL_ESTATE with no session
 * (nothing recorded); GPUFL_EINVAL for NULL, a too small struct_size or
 * no func; GPUFL_ENOMEM when the calling thread's ring is full (the event
 * is counted lost). Any thread; no lock unless a name is new. */
GPUFL_API int gpufl_record_nccl_collective(const gpufl_nccl_collective *coll);

/* Bytes of one element of an NCCL datatype named as NCCL names them
 * ("ncclFloat32" 4, "ncclBfloat16" 2, "ncclInt8" 1, ...); 0 for NULL or a
 * name it does not know. */
GPUFL_API size_t gpufl_nccl_datatype_size(const char *datatype);

/* ---- Scope macros ------------------------------------------------------
 *
 *   GFL_SCOPE("forward") { ... }   the block is the scope; leaving it by any
 *                                   path (return, goto, break) ends it. Note
 *                                   that break and continue inside the block
 *                                   leave the block, not an enclosing loop.
 *   GFL_SCOPED("step");            a scope that ends with the enclosing block.
 */
typedef struct gpufl__scope_guard {
    gpufl_scope token;
    int live;
} gpufl__scope_guard;

static inline void gpufl__scope_guard_end(gpufl__scope_guard *guard) { gpufl_scope_end(guard->token); }

/* A literal name is interned once per call site (a static of the site, in a
 * statement expression so that it can live inside a for statement); any
 * other name, whose text may change between calls, on every call. */
#define GFL__SCOPE_BEGIN(name)                                                                                         \
    (__builtin_constant_p(name) ? gpufl_scope_begin_cached((name), __extension__({                                     \
                                                               static uint32_t gfl__site_;                             \
                                                               &gfl__site_;                                            \
                                                           }))                                                         \
                                : gpufl_scope_begin(name))

#define GFL__CAT2(a, b) a##b
#define GFL__CAT(a, b) GFL__CAT2(a, b)
#define GFL__SCOPE_FOR(name, guard)                                                                                    \
    for (gpufl__scope_guard guard __attribute__((cleanup(gpufl__scope_guard_end))) = {GFL__SCOPE_BEGIN(name), 1};      \
         guard.live; guard.live = 0)

#define GFL_SCOPED(name)                                                                                               \
    gpufl__scope_guard GFL__CAT(gfl__scoped_, __COUNTER__)                                                             \
        __attribute__((cleanup(gpufl__scope_guard_end), unused)) = {GFL__SCOPE_BEGIN(name), 1}

#ifndef GFL_SCOPE
#define GFL_SCOPE(name) GFL__SCOPE_FOR(name, GFL__CAT(gfl__scope_, __COUNTER__))
#endif

#ifdef __cplusplus
}
#endif

#endif /* GPUFL_GPUFL_H */
