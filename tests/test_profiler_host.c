/*
 * CUPTI's host profiler API behind backend/cupti/profiler_host.h, against
 * the fake libcupti (tests/fake_cupti/fake_profiler.c) loaded by path the
 * way the plugin loads CUPTI (GPUFL_CUPTI_LIBRARY).
 *
 * Why: PM sampling and range profiling both turn metric names into a
 * config image and counter data into numbers here. A wrong metric must be
 * named in the error (users type these), a failure must leave no CUPTI
 * object behind (the host objects are CUPTI's memory), values must come
 * back in the order the metrics were asked for, and a libcupti without the
 * API must say which function it lacks instead of crashing on a NULL.
 *
 * Built only where the CUDA toolkit was found (it needs CUPTI's headers).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cupti/profiler_host.h"
#include "fake_cupti.h"
#include "fake_profiler.h"

static gfl_cupti_api api;
static __typeof__(&fake_cupti_profiler_hosts_alive) hosts_alive;
static __typeof__(&fake_cupti_profiler_devices) set_devices;

static int setup(void **state)
{
    (void)state;
    setenv("GPUFL_CUPTI_LIBRARY", GFL_FAKE_CUPTI, 1);
    char err[512] = "";
    if (gfl_cupti_open(&api, err, sizeof err) != 0) {
        fprintf(stderr, "cannot load the fake CUPTI: %s\n", err);
        return -1;
    }
    hosts_alive = (__typeof__(hosts_alive))dlsym(api.lib, "fake_cupti_profiler_hosts_alive");
    set_devices = (__typeof__(set_devices))dlsym(api.lib, "fake_cupti_profiler_devices");
    return hosts_alive && set_devices ? 0 : -1;
}

static void test_chip_name(void **state)
{
    (void)state;
    char chip[64] = "", err[256] = "";
    assert_int_equal(gfl_profiler_chip_name(&api, 0, chip, sizeof chip, err, sizeof err), CUPTI_SUCCESS);
    assert_string_equal(chip, FAKE_CUPTI_CHIP);
    assert_int_equal(gfl_profiler_chip_name(&api, 3, chip, sizeof chip, err, sizeof err), CUPTI_ERROR_INVALID_DEVICE);
    assert_non_null(strstr(err, "device 3"));
    assert_non_null(strstr(err, "CUPTI_ERROR_INVALID_DEVICE"));
    set_devices(4);
    assert_int_equal(gfl_profiler_chip_name(&api, 3, chip, sizeof chip, err, sizeof err), CUPTI_SUCCESS);
    set_devices(1);
    assert_int_equal(gfl_profiler_chip_name(&api, -1, chip, sizeof chip, err, sizeof err), CUPTI_ERROR_INVALID_DEVICE);
}

static void test_config_image(void **state)
{
    (void)state;
    const char *metrics[] = {FAKE_CUPTI_SM_ACTIVE, FAKE_CUPTI_DRAM_READ};
    gfl_profiler_host h;
    char err[256] = "";
    assert_int_equal(gfl_profiler_host_create(&h, &api, CUPTI_PROFILER_TYPE_PM_SAMPLING, FAKE_CUPTI_CHIP, NULL, metrics,
                                              2, err, sizeof err),
                     CUPTI_SUCCESS);
    assert_int_equal(hosts_alive(), 1);
    assert_int_equal(h.n_metrics, 2);
    assert_int_equal(h.passes, 1);
    assert_true(h.config_size >= sizeof(fake_config_image));
    fake_config_image head;
    memcpy(&head, h.config, sizeof head);
    assert_int_equal(head.n, 2);
    assert_int_equal(head.profiler_type, CUPTI_PROFILER_TYPE_PM_SAMPLING);
    /* the names are copies: the caller's array may go */
    assert_true(h.metrics[0] != metrics[0]);
    assert_string_equal(h.metrics[1], FAKE_CUPTI_DRAM_READ);
    gfl_profiler_host_destroy(&h);
    assert_int_equal(hosts_alive(), 0);
    assert_null(h.object);
    gfl_profiler_host_destroy(&h); /* twice is harmless */
}

