/*
 * The PM sampling API (include/gpufl/pm_sampling.h) end to end: libgpufl's
 * calls, the device plugin's table (GPUFL_DEVICE_PLUGIN) and its CUPTI
 * code, against the fake libcupti (tests/fake_cupti/fake_pm_sampling.c)
 * as GPUFL_CUPTI_LIBRARY.
 *
 * Why: users drive this state machine by hand, from C and Python, so each
 * misuse must get its own kind and a message that says what to do (not
 * CUPTI's INVALID_OPERATION); samples must come back once each, in order,
 * with their values in the order the metrics were given, across decodes
 * that stop because the counter data image is full; a hardware buffer that
 * overflows must say so; and a machine without the plugin must say that.
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
#include <sys/wait.h>
#include <unistd.h>

#include "fake_cupti.h"
#include "gpufl/pm_sampling.h"

static struct {
    void *lib;
    __typeof__(&fake_cupti_pm_samples) samples;
    __typeof__(&fake_cupti_pm_refuse) refuse;
    __typeof__(&fake_cupti_profiler_devices) devices;
    __typeof__(&fake_cupti_profiler_hosts_alive) hosts_alive;
    __typeof__(&fake_cupti_pm_image_limit) image_limit;
} fake;

static const char *const two[] = {FAKE_CUPTI_SM_ACTIVE, FAKE_CUPTI_DRAM_READ};

/* Enabled and configured for two metrics with defaults but what is given. */
static gpufl_pm_collector *ready(int device, uint64_t buffer_bytes, gpufl_pm_append_mode append)
{
    gpufl_pm_collector *c = NULL;
    assert_int_equal(gpufl_pm_collector_create(device, &c), 0);
    assert_int_equal(gpufl_pm_enable(c), 0);
    gpufl_pm_config cfg;
    gpufl_pm_config_init(&cfg);
    cfg.metrics = two;
    cfg.num_metrics = 2;
    if (buffer_bytes)
        cfg.hardware_buffer_size = buffer_bytes;
    cfg.append_mode = append;
    assert_int_equal(gpufl_pm_configure(c, &cfg), 0);
    return c;
}

