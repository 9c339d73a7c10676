/*
 * `gpufl devices` and `gpufl monitor` (issue 3), run as the user runs them:
 * the real command in a child process, with the fake NVML library of
 * tests/fake_nvml standing in for a driver (or a path that does not exist
 * standing for none). Values come from the fake's documented formulas.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define GIB (1024ull * 1024 * 1024)

typedef struct run_result {
    int status;
    char *out, *err;
} run_result;

/* Runs `gpufl args...` with GPUFL_NVML_LIBRARY=nvml (NULL: unset) and
 * FAKE_NVML=script (NULL: as inherited); captures stdout and stderr. */
static run_result run_cli(const char *nvml, const char *script, const char *const *args)
{
    if (nvml)
        tu_setenv("GPUFL_NVML_LIBRARY", nvml);
    else
        tu_unsetenv("GPUFL_NVML_LIBRARY");
    if (script)
        tu_setenv("FAKE_NVML", script);
    const char *argv[32] = {GFL_CLI};
    int n = 1;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    run_result r;
    r.status = tu_run(argv, &r.out, &r.err);
    if (script)
        tu_unsetenv("FAKE_NVML");
    return r;
}

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("not JSON (%s): %.300s", e.text, text);
    return j;
}

static const char *str(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }
static long long num(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

/* ---- gpufl devices ----------------------------------------------------- */

static void devices_json_describes_each_gpu(void **state)
{
    (void)state;
    run_result r = run_cli(GFL_FAKE_NVML_FULL, "devices=2", ARGS("devices", "--json"));
    assert_int_equal(r.status, 0);
    json_t *doc = parse(r.out);
    assert_true(json_is_true(json_object_get(doc, "driver_found")));
    json_t *devs = json_object_get(doc, "devices");
    assert_int_equal(json_array_size(devs), 2);
    for (int i = 0; i < 2; i++) {
        json_t *d = json_array_get(devs, (size_t)i);
        char name[32], uuid[32], bus[32];
        snprintf(name, sizeof name, "Fake GPU %d", i);
        snprintf(uuid, sizeof uuid, "GPU-fake-%d", i);
        snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x19 + i);
        assert_int_equal(num(d, "device"), i);
        assert_string_equal(str(d, "name"), name);
        assert_string_equal(str(d, "uuid"), uuid);
        assert_string_equal(str(d, "pci_bus_id"), bus);
        assert_string_equal(str(d, "compute_capability"), "9.0");
        assert_int_equal(num(d, "sm_count"), 132);
        assert_int_equal(num(d, "memory_total_bytes"), 141 * GIB);
        assert_string_equal(str(d, "driver_version"), "580.95.05");
        assert_string_equal(str(d, "cuda_driver_version"), "13.0");
        json_t *s = json_object_get(d, "state");
        assert_non_null(s);
        assert_int_equal(num(s, "temp_c"), 40 + i);
        assert_int_equal(num(s, "power_mw"), 100000 + 1000 * i);
        assert_int_equal(num(s, "mem_total_bytes"), 141 * GIB);
        /* two readings were taken, so the PCIe rate exists */
        assert_non_null(json_object_get(s, "pcie_rx_kbps"));
        assert_null(json_object_get(s, "fan_pct")); /* NOT_SUPPORTED: absent, not 0 */
    }
    assert_non_null(json_object_get(json_object_get(doc, "host"), "ram_total_bytes"));
    json_decref(doc);
    run_free(&r);
}

static void devices_table_is_readable(void **state)
{
    (void)state;
    run_result r = run_cli(GFL_FAKE_NVML_FULL, "devices=2", ARGS("devices"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "NVIDIA driver 580.95.05, CUDA 13.0, 2 GPUs"));
    assert_non_null(strstr(r.out, "GPU 1  Fake GPU 1"));
    assert_non_null(strstr(r.out, "capability 9.0, 132 SMs"));
    assert_non_null(strstr(r.out, "temperature   41 C (memory 51 C)"));
    assert_null(strstr(r.out, "fan")); /* not reported: not shown */
    run_free(&r);
}

static void devices_without_driver_says_so(void **state)
{
    (void)state;
    run_result r = run_cli("/nonexistent/libnvidia-ml.so.1", NULL, ARGS("devices"));
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "no NVIDIA driver found"));
    assert_non_null(strstr(r.err, "/nonexistent/libnvidia-ml.so.1"));
    run_free(&r);
    r = run_cli("/nonexistent/libnvidia-ml.so.1", NULL, ARGS("devices", "--json"));
    assert_int_equal(r.status, 3);
    json_t *doc = parse(r.out);
    assert_true(json_is_false(json_object_get(doc, "driver_found")));
    assert_int_equal(json_array_size(json_object_get(doc, "devices")), 0);
    assert_non_null(strstr(str(doc, "error"), "could not be loaded"));
    json_decref(doc);
    run_free(&r);
}

