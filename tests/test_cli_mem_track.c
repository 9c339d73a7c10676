/*
 * `gpufl mem track` as a user runs it: the real command on the program that
 * stands in for a CUDA program (tests/inject_target) with the synthetic
 * device plugin making allocations, and without a program (watching the
 * GPUs, here the fake NVML).
 *
 * Why: CI gates on its exit code (0 fine, 1 a leak, an OOM or a threshold,
 * 2 an error), so a program that fails, a program that records nothing and
 * every misuse must each give 2 with the reason, a clean run 0 with the
 * analysis of each session, and --output the timeline it says it writes.
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

#include "fs_util.h"
#include "test_util.h"

typedef struct result {
    int status;
    char *out, *err;
} result;

static char *dir;

static int setup(void **state)
{
    (void)state;
    dir = tu_mkdtemp("memtrack");
    static const char *const clear[] = {"GPUFL_LOG_PATH",
                                        "GPUFL_APP_NAME",
                                        "GPUFL_PROFILING_ENGINE",
                                        "GPUFL_DISABLED",
                                        "GPUFL_CONFIG_FILE",
                                        "CUDA_INJECTION64_PATH",
                                        "NVTX_INJECTION64_PATH",
                                        "GPUFL_RUN_REPORT",
                                        "GPUFL_INJECTED_PID",
                                        "GPUFL_FLIGHT_WINDOW_S",
                                        NULL};
    for (const char *const *c = clear; *c; c++)
        tu_unsetenv(*c);
    tu_setenv("GPUFL_DEVICE_PLUGIN", GFL_SYNTHETIC_PLUGIN);
    tu_setenv("GPUFL_SYNTHETIC", "kernels=20,copies=0,memsets=0,syncs=0,allocs=10,metrics=0,threads=1");
    tu_setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_rf(dir);
    free(dir);
    return 0;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static result track(const char *const *args)
{
    result r;
    r.status = tu_run_subcommand(GFL_CLI, "mem", args, &r.out, &r.err);
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

static void clean_run_reports_each_session(void **state)
{
    (void)state;
    char logs[4200], out[4200];
    snprintf(logs, sizeof logs, "%s/clean", dir);
    snprintf(out, sizeof out, "%s/timeline.json", dir);
    result r = track(
        ARGS("track", "--log-path", logs, "--output", out, "--format", "json", "--", GFL_INJECT_TARGET, "exit", "0"));
    if (r.status != 0)
        fprintf(stderr, "stdout:\n%s\nstderr:\n%s\n", r.out, r.err);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "== "));
    assert_non_null(strstr(r.out, logs)); /* the session analysed is named */
    json_error_t e;
    json_t *doc = json_load_file(out, 0, &e);
    assert_non_null(doc);
    assert_true(json_is_array(doc)); /* no GPU samples nor allocator here: an empty timeline */
    json_decref(doc);
    result_free(&r);
}

static void failing_program_is_an_error(void **state)
{
    (void)state;
    char logs[4200];
    snprintf(logs, sizeof logs, "%s/failing", dir);
    result r = track(ARGS("track", "--log-path", logs, "--", GFL_INJECT_TARGET, "exit", "3"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "exited with status 3"));
    result_free(&r);
}

static void nothing_recorded_is_an_error(void **state)
{
    (void)state;
    char logs[4200];
    snprintf(logs, sizeof logs, "%s/nocuda", dir);
    result r = track(ARGS("track", "--log-path", logs, "--", GFL_INJECT_TARGET, "nocuda"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "nothing was recorded"));
    result_free(&r);
}

static void misuse_exits_2_with_the_reason(void **state)
{
    (void)state;
    const struct {
        const char *const *args;
        const char *says;
    } cases[] = {
        {ARGS("track", "--duration", "5", "--", "prog"), "--duration"},
        {ARGS("track", "--oom-flight-recorder"), "needs a PROGRAM"},
        {ARGS("track", "--oom-max-dumps", "3", "--", "prog"), "need --oom-flight-recorder"},
        {ARGS("track", "--watchdog", "--", "prog"), "not a Python program"},
        {ARGS("track", "--watchdog"), "needs a PROGRAM"},
        {ARGS("track", "--format", "xml", "--", "prog"), "csv or json"},
        {ARGS("track", "--interval", "0", "--", "prog"), "--interval"},
        {ARGS("track", "--warning-threshold", "90", "--critical-threshold", "50", "--", "prog"), "above"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = track(cases[i].args);
        if (r.status != 2 || !strstr(r.err, cases[i].says))
            fail_msg("case %zu: exit %d, stderr: %s", i, r.status, r.err);
        assert_non_null(strstr(r.err, "usage: gpufl mem track"));
        result_free(&r);
    }
}

/* Without a program it watches the GPUs: here there is no driver, which it
 * says, as gpufl mem monitor does. */
static void without_a_program_it_watches(void **state)
{
    (void)state;
    result r = track(ARGS("track", "--duration", "0.2"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "no NVIDIA driver"));
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clean_run_reports_each_session), cmocka_unit_test(failing_program_is_an_error),
        cmocka_unit_test(nothing_recorded_is_an_error),   cmocka_unit_test(misuse_exits_2_with_the_reason),
        cmocka_unit_test(without_a_program_it_watches),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
