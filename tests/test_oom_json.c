/*
 * An out-of-memory diagnosed (issue 14): gpufl_report_oom dumps the flight
 * window with oom.json in it (session/dumps.c, analyze/ana_oom.c,
 * present/report/oom_json.c), gpufl_set_framework_oom keeps the CUDA hook
 * from firing, and `gpufl mem diagnose` prints or computes the diagnosis.
 *
 * Why: oom.json is what an on-call engineer reads first after a job died
 * of an out-of-memory; its figures must be those recorded just before (the
 * framework's allocator state and live blocks, pushed by the thread that
 * reports), and each of the three causes must be told apart by the rules
 * docs/FORMAT.md states. No GPU: the framework's figures come through the
 * public API, the device's through the synthetic plugin.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "session/dumps.h"
#include "test_util.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)

static char *log_path;

static void start_with(gpufl_options *o)
{
    log_path = tu_mkdtemp("oom");
    o->app_name = "oom";
    o->log_path = log_path;
    o->system_sample_rate_ms = 0;
    o->log_format = GPUFL_LOG_NONE; /* the window is all there is, as in production */
    o->flight_window_s = 60;
    assert_true(gpufl_init(o));
}

static void start(void)
{
    gpufl_options o;
    gpufl_options_init(&o);
    start_with(&o);
}

static int cleanup(void **state)
{
    (void)state;
    gpufl_shutdown();
    gpufl_set_framework_oom(0);
    tu_unsetenv("GPUFL_SYNTHETIC");
    if (log_path) {
        tu_rm_rf(log_path);
        free(log_path);
        log_path = NULL;
    }
    return 0;
}

static const gpufl_source_frame big_stack[] = {
    {"/work/model.py", "forward", 42},
    {"/work/train.py", "main", 97},
};
static const gpufl_source_frame small_stack[] = {{"/work/train.py", "step", 12}};

/* The allocator's state as the framework's observer records it at an OOM. */
static void record_state(uint64_t allocated, uint64_t reserved, uint64_t inactive_split, uint64_t largest_free,
                         uint64_t device_free, uint64_t requested)
{
    gpufl_allocator_state st = {.struct_size = sizeof st,
                                .device = 0,
                                .framework = "pytorch",
                                .reason = "oom",
                                .allocated_bytes = allocated,
                                .reserved_bytes = reserved,
                                .active_bytes = allocated,
                                .inactive_split_bytes = inactive_split,
                                .largest_free_bytes = largest_free,
                                .requested_bytes = requested,
                                .device_free_bytes = device_free,
                                .alloc_retries = 3,
                                .ooms = 1};
    assert_int_equal(gpufl_record_allocator(&st), 0);
}

static json_t *load_json(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fail_msg("%s: %s", path, e.text);
    return j;
}

/* oom.json of the session's dump `name`. */
static json_t *oom_json(const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/dumps/%s/oom.json", gpufl_session_dir(), name);
    return load_json(path);
}

static uint64_t u(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("%s is not an integer", key);
    return (uint64_t)json_integer_value(v);
}

static const char *s(json_t *o, const char *key) { return json_string_value(json_object_get(o, key)); }

/* A framework that ran out with its memory in use: the request is more than
 * device free and cache together. The dump holds oom.json with the
 * allocator's figures, the live blocks largest first with their Python
 * frames, and session.json names it. */
