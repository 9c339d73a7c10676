/*
 * The device pipeline without a GPU, through the synthetic plugin
 * (src/backend/synthetic/synthetic.c): dlopen, the plugin ABI, push() from
 * the plugin's own threads into per-thread rings, the collector, the NDJSON
 * writer and the session summary.
 *
 * Why: on a machine without CUDA this is the only way to check that every
 * device event reaches device.log / system.log intact. Every field of the
 * plugin's event i is a formula of i, so each line is checked exactly
 * against that formula (a copy of kernel_of(), copy_of() and friends), and
 * the malformed events the plugin adds must be rejected and counted, never
 * written. The other cases check when the plugin must NOT be loaded
 * (Monitor engine, backend none) and that a missing plugin is a logged
 * downgrade to Monitor, not a failure.
 *
 * Order matters: the plugin is never unloaded once loaded, so the cases that
 * check "not loaded" (tu_mapped) run before the one that loads it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "session/plugin.h"
#include "test_util.h"

#define SCRIPT                                                                                                         \
    "kernels=1000,copies=200,memsets=20,syncs=20,allocs=20,metrics=10,devices=2,streams=4,"                            \
    "threads=2,bad=7,pace=1"
#define N_KERNELS 1000
#define N_COPIES 200
#define N_SMALL 20 /* memsets, syncs, allocs */
#define N_METRICS 10
#define N_DEVICES 2
#define N_STREAMS 4
#define N_BAD 7

/* As in synthetic.c. */
static const char *const kernel_names[] = {
    "ampere_sgemm_128x64_nn",
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"),
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
    "nccl:all_reduce \"ring\" \\ step\t2 \xce\xbb",
};
static const char *const limiter_names[] = {"unknown", "warps", "registers", "shared_memory", "blocks"};
static const char *const sync_names[] = {"unknown", "event", "stream_wait_event", "stream", "context"};

/* The current case's log_path, removed by the teardown when a failed
 * assertion skipped the case's own cleanup. */
static char *current_log_path;

static char *new_log_path(const char *tag)
{
    current_log_path = tu_mkdtemp(tag);
    return current_log_path;
}

static void remove_log_path(char *log_path)
{
    tu_rm_rf(log_path);
    free(log_path);
    current_log_path = NULL;
}

static int cleanup(void **state)
{
    (void)state;
    gpufl_shutdown();
    unsetenv("GPUFL_SYNTHETIC");
    if (current_log_path)
        remove_log_path(current_log_path);
    return 0;
}

/* ---- reading back ----------------------------------------------------------- */

static const char *type_of(json_t *line) { return json_string_value(json_object_get(line, "type")); }

static void check_dims(json_t *line, const char *key, long long x, long long y, long long z)
{
    json_t *a = json_object_get(line, key);
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), 3);
    assert_int_equal(json_integer_value(json_array_get(a, 0)), x);
    assert_int_equal(json_integer_value(json_array_get(a, 1)), y);
    assert_int_equal(json_integer_value(json_array_get(a, 2)), z);
}

/* start/end/dur of an interval line, start relative to the plugin's base */
static void check_interval(json_t *line, uint64_t base, uint64_t offset, uint64_t dur)
{
    assert_int_equal(tu_int(line, "start_ns"), base + offset);
    assert_int_equal(tu_int(line, "end_ns"), base + offset + dur);
    assert_int_equal(tu_int(line, "dur_ns"), dur);
}

static void load_log(const char *dir, const char *base, tu_ndjson *f)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.log", dir, base);
    assert_int_equal(tu_ndjson_load(path, f), 0);
    assert_int_equal(f->tail_bytes, 0);
    assert_true(f->n >= 2);
    assert_string_equal(type_of(f->lines[0]), "session_start");
    assert_string_equal(type_of(f->lines[f->n - 1]), "session_end");
    assert_int_equal(tu_int(f->lines[f->n - 1], "lost"), 0);
}

/* Lines that are events, not the file's own header/trailer. */
static size_t event_lines(const tu_ndjson *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++) {
        const char *t = type_of(f->lines[i]);
        /* the session's own lines, and which engine recorded (test_engine_choice.c) */
        n += strcmp(t, "session_start") && strcmp(t, "session_end") && strcmp(t, "log_stopped") && strcmp(t, "engine");
    }
    return n;
}

/* ---- the full pipeline ------------------------------------------------------ */

