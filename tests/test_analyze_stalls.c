/*
 * Warp stalls from PC sampling (analyze/ana_stalls.c) and their report
 * sections, on a hand-built session: two scopes, a memory-bound kernel
 * launched in each and a math kernel in the first, and four collections
 * of PC samples, the last of a function with no recorded launch.
 *
 * Why: the report's stall section was always empty; now the samples must
 * come out summed by reason, kernel, source line and scope, with the
 * samples of a collection shared among the launches running then.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "ana_fixture.h"
#include "analyze/analysis.h"
#include "present/report/report_html.h"
#include "present/report/report_json.h"
#include "present/report/report_text.h"
#include "report_render.h"

#define MS 1000000ull

static char dir[4096];

static void pc(af *f, uint64_t ts, uint64_t since, const char *fn, unsigned pc_offset, const char *file, unsigned line,
               const char *stalls)
{
    char where[256] = "";
    if (file)
        snprintf(where, sizeof where, ",\"file\":\"%s\",\"line\":%u", file, line);
    af_line(f, AF_DEVICE,
            "{\"type\":\"pc_sample\",\"ts_ns\":%llu,\"device\":0,\"since_ns\":%llu,\"function\":\"%s\","
            "\"cubin_crc\":\"0xabc\",\"pc_offset\":\"0x%x\"%s,\"stalls\":{%s}}",
            (unsigned long long)ts, (unsigned long long)since, fn, pc_offset, where, stalls);
}

static gpufl_trace *session(void)
{
    af f = {.end_ns = AF_START + 6000 * MS};
    af_scope(&f, 7, 1, 0, 0, "step", AF_START, AF_START + 1000 * MS);
    af_scope(&f, 7, 2, 0, 0, "eval", AF_START + 1000 * MS, AF_START + 2000 * MS);
    af_kernel(&f,
              (af_k){.start = AF_START + 100 * MS, .end = AF_START + 400 * MS, .name = "k_mem", .tid = 7, .scope = 1});
    af_kernel(&f,
              (af_k){.start = AF_START + 500 * MS, .end = AF_START + 600 * MS, .name = "k_math", .tid = 7, .scope = 1});
    af_kernel(
        &f, (af_k){.start = AF_START + 1100 * MS, .end = AF_START + 1200 * MS, .name = "k_mem", .tid = 7, .scope = 2});
    pc(&f, AF_START + 450 * MS, AF_START + 100 * MS, "k_mem", 0x10, "a.cu", 12,
       "\"long_scoreboard\":600,\"selected\":100");
    pc(&f, AF_START + 450 * MS, AF_START + 100 * MS, "k_mem", 0x20, "a.cu", 13, "\"wait\":100");
    pc(&f, AF_START + 700 * MS, AF_START + 450 * MS, "k_math", 0x30, "a.cu", 20,
       "\"math_pipe_throttle\":300,\"selected\":200");
    pc(&f, AF_START + 1300 * MS, AF_START + 1000 * MS, "k_mem", 0x10, "a.cu", 12, "\"long_scoreboard\":200");
    pc(&f, AF_START + 5000 * MS, AF_START + 4900 * MS, "k_gone", 0x40, NULL, 0, "\"wait\":50");
    return af_open(&f, dir, "stalls");
}

static const gpufl__ana_stall_row *row_named(const gpufl_trace *t, const gpufl__ana_stall_row *v, uint32_t n,
                                             const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(name, v[i].name ? gpufl_trace_string(t, v[i].name) : ""))
            return &v[i];
    fail_msg("no row %s", name);
    return NULL;
}

static void sums_by_reason_kernel_line_and_scope(void **state)
{
    (void)state;
    gpufl_trace *t = session();
    gpufl__ana_stalls s;
    assert_int_equal(gpufl__analyze_stalls(t, &s), 0);
    assert_int_equal(s.samples, 1550);
    assert_int_equal(s.stalled, 1250); /* less the 300 "selected" */
    assert_string_equal(gpufl_trace_string(t, s.reasons[0].reason), "long_scoreboard");
    assert_int_equal(s.reasons[0].samples, 800);

    assert_int_equal(s.nkernels, 3);
    const gpufl__ana_stall_row *mem = row_named(t, s.kernels, s.nkernels, "k_mem");
    assert_ptr_equal(mem, &s.kernels[0]); /* most samples first */
    assert_int_equal(mem->samples, 1000);
    assert_int_equal(mem->stalled, 900);
    assert_int_equal(mem->kernel_ns, 400 * MS);
    assert_string_equal(gpufl_trace_string(t, mem->top[0].reason), "long_scoreboard");
    assert_int_equal(mem->top[0].samples, 800);
    assert_string_equal(gpufl_trace_string(t, mem->top[1].reason), "wait");
    const gpufl__ana_stall_row *math = row_named(t, s.kernels, s.nkernels, "k_math");
    assert_int_equal(math->samples, 500);
    assert_string_equal(gpufl_trace_string(t, math->top[0].reason), "math_pipe_throttle");
    assert_int_equal(math->top[1].samples, 0); /* "selected" is never a stall */

    assert_int_equal(s.nlines, 3);
    assert_string_equal(gpufl_trace_string(t, s.lines[0].file), "a.cu");
    assert_int_equal(s.lines[0].line, 12);
    assert_int_equal(s.lines[0].samples, 900);
    assert_int_equal(s.no_line, 50);

    /* the first two collections fall in step's launches, the third in eval's */
    const gpufl__ana_stall_row *step = row_named(t, s.scopes, s.nscopes, "step");
    const gpufl__ana_stall_row *eval = row_named(t, s.scopes, s.nscopes, "eval");
    assert_int_equal(step->samples, 1300);
    assert_int_equal(eval->samples, 200);
    assert_int_equal(s.unattributed, 50);
    gpufl__ana_stalls_free(&s);
    gpufl_trace_close(t);
}