static void test_unknown_metric_is_named(void **state)
{
    (void)state;
    const char *metrics[] = {FAKE_CUPTI_SM_ACTIVE, "sm__no_such_counter.sum"};
    gfl_profiler_host h;
    char err[256] = "";
    assert_int_equal(gfl_profiler_host_create(&h, &api, CUPTI_PROFILER_TYPE_PM_SAMPLING, FAKE_CUPTI_CHIP, NULL, metrics,
                                              2, err, sizeof err),
                     CUPTI_ERROR_INVALID_PARAMETER);
    assert_non_null(strstr(err, "sm__no_such_counter.sum"));
    assert_non_null(strstr(err, FAKE_CUPTI_CHIP));
    assert_int_equal(hosts_alive(), 0);
    assert_null(h.metrics);
    assert_int_equal(
        gfl_profiler_host_create(&h, &api, CUPTI_PROFILER_TYPE_PM_SAMPLING, "GB999", NULL, metrics, 1, err, sizeof err),
        CUPTI_ERROR_INVALID_CHIP_NAME);
    assert_non_null(strstr(err, "GB999"));
    assert_int_equal(gfl_profiler_host_create(&h, &api, CUPTI_PROFILER_TYPE_PM_SAMPLING, FAKE_CUPTI_CHIP, NULL, metrics,
                                              0, err, sizeof err),
                     CUPTI_ERROR_INVALID_PARAMETER);
    const char *empty[] = {""};
    assert_int_equal(gfl_profiler_host_create(&h, &api, CUPTI_PROFILER_TYPE_PM_SAMPLING, FAKE_CUPTI_CHIP, NULL, empty,
                                              1, err, sizeof err),
                     CUPTI_ERROR_INVALID_METRIC_NAME);
    assert_int_equal(hosts_alive(), 0);
}

static void test_passes(void **state)
{
    (void)state;
    const char *metrics[] = {FAKE_CUPTI_SM_ACTIVE, "multipass__l1tex_hit_rate.pct"};
    gfl_profiler_host h;
    char err[256] = "";
    assert_int_equal(gfl_profiler_host_create(&h, &api, CUPTI_PROFILER_TYPE_RANGE_PROFILER, FAKE_CUPTI_CHIP, NULL,
                                              metrics, 2, err, sizeof err),
                     CUPTI_SUCCESS);
    assert_int_equal(h.passes, 2);
    gfl_profiler_host_destroy(&h);
    /* metrics of one pass stay one pass, however many (CUPTI schedules each add call apart) */
    const char *five[] = {FAKE_CUPTI_SM_ACTIVE, FAKE_CUPTI_DRAM_READ, "dram__bytes_write.sum.per_second",
                          "pcie__read_bytes.sum.per_second", "pcie__write_bytes.sum.per_second"};
    assert_int_equal(gfl_profiler_host_create(&h, &api, CUPTI_PROFILER_TYPE_PM_SAMPLING, FAKE_CUPTI_CHIP, NULL, five, 5,
                                              err, sizeof err),
                     CUPTI_SUCCESS);
    assert_int_equal(h.passes, 1);
    gfl_profiler_host_destroy(&h);
    assert_int_equal(hosts_alive(), 0);
}

