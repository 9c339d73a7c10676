/*
 * The Chrome trace JSON export (src/present/export/export_chrome.c): the Trace
 * Event Format that chrome://tracing and Perfetto's JSON importer read.
 *
 * Why: one unescaped quote or control character in a kernel or scope name
 * makes the whole file unreadable, and slices that overlap on one thread
 * are drawn wrongly. The output is parsed with jansson and checked against
 * the fixture (export_fixture.h): every string comes back as recorded
 * (quotes, commas, newline, a control character); X slices at their exact
 * times (µs with ns decimals) and nesting on each thread; the overlapping
 * NVTX range on a lane of its own; C counters per sample; an s/f flow pair
 * per launch, from the call to the work; M metadata naming the process,
 * the GPU and its streams. Then the real sample session: every kernel has
 * one X slice at its start, every flow pairs up, slices nest everywhere.
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

#include "export_fixture.h"
#include "flight_fixture.h"
#include "gpufl/trace.h"
#include "present/export/export.h"
#include "session_file.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "export-chrome")

static json_t *export_chrome(const char *session, const char *out, gpufl__export_result *r)
{
    tu_export_session(session, gpufl__export_chrome, out, r);
    json_error_t e;
    json_t *j = json_load_file(out, 0, &e);
    if (!j)
        fail_msg("%s is not JSON: line %d: %s", out, e.line, e.text);
    return j;
}

/* µs with three decimals back to ns. */
static uint64_t ns_of(json_t *ev, const char *key)
{
    json_t *v = json_object_get(ev, key);
    assert_true(json_is_number(v));
    double ns = json_number_value(v) * 1000.0;
    assert_true(ns >= 0);
    return (uint64_t)(ns + 0.5);
}

static const char *ph_of(json_t *ev) { return json_string_value(json_object_get(ev, "ph")); }

static size_t count_ph(json_t *events, const char *ph)
{
    size_t n = 0, i;
    json_t *ev;
    json_array_foreach(events, i, ev) n += !strcmp(ph_of(ev), ph);
    return n;
}

static json_t *slice_named(json_t *events, const char *name)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        if (!strcmp(ph_of(ev), "X") && !strcmp(tu_str(ev, "name"), name))
            return ev;
    }
    fail_msg("no slice named '%s'", name);
    return NULL;
}

static json_t *metadata(json_t *events, const char *what, long long pid, long long tid)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        if (!strcmp(ph_of(ev), "M") && !strcmp(tu_str(ev, "name"), what) && tu_int(ev, "pid") == pid &&
            (tid < 0 || tu_int(ev, "tid") == tid))
            return json_object_get(ev, "args");
    }
    return NULL;
}

typedef struct span {
    long long pid, tid;
    uint64_t start, end;
} span;

static int by_place_time(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* the longer one is the parent */
}

/* On every (pid, tid), X slices nest: each starts after the one before
 * it ended or ends within it. */