static void real_exhaustion_from_the_framework(void **state)
{
    (void)state;
    start();
    gpufl_scope sc = gpufl_scope_begin("step");
    assert_int_equal(gpufl_record_block(0, 0x7f0000000000ull, 6 * GIB, 0, 7, 0, big_stack, 2), 0);
    assert_int_equal(gpufl_record_block(0, 0x7f0200000000ull, 512 * MIB, 0, 7, 0, small_stack, 1), 0);
    assert_int_equal(gpufl_record_block(0, 0x7f0300000000ull, 3 * GIB, 0, 7, 0, small_stack, 1), 0);
    assert_int_equal(gpufl_record_block(0, 0x7f0300000000ull, 3 * GIB, 1, 7, 0, NULL, 0), 0); /* freed */
    record_state(6 * GIB + 512 * MIB, 7 * GIB, 256 * MIB, 256 * MIB, 100 * MIB, 2 * GIB);
    assert_int_equal(gpufl_report_oom(0, 2 * GIB, "torch: tried to allocate 2.00 GiB on GPU 0"), 0);
    gpufl_scope_end(sc);

    json_t *j = oom_json("0001-oom");
    assert_string_equal(s(j, "format"), "gpufl-oom");
    assert_int_equal(u(j, "requested_bytes"), 2 * GIB);
    assert_int_equal(u(j, "device"), 0);
    assert_string_equal(s(j, "source"), "framework");
    assert_string_equal(s(j, "detail"), "torch: tried to allocate 2.00 GiB on GPU 0");
    assert_true(u(j, "time_ns") > 0);
    assert_int_equal(u(j, "device_free_bytes"), 100 * MIB);
    assert_string_equal(s(j, "device_memory_source"), "allocator");
    assert_true(json_is_null(json_object_get(j, "device_total_bytes"))); /* no GPU described it */
    assert_true(json_is_null(json_object_get(j, "process_used_bytes")));
    json_t *al = json_object_get(j, "allocator");
    assert_int_equal(u(al, "allocated"), 6 * GIB + 512 * MIB);
    assert_int_equal(u(al, "reserved"), 7 * GIB);
    assert_int_equal(u(al, "inactive_split"), 256 * MIB);
    assert_int_equal(u(al, "largest_free"), 256 * MIB);
    assert_int_equal(u(al, "alloc_retries"), 3);
    assert_int_equal(u(al, "ooms"), 1);
    assert_string_equal(s(al, "framework"), "pytorch");
    json_t *fr = json_object_get(j, "fragmentation");
    assert_int_equal(u(fr, "reserved_minus_allocated"), 512 * MIB);
    json_t *live = json_object_get(j, "largest_live");
    assert_int_equal(json_array_size(live), 2); /* the freed block is not live */
    json_t *first = json_array_get(live, 0), *second = json_array_get(live, 1);
    assert_string_equal(s(first, "layer"), "framework");
    assert_int_equal(u(first, "bytes"), 6 * GIB);
    assert_string_equal(s(first, "address"), "0x7f0000000000");
    assert_string_equal(s(first, "scope"), "step");
    assert_int_equal(u(second, "bytes"), 512 * MIB);
    json_t *frames = json_object_get(first, "stack");
    assert_int_equal(json_array_size(frames), 2);
    assert_string_equal(json_string_value(json_array_get(frames, 0)), "forward (/work/model.py:42)");
    assert_string_equal(json_string_value(json_array_get(frames, 1)), "main (/work/train.py:97)");
    json_t *layers = json_object_get(j, "live");
    assert_int_equal(u(json_object_get(layers, "framework"), "count"), 2);
    assert_int_equal(u(json_object_get(layers, "framework"), "bytes"), 6 * GIB + 512 * MIB);
    assert_int_equal(u(json_object_get(layers, "driver"), "count"), 0);
    assert_string_equal(s(j, "classification"), "real_exhaustion");
    assert_non_null(strstr(s(j, "explanation"), "request of 2.00 GiB"));
    assert_non_null(strstr(s(j, "explanation"), "612.0 MiB"));
    json_t *fig = json_object_get(j, "figures");
    assert_int_equal(u(fig, "reclaimable_bytes"), 612 * MIB);
    json_decref(j);

    char path[4400];
    snprintf(path, sizeof path, "%s/dumps/0001-oom/session.json", gpufl_session_dir());
    json_t *sj = load_json(path);
    json_t *dump = json_object_get(sj, "dump");
    assert_string_equal(s(dump, "trigger"), "oom");
    assert_string_equal(s(dump, "oom"), "oom.json");
    json_decref(sj);
}

