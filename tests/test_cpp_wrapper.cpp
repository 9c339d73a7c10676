/*
 * The C++17 wrapper (include/gpufl/gpufl.hpp): it must compile cleanly with
 * -Wall -Wextra -Werror, carry every InitOptions field into the C options
 * (checked in session.json), keep the C defaults, and give the C++ API its
 * promised behaviour: RAII scopes that nest and move, monitor() returning
 * what the callable returns and ending its scope when it throws, a
 * GFL_SCOPE whose break/continue act on the enclosing loop, system windows,
 * reports, and lastError() for options the wrapper or the library reject.
 * Results are read back from the NDJSON logs.
 *
 * Plain checks rather than cmocka: cmocka's longjmp would skip destructors.
 * Every failed check is printed; the exit code is the number of failures.
 */
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpufl/gpufl.hpp"

extern "C" {
#include "test_util.h"
}

static int failures;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                              \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

static_assert(!std::is_copy_constructible_v<gpufl::ScopedMonitor>, "not copyable");
static_assert(!std::is_copy_assignable_v<gpufl::ScopedMonitor>, "not copyable");
static_assert(std::is_nothrow_move_constructible_v<gpufl::ScopedMonitor>, "movable");
static_assert(std::is_nothrow_move_assignable_v<gpufl::ScopedMonitor>, "movable");
struct ReturnsVoid {
    void operator()() const {}
};
struct ReturnsInt {
    int operator()() const { return 1; }
};
struct ReturnsRef {
    int &operator()() const;
};
static_assert(std::is_same_v<decltype(gpufl::monitor("n", ReturnsVoid{})), void>, "void passes through");
static_assert(std::is_same_v<decltype(gpufl::monitor("n", ReturnsInt{})), int>, "values pass through");
static_assert(std::is_same_v<decltype(gpufl::monitor("n", ReturnsRef{})), int &>, "references too");

static std::string tmp_root;

static std::string fresh_dir(const char *name) { return tmp_root + "/" + name; }

/* The one scope/system log of the last session, parsed. */
struct Log {
    tu_ndjson f{};
    explicit Log(const char *channel)
    {
        if (tu_ndjson_load_channel(gpufl::sessionDir().c_str(), channel, &f) != 0) {
            std::fprintf(stderr, "cannot load %s.log of %s\n", channel, gpufl::sessionDir().c_str());
            failures++;
        }
    }
    ~Log() { tu_ndjson_free(&f); }
    Log(const Log &) = delete;
    Log &operator=(const Log &) = delete;

    size_t count(const char *type, const std::string &name) const
    {
        size_t n = 0;
        for (size_t i = 0; i < f.n; i++) {
            const char *t = json_string_value(json_object_get(f.lines[i], "type"));
            const char *nm = json_string_value(json_object_get(f.lines[i], "name"));
            n += t && nm && !std::strcmp(t, type) && name == nm;
        }
        return n;
    }
    /* The first line of type with this name, or NULL. */
    json_t *find(const char *type, const std::string &name) const
    {
        for (size_t i = 0; i < f.n; i++) {
            const char *t = json_string_value(json_object_get(f.lines[i], "type"));
            const char *nm = json_string_value(json_object_get(f.lines[i], "name"));
            if (t && nm && !std::strcmp(t, type) && name == nm)
                return f.lines[i];
        }
        return nullptr;
    }
    long long depth(const std::string &name) const
    {
        json_t *b = find("scope_begin", name);
        return b ? json_integer_value(json_object_get(b, "depth")) : -1;
    }
    /* Opened and closed n times, never implicitly. */
    bool pairs(const std::string &name, size_t n = 1) const
    {
        if (count("scope_begin", name) != n || count("scope_end", name) != n) {
            std::fprintf(stderr, "scope \"%s\": %zu begin, %zu end; expected %zu each\n", name.c_str(),
                         count("scope_begin", name), count("scope_end", name), n);
            return false;
        }
        for (size_t i = 0; i < f.n; i++) {
            const char *t = json_string_value(json_object_get(f.lines[i], "type"));
            const char *nm = json_string_value(json_object_get(f.lines[i], "name"));
            if (t && nm && !std::strcmp(t, "scope_end") && name == nm &&
                json_is_true(json_object_get(f.lines[i], "implicit")))
                return false;
        }
        return true;
    }
};

