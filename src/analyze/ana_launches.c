/*
 * The launches analysis (analysis.h): how long kernel launch calls take,
 * and how long kernels wait after them.
 *
 * The three values of a kernel (latency, queue, call) come from two of its
 * columns and cost less to compute again than to store, so no array of
 * them is made: three passes over the kernels feed the three distributions
 * together (ana_scan: count and range, then a histogram, then the values
 * of the buckets that hold the percentiles).
 */
#include <string.h>

#include "analyze/ana_select.h"
#include "analyze/ana_util.h"
#include "analyze/trace_access.h"

enum { LATENCY, QUEUE, CALL, NDIST };

enum { PASS_ADD, PASS_COUNT, PASS_KEEP };

/* One pass over the kernels with API times, feeding each value to s.
 * Inlined with `what` constant, into a loop per pass; the scans are copied
 * in and out so that their fields live in registers, not in memory that
 * the loop's stores might alias. */
static inline __attribute__((always_inline)) void pass(const ta *a, int what, ana_scan s_out[NDIST],
                                                       gpufl__ana_launches *out)
{
    ana_scan s[NDIST];
    memcpy(s, s_out, sizeof s);
    for (size_t i = 0; i < ta_k_n(a); i++) {
        int64_t lead, call;
        if (!ta_k_launch(a, i, &lead, &call))
            continue;
        uint64_t x[NDIST] = {(uint64_t)lead, (uint64_t)(lead - call), (uint64_t)call};
        for (int d = 0; d < NDIST; d++) {
            if (what == PASS_ADD)
                ana_scan_add(&s[d], x[d]);
            else if (what == PASS_COUNT)
                ana_scan_count(&s[d], x[d]);
            else
                ana_scan_keep(&s[d], x[d]);
        }
        if (what != PASS_ADD)
            continue;
        out->with_api++;
        uint64_t dur = ta_k_dur(a, i);
        if (call > 0 && dur < (uint64_t)call) {
            out->short_kernels++;
            out->short_kernel_ns += dur;
        }
    }
    memcpy(s_out, s, sizeof s);
}

int gpufl__analyze_launches(const gpufl_trace *t, gpufl__ana_launches *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    ta a;
    gpufl__ta_open(&a, t);
    out->kernels = ta_k_n(&a);
    ana_scan s[NDIST];
    for (int d = 0; d < NDIST; d++)
        gpufl__ana_scan_open(&s[d], true);
    pass(&a, PASS_ADD, s, out);
    int rc = 0;
    for (int d = 0; d < NDIST && rc == 0; d++)
        rc = gpufl__ana_scan_count_begin(&s[d]);
    if (rc == 0)
        pass(&a, PASS_COUNT, s, out);
    for (int d = 0; d < NDIST && rc == 0; d++)
        rc = gpufl__ana_scan_keep_begin(&s[d]);
    if (rc == 0)
        pass(&a, PASS_KEEP, s, out);
    gpufl__ana_dist *dist[NDIST] = {&out->latency, &out->queue, &out->call};
    for (int d = 0; d < NDIST; d++) {
        int r = rc == 0 ? gpufl__ana_scan_finish(&s[d], dist[d]) : 0;
        gpufl__ana_scan_close(&s[d]);
        rc = rc ? rc : r;
    }
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc;
}

void gpufl__ana_launches_free(gpufl__ana_launches *l)
{
    if (l)
        memset(l, 0, sizeof *l);
}
