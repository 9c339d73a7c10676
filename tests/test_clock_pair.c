/*
 * Clock pairs (core/clock_pair.h): the session clock read against
 * CLOCK_MONOTONIC and CLOCK_REALTIME, with the kernel's NTP state, which a
 * merge of several sessions aligns them by.
 *
 * Why: a pair whose reads lie further apart than it says, or that a
 * format loses, would misplace every event of one session against another
 * by that much. So: one pair's reads fall within its uncertainty; the
 * adjtimex figures are converted to ns whatever units the kernel used; a
 * session writes a start pair at its start and an end pair at its end
 * (its start and end times are theirs), and both formats read them back
 * alike; the collector adds one every period in between.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>

#include "collect/collector.h"
#include "core/clock.h"
#include "core/clock_pair.h"
#include "core/intern.h"
#include "core/options.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(tmp, "clockpair")

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

static uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/* Before any calibration the session clock is CLOCK_MONOTONIC itself, so
 * the pair's monotonic read must lie within half its width of its middle;
 * pairs in a row go forward, and their wall-minus-session offsets agree to
 * within the two widths and what NTP could slew meanwhile. */
static int pair_child(void)
{
    gpufl__clock_pair a, b;
    gpufl__clock_pair_read(&a);
    if (absdiff(a.mono_ns, a.session_ns) > a.uncertainty_ns / 2 + 1)
        return __LINE__;
    if (a.uncertainty_ns == 0 || a.uncertainty_ns > 10000000)
        return __LINE__;
    sleep_ms(5);
    gpufl__clock_pair_read(&b);
    if (!(b.session_ns > a.session_ns && b.mono_ns > a.mono_ns && b.wall_ns > a.wall_ns))
        return __LINE__;
    int64_t off_a = (int64_t)(a.wall_ns - a.session_ns), off_b = (int64_t)(b.wall_ns - b.session_ns);
    int64_t drift = off_a > off_b ? off_a - off_b : off_b - off_a;
    if (drift > (int64_t)(a.uncertainty_ns + b.uncertainty_ns) + 100000) /* 500 ppm of 5 ms, and more */
        return __LINE__;
    /* a wall read of its own agrees with the pair's offset to a few ms */
    uint64_t s = gpufl__now_ns(), w = gpufl__wall_ns();
    if (absdiff((uint64_t)((int64_t)s + off_b), w) > 5000000)
        return __LINE__;
    return 0;
}

static void test_pair_within_its_uncertainty(void **state)
{
    (void)state;
    tu_expect_child_ok(pair_child, __FILE__);
}

static void test_ntp_units(void **state)
{
    (void)state;
    struct timex tx;
    gpufl__ntp_state n;
    memset(&tx, 0, sizeof tx);
    tx.status = 0; /* synchronised, offset in µs */
    tx.offset = -250;
    tx.maxerror = 16000;
    tx.esterror = 120;
    gpufl__ntp_from_timex(TIME_OK, &tx, &n);
    assert_true(n.known && n.synced);
    assert_int_equal(n.offset_ns, -250000);
    assert_int_equal(n.maxerror_ns, 16000000);
    assert_int_equal(n.esterror_ns, 120000);
    tx.status = STA_NANO; /* offset in ns */
    tx.offset = -250;
    gpufl__ntp_from_timex(TIME_OK, &tx, &n);
    assert_int_equal(n.offset_ns, -250);
    assert_int_equal(n.status, STA_NANO);
    tx.status = STA_UNSYNC;
    gpufl__ntp_from_timex(TIME_OK, &tx, &n);
    assert_true(n.known && !n.synced);
    tx.status = 0;
    gpufl__ntp_from_timex(TIME_ERROR, &tx, &n);
    assert_true(n.known && !n.synced);
    gpufl__ntp_from_timex(-1, &tx, &n);
    assert_false(n.known);
    assert_int_equal(n.maxerror_ns, 0);
    /* the event says what the kernel says here: its NTP fields are set
     * exactly when the kernel answered */
    gfl_event ev;
    gpufl__clock_event("start", &ev);
    gpufl__ntp_read(&n);
    assert_int_equal(ev.h.type, GFL_EV_CLOCK);
    assert_string_equal(gpufl__intern_str(ev.u.clock.point, NULL), "start");
    assert_int_equal(ev.u.clock.ntp != 0, n.known);
}

