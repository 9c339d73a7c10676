/*
 * gpufl_trace_report() (src/session/trace_report_api.c): the report of a
 * loaded session in memory is byte for byte the golden report `gpufl
 * report` gives, in text and JSON; --top is honoured; bad arguments are
 * refused with a message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_util.h"
#include "gpufl/trace.h"
#include "report_fixture.h"
#include "session_file.h"

#define GOLDEN_DIR GFL_SOURCE_DIR "/tests/golden"
#define SAMPLE GFL_SOURCE_DIR "/samples/train_sample/trace.gflt"

TU_TEMP_DIR_FIXTURES(dir, "trace-report-api")

static char *report(const gpufl_trace *t, const char *format, uint32_t top)
{
    char *text = NULL, err[256] = "";
    size_t len = 0;
    int rc = gpufl_trace_report(t, format, top, &text, &len, err, sizeof err);
    if (rc != 0)
        fail_msg("gpufl_trace_report(%s, %u): %d %s", format, top, rc, err);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    return text;
}

static void matches_golden(const char *text, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, name);
    char *want = tu_read_file(path, NULL);
    assert_non_null(want);
    assert_string_equal(text, want);
    free(want);
}

static void text_and_json_are_the_golden_reports(void **state)
{
    (void)state;
    char path[4096];
    rf_write(dir, "crashed", path);
    gpufl_trace *t = tu_trace_open(path);
    char *text = report(t, "text", 0);
    matches_golden(text, "report_crashed.txt");
    gpufl_trace_free_text(text);
    text = report(t, "json", 0);
    matches_golden(text, "report_crashed.json");
    gpufl_trace_free_text(text);
    gpufl_trace_close(t);
}

/* Hot kernels listed, as `gpufl report --top N`: numbered " 1. ", " 2. ". */
static void top_limits_the_hot_kernels(void **state)
{
    (void)state;
    gpufl_trace *t = tu_trace_open(SAMPLE);
    char *one = report(t, "text", 1), *three = report(t, "text", 3);
    assert_non_null(strstr(one, "\n   1. "));
    assert_null(strstr(one, "\n   2. "));
    assert_non_null(strstr(three, "\n   3. "));
    assert_null(strstr(three, "\n   4. "));
    gpufl_trace_free_text(one);
    gpufl_trace_free_text(three);
    gpufl_trace_close(t);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    gpufl_trace *t = tu_trace_open(SAMPLE);
    char *text = (char *)"untouched", err[256] = "";
    size_t len = 7;
    assert_int_equal(gpufl_trace_report(t, "html", 0, &text, &len, err, sizeof err), GPUFL_EINVAL);
    assert_null(text);
    assert_int_equal(len, 0);
    assert_non_null(strstr(err, "bad format"));
    assert_non_null(strstr(err, "'html'"));
    assert_int_equal(gpufl_trace_report(t, "text", 10001, &text, &len, err, sizeof err), GPUFL_EINVAL);
    assert_non_null(strstr(err, "bad top"));
    assert_int_equal(gpufl_trace_report(t, NULL, 0, &text, &len, err, sizeof err), GPUFL_EINVAL);
    assert_int_equal(gpufl_trace_report(NULL, "text", 0, &text, &len, err, sizeof err), GPUFL_EINVAL);
    gpufl_trace_free_text(NULL); /* harmless */
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_and_json_are_the_golden_reports),
        cmocka_unit_test(top_limits_the_hot_kernels),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