static void check_kernels(const tu_ndjson *dev, uint64_t base)
{
    assert_int_equal(tu_count_type(dev, "kernel"), N_KERNELS);
    json_t *by_corr[N_KERNELS] = {0};
    for (size_t k = 0; k < N_KERNELS; k++) {
        json_t *line = tu_nth_type(dev, "kernel", k);
        long long corr = tu_int(line, "corr");
        assert_in_range(corr, 1, N_KERNELS);
        assert_null(by_corr[corr - 1]); /* each once: the bad copies were not written */
        by_corr[corr - 1] = line;
    }
    uint64_t last_start[N_DEVICES][N_STREAMS + 1] = {{0}};
    for (unsigned i = 0; i < N_KERNELS; i++) {
        json_t *k = by_corr[i];
        check_interval(k, base, (uint64_t)i * 10000, 1000 + (i % 7) * 500);
        assert_string_equal(tu_str(k, "name"), kernel_names[i % 4]);
        assert_int_equal(tu_int(k, "device"), i % N_DEVICES);
        assert_int_equal(tu_int(k, "context"), 1);
        assert_int_equal(tu_int(k, "stream"), 1 + i % N_STREAMS);
        check_dims(k, "grid", 1 + i % 7, 1 + i % 3, 1);
        check_dims(k, "block", 32 * (1 + i % 8), 1, 1);
        assert_int_equal(tu_int(k, "regs"), 16 + (i % 5) * 8);
        assert_int_equal(tu_int(k, "smem_static"), (i % 4) * 1024);
        assert_int_equal(tu_int(k, "smem_dynamic"), (i % 2) * 2048);
        assert_int_equal(tu_int(k, "local_mem"), 0);
        json_t *occ = json_object_get(k, "occupancy");
        assert_true(json_is_number(occ));
        double diff = json_number_value(occ) - 0.25 * (1 + i % 4);
        assert_true(diff > -1e-9 && diff < 1e-9);
        assert_string_equal(tu_str(k, "limiter"), limiter_names[1 + i % 4]);
        if (i % 3 == 0)
            assert_int_equal(tu_int(k, "ext_id"), 1000 + i);
        else
            assert_null(json_object_get(k, "ext_id"));
        assert_true(tu_int(k, "tid") > 0); /* the generator thread's */
        assert_null(json_object_get(k, "scope"));
        assert_null(json_object_get(k, "mangled"));
        assert_null(json_object_get(k, "stack"));
        assert_int_equal(json_object_size(k), i % 3 == 0 ? 19 : 18);
        /* per (device, stream), start times follow corr */
        uint64_t start = (uint64_t)tu_int(k, "start_ns");
        uint64_t *last = &last_start[i % N_DEVICES][1 + i % N_STREAMS];
        assert_true(start > *last);
        *last = start;
    }
}

static void check_copies(const tu_ndjson *dev, uint64_t base)
{
    static const char *const kinds[] = {"HtoD", "DtoH", "DtoD"};
    static const char *const src[] = {"pinned", "device", "device"};
    static const char *const dst[] = {"device", "pageable", "device"};
    assert_int_equal(tu_count_type(dev, "memcpy"), N_COPIES);
    bool seen[N_COPIES] = {0};
    for (size_t k = 0; k < N_COPIES; k++) {
        json_t *m = tu_nth_type(dev, "memcpy", k);
        long long i = tu_int(m, "corr") - 1000000;
        assert_in_range(i, 0, N_COPIES - 1);
        assert_false(seen[i]);
        seen[i] = true;
        check_interval(m, base, (uint64_t)i * 10000 + 5000, 2000);
        assert_int_equal(tu_int(m, "device"), i % N_DEVICES);
        assert_int_equal(tu_int(m, "context"), 1);
        assert_int_equal(tu_int(m, "stream"), 1 + i % N_STREAMS);
        assert_string_equal(tu_str(m, "kind"), kinds[i % 3]);
        assert_string_equal(tu_str(m, "src_kind"), src[i % 3]);
        assert_string_equal(tu_str(m, "dst_kind"), dst[i % 3]);
        assert_int_equal(tu_int(m, "bytes"), 4096ll << (i % 8));
        assert_null(json_object_get(m, "dst_device"));
    }
}

