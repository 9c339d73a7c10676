/*
 * Percentiles by counting: the nearest-rank p50 and p95 of a distribution
 * (gpufl__ana_dist) without sorting its values. A session of 10 M events
 * has millions of kernel durations and launch latencies, and a sort of
 * them costs several passes of scattered writes each; counting finds the
 * same two values in a few linear passes: a histogram of the values over
 * their range names the bucket that holds each rank, and only the values
 * of that bucket are kept and looked at further.
 *
 * Two forms: gpufl__ana_dist_select for values already in an array, and ana_scan
 * for values that are cheaper to compute twice than to store (one per
 * kernel, from two columns): the caller streams them through three passes
 * and no array of them is ever made.
 *
 * Threads: any; no shared state.
 */
#ifndef GPUFL_ANALYZE_ANA_SELECT_H
#define GPUFL_ANALYZE_ANA_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"

/* The distribution of v[0..n) (read as int64_t when is_signed), the same
 * as gpufl__ana_dist_of gives: min, max and total in one pass, then the two
 * percentiles by counting. v is scratch: its contents are unspecified
 * afterwards. Returns 0 or GPUFL_ENOMEM (d zeroed). */
int gpufl__ana_dist_select(uint64_t *v, size_t n, bool is_signed, gpufl__ana_dist *d)
    __attribute__((warn_unused_result));

/*
 * A distribution of streamed values, in three passes over the same values
 * (same count, any order in each):
 *
 *   ana_scan s;  gpufl__ana_scan_open(&s, is_signed);
 *   for each x: ana_scan_add(&s, x);       count, total, range
 *   gpufl__ana_scan_count_begin(&s);              for each x: ana_scan_count(&s, x);
 *   gpufl__ana_scan_keep_begin(&s);               for each x: ana_scan_keep(&s, x);
 *   gpufl__ana_scan_finish(&s, &dist);            (frees; gpufl__ana_scan_close after a failure)
 *
 * Memory: a 64 KB histogram and the values of the one or two buckets that
 * hold the ranks (a small part of them, unless nearly all values sit in a
 * sliver of their range).
 */
#define ANA_SCAN_BITS 14 /* 16384 buckets: three scans' histograms stay in L2 */

typedef struct ana_scan {
    uint64_t flip;      /* 2^63 for signed values: int64 order as uint64 order */
    uint64_t n, lo, hi; /* count and range, in uint64 order */
    uint64_t total;     /* of the values as given; read as int64_t (two's complement) */
    unsigned shift;     /* bucket of x: ((x ^ flip) - lo) >> shift */
    uint32_t *hist;
    size_t rank[2];     /* p50, p95 */
    uint64_t bucket[2]; /* the buckets that hold them */
    size_t below[2];    /* values in buckets before each */
    uint64_t *kept[2];  /* the values of bucket[i], in uint64 order (kept[1] unused when
                            the buckets agree: bucket[1] is then UINT64_MAX) */
    size_t nkept[2];
} ana_scan;

void gpufl__ana_scan_open(ana_scan *s, bool is_signed);

static inline void ana_scan_add(ana_scan *s, uint64_t x)
{
    s->total += x;
    x ^= s->flip;
    s->lo = x < s->lo ? x : s->lo;
    s->hi = x > s->hi ? x : s->hi;
    s->n++;
}

/* Returns 0 or GPUFL_ENOMEM. */
int gpufl__ana_scan_count_begin(ana_scan *s) __attribute__((warn_unused_result));

static inline void ana_scan_count(ana_scan *s, uint64_t x)
{
    if (s->hist)
        s->hist[((x ^ s->flip) - s->lo) >> s->shift]++;
}

/* Returns 0, GPUFL_ENOMEM, or GPUFL_EINVAL when the count pass saw fewer
 * values than the first. */
int gpufl__ana_scan_keep_begin(ana_scan *s) __attribute__((warn_unused_result));

static inline void ana_scan_keep(ana_scan *s, uint64_t x)
{
    if (!s->hist)
        return;
    uint64_t y = x ^ s->flip, b = (y - s->lo) >> s->shift;
    int i = b == s->bucket[0] ? 0 : b == s->bucket[1] ? 1 : -1;
    if (i >= 0 && s->nkept[i] < s->hist[b]) /* a pass with more values must not write past */
        s->kept[i][s->nkept[i]++] = y;
}

/* Fills d and frees s's memory. Returns 0, GPUFL_ENOMEM, or GPUFL_EINVAL
 * when the passes did not see the same values (d zeroed). */
int gpufl__ana_scan_finish(ana_scan *s, gpufl__ana_dist *d) __attribute__((warn_unused_result));

/* Frees s's memory (after a failure, or to give up). */
void gpufl__ana_scan_close(ana_scan *s);

#endif /* GPUFL_ANALYZE_ANA_SELECT_H */
