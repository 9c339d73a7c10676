/*
 * gpufl_trace_pause() / gpufl_trace_resume(): handing the device tracing
 * interface (CUPTI) to another tool and taking it back, through the
 * synthetic plugin, which plays CUPTI here (`held=N` refuses the first N
 * resumes, as CUPTI refuses a second client).
 *
 * Why: a program that runs torch.profiler inside a traced session must be
 * able to give CUPTI away and get it back, every misuse must be a clear
 * error that leaves the session recording, and the session's log must say
 * when device work went unrecorded. The GPU half (torch.profiler really
 * getting its kernels) is tests/gpu/test_torch_coexist.py.
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
#include "test_util.h"

static char *log_path;

static void start(gpufl_engine engine, const char *script)
{
    log_path = tu_mkdtemp("handover");
    tu_setenv("GPUFL_SYNTHETIC", script);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "handover";
    o.log_path = log_path;
    o.profiling_engine = engine;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    assert_true(gpufl_init(&o));
}

static int cleanup(void **state)
{
    (void)state;
    gpufl_shutdown();
    tu_unsetenv("GPUFL_SYNTHETIC");
    if (log_path) {
        tu_rm_rf(log_path);
        free(log_path);
        log_path = NULL;
    }
    return 0;
}

/* The messages of the session's `log` lines that contain needle. */
static size_t log_lines_with(const char *needle)
{
    char *dir = tu_session_dir(log_path);
    tu_ndjson sys;
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &sys), 0);
    size_t n = 0;
    for (size_t i = 0; i < tu_count_type(&sys, "log"); i++) {
        const char *msg = tu_str(tu_nth_type(&sys, "log", i), "message");
        n += msg && strstr(msg, needle) != NULL;
    }
    tu_ndjson_free(&sys);
    free(dir);
    return n;
}

static void without_a_session_both_refuse(void **state)
{
    (void)state;
    assert_int_equal(gpufl_trace_pause(), GPUFL_ESTATE);
    assert_non_null(strstr(gpufl_last_error(), "no session"));
    assert_int_equal(gpufl_trace_resume(), GPUFL_ESTATE);
}

static void monitor_engine_has_nothing_to_hand_over(void **state)
{
    (void)state;
    start(GPUFL_ENGINE_MONITOR, "kernels=10");
    assert_int_equal(gpufl_trace_pause(), GPUFL_ESTATE);
    assert_non_null(strstr(gpufl_last_error(), "no device tracing"));
}

static void pause_then_resume_records_the_gap(void **state)
{
    (void)state;
    start(GPUFL_ENGINE_TRACE, "kernels=50,threads=1");
    assert_int_equal(gpufl_trace_resume(), GPUFL_ESTATE); /* not paused */
    assert_non_null(strstr(gpufl_last_error(), "not paused"));
    assert_int_equal(gpufl_trace_pause(), 0);
    assert_int_equal(gpufl_trace_pause(), GPUFL_ESTATE); /* twice */
    assert_non_null(strstr(gpufl_last_error(), "already paused"));
    assert_int_equal(gpufl_trace_resume(), 0);
    /* a second round works the same */
    assert_int_equal(gpufl_trace_pause(), 0);
    assert_int_equal(gpufl_trace_resume(), 0);
    gpufl_shutdown();
    assert_int_equal(log_lines_with("trace paused by gpufl_trace_pause()"), 2);
    assert_int_equal(log_lines_with("was not recorded"), 2);
}

static void a_refused_resume_stays_paused_until_retried(void **state)
{
    (void)state;
    start(GPUFL_ENGINE_TRACE, "kernels=10,threads=1,held=2");
    assert_int_equal(gpufl_trace_pause(), 0);
    assert_int_equal(gpufl_trace_resume(), GPUFL_EUNSUPPORTED);
    assert_non_null(strstr(gpufl_last_error(), "still holds"));
    assert_non_null(strstr(gpufl_last_error(), "still paused"));
    assert_int_equal(gpufl_trace_resume(), GPUFL_EUNSUPPORTED);
    assert_int_equal(gpufl_trace_pause(), GPUFL_ESTATE); /* it is still paused */
    assert_int_equal(gpufl_trace_resume(), 0);
    gpufl_shutdown();
    assert_int_equal(log_lines_with("trace resumed by gpufl_trace_resume()"), 1);
}

static void ending_while_paused_says_so(void **state)
{
    (void)state;
    start(GPUFL_ENGINE_TRACE, "kernels=10,threads=1");
    assert_int_equal(gpufl_trace_pause(), 0);
    gpufl_shutdown();
    assert_int_equal(log_lines_with("ended with the trace paused"), 1);
    assert_int_equal(gpufl_trace_resume(), GPUFL_ESTATE); /* no session any more */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_a_session_both_refuse),
        cmocka_unit_test_teardown(monitor_engine_has_nothing_to_hand_over, cleanup),
        cmocka_unit_test_teardown(pause_then_resume_records_the_gap, cleanup),
        cmocka_unit_test_teardown(a_refused_resume_stays_paused_until_retried, cleanup),
        cmocka_unit_test_teardown(ending_while_paused_says_so, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
