/*
 * `gpufl export` (src/cli/cmd_export.c): the command over the exporters.
 *
 * Why: the command is how users reach the exports, so its defaults and
 * errors matter: each format with -o writes there and says so; without -o
 * the output is named after the session in the current directory; a bad
 * format, a missing -f or SESSION are usage errors (64) that say what is
 * wrong; an unreadable session fails (1) naming it and leaves no output.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export_fixture.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "export-cli")

static void test_formats(void **state)
{
    (void)state;
    char *session = tu_export_fixture(work);
    static const char *const formats[] = {"perfetto", "chrome", "csv"};
    for (int f = 0; f < 3; f++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/out-%s", work, formats[f]);
        const char *argv[] = {GFL_CLI, "export", session, "-f", formats[f], "-o", path, NULL};
        char *out, *err;
        int rc = tu_run(argv, &out, &err);
        if (rc != 0)
            fail_msg("gpufl export -f %s: %d %s", formats[f], rc, err);
        char want[4400];
        snprintf(want, sizeof want, "wrote %s: ", path);
        assert_non_null(strstr(out, want));
        if (f < 2) {
            assert_true(tu_exists(path));
            assert_non_null(strstr(out, "16 tracks, 17 slices, 4 flows, 21 counter values"));
            assert_non_null(strstr(out, "extra lanes")); /* the fixture's overlapping range */
        } else {
            snprintf(want, sizeof want, "%s/kernels.csv", path);
            assert_true(tu_exists(want));
            assert_non_null(strstr(out, "11 files, 20 rows"));
        }
        free(out);
        free(err);
    }
    free(session);
}

/* Without -o: <session name>.perfetto-trace, .json, -csv in the current
 * directory. */
static void test_default_names(void **state)
{
    (void)state;
    char *session = tu_export_fixture(work);
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(work), 0);
    char slash[4300];
    snprintf(slash, sizeof slash, "%s/", session); /* a trailing slash changes nothing */
    const char *formats[] = {"perfetto", "chrome", "csv"};
    const char *names[] = {"fixture.perfetto-trace", "fixture.json", "fixture-csv/scopes.csv"};
    for (int f = 0; f < 3; f++) {
        const char *argv[] = {GFL_CLI, "export", slash, "--format", formats[f], NULL};
        assert_int_equal(tu_run(argv, NULL, NULL), 0);
        assert_true(tu_exists(names[f]));
    }
    assert_int_equal(chdir(cwd), 0);
    free(session);
}

static void expect_usage(const char *const *argv, const char *says)
{
    char *err;
    assert_int_equal(tu_run(argv, NULL, &err), 64);
    if (!strstr(err, says))
        fail_msg("expected '%s' in: %s", says, err);
    assert_non_null(strstr(err, "usage: gpufl export"));
    free(err);
}

static void test_errors(void **state)
{
    (void)state;
    char *session = tu_export_fixture(work);
    const char *no_format[] = {GFL_CLI, "export", session, NULL};
    expect_usage(no_format, "which format?");
    const char *bad_format[] = {GFL_CLI, "export", session, "-f", "pdf", NULL};
    expect_usage(bad_format, "unknown format 'pdf'");
    const char *no_session[] = {GFL_CLI, "export", "-f", "csv", NULL};
    expect_usage(no_session, "usage");
    const char *two[] = {GFL_CLI, "export", session, session, "-f", "csv", NULL};
    expect_usage(two, "one SESSION only");

    char missing[4300], out[4300];
    snprintf(missing, sizeof missing, "%s/no-such-session", work);
    snprintf(out, sizeof out, "%s/x.json", work);
    const char *bad[] = {GFL_CLI, "export", missing, "-f", "chrome", "-o", out, NULL};
    char *err;
    assert_int_equal(tu_run(bad, NULL, &err), 1);
    assert_non_null(strstr(err, "no-such-session"));
    assert_false(tu_exists(out));
    free(err);

    /* an output that cannot be written: named, nothing left */
    snprintf(out, sizeof out, "%s/no/dir/x.json", work);
    const char *unwritable[] = {GFL_CLI, "export", session, "-f", "chrome", "-o", out, NULL};
    assert_int_equal(tu_run(unwritable, NULL, &err), 1);
    assert_non_null(strstr(err, out));
    free(err);
    free(session);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
