/*
 * The pc_sampling engine of the CUPTI plugin against the fake libcupti
 * (tests/fake_cupti/fake_pc_sampling.c): sampling is enabled and
 * configured on each context as it is created, the samples come out as
 * pc_sample rows with short reason names and source lines from the
 * module's cubin, they are collected before a module is unloaded or a
 * context destroyed, and a refusal steps the session down to trace with
 * the cause named.
 *
 * Why: CI has no GPU; everything between CUPTI's PC sampling calls and the
 * trace is checked here, the GPU test (tests/gpu/test_pc_sampling.cu)
 * checks the real CUPTI.
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
#include <unistd.h>

#include "fake_cupti.h"
#include "fake_cupti_setup.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"

// clang-format off
#define FAKE_FUNCTIONS(X)                                                                          \
    X(create_context) X(load_module) X(unload_module) X(pc_sample) X(refuse_pc_sampling)          \
    X(pc_sampling_state) X(destroy_context) X(fill_pc_buffer)
// clang-format on

static struct {
    void *lib;
#define AS_FIELD(name) __typeof__(&fake_cupti_##name) name;
    FAKE_FUNCTIONS(AS_FIELD)
#undef AS_FIELD
} fake;

#define CUBIN "fake-cubin file=/src/kernels.cu line=10"

static char *logs;

static int setup(void **state)
{
    (void)state;
    TU_FAKE_CUPTI_SETUP();
    logs = tu_mkdtemp("pcs_plugin");
    return 0;
}

static uint64_t crc_of(const char *cubin) { return tu_fake_cubin_crc(cubin); }

static void start(const char *app, gpufl_engine engine, uint32_t period)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = app;
    o.log_path = logs;
    o.profiling_engine = engine;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.pc_sampling_period = period;
    o.log_format = GPUFL_LOG_BOTH;
    fake.refuse_pc_sampling(CUPTI_SUCCESS);
    assert_true(gpufl_init(&o));
}

/* Samples of (function, reason) in the trace, and the line of the last. */
static uint64_t samples_of(const gpufl_trace *t, const char *function, const char *reason, uint32_t *line,
                           const char **file)
{
    const gpufl_trace_pc_samples *p = gpufl_trace_get_pc_samples(t);
    uint64_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(tu_trace_text(t, p->function[i]), function) && !strcmp(tu_trace_text(t, p->reason[i]), reason)) {
            n += p->samples[i];
            if (line)
                *line = p->line[i];
            if (file)
                *file = tu_trace_text(t, p->file[i]);
        }
    return n;
}

static void samples_become_rows_with_lines(void **state)
{
    (void)state;
    start("pcs", GPUFL_ENGINE_PC_SAMPLING, 9);
    fake.create_context(1, 0);
    fake_cupti_pcs_state st;
    assert_true(fake.pc_sampling_state(1, &st));
    assert_true(st.enabled && st.configured);
    assert_int_equal(st.period, 9);
    assert_int_equal(st.selected, 3); /* every reason but the _not_issued twin */
    assert_false(st.selected_not_issued);
    fake.load_module(1, CUBIN);
    uint64_t crc = crc_of(CUBIN);
    assert_int_equal(fake.pc_sample(1, "_Z5k_memPj", crc, 0x20, 3, 50), 0);
    assert_int_equal(fake.pc_sample(1, "_Z5k_memPj", crc, 0x20, 7, 10), 0);
    assert_int_equal(fake.pc_sample(1, "_Z5k_memPj", crc, 0x40, 9, 5), 0);
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "pc_sampling");
    uint32_t line = 0;
    const char *file = NULL;
    assert_int_equal(samples_of(t, "_Z5k_memPj", "long_scoreboard", &line, &file), 50);
    assert_string_equal(file, "/src/kernels.cu");
    assert_int_equal(line, 12); /* 10 + 0x20 / 16 */
    assert_int_equal(samples_of(t, "_Z5k_memPj", "selected", NULL, NULL), 10);
    assert_int_equal(samples_of(t, "_Z5k_memPj", "wait", &line, NULL), 5);
    assert_int_equal(line, 14);
    gpufl_trace_close(t);
    assert_true(fake.pc_sampling_state(1, &st));
    assert_false(st.enabled); /* disabled at the end */
}