/* The framework's OOM is dated by its state, stamped when its observer was
 * called, not by gpufl_report_oom, which comes after the live blocks'
 * snapshot (seconds, the first time); a block allocated between the two
 * was not live at the OOM. */
static void framework_oom_is_dated_by_its_observer(void **state)
{
    (void)state;
    start();
    assert_int_equal(gpufl_record_block(0, 0x7f0000000000ull, GIB, 0, 7, 0, big_stack, 2), 0);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t called = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
    struct timespec pause = {0, 300 * 1000000L}; /* the snapshot's seconds, shortened */
    nanosleep(&pause, NULL);
    assert_int_equal(gpufl_record_block(0, 0x7f0100000000ull, GIB, 0, 7, 0, small_stack, 1), 0);
    gpufl_allocator_state st = {.struct_size = sizeof st,
                                .framework = "pytorch",
                                .reason = "oom",
                                .allocated_bytes = GIB,
                                .reserved_bytes = GIB,
                                .requested_bytes = 4 * GIB,
                                .device_free_bytes = MIB,
                                .ts_ns = called};
    assert_int_equal(gpufl_record_allocator(&st), 0);
    st.reason = "sample"; /* a sampler's state after the OOM is not the OOM's */
    st.ts_ns = 0;
    st.allocated_bytes = 2 * GIB;
    assert_int_equal(gpufl_record_allocator(&st), 0);
    assert_int_equal(gpufl_report_oom(0, 4 * GIB, NULL), 0);

    json_t *j = oom_json("0001-oom");
    assert_int_equal(u(json_object_get(j, "allocator"), "allocated"), GIB); /* the OOM's state */
    json_t *layers = json_object_get(j, "live");
    /* dated before the second block: it was not live then */
    assert_int_equal(u(json_object_get(layers, "framework"), "count"), 1);
    json_decref(j);
}

/* Enough memory free in all, but no block that large: fragmentation. */
static void cached_memory_in_small_blocks_is_fragmentation(void **state)
{
    (void)state;
    start();
    assert_int_equal(gpufl_record_block(0, 0x7f0000000000ull, 6 * GIB, 0, 7, 0, big_stack, 2), 0);
    record_state(6 * GIB, 10 * GIB, 3 * GIB, 512 * MIB, 200 * MIB, 1 * GIB);
    assert_int_equal(gpufl_report_oom(0, 1 * GIB, NULL), 0);
    json_t *j = oom_json("0001-oom");
    assert_string_equal(s(j, "classification"), "fragmentation");
    assert_non_null(strstr(s(j, "detail"), "1073741824 bytes on GPU 0"));
    json_t *fig = json_object_get(j, "figures");
    assert_int_equal(u(fig, "cached_free_bytes"), 4 * GIB);
    assert_int_equal(u(fig, "reclaimable_bytes"), 4 * GIB + 200 * MIB);
    assert_int_equal(u(fig, "largest_free_block_bytes"), 512 * MIB);
    json_t *fr = json_object_get(j, "fragmentation");
    assert_int_equal(u(fr, "inactive_split"), 3 * GIB);
    assert_true(json_real_value(json_object_get(fr, "fraction")) == 0.3); /* inactive split of reserved */
    json_decref(j);
}

/* The device's figures from NVML (the synthetic plugin's sample: 1 GiB
 * used of 141 GiB, 512 MiB of it this process's): another process holds
 * 512 MiB, more than the request, and without it the request fits. */
