/*
 * The text and JSON reports (src/present/report_text*.c, report_json.c) of
 * hand-written sessions (report_fixture.h), compared byte for byte with
 * golden files under tests/golden/, and the JSON checked against its
 * schema (report_schema.h, docs/REPORT.md) and against the fixture's
 * numbers; the JSON of the real sample session checked against the schema.
 *
 * Why: the report is what users read and what scripts parse; any change of
 * its text or fields must be seen in review, as a change of a golden file.
 *
 * After an intended change, regenerate the golden files with
 *     GPUFL_UPDATE_GOLDEN=1 ctest -R test_report_golden
 * (or run the test binary with that variable) and review their diff.
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

#include "analyze/analysis.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "present/report/report_json.h"
#include "present/report/report_text.h"
#include "read/stack_table.h"
#include "report_fixture.h"
#include "report_schema.h"
#include "session_file.h"

#define GOLDEN_DIR GFL_SOURCE_DIR "/tests/golden"
#define SAMPLE GFL_SOURCE_DIR "/samples/train_sample/trace.gflt"

TU_TEMP_DIR_FIXTURES(dir, "report-golden")

typedef struct opened {
    gpufl_trace *t;
    gpufl__ana_report r;
} opened;

static void open_and_analyze(const char *path, opened *o)
{
    o->t = tu_trace_open(path);
    assert_int_equal(gpufl__analyze_report(o->t, NULL, &o->r), 0);
}

static void close_opened(opened *o)
{
    gpufl__ana_report_free(&o->r);
    gpufl_trace_close(o->t);
}

/* A frame namer that does what a symbolizer would, deterministically. */
static void fake_name_frame(void *ctx, const char *module, uint64_t offset, char *buf, size_t len)
{
    (void)ctx;
    const char *base = module ? strrchr(module, '/') : NULL;
    snprintf(buf, len, "fn_%llx in %s", (unsigned long long)offset, base ? base + 1 : "?");
}

static char *render(const opened *o, bool json, const gpufl__stack_table *stacks)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    gpufl__report_text_opts to = {.stacks = stacks, .name_frame = stacks ? fake_name_frame : NULL};
    int rc = json ? gpufl__report_json(o->t, &o->r, f) : gpufl__report_text(o->t, &o->r, &to, f);
    assert_int_equal(rc, 0);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* Compares text with tests/golden/<name>, or rewrites it when
 * GPUFL_UPDATE_GOLDEN=1. On a difference, prints the first differing line. */
static void check_golden(const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, name);
    const char *update = getenv("GPUFL_UPDATE_GOLDEN");
    if (update && !strcmp(update, "1")) {
        tu_write_file(path, text);
        print_message("rewrote %s\n", path);
        return;
    }
    char *want = tu_read_file(path, NULL);
    if (!want)
        fail_msg("%s is missing: run with GPUFL_UPDATE_GOLDEN=1 to create it", path);
    if (strcmp(want, text) != 0) {
        const char *a = want, *b = text;
        int line = 1;
        while (*a && *a == *b) {
            if (*a == '\n')
                line++;
            a++, b++;
        }
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        print_error("%s differs at line %d:\n  golden: %.*s\n  now:    %.*s\n", path, line,
                    (int)(ea ? ea - a : (long)strlen(a)), a, (int)(eb ? eb - b : (long)strlen(b)), b);
        free(want);
        fail_msg("the report differs from %s (GPUFL_UPDATE_GOLDEN=1 rewrites it after a wanted change)", name);
    }
    free(want);
}

static json_t *parse_json(const char *text)
{
    json_error_t e;
    json_t *doc = json_loads(text, 0, &e);
    if (!doc)
        fail_msg("the JSON report does not parse: line %d: %s", e.line, e.text);
    char why[1024];
    if (report_schema_check(doc, why, sizeof why) != 0)
        fail_msg("the JSON report does not follow its schema: %s", why);
    return doc;
}

static json_int_t jint(json_t *obj, const char *path)
{
    /* a.b.c with [i] for array elements */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *v = obj;
    for (char *tok = strtok(buf, "."); tok && v; tok = strtok(NULL, ".")) {
        char *br = strchr(tok, '[');
        if (br) {
            *br = '\0';
            v = json_object_get(v, tok);
            v = json_array_get(v, (size_t)atoi(br + 1));
        } else {
            v = json_object_get(v, tok);
        }
    }
    if (!json_is_integer(v))
        fail_msg("%s: not an integer", path);
    return json_integer_value(v);
}

