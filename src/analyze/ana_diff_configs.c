/*
 * The launches of each launch configuration, and the change of one
 * configuration between two traces (ana_diff_configs.h): durations and
 * program points bucketed by configuration row with a counting sort
 * (stable, so each bucket stays in start order); medians by quickselect on
 * a scratch copy.
 */
#include "analyze/ana_diff_configs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/trace_access.h"
#include "gpufl/gpufl.h"

#define MAD_SIGMAS 1.4826 /* sigma / MAD of a normal distribution */
#define MEDIAN_SE 1.2533  /* standard error of a median, in sigma / sqrt(n) */
#define NOISE_SES 2.0     /* the noise is this many standard errors: about 95 % */

void gpufl__diff_configs_free(gpufl__diff_configs *c)
{
    free(c->at);
    free(c->launch);
    free(c->total);
    memset(c, 0, sizeof *c);
}

/* Durations and program points of t's launches into c's buckets (c->at
 * filled); next: ncfg scratch. A first pass, backwards, finds the next
 * launch on each launch's stream, so that the second writes each bucket
 * entry once, in order. */
static int fill_buckets(const ta *a, gpufl__diff_configs *c, size_t *next)
{
    size_t nst = ta_streams_n(a), nk = ta_k_n(a);
    uint32_t *after = malloc((nk ? nk : 1) * sizeof *after);
    uint32_t *last = malloc((nst ? nst : 1) * sizeof *last);
    if (!after || !last) {
        free(after);
        free(last);
        return GPUFL_ENOMEM;
    }
    for (size_t s = 0; s < nst; s++)
        last[s] = GPUFL__DIFF_NO_NEIGHBOUR;
    for (size_t i = nk; i-- > 0;) {
        uint32_t s = ta_k_stream_row(a, i);
        if (s >= nst) { /* no stream row: no neighbours known */
            after[i] = GPUFL__DIFF_NO_NEIGHBOUR;
            continue;
        }
        after[i] = last[s];
        last[s] = ta_k_config_id(a, i);
    }
    for (size_t s = 0; s < nst; s++)
        last[s] = GPUFL__DIFF_NO_NEIGHBOUR;
    memcpy(next, c->at, c->n * sizeof *next);
    for (size_t i = 0; i < nk; i++) {
        uint32_t cfg = ta_k_config_id(a, i), s = ta_k_stream_row(a, i);
        uint64_t dur = ta_k_dur(a, i);
        uint32_t before = GPUFL__DIFF_NO_NEIGHBOUR;
        if (s < nst) {
            before = last[s];
            last[s] = cfg;
        }
        c->launch[next[cfg]++] = (gpufl__diff_launch){dur, GPUFL__DIFF_POINT(before, after[i])};
        c->total[cfg] += dur;
    }
    free(after);
    free(last);
    return 0;
}

int gpufl__diff_configs_of(const gpufl_trace *t, gpufl__diff_configs *out)
{
    memset(out, 0, sizeof *out);
    ta a;
    gpufl__ta_open(&a, t);
    size_t ncfg = a.cfg->n, nk = ta_k_n(&a);
    if (ncfg == 0)
        return 0;
    out->n = ncfg;
    out->total = calloc(ncfg, sizeof *out->total);
    out->at = calloc(ncfg + 1, sizeof *out->at);
    out->launch = malloc((nk ? nk : 1) * sizeof *out->launch);
    size_t *next = calloc(ncfg, sizeof *next);
    int rc = out->total && out->at && out->launch && next ? 0 : GPUFL_ENOMEM;
    if (rc == 0) {
        for (size_t i = 0; i < nk; i++)
            out->at[ta_k_config_id(&a, i) + 1]++;
        for (size_t c = 0; c < ncfg; c++)
            out->at[c + 1] += out->at[c];
        rc = fill_buckets(&a, out, next);
    }
    free(next);
    if (rc != 0)
        gpufl__diff_configs_free(out);
    return rc;
}

