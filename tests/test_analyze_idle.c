/*
 * The idle time and launches analyses (src/analyze/ana_idle.c,
 * ana_launches.c).
 *
 * Why: idle time split by cause is what says whether the CPU, a host wait
 * or the GPU's own queue kept a device idle. Checked on constructed gaps
 * with a known split: a gap while the launching thread was partly in a
 * sync call (host + sync), a gap after a stream-wait-event issued between
 * two launches (sync), a gap before work launched long before (other), a
 * gap before work with no call time (other); device rows see the union of
 * their streams, so a gap on one stream filled by another is no gap there.
 * host + sync + other == idle on every row. Launch latency, queue (also
 * negative) and call time with nearest-rank percentiles, and kernels
 * shorter than their launch call.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ana_fixture.h"
#include "analyze/analysis.h"

static char *dir;
static gpufl_trace *t;

static gpufl_trace *make(void)
{
    af f = {.end_ns = 3000000};
    /* device 0, stream 7 */
    af_kernel(
        &f, (af_k){.stream = 7, .start = 1100000, .end = 1200000, .tid = 5, .api_start = 1090000, .api_end = 1095000});
    af_sync(&f, 0, 0, 1210000, 1230000, "context", 5);
    af_kernel(
        &f, (af_k){.stream = 7, .start = 1300000, .end = 1400000, .tid = 5, .api_start = 1250000, .api_end = 1260000});
    af_sync(&f, 0, 7, 1300000, 1301000, "stream_wait_event", 5);
    af_kernel(
        &f, (af_k){.stream = 7, .start = 1500000, .end = 1600000, .tid = 5, .api_start = 1350000, .api_end = 1351000});
    af_kernel(&f, (af_k){.stream = 7, .start = 1700000, .end = 1800000, .tid = 5});
    /* device 0, stream 8: fills the stream 7 gap at 1.4-1.5 ms on the device row */
    af_kernel(
        &f, (af_k){.stream = 8, .start = 1350000, .end = 1550000, .tid = 6, .api_start = 1340000, .api_end = 1345000});
    /* device 1, stream 9 */
    af_kernel(&f, (af_k){.dev = 1, .stream = 9, .start = 2000000, .end = 2100000, .tid = 7});
    af_sync(&f, 1, 9, 2120000, 2140000, "stream", 7);
    af_kernel(&f, (af_k){.dev = 1,
                         .stream = 9,
                         .start = 2200000,
                         .end = 2300000,
                         .tid = 7,
                         .api_start = 2150000,
                         .api_end = 2160000});
    af_kernel(&f, (af_k){.dev = 1,
                         .stream = 9,
                         .start = 2400000,
                         .end = 2401000,
                         .tid = 7,
                         .api_start = 2350000,
                         .api_end = 2355000}); /* shorter than its launch call */
    /* device 1, stream 10: started before its call returned */
    af_kernel(&f, (af_k){.dev = 1,
                         .stream = 10,
                         .start = 2500000,
                         .end = 2600000,
                         .tid = 7,
                         .api_start = 2490000,
                         .api_end = 2520000});
    return af_open(&f, dir, "idle");
}

static int setup(void **state)
{
    (void)state;
    dir = tu_mkdtemp("analyze-idle");
    t = make();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gpufl_trace_close(t);
    tu_rm_rf(dir);
    free(dir);
    return 0;
}

static void expect_row(const gpufl__ana_idle_row *r, uint32_t device, uint32_t stream, uint64_t ops, uint64_t idle,
                       uint64_t gaps, uint64_t host, uint64_t sync, uint64_t other)
{
    assert_int_equal(r->device, device);
    assert_int_equal(r->stream, stream);
    assert_int_equal(r->ops, ops);
    assert_int_equal(r->idle_ns, idle);
    assert_int_equal(r->gaps, gaps);
    assert_int_equal(r->host_ns, host);
    assert_int_equal(r->sync_ns, sync);
    assert_int_equal(r->other_ns, other);
    assert_int_equal(r->host_ns + r->sync_ns + r->other_ns, r->idle_ns);
    assert_int_equal(r->last_ns - r->first_ns, r->busy_ns + r->idle_ns);
}

static void idle_by_cause(void **state)
{
    (void)state;
    gpufl__ana_idle idle;
    assert_int_equal(gpufl__analyze_idle(t, &idle), 0);
    assert_int_equal(idle.n, 6);
    const uint32_t ALL = GPUFL__ANA_ALL_STREAMS;
    /* device 0: gap 1.2-1.3 (host 30, sync 20, other 50), gap 1.6-1.7 (no call time) */
    expect_row(&idle.rows[0], 0, ALL, 5, 200000, 2, 30000, 20000, 150000);
    assert_int_equal(idle.rows[0].busy_ns, 500000);
    assert_int_equal(idle.rows[0].first_ns, 1100000);
    assert_int_equal(idle.rows[0].last_ns, 1800000);
    assert_int_equal(idle.rows[0].lead_ns, 100000);
    assert_int_equal(idle.rows[0].tail_ns, 1200000);
    /* stream 7 also has 1.4-1.5, after a stream-wait-event: sync */
    expect_row(&idle.rows[1], 0, 7, 4, 300000, 3, 30000, 120000, 150000);
    expect_row(&idle.rows[2], 0, 8, 1, 0, 0, 0, 0, 0);
    /* device 1: 2.1-2.2 (host 30, sync 20, other 50), 2.3-2.4 (host 50, other 50),
     * 2.401-2.5 (host 89, other 10) */
    expect_row(&idle.rows[3], 1, ALL, 4, 299000, 3, 169000, 20000, 110000);
    expect_row(&idle.rows[4], 1, 9, 3, 200000, 2, 80000, 20000, 100000);
    expect_row(&idle.rows[5], 1, 10, 1, 0, 0, 0, 0, 0);
    gpufl__ana_idle_free(&idle);
    assert_null(idle.rows);
}

static void launches(void **state)
{
    (void)state;
    gpufl__ana_launches l;
    assert_int_equal(gpufl__analyze_launches(t, &l), 0);
    assert_int_equal(l.kernels, 9);
    assert_int_equal(l.with_api, 7);
    /* latency 10,10,10,50,50,50,150 us */
    assert_int_equal(l.latency.n, 7);
    assert_int_equal(l.latency.total, 330000);
    assert_int_equal(l.latency.min, 10000);
    assert_int_equal(l.latency.p50, 50000);
    assert_int_equal(l.latency.p95, 150000);
    assert_int_equal(l.latency.max, 150000);
    /* call 1,5,5,5,10,10,30 us */
    assert_int_equal(l.call.p50, 5000);
    assert_int_equal(l.call.min, 1000);
    assert_int_equal(l.call.max, 30000);
    /* queue -20,5,5,40,40,45,149 us */
    assert_int_equal(l.queue.min, -20000);
    assert_int_equal(l.queue.p50, 40000);
    assert_int_equal(l.queue.p95, 149000);
    assert_int_equal(l.queue.total, 264000);
    assert_int_equal(l.short_kernels, 1);
    assert_int_equal(l.short_kernel_ns, 1000);
    gpufl__ana_launches_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_by_cause),
        cmocka_unit_test(launches),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
