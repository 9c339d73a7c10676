/*
 * The range_profiler engine of the CUPTI plugin against the fake libcupti
 * (tests/fake_cupti/fake_range_profiler.c): the profiled thread's scopes
 * become ranges that follow the innermost scope, each range's metrics come
 * out as range_metric rows with the scope's id and name, passes are
 * decoded as they fill, NVTX ranges make ranges on request, and every
 * refusal (counters taken, metrics that need two passes or that the chip
 * lacks, PM sampling asked for too) leaves a trace session that says why.
 *
 * Why: CI has no GPU; everything between CUPTI's range profiler calls and
 * the trace is checked here, the GPU test (tests/gpu/test_range_profiler.cu)
 * checks the real CUPTI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_cupti.h"
#include "fake_cupti_setup.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"

// clang-format off
#define FAKE_FUNCTIONS(X)                                                                          \
    X(create_context) X(destroy_context) X(launch_kernel) X(rp_refuse) X(rp_state_get)             \
    X(nvtx_push) X(nvtx_pop) X(profiler_refuse_init)
// clang-format on

static struct {
    void *lib;
#define AS_FIELD(name) __typeof__(&fake_cupti_##name) name;
    FAKE_FUNCTIONS(AS_FIELD)
#undef AS_FIELD
} fake;

static char *logs;
static uint32_t next_context = 1;

static int setup(void **state)
{
    (void)state;
    TU_FAKE_CUPTI_SETUP();
    logs = tu_mkdtemp("rp_plugin");
    return 0;
}

static gpufl_options options(const char *app)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = app;
    o.log_path = logs;
    o.profiling_engine = GPUFL_ENGINE_RANGE_PROFILER;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.log_format = GPUFL_LOG_BOTH;
    o.system_sample_rate_ms = 0;
    return o;
}

/* Starts a session of o on a fresh context; returns the context. */
static uint32_t start(const gpufl_options *o)
{
    fake.rp_refuse(CUPTI_SUCCESS);
    assert_true(gpufl_init(o));
    uint32_t ctx = next_context++;
    fake.create_context(ctx, 0);
    return ctx;
}

static void kernel(uint64_t ns)
{
    fake_cupti_kernel k = {.name = "k", .grid = {1, 1, 1}, .block = {32, 1, 1}, .duration_ns = ns};
    fake.launch_kernel(&k);
}

static gpufl_trace *open_trace(const char *path)
{
    gpufl_trace *t = NULL;
    char err[512];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        fail_msg("%s: %s", path, err);
    return t;
}

/* Shuts the session down; *dir gets its directory. */
static gpufl_trace *finish(char *dir, size_t len)
{
    snprintf(dir, len, "%s", gpufl_session_dir());
    gpufl_shutdown();
    return open_trace(dir);
}

/* Value of metric in range number `range`, or -1. */
static double value_of(const gpufl_trace *t, uint32_t range, const char *metric)
{
    const gpufl_trace_range_metrics *r = gpufl_trace_get_range_metrics(t);
    for (size_t i = 0; i < r->n; i++)
        if (r->range[i] == range && !strcmp(tu_trace_text(t, r->metric[i]), metric))
            return r->value[i];
    return -1;
}

static const char *name_of_range(const gpufl_trace *t, uint32_t range, uint64_t *scope)
{
    const gpufl_trace_range_metrics *r = gpufl_trace_get_range_metrics(t);
    for (size_t i = 0; i < r->n; i++)
        if (r->range[i] == range) {
            if (scope)
                *scope = r->scope_id[i];
            return tu_trace_text(t, r->name[i]);
        }
    return NULL;
}

/* The scope id the trace's scopes table gives the n-th scope named name. */
static uint64_t scope_id(const gpufl_trace *t, const char *name, int nth)
{
    const gpufl_trace_scopes *s = gpufl_trace_get_scopes(t);
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(tu_trace_text(t, s->name[i]), name) && nth-- == 0)
            return s->id[i];
    return 0;
}

