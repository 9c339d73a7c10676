/*
 * PM sampling as a recorder source (backend/cupti/pm_source.c, option
 * pm_sampling_metrics): whole Trace sessions through the built CUPTI
 * plugin against the fake libcupti, read back from both formats.
 *
 * Why: the samples must land on the session's clock (the GPU's timer is
 * mapped), once each, with their metric names and values, in trace.gflt
 * and device.log alike; a metric the GPU lacks must be left out with a
 * warning while the others are sampled; and a GPU that refuses PM sampling
 * must leave a session that records everything else.
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
#include <time.h>
#include <unistd.h>

#include "fake_cupti.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "test_util.h"

#include <jansson.h>

static struct {
    void *lib;
    __typeof__(&fake_cupti_pm_samples) samples;
    __typeof__(&fake_cupti_pm_refuse) refuse;
    __typeof__(&fake_cupti_pm_started) started;
    __typeof__(&fake_cupti_pm_activity_clock) activity_clock;
    unsigned *primary_active; /* the fake driver's: bit per device whose primary context exists */
    int *retained;            /* its retain counts per device */
} fake;

/* The recorder starts PM sampling on its own thread: until it did, or 2 s. */
static bool wait_started(void)
{
    for (int i = 0; i < 400 && !fake.started(0); i++)
        usleep(5000);
    return fake.started(0);
}

static char *log_path;

static gpufl_options options(const char *metrics)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_BOTH;
    log_path = tu_mkdtemp("pm");
    o.app_name = "pm-test";
    o.log_path = log_path;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.system_sample_rate_ms = 0;
    o.pm_sampling_metrics = metrics;
    o.pm_sampling_interval_us = 20;
    return o;
}

static void check_samples(const char *path, uint64_t n_expected, uint64_t t0, uint64_t t1)
{
    gpufl_trace *t = NULL;
    char err[512];
    assert_int_equal(gpufl_trace_open(path, &t, err, sizeof err), 0);
    const gpufl_trace_pm_samples *s = gpufl_trace_get_pm_samples(t);
    assert_int_equal(s->n, n_expected);
    size_t sm = 0, dram = 0;
    for (size_t i = 0; i < s->n; i++) {
        const char *metric = gpufl_trace_string(t, s->metric[i]);
        assert_int_equal(s->end_ns[i] - s->ts_ns[i], 20000);
        if (!(s->ts_ns[i] >= t0 && s->end_ns[i] <= t1))
            fail_msg("sample %zu [%llu, %llu] outside [%llu, %llu]", i, (unsigned long long)s->ts_ns[i],
                     (unsigned long long)s->end_ns[i], (unsigned long long)t0, (unsigned long long)t1);
        assert_int_equal(s->device[i], 0);
        if (!strcmp(metric, FAKE_CUPTI_SM_ACTIVE)) {
            assert_true(s->value[i] == 75.0);
            sm++;
        } else if (!strcmp(metric, FAKE_CUPTI_DRAM_READ)) {
            assert_true(s->value[i] == 0.75 * FAKE_CUPTI_DRAM_READ_PEAK);
            dram++;
        } else {
            fail_msg("unexpected metric %s", metric);
        }
    }
    assert_int_equal(sm, n_expected / 2);
    assert_int_equal(dram, n_expected / 2);
    assert_int_equal(gpufl_trace_table_memory_bytes(t, GPUFL_TRACE_TABLE_PM_SAMPLES) > 0, n_expected > 0);
    gpufl_trace_close(t);
}

/* The Chrome export draws each metric as a counter track of the device,
 * one value per sample. */