static void check_nesting(json_t *events)
{
    size_t n = json_array_size(events), ns = 0, i;
    span *s = malloc((n + 1) * sizeof *s);
    json_t *ev;
    assert_non_null(s);
    json_array_foreach(events, i, ev)
    {
        if (strcmp(ph_of(ev), "X"))
            continue;
        uint64_t start = ns_of(ev, "ts");
        s[ns++] = (span){tu_int(ev, "pid"), tu_int(ev, "tid"), start, start + ns_of(ev, "dur")};
    }
    qsort(s, ns, sizeof *s, by_place_time);
    uint64_t *open = malloc((ns + 1) * sizeof *open);
    size_t depth = 0;
    for (size_t k = 0; k < ns; k++) {
        if (k == 0 || s[k].pid != s[k - 1].pid || s[k].tid != s[k - 1].tid)
            depth = 0;
        while (depth && open[depth - 1] <= s[k].start)
            depth--;
        if (depth && s[k].end > open[depth - 1])
            fail_msg("pid %lld tid %lld: slice %llu..%llu overlaps its parent ending at %llu", s[k].pid, s[k].tid,
                     (unsigned long long)s[k].start, (unsigned long long)s[k].end, (unsigned long long)open[depth - 1]);
        open[depth++] = s[k].end;
    }
    free(open);
    free(s);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every s flow has one f flow with its id ("bp":"e": bound to the slice
 * it is in), and each id is used by one pair. Returns the pairs. */
static size_t check_flows(json_t *events)
{
    size_t n = json_array_size(events), ns = 0, nf = 0, i;
    uint64_t *s_ids = malloc((n + 1) * sizeof *s_ids), *f_ids = malloc((n + 1) * sizeof *f_ids);
    json_t *ev;
    assert_true(s_ids && f_ids);
    json_array_foreach(events, i, ev)
    {
        const char *ph = ph_of(ev);
        if (!strcmp(ph, "s")) {
            s_ids[ns++] = (uint64_t)tu_int(ev, "id");
        } else if (!strcmp(ph, "f")) {
            f_ids[nf++] = (uint64_t)tu_int(ev, "id");
            assert_string_equal(tu_str(ev, "bp"), "e");
        }
    }
    assert_int_equal(ns, nf);
    qsort(s_ids, ns, sizeof *s_ids, cmp_u64);
    qsort(f_ids, nf, sizeof *f_ids, cmp_u64);
    for (size_t k = 0; k < ns; k++) {
        assert_int_equal(s_ids[k], f_ids[k]);
        if (k)
            assert_true(s_ids[k] != s_ids[k - 1]);
    }
    free(s_ids);
    free(f_ids);
    return ns;
}

static void test_fixture(void **state)
{
    (void)state;
    char *session = tu_export_fixture(work);
    char out[4200];
    snprintf(out, sizeof out, "%s/fixture.json", work);
    gpufl__export_result r;
    json_t *j = export_chrome(session, out, &r);
    assert_string_equal(tu_str(j, "displayTimeUnit"), "ns");
    json_t *other = json_object_get(j, "otherData");
    assert_string_equal(tu_str(other, "app_name"), FIX_APP);
    assert_string_equal(tu_str(other, "session_id"), "fixture-1");
    assert_int_equal(tu_int(other, "start_ns"), FIX_START_NS);
    json_t *events = json_object_get(j, "traceEvents");
    assert_true(json_is_array(events));
    assert_int_equal(json_array_size(events), r.packets);

    assert_int_equal(count_ph(events, "X"), FIX_SLICES);
    assert_int_equal(count_ph(events, "i"), FIX_INSTANTS);
    assert_int_equal(count_ph(events, "C"), FIX_COUNTER_VALUES);
    assert_int_equal(count_ph(events, "s"), FIX_FLOWS);
    assert_int_equal(check_flows(events), FIX_FLOWS);
    check_nesting(events);

    /* names come back as recorded */
    assert_string_equal(tu_str(metadata(events, "process_name", 4242, -1), "name"), FIX_APP);
    assert_string_equal(tu_str(metadata(events, "process_name", 1 << 30, -1), "name"), "GPU 0 (NVIDIA H200)");
    assert_string_equal(tu_str(metadata(events, "thread_name", 4242, 101), "name"), "thread 101");
    json_t *loader = slice_named(events, "loader\001");
    assert_int_equal(tu_int(loader, "tid"), 202);
    assert_string_equal(tu_str(loader, "cat"), "scope");
    json_t *fwd = slice_named(events, "forward, \"fwd\"\n");
    assert_int_equal(ns_of(fwd, "ts"), FIX_US(200));
    assert_int_equal(ns_of(fwd, "dur"), 300000);

    /* a kernel on its GPU's stream, with its launch configuration, and the
     * flow from its call on thread 101 */
    json_t *gemm = slice_named(events, "gemm<float, 128>");
    assert_int_equal(tu_int(gemm, "pid"), 1 << 30);
    assert_string_equal(tu_str(metadata(events, "thread_name", 1 << 30, tu_int(gemm, "tid")), "name"), "stream 7");
    assert_int_equal(ns_of(gemm, "ts"), FIX_US(250));
    assert_int_equal(ns_of(gemm, "dur"), 100000);
    json_t *args = json_object_get(gemm, "args");
    assert_int_equal(tu_int(args, "correlation"), 11);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(args, "grid"), 0)), 132);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(args, "block"), 0)), 256);
    json_t *call = slice_named(events, "launch gemm<float, 128>");
    assert_int_equal(tu_int(call, "pid"), 4242);
    assert_int_equal(tu_int(call, "tid"), 101);
    assert_int_equal(ns_of(call, "ts"), FIX_US(210));
    size_t i;
    json_t *ev;
    long long flow = -1;
    json_array_foreach(events, i, ev)
    {
        if (!strcmp(ph_of(ev), "s") && ns_of(ev, "ts") == FIX_US(210))
            flow = tu_int(ev, "id");
    }
    assert_true(flow > 0);
    json_array_foreach(events, i, ev)
    {
        if (!strcmp(ph_of(ev), "f") && tu_int(ev, "id") == flow) {
            assert_int_equal(ns_of(ev, "ts"), FIX_US(250));
            assert_int_equal(tu_int(ev, "pid"), 1 << 30);
            assert_int_equal(tu_int(ev, "tid"), tu_int(gemm, "tid"));
        }
    }
    /* the range that overlaps its parent is on a lane, not on thread 101 */
    json_t *cross = slice_named(events, "cross");
    assert_int_equal(tu_int(cross, "pid"), 4242);
    assert_true(tu_int(cross, "tid") != 101);
    assert_string_equal(tu_str(metadata(events, "thread_name", 4242, tu_int(cross, "tid")), "name"), "thread 101 #2");
    assert_string_equal(tu_str(json_object_get(cross, "args"), "domain"), "io");
    /* the unended scope reaches the end of the session */
    json_t *open = slice_named(events, "open");
    assert_int_equal(ns_of(open, "ts") + ns_of(open, "dur"), FIX_US(2000));
    /* counters: the power in W, per sample */
    size_t power = 0;
    json_array_foreach(events, i, ev)
    {
        if (!strcmp(ph_of(ev), "C") && !strcmp(tu_str(ev, "name"), "GPU 0 power (W)")) {
            double v = json_number_value(json_object_get(json_object_get(ev, "args"), "value"));
            double want = 100.5 + (double)power;
            assert_true(v > want - 1e-9 && v < want + 1e-9);
            assert_int_equal(ns_of(ev, "ts"), FIX_US(500 * power));
            power++;
        }
    }
    assert_int_equal(power, 3);
    json_decref(j);
    free(session);
}

