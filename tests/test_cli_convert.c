/*
 * `gpufl convert` (src/cli/cmd_convert.c): sessions between NDJSON and
 * .gflt, through the command itself.
 *
 * Why: convert is the promise that the two formats hold the same thing.
 * Checked on sessions recorded by the library with the synthetic device
 * plugin: NDJSON -> .gflt -> NDJSON gives byte-identical logs (session_start
 * and session_end lines included); .gflt -> NDJSON -> .gflt gives, event by
 * event, what the logs hold (the fields NDJSON has no place for are the
 * only difference, and each second trip changes nothing); a rotated session
 * converts into one file per channel with every event in order; and usage
 * errors, missing or damaged input and an existing output are refused with
 * the documented exit codes, leaving no half-written file.
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
#include <unistd.h>

#include "event_gen.h"
#include "read/event_source.h"
#include "record.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "cli-convert")

static int convert(const char *in, const char *out, const char *flag, char **err)
{
    const char *argv[] = {GFL_CLI, "convert", in, out, flag, NULL};
    return tu_run(argv, NULL, err);
}

static char *path_in(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

static void expect_same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = tu_read_file(a, &na), *y = tu_read_file(b, &nb);
    assert_non_null(x);
    assert_non_null(y);
    if (na != nb || memcmp(x, y, na) != 0)
        fail_msg("%s and %s differ (%zu and %zu bytes)", a, b, na, nb);
    free(x);
    free(y);
}

static void expect_same_logs(const char *a, const char *b)
{
    static const char *const logs[] = {"device.log", "scope.log", "system.log"};
    for (int i = 0; i < 3; i++) {
        char *x = path_in(a, logs[i]), *y = path_in(b, logs[i]);
        expect_same_file(x, y);
        free(x);
        free(y);
    }
}

/* NDJSON -> .gflt -> NDJSON: the same logs, byte for byte. */
static void test_ndjson_gflt_ndjson(void **state)
{
    (void)state;
    char *logs = path_in(work, "nd"), *gflt = path_in(work, "nd.gflt"), *back = path_in(work, "nd-back");
    char *dir = tu_record_synthetic(logs, "convert_nd", GPUFL_LOG_NDJSON, 0);
    char *err;
    int rc = convert(dir, gflt, NULL, &err);
    if (rc != 0)
        fail_msg("convert: %d %s", rc, err);
    assert_non_null(strstr(err, "events from"));
    free(err);
    assert_int_equal(convert(gflt, back, NULL, &err), 0);
    free(err);
    expect_same_logs(dir, back);
    /* the .gflt is much smaller than the logs */
    struct stat st;
    assert_int_equal(stat(gflt, &st), 0);
    char *dev = path_in(dir, "device.log");
    struct stat sd;
    assert_int_equal(stat(dev, &sd), 0);
    assert_true(st.st_size * 10 < sd.st_size);
    free(dev);
    free(dir);
    free(logs);
    free(gflt);
    free(back);
}

/* The events of a .gflt file as their NDJSON lines give them (strings in
 * out->strings). */
typedef struct events {
    gfl_event *v;
    size_t n;
    gpufl__strtab strings;
} events;

static void load(const char *path, events *out)
{
    gpufl__event_source *s;
    char err[1024];
    assert_int_equal(gpufl__source_open(path, &s, err, sizeof err), 0);
    assert_int_equal(gpufl__strtab_init(&out->strings), 0);
    out->v = NULL;
    out->n = 0;
    size_t cap = 0;
    const gfl_event *ev;
    int rc;
    while ((rc = gpufl__source_next(s, &ev)) == 1) {
        if (out->n == cap) {
            cap = cap ? cap * 2 : 4096;
            out->v = realloc(out->v, cap * sizeof *out->v);
            assert_non_null(out->v);
        }
        tu_ndjson_roundtrip(ev, &s->strings, &out->strings, &out->v[out->n++]);
    }
    assert_int_equal(rc, 0);
    gpufl__source_close(s);
}