static gpufl::InitOptions base_options(const char *dir)
{
    gpufl::InitOptions o;
    o.app_name = "cpp-wrapper";
    o.log_path = fresh_dir(dir);
    return o;
}

/* ---- options ---------------------------------------------------------------- */

static void test_defaults_match_c()
{
    gpufl_options c;
    gpufl_options_init(&c);
    gpufl::InitOptions o;
    CHECK(o.app_name == c.app_name);
    CHECK(o.log_path == c.log_path && o.backend_url == c.backend_url);
    CHECK(o.api_key == c.api_key && o.api_path == c.api_path);
    CHECK(o.config_file == c.config_file && o.device_plugin == c.device_plugin);
    CHECK(o.remote_upload == c.remote_upload);
    CHECK(o.enable_stack_trace == c.enable_stack_trace);
    CHECK(o.enable_source_collection == c.enable_source_collection);
    CHECK(o.enable_external_correlation == c.enable_external_correlation);
    CHECK(o.enable_synchronization == c.enable_synchronization);
    CHECK(o.enable_memory_tracking == c.enable_memory_tracking);
    CHECK(o.enable_cuda_graphs_tracking == c.enable_cuda_graphs_tracking);
    CHECK(o.system_sample_rate_ms == static_cast<int>(c.system_sample_rate_ms));
    CHECK(o.kernel_sample_rate_ms == static_cast<int>(c.kernel_sample_rate_ms));
    CHECK(o.continuous_system_sampling == c.continuous_system_sampling);
    CHECK(static_cast<int>(o.backend) == c.backend);
    CHECK(static_cast<int>(o.profiling_engine) == c.profiling_engine);
    CHECK(o.flush_logs_always == c.flush_logs_always);
    CHECK(o.enable_debug_output == c.enable_debug_output);
    CHECK(o.enabled == c.enabled);
    CHECK(o.log_rotate_bytes == c.log_rotate_bytes);
    CHECK(o.session_max_bytes == c.session_max_bytes);
    CHECK(o.min_free_bytes == c.min_free_bytes);
    CHECK(o.ring_events == c.ring_events);
}

