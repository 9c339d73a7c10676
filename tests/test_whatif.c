/*
 * The dependency graph, critical path and what-if simulator (issue 18:
 * src/analyze/ana_graph*.c, ana_critpath.c, ana_whatif*.c; gpufl graph and
 * gpufl whatif).
 *
 * Why: a prediction is only worth what its model is. Checked on hand-built
 * sessions whose schedules are computed by hand in the comments: the
 * recorded edges (host order, launch, stream, sync) and an inferred
 * stream-wait-event edge; the critical path through a known chain, piece
 * by piece; each change's predicted step time (a kernel 2x faster, one
 * sync removed and both, copies on their own stream, host gaps halved);
 * the unchanged replay equal to the recording on the fixtures and within
 * 2 % on every step of the bundled real session (samples/train_sample);
 * bad changes refused with errors that name the problem; --from/--to.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ana_fixture.h"
#include "analyze/ana_whatif_run.h"
#include "core/event.h"

static char *dir;

/* A launch call's times on a copy (af_copy gives its call 1 ns). */
static void copy_call(af *f, unsigned stream, uint64_t start, uint64_t end, const char *kind, uint64_t api_start,
                      uint64_t api_end)
{
    static unsigned corr = 100000;
    af_line(f, AF_DEVICE,
            "{\"type\":\"memcpy\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":0,\"context\":1,"
            "\"stream\":%u,\"corr\":%u,\"kind\":\"%s\",\"src_kind\":\"device\",\"dst_kind\":\"pinned\","
            "\"bytes\":4096,\"tid\":5,\"api_start_ns\":%llu,\"api_end_ns\":%llu}",
            (unsigned long long)start, (unsigned long long)end, (unsigned long long)(end - start), stream, ++corr, kind,
            (unsigned long long)api_start, (unsigned long long)api_end);
}

static void kernel(af *f, unsigned stream, const char *name, uint64_t start, uint64_t end, uint64_t api_start,
                   uint64_t api_end)
{
    af_kernel(f, (af_k){.stream = stream,
                        .name = name,
                        .start = start,
                        .end = end,
                        .tid = 5,
                        .api_start = api_start,
                        .api_end = api_end});
}

/*
 * Two identical steps, 300 us apart, on thread 5, stream 7 (times in us
 * from 1000, the session's start at AF_START):
 *   an HtoD copy before them: call 1050-1052, copy 1055-1060 (latency 5: the
 *   shortest copy latency)
 *   step 1100-1300: call A 1100-1105, kernel A 1110-1210 (latency 10: the
 *   shortest kernel latency); call B 1110-1115, kernel B 1210-1260 (after A);
 *   call D 1120-1125, DtoH copy D 1260-1280 (after B); stream sync
 *   1130-1290 (D, woken 10 after it); the step ends 10 later.
 */
static gpufl_trace *fixture_steps(void)
{
    af f = {.end_ns = 3000000};
    copy_call(&f, 7, 1055000, 1060000, "HtoD", 1050000, 1052000);
    for (int s = 0; s < 2; s++) {
        uint64_t o = (uint64_t)s * 300000;
        af_scope(&f, 5, (uint64_t)s + 1, 0, 0, "step", 1100000 + o, 1300000 + o);
        kernel(&f, 7, "A", 1110000 + o, 1210000 + o, 1100000 + o, 1105000 + o);
        kernel(&f, 7, "B", 1210000 + o, 1260000 + o, 1110000 + o, 1115000 + o);
        copy_call(&f, 7, 1260000 + o, 1280000 + o, "DtoH", 1120000 + o, 1125000 + o);
        af_sync(&f, 0, 7, 1130000 + o, 1290000 + o, "stream", 5);
    }
    return af_open(&f, dir, "steps");
}

/*
 * One step 2000-2280 on stream 7: kernel K1 2010-2110 (call 2000-2005), a
 * DtoH copy C of its output 2110-2160 (call 2010-2015), kernel K2
 * 2160-2260 (call 2020-2025), a stream-wait-event on stream 8 2026-2027
 * and kernel K3 on stream 8 2110.5-2130.5 (call 2027-2029: it waited for
 * K1), a stream sync 2030-2270 (K2), the step's end 10 later.
 */
