/*
 * gpufl: C++17 wrapper over the C API in gpufl.h. Header only, no state of
 * its own beyond one thread-local error string; every call goes straight to
 * the C library, so C and C++ code in one program share one session.
 *
 *     gpufl::InitOptions opts;
 *     opts.app_name = "trainer";
 *     if (!gpufl::init(opts)) std::cerr << gpufl::lastError() << "\n";
 *     GFL_SCOPE("epoch") {
 *         for (auto& batch : batches) {
 *             gpufl::ScopedMonitor step{"step"};
 *             if (batch.empty()) break;          // leaves the for loop
 *             auto loss = gpufl::monitor("forward", [&] { return forward(batch); });
 *         }
 *     }
 *     gpufl::shutdown();
 *
 * Unlike the C macro, GFL_SCOPE here is an if-statement, so break and
 * continue inside its block act on the enclosing loop.
 *
 * Scopes belong to the thread that opened them: end (or destroy) a
 * ScopedMonitor on that thread. Ending it elsewhere is ignored, and the
 * scope is then closed when its parent ends or its thread exits.
 */
#ifndef GPUFL_GPUFL_HPP
#define GPUFL_GPUFL_HPP

/* Said here, because an older standard otherwise fails deep inside the
 * wrapper (std::string_view, if-with-initializer). MSVC reports its
 * standard in _MSVC_LANG. C++ code built as an older standard can call the
 * C API of gpufl.h directly. */
#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "gpufl.hpp needs C++17 or later (-std=c++17); gpufl.h serves older C++"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpufl/gpufl.h"
#include "gpufl/pm_sampling.h"

/* The C forms are replaced below. */
#undef GFL_SCOPE
#undef GFL_SCOPED