/* The clock table of what path holds, as plain rows. */
typedef struct clock_rows {
    size_t n;
    uint64_t ts[64], mono[64], wall[64];
    uint32_t unc[64];
    char point[64][16], ntp[64][24];
    int64_t offset[64];
    uint64_t maxerror[64];
    uint64_t start_ns, end_ns, start_wall_ns;
} clock_rows;

static void read_clocks(const char *path, clock_rows *r)
{
    gpufl_trace *t;
    char err[512];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        fail_msg("%s: %s", path, err);
    const gpufl_trace_clocks *c = gpufl_trace_get_clocks(t);
    assert_true(c->n <= 64);
    memset(r, 0, sizeof *r);
    r->n = c->n;
    for (size_t i = 0; i < c->n; i++) {
        r->ts[i] = c->ts_ns[i];
        r->mono[i] = c->mono_ns[i];
        r->wall[i] = c->wall_ns[i];
        r->unc[i] = c->uncertainty_ns[i];
        snprintf(r->point[i], sizeof r->point[i], "%s", gpufl_trace_string(t, c->point[i]));
        snprintf(r->ntp[i], sizeof r->ntp[i], "%s", gpufl_trace_string(t, c->ntp[i]));
        r->offset[i] = c->ntp_offset_ns[i];
        r->maxerror[i] = c->ntp_maxerror_ns[i];
    }
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    r->start_ns = info->start_ns;
    r->end_ns = info->end_ns;
    r->start_wall_ns = info->start_wall_ns;
    gpufl_trace_close(t);
}

/* A whole session written in both formats: a start pair at the session's
 * start and an end pair at its end, the same rows from trace.gflt and from
 * system.log, in order, each pair consistent with the session's start. */
static void test_session_pairs_both_formats(void **state)
{
    (void)state;
    char log_path[4200];
    snprintf(log_path, sizeof log_path, "%s/both", tmp);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "clocks";
    o.log_path = log_path;
    o.log_format = GPUFL_LOG_BOTH;
    o.backend = GPUFL_BACKEND_NONE;
    assert_true(gpufl_init(&o));
    gpufl_scope s = gpufl_scope_begin("work");
    sleep_ms(30);
    gpufl_scope_end(s);
    gpufl_shutdown();
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    char path[4300];
    clock_rows g, nd;
    snprintf(path, sizeof path, "%s/trace.gflt", dir);
    read_clocks(path, &g);
    snprintf(path, sizeof path, "%s/system.log", dir);
    read_clocks(path, &nd);
    assert_int_equal(g.n, 2); /* 30 ms: no periodic pair */
    assert_string_equal(g.point[0], "start");
    assert_string_equal(g.point[1], "end");
    assert_int_equal(g.ts[0], g.start_ns);
    assert_int_equal(g.wall[0], g.start_wall_ns);
    assert_int_equal(g.ts[1], g.end_ns);
    assert_true(g.ts[1] > g.ts[0] + 30000000);
    assert_true(g.mono[1] > g.mono[0] && g.wall[1] > g.wall[0]);
    int64_t d0 = (int64_t)(g.wall[0] - g.ts[0]), d1 = (int64_t)(g.wall[1] - g.ts[1]);
    assert_true((d0 > d1 ? d0 - d1 : d1 - d0) <= (int64_t)(g.unc[0] + g.unc[1]) + 1000000);
    assert_int_equal(nd.n, g.n);
    for (size_t i = 0; i < g.n; i++) {
        assert_int_equal(nd.ts[i], g.ts[i]);
        assert_int_equal(nd.mono[i], g.mono[i]);
        assert_int_equal(nd.wall[i], g.wall[i]);
        assert_int_equal(nd.unc[i], g.unc[i]);
        assert_string_equal(nd.point[i], g.point[i]);
        assert_string_equal(nd.ntp[i], g.ntp[i]);
        assert_int_equal(nd.offset[i], g.offset[i]);
        assert_int_equal(nd.maxerror[i], g.maxerror[i]);
    }
    json_t *js = tu_session_json(dir);
    assert_int_equal(tu_int(js, "end_ns"), (long long)g.end_ns);
    json_decref(js);
    free(dir);
}