/* scopes: the trace has the scopes too (device.log alone has not). */
static void check_ranges(const gpufl_trace *t, bool scopes)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "range_profiler");
    /* step [1000] fwd [2000 + 500] step [3000] fwd2 [700]; the chip lacks
     * the tensor metric and a 9th metric would need a second pass: 8
     * metrics a range */
    const gpufl_trace_range_metrics *r = gpufl_trace_get_range_metrics(t);
    assert_int_equal(r->n, 4 * 8);
    uint64_t scope = 0;
    assert_string_equal(name_of_range(t, 1, &scope), "step");
    if (scopes)
        assert_int_equal(scope, scope_id(t, "step", 0));
    assert_true(value_of(t, 1, "gpu__time_duration.sum") == 1000.0);
    assert_true(value_of(t, 1, "dram__bytes_read.sum") == 2000.0);
    assert_string_equal(name_of_range(t, 2, &scope), "fwd");
    if (scopes)
        assert_int_equal(scope, scope_id(t, "fwd", 0));
    assert_int_not_equal(scope, 0);
    assert_true(value_of(t, 2, "gpu__time_duration.sum") == 2500.0);
    assert_true(value_of(t, 2, "lts__t_sector_hit_rate.pct") == 80.0 * 2500.0 / 1e6);
    assert_string_equal(name_of_range(t, 3, NULL), "step");
    assert_true(value_of(t, 3, "gpu__time_duration.sum") == 3000.0);
    assert_string_equal(name_of_range(t, 4, NULL), "fwd2");
    assert_true(value_of(t, 4, "gpu__time_duration.sum") == 700.0);
    assert_true(value_of(t, 1, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum") < 0);
    assert_true(value_of(t, 1, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active") < 0);
    for (size_t i = 0; i < r->n; i++)
        assert_true(r->end_ns[i] >= r->ts_ns[i]);
}

static void scopes_become_ranges_in_both_formats(void **state)
{
    (void)state;
    gpufl_options o = options("rp_scopes");
    start(&o);
    gpufl_scope step = gpufl_scope_begin("step");
    kernel(1000);
    gpufl_scope fwd = gpufl_scope_begin("fwd");
    kernel(2000);
    kernel(500);
    gpufl_scope_end(fwd);
    kernel(3000);
    gpufl_scope fwd2 = gpufl_scope_begin("fwd2");
    kernel(700);
    gpufl_scope_end(step); /* ends fwd2 too */
    (void)fwd2;
    kernel(9999); /* outside every scope: no range */
    fake_cupti_rp_state st;
    fake.rp_state_get(&st);
    assert_true(st.enabled);
    assert_int_equal(st.max_depth, 1); /* one level: ranges never nest in CUPTI */
    char dir[4096];
    gpufl_trace *t = finish(dir, sizeof dir);
    check_ranges(t, true);
    gpufl_trace_close(t);
    char log[4200];
    snprintf(log, sizeof log, "%s/device.log", dir);
    t = open_trace(log);
    check_ranges(t, false);
    gpufl_trace_close(t);
    fake.rp_state_get(&st);
    assert_false(st.enabled);
}

/* More ranges than a pass holds: the full pass is decoded and a new one
 * started, nothing lost. */
static void full_passes_are_decoded_as_they_fill(void **state)
{
    (void)state;
    gpufl_options o = options("rp_passes");
    o.range_profiler_metrics = "gpu__time_duration.sum,dram__bytes_write.sum";
    start(&o);
    for (int i = 0; i < 1300; i++) {
        gpufl_scope s = gpufl_scope_begin("layer");
        kernel(100 + (uint64_t)i);
        gpufl_scope_end(s);
    }
    char dir[4096];
    gpufl_trace *t = finish(dir, sizeof dir);
    const gpufl_trace_range_metrics *r = gpufl_trace_get_range_metrics(t);
    assert_int_equal(r->n, 2 * 1300);
    for (uint32_t n = 1; n <= 1300; n++)
        assert_true(value_of(t, n, "dram__bytes_write.sum") == (double)(100 + n - 1));
    gpufl_trace_close(t);
    fake_cupti_rp_state st;
    fake.rp_state_get(&st);
    assert_true(st.decodes >= 3);
}

static void *other_thread(void *arg)
{
    (void)arg;
    gpufl_scope s = gpufl_scope_begin("elsewhere");
    kernel(50);
    gpufl_scope_end(s);
    return NULL;
}

/* Only the first thread to open a scope is profiled: the GPU's counters
 * are the context's, not a thread's. */
static void other_threads_make_no_ranges(void **state)
{
    (void)state;
    gpufl_options o = options("rp_threads");
    o.range_profiler_metrics = "gpu__time_duration.sum";
    start(&o);
    gpufl_scope s = gpufl_scope_begin("main");
    kernel(10);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, other_thread, NULL), 0);
    pthread_join(th, NULL);
    gpufl_scope_end(s);
    char dir[4096];
    gpufl_trace *t = finish(dir, sizeof dir);
    const gpufl_trace_range_metrics *r = gpufl_trace_get_range_metrics(t);
    for (size_t i = 0; i < r->n; i++)
        assert_string_equal(tu_trace_text(t, r->name[i]), "main");
    assert_true(r->n >= 1);
    gpufl_trace_close(t);
}

static void nvtx_ranges_on_request(void **state)
{
    (void)state;
    gpufl_options o = options("rp_nvtx");
    o.range_profiler_metrics = "gpu__time_duration.sum";
    o.range_profiler_nvtx = true;
    start(&o);
    gpufl_scope s = gpufl_scope_begin("step");
    fake.nvtx_push("conv1");
    kernel(400);
    fake.nvtx_pop();
    gpufl_scope_end(s);
    char dir[4096];
    gpufl_trace *t = finish(dir, sizeof dir);
    uint64_t scope = 1;
    assert_string_equal(name_of_range(t, 1, &scope), "conv1");
    assert_int_equal(scope, 0);
    assert_true(value_of(t, 1, "gpu__time_duration.sum") == 400.0);
    assert_int_equal(gpufl_trace_get_range_metrics(t)->n, 1);
    gpufl_trace_close(t);
}

/* A context destroyed before the session ends: its ranges are decoded
 * while it exists. */
static void context_destroyed_first(void **state)
{
    (void)state;
    gpufl_options o = options("rp_destroy");
    o.range_profiler_metrics = "gpu__time_duration.sum";
    uint32_t ctx = start(&o);
    gpufl_scope s = gpufl_scope_begin("work");
    kernel(123);
    gpufl_scope_end(s);
    fake.destroy_context(ctx);
    fake_cupti_rp_state st;
    fake.rp_state_get(&st);
    assert_false(st.enabled);
    char dir[4096];
    gpufl_trace *t = finish(dir, sizeof dir);
    assert_true(value_of(t, 1, "gpu__time_duration.sum") == 123.0);
    gpufl_trace_close(t);
}

/* `gpufl run` starts gpufl inside the driver's initialisation, where
 * CUPTI 13's profiler cannot initialise yet (CUPTI_ERROR_UNKNOWN on an
 * H100): the engine tries again once a context exists. */
static void profiler_initialised_when_a_context_exists(void **state)
{
    (void)state;
    gpufl_options o = options("rp_deferred");
    o.range_profiler_metrics = "gpu__time_duration.sum";
    fake.rp_refuse(CUPTI_SUCCESS);
    fake.profiler_refuse_init(CUPTI_ERROR_UNKNOWN);
    assert_true(gpufl_init(&o));
    fake.profiler_refuse_init(CUPTI_SUCCESS);
    fake.create_context(next_context++, 0);
    gpufl_scope s = gpufl_scope_begin("step");
    kernel(321);
    gpufl_scope_end(s);
    char dir[4096];
    gpufl_trace *t = finish(dir, sizeof dir);
    assert_string_equal(tu_trace_text(t, gpufl_trace_get_info(t)->engine), "range_profiler");
    assert_true(value_of(t, 1, "gpu__time_duration.sum") == 321.0);
    gpufl_trace_close(t);
}

/* Runs a session of o with one scope and kernel; returns the trace. */
static gpufl_trace *refused_session(const gpufl_options *o, CUptiResult refuse)
{
    assert_true(gpufl_init(o));
    fake.rp_refuse(refuse);
    fake.create_context(next_context++, 0);
    gpufl_scope s = gpufl_scope_begin("step");
    kernel(100);
    gpufl_scope_end(s);
    char dir[4096];
    gpufl_trace *t = finish(dir, sizeof dir);
    fake.rp_refuse(CUPTI_SUCCESS);
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "trace");
    assert_string_equal(tu_trace_text(t, info->engine_requested), "range_profiler");
    assert_int_equal(gpufl_trace_get_range_metrics(t)->n, 0);
    assert_int_equal(gpufl_trace_get_kernels(t)->n, 1); /* the session goes on as trace */
    return t;
}