/* A counter data image in the fake's layout, with two samples. */
static uint8_t *make_counter_data(size_t *size)
{
    const char *names[] = {FAKE_CUPTI_DRAM_READ, FAKE_CUPTI_SM_ACTIVE};
    *size = fake_data_size(2, 4);
    uint8_t *d = calloc(1, *size);
    fake_counter_data head = {FAKE_DATA_MAGIC, 2, 4, 2};
    memcpy(d, &head, sizeof head);
    for (int i = 0; i < 2; i++)
        snprintf((char *)d + sizeof head + i * FAKE_NAME_LEN, FAKE_NAME_LEN, "%s", names[i]);
    for (int s = 0; s < 2; s++) {
        uint8_t *p = d + sizeof head + 2 * FAKE_NAME_LEN + s * fake_sample_size(2) + sizeof(fake_sample_head);
        double v[2] = {1e9 * (s + 1), 10.0 * (s + 1)};
        memcpy(p, v, sizeof v);
    }
    return d;
}

static void test_evaluate_in_asked_order(void **state)
{
    (void)state;
    const char *metrics[] = {FAKE_CUPTI_SM_ACTIVE, FAKE_CUPTI_DRAM_READ};
    gfl_profiler_host h;
    char err[256] = "";
    assert_int_equal(gfl_profiler_host_create(&h, &api, CUPTI_PROFILER_TYPE_PM_SAMPLING, FAKE_CUPTI_CHIP, NULL, metrics,
                                              2, err, sizeof err),
                     CUPTI_SUCCESS);
    size_t size;
    uint8_t *data = make_counter_data(&size);
    double v[2] = {-1, -1};
    assert_int_equal(gfl_profiler_host_evaluate(&h, data, size, 1, v, err, sizeof err), CUPTI_SUCCESS);
    assert_true(v[0] == 20.0 && v[1] == 2e9);
    v[0] = v[1] = -1;
    assert_int_equal(gfl_profiler_host_evaluate(&h, data, size, 2, v, err, sizeof err), CUPTI_ERROR_INVALID_PARAMETER);
    assert_non_null(strstr(err, "index 2"));
    assert_true(v[0] == -1 && v[1] == -1); /* untouched on failure */
    free(data);
    gfl_profiler_host_destroy(&h);
    assert_int_equal(gfl_profiler_host_evaluate(&h, NULL, 0, 0, v, err, sizeof err), CUPTI_ERROR_NOT_INITIALIZED);
}

static void test_missing_functions_are_named(void **state)
{
    (void)state;
    gfl_cupti_api old = api;
    old.cuptiProfilerHostConfigAddMetrics = NULL;
    old.cuptiDeviceGetChipName = NULL;
    assert_string_equal(gfl_cupti_profiler_host_missing(&old), "cuptiDeviceGetChipName");
    const char *metrics[] = {FAKE_CUPTI_SM_ACTIVE};
    gfl_profiler_host h;
    char err[256] = "", chip[64];
    assert_int_equal(gfl_profiler_host_create(&h, &old, CUPTI_PROFILER_TYPE_PM_SAMPLING, FAKE_CUPTI_CHIP, NULL, metrics,
                                              1, err, sizeof err),
                     GFL_CUPTI_MISSING);
    assert_non_null(strstr(err, "cuptiDeviceGetChipName"));
    assert_int_equal(gfl_profiler_chip_name(&old, 0, chip, sizeof chip, err, sizeof err), GFL_CUPTI_MISSING);
    assert_non_null(strstr(err, "lacks it"));
    assert_null(gfl_cupti_profiler_host_missing(&api));
    /* the fake is CUDA 13.0's: no single-pass metric sets */
    char **names;
    size_t n;
    assert_int_equal(gfl_profiler_single_pass_set(&api, FAKE_CUPTI_CHIP, "Throughput", &names, &n, err, sizeof err),
                     GFL_CUPTI_MISSING);
    assert_null(names);
    assert_non_null(strstr(err, "cuptiProfilerHostGetMetricsInSinglePassSet"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chip_name),
        cmocka_unit_test(test_config_image),
        cmocka_unit_test(test_unknown_metric_is_named),
        cmocka_unit_test(test_passes),
        cmocka_unit_test(test_evaluate_in_asked_order),
        cmocka_unit_test(test_missing_functions_are_named),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
