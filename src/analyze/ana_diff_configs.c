/*
 * GPU time per launch of each launch configuration, and paired changes
 * (ana_diff_configs.h): durations bucketed by configuration row with a
 * counting sort (stable, so each bucket stays in start order), a sorted
 * copy for the distributions.
 */
#include "analyze/ana_diff_configs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/trace_access.h"
#include "gpufl/gpufl.h"

#define P95_SIGMAS 1.645 /* p95 - p50 of a normal distribution, in sigmas */
#define MEDIAN_SE 1.2533 /* standard error of a median, in sigma / sqrt(n) */
#define NOISE_SES 2.0

void gpufl__diff_configs_free(gpufl__diff_configs *c)
{
    free(c->at);
    free(c->dur);
    free(c->sorted);
    free(c->dist);
    memset(c, 0, sizeof *c);
}

int gpufl__diff_configs_of(const gpufl_trace *t, gpufl__diff_configs *out)
{
    memset(out, 0, sizeof *out);
    ta a;
    ta_open(&a, t);
    size_t ncfg = a.cfg->n, nk = ta_k_n(&a);
    if (ncfg == 0)
        return 0;
    out->n = ncfg;
    out->dist = calloc(ncfg, sizeof *out->dist);
    out->at = calloc(ncfg + 1, sizeof *out->at);
    out->dur = malloc((nk ? nk : 1) * sizeof *out->dur);
    out->sorted = malloc((nk ? nk : 1) * sizeof *out->sorted);
    size_t *next = calloc(ncfg, sizeof *next);
    int rc = out->dist && out->at && out->dur && out->sorted && next ? 0 : GPUFL_ENOMEM;
    if (rc == 0) {
        for (size_t i = 0; i < nk; i++)
            out->at[ta_k_config_id(&a, i) + 1]++;
        for (size_t c = 0; c < ncfg; c++)
            out->at[c + 1] += out->at[c];
        memcpy(next, out->at, ncfg * sizeof *next);
        for (size_t i = 0; i < nk; i++)
            out->dur[next[ta_k_config_id(&a, i)]++] = ta_k_dur(&a, i);
        memcpy(out->sorted, out->dur, nk * sizeof *out->dur);
        for (size_t c = 0; c < ncfg && rc == 0; c++)
            rc = ana_dist_of(out->sorted + out->at[c], out->at[c + 1] - out->at[c], false, &out->dist[c]);
    }
    free(next);
    if (rc != 0)
        gpufl__diff_configs_free(out);
    return rc;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* nearest rank, as ana_rank() */
static double rank(const double *v, size_t n, unsigned p) { return v[ana_rank(n, p)]; }

int gpufl__diff_paired(const uint64_t *base, const uint64_t *cand, size_t n, double *pct, double *noise_pct)
{
    double *r = malloc((n ? n : 1) * sizeof *r);
    if (!r)
        return GPUFL_ENOMEM;
    /* a launch of 0 ns (a clock's resolution) counts as 1 ns */
    for (size_t i = 0; i < n; i++)
        r[i] = (double)(cand[i] ? cand[i] : 1) / (double)(base[i] ? base[i] : 1);
    qsort(r, n, sizeof *r, cmp_double);
    double s = (rank(r, n, 95) - rank(r, n, 5)) / (2 * P95_SIGMAS);
    *pct = (rank(r, n, 50) - 1.0) * 100.0;
    *noise_pct = NOISE_SES * MEDIAN_SE * s / sqrt((double)n) * 100.0;
    free(r);
    return 0;
}