static void check_chrome_counters(const char *dir)
{
    char out[4096];
    snprintf(out, sizeof out, "%s/export.json", dir);
    const char *args[] = {dir, "-f", "chrome", "-o", out, NULL};
    char *so = NULL, *se = NULL;
    assert_int_equal(tu_run_subcommand(GFL_CLI, "export", args, &so, &se), 0);
    free(so);
    free(se);
    json_error_t jerr;
    json_t *root = json_load_file(out, 0, &jerr);
    assert_non_null(root);
    json_t *events = json_is_array(root) ? root : json_object_get(root, "traceEvents");
    assert_non_null(events);
    size_t sm = 0, dram = 0, i;
    json_t *e;
    json_array_foreach(events, i, e)
    {
        const char *ph = tu_str(e, "ph"), *name = tu_str(e, "name");
        if (!ph || strcmp(ph, "C") || !name)
            continue;
        if (strstr(name, "GPU 0 " FAKE_CUPTI_SM_ACTIVE))
            sm++;
        else if (strstr(name, "GPU 0 " FAKE_CUPTI_DRAM_READ))
            dram++;
    }
    json_decref(root);
    assert_int_equal(sm, 500);
    assert_int_equal(dram, 500);
    /* and Perfetto names a track for each */
    snprintf(out, sizeof out, "%s/export.perfetto-trace", dir);
    const char *pargs[] = {dir, "-f", "perfetto", "-o", out, NULL};
    assert_int_equal(tu_run_subcommand(GFL_CLI, "export", pargs, &so, &se), 0);
    free(so);
    free(se);
    FILE *f = fopen(out, "rb");
    assert_non_null(f);
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_non_null(memmem(buf, n, "GPU 0 " FAKE_CUPTI_SM_ACTIVE, strlen("GPU 0 " FAKE_CUPTI_SM_ACTIVE)));
    assert_non_null(memmem(buf, n, "GPU 0 " FAKE_CUPTI_DRAM_READ, strlen("GPU 0 " FAKE_CUPTI_DRAM_READ)));
}

/* The text report sums each metric up. */
static void check_report(const char *dir)
{
    const char *args[] = {dir, NULL};
    char *so = NULL, *se = NULL;
    assert_int_equal(tu_run_subcommand(GFL_CLI, "report", args, &so, &se), 0);
    const char *sec = strstr(so, "PM sampling");
    assert_non_null(sec);
    const char *sm = strstr(sec, FAKE_CUPTI_SM_ACTIVE);
    assert_non_null(sm);
    unsigned dev = 9;
    char samples[32], time_num[32], time_unit[16];
    double mean = 0, max = 0;
    assert_int_equal(sscanf(sm - 6, " %u %*s %31s %31s %15s %lf %lf", &dev, samples, time_num, time_unit, &mean, &max),
                     6);
    assert_int_equal(dev, 0);
    assert_string_equal(samples, "500");
    assert_true(mean == 75.0 && max == 75.0);
    free(so);
    free(se);
}

static void test_samples_in_both_formats(void **state)
{
    (void)state;
    gpufl_options o = options(FAKE_CUPTI_SM_ACTIVE ",sm__not_on_this_chip.sum," FAKE_CUPTI_DRAM_READ);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    assert_true(gpufl_init(&o));
    assert_true(wait_started());
    assert_int_equal(fake.samples(0, 300, 0.75), 300);
    usleep(150000); /* a decode in between */
    assert_int_equal(fake.samples(0, 200, 0.75), 200);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t1 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    gpufl_shutdown();
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    /* on the session clock: inside the session (the fake's 500 samples of
     * 20 us from its start are 10 ms, well before t1) */
    check_samples(dir, 1000, t0, t1);
    char log[4096];
    snprintf(log, sizeof log, "%s/device.log", dir);
    check_samples(log, 1000, t0, t1);
    assert_true(tu_logged(dir, "sm__not_on_this_chip.sum", "left out"));
    check_chrome_counters(dir);
    check_report(dir);
    assert_int_equal(fake.retained[0], 0); /* the context it worked in, given back */
    free(dir);
    tu_rm_rf(log_path);
    free(log_path);
}

