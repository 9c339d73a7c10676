/*
 * `gpufl mem info` and `gpufl mem monitor` (issue 14), run as the user runs
 * them: the real command in a child process, with the fake NVML library of
 * tests/fake_nvml standing in for a driver, or a path that does not exist
 * standing for none. Figures come from the fake's documented formulas
 * (141 GiB per GPU; GPU i uses (1 + i) GiB + 1 MiB per earlier reading;
 * processes: pid 1 with 1 GiB, and the caller with (256 + 64 i) + 16 MiB).
 *
 * Why: CI gates on these commands' exit codes (0 fine, 1 a threshold
 * crossed, 2 an error), and a machine without a driver must get a clear
 * error, never a crash or an empty success.
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
#include <unistd.h>

#include "fs_util.h"
#include "test_util.h"

#define GIB (1024ull * 1024 * 1024)
#define MIB (1024ull * 1024)

typedef struct result {
    int status;
    char *out, *err;
} result;

/* `gpufl mem args...` with GPUFL_NVML_LIBRARY=nvml and FAKE_NVML=script (NULL: unset). */
static result mem(const char *nvml, const char *script, const char *const *args)
{
    tu_setenv("GPUFL_NVML_LIBRARY", nvml);
    if (script)
        tu_setenv("FAKE_NVML", script);
    else
        tu_unsetenv("FAKE_NVML");
    result r;
    r.status = tu_run_subcommand(GFL_CLI, "mem", args, &r.out, &r.err);
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NO_DRIVER "/nonexistent/libnvidia-ml.so.1"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("not JSON (%s): %s", e.text, text);
    return j;
}

static void without_a_driver_both_say_so_and_exit_2(void **state)
{
    (void)state;
    const char *const *cases[] = {ARGS("info"), ARGS("info", "--format", "json"), ARGS("monitor", "--duration", "1")};
    const char *names[] = {"info", "info", "monitor"};
    for (size_t i = 0; i < 3; i++) {
        result r = mem(NO_DRIVER, NULL, cases[i]);
        assert_int_equal(r.status, 2);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "gpufl mem %s: no NVIDIA driver", names[i]);
        if (strncmp(r.err, prefix, strlen(prefix)) != 0)
            fail_msg("stderr: %s", r.err);
        assert_string_equal(r.out, "");
        result_free(&r);
    }
}

