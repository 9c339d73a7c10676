/*
 * `gpufl diff` on two sessions with SASS metrics (analyze/ana_diff_sass.c):
 * a kernel whose coalescing moved is listed with both sides' figures, one
 * whose figures held is not, in the comparison and in its text and JSON;
 * without SASS metrics on a side nothing is compared.
 *
 * Why: the issue asks diff to compare counters too; a change that made a
 * kernel's loads uncoalesced is one to see even when its time stayed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>

#include "ana_fixture.h"
#include "diff_fixture.h"
#include "analyze/ana_diff.h"
#include "analyze/analysis.h"
#include "core/event.h"
#include "present/diff/diff_json.h"
#include "present/diff/diff_text.h"

#define MS 1000000ull

static char dir[4096];

/* Kernel `fn` launched once from start_ms, with one global load whose
 * 3200 sectors a coalesced access would fit in `ideal`. */
static void sass_kernel(af *f, const char *fn, uint64_t start_ms, uint64_t ideal, int line)
{
    af_kernel(f,
              (af_k){.start = AF_START + start_ms * MS, .end = AF_START + (start_ms + 100) * MS, .name = fn, .tid = 7});
    af_line(f, AF_DEVICE,
            "{\"type\":\"sass_metric\",\"ts_ns\":%llu,\"device\":0,\"corr\":0,\"function\":\"%s\","
            "\"cubin_crc\":1,\"pc_offset\":16,\"valid\":%u,\"inst_executed\":100,\"thread_inst_executed\":3200,"
            "\"sectors\":3200,\"sectors_ideal\":%llu,\"file\":\"k.cu\",\"line\":%d}",
            (unsigned long long)(AF_START + 1900 * MS), fn,
            GFL_SASS_V_INST | GFL_SASS_V_THREAD_INST | GFL_SASS_V_SECTORS, (unsigned long long)ideal, line);
}

/* Kernels "k_load" and "k_same", each launched once, with one global load
 * each: k_load's `ideal` of 3200 sectors needed, k_same's 3200 of 3200. */
static gpufl_trace *session(const char *name, uint64_t ideal)
{
    af f = {.end_ns = AF_START + 2000 * MS};
    sass_kernel(&f, "k_load", 100, ideal, 10);
    sass_kernel(&f, "k_same", 300, 3200, 11);
    return af_open(&f, dir, name);
}

static void a_kernel_whose_coalescing_moved_is_listed(void **state)
{
    (void)state;
    compared x;
    compare(&x, session("base", 3200), session("cand", 400)); /* 100 % -> 12.5 % */
    const gpufl__diff *d = &x.d;
    assert_true(d->sass_compared);
    assert_int_equal(d->nsass, 1);
    assert_string_equal(d->sass[0].kernel, "k_load");
    assert_string_equal(d->sass[0].metric, "coalescing");
    assert_true(fabs(d->sass[0].base_pct - 100.0) < 1e-9 && fabs(d->sass[0].cand_pct - 12.5) < 1e-9);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(gpufl__diff_text(d, NULL, f), 0);
    fclose(f);
    if (!strstr(buf, "SASS metrics") || !strstr(buf, "100.0 % -> 12.5 %") || strstr(buf, "k_same ")) {
        fputs(buf, stderr);
        fail_msg("the diff's text does not list k_load's coalescing alone");
    }
    free(buf);
    json_t *j = gpufl__diff_json(d, "base", "cand");
    assert_non_null(j);
    json_t *rows = json_object_get(j, "sass");
    assert_true(json_is_array(rows) && json_array_size(rows) == 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "metric")), "coalescing");
    json_decref(j);
    compared_free(&x);
}

static void without_sass_metrics_nothing_is_compared(void **state)
{
    (void)state;
    af f = {.end_ns = AF_START + 1000 * MS};
    af_kernel(&f, (af_k){.start = AF_START + 100 * MS, .end = AF_START + 200 * MS, .name = "k_load", .tid = 7});
    compared x;
    compare(&x, af_open(&f, dir, "plain"), session("measured", 400));
    assert_false(x.d.sass_compared);
    assert_int_equal(x.d.nsass, 0);
    json_t *j = gpufl__diff_json(&x.d, "a", "b");
    assert_true(json_is_null(json_object_get(j, "sass")));
    json_decref(j);
    compared_free(&x);
}

int main(void)
{
    char *d = tu_mkdtemp("diff_sass");
    snprintf(dir, sizeof dir, "%s", d);
    free(d);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_kernel_whose_coalescing_moved_is_listed),
        cmocka_unit_test(without_sass_metrics_nothing_is_compared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