/* A collection that two launches of the function overlap is shared by
 * the time each ran in it. */
static void shares_a_collection_by_time(void **state)
{
    (void)state;
    af f = {.end_ns = AF_START + 2000 * MS};
    af_scope(&f, 7, 1, 0, 0, "a", AF_START, AF_START + 1000 * MS);
    af_scope(&f, 8, 2, 0, 0, "b", AF_START, AF_START + 1000 * MS);
    af_kernel(
        &f,
        (af_k){
            .start = AF_START + 300 * MS, .end = AF_START + 600 * MS, .name = "k", .tid = 7, .scope = 1, .stream = 1});
    af_kernel(
        &f,
        (af_k){
            .start = AF_START + 500 * MS, .end = AF_START + 600 * MS, .name = "k", .tid = 8, .scope = 2, .stream = 2});
    pc(&f, AF_START + 700 * MS, AF_START + 500 * MS, "k", 0x10, NULL, 0, "\"wait\":400");
    /* collected 1 s after the launch of k2 ended: only the wider stretch has it */
    af_kernel(
        &f,
        (af_k){
            .start = AF_START + 800 * MS, .end = AF_START + 900 * MS, .name = "k2", .tid = 8, .scope = 2, .stream = 2});
    pc(&f, AF_START + 2000 * MS, AF_START + 1900 * MS, "k2", 0x10, NULL, 0, "\"wait\":60");
    gpufl_trace *t = af_open(&f, dir, "shared");
    gpufl__ana_stalls s;
    assert_int_equal(gpufl__analyze_stalls(t, &s), 0);
    /* the window starts 250 ms before since: a ran 300 ms in it, b 100 ms */
    assert_int_equal(row_named(t, s.scopes, s.nscopes, "a")->samples, 300);
    assert_int_equal(row_named(t, s.scopes, s.nscopes, "b")->samples, 160);
    assert_int_equal(s.unattributed, 0);
    gpufl__ana_stalls_free(&s);
    gpufl_trace_close(t);
}

static void reports_show_them(void **state)
{
    (void)state;
    gpufl_trace *t = session();
    char *text = tu_render_report(t, false);
    if (!strstr(text, "Warp stalls (PC sampling)") || !strstr(text, "long_scoreboard 80.0 %") ||
        !strstr(text, "a.cu:12") || !strstr(text, "(50 samples fell in no recorded launch)")) {
        fputs(text, stderr); /* cmocka cuts a long message short */
        fail_msg("the text report above lacks the stalls");
    }
    free(text);
    char *js = tu_render_report(t, true);
    json_error_t err;
    json_t *doc = json_loads(js, 0, &err);
    assert_non_null(doc);
    json_t *st = json_object_get(json_object_get(doc, "counters"), "stalls");
    assert_string_equal(json_string_value(json_object_get(st, "status")), "rows");
    assert_int_equal(json_integer_value(json_object_get(st, "samples")), 1550);
    json_t *k0 = json_array_get(json_object_get(st, "kernels"), 0);
    assert_string_equal(json_string_value(json_object_get(k0, "name")), "k_mem");
    json_t *top = json_array_get(json_object_get(k0, "top"), 0);
    assert_string_equal(json_string_value(json_object_get(top, "reason")), "long_scoreboard");
    json_decref(doc);
    free(js);
    /* the HTML page's section, names escaped like every other text of it */
    gpufl__ana_report rep;
    assert_int_equal(gpufl__analyze_report(t, NULL, &rep), 0);
    char path[4200], why[512];
    snprintf(path, sizeof path, "%s/stalls.html", dir);
    assert_int_equal(gpufl__report_html(t, &rep, path, why, sizeof why), 0);
    gpufl__ana_report_free(&rep);
    char *html = tu_read_file(path, NULL);
    assert_non_null(html);
    const char *sec = strstr(html, "<section id=stalls>");
    if (!sec || !strstr(sec, "long_scoreboard 80.0 %") || !strstr(sec, "a.cu:12") ||
        !strstr(sec, "selected (issuing)") || !strstr(sec, "50 samples fell in no recorded launch"))
        fail_msg("the HTML page lacks the stalls section or its figures");
    free(html);
    gpufl_trace_close(t);
}

int main(void)
{
    char *d = tu_mkdtemp("stalls");
    snprintf(dir, sizeof dir, "%s", d);
    free(d);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sums_by_reason_kernel_line_and_scope),
        cmocka_unit_test(shares_a_collection_by_time),
        cmocka_unit_test(reports_show_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
