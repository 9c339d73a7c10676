/*
 * Readers against hostile files: a FIFO (or another file that is not a
 * regular one) in place of a session's files, JSON nested deeper than any
 * writer nests it, and strings that are not UTF-8.
 *
 * Why: a FIFO named scope.log used to hang 14 of 15 reader commands (open()
 * of a FIFO waits for a writer), a well-formed line with an unknown field
 * nested 99 levels deep read as "an array is not terminated", and a name
 * that is not UTF-8 failed as "out of memory". Every reader command and
 * gpufl_trace_open() is run, with a timeout so that a hang fails the test,
 * on a FIFO in place of each file of an NDJSON and of a .gflt session, in
 * the directory and named on its own; each must finish, and where it reads
 * that file, fail with a message naming it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/intern.h"
#include "gpufl/trace.h"
#include "read/json_scan.h"
#include "record.h"
#include "session_file.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "hostile-files")

/* Seconds a command may take before it counts as hung; the sessions are
 * small, so this is slack for a loaded machine or a sanitizer build. */
#define HANG_S "30"

/* Runs `gpufl command args...` under timeout(1). Returns its exit status;
 * fails the test when it was killed (a hang, or a crash). */
static int run_cli_out(const char *what, const char *const *args, char **out, char **err)
{
    const char *argv[20] = {"/usr/bin/timeout", "-s", "KILL", HANG_S, GFL_CLI};
    size_t n = 5;
    for (size_t i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    int rc = tu_run(argv, out, err);
    if (rc >= 124)
        fail_msg("gpufl %s %s: did not finish (status %d: killed after %s s, or crashed): %s", args[0], what, rc,
                 HANG_S, *err ? *err : "");
    return rc;
}

static int run_cli(const char *what, const char *const *args, char **err) { return run_cli_out(what, args, NULL, err); }

/* The reader commands, each with its arguments, SESSION standing for the
 * path under test. */
static const char *const commands[][8] = {
    {"summary", "SESSION", NULL},
    {"summary", "SESSION", "--json", NULL},
    {"info", "SESSION", NULL},
    {"info", "SESSION", "--json", NULL},
    {"report", "SESSION", NULL},
    {"report", "SESSION", "--format", "json", NULL},
    {"report", "SESSION", "--format", "html", "-o", "OUT", NULL},
    {"view", "SESSION", NULL},
    {"export", "SESSION", "-f", "chrome", "-o", "OUT", NULL},
    {"export", "SESSION", "-f", "perfetto", "-o", "OUT", NULL},
    {"export", "SESSION", "-f", "csv", "-o", "OUT", NULL},
    {"stacks", "SESSION", NULL},
    {"convert", "SESSION", "OUT", NULL},
    {"diff", "SESSION", "GOOD", NULL},
    {"diff", "GOOD", "SESSION", NULL},
    {"diff", "SESSION", "GOOD", "--format", "json", "--all", NULL},
    {"graph", "SESSION", "-f", "json", NULL},
    {"graph", "SESSION", "-f", "dot", NULL},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* gpufl_trace_open() in a child that SIGALRM ends if it hangs. */
static const char *trace_path, *trace_fifo;
static bool trace_must_fail;
static int open_in_child(void)
{
    alarm(30);
    gpufl_trace *t = NULL;
    char err[1024] = "";
    int rc = gpufl_trace_open(trace_path, &t, err, sizeof err);
    if (rc == 0) {
        gpufl_trace_close(t);
        return trace_must_fail ? __LINE__ : 0;
    }
    /* it failed, so it must say which file and why */
    if (!strstr(err, trace_fifo) || !strstr(err, "not a regular file")) {
        fprintf(stderr, "gpufl_trace_open(%s): %s\n", trace_path, err);
        return __LINE__;
    }
    return 0;
}

/* Runs every reader on session, where `fifo` (a file of it) is a FIFO.
 * reads_it: whether commands other than summary read that file (the logs
 * and trace.gflt; session.json is read by summary only). */
static void readers_on(const char *session, const char *good, const char *fifo, bool reads_it, bool named)
{
    char out[4300];
    snprintf(out, sizeof out, "%s/out", work);
    const char *base = strrchr(fifo, '/') + 1;
    for (size_t c = 0; c < N_COMMANDS; c++) {
        const char *args[10];
        size_t n = 0;
        for (const char *const *a = commands[c]; *a; a++)
            args[n++] = !strcmp(*a, "SESSION") ? session : !strcmp(*a, "GOOD") ? good : !strcmp(*a, "OUT") ? out : *a;
        args[n] = NULL;
        char *err = NULL;
        char what[4600];
        snprintf(what, sizeof what, "%s (%s a FIFO)", session, base);
        int rc = run_cli(what, args, &err);
        bool summary = !strcmp(commands[c][0], "summary");
        /* stacks takes a session.json for its directory, and reads the
         * directory's logs without opening session.json */
        bool stands_for_dir = !strcmp(commands[c][0], "stacks") && !strcmp(base, "session.json");
        bool must_fail = !stands_for_dir && (named || (summary ? !strcmp(base, "session.json") : reads_it));
        /* diff exits 1 for a regression between two readable sessions */
        bool failed = !strcmp(commands[c][0], "diff") ? rc == 2 : rc != 0;
        if (must_fail && !failed)
            fail_msg("gpufl %s %s: exit %d", commands[c][0], what, rc);
        if (failed && (!strstr(err, base) || !strstr(err, "not a regular file")))
            fail_msg("gpufl %s %s: exit %d without naming %s as not a regular file: %s", commands[c][0], what, rc, base,
                     err);
        free(err);
        tu_rm_rf(out);
    }
    trace_path = session;
    trace_fifo = base;
    trace_must_fail = named || reads_it;
    tu_expect_child_ok(open_in_child, __FILE__);
}

/* Each file of the session in dir in turn replaced by a FIFO. */
static void each_file_a_fifo(const char *dir, const char *good, const char *const *files)
{
    for (const char *const *f = files; *f; f++) {
        char path[4300], aside[4400];
        snprintf(path, sizeof path, "%s/%s", dir, *f);
        snprintf(aside, sizeof aside, "%s.aside", path);
        assert_int_equal(rename(path, aside), 0);
        assert_int_equal(mkfifo(path, 0600), 0);
        bool is_session_json = !strcmp(*f, "session.json");
        readers_on(dir, good, path, !is_session_json, false);
        readers_on(path, good, path, true, true);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rename(aside, path), 0);
    }
}

static void fifo_in_ndjson_session(void **state)
{
    (void)state;
    char *dir = tu_record_synthetic(work, "fifo", GPUFL_LOG_NDJSON, 0);
    char good_root[4200];
    snprintf(good_root, sizeof good_root, "%s/good", work);
    char *good = tu_record_synthetic(good_root, "good", GPUFL_LOG_NDJSON, 0);
    static const char *const files[] = {"scope.log", "device.log", "system.log", "session.json", NULL};
    each_file_a_fifo(dir, good, files);
    free(dir);
    free(good);
}

static void fifo_in_gflt_session(void **state)
{
    (void)state;
    char *dir = tu_record_synthetic(work, "fifo", GPUFL_LOG_GFLT, 0);
    char good_root[4200];
    snprintf(good_root, sizeof good_root, "%s/good", work);
    char *good = tu_record_synthetic(good_root, "good", GPUFL_LOG_GFLT, 0);
    static const char *const files[] = {"trace.gflt", "session.json", NULL};
    each_file_a_fifo(dir, good, files);
    free(dir);
    free(good);
}

/* ---- JSON nested deeper than any writer nests it -------------------------- */

/* {"x":[[[...]]],"type":... with depth levels: the unknown field "x" is
 * skipped whole. */
static char *nest(const char *line, size_t depth)
{
    size_t n = strlen(line);
    char *s = malloc(n + 2 * depth + 16);
    char *p = s;
    p += sprintf(p, "{\"x\":");
    memset(p, '[', depth);
    p += depth;
    memset(p, ']', depth);
    p += depth;
    *p++ = ',';
    memcpy(p, line + 1, n); /* the line without its '{', with its NUL */
    return s;
}

static void deep_unknown_field_is_skipped(void **state)
{
    (void)state;
    static const char line[] = "{\"type\":\"scope_begin\",\"id\":1}";
    static const size_t depths[] = {1, 64, 65, 99, 100000};
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        char *s = nest(line, depths[i]);
        gpufl__jfield f[8];
        const char *why = NULL;
        size_t at = 0;
        int n = gpufl__json_fields(s, strlen(s), f, 8, &why, &at);
        if (n != 3)
            fail_msg("%zu levels: %d fields (%s at %zu)", depths[i], n, why ? why : "", at);
        assert_int_equal(f[0].kind, GFL_J_ARRAY);
        assert_int_equal(f[0].val_len, 2 * depths[i]);
        free(s);
    }
    /* still strict: a nested value that does not end is an error */
    static const char open_only[] = "{\"x\":[[[[1]]],\"type\":\"scope_begin\"}";
    gpufl__jfield f[8];
    const char *why = NULL;
    size_t at = 0;
    assert_int_equal(gpufl__json_fields(open_only, strlen(open_only), f, 8, &why, &at), -1);
    assert_non_null(why);
}

