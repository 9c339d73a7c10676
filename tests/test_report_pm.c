/*
 * PM sampling in the JSON report (present/report/report_json_pm.c,
 * `pm_sampling`): one row per device and metric with its unit from the
 * metric's name, its samples, their time, the mean weighted by each
 * sample's length and the maximum, following the schema
 * (report_schema.h) and agreeing with the text report's section; a
 * session without PM samples has an empty array.
 *
 * Why: scripts read the JSON report; a mean that weighed samples equally
 * would misstate a counter whose intervals differ in length (the last one
 * before a decode is often short).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>

#include "ana_fixture.h"
#include "analyze/analysis.h"
#include "report_schema.h"
#include "report_render.h"

#define US 1000ull
#define MS 1000000ull

#define SM "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
#define DRAM "dram__bytes_read.sum.per_second"
#define INST "smsp__inst_executed.sum.per_second"
#define LTS "lts__t_sectors_op_read.sum"
#define ZERO "zero__length.sum"

static char dir[4096];

static json_t *json_report(gpufl_trace *t)
{
    char *text = tu_render_report(t, true);
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad JSON: %s", e.text);
    free(text);
    char why[512];
    if (report_schema_check(j, why, sizeof why) != 0)
        fail_msg("the JSON report does not follow its schema: %s", why);
    return j;
}

static json_t *pm_row(json_t *rows, unsigned dev, const char *metric)
{
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        if (json_integer_value(json_object_get(r, "device")) == dev &&
            !strcmp(json_string_value(json_object_get(r, "metric")), metric))
            return r;
    }
    fail_msg("no pm_sampling row for GPU %u %s", dev, metric);
    return NULL;
}

/* The text report's line of SM has the JSON row's samples, mean and max.
 * Apart from the caller: GCC (-Wdangling-pointer) takes pointers into
 * open_memstream()'s buffer, inlined, for pointers to a local. */
__attribute__((noinline)) static void text_agrees(const char *text, json_t *sm)
{
    const char *sec = strstr(text, "PM sampling");
    assert_non_null(sec);
    const char *line = strstr(sec, SM);
    assert_non_null(line);
    double mean = 0, max = 0;
    char samples[32], time_num[32], time_unit[16];
    assert_int_equal(sscanf(line + strlen(SM), " %31s %31s %15s %lf %lf", samples, time_num, time_unit, &mean, &max),
                     5);
    assert_string_equal(samples, "2");
    assert_true(fabs(mean - json_number_value(json_object_get(sm, "mean"))) < 1e-9);
    assert_true(fabs(max - json_number_value(json_object_get(sm, "max"))) < 1e-9);
}

static void json_rows_have_units_and_weighted_means(void **state)
{
    (void)state;
    af f = {.end_ns = AF_START + 100 * MS};
    af_kernel(&f, (af_k){.start = AF_START + 1 * MS, .end = AF_START + 2 * MS, .name = "k", .tid = 7});
    /* 10 us at 10 %, then 30 us at 50 %: 40 by time, 30 by sample */
    af_pm(&f, 0, SM, AF_START + 1 * MS, AF_START + 1 * MS + 10 * US, 10.0);
    af_pm(&f, 0, SM, AF_START + 1 * MS + 10 * US, AF_START + 1 * MS + 40 * US, 50.0);
    af_pm(&f, 0, DRAM, AF_START + 1 * MS, AF_START + 1 * MS + 20 * US, 2.5e9);
    af_pm(&f, 0, INST, AF_START + 1 * MS, AF_START + 1 * MS + 20 * US, 1e6);
    af_pm(&f, 1, LTS, AF_START + 1 * MS, AF_START + 1 * MS + 20 * US, 12.3456);
    /* intervals of no length (damaged input) are averaged plainly */
    af_pm(&f, 1, ZERO, AF_START + 1 * MS, AF_START + 1 * MS, 4.0);
    af_pm(&f, 1, ZERO, AF_START + 2 * MS, AF_START + 2 * MS, 6.0);
    gpufl_trace *t = af_open(&f, dir, "pm");
    json_t *j = json_report(t);
    json_t *rows = json_object_get(j, "pm_sampling");
    assert_int_equal(json_array_size(rows), 5);
    json_t *sm = pm_row(rows, 0, SM);
    assert_string_equal(json_string_value(json_object_get(sm, "unit")), "pct");
    assert_int_equal(json_integer_value(json_object_get(sm, "samples")), 2);
    assert_int_equal(json_integer_value(json_object_get(sm, "time_ns")), 40 * US);
    assert_true(fabs(json_number_value(json_object_get(sm, "mean")) - 40.0) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(sm, "max")) - 50.0) < 1e-9);
    assert_string_equal(json_string_value(json_object_get(pm_row(rows, 0, DRAM), "unit")), "bytes_per_second");
    assert_true(fabs(json_number_value(json_object_get(pm_row(rows, 0, DRAM), "mean")) - 2.5e9) < 1e-3);
    assert_string_equal(json_string_value(json_object_get(pm_row(rows, 0, INST), "unit")), "per_second");
    json_t *lts = pm_row(rows, 1, LTS);
    assert_string_equal(json_string_value(json_object_get(lts, "unit")), "raw");
    assert_true(fabs(json_number_value(json_object_get(lts, "mean")) - 12.3456) < 1e-9);
    json_t *zero = pm_row(rows, 1, ZERO);
    assert_int_equal(json_integer_value(json_object_get(zero, "time_ns")), 0);
    assert_true(fabs(json_number_value(json_object_get(zero, "mean")) - 5.0) < 1e-9);

    /* the text report's section has the same means */
    char *text = tu_render_report(t, false);
    text_agrees(text, sm);
    free(text);
    json_decref(j);
    gpufl_trace_close(t);
}

static void without_samples_the_array_is_empty(void **state)
{
    (void)state;
    af f = {.end_ns = AF_START + 10 * MS};
    af_kernel(&f, (af_k){.start = AF_START + 1 * MS, .end = AF_START + 2 * MS, .name = "k", .tid = 7});
    gpufl_trace *t = af_open(&f, dir, "plain");
    json_t *j = json_report(t);
    json_t *rows = json_object_get(j, "pm_sampling");
    assert_true(json_is_array(rows));
    assert_int_equal(json_array_size(rows), 0);
    json_decref(j);
    gpufl_trace_close(t);
}

int main(void)
{
    char *d = tu_mkdtemp("report_pm");
    snprintf(dir, sizeof dir, "%s", d);
    free(d);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_rows_have_units_and_weighted_means),
        cmocka_unit_test(without_samples_the_array_is_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
