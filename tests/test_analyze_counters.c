/*
 * Hardware counters per scope (analyze/ana_hw.c) on hand-built sessions
 * with range_metric rows: totals of ".sum" metrics, means weighted by each
 * range's GPU time for the rest, rows by GPU time; the text, JSON and HTML
 * reports' sections; `gpufl diff`'s counter rows (ana_diff_counters.c).
 *
 * Why: a mean of percentages that ignored how long each range ran would
 * let a 1 us range outvote a 10 ms one; bytes must add up; and a diff must
 * compare per range, or a longer run would look like more traffic.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ana_fixture.h"
#include "analyze/ana_diff.h"
#include "analyze/analysis.h"
#include "fs_util.h"
#include "present/diff/diff_json.h"
#include "present/diff/diff_text.h"
#include "present/report/report_html.h"
#include "report_render.h"

#define MS 1000000ull
#define TIME "gpu__time_duration.sum"
#define READ "dram__bytes_read.sum"
#define L2 "lts__t_sector_hit_rate.pct"

static char dir[4096];

/* tu_render_report, kept out of line: inlined, GCC takes its memstream
 * buffer for a dangling local. */
__attribute__((noinline)) static char *render(const gpufl_trace *t, bool json) { return tu_render_report(t, json); }

static void range(af *f, uint32_t n, uint64_t scope, const char *name, double ns, double bytes, double l2)
{
    uint64_t ts = AF_START + n * 10 * MS;
    const char *metrics[] = {TIME, READ, L2};
    double values[] = {ns, bytes, l2};
    for (int i = 0; i < 3; i++)
        af_line(f, AF_DEVICE,
                "{\"type\":\"range_metric\",\"ts_ns\":%llu,\"end_ns\":%llu,\"device\":0,\"range\":%u,\"scope\":%llu,"
                "\"name\":\"%s\",\"metric\":\"%s\",\"value\":%.4f}",
                (unsigned long long)ts, (unsigned long long)(ts + 5 * MS), n, (unsigned long long)scope, name,
                metrics[i], values[i]);
}

/* Two "step" ranges (1 ms at L2 90 %, 3 ms at L2 50 %) and one "fwd";
 * scale multiplies the bytes, l2 shifts the step's hit rates. */
static gpufl_trace *session(const char *name, double scale, double l2)
{
    af f = {.end_ns = AF_START + 1000 * MS};
    range(&f, 1, 11, "step", 1e6, 1000 * scale, 90 + l2);
    range(&f, 2, 12, "fwd", 5e6, 8000 * scale, 20);
    range(&f, 3, 13, "step", 3e6, 3000 * scale, 50 + l2);
    return af_open(&f, dir, name);
}

static void sums_and_weighted_means(void **state)
{
    (void)state;
    gpufl_trace *t = session("hw", 1.0, 0);
    gpufl__ana_counters c;
    assert_int_equal(gpufl__analyze_counters(t, &c), 0);
    assert_int_equal(c.hw.status, GPUFL__ANA_SECTION_ROWS);
    assert_int_equal(c.hw.rows, 9);
    const gpufl__ana_hw *hw = &c.ranges;
    assert_int_equal(hw->nmetrics, 3);
    assert_int_equal(hw->session.ranges, 3);
    assert_int_equal(hw->nrows, 2);
    /* fwd has the most GPU time: first */
    assert_string_equal(gpufl_trace_string(t, hw->rows[0].name), "fwd");
    const gpufl__ana_hw_row *step = &hw->rows[1];
    assert_string_equal(gpufl_trace_string(t, step->name), "step");
    assert_int_equal(step->ranges, 2);
    assert_true(fabs(step->gpu_ns - 4e6) < 1e-6);
    for (uint32_t k = 0; k < hw->nmetrics; k++) {
        const char *m = gpufl_trace_string(t, hw->metrics[k]);
        if (!strcmp(m, READ)) {
            assert_true(hw->summed[k]);
            assert_true(fabs(step->values[k] - 4000) < 1e-6);
            assert_true(fabs(hw->session.values[k] - 12000) < 1e-6);
        } else if (!strcmp(m, L2)) {
            assert_false(hw->summed[k]);
            /* (90 x 1 + 50 x 3) / 4, not (90 + 50) / 2 */
            assert_true(fabs(step->values[k] - 60.0) < 1e-6);
            assert_true(fabs(hw->session.values[k] - (90.0 * 1 + 20.0 * 5 + 50.0 * 3) / 9) < 1e-6);
        }
    }
    gpufl__ana_counters_free(&c);

    char *text = render(t, false);
    size_t at = strstr(text, "Hardware counters per scope")
                    ? (size_t)(strstr(text, "Hardware counters per scope") - text)
                    : strlen(text);
    if (!text[at] || !strstr(text + at, "L2 hit") || !strstr(text + at, "60.0 %") ||
        !strstr(text + at, "(all ranges)") || !strstr(text + at, "lts__t_sector_hit_rate.pct (mean)") ||
        !strstr(text, "hardware counters      3 ranges: above")) {
        fputs(text, stderr);
        fail_msg("the text report lacks the hardware counters section or its figures");
    }
    free(text);
    char *js = render(t, true);
    json_error_t jerr;
    json_t *doc = json_loads(js, 0, &jerr);
    assert_non_null(doc);
    json_t *hwj = json_object_get(json_object_get(doc, "counters"), "hw");
    assert_string_equal(json_string_value(json_object_get(hwj, "status")), "rows");
    json_t *scopes = json_object_get(hwj, "scopes");
    assert_int_equal(json_array_size(scopes), 2);
    json_t *s1 = json_array_get(scopes, 1);
    assert_string_equal(json_string_value(json_object_get(s1, "name")), "step");
    assert_true(fabs(json_number_value(json_object_get(json_object_get(s1, "values"), L2)) - 60.0) < 1e-6);
    json_decref(doc);
    free(js);

    gpufl__ana_report rep;
    assert_int_equal(gpufl__analyze_report(t, NULL, &rep), 0);
    char path[4200], why[512];
    snprintf(path, sizeof path, "%s/hw.html", dir);
    assert_int_equal(gpufl__report_html(t, &rep, path, why, sizeof why), 0);
    gpufl__ana_report_free(&rep);
    char *html = tu_read_file(path, NULL);
    assert_non_null(html);
    const char *h = strstr(html, "<section id=hw>");
    if (!h || !strstr(h, "L2 hit") || !strstr(h, "60.0 %") || !strstr(h, "<code>lts__t_sector_hit_rate.pct</code>"))
        fail_msg("the HTML page lacks the hardware counters section or its figures");
    free(html);
    gpufl_trace_close(t);
}