/* Every field set away from its default reaches the session. */
static void test_every_field_reaches_c()
{
    std::string config = fresh_dir("empty.json");
    tu_write_file(config.c_str(), "{}");
    gpufl::InitOptions o = base_options("fields");
    o.app_name = "cpp-fields";
    o.backend_url = "http://collector.invalid";
    o.api_key = "cpp-secret-key";
    o.api_path = "/cpp/api";
    o.remote_upload = true;
    o.enable_stack_trace = true;
    o.enable_source_collection = false;
    o.enable_external_correlation = false;
    o.enable_synchronization = false;
    o.enable_memory_tracking = true;
    o.enable_cuda_graphs_tracking = true;
    o.system_sample_rate_ms = 50;
    o.kernel_sample_rate_ms = 7;
    o.continuous_system_sampling = true;
    o.backend = gpufl::BackendKind::None; /* so no device plugin is loaded */
    o.profiling_engine = gpufl::ProfilingEngine::RangeProfiler;
    o.config_file = config;
    o.flush_logs_always = true;
    o.enable_debug_output = true;
    o.log_rotate_bytes = 1ull << 20;
    o.session_max_bytes = 2ull << 30;
    o.min_free_bytes = 0;
    o.ring_events = 512;
    o.device_plugin = "/nonexistent/libplugin.so";
    CHECK(gpufl::init(o));
    std::string dir = gpufl::sessionDir();
    gpufl::shutdown();

    json_error_t err;
    json_t *sj = json_load_file((dir + "/session.json").c_str(), 0, &err);
    CHECK(sj != nullptr);
    if (!sj)
        return;
    json_t *opts = json_object_get(sj, "options");
    auto str = [&](const char *k) {
        const char *v = json_string_value(json_object_get(opts, k));
        return std::string(v ? v : "(missing)");
    };
    auto num = [&](const char *k) { return json_integer_value(json_object_get(opts, k)); };
    auto flag = [&](const char *k) { return json_is_true(json_object_get(opts, k)); };
    CHECK(str("app_name") == "cpp-fields");
    CHECK(str("log_path") == o.log_path);
    CHECK(str("backend_url") == "http://collector.invalid");
    CHECK(flag("api_key_set"));
    CHECK(str("api_path") == "/cpp/api");
    CHECK(flag("remote_upload"));
    CHECK(flag("enable_stack_trace"));
    CHECK(!flag("enable_source_collection"));
    CHECK(!flag("enable_external_correlation"));
    CHECK(!flag("enable_synchronization"));
    CHECK(flag("enable_memory_tracking"));
    CHECK(flag("enable_cuda_graphs_tracking"));
    CHECK(num("system_sample_rate_ms") == 50);
    CHECK(num("kernel_sample_rate_ms") == 7);
    CHECK(flag("continuous_system_sampling"));
    CHECK(str("backend") == "none");
    CHECK(str("profiling_engine") == "range_profiler");
    CHECK(str("config_file") == config);
    CHECK(flag("flush_logs_always"));
    CHECK(flag("enable_debug_output"));
    CHECK(flag("enabled"));
    CHECK(num("log_rotate_bytes") == 1 << 20);
    CHECK(num("session_max_bytes") == 2ll << 30);
    CHECK(num("min_free_bytes") == 0);
    CHECK(num("ring_events") == 512);
    CHECK(str("device_plugin") == "/nonexistent/libplugin.so");
    json_decref(sj);
}

static void test_last_error()
{
    gpufl::InitOptions o = base_options("errors");
    o.system_sample_rate_ms = -1;
    CHECK(!gpufl::init(o));
    CHECK(!gpufl::isRecording());
    CHECK(gpufl::lastError().find("system_sample_rate_ms") != std::string::npos);
    CHECK(!tu_exists(o.log_path.c_str()));

    o.system_sample_rate_ms = 0;
    o.kernel_sample_rate_ms = -5;
    CHECK(!gpufl::init(o));
    CHECK(gpufl::lastError().find("kernel_sample_rate_ms") != std::string::npos);

    /* Rejected by the C library: its message comes through. */
    o.kernel_sample_rate_ms = 0;
    o.ring_events = 1;
    CHECK(!gpufl::init(o));
    CHECK(gpufl::lastError().find("ring_events") != std::string::npos);
    o.ring_events = 8192;
    o.config_file = fresh_dir("no-such-config.json");
    CHECK(!gpufl::init(o));
    CHECK(gpufl::lastError().find("no-such-config.json") != std::string::npos);
    CHECK(!tu_exists(o.log_path.c_str()));

    /* A good init clears it. */
    o.config_file.clear();
    CHECK(gpufl::init(o));
    CHECK(gpufl::lastError().empty());
    CHECK(gpufl::isRecording());
    /* a framework's OOM needs a flight window: refused, and said why */
    CHECK(!gpufl::reportOom(0, 1u << 30, "c++: tried to allocate 1 GiB"));
    CHECK(gpufl::lastError().find("flight window") != std::string::npos);
    gpufl::shutdown();
    CHECK(!gpufl::isRecording());

    /* disabled: init succeeds and records nothing */
    gpufl::InitOptions off = base_options("disabled");
    off.enabled = false;
    CHECK(gpufl::init(off));
    CHECK(!gpufl::isRecording());
    CHECK(!tu_exists(off.log_path.c_str()));
}

/* ---- scopes ------------------------------------------------------------------ */

