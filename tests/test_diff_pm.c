/*
 * `gpufl diff` on sessions with PM samples (analyze/ana_diff_pm.c,
 * present/diff/diff_pm.c): each (device, metric) of either session with its
 * time-weighted mean on both sides, the ones that moved by the rule of
 * their unit (5 points for a percentage, 10 % of the baseline's mean for
 * the others) listed, the others not, and the text and the JSON saying the
 * same.
 *
 * Why: the issue asks diff to compare counters too; a run that keeps its
 * time but moves twice the DRAM bytes, or whose SMs went half idle, is a
 * change a user must see, and one that moved within the noise of a counter
 * is not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>

#include "ana_fixture.h"
#include "analyze/ana_diff.h"
#include "analyze/analysis.h"
#include "present/diff/diff_json.h"
#include "present/diff/diff_text.h"
#include "present/report/summary_text.h"

#define US 1000ull
#define MS 1000000ull

#define SM "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
#define TENSOR "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"
#define DRAM "dram__bytes_read.sum.per_second"
#define LTS "lts__t_sectors_op_read.sum"
#define GONE "gone__x.sum"

static char dir[4096];

/* A session with one kernel and, when pm, the PM samples pm adds. */
static gpufl_trace *session(const char *name, void (*pm)(af *f))
{
    af f = {.end_ns = AF_START + 100 * MS};
    af_kernel(&f, (af_k){.start = AF_START + 1 * MS, .end = AF_START + 2 * MS, .name = "k", .tid = 7});
    if (pm)
        pm(&f);
    return af_open(&f, dir, name);
}

static void one(af *f, unsigned dev, const char *metric, double value)
{
    af_pm(f, dev, metric, AF_START + 1 * MS, AF_START + 1 * MS + 20 * US, value);
}

/* The baseline: SM busy 10 % for 10 us then 50 % for 30 us, a mean of 40
 * by time (30 by sample); tensor pipes 20 %; DRAM 1 GB/s; 100 sectors; a
 * metric the candidate lacks. */
static void base_pm(af *f)
{
    af_pm(f, 0, SM, AF_START + 1 * MS, AF_START + 1 * MS + 10 * US, 10.0);
    af_pm(f, 0, SM, AF_START + 1 * MS + 10 * US, AF_START + 1 * MS + 40 * US, 50.0);
    one(f, 0, TENSOR, 20.0);
    one(f, 0, DRAM, 1e9);
    one(f, 0, LTS, 100.0);
    one(f, 0, GONE, 7.0);
}

/* The candidate: SM 34 % (-6 points by time: moved; -4 by sample), tensor
 * 24 % (+4 points, +20 %: not moved, a percentage moves by points), DRAM
 * +5 % (not moved), sectors -11 % (moved), and a metric of GPU 1 that is
 * new. */
static void cand_pm(af *f)
{
    one(f, 0, SM, 34.0);
    one(f, 0, TENSOR, 24.0);
    one(f, 0, DRAM, 1.05e9);
    one(f, 0, LTS, 89.0);
    one(f, 1, SM, 12.5);
}

typedef struct compared {
    gpufl_trace *bt, *ct;
    gpufl__ana_report b, c;
    gpufl__diff d;
    char *text;
    json_t *json;
} compared;

static void compare(compared *x, gpufl_trace *bt, gpufl_trace *ct, bool all)
{
    x->bt = bt;
    x->ct = ct;
    assert_int_equal(gpufl__analyze_report(bt, NULL, &x->b), 0);
    assert_int_equal(gpufl__analyze_report(ct, NULL, &x->c), 0);
    assert_int_equal(gpufl__diff_reports(bt, &x->b, ct, &x->c, NULL, &x->d), 0);
    size_t len = 0;
    FILE *f = open_memstream(&x->text, &len);
    gpufl__diff_text_opts o = {.all = all};
    assert_int_equal(gpufl__diff_text(&x->d, &o, f), 0);
    fclose(f);
    x->json = gpufl__diff_json(&x->d, "base", "cand");
    assert_non_null(x->json);
}