static void no_ranges_no_section(void **state)
{
    (void)state;
    af f = {.end_ns = AF_START + 1000 * MS};
    af_kernel(&f, (af_k){.start = AF_START + 100 * MS, .end = AF_START + 200 * MS, .name = "k", .tid = 7});
    gpufl_trace *t = af_open(&f, dir, "plain");
    char *text = render(t, false);
    assert_null(strstr(text, "Hardware counters per scope"));
    assert_non_null(strstr(text, "not recorded: the range_profiler engine records them\n"));
    free(text);
    gpufl_trace_close(t);
}

static void diff_compares_per_range(void **state)
{
    (void)state;
    /* twice the bytes per range and the step's L2 hit rate 15 points lower;
     * a candidate with more ranges of the same bytes each must not differ */
    gpufl_trace *bt = session("base", 1.0, 0), *ct = session("cand", 2.0, -15);
    gpufl__ana_report b, c;
    assert_int_equal(gpufl__analyze_report(bt, NULL, &b), 0);
    assert_int_equal(gpufl__analyze_report(ct, NULL, &c), 0);
    gpufl__diff d;
    assert_int_equal(gpufl__diff_reports(bt, &b, ct, &c, NULL, &d), 0);
    assert_true(d.counters_compared);
    int read_rows = 0, l2_rows = 0;
    for (uint32_t i = 0; i < d.ncounters; i++) {
        const gpufl__diff_counter *k = &d.counters[i];
        assert_string_not_equal(k->metric, TIME); /* GPU time did not move */
        if (!strcmp(k->metric, READ)) {
            read_rows++;
            if (!k->scope)
                assert_true(fabs(k->base - 4000) < 1e-6 && fabs(k->cand - 8000) < 1e-6); /* per range */
        }
        if (!strcmp(k->metric, L2)) {
            l2_rows++;
            assert_string_equal(k->scope, "step");
            assert_true(fabs(k->base - 60.0) < 1e-6 && fabs(k->cand - 45.0) < 1e-6);
        }
    }
    assert_int_equal(read_rows, 3); /* all ranges, fwd, step */
    assert_int_equal(l2_rows, 1);   /* the session's mean moved 5 points only */
    assert_null(d.counters[0].scope);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(gpufl__diff_text(&d, NULL, f), 0);
    fclose(f);
    if (!strstr(buf, "Hardware counters (range profiler)") || !strstr(buf, "60.0 % -> 45.0 %")) {
        fputs(buf, stderr);
        fail_msg("the diff's text lacks the counter changes above");
    }
    free(buf);
    json_t *j = gpufl__diff_json(&d, "base", "cand");
    assert_true(json_is_array(json_object_get(j, "counters")) && json_array_size(json_object_get(j, "counters")) == 4);
    json_decref(j);
    gpufl__diff_free(&d);
    gpufl__ana_report_free(&b);
    gpufl__ana_report_free(&c);
    gpufl_trace_close(bt);
    gpufl_trace_close(ct);
}

int main(void)
{
    char *d = tu_mkdtemp("analyze_counters");
    snprintf(dir, sizeof dir, "%s", d);
    free(d);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sums_and_weighted_means),
        cmocka_unit_test(no_ranges_no_section),
        cmocka_unit_test(diff_compares_per_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