static void memory_held_by_another_process(void **state)
{
    (void)state;
    tu_setenv("GPUFL_SYNTHETIC", "kernels=0,copies=0,memsets=0,syncs=0,allocs=0,metrics=1,devices=1");
    gpufl_options o;
    gpufl_options_init(&o);
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    start_with(&o);
    struct timespec pause = {0, 200000000}; /* the plugin's sample reaches its ring */
    nanosleep(&pause, NULL);
    record_state(2 * GIB, 2 * GIB, 0, 0, 100 * MIB, 300 * MIB);
    assert_int_equal(gpufl_report_oom(0, 300 * MIB, "torch: tried to allocate 300.00 MiB on GPU 0"), 0);
    json_t *j = oom_json("0001-oom");
    assert_string_equal(s(j, "classification"), "another_process");
    assert_int_equal(u(j, "device_total_bytes"), 141 * GIB);
    assert_int_equal(u(j, "process_used_bytes"), 512 * MIB);
    assert_int_equal(u(j, "all_processes_used_bytes"), 1 * GIB);
    assert_int_equal(u(j, "device_free_bytes"), 100 * MIB); /* the allocator's, newer than NVML's */
    assert_int_equal(u(json_object_get(j, "figures"), "other_processes_bytes"), 512 * MIB);
    json_decref(j);
}

/* Without the allocator's word, NVML's free memory is the device's. */
static void nvml_gives_free_memory_without_an_allocator(void **state)
{
    (void)state;
    tu_setenv("GPUFL_SYNTHETIC", "kernels=0,copies=0,memsets=0,syncs=0,allocs=0,metrics=1,devices=1");
    gpufl_options o;
    gpufl_options_init(&o);
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    start_with(&o);
    struct timespec pause = {0, 200000000};
    nanosleep(&pause, NULL);
    assert_int_equal(gpufl_report_oom(0, 200 * GIB, NULL), 0);
    json_t *j = oom_json("0001-oom");
    assert_string_equal(s(j, "device_memory_source"), "nvml");
    assert_int_equal(u(j, "device_free_bytes"), 140 * GIB);
    assert_true(json_is_null(json_object_get(j, "allocator")));
    assert_true(json_is_null(json_object_get(j, "fragmentation")));
    assert_string_equal(s(j, "classification"), "real_exhaustion");
    json_decref(j);
}

/* gpufl_report_oom refuses as gpufl_dump does, and records the trigger. */
static void report_oom_without_a_window_or_session_refuses(void **state)
{
    (void)state;
    assert_int_equal(gpufl_report_oom(0, GIB, NULL), GPUFL_ESTATE);
    assert_non_null(strstr(gpufl_last_error(), "gpufl_report_oom"));
    log_path = tu_mkdtemp("oom");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "oom";
    o.log_path = log_path;
    o.system_sample_rate_ms = 0;
    o.log_format = GPUFL_LOG_NDJSON;
    assert_true(gpufl_init(&o));
    assert_int_equal(gpufl_report_oom(0, GIB, NULL), GPUFL_ESTATE);
    assert_non_null(strstr(gpufl_last_error(), "flight_window_s"));
    gpufl_shutdown();
    /* dump_on_oom off: recorded, not dumped */
    o.flight_window_s = 60;
    o.dump_on_oom = false;
    assert_true(gpufl_init(&o));
    assert_int_equal(gpufl_report_oom(0, GIB, NULL), GPUFL_ESTATE);
    assert_non_null(strstr(gpufl_last_error(), "dump_on_oom"));
}

/* While the framework reports its own OOMs, the device plugin's "oom" (the
 * hook a failed cudaMalloc calls) is recorded by nobody's trigger: the
 * allocator retries after emptying its cache. Other kinds still fire. */