/* ---- the collector's periodic pairs, with a period a test can wait for */

typedef struct kept {
    gfl_event ev[256];
    size_t n;
} kept;

static int keep_event(void *self, const gfl_event *ev, uint64_t now)
{
    (void)now;
    kept *k = self;
    if (ev->h.type == GFL_EV_CLOCK && k->n < 256)
        k->ev[k->n++] = *ev;
    return 0;
}
static void no_tick(void *self, uint64_t now) { (void)self, (void)now; }
static void no_status(void *self, gpufl__sink_status *out)
{
    (void)self;
    memset(out, 0, sizeof *out);
}
static void no_close(void *self, const gpufl__session_end *end) { (void)self, (void)end; }

static void test_collector_periodic_pairs(void **state)
{
    (void)state;
    static kept k;
    k.n = 0;
    gfl_event start;
    gpufl__clock_event("start", &start);
    static gpufl__session_info info;
    info.start_ns = start.h.ts;
    info.start_wall_ns = start.u.clock.wall_ns;
    snprintf(info.dir, sizeof info.dir, "%s", tmp);
    static gpufl__config config; /* the summary names the engine asked for */
    gpufl_options_init(&config.o);
    info.config = &config;
    gpufl__collector_config cc = {.info = &info, .clock_start = &start, .clock_period_ns = 20000000};
    cc.sinks[0] = (gpufl__sink){"keep", &k, keep_event, no_tick, no_status, no_close, NULL};
    cc.nsinks = 1;
    gpufl__collector *c;
    char err[256];
    assert_int_equal(gpufl__collector_start(&c, &cc, err, sizeof err), 0);
    sleep_ms(150);
    gfl_event end;
    gpufl__clock_event("end", &end);
    gpufl__session_end e = {.end_ns = end.h.ts, .end_wall_ns = end.u.clock.wall_ns, .clock = &end};
    gpufl__collector_stop(c, &e, NULL);
    assert_true(k.n >= 2 + 4); /* 150 ms at 20 ms: 7 periodic, give or take a slow machine */
    const char *first = gpufl__intern_str(k.ev[0].u.clock.point, NULL);
    const char *last = gpufl__intern_str(k.ev[k.n - 1].u.clock.point, NULL);
    assert_string_equal(first, "start");
    assert_string_equal(last, "end");
    for (size_t i = 1; i < k.n; i++) {
        const char *p = gpufl__intern_str(k.ev[i].u.clock.point, NULL);
        if (i + 1 < k.n)
            assert_string_equal(p, "periodic");
        assert_true(k.ev[i].h.ts > k.ev[i - 1].h.ts);
        assert_true(k.ev[i].u.clock.mono_ns > k.ev[i - 1].u.clock.mono_ns);
        if (i + 1 < k.n) /* a period apart, never much sooner */
            assert_true(k.ev[i].h.ts - k.ev[i - 1].h.ts >= 20000000 - 1000000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pair_within_its_uncertainty),
        cmocka_unit_test(test_ntp_units),
        cmocka_unit_test(test_session_pairs_both_formats),
        cmocka_unit_test(test_collector_periodic_pairs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