static void compared_free(compared *x)
{
    json_decref(x->json);
    free(x->text);
    gpufl__diff_free(&x->d);
    gpufl__ana_report_free(&x->b);
    gpufl__ana_report_free(&x->c);
    gpufl_trace_close(x->bt);
    gpufl_trace_close(x->ct);
}

static const gpufl__diff_pm_metric *row(const gpufl__diff *d, unsigned dev, const char *metric)
{
    for (uint32_t i = 0; i < d->npm; i++)
        if (d->pm[i].device == dev && !strcmp(d->pm[i].metric, metric))
            return &d->pm[i];
    fail_msg("no PM row for GPU %u %s", dev, metric);
    return NULL;
}

/* The text's line of (dev, metric) in the PM section, or NULL. */
static const char *text_line(const char *text, unsigned dev, const char *metric, char *line, size_t len)
{
    const char *sec = strstr(text, "\nPM sampling:");
    if (!sec)
        return NULL;
    char want[256];
    snprintf(want, sizeof want, "  %3u %s ", dev, metric);
    const char *at = strstr(sec, want);
    if (!at)
        return NULL;
    size_t n = strcspn(at, "\n");
    snprintf(line, len, "%.*s", (int)n, at);
    return line;
}

static void moved_metrics_are_listed(void **state)
{
    (void)state;
    compared x;
    compare(&x, session("base", base_pm), session("cand", cand_pm), false);
    const gpufl__diff *d = &x.d;
    assert_true(d->pm_compared);
    assert_int_equal(d->npm, 6);
    assert_int_equal(d->pm_moved, 4);
    /* by device, then metric */
    assert_string_equal(d->pm[0].metric, DRAM);
    assert_int_equal(d->pm[5].device, 1);
    const gpufl__diff_pm_metric *sm = row(d, 0, SM);
    assert_true(fabs(sm->base_mean - 40.0) < 1e-9 && fabs(sm->cand_mean - 34.0) < 1e-9);
    assert_true(sm->moved);
    assert_int_equal(sm->base_samples, 2);
    assert_false(row(d, 0, TENSOR)->moved);
    assert_false(row(d, 0, DRAM)->moved);
    assert_true(row(d, 0, LTS)->moved);
    assert_int_equal(row(d, 0, GONE)->presence, GPUFL__DIFF_GONE);
    assert_true(row(d, 0, GONE)->moved);
    assert_int_equal(row(d, 1, SM)->presence, GPUFL__DIFF_NEW);
    /* never a verdict: the diff is as it would be without PM samples */
    assert_int_equal(d->regressions, 0);

    /* the text lists what moved, with its change, and not the rest */
    char line[512];
    if (!text_line(x.text, 0, SM, line, sizeof line) || !strstr(line, "40.0 %") || !strstr(line, "34.0 %") ||
        !strstr(line, "-6.0 points") || !text_line(x.text, 0, LTS, line, sizeof line) || !strstr(line, "-11.0 %") ||
        !text_line(x.text, 0, GONE, line, sizeof line) || !strstr(line, "gone") ||
        !text_line(x.text, 1, SM, line, sizeof line) || !strstr(line, "new") ||
        text_line(x.text, 0, DRAM, line, sizeof line) || text_line(x.text, 0, TENSOR, line, sizeof line) ||
        !strstr(x.text, "... and 2 metrics that moved less")) {
        fputs(x.text, stderr);
        fail_msg("the diff's text lacks the PM changes above, or lists an unmoved one");
    }

    /* the JSON has every row; the ones it says moved are the text's, with its means */
    json_t *pm = json_object_get(x.json, "pm");
    assert_true(json_is_array(pm));
    assert_int_equal(json_array_size(pm), 6);
    size_t i;
    json_t *r;
    json_array_foreach(pm, i, r)
    {
        unsigned dev = (unsigned)json_integer_value(json_object_get(r, "device"));
        const char *metric = json_string_value(json_object_get(r, "metric"));
        bool listed = text_line(x.text, dev, metric, line, sizeof line) != NULL;
        if (json_is_true(json_object_get(r, "moved")) != listed)
            fail_msg("GPU %u %s: JSON moved %d, listed in the text %d", dev, metric,
                     json_is_true(json_object_get(r, "moved")), listed);
        const gpufl__diff_pm_metric *m = row(d, dev, metric);
        assert_string_equal(json_string_value(json_object_get(r, "unit")), gpufl__ana_pm_unit_name(m->unit));
        json_t *bm = json_object_get(r, "baseline_mean"), *cm = json_object_get(r, "candidate_mean");
        char v[64];
        if (listed && json_is_number(bm)) {
            gpufl__format_pm_value(json_number_value(bm), m->unit, v, sizeof v);
            if (!strstr(line, v))
                fail_msg("GPU %u %s: the text's line lacks the JSON's baseline %s: %s", dev, metric, v, line);
        }
        if (listed && json_is_number(cm)) {
            gpufl__format_pm_value(json_number_value(cm), m->unit, v, sizeof v);
            if (!strstr(line, v))
                fail_msg("GPU %u %s: the text's line lacks the JSON's candidate %s: %s", dev, metric, v, line);
        }
    }
    json_t *lts = NULL;
    json_array_foreach(pm, i, r) if (!strcmp(json_string_value(json_object_get(r, "metric")), LTS)) lts = r;
    assert_non_null(lts);
    assert_true(fabs(json_real_value(json_object_get(lts, "change")) + 11.0) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(lts, "change_pct")) + 11.0) < 1e-9);
    json_t *gone = json_array_get(pm, 1);
    assert_string_equal(json_string_value(json_object_get(gone, "metric")), GONE);
    assert_string_equal(json_string_value(json_object_get(gone, "presence")), "gone");
    assert_true(json_is_null(json_object_get(gone, "candidate_mean")));
    assert_true(json_is_null(json_object_get(gone, "change")));
    compared_free(&x);
}

