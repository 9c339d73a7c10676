/*
 * The executive summary (src/analyze/ana_summary.c) and the report on an
 * empty session.
 *
 * Why: busy time is the union of a device's work, not its sum: two kernels
 * on two streams that overlap count once, and devices are kept apart; the
 * summary's totals, NVML peaks, drops and the end of a session that did
 * not record its end are what every report starts with.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ana_fixture.h"
#include "analyze/analysis.h"

TU_TEMP_DIR_FIXTURES(dir, "analyze-summary")

static const gpufl__ana_device_summary *dev_of(const gpufl__ana_summary *s, uint32_t d)
{
    for (uint32_t i = 0; i < s->ndevices; i++)
        if (s->devices[i].device == d)
            return &s->devices[i];
    fail_msg("no device %u in the summary", d);
    return NULL;
}

static void busy_is_a_union(void **state)
{
    (void)state;
    af f = {.end_ns = 2000000};
    af_device(&f, 0, "NVIDIA H200", 150000000000ull);
    /* device 0: two overlapping kernels on two streams, then a copy and a
     * memset that overlap: union 300 us + 150 us */
    af_kernel(&f, (af_k){.dev = 0, .stream = 7, .start = 1100000, .end = 1300000});
    af_kernel(&f, (af_k){.dev = 0, .stream = 8, .start = 1200000, .end = 1400000});
    af_copy(&f, 0, 7, 1500000, 1600000, "HtoD", "pinned", "device", 1000, 0, 0);
    af_memset(&f, 0, 8, 1550000, 1650000, 100);
    /* device 1: overlapping kernels on one stream: 150 us */
    af_kernel(&f, (af_k){.dev = 1, .stream = 9, .start = 1100000, .end = 1200000});
    af_kernel(&f, (af_k){.dev = 1, .stream = 10, .start = 1150000, .end = 1250000});
    /* device 2: samples only */
    af_metrics(&f, 2, 1300000, 10, 500000000);
    af_metrics(&f, 2, 1400000, 30, 700000000);
    af_metrics(&f, 2, 1500000, 20, 700000000);
    af_sync(&f, 0, 0, 1700000, 1800000, "context", 5);
    af_scope(&f, 5, 1, 0, 0, "step", 1050000, 1900000);
    af_nvtx(&f, 5, 1, "fwd", 1060000, 1070000);
    af_mark(&f, 5, 2, "here", 1080000);
    af_mem(&f, false, 0, 1090000, 0x1000, 4096, "device");
    af_mem(&f, true, 0, 1095000, 0x1000, 4096, "device");
    af_line(&f, AF_DEVICE,
            "{\"type\":\"dropped\",\"ts_ns\":1990000,\"reason\":\"cupti\",\"channel\":\"device\",\"count\":3,"
            "\"total\":3}");
    gpufl_trace *t = af_open(&f, dir, "busy");
    gpufl__ana_summary s;
    assert_int_equal(gpufl__analyze_summary(t, &s), 0);
    assert_true(s.ended);
    assert_int_equal(s.start_ns, AF_START);
    assert_int_equal(s.end_ns, 2000000);
    assert_int_equal(s.wall_ns, 1000000);
    assert_int_equal(s.ndevices, 3);
    assert_int_equal(s.devices[0].device, 0); /* by device index */
    assert_int_equal(s.devices[2].device, 2);
    const gpufl__ana_device_summary *d0 = dev_of(&s, 0), *d1 = dev_of(&s, 1), *d2 = dev_of(&s, 2);
    assert_string_equal(gpufl_trace_string(t, d0->name), "NVIDIA H200");
    assert_int_equal(d0->mem_total_bytes, 150000000000ull);
    assert_int_equal(d0->busy_ns, 450000);
    assert_true(d0->busy_pct > 44.999 && d0->busy_pct < 45.001);
    assert_int_equal(d0->kernels, 2);
    assert_int_equal(d0->kernel_ns, 400000);
    assert_int_equal(d0->copies, 1);
    assert_int_equal(d0->copy_bytes, 1000);
    assert_int_equal(d0->copy_ns, 100000);
    assert_int_equal(d0->memsets, 1);
    assert_int_equal(d0->memset_bytes, 100);
    assert_int_equal(d0->first_ns, 1100000);
    assert_int_equal(d0->last_ns, 1650000);
    assert_int_equal(d1->busy_ns, 150000);
    assert_int_equal(d1->kernel_ns, 200000);
    assert_int_equal(d2->busy_ns, 0);
    assert_int_equal(d2->samples, 3);
    assert_int_equal(d2->util_samples, 3);
    assert_true(d2->util_mean_pct > 19.999 && d2->util_mean_pct < 20.001);
    assert_int_equal(d2->util_peak_pct, 30);
    assert_int_equal(d2->mem_used_peak_bytes, 700000000);
    assert_int_equal(d2->mem_used_peak_ns, 1400000);   /* the first sample at the peak */
    assert_int_equal(d2->mem_total_bytes, 1000000000); /* no device_info: the samples' */
    assert_int_equal(s.kernels, 4);
    assert_int_equal(s.kernel_ns, 600000);
    assert_int_equal(s.copies, 1);
    assert_int_equal(s.memsets, 1);
    assert_int_equal(s.syncs, 1);
    assert_int_equal(s.sync_ns, 100000);
    assert_int_equal(s.scopes, 1);
    assert_int_equal(s.nvtx_ranges, 1);
    assert_int_equal(s.nvtx_marks, 1);
    assert_int_equal(s.allocations, 1);
    assert_int_equal(s.frees, 1);
    assert_int_equal(s.dropped_total, 3);
    assert_int_equal(s.dropped[6], 3); /* cupti */
    gpufl__ana_summary_free(&s);
    assert_null(s.devices);
    gpufl__ana_summary_free(&s); /* twice is fine */
    gpufl_trace_close(t);
}