/* Per GPU: memory, the processes holding it (this one by name), versions. */
static void info_lists_memory_and_processes(void **state)
{
    (void)state;
    result r = mem(GFL_FAKE_NVML_FULL, "devices=2", ARGS("info", "--format", "json"));
    assert_int_equal(r.status, 0);
    json_t *j = parse(r.out);
    assert_string_equal(json_string_value(json_object_get(j, "driver_version")), "580.95.05");
    assert_string_equal(json_string_value(json_object_get(j, "cuda_driver_version")), "13.0");
    json_t *devs = json_object_get(j, "devices");
    assert_int_equal(json_array_size(devs), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *d = json_array_get(devs, i);
        assert_int_equal(json_integer_value(json_object_get(d, "index")), i);
        assert_int_equal(json_integer_value(json_object_get(d, "memory_total_bytes")), 141 * GIB);
        json_int_t used = json_integer_value(json_object_get(d, "memory_used_bytes"));
        assert_true(used >= (json_int_t)((1 + i) * GIB) && used < (json_int_t)((1 + i) * GIB + 64 * MIB));
        json_t *procs = json_object_get(d, "processes");
        assert_int_equal(json_array_size(procs), 2);
        json_t *other = json_array_get(procs, 0), *self = json_array_get(procs, 1);
        assert_int_equal(json_integer_value(json_object_get(other, "pid")), 1);
        assert_int_equal(json_integer_value(json_object_get(other, "used_bytes")), GIB);
        /* the fake lists its caller: the gpufl command, both MIG pieces summed */
        assert_int_equal(json_integer_value(json_object_get(self, "used_bytes")), (256 + 64 * i + 16) * MIB);
        assert_string_equal(json_string_value(json_object_get(self, "name")), "gpufl");
    }
    assert_true(json_integer_value(json_object_get(json_object_get(j, "host"), "ram_total_bytes")) > 0);
    json_decref(j);
    result_free(&r);

    r = mem(GFL_FAKE_NVML_FULL, NULL, ARGS("info"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Driver 580.95.05, CUDA 13.0"));
    assert_non_null(strstr(r.out, "GPU 0: Fake GPU 0"));
    assert_non_null(strstr(r.out, "1.00 GiB used"));
    assert_non_null(strstr(r.out, "Host RAM:"));
    result_free(&r);
}

/* CSV with the documented header, one line per sample and device; no
 * threshold crossed at the defaults: exit 0, nothing on stderr. */
static void monitor_writes_csv_and_exits_0_below_the_thresholds(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("memmon"), out[4200];
    snprintf(out, sizeof out, "%s/mem.csv", dir);
    result r = mem(GFL_FAKE_NVML_FULL, "devices=2",
                   ARGS("monitor", "--duration", "0.25", "--interval", "0.05", "--output", out));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    size_t len;
    char *csv = tu_read_file(out, &len);
    const char *header = "timestamp,device,used_bytes,total_bytes,used_pct,free_bytes,process_bytes,level\n";
    assert_int_equal(strncmp(csv, header, strlen(header)), 0);
    size_t lines = 0, dev1 = 0;
    for (char *line = strtok(csv + strlen(header), "\n"); line; line = strtok(NULL, "\n")) {
        double ts, pct;
        unsigned dev;
        unsigned long long used, total, free_b, procs;
        char level[16];
        if (sscanf(line, "%lf,%u,%llu,%llu,%lf,%llu,%llu,%15s", &ts, &dev, &used, &total, &pct, &free_b, &procs,
                   level) != 8)
            fail_msg("bad line: %s", line);
        assert_true(ts > 1.6e9);
        assert_int_equal(total, 141 * GIB);
        assert_true(used >= (1 + dev) * GIB && used < (1 + dev) * GIB + 64 * MIB);
        assert_string_equal(level, "ok");
        lines++;
        dev1 += dev == 1;
    }
    assert_true(lines >= 6 && lines % 2 == 0); /* about 5 samples of 2 GPUs */
    assert_int_equal(dev1 * 2, lines);
    free(csv);
    result_free(&r);
    tu_rm_rf(dir);
    free(dir);
}

/* GPU 1 uses 2 GiB of 141 (1.4 %): over a warning at 1 %, under a
 * critical at 50 %: one alert on stderr, in the JSON summary, exit 1;
 * --devices leaves GPU 0 out. */
static void monitor_alerts_once_and_exits_1_past_a_threshold(void **state)
{
    (void)state;
    result r = mem(GFL_FAKE_NVML_FULL, "devices=2",
                   ARGS("monitor", "--duration", "0.2", "--interval", "0.05", "--format", "json", "--devices", "1",
                        "--warning-threshold", "1", "--critical-threshold", "50"));
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "WARNING: GPU 1 memory 1.4 % used"));
    assert_null(strstr(strstr(r.err, "WARNING") + 1, "WARNING")); /* once, not every sample */
    json_t *j = parse(r.out);
    json_t *samples = json_object_get(j, "samples");
    assert_true(json_array_size(samples) >= 3);
    for (size_t i = 0; i < json_array_size(samples); i++) {
        json_t *s = json_array_get(samples, i);
        assert_int_equal(json_integer_value(json_object_get(s, "device")), 1);
        assert_string_equal(json_string_value(json_object_get(s, "level")), "warning");
    }
    json_t *summary = json_object_get(j, "summary");
    json_t *alerts = json_object_get(summary, "alerts");
    assert_int_equal(json_array_size(alerts), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(alerts, 0), "level")), "warning");
    json_t *peak = json_array_get(json_object_get(summary, "devices"), 0);
    assert_int_equal(json_integer_value(json_object_get(peak, "device")), 1);
    assert_true(json_integer_value(json_object_get(peak, "peak_used_bytes")) >= (json_int_t)(2 * GIB));
    json_decref(j);
    result_free(&r);
}

static void monitor_refuses_bad_usage_with_2(void **state)
{
    (void)state;
    const char *const *cases[] = {ARGS("monitor", "--interval", "0"), ARGS("monitor", "--format", "xml"),
                                  ARGS("monitor", "--warning-threshold", "99", "--critical-threshold", "90"),
                                  ARGS("monitor", "--devices", "7"), ARGS("info", "--format", "yaml")};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = mem(GFL_FAKE_NVML_FULL, NULL, cases[i]);
        assert_int_equal(r.status, 2);
        assert_non_null(strstr(r.err, "gpufl mem "));
        result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_a_driver_both_say_so_and_exit_2),
        cmocka_unit_test(info_lists_memory_and_processes),
        cmocka_unit_test(monitor_writes_csv_and_exits_0_below_the_thresholds),
        cmocka_unit_test(monitor_alerts_once_and_exits_1_past_a_threshold),
        cmocka_unit_test(monitor_refuses_bad_usage_with_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
