/*
 * System sampling windows (issue 2, item 4). Without
 * continuous_system_sampling, host metrics are sampled only while some
 * thread is inside a scope or a gpufl_system_start/stop window is open, and
 * not one sample may fall outside those windows: the check below has no
 * tolerance. With continuous sampling they cover the whole session; with a
 * rate of 0 there is no sampler at all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpufl/gpufl.h"
#include "test_util.h"

#define PERIOD_MS 10
#define PHASE_MS 150
#define MAX_WINDOWS 16

typedef struct window {
    long long from, to;
} window;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static char *start_session(const char *tag, uint32_t rate, bool continuous)
{
    char *logs = tu_mkdtemp(tag);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "sampling";
    o.log_path = logs;
    o.system_sample_rate_ms = rate;
    o.continuous_system_sampling = continuous;
    assert_true(gpufl_init(&o));
    return logs;
}

static void *other_thread_scope(void *arg)
{
    (void)arg;
    GFL_SCOPE("other") { sleep_ms(100); }
    return NULL;
}

/* Outermost scopes and system windows, as [from, to] in ns. */
static size_t collect_windows(const char *dir, window *w)
{
    size_t n = 0;
    tu_ndjson scopes, system;
    assert_int_equal(tu_ndjson_load_channel(dir, "scope", &scopes), 0);
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &system), 0);
    for (size_t i = 0; i < scopes.n && n < MAX_WINDOWS; i++) {
        json_t *l = scopes.lines[i];
        if (strcmp(json_string_value(json_object_get(l, "type")), "scope_end") != 0 ||
            json_integer_value(json_object_get(l, "depth")) != 0)
            continue;
        w[n].from = json_integer_value(json_object_get(l, "begin_ns"));
        w[n].to = json_integer_value(json_object_get(l, "ts_ns"));
        n++;
    }
    json_t *start = tu_nth_type(&system, "system_start", 0);
    json_t *stop = tu_nth_type(&system, "system_stop", 0);
    assert_non_null(start);
    assert_non_null(stop);
    w[n].from = json_integer_value(json_object_get(start, "ts_ns"));
    w[n].to = json_integer_value(json_object_get(stop, "ts_ns"));
    n++;
    tu_ndjson_free(&scopes);
    tu_ndjson_free(&system);
    return n;
}

static void samples_only_inside_windows(void **state)
{
    (void)state;
    char *logs = start_session("sampling", PERIOD_MS, false);
    sleep_ms(PHASE_MS); /* idle: no sample */
    gpufl_scope s = gpufl_scope_begin("A");
    sleep_ms(PHASE_MS);
    gpufl_scope_end(s);
    sleep_ms(PHASE_MS);
    gpufl_system_start("w");
    sleep_ms(PHASE_MS);
    gpufl_system_stop("w");
    sleep_ms(PHASE_MS);
    /* two threads' scopes overlapping: one window from the first begin to
     * the last end (the count is per thread, not per scope) */
    pthread_t t;
    pthread_create(&t, NULL, other_thread_scope, NULL);
    sleep_ms(50);
    GFL_SCOPE("B") { sleep_ms(PHASE_MS); }
    pthread_join(t, NULL);
    sleep_ms(PHASE_MS);
    gpufl_shutdown();

    char *dir = tu_session_dir(logs);
    assert_non_null(dir);
    window w[MAX_WINDOWS];
    size_t nw = collect_windows(dir, w);
    assert_int_equal(nw, 4); /* A, other, B, w */
    tu_ndjson system;
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &system), 0);
    size_t samples = tu_count_type(&system, "host_metrics");
    size_t inside[MAX_WINDOWS] = {0};
    for (size_t i = 0; i < samples; i++) {
        long long ts = json_integer_value(json_object_get(tu_nth_type(&system, "host_metrics", i), "ts_ns"));
        bool in = false;
        for (size_t k = 0; k < nw; k++)
            if (ts >= w[k].from && ts <= w[k].to) {
                inside[k]++;
                in = true;
            }
        if (!in)
            fail_msg("host sample at %lld ns lies outside every window", ts);
    }
    /* ~15 expected in each 150 ms window at 10 ms; 4 leaves room for a
     * loaded machine while still proving the window was sampled */
    assert_true(inside[0] >= 4);             /* scope A */
    assert_true(inside[nw - 1] >= 4);        /* system window */
    assert_true(inside[1] + inside[2] >= 4); /* other + B */
    tu_ndjson_free(&system);
    tu_rm_rf(logs);
    free(dir);
    free(logs);
}