static void check_memsets_syncs(const tu_ndjson *dev, uint64_t base)
{
    assert_int_equal(tu_count_type(dev, "memset"), N_SMALL);
    assert_int_equal(tu_count_type(dev, "sync"), N_SMALL);
    bool seen_set[N_SMALL] = {0}, seen_sync[N_SMALL] = {0};
    for (size_t k = 0; k < N_SMALL; k++) {
        json_t *m = tu_nth_type(dev, "memset", k);
        long long i = tu_int(m, "corr") - 2000000;
        assert_in_range(i, 0, N_SMALL - 1);
        assert_false(seen_set[i]);
        seen_set[i] = true;
        check_interval(m, base, (uint64_t)i * 10000 + 7000, 300);
        assert_int_equal(tu_int(m, "bytes"), 1024 * (i + 1));
        assert_int_equal(tu_int(m, "value"), i % 256);
        assert_string_equal(tu_str(m, "mem_kind"), "device");
        assert_int_equal(tu_int(m, "stream"), 1);
        assert_int_equal(tu_int(m, "device"), 0);

        json_t *s = tu_nth_type(dev, "sync", k);
        i = tu_int(s, "corr") - 3000000;
        assert_in_range(i, 0, N_SMALL - 1);
        assert_false(seen_sync[i]);
        seen_sync[i] = true;
        check_interval(s, base, (uint64_t)i * 10000 + 8000, 900);
        assert_int_equal(tu_int(s, "stream"), 1 + i % N_STREAMS);
        assert_string_equal(tu_str(s, "kind"), sync_names[1 + i % 4]);
    }
}

static void check_memory(const tu_ndjson *dev, uint64_t base)
{
    const char *types[] = {"mem_alloc", "mem_free"};
    for (int t = 0; t < 2; t++) {
        assert_int_equal(tu_count_type(dev, types[t]), N_SMALL);
        bool seen[N_SMALL] = {0};
        for (size_t k = 0; k < N_SMALL; k++) {
            json_t *m = tu_nth_type(dev, types[t], k);
            long long i = tu_int(m, "corr") - 4000000;
            assert_in_range(i, 0, N_SMALL - 1);
            assert_false(seen[i]);
            seen[i] = true;
            assert_int_equal(tu_int(m, "ts_ns"), base + (uint64_t)i * 10000 + 9000 + (t ? 500 : 0));
            char address[32];
            snprintf(address, sizeof address, "0x%llx", 0x7f0000000000ull + (unsigned long long)i * 0x100000);
            assert_string_equal(tu_str(m, "address"), address);
            assert_int_equal(tu_int(m, "bytes"), 1ll << (20 + i % 4));
            assert_string_equal(tu_str(m, "kind"), "device");
        }
    }
}

static void check_device_metrics(const tu_ndjson *sys, uint64_t base)
{
    assert_int_equal(tu_count_type(sys, "device_metrics"), N_METRICS * N_DEVICES);
    bool seen[N_METRICS][N_DEVICES] = {{0}};
    for (size_t k = 0; k < N_METRICS * N_DEVICES; k++) {
        json_t *m = tu_nth_type(sys, "device_metrics", k);
        long long d = tu_int(m, "device");
        long long ts = tu_int(m, "ts_ns") - (long long)base;
        assert_in_range(d, 0, N_DEVICES - 1);
        assert_true(ts >= 0 && ts % 1000000 == 0);
        long long s = ts / 1000000;
        assert_in_range(s, 0, N_METRICS - 1);
        assert_false(seen[s][d]);
        seen[s][d] = true;
        assert_int_equal(tu_int(m, "gpu_util_pct"), s * 10 % 101);
        assert_int_equal(tu_int(m, "mem_util_pct"), s * 5 % 101);
        assert_int_equal(tu_int(m, "mem_used_bytes"), (1ll << 30) * (s + 1));
        assert_int_equal(tu_int(m, "mem_total_bytes"), 141ll << 30);
        assert_int_equal(tu_int(m, "proc_mem_bytes"), (1ll << 29) * (s + 1));
        assert_int_equal(tu_int(m, "temp_c"), 40 + s);
        assert_int_equal(tu_int(m, "power_mw"), 100000 + s * 1000);
        assert_int_equal(tu_int(m, "power_limit_mw"), 700000);
        assert_int_equal(tu_int(m, "energy_mj"), 5000000 + s * 100000);
        assert_int_equal(tu_int(m, "sm_clock_mhz"), 1980);
        assert_int_equal(tu_int(m, "mem_clock_mhz"), 2619);
        assert_int_equal(tu_int(m, "gfx_clock_mhz"), 1980);
        assert_int_equal(tu_int(m, "throttle_mask"), s % 2 ? 4 : 1);
        json_t *throttle = json_object_get(m, "throttle");
        assert_true(json_is_array(throttle));
        assert_int_equal(json_array_size(throttle), 1);
        assert_string_equal(json_string_value(json_array_get(throttle, 0)), s % 2 ? "sw_power_cap" : "gpu_idle");
        assert_int_equal(tu_int(m, "pcie_rx_kbps"), 1000 * s);
        assert_int_equal(tu_int(m, "pcie_tx_kbps"), 2000 * s);
        assert_int_equal(tu_int(m, "ecc_corrected"), 0);
        assert_int_equal(tu_int(m, "ecc_uncorrected"), 0);
        /* not valid in the script: left out, not written as 0 */
        assert_null(json_object_get(m, "fan_pct"));
        assert_null(json_object_get(m, "mem_temp_c"));
    }
}