static int scoped_return(bool early)
{
    GFL_SCOPED("cpp-scoped-fn");
    if (early)
        return 1;
    gpufl::ScopedMonitor child{"cpp-scoped-fn-child"};
    return 2;
}

static void test_scopes()
{
    CHECK(gpufl::init(base_options("scopes")));
    CHECK(gpufl::isRecording());
    CHECK(!gpufl::sessionDir().empty());
    {
        gpufl::ScopedMonitor outer{"cpp-outer"};
        CHECK(outer.token() != 0);
        {
            gpufl::ScopedMonitor inner{std::string("cpp-inner")};
            gpufl::ScopedMonitor view{std::string_view("cpp-view-xyz").substr(0, 10)};
        }
        gpufl::ScopedMonitor tagged{"cpp-tagged", "gpu0"};
        tagged.end();
        CHECK(tagged.token() == 0);
        tagged.end(); /* harmless */
        gpufl::ScopedMonitor untagged{"cpp-untagged", ""};
        std::string long_name(300, 'n');
        gpufl::ScopedMonitor big{long_name, "t"};
    }
    /* Moves: the scope ends once, where the last owner dies. */
    {
        gpufl::ScopedMonitor a{"cpp-moved"};
        gpufl::ScopedMonitor b{std::move(a)};
        CHECK(a.token() == 0);
        CHECK(b.token() != 0);
        std::vector<gpufl::ScopedMonitor> held;
        held.push_back(std::move(b));
        gpufl::ScopedMonitor x{"cpp-assign-first"};
        x.end();
        x = gpufl::ScopedMonitor{"cpp-assign-second"};
        CHECK(x.token() != 0);
    }
    GFL_SCOPE("cpp-block") { gpufl::ScopedMonitor child{"cpp-block-child"}; }
    {
        GFL_SCOPED("cpp-scoped-block");
        gpufl::ScopedMonitor child{"cpp-scoped-block-child"};
    }
    CHECK(scoped_return(true) == 1);
    CHECK(scoped_return(false) == 2);
    std::string dynamic = "cpp-dynamic";
    GFL_SCOPE(dynamic) {}
    gpufl::ScopedMonitor last{"cpp-last"};
    last.end();
    gpufl::shutdown();

    Log log("scope");
    for (const char *name :
         {"cpp-outer", "cpp-inner", "cpp-view-x", "cpp-tagged [gpu0]", "cpp-untagged", "cpp-moved", "cpp-assign-first",
          "cpp-assign-second", "cpp-block", "cpp-block-child", "cpp-scoped-block", "cpp-scoped-block-child",
          "cpp-scoped-fn-child", "cpp-dynamic", "cpp-last"})
        CHECK(log.pairs(name));
    CHECK(log.pairs(std::string(300, 'n') + " [t]"));
    CHECK(log.pairs("cpp-scoped-fn", 2));
    CHECK(log.count("scope_begin", "cpp-view-xyz") == 0);
    CHECK(log.depth("cpp-outer") == 0);
    CHECK(log.depth("cpp-inner") == 1);
    CHECK(log.depth("cpp-view-x") == 2);
    CHECK(log.depth("cpp-tagged [gpu0]") == 1);
    CHECK(log.depth("cpp-assign-second") == 1); /* inside cpp-moved, still held */
    CHECK(log.depth("cpp-block-child") == 1);
    CHECK(log.depth("cpp-scoped-block-child") == 1);
    CHECK(log.depth("cpp-scoped-fn-child") == 1);
    CHECK(log.depth("cpp-dynamic") == 0);
    CHECK(log.depth("cpp-last") == 0);
}