/* A module's samples leave before it goes, a context's before it is
 * destroyed: CUPTI could not name their functions afterwards. */
static void collects_before_unload_and_destroy(void **state)
{
    (void)state;
    start("pcs_unload", GPUFL_ENGINE_PC_SAMPLING, 0);
    fake.create_context(2, 1);
    fake.load_module(2, CUBIN);
    assert_int_equal(fake.pc_sample(2, "k_a", crc_of(CUBIN), 0x10, 9, 7), 0);
    fake_cupti_pcs_state st;
    fake.unload_module(2);
    assert_true(fake.pc_sampling_state(2, &st));
    assert_int_equal(st.pending, 0);
    assert_int_equal(st.period, 0); /* CUPTI's choice: not configured */
    assert_int_equal(fake.pc_sample(2, "k_b", 77, 0x10, 3, 9), 0);
    fake.destroy_context(2);
    assert_true(fake.pc_sampling_state(2, &st));
    assert_false(st.enabled);
    gpufl_trace *t = tu_plugin_session_end();
    assert_int_equal(samples_of(t, "k_a", "wait", NULL, NULL), 7);
    assert_int_equal(samples_of(t, "k_b", "long_scoreboard", NULL, NULL), 9);
    const gpufl_trace_pc_samples *p = gpufl_trace_get_pc_samples(t);
    for (size_t i = 0; i < p->n; i++)
        assert_int_equal(p->device[i], 1);
    gpufl_trace_close(t);
}

/* A full hardware buffer stops the GPU's sampling for good: the engine
 * starts it again, sampling half as often, and later kernels are
 * sampled. */
static void full_buffer_restarts_with_a_longer_period(void **state)
{
    (void)state;
    start("pcs_full", GPUFL_ENGINE_PC_SAMPLING, 0);
    fake.create_context(6, 0);
    fake_cupti_pcs_state st;
    assert_true(fake.pc_sampling_state(6, &st));
    assert_int_equal(st.period, 0); /* CUPTI's choice (the fake's 12) */
    fake.fill_pc_buffer(6);
    assert_int_equal(fake.pc_sample(6, "k_lost", 1, 0x10, 3, 5), -1);
    for (int i = 0; i < 400 && (fake.pc_sampling_state(6, &st), st.enables < 2); i++)
        usleep(10000); /* the worker collects every 100 ms */
    assert_int_equal(st.enables, 2);
    assert_int_equal(st.period, 13); /* one step longer than what CUPTI chose */
    assert_int_equal(fake.pc_sample(6, "k_later", 1, 0x10, 3, 5), 0);
    gpufl_trace *t = tu_plugin_session_end();
    assert_int_equal(samples_of(t, "k_later", "long_scoreboard", NULL, NULL), 5);
    assert_string_equal(tu_trace_text(t, gpufl_trace_get_info(t)->engine), "pc_sampling");
    gpufl_trace_close(t);
}

static void refusal_steps_down_to_trace_and_says_why(void **state)
{
    (void)state;
    start("pcs_refused", GPUFL_ENGINE_PC_SAMPLING, 0);
    fake.refuse_pc_sampling(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    fake.create_context(3, 0);
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "trace");
    assert_string_equal(tu_trace_text(t, info->engine_requested), "pc_sampling");
    const char *why = tu_trace_text(t, info->engine_reason);
    if (!strstr(why, "cuptiPCSamplingEnable") || !strstr(why, "administrators"))
        fail_msg("the reason does not name the call and the cause: %s", why);
    gpufl_trace_close(t);
}

static void trace_engine_does_not_sample(void **state)
{
    (void)state;
    start("pcs_trace", GPUFL_ENGINE_TRACE, 0);
    fake.create_context(4, 0);
    fake_cupti_pcs_state st;
    assert_true(fake.pc_sampling_state(4, &st));
    assert_false(st.enabled);
    gpufl_trace_close(tu_plugin_session_end());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(samples_become_rows_with_lines),
        cmocka_unit_test(collects_before_unload_and_destroy),
        cmocka_unit_test(full_buffer_restarts_with_a_longer_period),
        cmocka_unit_test(refusal_steps_down_to_trace_and_says_why),
        cmocka_unit_test(trace_engine_does_not_sample),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
