/*
 * The one table of options. Defaults, config-file keys, environment
 * variables, validation and the README table (`gpufl options --markdown`) all
 * come from here, so they cannot disagree.
 *
 * X(field, kind, default, default shown in docs, environment variable,
 *   minimum, maximum, description)
 *
 * kind: STRING, BOOL, U32 (plain integer), BYTES (u64, "64MiB" accepted),
 * BACKEND, ENGINE, LOG_FORMAT. Minimum and maximum apply to the integer kinds.
 */
#ifndef GPUFL_CORE_OPTIONS_TABLE_H
#define GPUFL_CORE_OPTIONS_TABLE_H

#define GFL_KiB 1024ull
#define GFL_MiB (1024ull * GFL_KiB)
#define GFL_GiB (1024ull * GFL_MiB)

// clang-format off
#define GPUFL_OPTION_TABLE(X)                                                                     \
    X(app_name, STRING, "gpufl", "`gpufl`", "GPUFL_APP_NAME", 0, 0,                               \
      "Name of the program; names the session and, when `log_path` is empty, the log directory.") \
    X(log_path, STRING, "", "`\"\"`", "GPUFL_LOG_PATH", 0, 0,                                     \
      "Directory that holds the session directories. Empty: a directory named after `app_name` "  \
      "in the working directory.")                                                                \
    X(backend_url, STRING, "", "`\"\"`", "GPUFL_BACKEND_URL", 0, 0,                               \
      "URL of a gpufl server, `http(s)://host[:port]`, for `gpufl_upload_logs()`, `gpufl upload` " \
      "and Python's `upload_logs()` (docs/UPLOAD.md); recording never uploads by itself.")        \
    X(api_key, STRING, "", "`\"\"`", "GPUFL_API_KEY", 0, 0,                                       \
      "Key for `backend_url`, sent as a bearer token. Never written to any file or message.")     \
    X(api_path, STRING, "", "`\"\"` (= `/api/v1`)", "GPUFL_API_PATH", 0, 0,                       \
      "Path of the upload API under `backend_url`.")                                              \
    X(remote_upload, BOOL, false, "`false`", "GPUFL_REMOTE_UPLOAD", 0, 0,                         \
      "Deprecated. Python's `init(remote_upload=True)` uploads the session at exit; in C and "     \
      "C++ it logs one warning and does nothing (call `gpufl_upload_logs()` after shutdown).")    \
    X(enable_stack_trace, BOOL, false, "`false`", "GPUFL_ENABLE_STACK_TRACE", 0, 0,               \
      "Capture the CPU call stack at kernel launches and syncs (Trace engine and up).")           \
    X(enable_source_collection, BOOL, true, "`true`", "GPUFL_ENABLE_SOURCE_COLLECTION", 0, 0,     \
      "Source lines for PC samples and SASS metrics (the modules' cubins are kept for their "     \
      "line info), and a copy of the source files they name in the session's `sources/` (1 MiB "  \
      "a file, 32 MiB in all), so that reports show each hot line's code. No SASS listing.")      \
    X(enable_external_correlation, BOOL, true, "`true`", "GPUFL_ENABLE_EXTERNAL_CORRELATION", 0,  \
      0, "Record the correlation ids frameworks push (PyTorch ops to their kernels).")            \
    X(enable_synchronization, BOOL, true, "`true`", "GPUFL_ENABLE_SYNCHRONIZATION", 0, 0,         \
      "Record stream, event and context synchronization (Trace engine and up).")                  \
    X(enable_memory_tracking, BOOL, false, "`false`", "GPUFL_ENABLE_MEMORY_TRACKING", 0, 0,       \
      "Record device memory allocations and frees.")                                              \
    X(enable_cuda_graphs_tracking, BOOL, false, "`false`", "GPUFL_ENABLE_CUDA_GRAPHS_TRACKING",   \
      0, 0, "Record CUDA graph launches and the kernels they run.")                               \
    X(system_sample_rate_ms, U32, 0, "`0` (off)", "GPUFL_SYSTEM_SAMPLE_RATE_MS", 0, 3600000,      \
      "Period of host and GPU metric sampling, ms. 0 turns sampling off.")                        \
    X(kernel_sample_rate_ms, U32, 0, "`0`", "GPUFL_KERNEL_SAMPLE_RATE_MS", 0, 3600000,            \
      "Deprecated: accepted, has no effect.")                                                     \
    X(continuous_system_sampling, BOOL, false, "`false`", "GPUFL_CONTINUOUS_SYSTEM_SAMPLING", 0,  \
      0,                                                                                          \
      "Sample from init to shutdown. Otherwise sample only while some thread is inside a scope "  \
      "or between `gpufl_system_start` and `gpufl_system_stop`.")                                \
    X(backend, BACKEND, GPUFL_BACKEND_AUTO, "`auto`", "GPUFL_BACKEND", 0, 0,                      \
      "GPU vendor: `auto`, `nvidia`, `amd` (not implemented yet: host metrics and scopes only) "  \
      "or `none`. `auto` records host metrics and scopes when there is no GPU.")                  \
    X(profiling_engine, ENGINE, GPUFL_ENGINE_MONITOR, "`monitor`", "GPUFL_PROFILING_ENGINE", 0,   \
      0,                                                                                          \
      "What to record: `monitor` (NVML, host metrics, scopes; never loads CUPTI), `trace` "       \
      "(kernels, copies, syncs, allocations, NVTX), `pc_sampling` (trace, and warp stall "        \
      "reasons by instruction and source line), `sass_metrics` (trace, and per-instruction "      \
      "counts: coalescing, active lanes; kernels instrumented and traced one at a time), "        \
      "`range_profiler` (trace, and hardware counters per scope: `range_profiler_metrics`), "     \
      "`deep` (pc_sampling and SASS metrics in one run, the SASS rows without source lines; "   \
      "`pc_sampling` when started after the first CUDA context).")                                \
    X(config_file, STRING, "", "`\"\"`", "GPUFL_CONFIG_FILE", 0, 0,                               \
      "JSON file whose keys are these option names; applied over the defaults and under the "    \
      "environment.")                                                                             \
    X(flush_logs_always, BOOL, false, "`false`", "GPUFL_FLUSH_LOGS_ALWAYS", 0, 0,                 \
      "Make every write durable at once (fdatasync), at the cost of disk bandwidth.")             \
    X(enable_debug_output, BOOL, false, "`false`", "GPUFL_ENABLE_DEBUG_OUTPUT", 0, 0,             \
      "Write debug lines to stderr.")                                                             \
    X(enabled, BOOL, true, "`true`", "GPUFL_DISABLED", 0, 0,                                      \
      "`false` makes `gpufl_init` return at once: no thread, no file, no vendor library. "        \
      "`GPUFL_DISABLED=1` (or true/yes/on) does the same and wins over everything.")              \
    X(log_rotate_bytes, BYTES, 64 * GFL_MiB, "`64MiB`", "GPUFL_LOG_ROTATE_BYTES", 64 * GFL_KiB,   \
      GFL_GiB * 1024, "Rotate a log file once it reaches this size.")                             \
    X(session_max_bytes, BYTES, 4 * GFL_GiB, "`4GiB`", "GPUFL_SESSION_MAX_BYTES", GFL_MiB,        \
      GFL_GiB * 1024 * 1024,                                                                      \
      "Stop writing once the session's logs reach this total; the reason is recorded.")           \
    X(min_free_bytes, BYTES, 512 * GFL_MiB, "`512MiB`", "GPUFL_MIN_FREE_BYTES", 0,                \
      GFL_GiB * 1024 * 1024,                                                                      \
      "Stop writing when the log file system has less free space than this.")                     \
    X(ring_events, U32, 8192, "`8192`", "GPUFL_RING_EVENTS", 16, 1u << 24,                        \
      "Scope events each recording thread can queue before new ones are dropped (and counted); " \
      "the ring holds this many 32-byte units, and a kernel or copy takes three or four.")         \
    X(device_plugin, STRING, "", "`\"\"`", "GPUFL_DEVICE_PLUGIN", 0, 0,                           \
      "Device plugin to load for engines above `monitor`. Empty: `libgpufl_cupti.so` beside "     \
      "libgpufl. Tests point it at the synthetic backend.")                                     \
    X(log_format, LOG_FORMAT, GPUFL_LOG_COMPACT, "`compact`", "GPUFL_LOG_FORMAT", 0, 0,         \
      "What to write: `compact` (every event in `trace.gflt`, the binary trace, and NDJSON "      \
      "`scope.log` and `system.log` for log shippers, no `device.log`), `ndjson` (the three "     \
      "`.log` files), `gflt` (`trace.gflt` only), `both` (`ndjson` and `gflt`) or `none` "        \
      "(only `session.json`, and the flight window's dumps). The default is `compact` because "   \
      "device work as NDJSON takes 630-700 bytes a kernel (over 200 GB an hour on a busy GPU) "   \
      "and `trace.gflt` about 10, so it can stay on for weeks. All files share the session's "    \
      "disk cap.")                                                                                \
    X(flight_window_s, U32, 0, "`0` (off)", "GPUFL_FLIGHT_WINDOW_S", 0, 86400,                   \
      "Keep the last this many seconds of every channel in memory, compact, and write them out "  \
      "as a dump when a trigger fires (`gpufl_dump`, the dump signal, a crash, out of memory, "   \
      "`dump_rules`). 0: no window.")                                                           \
    X(flight_window_bytes, BYTES, 256 * GFL_MiB, "`256MiB`", "GPUFL_FLIGHT_WINDOW_BYTES",        \
      GFL_MiB, 64 * GFL_GiB,                                                                      \
      "Most memory the flight window takes; the oldest events go first when it is full.")         \
    X(dump_signal, STRING, "SIGUSR2", "`SIGUSR2`", "GPUFL_DUMP_SIGNAL", 0, 0,                     \
      "Signal that dumps the flight window (`gpufl dump PID` sends it); `none`: no handler. Not " \
      "installed over a handler the program set.")                                              \
    X(dump_on_crash, BOOL, true, "`true`", "GPUFL_DUMP_ON_CRASH", 0, 0,                           \
      "Dump the flight window when the program gets a fatal signal.")                             \
    X(dump_on_oom, BOOL, true, "`true`", "GPUFL_DUMP_ON_OOM", 0, 0,                               \
      "Dump the flight window when a CUDA allocation fails for lack of memory (Trace engine).")   \
    X(dump_rules, STRING, "", "`\"\"`", "GPUFL_DUMP_RULES", 0, 0,                                 \
      "Rules that dump the flight window, comma-separated: `slow_scope=NAME:MS` (a scope longer " \
      "than MS), `device_memory_pct=P`, `temperature_c=C`, `power_w=W` (an NVML sample above).") \
    X(dump_max_count, U32, 10, "`10`", "GPUFL_DUMP_MAX_COUNT", 1, 100000,                         \
      "Dumps kept; the oldest is removed first.")                                                 \
    X(dump_max_bytes, BYTES, 4 * GFL_GiB, "`4GiB`", "GPUFL_DUMP_MAX_BYTES", GFL_MiB,              \
      GFL_GiB * 1024 * 1024, "Bytes all dumps may take; the oldest are removed first.")           \
    X(dump_min_interval_s, U32, 10, "`10`", "GPUFL_DUMP_MIN_INTERVAL_S", 0, 86400,                \
      "Seconds between two dumps: a trigger that fires sooner is recorded, not dumped.")          \
    X(trace_every_s, U32, 0, "`0` (off)", "GPUFL_TRACE_EVERY_S", 0, 86400,                        \
      "Trace engine and up: trace only in windows of `trace_for_s` every this many seconds, "     \
      "Monitor in between. 0: trace all the time (unless `trace_every_steps` is set).")           \
    X(trace_for_s, U32, 1, "`1`", "GPUFL_TRACE_FOR_S", 1, 86400,                                  \
      "Length of a trace window opened by `trace_every_s`, a trigger or the dump signal's twin.")  \
    X(trace_every_steps, U32, 0, "`0` (off)", "GPUFL_TRACE_EVERY_STEPS", 0, 100000000,            \
      "Trace `trace_steps` steps of every this many, counted on the scope `trace_step_scope`.")   \
    X(trace_steps, U32, 1, "`1`", "GPUFL_TRACE_STEPS", 1, 100000000,                              \
      "Steps traced in each window of `trace_every_steps`.")                                      \
    X(trace_step_scope, STRING, "step", "`step`", "GPUFL_TRACE_STEP_SCOPE", 0, 0,                 \
      "Name of the scope (or gpufl.torch step) whose begins count steps.")                        \
    X(trace_on_trigger, BOOL, false, "`false`", "GPUFL_TRACE_ON_TRIGGER", 0, 0,                   \
      "With trace windows: a trigger also opens a trace window of `trace_for_s`.")                \
    X(pc_sampling_period, U32, 19, "`19`", "GPUFL_PC_SAMPLING_PERIOD", 0, 31,                     \
      "PC sampling (engines `pc_sampling` and `deep`): the SMs sample their warps every 2^N "     \
      "cycles, N from 5 to 31; 0 lets CUPTI choose (2^11 on an H100, where a "                    \
      "memory-bound kernel then made samples faster than CUPTI decoded them and later kernels "  \
      "went unsampled). Longer periods cost less and sample less: ResNet-50 training on an H100 " \
      "ran 1.02-1.05x slower at 19 (medians of 3 benches, 14 runs; 4 runs 1.10-1.21x) and "       \
      "1.22-1.43x at 15 "                                                                          \
      "(bench/RESULTS.md).")                                                                       \
    X(pm_sampling_metrics, STRING, "", "`\"\"` (off)", "GPUFL_PM_SAMPLING_METRICS", 0, 0,            \
      "Trace engine and up: CUPTI metrics the GPU's performance monitor samples on "               \
      "every device, comma-separated, as `pm_sample` events on the session clock (counter tracks " \
      "in the exports); `default`: SM active, tensor pipe active, DRAM read and write bytes/s, "  \
      "PCIe read and write bytes/s. Sampling starts when the program has a CUDA context, after " \
      "about 1 s of set-up on an H100.")                                                          \
    X(pm_sampling_interval_us, U32, 1000, "`1000`", "GPUFL_PM_SAMPLING_INTERVAL_US", 1, 1000000,  \
      "Microseconds between two PM samples (`pm_sampling_metrics`), timed by the GPU. Each "      \
      "sample costs the decoding thread about 25 us (1 metric) to 94 us (6) on an H100: "         \
      "shorter intervals than that lose samples, and say so.")  \
    X(range_profiler_metrics, STRING, "default", "`default`", "GPUFL_RANGE_PROFILER_METRICS", 0, \
      0,                                                                                          \
      "Engine `range_profiler`: CUPTI metrics counted for each range (the GPU work of one "      \
      "scope), comma-separated; all must fit one pass, or the engine is refused. `default`: "     \
      "GPU time, DRAM bytes read and written, SM throughput, achieved occupancy, DRAM "           \
      "throughput, L2 and L1 hit rates, shared-memory bank conflicts, tensor pipe activity, as "  \
      "many as fit one pass on the chip.")                                                        \
    X(range_profiler_nvtx, BOOL, false, "`false`", "GPUFL_RANGE_PROFILER_NVTX", 0, 0,              \
      "Engine `range_profiler`: NVTX ranges of the profiled thread make ranges too, as scopes " \
      "do.")                                                                                      \
    X(metrics_listen, STRING, "", "`\"\"` (off)", "GPUFL_METRICS_LISTEN", 0, 0,                  \
      "Serve Prometheus metrics from inside the program at `ADDR:PORT`, `:PORT` (every "          \
      "address) or `[IPV6]:PORT`: the GPUs under dcgm-exporter's names and labels (read by the "  \
      "system sampler, every `system_sample_rate_ms` or every second when that is 0) and "        \
      "gpufl's own (scope durations, kernel time by scope, drops, bytes written, triggers). An "  \
      "address it cannot listen on is a warning; the session records anyway.")
// clang-format on

#endif /* GPUFL_CORE_OPTIONS_TABLE_H */