static void check_summary(const char *dir)
{
    json_t *session = tu_session_json(dir);
    assert_string_equal(tu_str(session, "status"), "ended");
    json_t *summary = json_object_get(session, "summary");
    json_t *events = json_object_get(summary, "events");
    assert_int_equal(tu_int(events, "kernel"), N_KERNELS);
    assert_int_equal(tu_int(events, "memcpy"), N_COPIES);
    assert_int_equal(tu_int(events, "memset"), N_SMALL);
    assert_int_equal(tu_int(events, "sync"), N_SMALL);
    assert_int_equal(tu_int(events, "mem_alloc"), N_SMALL);
    assert_int_equal(tu_int(events, "mem_free"), N_SMALL);
    assert_int_equal(tu_int(events, "device_metrics"), N_METRICS * N_DEVICES);
    json_t *dropped = json_object_get(summary, "dropped");
    assert_int_equal(tu_int(dropped, "bad_event"), N_BAD);
    assert_int_equal(tu_int(dropped, "ring_full"), 0);
    json_t *kernels = json_object_get(summary, "kernels");
    assert_true(json_is_array(kernels));
    assert_int_equal(json_array_size(kernels), 4);
    bool named[4] = {0};
    for (size_t k = 0; k < 4; k++) {
        json_t *e = json_array_get(kernels, k);
        const char *name = tu_str(e, "name");
        int which = -1;
        for (int n = 0; n < 4; n++)
            if (!strcmp(name, kernel_names[n]))
                which = n;
        assert_true(which >= 0);
        assert_false(named[which]);
        named[which] = true;
        assert_int_equal(tu_int(e, "count"), N_KERNELS / 4);
    }
    json_decref(session);
}

static void test_device_pipeline(void **state)
{
    (void)state;
    char *log_path = new_log_path("synthetic");
    tu_setenv("GPUFL_SYNTHETIC", SCRIPT);
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o.app_name = "synthetic";
    o.log_path = log_path;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    assert_true(gpufl_init(&o));
    assert_true(tu_mapped("libgpufl_synthetic"));
    assert_non_null(gpufl__plugin_name());
    assert_string_equal(gpufl__plugin_name(), "synthetic");
    gpufl_shutdown(); /* joins the generators, then drains */
    assert_null(gpufl__plugin_name());
    tu_unsetenv("GPUFL_SYNTHETIC");
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);

    tu_ndjson dev, sys;
    load_log(dir, "device", &dev);
    load_log(dir, "system", &sys);
    /* the plugin's events start 1 ms after the session (see generator()) */
    uint64_t base = (uint64_t)tu_int(dev.lines[0], "ts_ns") + 1000000;

    check_kernels(&dev, base);
    check_copies(&dev, base);
    check_memsets_syncs(&dev, base);
    check_memory(&dev, base);
    check_device_metrics(&sys, base);
    assert_int_equal(tu_count_type(&dev, "device_metrics"), 0);
    assert_int_equal(tu_count_type(&sys, "kernel"), 0);

    /* the 7 bad kernels: not written, counted */
    size_t ndropped = tu_count_type(&dev, "dropped");
    assert_true(ndropped >= 1);
    long long bad = 0;
    for (size_t k = 0; k < ndropped; k++) {
        json_t *d = tu_nth_type(&dev, "dropped", k);
        assert_string_equal(tu_str(d, "reason"), "bad_event");
        assert_string_equal(tu_str(d, "channel"), "device");
        bad += tu_int(d, "count");
    }
    assert_int_equal(bad, N_BAD);
    /* nothing else in device.log */
    assert_int_equal(event_lines(&dev), N_KERNELS + N_COPIES + 4 * N_SMALL + ndropped);

    check_summary(dir);
    tu_ndjson_free(&dev);
    tu_ndjson_free(&sys);
    remove_log_path(log_path);
    free(dir);
}

/* ---- when the plugin is not used ------------------------------------------ */