static void test_refused_device_leaves_a_session(void **state)
{
    (void)state;
    fake.refuse(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    gpufl_options o = options("default");
    assert_true(gpufl_init(&o));
    assert_true(gpufl_is_recording());
    fake_cupti_kernel k = {.name = "k", .grid = {1, 1, 1}, .block = {32, 1, 1}};
    __typeof__(&fake_cupti_launch_kernel) launch =
        (__typeof__(&fake_cupti_launch_kernel))dlsym(fake.lib, "fake_cupti_launch_kernel");
    launch(&k);
    usleep(300000); /* the refusal comes from the PM thread */
    gpufl_shutdown();
    fake.refuse(CUPTI_SUCCESS);
    char *dir = tu_session_dir(log_path);
    gpufl_trace *t = NULL;
    char err[512];
    assert_int_equal(gpufl_trace_open(dir, &t, err, sizeof err), 0);
    assert_int_equal(gpufl_trace_get_pm_samples(t)->n, 0);
    assert_int_equal(gpufl_trace_get_kernels(t)->n, 1);
    gpufl_trace_close(t);
    assert_true(tu_logged(dir, "no PM sampling on device 0", "NVreg_RestrictProfilingToAdminUsers"));
    free(dir);
    tu_rm_rf(log_path);
    free(log_path);
}

/* A session that starts before the program made a CUDA context: PM
 * sampling waits for it (CUPTI's PM calls need it), then samples. */
static void test_waits_for_the_programs_context(void **state)
{
    (void)state;
    *fake.primary_active = 0;
    gpufl_options o = options(FAKE_CUPTI_SM_ACTIVE);
    assert_true(gpufl_init(&o));
    usleep(120000);
    assert_false(fake.started(0));
    assert_int_equal(fake.retained[0], 0);
    *fake.primary_active = 1;
    assert_true(wait_started());
    assert_int_equal(fake.retained[0], 1);
    assert_int_equal(fake.samples(0, 40, 0.5), 40);
    gpufl_shutdown();
    assert_int_equal(fake.retained[0], 0);
    char *dir = tu_session_dir(log_path);
    gpufl_trace *t = NULL;
    char err[512];
    assert_int_equal(gpufl_trace_open(dir, &t, err, sizeof err), 0);
    assert_int_equal(gpufl_trace_get_pm_samples(t)->n, 40);
    gpufl_trace_close(t);
    free(dir);
    tu_rm_rf(log_path);
    free(log_path);
}

/* CUPTI 13.0 on an H100 gave PM timestamps in the clock registered for
 * the activity records (the session's), not the GPU's realtime-like timer:
 * they are taken as they are, not shifted by the realtime offset (which
 * put every sample decades before the session and dropped it). */
static void test_samples_in_the_activity_clock(void **state)
{
    (void)state;
    fake.activity_clock(true);
    gpufl_options o = options(FAKE_CUPTI_SM_ACTIVE "," FAKE_CUPTI_DRAM_READ);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    assert_true(gpufl_init(&o));
    assert_true(wait_started());
    assert_int_equal(fake.samples(0, 300, 0.75), 300);
    /* the fake lays its samples 20 us apart from sampling's start on: the
     * last of 300 may end up to 6 ms after they were made */
    usleep(10000);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t1 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    gpufl_shutdown();
    fake.activity_clock(false);
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    check_samples(dir, 600, t0, t1);
    free(dir);
    tu_rm_rf(log_path);
    free(log_path);
}

static int setup(void **state)
{
    (void)state;
    setenv("GPUFL_CUPTI_LIBRARY", GFL_FAKE_CUPTI, 1);
    fake.lib = dlopen(GFL_FAKE_CUPTI, RTLD_NOW | RTLD_LOCAL);
    if (!fake.lib)
        return -1;
    fake.samples = (__typeof__(fake.samples))dlsym(fake.lib, "fake_cupti_pm_samples");
    fake.refuse = (__typeof__(fake.refuse))dlsym(fake.lib, "fake_cupti_pm_refuse");
    fake.started = (__typeof__(fake.started))dlsym(fake.lib, "fake_cupti_pm_started");
    fake.activity_clock = (__typeof__(fake.activity_clock))dlsym(fake.lib, "fake_cupti_pm_activity_clock");
    /* the driver the plugin finds as the program's (dlopen RTLD_NOLOAD) */
    void *cuda = dlopen(GFL_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    if (!cuda)
        return -1;
    fake.primary_active = dlsym(cuda, "fake_cuda_primary_active");
    fake.retained = dlsym(cuda, "fake_cuda_retained");
    return fake.samples && fake.refuse && fake.started && fake.primary_active && fake.retained ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_in_both_formats),
        cmocka_unit_test(test_refused_device_leaves_a_session),
        cmocka_unit_test(test_waits_for_the_programs_context),
        cmocka_unit_test(test_samples_in_the_activity_clock),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