static void expect_reason(const gpufl_trace *t, const char *a, const char *b)
{
    const char *why = tu_trace_text(t, gpufl_trace_get_info(t)->engine_reason);
    if (!strstr(why, a) || (b && !strstr(why, b)))
        fail_msg("the reason does not say \"%s\"%s%s: %s", a, b ? " and " : "", b ? b : "", why);
}

static void counters_taken_steps_down_and_names_the_tools(void **state)
{
    (void)state;
    gpufl_options o = options("rp_busy");
    gpufl_trace *t = refused_session(&o, CUPTI_ERROR_HARDWARE_BUSY);
    expect_reason(t, "cuptiRangeProfilerEnable", "DCGM");
    gpufl_trace_close(t);
}

static void two_pass_metrics_are_refused(void **state)
{
    (void)state;
    gpufl_options o = options("rp_twopass");
    o.range_profiler_metrics = "gpu__time_duration.sum,multipass__l1tex_hit_rate.pct";
    gpufl_trace *t = refused_session(&o, CUPTI_SUCCESS);
    expect_reason(t, "need 2 passes", "one pass");
    gpufl_trace_close(t);
}

static void unknown_metric_is_named(void **state)
{
    (void)state;
    gpufl_options o = options("rp_unknown");
    o.range_profiler_metrics = "gpu__time_duration.sum,sm__no_such_metric.sum";
    gpufl_trace *t = refused_session(&o, CUPTI_SUCCESS);
    expect_reason(t, "sm__no_such_metric.sum", NULL);
    gpufl_trace_close(t);
}

static void pm_sampling_keeps_the_counters(void **state)
{
    (void)state;
    gpufl_options o = options("rp_pm");
    o.pm_sampling_metrics = FAKE_CUPTI_SM_ACTIVE;
    gpufl_trace *t = refused_session(&o, CUPTI_SUCCESS);
    expect_reason(t, "PM sampling", "performance counters");
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scopes_become_ranges_in_both_formats),
        cmocka_unit_test(full_passes_are_decoded_as_they_fill),
        cmocka_unit_test(other_threads_make_no_ranges),
        cmocka_unit_test(nvtx_ranges_on_request),
        cmocka_unit_test(context_destroyed_first),
        cmocka_unit_test(profiler_initialised_when_a_context_exists),
        cmocka_unit_test(counters_taken_steps_down_and_names_the_tools),
        cmocka_unit_test(two_pass_metrics_are_refused),
        cmocka_unit_test(unknown_metric_is_named),
        cmocka_unit_test(pm_sampling_keeps_the_counters),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