static gpufl_trace *fixture_copy(void)
{
    af f = {.end_ns = 3000000};
    af_scope(&f, 5, 1, 0, 0, "step", 2000000, 2280000);
    kernel(&f, 7, "K1", 2010000, 2110000, 2000000, 2005000);
    copy_call(&f, 7, 2110000, 2160000, "DtoH", 2010000, 2015000);
    kernel(&f, 7, "K2", 2160000, 2260000, 2020000, 2025000);
    af_sync(&f, 0, 8, 2026000, 2027000, "stream_wait_event", 5);
    kernel(&f, 8, "K3", 2110500, 2130500, 2027000, 2029000);
    af_sync(&f, 0, 7, 2030000, 2270000, "stream", 5);
    return af_open(&f, dir, "copy");
}

/*
 * Two threads, as PyTorch runs backward on a thread of its own: thread 5
 * (the step 3000-3470) launches K1 3010-3110 (call 3000-3005) and waits for
 * it in a context sync 3010-3120; thread 6 starts 30 later: K2 3160-3200
 * (call 3150-3155), then K2b 3390-3430 (call 3380-3385); thread 5 goes on
 * 15 after that call: K3 3430-3450 (call 3400-3405), a stream sync
 * 3405-3460 (K3), the step's end 10 later.
 */
static gpufl_trace *fixture_threads(void)
{
    af f = {.end_ns = 4000000};
    af_scope(&f, 5, 1, 0, 0, "step", 3000000, 3470000);
    kernel(&f, 7, "K1", 3010000, 3110000, 3000000, 3005000);
    af_sync(&f, 0, 0, 3010000, 3120000, "context", 5);
    af_kernel(&f, (af_k){.stream = 7,
                         .name = "K2",
                         .start = 3160000,
                         .end = 3200000,
                         .tid = 6,
                         .api_start = 3150000,
                         .api_end = 3155000});
    af_kernel(&f, (af_k){.stream = 7,
                         .name = "K2b",
                         .start = 3390000,
                         .end = 3430000,
                         .tid = 6,
                         .api_start = 3380000,
                         .api_end = 3385000});
    kernel(&f, 7, "K3", 3430000, 3450000, 3400000, 3405000);
    af_sync(&f, 0, 7, 3405000, 3460000, "stream", 5);
    return af_open(&f, dir, "threads");
}

static uint32_t find(const gpufl__graph *g, unsigned kind, uint64_t start)
{
    for (uint32_t i = 0; i < g->n; i++)
        if (g->nodes[i].kind == kind && g->nodes[i].start == start)
            return i;
    fail_msg("no %s node starting at %llu", gpufl__gnode_kind_name(kind), (unsigned long long)start);
    return GPUFL__GNONE;
}

static bool edge(const gpufl__graph *g, uint32_t from, uint32_t to, unsigned kind, bool inferred)
{
    for (size_t j = g->in[to]; j < g->in[to + 1]; j++)
        if (g->edges[j].from == from && g->edges[j].kind == kind && g->edges[j].inferred == inferred)
            return true;
    return false;
}

static void test_graph_edges(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_steps();
    gpufl__graph g;
    assert_int_equal(gpufl__graph_build(t, &g), 0);
    uint32_t h2d = find(&g, GPUFL__GN_COPY, 1055000), a = find(&g, GPUFL__GN_KERNEL, 1110000),
             b = find(&g, GPUFL__GN_KERNEL, 1210000), d = find(&g, GPUFL__GN_COPY, 1260000),
             ca = find(&g, GPUFL__GN_CALL, 1100000), cb = find(&g, GPUFL__GN_CALL, 1110000),
             cd = find(&g, GPUFL__GN_CALL, 1120000), y = find(&g, GPUFL__GN_SYNC, 1130000),
             a2 = find(&g, GPUFL__GN_KERNEL, 1410000);
    assert_true(edge(&g, ca, a, GPUFL__GE_LAUNCH, false));
    assert_true(edge(&g, h2d, a, GPUFL__GE_STREAM, false));
    assert_true(edge(&g, a, b, GPUFL__GE_STREAM, false));
    assert_true(edge(&g, b, d, GPUFL__GE_STREAM, false));
    assert_true(edge(&g, d, a2, GPUFL__GE_STREAM, false));
    assert_true(edge(&g, d, y, GPUFL__GE_SYNC, false)); /* the last work issued on stream 7 before the sync */
    assert_false(edge(&g, b, y, GPUFL__GE_SYNC, false));
    assert_true(edge(&g, ca, cb, GPUFL__GE_HOST, false));
    assert_true(edge(&g, cb, cd, GPUFL__GE_HOST, false));
    assert_true(edge(&g, cd, y, GPUFL__GE_HOST, false));
    assert_int_equal(g.lmin[0], 10000);
    assert_int_equal(g.lmin[1], 5000);
    assert_int_equal(g.syncs, 2);
    assert_int_equal(g.inferred, 0);
    gpufl__graph_free(&g);
    gpufl_trace_close(t);

    t = fixture_copy();
    assert_int_equal(gpufl__graph_build(t, &g), 0);
    uint32_t k1 = find(&g, GPUFL__GN_KERNEL, 2010000), k3 = find(&g, GPUFL__GN_KERNEL, 2110500),
             c = find(&g, GPUFL__GN_COPY, 2110000);
    assert_true(edge(&g, k1, k3, GPUFL__GE_WAIT, true)); /* inferred: which event it waited on is not recorded */
    assert_false(edge(&g, c, k3, GPUFL__GE_WAIT, true)); /* C ended after K3 began */
    assert_int_equal(g.inferred, 1);
    gpufl__graph_free(&g);
    gpufl_trace_close(t);
}

