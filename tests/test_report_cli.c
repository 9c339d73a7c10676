/*
 * `gpufl report` (src/cli/cmd_report.c) and gpufl_generate_report()
 * (src/session/report_api.c): on the real sample session, on hand-written
 * ones (report_fixture.h), and on bad input.
 *
 * Why: the command is what users run first on a session, and its exit codes
 * are what scripts test: a missing or damaged session must fail with a
 * message that names the file, never crash or print a half report; the
 * report of the sample must name its real top kernels; the library's
 * report must be the command's text.
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

#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "report_fixture.h"
#include "report_schema.h"
#include "session_file.h"
#include "test_util.h"

#define SAMPLE_DIR GFL_SOURCE_DIR "/samples/train_sample"
#define SAMPLE SAMPLE_DIR "/trace.gflt"

TU_TEMP_DIR_FIXTURES(dir, "report-cli")

static int report(const char *const *args, char **out, char **err)
{
    return tu_run_subcommand(GFL_CLI, "report", args, out, err);
}

/* The three kernel names with the most GPU time, summed by hand over the
 * kernel table (a reference independent of the analyses). */
static void top_kernels(const char *path, char names[3][4096])
{
    gpufl_trace *t = tu_trace_open(path);
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    size_t nnames = 0;
    uint32_t ids[4096];
    uint64_t totals[4096];
    for (size_t i = 0; i < k->n; i++) {
        uint32_t id = k->configs->name[k->config_row[i]];
        uint64_t dur = gpufl_trace_kernel_end(k, i) - k->start_ns[i];
        size_t j = 0;
        while (j < nnames && ids[j] != id)
            j++;
        if (j == nnames) {
            assert_true(nnames < 4096);
            ids[nnames] = id;
            totals[nnames++] = 0;
        }
        totals[j] += dur;
    }
    for (int r = 0; r < 3; r++) {
        size_t best = 0;
        for (size_t j = 1; j < nnames; j++)
            if (totals[j] > totals[best])
                best = j;
        snprintf(names[r], 4096, "%s", gpufl_trace_string(t, ids[best]));
        totals[best] = 0;
    }
    gpufl_trace_close(t);
}