static void all_lists_every_metric(void **state)
{
    (void)state;
    compared x;
    compare(&x, session("base-all", base_pm), session("cand-all", cand_pm), true);
    char line[512];
    const char *dram = text_line(x.text, 0, DRAM, line, sizeof line);
    if (!dram || !strstr(line, "+5.0 %") || strstr(line, "(moved)") || !text_line(x.text, 0, SM, line, sizeof line) ||
        !strstr(line, "(moved)")) {
        fputs(x.text, stderr);
        fail_msg("--all should list DRAM unmoved and SM moved");
    }
    compared_free(&x);
}

static void without_pm_samples_nothing_is_compared(void **state)
{
    (void)state;
    compared x;
    compare(&x, session("plain-a", NULL), session("plain-b", NULL), true);
    assert_false(x.d.pm_compared);
    assert_int_equal(x.d.npm, 0);
    assert_null(strstr(x.text, "PM sampling"));
    assert_true(json_is_null(json_object_get(x.json, "pm")));
    compared_free(&x);

    /* one side only: every metric is new */
    compare(&x, session("plain-c", NULL), session("cand-only", cand_pm), false);
    assert_true(x.d.pm_compared);
    assert_int_equal(x.d.npm, 5);
    assert_int_equal(x.d.pm_moved, 5);
    for (uint32_t i = 0; i < x.d.npm; i++)
        assert_int_equal(x.d.pm[i].presence, GPUFL__DIFF_NEW);
    compared_free(&x);
}

int main(void)
{
    char *d = tu_mkdtemp("diff_pm");
    snprintf(dir, sizeof dir, "%s", d);
    free(d);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(moved_metrics_are_listed),
        cmocka_unit_test(all_lists_every_metric),
        cmocka_unit_test(without_pm_samples_nothing_is_compared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