/* The same through gpufl_trace_open(): a recorded session whose scope.log
 * starts with a field nested 99 levels reads back. */
static void deep_unknown_field_in_a_session(void **state)
{
    (void)state;
    char *dir = tu_record_synthetic(work, "deep", GPUFL_LOG_NDJSON, 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/scope.log", dir);
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    char *deep = nest(text, 99);
    tu_write_file(path, deep);
    gpufl_trace *t = tu_trace_open(dir);
    assert_true(gpufl_trace_event_count(t, GFL_EV_SCOPE_BEGIN) > 0);
    gpufl_trace_close(t);
    free(deep);
    free(text);
    free(dir);
}

/* ---- a module path of a stack that is a FIFO ------------------------------ */

/* A stack frame's module names the file its symbols are read from; a FIFO
 * there (a hostile session) must not block `stacks` or `report`, which
 * print the frame as module+offset instead. */
static void stack_module_fifo(void **state)
{
    (void)state;
    char fifo[4300], gflt[4300], sdir[4300];
    snprintf(fifo, sizeof fifo, "%s/libfifo.so", work);
    snprintf(gflt, sizeof gflt, "%s/lone.gflt", work);
    snprintf(sdir, sizeof sdir, "%s/s", work);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    gfl_event evs[2];
    memset(evs, 0, sizeof evs);
    evs[0].h = (gfl_event_header){.type = GFL_EV_STACK, .ts = 2000000, .tid = 7};
    evs[0].u.stack = (gfl_stack_payload){.id = 1, .first = 0, .total = 1, .count = 1};
    evs[0].u.stack.frames[0] = (gfl_stack_frame){gpufl__intern(fifo), 0x1234};
    evs[1].h = (gfl_event_header){.type = GFL_EV_KERNEL, .ts = 2000100, .tid = 7};
    evs[1].u.kernel = (gfl_kernel_payload){.end_ts = 2000600,
                                           .name = gpufl__intern("gemm"),
                                           .context = 1,
                                           .stream = 7,
                                           .correlation = 1,
                                           .grid = {1, 1, 1},
                                           .block = {32, 1, 1},
                                           .stack_id = 1};
    gpufl__session_meta m = {.session_id = "fifo-20261121-101010-4242-0123456789abcdef",
                             .app_name = "fifo",
                             .host = "node3",
                             .gpufl_version = "0.1.0",
                             .pid = 4242,
                             .start_ns = 1000000,
                             .start_wall_ns = 1790000000000000000ull,
                             .format_version = 1,
                             .ended = true,
                             .end_ns = 9000000,
                             .end_wall_ns = 1790000000008000000ull,
                             .stop_detail = ""};
    tu_write_gflt_and_ndjson(gflt, sdir, evs, 2, &m, 4, 1);
    const char *paths[] = {gflt, sdir};
    for (size_t i = 0; i < 2; i++) {
        const char *stacks[] = {"stacks", paths[i], "--symbolize-here", NULL};
        const char *report[] = {"report", paths[i], "--symbolize-here", NULL};
        char *out = NULL, *err = NULL;
        assert_int_equal(run_cli_out(paths[i], stacks, &out, &err), 0);
        if (!strstr(out, "libfifo.so+0x"))
            fail_msg("gpufl stacks %s: %s", paths[i], out);
        free(out);
        free(err);
        assert_int_equal(run_cli_out(paths[i], report, &out, &err), 0);
        free(out);
        free(err);
    }
}

/* ---- names that are not UTF-8 --------------------------------------------- */

/* A session whose app, scope names and log path hold bytes that are not
 * UTF-8; in .gflt they are kept as recorded (the chunks' CRCs hold). */
static char *record_not_utf8(gpufl_log_format format)
{
    char log_path[4300];
    snprintf(log_path, sizeof log_path, "%s/logs-\xe9\xff", work);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "app\xff\xfe";
    o.log_path = log_path;
    o.backend = GPUFL_BACKEND_NONE;
    o.log_format = format;
    assert_true(gpufl_init(&o));
    for (int i = 0; i < 20; i++) {
        gpufl_scope s = gpufl_scope_begin(i % 2 ? "caf\xe9" : "\xc3\x28 bad \xed\xa0\x80 surrogate");
        gpufl_scope_end(s);
    }
    gpufl_shutdown();
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    return dir;
}

static void readers_on_names_not_utf8(gpufl_log_format format)
{
    char *dir = record_not_utf8(format);
    char out[4300];
    snprintf(out, sizeof out, "%s/out", work);
    for (size_t c = 0; c < N_COMMANDS; c++) {
        const char *args[10];
        size_t n = 0;
        for (const char *const *a = commands[c]; *a; a++)
            args[n++] = !strcmp(*a, "SESSION") || !strcmp(*a, "GOOD") ? dir : !strcmp(*a, "OUT") ? out : *a;
        args[n] = NULL;
        char *err = NULL, *text = NULL;
        int rc = run_cli_out(dir, args, &text, &err);
        if (rc != 0)
            fail_msg("gpufl %s on names that are not UTF-8: exit %d: %s", commands[c][0], rc, err);
        /* what is JSON stays JSON (jansson refuses text that is not UTF-8) */
        bool json_out = false, json_file = !strcmp(commands[c][0], "export") && !strcmp(commands[c][3], "chrome");
        for (size_t a = 0; commands[c][a]; a++)
            json_out |= !strcmp(commands[c][a], "--json") || !strcmp(commands[c][a], "json");
        json_error_t e;
        json_t *j = json_out ? json_loads(text, 0, &e) : json_file ? json_load_file(out, 0, &e) : NULL;
        if ((json_out || json_file) && !j)
            fail_msg("gpufl %s on names that are not UTF-8: not JSON: %s", commands[c][0], e.text);
        json_decref(j);
        free(text);
        free(err);
        tu_rm_rf(out);
    }
    gpufl_trace *t = tu_trace_open(dir);
    gpufl_trace_close(t);
    *strrchr(dir, '/') = '\0'; /* the log directory, for the next recording */
    tu_rm_rf(dir);
    free(dir);
}

static void names_not_utf8_ndjson(void **state)
{
    (void)state;
    readers_on_names_not_utf8(GPUFL_LOG_NDJSON);
}

static void names_not_utf8_gflt(void **state)
{
    (void)state;
    readers_on_names_not_utf8(GPUFL_LOG_GFLT);
    /* a lone trace.gflt converted to a directory: its session.json is
     * rebuilt from the trace's own names */
    char *dir = record_not_utf8(GPUFL_LOG_GFLT);
    char lone[4300], gflt[4400], out[4300];
    snprintf(lone, sizeof lone, "%s/lone-\xfe", work);
    assert_int_equal(mkdir(lone, 0700), 0);
    snprintf(gflt, sizeof gflt, "%s/trace.gflt", dir);
    char *bytes;
    size_t len;
    assert_non_null(bytes = tu_read_file(gflt, &len));
    snprintf(gflt, sizeof gflt, "%s/trace.gflt", lone);
    FILE *f = fopen(gflt, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    fclose(f);
    free(bytes);
    snprintf(out, sizeof out, "%s/converted", work);
    const char *args[] = {"convert", gflt, out, NULL};
    char *err = NULL;
    if (run_cli(gflt, args, &err) != 0)
        fail_msg("gpufl convert %s: %s", gflt, err);
    free(err);
    json_t *j = tu_session_json(out);
    assert_string_equal(tu_str(j, "app_name"), "app\xef\xbf\xbd\xef\xbf\xbd");
    assert_non_null(strstr(tu_str(j, "converted_from"), "lone-\xef\xbf\xbd"));
    json_decref(j);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(fifo_in_ndjson_session, setup, teardown),
        cmocka_unit_test_setup_teardown(fifo_in_gflt_session, setup, teardown),
        cmocka_unit_test(deep_unknown_field_is_skipped),
        cmocka_unit_test_setup_teardown(deep_unknown_field_in_a_session, setup, teardown),
        cmocka_unit_test_setup_teardown(stack_module_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(names_not_utf8_ndjson, setup, teardown),
        cmocka_unit_test_setup_teardown(names_not_utf8_gflt, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
