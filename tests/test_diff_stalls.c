/*
 * `gpufl diff` on two sessions with PC samples (analyze/ana_diff_stalls.c):
 * the session's stall reasons whose share moved, and a kernel whose top
 * stall changed, in the comparison and in its text and JSON.
 *
 * Why: the issue asks diff to compare counters too; a kernel that went from
 * waiting on memory to waiting on its math is a change a user must see even
 * when its time stayed.
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
#include "present/diff/diff_json.h"
#include "present/diff/diff_text.h"

#define MS 1000000ull

static char dir[4096];

/* One kernel "k" of 100 ms, sampled once: `stalls` its PC sample's pairs. */
static gpufl_trace *session(const char *name, const char *stalls)
{
    af f = {.end_ns = AF_START + 2000 * MS};
    af_kernel(&f, (af_k){.start = AF_START + 100 * MS, .end = AF_START + 200 * MS, .name = "k", .tid = 7});
    af_line(&f, AF_DEVICE,
            "{\"type\":\"pc_sample\",\"ts_ns\":%llu,\"device\":0,\"since_ns\":%llu,\"function\":\"k\","
            "\"cubin_crc\":\"0x1\",\"pc_offset\":\"0x10\",\"stalls\":{%s}}",
            (unsigned long long)(AF_START + 300 * MS), (unsigned long long)(AF_START + 50 * MS), stalls);
    return af_open(&f, dir, name);
}

static void a_changed_top_stall_is_listed(void **state)
{
    (void)state;
    gpufl_trace *bt = session("base", "\"long_scoreboard\":9000,\"wait\":500,\"selected\":500");
    gpufl_trace *ct = session("cand", "\"long_scoreboard\":1000,\"wait\":7000,\"selected\":2000");
    compared x;
    compare(&x, bt, ct);
    const gpufl__diff *d = &x.d;
    assert_true(d->stalls_compared);
    /* the session: long_scoreboard 90 -> 10 %, wait 5 -> 70 %, selected 5 -> 20 % */
    int session_rows = 0, kernel_rows = 0;
    for (uint32_t i = 0; i < d->nstalls; i++) {
        const gpufl__diff_stall *s = &d->stalls[i];
        if (!s->kernel) {
            session_rows++;
            if (!strcmp(s->reason, "long_scoreboard")) {
                assert_true(fabs(s->base_pct - 90.0) < 1e-9 && fabs(s->cand_pct - 10.0) < 1e-9);
            }
        } else {
            kernel_rows++;
            assert_string_equal(s->kernel, "k");
            assert_string_equal(s->base_top, "long_scoreboard");
            assert_string_equal(s->cand_top, "wait");
        }
    }
    assert_int_equal(session_rows, 3);
    assert_int_equal(kernel_rows, 2); /* the baseline's top stall and the candidate's */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(gpufl__diff_text(d, NULL, f), 0);
    fclose(f);
    if (!strstr(buf, "Warp stalls (PC sampling)") || !strstr(buf, "top stall long_scoreboard -> wait") ||
        !strstr(buf, "90.0 % -> 10.0 %")) {
        fputs(buf, stderr);
        fail_msg("the diff's text lacks the stall changes above");
    }
    free(buf);
    json_t *j = gpufl__diff_json(d, "base", "cand");
    assert_non_null(j);
    json_t *rows = json_object_get(j, "stalls");
    assert_true(json_is_array(rows) && json_array_size(rows) == 5);
    json_decref(j);
    compared_free(&x);
}

static void without_samples_nothing_is_compared(void **state)
{
    (void)state;
    af f = {.end_ns = AF_START + 1000 * MS};
    af_kernel(&f, (af_k){.start = AF_START + 100 * MS, .end = AF_START + 200 * MS, .name = "k", .tid = 7});
    gpufl_trace *bt = af_open(&f, dir, "plain");
    gpufl_trace *ct = session("sampled", "\"wait\":5000");
    compared x;
    compare(&x, bt, ct);
    const gpufl__diff *d = &x.d;
    assert_false(d->stalls_compared);
    assert_int_equal(d->nstalls, 0);
    json_t *j = gpufl__diff_json(d, "a", "b");
    assert_true(json_is_null(json_object_get(j, "stalls")));
    json_decref(j);
    compared_free(&x);
}

int main(void)
{
    char *d = tu_mkdtemp("diff_stalls");
    snprintf(dir, sizeof dir, "%s", d);
    free(d);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_changed_top_stall_is_listed),
        cmocka_unit_test(without_samples_nothing_is_compared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