namespace gpufl
{

/* Same values as gpufl_backend / gpufl_engine (checked below). */
enum class BackendKind { Auto, Nvidia, Amd, None };
enum class ProfilingEngine { Monitor, Trace, PcSampling, SassMetrics, RangeProfiler, Deep };
/* Same values as gpufl_log_format. */
enum class LogFormat { Ndjson, Gflt, Both, None, Compact };

static_assert(static_cast<int>(BackendKind::None) == GPUFL_BACKEND_NONE &&
                  static_cast<int>(BackendKind::Amd) == GPUFL_BACKEND_AMD,
              "BackendKind mirrors gpufl_backend");
static_assert(static_cast<int>(ProfilingEngine::Deep) == GPUFL_ENGINE_DEEP &&
                  static_cast<int>(ProfilingEngine::PcSampling) == GPUFL_ENGINE_PC_SAMPLING,
              "ProfilingEngine mirrors gpufl_engine");
static_assert(static_cast<int>(LogFormat::Gflt) == GPUFL_LOG_GFLT &&
                  static_cast<int>(LogFormat::Both) == GPUFL_LOG_BOTH &&
                  static_cast<int>(LogFormat::None) == GPUFL_LOG_NONE &&
                  static_cast<int>(LogFormat::Compact) == GPUFL_LOG_COMPACT,
              "LogFormat mirrors gpufl_log_format");

/*
 * The options of gpufl_options, with the same defaults and meanings
 * (gpufl.h and README.md document each). Precedence is the C library's: a
 * field left at its default here can still be set by the config file or a
 * GPUFL_* environment variable. Empty strings mean "use the default".
 */
struct InitOptions {
    std::string app_name = "gpufl";
    std::string log_path;
    std::string backend_url;
    std::string api_key; /* never written to any file */
    std::string api_path;
    bool remote_upload = false; /* deprecated: only warns (call uploadLogs() after shutdown()) */
    bool enable_stack_trace = false;
    bool enable_source_collection = true;
    bool enable_external_correlation = true;
    bool enable_synchronization = true;
    bool enable_memory_tracking = false;
    bool enable_cuda_graphs_tracking = false;
    int system_sample_rate_ms = 0; /* >= 0; 0 = off */
    int kernel_sample_rate_ms = 0; /* >= 0; deprecated, no effect */
    bool continuous_system_sampling = false;
    BackendKind backend = BackendKind::Auto;
    ProfilingEngine profiling_engine = ProfilingEngine::Monitor;
    std::string config_file;
    bool flush_logs_always = false;
    bool enable_debug_output = false;
    bool enabled = true;
    /* The C API's additions. */
    std::uint64_t log_rotate_bytes = 64ull << 20;
    std::uint64_t session_max_bytes = 4ull << 30;
    std::uint64_t min_free_bytes = 512ull << 20;
    std::uint32_t ring_events = 8192;
    std::string device_plugin;
    LogFormat log_format = LogFormat::Compact;
};

namespace detail
{

/* Errors found by the wrapper itself, before the C library is called. */
inline std::string &wrapperError()
{
    static thread_local std::string error;
    return error;
}

/*
 * gpufl_options from InitOptions, starting from gpufl_options_init() so
 * fields added to the C struct later keep their defaults. The strings point
 * into `in`, which outlives the gpufl_init() call that copies them.
 * Returns false with a message in `why` for values C cannot represent.
 */
inline bool toC(const InitOptions &in, gpufl_options &out, std::string &why)
{
    if (in.system_sample_rate_ms < 0 || in.kernel_sample_rate_ms < 0) {
        why = "gpufl::init: ";
        why += in.system_sample_rate_ms < 0 ? "system_sample_rate_ms" : "kernel_sample_rate_ms";
        why += " is negative (";
        why += std::to_string(in.system_sample_rate_ms < 0 ? in.system_sample_rate_ms : in.kernel_sample_rate_ms);
        why += "); use 0 to turn it off";
        return false;
    }
    gpufl_options_init(&out);
    out.app_name = in.app_name.c_str();
    out.log_path = in.log_path.c_str();
    out.backend_url = in.backend_url.c_str();
    out.api_key = in.api_key.c_str();
    out.api_path = in.api_path.c_str();
    out.remote_upload = in.remote_upload;
    out.enable_stack_trace = in.enable_stack_trace;
    out.enable_source_collection = in.enable_source_collection;
    out.enable_external_correlation = in.enable_external_correlation;
    out.enable_synchronization = in.enable_synchronization;
    out.enable_memory_tracking = in.enable_memory_tracking;
    out.enable_cuda_graphs_tracking = in.enable_cuda_graphs_tracking;
    out.system_sample_rate_ms = static_cast<std::uint32_t>(in.system_sample_rate_ms);
    out.kernel_sample_rate_ms = static_cast<std::uint32_t>(in.kernel_sample_rate_ms);
    out.continuous_system_sampling = in.continuous_system_sampling;
    out.backend = static_cast<gpufl_backend>(in.backend);
    out.profiling_engine = static_cast<gpufl_engine>(in.profiling_engine);
    out.config_file = in.config_file.c_str();
    out.flush_logs_always = in.flush_logs_always;
    out.enable_debug_output = in.enable_debug_output;
    out.enabled = in.enabled;
    out.log_rotate_bytes = in.log_rotate_bytes;
    out.session_max_bytes = in.session_max_bytes;
    out.min_free_bytes = in.min_free_bytes;
    out.ring_events = in.ring_events;
    out.device_plugin = in.device_plugin.c_str();
    out.log_format = static_cast<gpufl_log_format>(in.log_format);
    return true;
}

} // namespace detail

/* Starts a session (see gpufl_init). False on invalid options, with
 * lastError() saying why; nothing is left running then. */
inline bool init(const InitOptions &options)
{
    detail::wrapperError().clear();
    gpufl_options c;
    if (!detail::toC(options, c, detail::wrapperError()))
        return false;
    return gpufl_init(&c);
}

inline void shutdown() { gpufl_shutdown(); }

inline bool isRecording() { return gpufl_is_recording(); }

/* The message of the last failed call of this thread, or "". */
inline std::string lastError()
{
    const std::string &own = detail::wrapperError();
    return own.empty() ? std::string(gpufl_last_error()) : own;
}

/* Directory of the current or last session, or "". */
inline std::string sessionDir() { return gpufl_session_dir(); }

/* Writes the text summary to path ("" = <session dir>/summary.txt). */
inline bool generateReport(const std::string &path = "")
{
    detail::wrapperError().clear();
    return gpufl_generate_report(path.empty() ? nullptr : path.c_str()) == 0;
}

/* Hands CUPTI to another tool and takes it back (gpufl_trace_pause /
 * gpufl_trace_resume in gpufl.h); false with lastError() saying why. */
inline bool tracePause()
{
    detail::wrapperError().clear();
    return gpufl_trace_pause() == 0;
}
inline bool traceResume()
{
    detail::wrapperError().clear();
    return gpufl_trace_resume() == 0;
}

/* Opens a trace window for `seconds` (gpufl_trace_window). */
inline bool traceWindow(double seconds)
{
    detail::wrapperError().clear();
    return gpufl_trace_window(seconds) == 0;
}

/* Writes the flight window out now and waits for it (gpufl_dump in
 * gpufl.h); false with lastError() saying why (no window, the storm gap). */
inline bool dump(const std::string &reason = "")
{
    detail::wrapperError().clear();
    return gpufl_dump(reason.empty() ? nullptr : reason.c_str()) == 0;
}

/* A framework's out-of-memory (gpufl_report_oom): the "oom" trigger, its
 * dump and oom.json; waits for them. False with lastError() saying why. */
inline bool reportOom(uint32_t device, uint64_t requestedBytes, const std::string &why = "")
{
    detail::wrapperError().clear();
    return gpufl_report_oom(device, requestedBytes, why.empty() ? nullptr : why.c_str()) == 0;
}

/*
 * Uploading sessions after the recording (gpufl_upload_logs in gpufl.h,
 * docs/UPLOAD.md). Same fields, defaults and meanings as
 * gpufl_upload_options; empty strings take the environment
 * (GPUFL_BACKEND_URL, GPUFL_API_KEY, GPUFL_API_PATH, GPUFL_LOG_PATH).
 */
struct UploadOptions {
    std::string log_path;
    std::string backend_url;
    std::string api_key; /* never written anywhere */
    std::string api_path;
    std::string ca_file;
    std::string session_id;
    bool all_sessions = false;
    bool force = false;
    std::uint32_t total_timeout_ms = 300000;
    std::uint32_t connect_timeout_ms = 10000;
    std::uint32_t read_timeout_ms = 30000;
    std::uint32_t max_retries = 8;
    std::uint32_t retry_delay_ms = 500;
};

struct UploadResult {
    bool success = false;
    std::uint32_t sessions_processed = 0, sessions_failed = 0;
    std::uint64_t events_uploaded = 0, events_duplicate = 0, events_rejected = 0;
    std::uint64_t bytes_uploaded = 0, elapsed_ms = 0;
    std::uint32_t warning_count = 0;   /* all of them; */
    std::vector<std::string> warnings; /* the first GPUFL_UPLOAD_WARNINGS_KEPT */
    std::string error;                 /* why, when success is false */
};

/* Uploads and returns what happened; never throws for a failed upload. */
inline UploadResult uploadLogs(const UploadOptions &in = UploadOptions())
{
    detail::wrapperError().clear();
    gpufl_upload_options o;
    gpufl_upload_options_init(&o);
    auto str = [](const std::string &s) { return s.empty() ? nullptr : s.c_str(); };
    o.log_path = str(in.log_path);
    o.backend_url = str(in.backend_url);
    o.api_key = str(in.api_key);
    o.api_path = str(in.api_path);
    o.ca_file = str(in.ca_file);
    o.session_id = str(in.session_id);
    o.all_sessions = in.all_sessions;
    o.force = in.force;
    o.total_timeout_ms = in.total_timeout_ms;
    o.connect_timeout_ms = in.connect_timeout_ms;
    o.read_timeout_ms = in.read_timeout_ms;
    o.max_retries = in.max_retries;
    o.retry_delay_ms = in.retry_delay_ms;
    gpufl_upload_result r;
    std::memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    int rc = gpufl_upload_logs(&o, &r);
    UploadResult out;
    out.success = rc == 0 && r.success;
    out.sessions_processed = r.sessions_processed;
    out.sessions_failed = r.sessions_failed;
    out.events_uploaded = r.events_uploaded;
    out.events_duplicate = r.events_duplicate;
    out.events_rejected = r.events_rejected;
    out.bytes_uploaded = r.bytes_uploaded;
    out.elapsed_ms = r.elapsed_ms;
    out.warning_count = r.warning_count;
    for (std::uint32_t i = 0; i < r.warning_count && i < GPUFL_UPLOAD_WARNINGS_KEPT; i++)
        out.warnings.emplace_back(r.warnings[i]);
    if (rc != 0)
        out.error = gpufl_last_error();
    return out;
}

inline void systemStart(const std::string &name = "system") { gpufl_system_start(name.c_str()); }
inline void systemStop(const std::string &name = "system") { gpufl_system_stop(name.c_str()); }

/*
 * A scope that ends when the object is destroyed, or earlier with end().
 * Movable (the moved-from object ends nothing), not copyable.
 *
 * The optional tag is appended to the name as "name [tag]", so scopes of one
 * name can be told apart by tag in reports (an empty tag adds nothing).
 */
class ScopedMonitor
{
  public:
    explicit ScopedMonitor(const char *name) : token_(gpufl_scope_begin(name)) {}
    /* name_cache: see gpufl_scope_begin_cached (nullptr: none) */
    ScopedMonitor(const char *name, std::uint32_t *name_cache)
        : token_(name_cache ? gpufl_scope_begin_cached(name, name_cache) : gpufl_scope_begin(name))
    {
    }
    ScopedMonitor(std::string_view name, std::uint32_t *) : token_(begin(name, {})) {}
    explicit ScopedMonitor(std::string_view name) : token_(begin(name, {})) {}
    ScopedMonitor(std::string_view name, std::string_view tag) : token_(begin(name, tag)) {}

