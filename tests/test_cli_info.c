/*
 * `gpufl info` (src/cli/cmd_info.c): what a session holds, from its logs or
 * its trace.gflt.
 *
 * Why: info is how a user first looks at a session, crashed ones included,
 * so what it prints must be what the files hold. Checked with --json and as
 * text, for the same session recorded as NDJSON and as .gflt: app, pid,
 * host, start, duration, format and version, counts per event type (equal
 * to session.json's), losses, why writing stopped, file sizes; a session
 * killed before its end; and the usage errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "record.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "cli-info")

static json_t *info_json(const char *path)
{
    const char *argv[] = {GFL_CLI, "info", path, "--json", NULL};
    char *out, *err;
    int rc = tu_run(argv, &out, &err);
    if (rc != 0)
        fail_msg("gpufl info %s: %d %s", path, rc, err);
    json_error_t e;
    json_t *j = json_loads(out, 0, &e);
    if (!j)
        fail_msg("not JSON (%s): %.300s", e.text, out);
    free(out);
    free(err);
    return j;
}

static char *info_text(const char *path)
{
    const char *argv[] = {GFL_CLI, "info", path, NULL};
    char *out;
    assert_int_equal(tu_run(argv, &out, NULL), 0);
    return out;
}

static uint64_t size_of(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

static void check_session(const char *dir, const char *format)
{
    json_t *j = info_json(dir);
    json_t *session = tu_session_json(dir);
    assert_string_equal(tu_str(j, "session_id"), tu_str(session, "session_id"));
    assert_string_equal(tu_str(j, "app_name"), tu_str(session, "app_name"));
    assert_string_equal(tu_str(j, "host"), tu_str(session, "host"));
    assert_int_equal(tu_int(j, "pid"), tu_int(session, "pid"));
    assert_string_equal(tu_str(j, "start_time"), tu_str(session, "start_time"));
    assert_string_equal(tu_str(j, "format"), format);
    assert_int_equal(tu_int(j, "format_version"), 1);
    assert_string_equal(tu_str(j, "gpufl_version"), tu_str(session, "gpufl_version"));
    assert_true(json_is_true(json_object_get(j, "ended")));
    assert_int_equal(tu_int(j, "duration_ns"), tu_int(session, "end_ns") - tu_int(session, "start_ns"));
    /* the counts per type are session.json's */
    json_t *summary = json_object_get(session, "summary");
    json_t *want = json_object_get(summary, "events"), *got = json_object_get(j, "events");
    const char *key;
    json_t *v;
    long long total = 0;
    json_object_foreach(want, key, v)
    {
        json_t *g = json_object_get(got, key);
        assert_int_equal(g ? json_integer_value(g) : 0, json_integer_value(v));
        total += json_integer_value(v);
    }
    assert_int_equal(tu_int(j, "events_total"), total);
    assert_int_equal(tu_int(got, "kernel"), 2000);
    assert_int_equal(tu_int(j, "dropped_total"), 0);
    assert_true(json_is_null(json_object_get(j, "stopped")));
    /* every file with its size */
    json_t *files = json_object_get(j, "files");
    long long sum = 0;
    for (size_t i = 0; i < json_array_size(files); i++) {
        json_t *f = json_array_get(files, i);
        assert_int_equal(tu_int(f, "bytes"), size_of(dir, tu_str(f, "name")));
        sum += tu_int(f, "bytes");
    }
    assert_int_equal(tu_int(j, "files_bytes"), sum);
    assert_true(json_array_size(files) >= 2);
    /* the text says the same */
    char *text = info_text(dir);
    char line[256];
    snprintf(line, sizeof line, "session    %s\n", tu_str(session, "session_id"));
    assert_non_null(strstr(text, line));
    snprintf(line, sizeof line, "app        %s (pid %lld) on %s\n", tu_str(session, "app_name"), tu_int(session, "pid"),
             tu_str(session, "host"));
    assert_non_null(strstr(text, line));
    snprintf(line, sizeof line, "  kernel           2000\n");
    assert_non_null(strstr(text, line));
    assert_non_null(
        strstr(text, !strcmp(format, "gflt") ? "format     .gflt version 1" : "format     NDJSON schema version 1"));
    assert_non_null(strstr(text, "dropped    none\n"));
    assert_non_null(strstr(text, "writing    never stopped\n"));
    snprintf(line, sizeof line, "files      %lld bytes\n", sum);
    assert_non_null(strstr(text, line));
    free(text);
    json_decref(session);
    json_decref(j);
}