static void devices_through_the_legacy_driver(void **state)
{
    (void)state;
    run_result r = run_cli(GFL_FAKE_NVML_LEGACY, "devices=1", ARGS("devices", "--json"));
    assert_int_equal(r.status, 0);
    json_t *doc = parse(r.out);
    json_t *d = json_array_get(json_object_get(doc, "devices"), 0);
    assert_int_equal(num(d, "sm_count"), 132); /* from 16896 cores at 128 per SM */
    assert_string_equal(str(d, "cuda_driver_version"), "12.2");
    json_t *s = json_object_get(d, "state");
    assert_null(json_object_get(s, "energy_mj"));
    assert_null(json_object_get(s, "pcie_rx_kbps"));
    json_decref(doc);
    run_free(&r);
}

/* ---- gpufl monitor ------------------------------------------------------- */

static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

static void monitor_csv_rows_per_gpu(void **state)
{
    (void)state;
    run_result r = run_cli(GFL_FAKE_NVML_FULL, "devices=2",
                           ARGS("monitor", "--duration", "0.5", "--interval", "100", "--format", "csv"));
    assert_int_equal(r.status, 0);
    assert_int_equal(strncmp(r.out, "time,epoch_ms,gpu,name,", 23), 0);
    size_t rows = 0, gpu1 = 0, fields_first = 0;
    for (char *line = strchr(r.out, '\n') + 1; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        size_t fields = 1;
        for (char *c = line; *c && *c != '\n'; c++)
            fields += *c == ',';
        if (!fields_first)
            fields_first = fields;
        assert_int_equal(fields, fields_first);
        rows++;
        gpu1 += strstr(line, ",1,\"Fake GPU 1\",") != NULL && strstr(line, ",1,\"Fake GPU 1\",") < strchr(line, '\n');
    }
    assert_int_equal(fields_first, 22);
    assert_true(rows >= 8 && rows <= 12); /* ~5 samples x 2 GPUs */
    assert_int_equal(rows, gpu1 * 2);
    /* the summary goes to stderr, out of the data */
    assert_non_null(strstr(r.err, "GPU 0 Fake GPU 0: peak memory"));
    assert_non_null(strstr(r.err, "max temperature 40 C"));
    assert_non_null(strstr(r.err, "energy"));
    run_free(&r);
}

static void monitor_json_and_ndjson_parse(void **state)
{
    (void)state;
    run_result r = run_cli(GFL_FAKE_NVML_FULL, "devices=2",
                           ARGS("monitor", "--duration", "0.35", "--interval", "100", "--format", "json"));
    assert_int_equal(r.status, 0);
    json_t *doc = parse(r.out);
    assert_true(json_is_array(doc));
    assert_true(json_array_size(doc) >= 3);
    json_t *first = json_array_get(doc, 0);
    assert_int_equal(json_array_size(json_object_get(first, "gpus")), 2);
    assert_int_equal(num(json_array_get(json_object_get(first, "gpus"), 1), "temp_c"), 41);
    json_decref(doc);
    run_free(&r);

    r = run_cli(GFL_FAKE_NVML_FULL, "devices=2",
                ARGS("monitor", "--duration", "0.35", "--interval", "100", "--format", "ndjson"));
    assert_int_equal(r.status, 0);
    size_t lines = 0;
    for (char *line = r.out; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        char *nl = strchr(line, '\n');
        json_t *j = json_loadb(line, (size_t)(nl - line), 0, NULL);
        assert_non_null(j);
        assert_int_equal(json_array_size(json_object_get(j, "gpus")), 2);
        assert_non_null(json_object_get(j, "host"));
        json_decref(j);
        lines++;
    }
    assert_true(lines >= 3);
    run_free(&r);
}