static void test_sample_names_top_kernels(void **state)
{
    (void)state;
    char *out, *err;
    int rc = report((const char *[]){SAMPLE_DIR, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl report %s: exit %d: %s", SAMPLE_DIR, rc, err);
    assert_string_equal(err, "");
    char names[3][4096];
    top_kernels(SAMPLE, names);
    /* In the hotspots, in this order, as " N. name" (cut names keep 197 bytes). */
    const char *hot = strstr(out, "\nHotspots\n");
    assert_non_null(hot);
    const char *at = hot;
    for (int r = 0; r < 3; r++) {
        char want[256];
        snprintf(want, sizeof want, "%3d. %.150s", r + 1, names[r]);
        const char *p = strstr(at, want);
        if (!p)
            fail_msg("the report does not list '%s' as kernel %d", names[r], r + 1);
        at = p + 1;
    }
    assert_non_null(strstr(out, "gpufl report: train_sample-20261121-054005-1647-f559"));
    assert_non_null(strstr(out, "NVIDIA H200"));
    free(out);
    free(err);

    /* --top 2 lists two; JSON parses and follows the schema. */
    rc = report((const char *[]){SAMPLE, "--top", "2", NULL}, &out, &err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "top 2 of 60 kernels"));
    assert_null(strstr(out, "\n   3. "));
    free(out);
    free(err);
    rc = report((const char *[]){SAMPLE, "--format", "json", "--top", "5", NULL}, &out, &err);
    assert_int_equal(rc, 0);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    assert_non_null(doc);
    char why[1024];
    if (report_schema_check(doc, why, sizeof why) != 0)
        fail_msg("%s", why);
    json_t *kernels = json_object_get(json_object_get(doc, "hotspots"), "kernels");
    assert_int_equal(json_array_size(kernels), 5);
    assert_string_equal(json_string_value(json_object_get(json_array_get(kernels, 0), "name")), names[0]);
    json_decref(doc);
    free(out);
    free(err);
}

static void test_output_file(void **state)
{
    (void)state;
    char file[4200], *out, *err;
    snprintf(file, sizeof file, "%s/report.txt", dir);
    assert_int_equal(report((const char *[]){SAMPLE, "-o", file, NULL}, &out, &err), 0);
    assert_string_equal(out, "");
    free(out);
    free(err);
    char *text = tu_read_file(file, NULL);
    assert_non_null(text);
    char *stdout_text;
    assert_int_equal(report((const char *[]){SAMPLE, NULL}, &stdout_text, &err), 0);
    assert_string_equal(text, stdout_text);
    free(text);
    free(stdout_text);
    free(err);

    /* An unwritable file: exit 1, the file named. */
    snprintf(file, sizeof file, "%s/no/such/dir/r.json", dir);
    assert_int_equal(report((const char *[]){SAMPLE, "--format", "json", "-o", file, NULL}, &out, &err), 1);
    assert_non_null(strstr(err, file));
    free(out);
    free(err);
}

static void test_missing_and_corrupt_sessions(void **state)
{
    (void)state;
    char path[4200], *out, *err;
    /* missing */
    snprintf(path, sizeof path, "%s/no-such-session", dir);
    assert_int_equal(report((const char *[]){path, NULL}, &out, &err), 1);
    assert_non_null(strstr(err, path));
    assert_string_equal(out, "");
    free(out);
    free(err);
    /* a .gflt that is not one */
    snprintf(path, sizeof path, "%s/garbage.gflt", dir);
    tu_write_file(path, "this is not a gpufl trace, just some text long enough to be read\n");
    assert_int_equal(report((const char *[]){path, NULL}, &out, &err), 1);
    assert_non_null(strstr(err, "garbage.gflt"));
    assert_string_equal(out, "");
    free(out);
    free(err);
    /* a session whose device.log has a damaged line in the middle */
    char session[4096], log[4300];
    rf_write(dir, "full", session);
    snprintf(log, sizeof log, "%s/device.log", session);
    char *text = tu_read_file(log, NULL);
    char *line = strstr(text, "{\"type\":\"kernel\"");
    assert_non_null(line);
    memcpy(line, "{\"type\":\"kernel\",,,", 19);
    tu_write_file(log, text);
    free(text);
    assert_int_equal(report((const char *[]){session, NULL}, &out, &err), 1);
    assert_non_null(strstr(err, "device.log"));
    assert_string_equal(out, "");
    free(out);
    free(err);
}

static void test_usage_errors(void **state)
{
    (void)state;
    static const char *const bad[][5] = {
        {NULL},
        {SAMPLE, "--top", "0", NULL},
        {SAMPLE, "--top", "x", NULL},
        {SAMPLE, "--format", "xml", NULL},
        {SAMPLE, "--format", "html", NULL}, /* html needs -o */
        {SAMPLE, "--bogus", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out, *err;
        int rc = report(bad[i], &out, &err);
        if (rc != 64)
            fail_msg("case %zu: exit %d, expected 64 (usage)", i, rc);
        assert_non_null(strstr(err, "usage: gpufl report"));
        free(out);
        free(err);
    }
}

/* gpufl_generate_report() writes what `gpufl report` prints. */
static void test_generate_report_matches_cli(void **state)
{
    (void)state;
    char logs[4200], file[4200];
    snprintf(logs, sizeof logs, "%s/logs", dir);
    snprintf(file, sizeof file, "%s/api-report.txt", dir);
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_path = logs;
    o.app_name = "report-api";
    o.system_sample_rate_ms = 0;
    assert_true(gpufl_init(&o));
    gpufl_scope s = gpufl_scope_begin("outer");
    gpufl_scope_end(gpufl_scope_begin("inner"));
    gpufl_scope_end(s);
    /* while recording: what has been written so far */
    assert_int_equal(gpufl_generate_report(file), 0);
    gpufl_shutdown();
    assert_int_equal(gpufl_generate_report(file), 0);
    char *text = tu_read_file(file, NULL);
    assert_non_null(text);
    char *out, *err;
    assert_int_equal(report((const char *[]){gpufl_session_dir(), NULL}, &out, &err), 0);
    assert_string_equal(text, out);
    assert_non_null(strstr(text, "outer"));
    assert_non_null(strstr(text, "  inner"));
    free(text);
    free(out);
    free(err);
    /* an unwritable path */
    snprintf(file, sizeof file, "%s/no/such/dir/r.txt", dir);
    assert_int_equal(gpufl_generate_report(file), GPUFL_EIO);
    assert_non_null(strstr(gpufl_last_error(), "no/such/dir"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_names_top_kernels),     cmocka_unit_test(test_output_file),
        cmocka_unit_test(test_missing_and_corrupt_sessions), cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_generate_report_matches_cli),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