    ScopedMonitor(const ScopedMonitor &) = delete;
    ScopedMonitor &operator=(const ScopedMonitor &) = delete;
    ScopedMonitor(ScopedMonitor &&other) noexcept : token_(std::exchange(other.token_, 0)) {}
    /* Ends this scope, then takes over other's. Scopes nest: if other was
     * opened inside this one, ending this one has ended it too. */
    ScopedMonitor &operator=(ScopedMonitor &&other) noexcept
    {
        if (this != &other) {
            end();
            token_ = std::exchange(other.token_, 0);
        }
        return *this;
    }
    ~ScopedMonitor() { end(); }

    /* Ends the scope now (and any scope opened inside it); later calls and
     * the destructor do nothing. */
    void end() noexcept { gpufl_scope_end(std::exchange(token_, 0)); }

    /* 0 when not recording (or the scope was refused, or has ended). */
    gpufl_scope token() const noexcept { return token_; }

  private:
    static gpufl_scope begin(std::string_view name, std::string_view tag)
    {
        /* The C API takes a NUL-terminated name; most fit on the stack. */
        char small[256];
        const std::size_t extra = tag.empty() ? 0 : tag.size() + 3; /* " [" tag "]" */
        if (name.size() + extra < sizeof small) {
            std::memcpy(small, name.data(), name.size());
            char *p = small + name.size();
            if (extra) {
                *p++ = ' ';
                *p++ = '[';
                std::memcpy(p, tag.data(), tag.size());
                p += tag.size();
                *p++ = ']';
            }
            *p = '\0';
            return gpufl_scope_begin(small);
        }
        std::string full(name);
        if (extra)
            full.append(" [").append(tag).append("]");
        return gpufl_scope_begin(full.c_str());
    }