static void test_train_sample(void **state)
{
    (void)state;
    char out[4200];
    snprintf(out, sizeof out, "%s/train.json", work);
    gpufl__export_result r;
    json_t *j = export_chrome(TU_TRAIN_SAMPLE, out, &r);
    gpufl_trace *t = tu_trace_open(TU_TRAIN_SAMPLE);
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    json_t *events = json_object_get(j, "traceEvents");
    uint64_t *starts = malloc(k->n * sizeof *starts), *want = malloc(k->n * sizeof *want);
    assert_true(starts && want);
    size_t nk = 0, i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        if (!strcmp(ph_of(ev), "X") && !strcmp(tu_str(ev, "cat"), "kernel")) {
            assert_true(nk < k->n);
            starts[nk++] = ns_of(ev, "ts");
        }
    }
    assert_int_equal(nk, k->n);
    memcpy(want, k->start_ns, k->n * sizeof *want);
    qsort(starts, nk, sizeof *starts, cmp_u64);
    qsort(want, nk, sizeof *want, cmp_u64);
    assert_memory_equal(starts, want, nk * sizeof *want);
    assert_int_equal(check_flows(events), r.timeline.flows);
    assert_true(r.timeline.flows > 1000);
    check_nesting(events);
    free(starts);
    free(want);
    gpufl_trace_close(t);
    json_decref(j);
}

/* Trace windows as X slices and triggers as i instants on the "gpufl"
 * thread of the program's process, with their args. */
static void test_flight(void **state)
{
    (void)state;
    char path[4096], out[4200];
    ff_write(work, "flight", path);
    snprintf(out, sizeof out, "%s/flight.json", work);
    gpufl__export_result r;
    json_t *j = export_chrome(path, out, &r);
    json_t *events = json_object_get(j, "traceEvents");
    check_nesting(events);
    long long pid = -1, tid = -1;
    size_t i, windows = 0, triggers = 0;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        if (!strcmp(ph_of(ev), "M") && !strcmp(tu_str(ev, "name"), "thread_name") &&
            !strcmp(tu_str(json_object_get(ev, "args"), "name"), "gpufl")) {
            pid = tu_int(ev, "pid");
            tid = tu_int(ev, "tid");
        }
    }
    assert_int_equal(pid, 42);
    json_array_foreach(events, i, ev)
    {
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        json_t *a = json_object_get(ev, "args");
        if (cat && !strcmp(cat, "trace_window")) {
            assert_string_equal(ph_of(ev), "X");
            assert_int_equal(tu_int(ev, "tid"), tid);
            assert_string_equal(tu_str(ev, "name"), "trace window");
            assert_int_equal(ns_of(ev, "ts"), windows ? 7000000 : 2000000);
            assert_int_equal(ns_of(ev, "dur"), windows ? 4000000 : 2000000);
            assert_int_equal(tu_int(a, "index"), windows + 1);
            assert_string_equal(tu_str(a, "reason"), windows ? "trigger" : "steps");
            assert_int_equal(json_is_true(json_object_get(a, "unended")), windows == 1);
            windows++;
        } else if (cat && !strcmp(cat, "trigger")) {
            assert_string_equal(ph_of(ev), "i");
            assert_int_equal(tu_int(ev, "tid"), tid);
            assert_string_equal(tu_str(ev, "name"), triggers ? "dump" : "oom");
            assert_int_equal(ns_of(ev, "ts"), triggers ? 8000000 : 6000000);
            assert_string_equal(tu_str(a, "outcome"), triggers ? "storm" : "dumped");
            if (!triggers)
                assert_string_equal(tu_str(a, "dump"), "dump-0001");
            triggers++;
        }
    }
    assert_int_equal(windows, 2);
    assert_int_equal(triggers, 2);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fixture, setup, teardown),
        cmocka_unit_test_setup_teardown(test_train_sample, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flight, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