static void test_ndjson_and_gflt(void **state)
{
    (void)state;
    char logs[4200];
    snprintf(logs, sizeof logs, "%s/nd", work);
    char *nd = tu_record_synthetic(logs, "info_nd", GPUFL_LOG_NDJSON, 0);
    check_session(nd, "ndjson");
    snprintf(logs, sizeof logs, "%s/bin", work);
    char *bin = tu_record_synthetic(logs, "info_bin", GPUFL_LOG_GFLT, 0);
    check_session(bin, "gflt");
    /* one file: its own size only */
    char gflt[4200];
    snprintf(gflt, sizeof gflt, "%s/trace.gflt", bin);
    json_t *j = info_json(gflt);
    assert_int_equal(json_array_size(json_object_get(j, "files")), 1);
    assert_int_equal(tu_int(j, "files_bytes"), size_of(bin, "trace.gflt"));
    json_decref(j);
    free(nd);
    free(bin);
}

/* A session that did not end: said so, and its duration reaches its last
 * recorded time (the `dropped` line at 1.6 s, later than the scope's begin:
 * the one end every output gives an unended session); losses and the stop
 * reason are shown. */
static void test_unended_and_stopped(void **state)
{
    (void)state;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/crashed", work);
    assert_int_equal(mkdir(dir, 0755), 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/scope.log", dir);
    tu_write_file(
        path,
        "{\"type\":\"session_start\",\"ts_ns\":1000000000,\"wall_ns\":1790000000000000000,"
        "\"session_id\":\"c-1\",\"app_name\":\"crashy\",\"pid\":9,\"host\":\"h\",\"channel\":\"scope\","
        "\"part\":0,\"format_version\":1,\"gpufl_version\":\"0.1.0\"}\n"
        "{\"type\":\"scope_begin\",\"ts_ns\":1500000000,\"tid\":1,\"id\":1,\"parent\":0,\"depth\":0,\"name\":\"a\"}\n"
        "{\"type\":\"dropped\",\"ts_ns\":1600000000,\"tid\":1,\"reason\":\"ring_full\",\"channel\":\"scope\",\"count\":5,\"total\":5}\n"
        "{\"type\":\"log_stopped\",\"ts_ns\":1700000000,\"reason\":\"free_space\",\"detail\":\"free space 1 bytes\"}\n"
        "{\"type\":\"scope_end\",\"ts_ns\":3250000");
    json_t *j = info_json(dir);
    assert_false(json_is_true(json_object_get(j, "ended")));
    assert_int_equal(tu_int(j, "duration_ns"), 600000000);
    assert_int_equal(tu_int(json_object_get(j, "dropped"), "ring_full"), 5);
    assert_string_equal(tu_str(json_object_get(j, "stopped"), "reason"), "free_space");
    assert_int_equal(tu_int(json_object_get(j, "skipped"), "bytes"), 35);
    json_decref(j);
    char *text = info_text(dir);
    assert_non_null(strstr(text, "did not end (killed, or still recording); events reach 600.00 ms\n"));
    assert_non_null(strstr(text, "writing    stopped at +0.700 s: free_space (free space 1 bytes)"));
    assert_non_null(strstr(text, "  ring_full        5\n"));
    assert_non_null(strstr(text, "skipped    35 bytes of a torn tail"));
    free(text);
}

static void test_usage(void **state)
{
    (void)state;
    char *err;
    const char *none[] = {GFL_CLI, "info", NULL};
    assert_int_equal(tu_run(none, NULL, &err), 64);
    assert_non_null(strstr(err, "usage: gpufl info"));
    free(err);
    const char *two[] = {GFL_CLI, "info", "a", "b", NULL};
    assert_int_equal(tu_run(two, NULL, &err), 64);
    free(err);
    const char *missing[] = {GFL_CLI, "info", "/nonexistent/session", NULL};
    assert_int_equal(tu_run(missing, NULL, &err), 1);
    assert_non_null(strstr(err, "/nonexistent/session"));
    free(err);
    const char *help[] = {GFL_CLI, "help", NULL};
    char *out;
    assert_int_equal(tu_run(help, &out, NULL), 0);
    assert_non_null(strstr(out, "gpufl info SESSION"));
    assert_non_null(strstr(out, "gpufl convert IN OUT"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ndjson_and_gflt),
        cmocka_unit_test(test_unended_and_stopped),
        cmocka_unit_test(test_usage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