static void test_thread_waits(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_threads();
    gpufl__graph g;
    assert_int_equal(gpufl__graph_build(t, &g), 0);
    uint32_t y = find(&g, GPUFL__GN_SYNC, 3010000), c2 = find(&g, GPUFL__GN_CALL, 3150000),
             c2b = find(&g, GPUFL__GN_CALL, 3380000), c3 = find(&g, GPUFL__GN_CALL, 3400000);
    assert_true(edge(&g, y, c2, GPUFL__GE_HOST, true));    /* thread 6 starts after the sync */
    assert_true(edge(&g, c2, c2b, GPUFL__GE_HOST, false)); /* its own order */
    assert_true(edge(&g, c2b, c3, GPUFL__GE_HOST, true));  /* thread 5 waited for it */
    assert_true(edge(&g, y, c3, GPUFL__GE_HOST, false));
    assert_int_equal(g.inferred, 2);
    gpufl__graph_free(&g);
    gpufl_trace_close(t);
}

static gpufl__whatif run_ok(gpufl_trace *t, const gpufl__whatif_change *c)
{
    gpufl__whatif w;
    char err[512] = "";
    int rc = gpufl__whatif_run(t, "step", c, &w, err, sizeof err);
    if (rc)
        fail_msg("whatif: %d %s", rc, err);
    return w;
}

static void test_critical_path(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_steps();
    gpufl__whatif w = run_ok(t, NULL);
    /* each step, back from its end: host 10 (after the sync), the sync's
     * wake-up 10, copy D 20, B 50, A 100, A's launch latency 10 */
    const gpufl__critpath *cp = &w.cp_before;
    assert_int_equal(cp->window_ns, 400000);
    assert_int_equal(cp->path_ns, 400000);
    struct {
        unsigned kind;
        const char *name;
        uint64_t ns;
    } want[] = {{GPUFL__CP_KERNEL, "A", 200000}, {GPUFL__CP_KERNEL, "B", 100000}, {GPUFL__CP_COPY, NULL, 40000},
                {GPUFL__CP_HOST, NULL, 20000},   {GPUFL__CP_LAUNCH, NULL, 20000}, {GPUFL__CP_SYNC, NULL, 20000}};
    assert_int_equal(cp->n, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(cp->items[i].kind, want[i].kind);
        assert_int_equal(cp->items[i].ns, want[i].ns);
        if (want[i].name)
            assert_string_equal(gpufl_trace_string(t, cp->items[i].name), want[i].name);
    }
    assert_int_equal(cp->items[2].sub, GFL_COPY_DTOH);
    assert_int_equal(cp->nwork, 6); /* D, B, A of each step */
    gpufl__whatif_free(&w);
    gpufl_trace_close(t);
}

static void expect(gpufl_trace *t, const gpufl__whatif_change *c, uint64_t median, uint64_t total)
{
    gpufl__whatif w = run_ok(t, c);
    assert_int_equal(w.after.median_ns, median);
    assert_int_equal(w.after.total_ns, total);
    gpufl__whatif_free(&w);
}