void gpufl__diff_compare_free(gpufl__diff_compare *x)
{
    gpufl__diff_pairs_free(&x->pairs);
    free(x->buf);
    memset(x, 0, sizeof *x);
}

static void swap_u64(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

static uint64_t median3(uint64_t a, uint64_t b, uint64_t c)
{
    return a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
}

/*
 * The median (nearest rank, as ana_rank) of v[0..n), n > 0, into *m; v is
 * scratch. A configuration has many small groups of pairs, so this runs
 * once per group: quickselect in place, with no allocation, its pivots
 * the median of three and its partition three-way (runs of equal ratios
 * are common: the same work on the same clock). Should the rounds not
 * converge (2 log2 n + 8 of them), a radix sort of what is left keeps it
 * linear.
 */
static int median_of(uint64_t *v, size_t n, uint64_t *m)
{
    size_t k = ana_rank(n, 50), lo = 0, hi = n;
    unsigned rounds = 8;
    for (size_t x = n; x; x >>= 1)
        rounds += 2;
    while (hi - lo > 16) {
        if (rounds-- == 0) {
            int rc = gpufl__ana_sort_u64(v + lo, hi - lo, NULL);
            *m = v[k];
            return rc;
        }
        uint64_t p = median3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (v[i] < p)
                swap_u64(&v[lt++], &v[i++]);
            else if (v[i] > p)
                swap_u64(&v[i], &v[--gt]);
            else
                i++;
        }
        if (k < lt) {
            hi = lt;
        } else if (k >= gt) {
            lo = gt;
        } else {
            *m = p;
            return 0;
        }
    }
    for (size_t i = lo + 1; i < hi; i++)
        for (size_t j = i; j > lo && v[j - 1] > v[j]; j--)
            swap_u64(&v[j - 1], &v[j]);
    *m = v[k];
    return 0;
}