static void framework_oom_silences_the_cuda_trigger(void **state)
{
    (void)state;
    start();
    assert_int_equal(gpufl_set_framework_oom(1), 0);
    gpufl__dumps_plugin_trigger("oom", "cudaMalloc of 1 bytes failed");
    assert_int_equal(gpufl_dump("after"), 0); /* drains the triggers before it */
    char path[4400];
    snprintf(path, sizeof path, "%s/dumps/0001-dump", gpufl_session_dir());
    struct stat st;
    assert_int_equal(stat(path, &st), 0); /* the first dump is the user's: no oom fired */
    gpufl_shutdown();
    tu_rm_rf(log_path);
    free(log_path);
    log_path = NULL;
    /* off again: the plugin's oom dumps */
    assert_int_equal(gpufl_set_framework_oom(0), 0);
    gpufl_options o;
    gpufl_options_init(&o);
    o.dump_min_interval_s = 0;
    start_with(&o);
    gpufl__dumps_plugin_trigger("oom", "cudaMalloc of 1 bytes failed");
    assert_int_equal(gpufl_dump("after"), 0);
    snprintf(path, sizeof path, "%s/dumps/0001-oom", gpufl_session_dir());
    assert_int_equal(stat(path, &st), 0);
}

/* ---- gpufl mem diagnose ------------------------------------------------------ */