static void test_no_change_replays_the_recording(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_steps();
    gpufl__whatif w = run_ok(t, NULL);
    assert_int_equal(w.nsteps, 2);
    assert_int_equal(w.recorded_median_ns, 200000);
    assert_int_equal(w.before.median_ns, 200000);
    assert_int_equal(w.after.total_ns, 400000);
    /* step 1: A, B, D busy 1110-1280 (170 of 200); idle 1100-1110 waited for A's launch, 1280-1300 for the host */
    assert_int_equal(w.before.busy_ns, 340000);
    assert_int_equal(w.before.idle_host_ns, 60000);
    assert_int_equal(w.before.idle_other_ns, 0);
    assert_int_equal(w.before.sync_ns, 2 * 160000);
    gpufl__whatif_free(&w);
    gpufl_trace_close(t);
    t = fixture_copy();
    w = run_ok(t, NULL);
    assert_int_equal(w.before.median_ns, 280000);
    assert_int_equal(w.recorded_median_ns, 280000);
    gpufl__whatif_free(&w);
    gpufl_trace_close(t);
}

static void test_speedup(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_steps();
    /* A 1110-1160, B 1160-1210, D 1210-1230, the sync returns 1240, the step ends 1250 */
    gpufl__whatif_change c = gpufl__whatif_none();
    c.kernel = "A";
    c.speedup = 2;
    expect(t, &c, 150000, 300000);
    c.kernel = "~^[AB]$"; /* B 1160-1185, D 1185-1205, sync 1215, end 1225 */
    expect(t, &c, 125000, 250000);
    gpufl_trace_close(t);
}

/* A time window instead of a step: step 1's span, 1100-1300 us. */
static void test_window(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_steps();
    gpufl__whatif_change c = gpufl__whatif_none();
    c.kernel = "A";
    c.speedup = 2;
    gpufl__whatif w;
    char err[512];
    assert_int_equal(gpufl__whatif_run_window(t, 1100000, 1300000, &c, &w, err, sizeof err), 0);
    assert_true(w.window);
    assert_int_equal(w.nsteps, 1);
    assert_int_equal(w.recorded_median_ns, 200000);
    assert_int_equal(w.before.median_ns, 200000);
    assert_int_equal(w.after.median_ns, 150000);
    assert_int_equal(w.cp_before.window_ns, 200000);
    assert_int_equal(w.cp_before.path_ns, 200000);
    gpufl__whatif_free(&w);
    assert_int_equal(gpufl__whatif_run_window(t, 2500000, 2600000, NULL, &w, err, sizeof err), GPUFL_ENOTFOUND);
    assert_non_null(strstr(err, "no work, call, sync or mark"));
    gpufl_trace_close(t);
}

static void test_remove_sync(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_steps();
    gpufl__whatif_change c = gpufl__whatif_none();
    /* step 1: the host goes on at 1130, ends 1140 (40); step 2 begins 100
     * later, 1240, but A waits for D of step 1 (1280): A 1280-1380, B -1430,
     * D -1450, its sync returns 1460, the step ends 1470 (230) */
    uint64_t one[] = {0};
    c.remove = one;
    c.nremove = 1;
    expect(t, &c, 40000, 270000);
    uint64_t both[] = {0, 1};
    c.remove = both;
    c.nremove = 2;
    expect(t, &c, 40000, 80000);
    gpufl_trace_close(t);
    /* without the context sync: thread 5 goes on at 3010; thread 6 starts
     * 30 later (3040), K2 3110-3150 after K1; its next call 225 after its
     * first ends (3270-3275), K2b 3280-3320; thread 5 15 after that call:
     * K3's call 3290-3295, K3 3320-3340, the stream sync returns 3350, the
     * step ends 3360 */
    t = fixture_threads();
    uint64_t ctx[] = {0};
    c.remove = ctx;
    c.nremove = 1;
    expect(t, &c, 360000, 360000);
    gpufl__whatif w = run_ok(t, NULL);
    assert_int_equal(w.before.median_ns, 470000);
    gpufl__whatif_free(&w);
    gpufl_trace_close(t);
}

static void test_host_gap_scale(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_steps();
    gpufl__whatif_change c = gpufl__whatif_none();
    c.host_gap_scale = 0.5;
    /* step 1 begins at 1076 (the 48 us before it halved); calls at +0,
     * +7.5, +15, the sync at +22.5; A 1086-1186, B -1236, D -1256, the
     * sync returns 1266, the step ends 1271: 195. Step 2 the same. */
    expect(t, &c, 195000, 390000);
    c.host_gap_scale = 0;
    /* no gaps: begins 1052; A 1062-1162, B -1212, D -1232, sync 1242, end 1242: 190 */
    expect(t, &c, 190000, 380000);
    gpufl_trace_close(t);
}