static uint64_t absdiff(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/* From the pairs in x->pairs (at least two): the weighted mean of the
 * groups' median ratios and its noise (ana_diff_configs.h). */
static int from_pairs(gpufl__diff_compare *x, gpufl__diff_config_change *out)
{
    const gpufl__diff_pairs *p = &x->pairs;
    const double one = (double)GPUFL__DIFF_RATIO_ONE;
    uint64_t wsum = 0;
    for (size_t g = 0; g < p->ngroups; g++)
        wsum += p->weight[g];
    /* buf[0..k): deviations from their group's median, of groups of >= 2 pairs */
    size_t k = 0;
    double sw = 0, swm = 0, sw2n = 0;
    for (size_t g = 0; g < p->ngroups; g++) {
        size_t n = p->at[g + 1] - p->at[g];
        const uint64_t *r = p->ratio + p->at[g];
        uint64_t m = r[0];
        if (n >= 2) {
            memcpy(x->buf + k, r, n * sizeof *r);
            int rc = median_of(x->buf + k, n, &m);
            if (rc != 0)
                return rc;
            for (size_t i = 0; i < n; i++)
                x->buf[k + i] = absdiff(r[i], m);
            k += n;
        }
        /* launches of 0 ns everywhere: weigh the groups by their pairs */
        double w = wsum ? (double)p->weight[g] : (double)n;
        sw += w;
        swm += w * ((double)m / one - 1.0);
        sw2n += w * w / (double)n;
    }
    if (k == 0) { /* every program point once: deviations from the median of all */
        uint64_t m = 0;
        memcpy(x->buf, p->ratio, p->n * sizeof *x->buf);
        int rc = median_of(x->buf, p->n, &m);
        if (rc != 0)
            return rc;
        for (size_t i = 0; i < p->n; i++)
            x->buf[i] = absdiff(p->ratio[i], m);
        k = p->n;
    }
    uint64_t mad = 0;
    int rc = median_of(x->buf, k, &mad);
    if (rc != 0)
        return rc;
    double sigma = MAD_SIGMAS * (double)mad / one;
    out->pct = swm / sw * 100.0;
    out->noise_pct = NOISE_SES * MEDIAN_SE * sigma * sqrt(sw2n) / sw * 100.0;
    out->pairs = p->n;
    return 0;
}

/* The median of configuration r's launches in c and their sigma, from
 * their MAD; x->buf is scratch. */
static int spread_of(gpufl__diff_compare *x, const gpufl__diff_configs *c, uint32_t r, uint64_t *p50, double *sigma)
{
    size_t n = c->at[r + 1] - c->at[r];
    uint64_t mad = 0;
    const gpufl__diff_launch *l = c->launch + c->at[r];
    for (size_t i = 0; i < n; i++)
        x->buf[i] = l[i].dur;
    int rc = median_of(x->buf, n, p50);
    for (size_t i = 0; rc == 0 && i < n; i++)
        x->buf[i] = absdiff(l[i].dur, *p50);
    if (rc == 0)
        rc = median_of(x->buf, n, &mad);
    *sigma = MAD_SIGMAS * (double)mad;
    return rc;
}

/* Without pairs: the change of the medians and its noise. */
static int from_medians(gpufl__diff_compare *x, const gpufl__diff_configs *b, uint32_t rb, const gpufl__diff_configs *c,
                        uint32_t rc, gpufl__diff_config_change *out)
{
    uint64_t mb = 0, mc = 0;
    double sb = 0, sc = 0;
    int err = spread_of(x, b, rb, &mb, &sb);
    if (err == 0)
        err = spread_of(x, c, rc, &mc, &sc);
    if (err != 0)
        return err;
    double nb = (double)(b->at[rb + 1] - b->at[rb]), nc = (double)(c->at[rc + 1] - c->at[rc]);
    double base = (double)(mb ? mb : 1);
    out->pct = ((double)mc - (double)mb) * 100.0 / base;
    out->noise_pct = NOISE_SES * MEDIAN_SE * sqrt(sb * sb / nb + sc * sc / nc) * 100.0 / base;
    out->pairs = 0;
    return 0;
}

/* Row r of c renumbered (see gpufl__diff_configs_renumber). */
static uint32_t renumber(uint32_t r, const uint32_t *c2b, size_t b_rows)
{
    if (r == GPUFL__DIFF_NO_NEIGHBOUR)
        return r;
    if (c2b[r] != UINT32_MAX)
        return c2b[r];
    uint64_t v = (uint64_t)b_rows + r;
    return v < GPUFL__DIFF_NO_NEIGHBOUR ? (uint32_t)v : GPUFL__DIFF_NO_NEIGHBOUR - 1;
}

void gpufl__diff_configs_renumber(gpufl__diff_configs *c, const uint32_t *c2b, size_t b_rows)
{
    size_t n = c->n ? c->at[c->n] : 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t pt = c->launch[i].point;
        c->launch[i].point =
            GPUFL__DIFF_POINT(renumber((uint32_t)(pt >> 32), c2b, b_rows), renumber((uint32_t)pt, c2b, b_rows));
    }
}

int gpufl__diff_config_change_of(gpufl__diff_compare *x, const gpufl__diff_configs *b, uint32_t rb,
                                 const gpufl__diff_configs *c, uint32_t rc, gpufl__diff_config_change *out)
{
    memset(out, 0, sizeof *out);
    size_t b0 = b->at[rb], nb = b->at[rb + 1] - b0, c0 = c->at[rc], nc = c->at[rc + 1] - c0;
    if (gpufl__ana_grow(&x->buf, &x->cap, nb > nc ? nb : nc, sizeof *x->buf) != 0)
        return GPUFL_ENOMEM;
    int err = gpufl__diff_pairs_match(&x->pairs, b->launch + b0, nb, c->launch + c0, nc);
    if (err != 0)
        return err;
    return x->pairs.n >= 2 ? from_pairs(x, out) : from_medians(x, b, rb, c, rc, out);
}