static void test_scope_macro_and_loops()
{
    CHECK(gpufl::init(base_options("loops")));
    int iterations = 0;
    for (int i = 0; i < 5; i++) {
        GFL_SCOPE("cpp-loop-break")
        {
            iterations++;
            if (i == 1)
                break; /* leaves the for loop */
        }
    }
    CHECK(iterations == 2);

    int bodies = 0;
    for (int i = 0; i < 3; i++) {
        GFL_SCOPE("cpp-loop-continue")
        {
            if (i == 0)
                continue; /* next iteration of the for loop */
            bodies++;
        }
    }
    CHECK(bodies == 2);

    int n = 0;
    while (true) {
        GFL_SCOPE("cpp-while") { break; }
        n = 100; /* not reached */
    }
    CHECK(n == 0);

    /* A caller's else stays with the caller's if. */
    int which = 0;
    bool flag = false;
    if (flag)
        GFL_SCOPE("cpp-if-true") { which = 1; }
    else
        which = 2;
    CHECK(which == 2);
    flag = true;
    if (flag)
        GFL_SCOPE("cpp-if-taken") { which = 3; }
    else
        which = 4;
    CHECK(which == 3);
    gpufl::shutdown();

    Log log("scope");
    CHECK(log.pairs("cpp-loop-break", 2));
    CHECK(log.pairs("cpp-loop-continue", 3));
    CHECK(log.pairs("cpp-while"));
    CHECK(log.count("scope_begin", "cpp-if-true") == 0);
    CHECK(log.pairs("cpp-if-taken"));
}

static void test_monitor()
{
    CHECK(gpufl::init(base_options("monitor")));
    int value = gpufl::monitor("cpp-value", [] { return 42; });
    CHECK(value == 42);

    int target = 5;
    int &ref = gpufl::monitor("cpp-ref", [&]() -> int & { return target; });
    CHECK(&ref == &target);

    std::unique_ptr<int> owned = gpufl::monitor("cpp-unique", [] { return std::make_unique<int>(9); });
    CHECK(owned && *owned == 9);

    int calls = 0;
    gpufl::monitor("cpp-void", [&] { calls++; });
    CHECK(calls == 1);

    /* The scope is open while f runs. */
    long long inside = gpufl::monitor("cpp-nesting", [] {
        gpufl::ScopedMonitor child{"cpp-nesting-child"};
        return 1LL;
    });
    CHECK(inside == 1);

    bool caught = false;
    try {
        gpufl::monitor("cpp-throw", []() -> int { throw std::runtime_error("boom"); });
    } catch (const std::runtime_error &e) {
        caught = std::strcmp(e.what(), "boom") == 0;
    }
    CHECK(caught);
    gpufl::ScopedMonitor after{"cpp-after-throw"};
    after.end();
    gpufl::shutdown();

    Log log("scope");
    for (const char *name : {"cpp-value", "cpp-ref", "cpp-unique", "cpp-void", "cpp-nesting", "cpp-nesting-child",
                             "cpp-throw", "cpp-after-throw"})
        CHECK(log.pairs(name));
    CHECK(log.depth("cpp-nesting-child") == 1);
    CHECK(log.depth("cpp-after-throw") == 0); /* cpp-throw did end */
}

/* ---- system windows and reports ----------------------------------------------- */

static void test_system_and_report()
{
    CHECK(gpufl::init(base_options("system")));
    gpufl::systemStart("cpp-window");
    gpufl::systemStart();
    gpufl::systemStop();
    gpufl::systemStop("cpp-window");
    {
        gpufl::ScopedMonitor s{"cpp-reported"};
    }
    /* While recording, a report is a snapshot of what the collector has
     * seen so far (it may lag the last few events); after shutdown it is
     * the whole session. */
    std::string report = fresh_dir("report.txt");
    CHECK(gpufl::generateReport(report));
    std::string id = gpufl::sessionDir().substr(gpufl::sessionDir().rfind('/') + 1);
    gpufl::shutdown();
    CHECK(gpufl::generateReport());

    char *text = tu_read_file(report.c_str(), nullptr);
    CHECK(text != nullptr && std::strstr(text, id.c_str()) != nullptr);
    std::free(text);
    text = tu_read_file((gpufl::sessionDir() + "/summary.txt").c_str(), nullptr);
    CHECK(text != nullptr && std::strstr(text, "cpp-reported") != nullptr);
    std::free(text);
    CHECK(!gpufl::generateReport(fresh_dir("no/such/dir/report.txt")));
    CHECK(gpufl::lastError().find("no/such/dir") != std::string::npos);

    Log log("system");
    CHECK(log.count("system_start", "cpp-window") == 1);
    CHECK(log.count("system_stop", "cpp-window") == 1);
    CHECK(log.count("system_start", "system") == 1);
    CHECK(log.count("system_stop", "system") == 1);
}