static void test_full_session(void **state)
{
    (void)state;
    char path[4096];
    rf_write(dir, "full", path);
    opened o;
    open_and_analyze(path, &o);

    gpufl__stack_table stacks;
    char err[512];
    assert_int_equal(gpufl__stack_table_load(path, &stacks, err, sizeof err), 0);
    char *text = render(&o, false, &stacks);
    check_golden("report_full.txt", text);
    /* What the reader must find in it, whatever the golden file says. */
    assert_non_null(strstr(text, "gpufl report: golden-20261121-000000-42-abcd"));
    assert_non_null(strstr(text, " 1. gemm  "));
    assert_non_null(strstr(text, "fn_5a3c1 in libcudart.so.12"));
    assert_non_null(strstr(text, "step/forward"));
    free(text);
    /* Without the stack table: ids and the hint. */
    text = render(&o, false, NULL);
    assert_non_null(strstr(text, "(frames: gpufl stacks SESSION)"));
    assert_null(strstr(text, "fn_5a3c1"));
    free(text);
    gpufl__stack_table_free(&stacks);

    text = render(&o, true, NULL);
    check_golden("report_full.json", text);
    json_t *doc = parse_json(text);
    /* Numbers worked out from report_fixture.h. */
    assert_int_equal(jint(doc, "schema_version"), GPUFL_REPORT_JSON_VERSION);
    assert_int_equal(jint(doc, "summary.kernels"), 5);
    assert_int_equal(jint(doc, "summary.kernel_ns"), 1000000 + 1000000 + 10000 + 500000 + 100000);
    assert_int_equal(jint(doc, "summary.copies"), 2);
    assert_int_equal(jint(doc, "summary.copy_bytes"), 1048576 + 4194304);
    assert_int_equal(jint(doc, "summary.dropped_total"), 3);
    assert_int_equal(jint(doc, "summary.dropped.ring_full"), 3);
    assert_int_equal(jint(doc, "hotspots.distinct"), 3);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(json_object_get(doc, "hotspots"), "kernels"), 0), "name")),
                        "gemm");
    assert_int_equal(jint(doc, "hotspots.kernels[0].dur.n"), 3);
    assert_int_equal(jint(doc, "hotspots.kernels[0].dur.total"), 2500000);
    assert_int_equal(jint(doc, "hotspots.kernels[0].config_launches"), 2);
    assert_int_equal(jint(doc, "hotspots.kernels[0].configs"), 2);
    assert_int_equal(jint(doc, "hotspots.kernels[0].streams"), 2);
    assert_int_equal(jint(doc, "launches.with_api"), 4);
    assert_int_equal(jint(doc, "launches.short_kernels"), 1);
    assert_int_equal(jint(doc, "memory.rows[0].unmatched_frees"), 1);
    assert_int_equal(jint(doc, "memory.rows[0].never_freed_bytes"), 8388608);
    assert_int_equal(jint(doc, "scopes.nvtx_marks"), 1);
    json_decref(doc);
    free(text);
    close_opened(&o);
}

static void test_crashed_session(void **state)
{
    (void)state;
    char path[4096];
    rf_write(dir, "crashed", path);
    opened o;
    open_and_analyze(path, &o);
    char *text = render(&o, false, NULL);
    check_golden("report_crashed.txt", text);
    assert_non_null(strstr(text, "did not end"));
    assert_non_null(strstr(text, "gpufl scopes: none recorded"));
    assert_non_null(strstr(text, "allocations not recorded"));
    free(text);
    text = render(&o, true, NULL);
    check_golden("report_crashed.json", text);
    json_t *doc = parse_json(text);
    assert_false(json_is_true(json_object_get(json_object_get(doc, "session"), "ended")));
    assert_int_equal(jint(doc, "summary.kernels"), 2);
    json_decref(doc);
    free(text);
    close_opened(&o);
}

/* The real sample (a PyTorch training run on an H200): its JSON follows the
 * schema. test_report_cli checks what its text says. */
static void test_sample_session(void **state)
{
    (void)state;
    opened o;
    open_and_analyze(SAMPLE, &o);
    char *text = render(&o, true, NULL);
    json_t *doc = parse_json(text);
    json_decref(doc);
    free(text);
    close_opened(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_session),
        cmocka_unit_test(test_crashed_session),
        cmocka_unit_test(test_sample_session),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
