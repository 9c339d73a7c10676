/*
 * Transport under pressure (DESIGN §5): many producer threads, rings far too
 * small for them, and a collector that cannot keep up. Every event a
 * producer tried to record must be accounted for exactly once: written to
 * the log, or counted in a "dropped" line of its own thread. Built to run
 * under ThreadSanitizer (make test runs it in a TSan build too).
 *
 * Two paths are stressed: scopes from application threads, and device
 * events pushed by the synthetic plugin's own threads (the CUPTI path).
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
#include <sys/syscall.h>
#include <unistd.h>

#include "gpufl/gpufl.h"
#include "test_util.h"

#define THREADS 8   /* at once */
#define WAVES 4     /* threads exit and new ones adopt their rings */
#define PAIRS 20000 /* scope pairs per thread */

typedef struct worker {
    pthread_t thread;
    int index;
    uint32_t tid;
    pthread_barrier_t *start;
} worker;

static void *scope_worker(void *arg)
{
    worker *w = arg;
    w->tid = (uint32_t)syscall(SYS_gettid);
    char name[16];
    snprintf(name, sizeof name, "w%d", w->index);
    pthread_barrier_wait(w->start); /* all threads push at once */
    for (int i = 0; i < PAIRS; i++)
        gpufl_scope_end(gpufl_scope_begin(name));
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Number of lines of `type` for thread tid; their ids go to ids[]. */
static size_t lines_of(const tu_ndjson *f, const char *type, uint32_t tid, uint64_t *ids)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++) {
        json_t *l = f->lines[i];
        if (strcmp(json_string_value(json_object_get(l, "type")), type) != 0 ||
            json_integer_value(json_object_get(l, "tid")) != tid)
            continue;
        ids[n++] = (uint64_t)json_integer_value(json_object_get(l, "id"));
    }
    return n;
}

static long long dropped_of(const tu_ndjson *f, uint32_t tid, const char *channel, const char *reason)
{
    long long sum = 0;
    for (size_t i = 0; i < f->n; i++) {
        json_t *l = f->lines[i];
        if (strcmp(json_string_value(json_object_get(l, "type")), "dropped") != 0)
            continue;
        if (tid && json_integer_value(json_object_get(l, "tid")) != tid)
            continue;
        if (strcmp(json_string_value(json_object_get(l, "channel")), channel) != 0 ||
            strcmp(json_string_value(json_object_get(l, "reason")), reason) != 0)
            continue;
        sum += json_integer_value(json_object_get(l, "count"));
    }
    return sum;
}

static void scopes_accounted_once(void **state)
{
    (void)state;
    char *logs = tu_mkdtemp("stress");
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o.app_name = "stress";
    o.log_path = logs;
    o.ring_events = 64; /* tiny: overflows long before the collector wakes */
    assert_true(gpufl_init(&o));
    worker w[THREADS * WAVES];
    pthread_barrier_t start;
    for (int wave = 0; wave < WAVES; wave++) {
        pthread_barrier_init(&start, NULL, THREADS);
        for (int i = wave * THREADS; i < (wave + 1) * THREADS; i++) {
            w[i].index = i;
            w[i].start = &start;
            assert_int_equal(pthread_create(&w[i].thread, NULL, scope_worker, &w[i]), 0);
        }
        for (int i = wave * THREADS; i < (wave + 1) * THREADS; i++)
            pthread_join(w[i].thread, NULL);
        pthread_barrier_destroy(&start);
    }
    gpufl_shutdown();

    char *dir = tu_session_dir(logs);
    assert_non_null(dir);
    tu_ndjson f;
    assert_int_equal(tu_ndjson_load_channel(dir, "scope", &f), 0);
    uint64_t *ids = malloc(sizeof *ids * PAIRS);
    long long total_written = 0, total_dropped = 0;
    for (int i = 0; i < THREADS * WAVES; i++) {
        size_t n_begin = lines_of(&f, "scope_begin", w[i].tid, ids);
        qsort(ids, n_begin, sizeof *ids, cmp_u64);
        for (size_t k = 1; k < n_begin; k++)
            assert_true(ids[k] != ids[k - 1]); /* written at most once */
        size_t n_end = lines_of(&f, "scope_end", w[i].tid, ids);
        qsort(ids, n_end, sizeof *ids, cmp_u64);
        for (size_t k = 1; k < n_end; k++)
            assert_true(ids[k] != ids[k - 1]);
        long long dropped = dropped_of(&f, w[i].tid, "scope", "ring_full");
        /* exactly once: written + dropped == attempted */
        assert_int_equal((long long)(n_begin + n_end) + dropped, 2LL * PAIRS);
        total_written += (long long)(n_begin + n_end);
        total_dropped += dropped;
    }
    /* the test only means something if the rings really overflowed */
    assert_true(total_dropped > 0);
    assert_true(total_written > 0);

    json_t *session = tu_session_json(dir);
    json_t *summary = json_object_get(session, "summary");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(summary, "dropped"), "ring_full")),
                     total_dropped);
    json_decref(session);
    free(ids);
    tu_ndjson_free(&f);
    tu_rm_rf(logs);
    free(dir);
    free(logs);
}

static void plugin_pushes_accounted_once(void **state)
{
    (void)state;
    char *logs = tu_mkdtemp("stress");
    tu_setenv("GPUFL_SYNTHETIC", "kernels=80000,copies=0,memsets=0,syncs=0,allocs=0,metrics=0,"
                                 "threads=8,streams=8,pace=0");
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o.app_name = "stress";
    o.log_path = logs;
    o.ring_events = 64;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    assert_true(gpufl_init(&o));
    gpufl_shutdown();
    tu_unsetenv("GPUFL_SYNTHETIC");

    char *dir = tu_session_dir(logs);
    assert_non_null(dir);
    tu_ndjson f;
    assert_int_equal(tu_ndjson_load_channel(dir, "device", &f), 0);
    size_t written = tu_count_type(&f, "kernel");
    long long dropped = dropped_of(&f, 0, "device", "ring_full");
    assert_int_equal((long long)written + dropped, 80000);
    assert_true(dropped > 0);
    /* no kernel twice: correlation ids are unique per kernel */
    uint64_t *corr = malloc(sizeof *corr * written);
    size_t n = 0;
    for (size_t i = 0; i < f.n; i++)
        if (!strcmp(json_string_value(json_object_get(f.lines[i], "type")), "kernel"))
            corr[n++] = (uint64_t)json_integer_value(json_object_get(f.lines[i], "corr"));
    qsort(corr, n, sizeof *corr, cmp_u64);
    for (size_t k = 1; k < n; k++)
        assert_true(corr[k] != corr[k - 1]);
    free(corr);
    tu_ndjson_free(&f);
    tu_rm_rf(logs);
    free(dir);
    free(logs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scopes_accounted_once),
        cmocka_unit_test(plugin_pushes_accounted_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
