/*
 * The SASS metrics analysis (ana_sass.c) on hand-built sessions: sums per
 * kernel and per source line, coalescing and active lanes, launches from
 * the kernel events of the same name, rows without a line kept per pc, and the
 * uncoalesced and divergent findings at their thresholds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "ana_fixture.h"
#include "analyze/analysis.h"
#include "core/event.h"
#include "present/report/report_html.h"
#include "report_render.h"
#include "report_schema.h"

TU_TEMP_DIR_FIXTURES(dir, "analyze-sass")

static void sass(af *f, unsigned corr, const char *fn, unsigned pc, const char *file, unsigned line, uint64_t inst,
                 uint64_t threads, uint64_t sectors, uint64_t ideal)
{
    char where[256] = "";
    if (line)
        snprintf(where, sizeof where, ",\"file\":\"%s\",\"line\":%u", file, line);
    af_line(f, AF_DEVICE,
            "{\"type\":\"sass_metric\",\"ts_ns\":%llu,\"device\":0,\"corr\":%u,\"function\":\"%s\",\"cubin_crc\":77,"
            "\"pc_offset\":%u,\"valid\":%u,\"inst_executed\":%llu,\"thread_inst_executed\":%llu,\"sectors\":%llu,"
            "\"sectors_ideal\":%llu%s}",
            (unsigned long long)(AF_START + 1000 * corr), corr, fn, pc,
            GFL_SASS_V_INST | GFL_SASS_V_THREAD_INST | GFL_SASS_V_SECTORS, (unsigned long long)inst,
            (unsigned long long)threads, (unsigned long long)sectors, (unsigned long long)ideal, where);
}

/* Two launches of each kernel: a strided load, a divergent line, and a
 * kernel without line info. */
static gpufl_trace *session(const char *name)
{
    af f = {0};
    f.end_ns = AF_START + 1000000;
    for (unsigned corr = 1; corr <= 2; corr++) {
        /* strided: a load reading 4 bytes a thread, 32 sectors where 4 do */
        sass(&f, corr, "k_strided", 0x10, "s.cu", 12, 1000, 32000, 32000, 4000);
        sass(&f, corr, "k_strided", 0x20, "s.cu", 12, 1000, 32000, 0, 0);
        /* divergent: half the lanes on a line; a small line below the minimum */
        sass(&f, corr, "k_div", 0x10, "d.cu", 5, 4000, 64000, 0, 0);
        sass(&f, corr, "k_div", 0x30, "d.cu", 9, 10, 50, 0, 0);
        /* no line info: kept per pc, coalesced */
        sass(&f, corr, "k_ok", 0x40, NULL, 0, 2000, 64000, 8000, 8000);
        af_kernel(&f,
                  (af_k){.name = "k_strided", .start = AF_START + 1000 * corr, .end = AF_START + 1000 * corr + 500});
    }
    return af_open(&f, dir, name);
}

