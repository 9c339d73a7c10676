/*
 * The ranks of a job on one time line (ana_job.h), the first rank's
 * session clock:
 *
 *   - same host as the first rank: through CLOCK_MONOTONIC, which every
 *     process of a host shares, so the shift is exact to the clock pairs'
 *     read uncertainty;
 *   - another host: through CLOCK_REALTIME, good to what each kernel says
 *     of its NTP/PTP discipline (maxerror, summed over the two hosts;
 *     unknown when either host gave no NTP state);
 *   - then NCCL: collectives end together on every rank (the last to
 *     arrive releases the others; each rank's kernel ends within a few
 *     microseconds), so the median difference of matched collectives'
 *     ends is what the clocks left over. It is taken off ranks on other
 *     hosts, where it is within the clocks' error and more exact than
 *     them; on the first rank's host it is reported only, as a check.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_job.h"
#include "gpufl/gpufl.h"

static uint64_t add_err(uint64_t a, uint64_t b)
{
    return a == GPUFL_JOB_UNKNOWN_ERROR || b == GPUFL_JOB_UNKNOWN_ERROR ? GPUFL_JOB_UNKNOWN_ERROR : a + b;
}

static void align_by_clocks(gpufl__job_rank *ranks, size_t n)
{
    const gpufl__job_rank *ref = &ranks[0];
    for (size_t i = 0; i < n; i++) {
        gpufl__job_rank *r = &ranks[i];
        if (i == 0) {
            r->shift_ns = 0;
            r->align_error_ns = 0;
            r->align_method = "reference";
        } else if (r->has_mono && ref->has_mono && !strcmp(r->host, ref->host)) {
            r->shift_ns = r->mono_offset_ns - ref->mono_offset_ns;
            r->align_error_ns = r->clock_uncertainty_ns + ref->clock_uncertainty_ns;
            r->align_method = "same host: CLOCK_MONOTONIC";
        } else {
            r->shift_ns = r->wall_offset_ns - ref->wall_offset_ns;
            r->align_error_ns = add_err(add_err(r->ntp_maxerror_ns, ref->ntp_maxerror_ns),
                                        r->clock_uncertainty_ns + ref->clock_uncertainty_ns);
            r->align_method = r->has_mono ? "other host: CLOCK_REALTIME (NTP)" : "session start (wall clock)";
        }
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void refine_by_nccl(gpufl__job_rank *ranks, size_t n)
{
    gpufl__job_matches m;
    if (gpufl__job_match_collectives(ranks, n, &m) != 0) /* out of memory: the clocks' alignment stands */
        return;
    if (m.n == 0) {
        gpufl__job_matches_free(&m);
        return;
    }
    int64_t *d = malloc(m.n * sizeof *d);
    if (!d) {
        gpufl__job_matches_free(&m);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        gpufl__job_rank *r = &ranks[i];
        for (size_t k = 0; k < m.n; k++)
            d[k] = (int64_t)(r->coll[m.m[k].at[i]].end_ns + (uint64_t)r->shift_ns) -
                   (int64_t)ranks[0].coll[m.m[k].at[0]].end_ns;
        qsort(d, m.n, sizeof *d, cmp_i64);
        int64_t med = d[m.n / 2];
        for (size_t k = 0; k < m.n; k++)
            d[k] = d[k] > med ? d[k] - med : med - d[k];
        qsort(d, m.n, sizeof *d, cmp_i64);
        r->nccl_residual_ns = med;
        r->nccl_spread_ns = (uint64_t)d[m.n / 2];
        r->nccl_matched = m.n;
        if (strcmp(r->host, ranks[0].host) != 0) {
            r->shift_ns -= med;
            r->align_error_ns = r->nccl_spread_ns;
            r->nccl_applied = true;
            r->align_method = "other host: CLOCK_REALTIME, refined by NCCL";
        }
    }
    free(d);
    gpufl__job_matches_free(&m);
}

void gpufl__job_align(gpufl__job_rank *ranks, size_t n)
{
    if (!n)
        return;
    align_by_clocks(ranks, n);
    refine_by_nccl(ranks, n);
}