static void test_overlap_copies(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_copy();
    gpufl__whatif_change c = gpufl__whatif_none();
    c.overlap_copies = true;
    /* C leaves stream 7 but still follows K1 (it reads K1's output): C
     * 2110-2160 on its own stream, K2 2110-2210 right after K1, the sync
     * (on K2) returns 2220, the step ends 2230 */
    expect(t, &c, 230000, 230000);
    gpufl_trace_close(t);
}

/* Fails the test unless the replay of `scope` with c fails with `code`
 * and, where want is not NULL, an error saying want. */
static void refused(gpufl_trace *t, const char *scope, const gpufl__whatif_change *c, int code, const char *want)
{
    gpufl__whatif w;
    char err[512] = "";
    int rc = gpufl__whatif_run(t, scope, c, &w, err, sizeof err);
    if (rc != code || (want && !strstr(err, want)))
        fail_msg("whatif %s: %d (want %d) '%s', not saying '%s'", scope, rc, code, err, want ? want : "");
}

static void test_bad_changes(void **state)
{
    (void)state;
    gpufl_trace *t = fixture_steps();
    gpufl__whatif_change c = gpufl__whatif_none();
    c.kernel = "A";
    c.speedup = 0;
    refused(t, "step", &c, GPUFL_EINVAL, "--speedup 0: must be a number above 0");
    c.speedup = -2;
    refused(t, "step", &c, GPUFL_EINVAL, NULL);
    c.speedup = 2;
    c.kernel = "~([";
    refused(t, "step", &c, GPUFL_EINVAL, "not a regular expression");
    c.kernel = "nothing";
    refused(t, "step", &c, GPUFL_EINVAL, "matches no kernel");
    c = gpufl__whatif_none();
    uint64_t bad[] = {2};
    c.remove = bad;
    c.nremove = 1;
    refused(t, "step", &c, GPUFL_EINVAL, "--remove-sync 2: no such sync (the session has 2: ids 0 to 1");
    c = gpufl__whatif_none();
    c.host_gap_scale = -1;
    refused(t, "step", &c, GPUFL_EINVAL, NULL);
    refused(t, "nope", NULL, GPUFL_ENOTFOUND, "no scope or NVTX range called 'nope'");
    gpufl_trace_close(t);
}

/* Damaged and partial recordings: work with no call times, a call that
 * began after its kernel, a sync with no thread, work ending before it
 * starts, scopes of two threads beginning and ending at the same instants
 * (which once made a cycle of inferred edges). The graph builds, the
 * unchanged replay keeps what can be kept and the critical path tiles the
 * step. */
static void test_damaged_input(void **state)
{
    (void)state;
    af f = {.end_ns = 3000000};
    for (unsigned tid = 5; tid <= 6; tid++)
        for (int s = 0; s < 3; s++)
            af_scope(&f, tid, tid * 10 + (unsigned)s, 0, 0, "step", 1100000 + (uint64_t)s * 100000,
                     1150000 + (uint64_t)s * 100000);
    af_kernel(&f, (af_k){.stream = 7, .name = "nocall", .start = 1100000, .end = 1120000});
    kernel(&f, 7, "late_call", 1120000, 1130000, 1125000, 1126000);
    af_kernel(&f, (af_k){.stream = 7,
                         .name = "backwards",
                         .start = 1200000,
                         .end = 1190000,
                         .tid = 5,
                         .api_start = 1195000,
                         .api_end = 1196000});
    af_sync(&f, 0, 7, 1131000, 1140000, "stream", 0);
    af_sync(&f, 0, 7, 1210000, 1220000, "event", 5);
    gpufl_trace *t = af_open(&f, dir, "damaged");
    gpufl__whatif w = run_ok(t, NULL);
    assert_int_equal(w.nsteps, 6);
    assert_int_equal(w.recorded_median_ns, 50000);
    assert_int_equal(w.before.median_ns, 50000);
    assert_int_equal(w.cp_before.path_ns, w.cp_before.window_ns);
    gpufl__whatif_free(&w);
    gpufl__ana_critpath *c;
    assert_int_equal(gpufl__ana_critpath_of(t, &c), 0);
    assert_non_null(c);
    assert_int_equal(c->steps, 6);
    assert_int_equal(c->end_ns - c->begin_ns, 50000);
    gpufl__ana_critpath_free(c);
    gpufl_trace_close(t);
}