    gpufl_scope token_;
};

/* Calls f() inside a scope called name and returns what f returns (void
 * included); the scope ends even when f throws. */
template <class F> decltype(auto) monitor(const char *name, F &&f)
{
    ScopedMonitor guard{name};
    return std::forward<F>(f)();
}

/* PM sampling (gpufl/pm_sampling.h) with ownership: a PmCollector frees
 * its collector (stopping and disabling what is on) when it goes, a
 * PmCounterData its decoded samples. Calls return gpufl_pm_status values
 * as the C functions do; error() says what failed. */
class PmCounterData
{
  public:
    PmCounterData() = default;
    explicit PmCounterData(gpufl_pm_counter_data *d) noexcept : d_(d) {}
    PmCounterData(const PmCounterData &) = delete;
    PmCounterData &operator=(const PmCounterData &) = delete;
    PmCounterData(PmCounterData &&o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
    PmCounterData &operator=(PmCounterData &&o) noexcept
    {
        if (this != &o) {
            gpufl_pm_counter_data_free(d_);
            d_ = std::exchange(o.d_, nullptr);
        }
        return *this;
    }
    ~PmCounterData() { gpufl_pm_counter_data_free(d_); }

    /* The C struct (metrics, chip_name, num_*_samples, ...); null before a decode. */
    const gpufl_pm_counter_data *get() const noexcept { return d_; }
    std::size_t size() const noexcept { return d_ ? static_cast<std::size_t>(d_->num_samples) : 0; }
    /* Sample i's value of metric m (in the configured order). */
    double value(std::size_t i, std::size_t m) const noexcept { return d_->values[i * d_->num_metrics + m]; }

  private:
    gpufl_pm_counter_data *d_ = nullptr;
};

class PmCollector
{
  public:
    explicit PmCollector(int device = 0) noexcept { created_ = gpufl_pm_collector_create(device, &c_); }
    PmCollector(const PmCollector &) = delete;
    PmCollector &operator=(const PmCollector &) = delete;
    PmCollector(PmCollector &&o) noexcept : c_(std::exchange(o.c_, nullptr)), created_(o.created_) {}
    PmCollector &operator=(PmCollector &&o) noexcept
    {
        if (this != &o) {
            gpufl_pm_collector_destroy(c_);
            c_ = std::exchange(o.c_, nullptr);
            created_ = o.created_;
        }
        return *this;
    }
    ~PmCollector() { gpufl_pm_collector_destroy(c_); }