/* Many window edges with the sampler running at 1 ms: any ordering hole
 * between a scope's end time and the sampler's check would show here. */
static void edges_are_exact(void **state)
{
    (void)state;
    char *logs = start_session("edges", 1, false);
    for (int i = 0; i < 300; i++) {
        GFL_SCOPE("edge") { sleep_ms(2); }
        sleep_ms(1);
    }
    gpufl_shutdown();
    char *dir = tu_session_dir(logs);
    tu_ndjson scopes, system;
    assert_int_equal(tu_ndjson_load_channel(dir, "scope", &scopes), 0);
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &system), 0);
    size_t nw = tu_count_type(&scopes, "scope_end");
    assert_int_equal(nw, 300);
    window *w = malloc(nw * sizeof *w);
    for (size_t k = 0; k < nw; k++) {
        json_t *l = tu_nth_type(&scopes, "scope_end", k);
        w[k].from = json_integer_value(json_object_get(l, "begin_ns"));
        w[k].to = json_integer_value(json_object_get(l, "ts_ns"));
    }
    size_t samples = tu_count_type(&system, "host_metrics");
    assert_true(samples >= 100);
    for (size_t i = 0; i < samples; i++) {
        long long ts = json_integer_value(json_object_get(tu_nth_type(&system, "host_metrics", i), "ts_ns"));
        bool in = false;
        for (size_t k = 0; k < nw && !in; k++)
            in = ts >= w[k].from && ts <= w[k].to;
        if (!in)
            fail_msg("host sample at %lld ns lies outside every scope", ts);
    }
    free(w);
    tu_ndjson_free(&scopes);
    tu_ndjson_free(&system);
    tu_rm_rf(logs);
    free(dir);
    free(logs);
}

static void continuous_covers_session(void **state)
{
    (void)state;
    char *logs = start_session("sampling", PERIOD_MS, true);
    sleep_ms(300); /* no scope, no window */
    gpufl_shutdown();
    char *dir = tu_session_dir(logs);
    tu_ndjson system;
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &system), 0);
    size_t n = tu_count_type(&system, "host_metrics");
    assert_true(n >= 10); /* ~30 expected */
    /* the later samples carry CPU rates, RAM and RSS */
    json_t *last = tu_nth_type(&system, "host_metrics", n - 1);
    assert_non_null(json_object_get(last, "proc_cpu_pct"));
    assert_non_null(json_object_get(last, "ram_total_bytes"));
    assert_true(json_integer_value(json_object_get(last, "proc_rss_bytes")) > 0);
    tu_ndjson_free(&system);
    tu_rm_rf(logs);
    free(dir);
    free(logs);
}

static void rate_zero_means_no_sampler(void **state)
{
    (void)state;
    int before = tu_thread_count();
    char *logs = start_session("sampling", 0, true);
    assert_int_equal(tu_thread_count(), before + 1); /* the collector only */
    GFL_SCOPE("busy") { sleep_ms(50); }
    gpufl_system_start(NULL);
    sleep_ms(50);
    gpufl_system_stop(NULL);
    gpufl_shutdown();
    assert_int_equal(tu_thread_count(), before);
    char *dir = tu_session_dir(logs);
    tu_ndjson system;
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &system), 0);
    assert_int_equal(tu_count_type(&system, "host_metrics"), 0);
    assert_int_equal(tu_count_type(&system, "system_start"), 1);
    assert_string_equal(json_string_value(json_object_get(tu_nth_type(&system, "system_start", 0), "name")), "system");
    tu_ndjson_free(&system);
    tu_rm_rf(logs);
    free(dir);
    free(logs);
}

static void sampler_thread_exists_while_sampling(void **state)
{
    (void)state;
    int before = tu_thread_count();
    char *logs = start_session("sampling", PERIOD_MS, false);
    assert_int_equal(tu_thread_count(), before + 2); /* collector + sampler */
    gpufl_shutdown();
    assert_int_equal(tu_thread_count(), before);
    tu_rm_rf(logs);
    free(logs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(samples_only_inside_windows),
        cmocka_unit_test(edges_are_exact),
        cmocka_unit_test(continuous_covers_session),
        cmocka_unit_test(rate_zero_means_no_sampler),
        cmocka_unit_test(sampler_thread_exists_while_sampling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