/* Runs the command line, its stdout and stderr into out; its exit code. */
static int cli(const char *args, char *out, size_t len)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", GFL_CLI, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs `gpufl CMD <dir>/steps OPTS`: fails the test unless it exits with
 * `code` and, where want is not NULL, says want. Its output, until the
 * next call. */
static const char *steps_cli(const char *cmd, const char *opts, int code, const char *want)
{
    static char out[1 << 16];
    char args[4096];
    snprintf(args, sizeof args, "%s '%s/steps' %s", cmd, dir, opts);
    int rc = cli(args, out, sizeof out);
    if (rc != code || (want && !strstr(out, want)))
        fail_msg("gpufl %s: exit %d (want %d), output without '%s':\n%s", args, rc, code, want ? want : "", out);
    return out;
}

static void test_cli(void **state)
{
    (void)state;
    gpufl_trace_close(fixture_steps());
    steps_cli("whatif", "--kernel A --speedup 0", 64, "bad --speedup '0'");
    steps_cli("whatif", "--remove-sync 7", 64, "--remove-sync 7: no such sync");
    steps_cli("whatif", "--kernel '~(' --speedup 2", 64, "not a regular expression");
    steps_cli("whatif", "--speedup 2", 64, "--speedup needs --kernel");
    steps_cli("whatif", "--kernel A --speedup 2 --format json", 0, "\"median_ns\": 150000");
    /* 100-110 us after the start: what meets [1100, 1110] us: the begin mark of step 1, call A,
     * call B and kernel A (the HtoD copy ended at 1060) */
    const char *out = steps_cli("graph", "-f json --from 100us --to 110us", 0, NULL);
    size_t nodes = 0;
    for (const char *p = out; (p = strstr(p, "\"id\":")); p++)
        nodes++;
    assert_int_equal(nodes, 4);
    assert_non_null(strstr(out, "\"kind\": \"launch\""));
    out = steps_cli("whatif", "--from 100us --to 300us --kernel A --speedup 2 --format json", 0, "\"window\": true");
    assert_non_null(strstr(out, "\"median_ns\": 150000"));
    steps_cli("whatif", "--from 100us", 64, "needs both --from and --to");
    steps_cli("whatif", "--scope step --from 100us --to 300us", 64, NULL);
    steps_cli("graph", "-f dot --from 110us --to 100us", 64, "the window is empty");
    steps_cli("graph", "-f svg", 64, NULL);
    steps_cli("graph", "-f dot", 0, "digraph gpufl");
}

/* The unchanged replay of a real session: every step within 2 %. */
static void test_sample_replay(void **state)
{
    (void)state;
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(GFL_SOURCE_DIR "/samples/train_sample", &t, err, sizeof err) != 0)
        fail_msg("%s", err);
    gpufl__graph g;
    assert_int_equal(gpufl__graph_build(t, &g), 0);
    gpufl__step *steps;
    size_t n;
    uint32_t name;
    assert_int_equal(gpufl__graph_steps(&g, NULL, &steps, &n, &name), 0);
    assert_string_equal(gpufl_trace_string(t, name), "step");
    assert_int_equal(n, 60);
    gpufl__sched s;
    assert_int_equal(gpufl__whatif_schedule(&g, NULL, &s, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++) {
        double rec = (double)(g.nodes[steps[i].end].end - g.nodes[steps[i].begin].start);
        double sim = (double)(s.end[steps[i].end] - s.start[steps[i].begin]);
        if (sim < rec * 0.98 || sim > rec * 1.02)
            fail_msg("step %zu: replayed %.0f ns, recorded %.0f ns", i, sim, rec);
    }
    gpufl__sched_free(&s);
    free(steps);
    gpufl__graph_free(&g);
    gpufl_trace_close(t);
}

static int setup(void **state)
{
    (void)state;
    dir = tu_mkdtemp("whatif");
    return dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_rf(dir);
    free(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_edges),    cmocka_unit_test(test_thread_waits),
        cmocka_unit_test(test_critical_path),  cmocka_unit_test(test_no_change_replays_the_recording),
        cmocka_unit_test(test_speedup),        cmocka_unit_test(test_remove_sync),
        cmocka_unit_test(test_host_gap_scale), cmocka_unit_test(test_overlap_copies),
        cmocka_unit_test(test_window),         cmocka_unit_test(test_bad_changes),
        cmocka_unit_test(test_damaged_input),  cmocka_unit_test(test_cli),
        cmocka_unit_test(test_sample_replay),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