    /* What gpufl_pm_collector_create said: 0, or why every call will fail. */
    int created() const noexcept { return created_; }
    int enable() noexcept { return gpufl_pm_enable(c_); }
    int configure(const gpufl_pm_config &cfg) noexcept { return gpufl_pm_configure(c_, &cfg); }
    /* configure() with gpufl_pm_config_init()'s defaults but the metrics. */
    int configure(const char *const *metrics, std::size_t n) noexcept
    {
        gpufl_pm_config cfg;
        gpufl_pm_config_init(&cfg);
        cfg.metrics = metrics;
        cfg.num_metrics = n;
        return gpufl_pm_configure(c_, &cfg);
    }
    int start() noexcept { return gpufl_pm_start(c_); }
    int stop() noexcept { return gpufl_pm_stop(c_); }
    int decode(PmCounterData &out, std::uint32_t max_samples = GPUFL_PM_DEFAULT_MAX_SAMPLES) noexcept
    {
        gpufl_pm_counter_data *d = nullptr;
        int rc = gpufl_pm_decode(c_, max_samples, &d);
        out = PmCounterData(d);
        return rc;
    }
    int disable() noexcept { return gpufl_pm_disable(c_); }
    std::string_view error() const noexcept { return gpufl_pm_last_error(c_); }

  private:
    gpufl_pm_collector *c_ = nullptr;
    int created_ = 0;
};

} // namespace gpufl

/*
 *   GFL_SCOPE("forward") { ... }   the block is the scope; break and continue
 *                                   inside it act on the enclosing loop.
 *   GFL_SCOPED("step");            a scope that ends with the enclosing block.
 *
 * The if/else form keeps a following `else` of the caller bound to the
 * caller's own `if`. A literal name is interned once per call site (the
 * lambda's static: each expansion is its own lambda), any other on every
 * call.
 */
#define GFL__SCOPE_SITE(name)                                                                                          \
    (__builtin_constant_p(name) ? []() -> std::uint32_t * {                                                          \
        static std::uint32_t site;                                                                                     \
        return &site;                                                                                                  \
    }()                                                                                                                \
                                : nullptr)
#define GFL_SCOPE(name)                                                                                                \
    if (::gpufl::ScopedMonitor GFL__CAT(gfl__scope_, __COUNTER__){name, GFL__SCOPE_SITE(name)}; false) {               \
    } else
#define GFL_SCOPED(name)                                                                                               \
    ::gpufl::ScopedMonitor GFL__CAT(gfl__scoped_, __COUNTER__) { name, GFL__SCOPE_SITE(name) }

#endif /* GPUFL_GPUFL_HPP */