static void monitor_thresholds_set_the_exit_code(void **state)
{
    (void)state;
    /* GPU 0 is at 40 C (warn), GPU 1 at 41 C (crit) */
    run_result r =
        run_cli(GFL_FAKE_NVML_FULL, "devices=2",
                ARGS("monitor", "--duration", "0.3", "--interval", "100", "--warn-temp", "40", "--crit-temp", "41"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "ALERT warn: GPU 0 temperature 40.0 C >= 40.0 C"));
    assert_non_null(strstr(r.err, "ALERT crit: GPU 1 temperature 41.0 C >= 41.0 C"));
    /* alerted when crossed, not on every sample */
    assert_int_equal(count_lines(strstr(r.err, "gpufl monitor: "), "gpufl monitor: "), 2);
    assert_non_null(strstr(r.out, "thresholds: 2 alerts (1 warn, 1 crit)"));
    run_free(&r);

    /* memory: GPU 1 holds 2 GiB of 141 (1.4%), GPU 0 1 GiB (0.7%) */
    r = run_cli(GFL_FAKE_NVML_FULL, "devices=2",
                ARGS("monitor", "--duration", "0.3", "--interval", "100", "--warn-mem", "1"));
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "ALERT warn: GPU 1 memory"));
    assert_null(strstr(r.err, "GPU 0 memory"));
    run_free(&r);

    r = run_cli(GFL_FAKE_NVML_FULL, "devices=2",
                ARGS("monitor", "--duration", "0.3", "--interval", "100", "--warn-mem", "50", "--crit-temp", "90"));
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.err, "ALERT"));
    run_free(&r);
}

static void monitor_device_selection(void **state)
{
    (void)state;
    run_result r =
        run_cli(GFL_FAKE_NVML_FULL, "devices=2",
                ARGS("monitor", "--duration", "0.25", "--interval", "100", "--devices", "1", "--format", "csv"));
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "Fake GPU 0"));
    assert_non_null(strstr(r.out, "Fake GPU 1"));
    run_free(&r);
    r = run_cli(GFL_FAKE_NVML_FULL, "devices=2", ARGS("monitor", "--duration", "0.2", "--devices", "5"));
    assert_int_equal(r.status, 64);
    assert_non_null(strstr(r.err, "there is no GPU 5"));
    run_free(&r);
}

static void monitor_plain_lines_and_output_file(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("cli-out");
    char path[512];
    snprintf(path, sizeof path, "%s/monitor.txt", dir);
    run_result r = run_cli(GFL_FAKE_NVML_FULL, "devices=1",
                           ARGS("monitor", "--duration", "0.3", "--interval", "100", "--output", path));
    assert_int_equal(r.status, 0);
    char *file = tu_read_file(path, NULL);
    assert_non_null(file);
    /* not a terminal: a header once, then plain lines, no escape codes */
    assert_non_null(strstr(file, "gpu  name"));
    assert_null(strchr(file, '\x1b'));
    assert_true(count_lines(file, "time") == 1);
    assert_non_null(strstr(file, "Fake GPU 0"));
    /* with the data in a file, the summary is on stdout */
    assert_non_null(strstr(r.out, "summary:"));
    free(file);
    run_free(&r);
    tu_rm_rf(dir);
    free(dir);
}

static void monitor_without_driver_shows_the_host(void **state)
{
    (void)state;
    run_result r = run_cli("/nonexistent/libnvidia-ml.so.1", NULL,
                           ARGS("monitor", "--duration", "0.3", "--interval", "100", "--format", "csv"));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "no NVIDIA driver found"));
    assert_non_null(strstr(r.err, "showing host metrics only"));
    /* host-only rows: gpu columns empty, host RAM present */
    assert_non_null(strstr(r.out, ",,,,,,,,,,,,,,,,,"));
    run_free(&r);
}

static void monitor_rejects_bad_usage(void **state)
{
    (void)state;
    const char *const *bad[] = {ARGS("monitor", "--format", "xml"), ARGS("monitor", "--interval", "0"),
                                ARGS("monitor", "--warn-mem", "150"), ARGS("monitor", "stray")};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run_result r = run_cli(GFL_FAKE_NVML_FULL, "devices=1", bad[i]);
        assert_int_equal(r.status, 64);
        assert_non_null(strstr(r.err, "usage: gpufl monitor"));
        run_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(devices_json_describes_each_gpu),
        cmocka_unit_test(devices_table_is_readable),
        cmocka_unit_test(devices_without_driver_says_so),
        cmocka_unit_test(devices_through_the_legacy_driver),
        cmocka_unit_test(monitor_csv_rows_per_gpu),
        cmocka_unit_test(monitor_json_and_ndjson_parse),
        cmocka_unit_test(monitor_thresholds_set_the_exit_code),
        cmocka_unit_test(monitor_device_selection),
        cmocka_unit_test(monitor_plain_lines_and_output_file),
        cmocka_unit_test(monitor_without_driver_shows_the_host),
        cmocka_unit_test(monitor_rejects_bad_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