static int diagnose(const char *const *args, char **out, char **err)
{
    return tu_run_subcommand(GFL_CLI, "mem", args, out, err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A dump (its directory, its session's, its oom.json) is diagnosed: exit 1,
 * the text names the classification; --format json is the file itself. */
static void diagnose_prints_a_dumps_oom_json(void **state)
{
    (void)state;
    start();
    assert_int_equal(gpufl_record_block(0, 0x7f0000000000ull, 6 * GIB, 0, 7, 0, big_stack, 2), 0);
    record_state(6 * GIB, 10 * GIB, 3 * GIB, 512 * MIB, 200 * MIB, 1 * GIB);
    assert_int_equal(gpufl_report_oom(0, 1 * GIB, NULL), 0);
    char session[4200], dump[4400], file[4500];
    snprintf(session, sizeof session, "%s", gpufl_session_dir());
    gpufl_shutdown();
    snprintf(dump, sizeof dump, "%s/dumps/0001-oom", session);
    snprintf(file, sizeof file, "%s/oom.json", dump);
    char *out, *err;
    const char *targets[] = {dump, session, file};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(diagnose(ARGS("diagnose", targets[i]), &out, &err), 1);
        assert_non_null(strstr(out, "classification: fragmentation"));
        assert_non_null(strstr(out, "forward (/work/model.py:42)"));
        assert_non_null(strstr(out, file));
        free(out);
        free(err);
    }
    assert_int_equal(diagnose(ARGS("diagnose", dump, "--format", "json"), &out, &err), 1);
    size_t len;
    char *text = tu_read_file(file, &len);
    assert_string_equal(out, text);
    free(text);
    free(out);
    free(err);
    /* without oom.json (an older dump): computed from the dump, the same */
    char moved[4600];
    snprintf(moved, sizeof moved, "%s.old", file);
    assert_int_equal(rename(file, moved), 0);
    assert_int_equal(diagnose(ARGS("diagnose", dump, "--format", "json"), &out, &err), 1);
    text = tu_read_file(moved, &len);
    assert_string_equal(out, text);
    free(text);
    free(out);
    free(err);
}

/* Errors name the file and exit 2; a session without an OOM exits 0. */
static void diagnose_errors_name_the_file(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("diag"), path[4200], *out, *err;
    snprintf(path, sizeof path, "%s/missing", dir);
    assert_int_equal(diagnose(ARGS("diagnose", path), &out, &err), 2);
    assert_non_null(strstr(err, path));
    free(out);
    free(err);
    /* a dump whose trace is damaged */
    snprintf(path, sizeof path, "%s/0001-oom", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    char file[4400];
    snprintf(file, sizeof file, "%s/trace.gflt", path);
    tu_write_file(file, "not a trace at all, just text");
    assert_int_equal(diagnose(ARGS("diagnose", path), &out, &err), 2);
    assert_non_null(strstr(err, "trace.gflt"));
    free(out);
    free(err);
    /* a damaged oom.json */
    snprintf(file, sizeof file, "%s/oom.json", path);
    tu_write_file(file, "{\"format\": \"gpufl-oom\", ");
    assert_int_equal(diagnose(ARGS("diagnose", path), &out, &err), 2);
    assert_non_null(strstr(err, file));
    assert_non_null(strstr(err, "not valid JSON"));
    free(out);
    free(err);
    /* bad usage */
    assert_int_equal(diagnose(ARGS("diagnose"), &out, &err), 2);
    free(out);
    free(err);
    assert_int_equal(diagnose(ARGS("diagnose", path, "--format", "xml"), &out, &err), 2);
    free(out);
    free(err);
    tu_rm_rf(dir);
    free(dir);

    /* a session that recorded no out-of-memory */
    gpufl_options o;
    gpufl_options_init(&o);
    log_path = tu_mkdtemp("oom");
    o.app_name = "oom";
    o.log_path = log_path;
    o.system_sample_rate_ms = 0;
    o.log_format = GPUFL_LOG_NDJSON;
    assert_true(gpufl_init(&o));
    gpufl_scope sc = gpufl_scope_begin("fine");
    gpufl_scope_end(sc);
    char session[4200];
    snprintf(session, sizeof session, "%s", gpufl_session_dir());
    gpufl_shutdown();
    assert_int_equal(diagnose(ARGS("diagnose", session), &out, &err), 0);
    assert_non_null(strstr(out, "no out-of-memory"));
    free(out);
    free(err);
}

/* A session (no window) that holds a failed allocation is diagnosed from
 * its own logs. */
static void diagnose_computes_for_a_session_with_a_failed_allocation(void **state)
{
    (void)state;
    gpufl_options o;
    gpufl_options_init(&o);
    log_path = tu_mkdtemp("oom");
    o.app_name = "oom";
    o.log_path = log_path;
    o.system_sample_rate_ms = 0;
    o.log_format = GPUFL_LOG_COMPACT;
    assert_true(gpufl_init(&o));
    assert_int_equal(gpufl_record_block(0, 0x7f0000000000ull, 6 * GIB, 0, 7, 0, big_stack, 2), 0);
    assert_int_equal(gpufl_report_oom(0, 3 * GIB, NULL), GPUFL_ESTATE); /* no window: recorded, not dumped */
    char session[4200];
    snprintf(session, sizeof session, "%s", gpufl_session_dir());
    gpufl_shutdown();
    char *out, *err;
    assert_int_equal(diagnose(ARGS("diagnose", session, "--format", "json"), &out, &err), 1);
    json_error_t e;
    json_t *j = json_loads(out, 0, &e);
    assert_non_null(j);
    assert_int_equal(u(j, "requested_bytes"), 3 * GIB);
    assert_string_equal(s(j, "source"), "framework");
    assert_int_equal(json_array_size(json_object_get(j, "largest_live")), 1);
    json_decref(j);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(real_exhaustion_from_the_framework, cleanup),
        cmocka_unit_test_teardown(framework_oom_is_dated_by_its_observer, cleanup),
        cmocka_unit_test_teardown(cached_memory_in_small_blocks_is_fragmentation, cleanup),
        cmocka_unit_test_teardown(memory_held_by_another_process, cleanup),
        cmocka_unit_test_teardown(nvml_gives_free_memory_without_an_allocator, cleanup),
        cmocka_unit_test_teardown(report_oom_without_a_window_or_session_refuses, cleanup),
        cmocka_unit_test_teardown(framework_oom_silences_the_cuda_trigger, cleanup),
        cmocka_unit_test_teardown(diagnose_prints_a_dumps_oom_json, cleanup),
        cmocka_unit_test_teardown(diagnose_errors_name_the_file, cleanup),
        cmocka_unit_test_teardown(diagnose_computes_for_a_session_with_a_failed_allocation, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