static void test_gflt_ndjson_gflt(void **state)
{
    (void)state;
    char *logs = path_in(work, "bin"), *nd = path_in(work, "bin-nd"), *again = path_in(work, "again.gflt"),
         *nd2 = path_in(work, "bin-nd2");
    char *dir = tu_record_synthetic(logs, "convert_bin", GPUFL_LOG_GFLT, 0);
    char *gflt = path_in(dir, "trace.gflt");
    char *err;
    assert_int_equal(convert(gflt, nd, NULL, &err), 0);
    free(err);
    assert_int_equal(convert(nd, again, "--level=ignored", &err), 64); /* a bad flag */
    free(err);
    assert_int_equal(convert(nd, again, NULL, &err), 0);
    free(err);
    /* the converted .gflt holds the original events as their lines hold them */
    events orig, conv;
    load(gflt, &orig);
    load(again, &conv);
    assert_int_equal(orig.n, conv.n);
    assert_true(orig.n > 2000);
    /* channel by channel: the NDJSON logs keep each channel's order, and a
     * session directory is read one channel after the other */
    gpufl__string_lookup lo = gpufl__strtab_lookup(&orig.strings), lc = gpufl__strtab_lookup(&conv.strings);
    for (unsigned ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        size_t j = 0, compared = 0;
        for (size_t i = 0; i < orig.n; i++) {
            if (gpufl__event_route(&orig.v[i]) != ch)
                continue;
            while (j < conv.n && gpufl__event_route(&conv.v[j]) != ch)
                j++;
            assert_true(j < conv.n);
            const char *diff = tu_event_diff(&orig.v[i], &lo, &conv.v[j], &lc);
            if (diff)
                fail_msg("%s event %zu: %s", gpufl__channel_name((uint8_t)ch), compared, diff);
            j++;
            compared++;
        }
    }
    /* a second trip changes nothing */
    assert_int_equal(convert(again, nd2, NULL, &err), 0);
    free(err);
    expect_same_logs(nd, nd2);
    free(orig.v);
    free(conv.v);
    gpufl__strtab_free(&orig.strings);
    gpufl__strtab_free(&conv.strings);
    free(gflt);
    free(dir);
    free(logs);
    free(nd);
    free(nd2);
    free(again);
}

/* A rotated session: one .gflt, then one log per channel, every event. */
static void test_rotated(void **state)
{
    (void)state;
    char *logs = path_in(work, "rot"), *gflt = path_in(work, "rot.gflt"), *back = path_in(work, "rot-back");
    char *dir = tu_record_synthetic(logs, "convert_rot", GPUFL_LOG_NDJSON, 64 << 10);
    char *part = path_in(dir, "device.1.log");
    assert_true(tu_exists(part));
    char *err;
    assert_int_equal(convert(dir, gflt, NULL, &err), 0);
    free(err);
    assert_int_equal(convert(gflt, back, NULL, &err), 0);
    free(err);
    /* every event line of the parts, in order, is in the one device.log */
    tu_ndjson a, b;
    assert_int_equal(tu_ndjson_load_channel(dir, "device", &a), 0);
    char *dev = path_in(back, "device.log");
    assert_int_equal(tu_ndjson_load(dev, &b), 0);
    size_t j = 0;
    for (size_t i = 0; i < a.n; i++) {
        const char *type = json_string_value(json_object_get(a.lines[i], "type"));
        if (!strcmp(type, "session_start") || !strcmp(type, "session_end"))
            continue;
        while (j < b.n && !strcmp(json_string_value(json_object_get(b.lines[j], "type")), "session_start"))
            j++;
        assert_true(j < b.n);
        assert_true(json_equal(a.lines[i], b.lines[j]));
        j++;
    }
    assert_string_equal(json_string_value(json_object_get(b.lines[b.n - 1], "type")), "session_end");
    tu_ndjson_free(&a);
    tu_ndjson_free(&b);
    free(dev);
    free(part);
    free(dir);
    free(logs);
    free(gflt);
    free(back);
}

static void test_refusals(void **state)
{
    (void)state;
    char *err;
    const char *none[] = {GFL_CLI, "convert", NULL};
    assert_int_equal(tu_run(none, NULL, &err), 64);
    assert_non_null(strstr(err, "usage: gpufl convert"));
    free(err);
    const char *one[] = {GFL_CLI, "convert", "x", NULL};
    assert_int_equal(tu_run(one, NULL, &err), 64);
    free(err);
    const char *level[] = {GFL_CLI, "convert", "a", "b.gflt", "--level", "42", NULL};
    assert_int_equal(tu_run(level, NULL, &err), 64);
    free(err);
    char *out = path_in(work, "x.gflt");
    assert_int_equal(convert("/nonexistent/session", out, NULL, &err), 1);
    assert_non_null(strstr(err, "/nonexistent/session"));
    free(err);
    assert_false(tu_exists(out));
    /* an existing output is kept unless --force */
    char *logs = path_in(work, "ref");
    char *dir = tu_record_synthetic(logs, "convert_ref", GPUFL_LOG_NDJSON, 0);
    tu_write_file(out, "precious");
    assert_int_equal(convert(dir, out, NULL, &err), 1);
    assert_non_null(strstr(err, "--force"));
    free(err);
    char *kept = tu_read_file(out, NULL);
    assert_string_equal(kept, "precious");
    free(kept);
    assert_int_equal(convert(dir, out, "--force", &err), 0);
    free(err);
    /* a directory that exists and is not empty */
    assert_int_equal(convert(out, dir, NULL, &err), 1);
    assert_non_null(strstr(err, "not empty"));
    free(err);
    /* damaged input: an error naming it, and no output left behind */
    char *bad = path_in(work, "bad.log"), *bad_out = path_in(work, "bad.gflt");
    tu_write_file(bad,
                  "{\"type\":\"scope_begin\",\"ts_ns\":1,\"name\":\"a\"}\n{broken\n{\"type\":\"log\",\"ts_ns\":2}\n");
    assert_int_equal(convert(bad, bad_out, NULL, &err), 1);
    assert_non_null(strstr(err, "bad.log:2:"));
    free(err);
    assert_false(tu_exists(bad_out));
    free(bad);
    free(bad_out);
    free(dir);
    free(logs);
    free(out);
}