/* A session that did not record its end ends at its latest row; busy time
 * never exceeds the wall time. */
static void unended_session(void **state)
{
    (void)state;
    af f = {.end_ns = 0};
    af_kernel(&f, (af_k){.dev = 0, .stream = 7, .start = 1100000, .end = 1900000});
    af_kernel(&f, (af_k){.dev = 0, .stream = 7, .start = 1200000, .end = 1300000});
    af_scope(&f, 5, 1, 0, 0, "open", 1050000, 0);
    gpufl_trace *t = af_open(&f, dir, "unended");
    gpufl__ana_summary s;
    assert_int_equal(gpufl__analyze_summary(t, &s), 0);
    assert_false(s.ended);
    assert_int_equal(s.end_ns, 1900000);
    assert_int_equal(s.wall_ns, 900000);
    assert_int_equal(s.devices[0].busy_ns, 800000);
    assert_true(s.devices[0].busy_ns <= s.wall_ns);
    gpufl__ana_summary_free(&s);
    gpufl_trace_close(t);
}

/* Nothing recorded: every analysis succeeds with an empty result. */
static void empty_session(void **state)
{
    (void)state;
    af f = {.end_ns = 1500000};
    gpufl_trace *t = af_open(&f, dir, "empty");
    gpufl__ana_report r;
    assert_int_equal(gpufl__analyze_report(t, NULL, &r), 0);
    assert_int_equal(r.options.top_kernels, 20);
    assert_int_equal(r.summary.wall_ns, 500000);
    assert_int_equal(r.summary.ndevices, 0);
    assert_int_equal(r.summary.kernels, 0);
    assert_int_equal(r.scopes.trees[GPUFL__ANA_TREE_SCOPES].n, 0);
    assert_int_equal(r.scopes.trees[GPUFL__ANA_TREE_NVTX].n, 0);
    assert_int_equal(r.hotspots.n, 0);
    assert_null(r.hotspots.kernels);
    assert_int_equal(r.copies.n, 0);
    assert_int_equal(r.idle.n, 0);
    assert_int_equal(r.launches.kernels, 0);
    assert_int_equal(r.launches.latency.n, 0);
    assert_false(r.memory.recorded);
    assert_int_equal(r.memory.n, 0);
    assert_int_equal(r.counters.stalls.status, GPUFL__ANA_SECTION_EMPTY);
    assert_string_equal(r.counters.stalls.engine, "pc_sampling");
    assert_string_equal(r.counters.sass.engine, "sass_metrics");
    assert_string_equal(r.counters.hw.engine, "range_profiler");
    gpufl__ana_report_free(&r);
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
}

static void null_arguments(void **state)
{
    (void)state;
    gpufl__ana_summary s;
    assert_int_equal(gpufl__analyze_summary(NULL, &s), GPUFL_EINVAL);
    assert_int_equal(s.ndevices, 0);
    assert_int_equal(gpufl__analyze_summary(NULL, NULL), GPUFL_EINVAL);
    gpufl__ana_report r;
    assert_int_equal(gpufl__analyze_report(NULL, NULL, &r), GPUFL_EINVAL);
    gpufl__ana_report_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(busy_is_a_union),
        cmocka_unit_test(unended_session),
        cmocka_unit_test(empty_session),
        cmocka_unit_test(null_arguments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