/* The PM sampling classes own what they hold and pass the C calls' answers
 * through: here, with no device plugin, every call says the library is
 * missing and names the file it tried. */
static_assert(!std::is_copy_constructible_v<gpufl::PmCollector>, "not copyable");
static_assert(std::is_nothrow_move_constructible_v<gpufl::PmCollector>, "movable");
static_assert(!std::is_copy_constructible_v<gpufl::PmCounterData>, "not copyable");
static_assert(std::is_nothrow_move_assignable_v<gpufl::PmCounterData>, "movable");

static void test_pm_without_plugin()
{
    tu_setenv("GPUFL_DEVICE_PLUGIN", "/nonexistent/libgpufl_cupti.so");
    gpufl::PmCollector c(0);
    CHECK(c.created() == GPUFL_PM_E_LIBRARY_NOT_LOADED);
    CHECK(c.enable() == GPUFL_PM_E_LIBRARY_NOT_LOADED);
    CHECK(c.error().find("/nonexistent/libgpufl_cupti.so") != std::string_view::npos);
    gpufl::PmCollector moved = std::move(c);
    gpufl::PmCounterData d;
    CHECK(moved.decode(d) == GPUFL_PM_E_LIBRARY_NOT_LOADED);
    CHECK(d.size() == 0 && d.get() == nullptr);
    tu_unsetenv("GPUFL_DEVICE_PLUGIN");
}

/* uploadLogs() carries its options to the C call and the result back:
 * GPUFL_DISABLED is success with nothing sent; a server that is not there
 * is a failure that says which address, with the retries as warnings. */
static void test_upload()
{
    tu_setenv("GPUFL_DISABLED", "1");
    gpufl::UploadResult r = gpufl::uploadLogs();
    CHECK(r.success && r.events_uploaded == 0 && r.error.empty());
    tu_unsetenv("GPUFL_DISABLED");
    gpufl::InitOptions io;
    io.log_path = fresh_dir("upload");
    CHECK(gpufl::init(io));
    gpufl::shutdown();
    gpufl::UploadOptions o;
    o.log_path = gpufl::sessionDir();
    o.backend_url = "http://127.0.0.1:1";
    o.api_key = "k";
    o.max_retries = 1;
    o.retry_delay_ms = 1;
    r = gpufl::uploadLogs(o);
    CHECK(!r.success);
    CHECK(r.error.find("127.0.0.1:1") != std::string::npos);
    CHECK(r.warning_count == 2 && r.warnings.size() == 2); /* the retry, then the failure */
    o.backend_url.clear();
    tu_unsetenv("GPUFL_BACKEND_URL");
    r = gpufl::uploadLogs(o);
    CHECK(!r.success && r.error.find("backend_url") != std::string::npos);
}

int main()
{
    tu_unsetenv("GPUFL_DISABLED");
    tu_unsetenv("GPUFL_CONFIG_FILE");
    char *tmp = tu_mkdtemp("cpp");
    tmp_root = tmp;

    test_defaults_match_c();
    test_every_field_reaches_c();
    test_last_error();
    test_scopes();
    test_scope_macro_and_loops();
    test_monitor();
    test_system_and_report();
    test_pm_without_plugin();
    test_upload();

    gpufl::shutdown();
    tu_rm_rf(tmp);
    std::free(tmp);
    if (failures)
        std::fprintf(stderr, "test_cpp_wrapper: %d check(s) failed\n", failures);
    else
        std::printf("test_cpp_wrapper: all checks passed\n");
    return failures ? 1 : 0;
}