/* `gpufl summary --json` of dir, parsed (json_decref it). */
static json_t *summary_json(const char *dir)
{
    char *out, *err;
    int rc = tu_run_subcommand(GFL_CLI, "summary", (const char *const[]){dir, "--json", NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl summary %s: exit %d: %s", dir, rc, err);
    json_error_t jerr;
    json_t *j = json_loads(out, 0, &jerr);
    if (!j)
        fail_msg("gpufl summary %s --json: %s", dir, jerr.text);
    free(out);
    free(err);
    return j;
}

static long long kernels_of(json_t *summary) { return tu_int(json_object_get(summary, "events"), "kernel"); }

/* A converted directory has a session.json, so `gpufl summary` reads it as
 * it reads the recorded one: the source's own for a session directory, one
 * rebuilt from the events for a lone .gflt. */
static void test_summary_of_converted(void **state)
{
    (void)state;
    char *logs = path_in(work, "sum"), *out = path_in(work, "sum-nd"), *lone = path_in(work, "lone.gflt"),
         *out2 = path_in(work, "lone-nd");
    char *dir = tu_record_synthetic(logs, "convert_sum", GPUFL_LOG_GFLT, 0);
    char *gflt = path_in(dir, "trace.gflt");
    json_t *orig = tu_session_json(dir);
    json_t *orig_summary = json_object_get(orig, "summary");
    char *err;

    assert_int_equal(convert(dir, out, NULL, &err), 0);
    free(err);
    json_t *copied = tu_session_json(out);
    char *real_out = realpath(out, NULL), *real_dir = realpath(dir, NULL);
    assert_string_equal(tu_str(copied, "session_id"), tu_str(orig, "session_id"));
    assert_string_equal(tu_str(copied, "log_dir"), real_out);
    assert_string_equal(tu_str(copied, "converted_from"), real_dir);
    assert_non_null(json_object_get(copied, "options")); /* only the recorder knew them */
    json_t *sum = summary_json(out);
    assert_int_equal(kernels_of(sum), kernels_of(orig_summary));
    json_decref(sum);

    /* away from its session.json, the trace alone */
    assert_int_equal(link(gflt, lone), 0);
    assert_int_equal(convert(lone, out2, NULL, &err), 0);
    free(err);
    json_t *rebuilt = tu_session_json(out2);
    static const char *const same[] = {"session_id", "app_name", "host", "start_time", "status", "end_time"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        assert_string_equal(tu_str(rebuilt, same[i]), tu_str(orig, same[i]));
    assert_int_equal(tu_int(rebuilt, "pid"), tu_int(orig, "pid"));
    assert_null(json_object_get(rebuilt, "options")); /* absent, not guessed */
    sum = summary_json(out2);
    assert_true(kernels_of(sum) > 0);
    assert_int_equal(kernels_of(sum), kernels_of(orig_summary));
    json_t *top = json_array_get(json_object_get(sum, "kernels"), 0),
           *orig_top = json_array_get(json_object_get(orig_summary, "kernels"), 0);
    assert_string_equal(tu_str(top, "name"), tu_str(orig_top, "name"));
    assert_int_equal(tu_int(top, "count"), tu_int(orig_top, "count"));
    json_decref(sum);
    /* and as text */
    char *text;
    assert_int_equal(tu_run_subcommand(GFL_CLI, "summary", (const char *const[]){out2, NULL}, &text, &err), 0);
    assert_non_null(strstr(text, tu_str(orig, "session_id")));
    free(text);
    free(err);

    json_decref(rebuilt);
    json_decref(copied);
    json_decref(orig);
    free(real_out);
    free(real_dir);
    free(gflt);
    free(dir);
    free(logs);
    free(out);
    free(lone);
    free(out2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ndjson_gflt_ndjson),
        cmocka_unit_test(test_gflt_ndjson_gflt),
        cmocka_unit_test(test_rotated),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_summary_of_converted),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