static void kernels_lines_findings(void **state)
{
    (void)state;
    gpufl_trace *t = session("sass");
    gpufl__ana_sass s;
    assert_int_equal(gpufl__analyze_sass(t, &s), 0);
    assert_int_equal(s.rows, 10);
    assert_int_equal(s.n_kernels, 3);
    /* by instructions: k_div 8020, k_ok 4000, k_strided 4000 (name breaks the tie) */
    assert_string_equal(gpufl_trace_string(t, s.kernels[0].name), "k_div");
    assert_string_equal(gpufl_trace_string(t, s.kernels[1].name), "k_ok");
    assert_string_equal(gpufl_trace_string(t, s.kernels[2].name), "k_strided");
    const gpufl__ana_sass_row *ks = &s.kernels[2];
    assert_int_equal(ks->launches, 2);
    assert_int_equal(ks->sectors, 64000);
    assert_true(ks->coalescing > 0.1249 && ks->coalescing < 0.1251);
    assert_true(ks->active > 0.999);
    assert_true(s.kernels[0].active < 0.51);
    assert_int_equal(s.n_lines, 4); /* s.cu:12, d.cu:5, d.cu:9, k_ok's pc 0x40 */
    bool saw_pc = false;
    for (uint32_t i = 0; i < s.n_lines; i++)
        if (s.lines[i].line == 0) {
            saw_pc = true;
            assert_int_equal(s.lines[i].pc, 0x40);
            assert_string_equal(gpufl_trace_string(t, s.kernels[s.lines[i].kernel].name), "k_ok");
        }
    assert_true(saw_pc);
    /* one of each; d.cu:9 executes too little to count */
    assert_int_equal(s.n_findings, 2);
    assert_int_equal(s.findings[0].kind, GPUFL__ANA_SASS_UNCOALESCED);
    assert_int_equal(s.lines[s.findings[0].line].line, 12);
    assert_int_equal(s.findings[0].cost, 64000 - 8000);
    assert_int_equal(s.findings[1].kind, GPUFL__ANA_SASS_DIVERGENT);
    assert_int_equal(s.lines[s.findings[1].line].line, 5);
    assert_int_equal(s.findings[1].cost, 8000 * 32 - 128000);
    gpufl__ana_sass_free(&s);
    gpufl_trace_close(t);
}

static void reports_show_them(void **state)
{
    (void)state;
    gpufl_trace *t = session("sass_reports");
    char *text = tu_render_report(t, false);
    if (!strstr(text, "uncoalesced access: s.cu:12 in k_strided: 12 % of its 64 000 sectors needed") ||
        !strstr(text, "divergent branches: d.cu:5 in k_div: 16.0 of 32 threads active")) {
        fputs(text, stderr);
        fail_msg("the text report above lacks the SASS findings");
    }
    free(text);
    char *js = tu_render_report(t, true);
    json_error_t err;
    json_t *doc = json_loads(js, 0, &err);
    assert_non_null(doc);
    char why[512] = "";
    if (report_schema_check(doc, why, sizeof why) != 0)
        fail_msg("the JSON report does not follow its schema: %s", why);
    json_t *sass = json_object_get(json_object_get(doc, "counters"), "sass");
    assert_string_equal(json_string_value(json_object_get(sass, "status")), "rows");
    json_t *f0 = json_array_get(json_object_get(sass, "findings"), 0);
    assert_string_equal(json_string_value(json_object_get(f0, "kind")), "uncoalesced");
    assert_int_equal(json_integer_value(json_object_get(f0, "line")), 12);
    assert_int_equal(json_integer_value(json_object_get(f0, "cost")), 56000);
    json_decref(doc);
    free(js);
    gpufl__ana_report rep;
    assert_int_equal(gpufl__analyze_report(t, NULL, &rep), 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/sass.html", dir);
    assert_int_equal(gpufl__report_html(t, &rep, path, why, sizeof why), 0);
    gpufl__ana_report_free(&rep);
    char *html = tu_read_file(path, NULL);
    assert_non_null(html);
    const char *sec = strstr(html, "<section id=sass>");
    if (!sec || !strstr(sec, "uncoalesced access") || !strstr(sec, "s.cu:12") || !strstr(sec, "12.5 %"))
        fail_msg("the HTML page lacks the SASS section or its figures");
    free(html);
    gpufl_trace_close(t);
}

static void none_recorded(void **state)
{
    (void)state;
    af f = {0};
    f.end_ns = AF_START + 1000;
    gpufl_trace *t = af_open(&f, dir, "none");
    gpufl__ana_sass s;
    assert_int_equal(gpufl__analyze_sass(t, &s), 0);
    assert_int_equal(s.rows, 0);
    assert_null(s.kernels);
    assert_int_equal(s.n_findings, 0);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(kernels_lines_findings), cmocka_unit_test(reports_show_them),
                                       cmocka_unit_test(none_recorded)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