static void test_without_plugin(void **state)
{
    (void)state;
    /* The table is loaded once per process: ask in a child that never did. */
    pid_t pid = fork();
    if (pid == 0) {
        setenv("GPUFL_DEVICE_PLUGIN", "/nonexistent/libgpufl_cupti.so", 1);
        gpufl_pm_collector *c = NULL;
        int rc = gpufl_pm_collector_create(0, &c);
        int enable_rc = gpufl_pm_enable(c);
        bool named = strstr(gpufl_pm_last_error(c), "/nonexistent/libgpufl_cupti.so") != NULL;
        gpufl_pm_collector_destroy(c);
        _exit(rc == GPUFL_PM_E_LIBRARY_NOT_LOADED && enable_rc == GPUFL_PM_E_LIBRARY_NOT_LOADED && named ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_samples_in_order(void **state)
{
    (void)state;
    gpufl_pm_collector *c = ready(0, 0, GPUFL_PM_APPEND_KEEP_OLDEST);
    assert_int_equal(gpufl_pm_start(c), 0);
    assert_int_equal(fake.samples(0, 5, 0.5), 5);
    gpufl_pm_counter_data *d = NULL;
    assert_int_equal(gpufl_pm_decode(c, 0, &d), 0);
    assert_int_equal(d->num_samples, 5);
    assert_int_equal(d->num_metrics, 2);
    assert_string_equal(d->metrics[0], FAKE_CUPTI_SM_ACTIVE);
    assert_string_equal(d->metrics[1], FAKE_CUPTI_DRAM_READ);
    assert_string_equal(d->chip_name, FAKE_CUPTI_CHIP);
    assert_int_equal(d->num_total_samples, GPUFL_PM_DEFAULT_MAX_SAMPLES);
    assert_int_equal(d->num_populated_samples, 5);
    assert_int_equal(d->num_completed_samples, 5);
    for (uint64_t i = 0; i < 5; i++) {
        assert_int_equal(d->end_ns[i] - d->start_ns[i], GPUFL_PM_DEFAULT_SAMPLING_INTERVAL);
        if (i)
            assert_int_equal(d->start_ns[i], d->end_ns[i - 1]);
        assert_true(d->values[i * 2] == 50.0);
        assert_true(d->values[i * 2 + 1] == 0.5 * FAKE_CUPTI_DRAM_READ_PEAK);
    }
    assert_false(d->overflow);
    assert_false(d->more);
    uint64_t last = d->end_ns[4];
    gpufl_pm_counter_data_free(d);
    /* the next decode has only what came since */
    assert_int_equal(fake.samples(0, 2, 1.0), 2);
    assert_int_equal(gpufl_pm_stop(c), 0);
    assert_int_equal(gpufl_pm_decode(c, 0, &d), 0);
    assert_int_equal(d->num_samples, 2);
    assert_int_equal(d->start_ns[0], last);
    assert_true(d->values[0] == 100.0);
    assert_int_equal(d->num_populated_samples, 7);
    gpufl_pm_counter_data_free(d);
    assert_int_equal(gpufl_pm_disable(c), 0);
    gpufl_pm_collector_destroy(c);
    assert_int_equal(fake.hosts_alive(), 0);
}

static void test_decode_across_full_images(void **state)
{
    (void)state;
    gpufl_pm_collector *c = ready(0, 0, GPUFL_PM_APPEND_KEEP_OLDEST);
    assert_int_equal(gpufl_pm_start(c), 0);
    assert_int_equal(fake.samples(0, 7, 0.25), 7);
    gpufl_pm_counter_data *d = NULL;
    uint64_t seen = 0, last_end = 0;
    int decodes = 0;
    do {
        if (d)
            gpufl_pm_counter_data_free(d);
        assert_int_equal(gpufl_pm_decode(c, 3, &d), 0);
        assert_true(d->num_samples <= 3);
        if (d->num_samples) {
            assert_true(d->start_ns[0] >= last_end);
            last_end = d->end_ns[d->num_samples - 1];
        }
        seen += d->num_samples;
        decodes++;
    } while (d->more && decodes < 10);
    gpufl_pm_counter_data_free(d);
    assert_int_equal(seen, 7);
    assert_int_equal(decodes, 3);
    gpufl_pm_collector_destroy(c); /* stops and disables */
    assert_int_equal(fake.hosts_alive(), 0);
}

/* CUPTI refuses to decode into a large image: the collector halves it
 * until it decodes, and every sample still comes back once, in order. */
static void test_image_too_large_for_cupti(void **state)
{
    (void)state;
    fake.image_limit(2 * 1500);
    gpufl_pm_collector *c = ready(0, 0, GPUFL_PM_APPEND_KEEP_OLDEST);
    assert_int_equal(gpufl_pm_start(c), 0);
    assert_int_equal(fake.samples(0, 4000, 1.0), 4000);
    uint64_t seen = 0, last_end = 0;
    for (int i = 0; i < 20; i++) {
        gpufl_pm_counter_data *d = NULL;
        assert_int_equal(gpufl_pm_decode(c, 10000, &d), 0);
        assert_true(d->num_samples <= 1500);
        assert_true(d->num_total_samples <= 1500);
        if (d->num_samples) {
            assert_true(d->start_ns[0] >= last_end);
            last_end = d->end_ns[d->num_samples - 1];
        }
        seen += d->num_samples;
        bool more = d->more;
        gpufl_pm_counter_data_free(d);
        if (!more)
            break;
    }
    assert_int_equal(seen, 4000);
    fake.image_limit(0);
    gpufl_pm_collector_destroy(c);
}

static void test_overflow(void **state)
{
    (void)state;
    /* room for 50 raw samples of two metrics in the fake's buffer */
    gpufl_pm_collector *c = ready(0, 50 * (64 + 16), GPUFL_PM_APPEND_KEEP_OLDEST);
    assert_int_equal(gpufl_pm_start(c), 0);
    assert_int_equal(fake.samples(0, 60, 1.0), 50);
    gpufl_pm_counter_data *d = NULL;
    assert_int_equal(gpufl_pm_decode(c, 0, &d), 0);
    assert_int_equal(d->num_samples, 50);
    assert_true(d->overflow);
    uint64_t kept_end = d->end_ns[49];
    gpufl_pm_counter_data_free(d);
    /* the ten lost were the newest: the next sample comes ten intervals later */
    assert_int_equal(fake.samples(0, 1, 1.0), 1);
    assert_int_equal(gpufl_pm_decode(c, 0, &d), 0);
    assert_int_equal(d->start_ns[0] - kept_end, 10 * GPUFL_PM_DEFAULT_SAMPLING_INTERVAL);
    assert_false(d->overflow);
    gpufl_pm_counter_data_free(d);
    gpufl_pm_collector_destroy(c);

    c = ready(0, 50 * (64 + 16), GPUFL_PM_APPEND_KEEP_LATEST);
    assert_int_equal(gpufl_pm_start(c), 0);
    assert_int_equal(fake.samples(0, 60, 1.0), 60);
    assert_int_equal(gpufl_pm_decode(c, 0, &d), 0);
    assert_int_equal(d->num_samples, 50);
    assert_false(d->overflow);
    /* the ten overwritten were the oldest: the next sample follows the last kept */
    kept_end = d->end_ns[49];
    gpufl_pm_counter_data_free(d);
    assert_int_equal(fake.samples(0, 1, 1.0), 1);
    assert_int_equal(gpufl_pm_decode(c, 0, &d), 0);
    assert_int_equal(d->start_ns[0], kept_end);
    gpufl_pm_counter_data_free(d);
    gpufl_pm_collector_destroy(c);
}

static void test_misuse_kinds(void **state)
{
    (void)state;
    gpufl_pm_collector *c = NULL;
    assert_int_equal(gpufl_pm_collector_create(0, &c), 0);
    gpufl_pm_config cfg;
    gpufl_pm_config_init(&cfg);
    cfg.metrics = two;
    cfg.num_metrics = 2;
    gpufl_pm_counter_data *d = (gpufl_pm_counter_data *)&cfg;
    assert_int_equal(gpufl_pm_configure(c, &cfg), GPUFL_PM_E_NOT_ENABLED);
    assert_non_null(strstr(gpufl_pm_last_error(c), "enable()"));
    assert_int_equal(gpufl_pm_start(c), GPUFL_PM_E_NOT_ENABLED);
    assert_int_equal(gpufl_pm_decode(c, 0, &d), GPUFL_PM_E_NOT_ENABLED);
    assert_null(d);
    assert_int_equal(gpufl_pm_disable(c), GPUFL_PM_E_NOT_ENABLED);
    assert_int_equal(gpufl_pm_enable(c), 0);
    assert_int_equal(gpufl_pm_enable(c), GPUFL_PM_E_ALREADY_ENABLED);
    gpufl_pm_collector *other = NULL;
    assert_int_equal(gpufl_pm_collector_create(0, &other), 0);
    assert_int_equal(gpufl_pm_enable(other), GPUFL_PM_E_ALREADY_ENABLED);
    assert_non_null(strstr(gpufl_pm_last_error(other), "another collector"));
    assert_int_equal(gpufl_pm_start(c), GPUFL_PM_E_NOT_CONFIGURED);
    assert_int_equal(gpufl_pm_decode(c, 0, &d), GPUFL_PM_E_NOT_CONFIGURED);
    assert_int_equal(gpufl_pm_stop(c), GPUFL_PM_E_ALREADY_STOPPED);
    assert_int_equal(gpufl_pm_configure(c, &cfg), 0);
    assert_int_equal(gpufl_pm_start(c), 0);
    assert_int_equal(gpufl_pm_start(c), GPUFL_PM_E_ALREADY_STARTED);
    assert_int_equal(gpufl_pm_configure(c, &cfg), GPUFL_PM_E_ALREADY_STARTED);
    assert_int_equal(gpufl_pm_stop(c), 0);
    assert_int_equal(gpufl_pm_stop(c), GPUFL_PM_E_ALREADY_STOPPED);
    /* configure again while stopped, start again */
    assert_int_equal(gpufl_pm_configure(c, &cfg), 0);
    assert_int_equal(gpufl_pm_start(c), 0);
    assert_int_equal(gpufl_pm_disable(c), 0); /* stops first */
    assert_int_equal(gpufl_pm_enable(other), 0);
    assert_int_equal(gpufl_pm_disable(other), 0);
    gpufl_pm_collector_destroy(other);
    gpufl_pm_collector_destroy(c);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    gpufl_pm_collector *c = NULL;
    assert_int_equal(gpufl_pm_collector_create(0, &c), 0);
    assert_int_equal(gpufl_pm_enable(c), 0);
    gpufl_pm_config cfg;
    gpufl_pm_config_init(&cfg);
    assert_int_equal(gpufl_pm_configure(c, &cfg), GPUFL_PM_E_INVALID_ARGUMENT); /* no metrics */
    const char *unknown[] = {FAKE_CUPTI_SM_ACTIVE, "sm__warps_launched.sum.typo"};
    cfg.metrics = unknown;
    cfg.num_metrics = 2;
    assert_int_equal(gpufl_pm_configure(c, &cfg), GPUFL_PM_E_INVALID_ARGUMENT);
    assert_non_null(strstr(gpufl_pm_last_error(c), "sm__warps_launched.sum.typo"));
    const char *two_pass[] = {"multipass__l1tex_hit_rate.pct"};
    cfg.metrics = two_pass;
    cfg.num_metrics = 1;
    assert_int_equal(gpufl_pm_configure(c, &cfg), GPUFL_PM_E_INVALID_ARGUMENT);
    assert_non_null(strstr(gpufl_pm_last_error(c), "2 passes"));
    cfg.metrics = two;
    cfg.num_metrics = 2;
    cfg.trigger_mode = (gpufl_pm_trigger_mode)7;
    assert_int_equal(gpufl_pm_configure(c, &cfg), GPUFL_PM_E_INVALID_ARGUMENT);
    gpufl_pm_config_init(&cfg);
    cfg.metrics = two;
    cfg.num_metrics = 2;
    cfg.sampling_interval = 0;
    assert_int_equal(gpufl_pm_configure(c, &cfg), GPUFL_PM_E_INVALID_ARGUMENT);
    /* a caller built against an older, shorter struct gets the defaults for the rest */
    gpufl_pm_config_init(&cfg);
    cfg.metrics = two;
    cfg.num_metrics = 2;
    cfg.size = offsetof(gpufl_pm_config, hardware_buffer_size);
    cfg.sampling_interval = 0; /* beyond its size: ignored */
    assert_int_equal(gpufl_pm_configure(c, &cfg), 0);
    /* the set API is CUPTI 13.1's: this fake (13.0) lacks it */
    gpufl_pm_config_init(&cfg);
    cfg.single_pass_metric_set_name = "Throughput";
    assert_int_equal(gpufl_pm_configure(c, &cfg), GPUFL_PM_E_LIBRARY_NOT_LOADED);
    assert_non_null(strstr(gpufl_pm_last_error(c), "cuptiProfilerHostGetMetricsInSinglePassSet"));
    gpufl_pm_collector_destroy(c);
    assert_int_equal(fake.hosts_alive(), 0);
}

static void test_device_and_permission_errors(void **state)
{
    (void)state;
    gpufl_pm_collector *c = NULL;
    assert_int_equal(gpufl_pm_collector_create(3, &c), 0);
    assert_int_equal(gpufl_pm_enable(c), GPUFL_PM_E_INVALID_DEVICE);
    assert_non_null(strstr(gpufl_pm_last_error(c), "device 3"));
    gpufl_pm_collector_destroy(c);
    assert_int_equal(gpufl_pm_collector_create(-1, &c), GPUFL_PM_E_INVALID_DEVICE);
    assert_int_equal(gpufl_pm_start(c), GPUFL_PM_E_INVALID_DEVICE);
    gpufl_pm_collector_destroy(c);

    assert_int_equal(gpufl_pm_collector_create(0, &c), 0);
    fake.refuse(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    assert_int_equal(gpufl_pm_enable(c), GPUFL_PM_E_INSUFFICIENT_PRIVILEGES);
    assert_non_null(strstr(gpufl_pm_last_error(c), "NVreg_RestrictProfilingToAdminUsers"));
    fake.refuse(CUPTI_ERROR_HARDWARE_BUSY);
    assert_int_equal(gpufl_pm_enable(c), GPUFL_PM_E_BUSY);
    assert_non_null(strstr(gpufl_pm_last_error(c), "ncu"));
    fake.refuse(CUPTI_SUCCESS);
    /* a refused enable left the device free */
    assert_int_equal(gpufl_pm_enable(c), 0);
    gpufl_pm_collector_destroy(c);
}

static void test_error_strings(void **state)
{
    (void)state;
    for (int s = GPUFL_PM_OK; s >= GPUFL_PM_E_INTERNAL; s--) {
        const char *text = gpufl_pm_error_string(s);
        assert_non_null(strstr(text, "GPUFL_PM_"));
        for (int t = s + 1; t <= GPUFL_PM_OK; t++)
            assert_string_not_equal(text, gpufl_pm_error_string(t));
    }
    assert_string_equal(gpufl_pm_error_string(-99), "unknown gpufl_pm_status");
    assert_int_equal(gpufl_pm_collector_create(0, NULL), GPUFL_PM_E_INVALID_ARGUMENT);
    assert_int_equal(gpufl_pm_enable(NULL), GPUFL_PM_E_INVALID_ARGUMENT);
    assert_string_equal(gpufl_pm_last_error(NULL), "");
}

static int setup(void **state)
{
    (void)state;
    setenv("GPUFL_CUPTI_LIBRARY", GFL_FAKE_CUPTI, 1);
    setenv("GPUFL_DEVICE_PLUGIN", GFL_CUPTI_PLUGIN, 1);
    fake.lib = dlopen(GFL_FAKE_CUPTI, RTLD_NOW | RTLD_LOCAL);
    if (!fake.lib)
        return -1;
    fake.samples = (__typeof__(fake.samples))dlsym(fake.lib, "fake_cupti_pm_samples");
    fake.refuse = (__typeof__(fake.refuse))dlsym(fake.lib, "fake_cupti_pm_refuse");
    fake.devices = (__typeof__(fake.devices))dlsym(fake.lib, "fake_cupti_profiler_devices");
    fake.hosts_alive = (__typeof__(fake.hosts_alive))dlsym(fake.lib, "fake_cupti_profiler_hosts_alive");
    fake.image_limit = (__typeof__(fake.image_limit))dlsym(fake.lib, "fake_cupti_pm_image_limit");
    return fake.samples && fake.refuse && fake.devices && fake.hosts_alive && fake.image_limit ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_without_plugin),
        cmocka_unit_test(test_samples_in_order),
        cmocka_unit_test(test_decode_across_full_images),
        cmocka_unit_test(test_image_too_large_for_cupti),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_misuse_kinds),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_device_and_permission_errors),
        cmocka_unit_test(test_error_strings),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