/* Runs a session with one scope; returns its directory (malloc'd). */
static char *run_scoped_session(gpufl_options *o, const char *log_path, bool expect_loaded)
{
    assert_true(gpufl_init(o));
    assert_true(gpufl_is_recording());
    assert_int_equal(tu_mapped("libgpufl_synthetic"), expect_loaded);
    assert_null(gpufl__plugin_name());
    gpufl_scope s = gpufl_scope_begin("synthetic.host_only");
    assert_int_not_equal(s, 0);
    gpufl_scope_end(s);
    gpufl_shutdown();
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);

    tu_ndjson f;
    load_log(dir, "scope", &f);
    assert_int_equal(tu_count_type(&f, "scope_begin"), 1);
    assert_int_equal(tu_count_type(&f, "scope_end"), 1);
    assert_string_equal(tu_str(tu_nth_type(&f, "scope_end", 0), "name"), "synthetic.host_only");
    tu_ndjson_free(&f);
    load_log(dir, "device", &f);
    assert_int_equal(event_lines(&f), 0);             /* no device event of any kind */
    assert_int_equal(tu_count_type(&f, "engine"), 1); /* but the engine that recorded */
    assert_string_equal(tu_str(tu_nth_type(&f, "engine", 0), "engine"), "monitor");
    tu_ndjson_free(&f);
    return dir;
}

/* The warn lines of system.log whose message contains needle. */
static size_t warnings_with(const char *dir, const char *needle)
{
    tu_ndjson sys;
    load_log(dir, "system", &sys);
    size_t n = 0;
    for (size_t k = 0; k < tu_count_type(&sys, "log"); k++) {
        json_t *line = tu_nth_type(&sys, "log", k);
        if (!strcmp(tu_str(line, "level"), "warn") && strstr(tu_str(line, "message"), needle))
            n++;
    }
    tu_ndjson_free(&sys);
    return n;
}

static void test_missing_plugin_downgrades_to_monitor(void **state)
{
    (void)state;
    assert_false(tu_mapped("libgpufl_synthetic"));
    char *log_path = new_log_path("noplugin");
    char plugin[512];
    snprintf(plugin, sizeof plugin, "%s/no-such-plugin.so", log_path);
    tu_setenv("GPUFL_SYNTHETIC", SCRIPT);
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o.app_name = "noplugin";
    o.log_path = log_path;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = plugin;
    char *dir = run_scoped_session(&o, log_path, false);
    tu_unsetenv("GPUFL_SYNTHETIC");

    /* one warning that names the plugin and says what happened instead */
    assert_int_equal(warnings_with(dir, plugin), 1);
    assert_int_equal(warnings_with(dir, "recording as monitor"), 1);
    json_t *session = tu_session_json(dir);
    assert_string_equal(tu_str(json_object_get(session, "options"), "profiling_engine"), "trace");
    json_decref(session);
    remove_log_path(log_path);
    free(dir);
}

/* With these options the device plugin must never be loaded, and no
 * warning about it is due: the engine or backend asked for none. */
static void expect_plugin_not_loaded(const char *tag, gpufl_backend backend, gpufl_engine engine)
{
    assert_false(tu_mapped("libgpufl_synthetic"));
    char *log_path = new_log_path(tag);
    tu_setenv("GPUFL_SYNTHETIC", SCRIPT);
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o.app_name = tag;
    o.log_path = log_path;
    o.backend = backend;
    o.profiling_engine = engine;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    char *dir = run_scoped_session(&o, log_path, false);
    tu_unsetenv("GPUFL_SYNTHETIC");
    assert_false(tu_mapped("libgpufl_synthetic"));
    assert_int_equal(warnings_with(dir, "plugin"), 0);
    remove_log_path(log_path);
    free(dir);
}

static void test_monitor_never_loads_plugin(void **state)
{
    (void)state;
    expect_plugin_not_loaded("monitor", GPUFL_BACKEND_AUTO, GPUFL_ENGINE_MONITOR);
}

static void test_backend_none_never_loads_plugin(void **state)
{
    (void)state;
    expect_plugin_not_loaded("nobackend", GPUFL_BACKEND_NONE, GPUFL_ENGINE_TRACE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* "not loaded" checks first: a loaded plugin stays mapped */
        cmocka_unit_test_teardown(test_missing_plugin_downgrades_to_monitor, cleanup),
        cmocka_unit_test_teardown(test_monitor_never_loads_plugin, cleanup),
        cmocka_unit_test_teardown(test_backend_none_never_loads_plugin, cleanup),
        cmocka_unit_test_teardown(test_device_pipeline, cleanup),
    };
    /* These tests are about the synthetic plugin: a real driver on the
     * machine (device_info lines, NVML samples) must not change what they see. */
    setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
