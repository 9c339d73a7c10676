/*
 * Percentiles by counting (ana_select.h).
 */
#include "analyze/ana_select.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "gpufl/gpufl.h"

#define SELECT_BITS 16
#define SELECT_BUCKETS (1u << SELECT_BITS) /* 256 KB of counters: they stay in L2 */
#define SELECT_SORT 65536                  /* at most this many candidates: sorting them is as cheap */

static unsigned bit_length(uint64_t x) { return x ? 64 - (unsigned)__builtin_clzll(x) : 0; }

/* Moves the values of v[0..n) whose bucket ((x - lo) >> shift) is b0 or b1
 * to the front, in their order; returns how many. */
static size_t keep_buckets(uint64_t *v, size_t n, uint64_t lo, unsigned shift, uint64_t b0, uint64_t b1)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = (v[i] - lo) >> shift;
        if (b == b0 || b == b1)
            v[m++] = v[i];
    }
    return m;
}

/* Puts the values below `split` of v[0..n) first; returns how many. */
static size_t partition_below(uint64_t *v, size_t n, uint64_t split)
{
    size_t i = 0, j = n;
    while (i < j) {
        if (v[i] < split) {
            i++;
        } else {
            uint64_t x = v[--j];
            v[j] = v[i];
            v[i] = x;
        }
    }
    return i;
}

/*
 * The k0-th and k1-th smallest (0-based, k0 <= k1 < n) of v[0..n), whose
 * values all lie in [lo, hi], into *x0 and *x1; reorders v. Each round
 * counts the values into SELECT_BUCKETS buckets of equal width over
 * [lo, hi], keeps the bucket holding the rank and narrows [lo, hi] to it:
 * at most four rounds for 64-bit values, each on fewer values. When the
 * two ranks fall in different buckets, each goes on alone.
 */
static int select_ranks(uint64_t *v, size_t n, size_t k0, size_t k1, uint64_t lo, uint64_t hi, uint32_t *hist,
                        uint64_t *x0, uint64_t *x1)
{
    for (;;) {
        if (lo == hi) {
            *x0 = *x1 = lo;
            return 0;
        }
        if (n <= SELECT_SORT) {
            int rc = gpufl__ana_sort_u64(v, n, NULL);
            if (rc == 0) {
                *x0 = v[k0];
                *x1 = v[k1];
            }
            return rc;
        }
        unsigned len = bit_length(hi - lo), shift = len > SELECT_BITS ? len - SELECT_BITS : 0;
        memset(hist, 0, SELECT_BUCKETS * sizeof *hist);
        for (size_t i = 0; i < n; i++)
            hist[(v[i] - lo) >> shift]++;
        uint64_t b0 = 0, b1 = 0;
        size_t below0 = 0, below1 = 0, sum = 0;
        int found = 0;
        for (uint64_t b = 0; found < 2; b++) {
            if (found == 0 && k0 < sum + hist[b]) {
                b0 = b;
                below0 = sum;
                found = 1;
            }
            if (found == 1 && k1 < sum + hist[b]) {
                b1 = b;
                below1 = sum;
                found = 2;
            }
            sum += hist[b];
        }
        size_t m = keep_buckets(v, n, lo, shift, b0, b1);
        uint64_t width = shift ? (1ull << shift) - 1 : 0;
        uint64_t lo0 = lo + (b0 << shift), hi0 = hi - lo0 > width ? lo0 + width : hi;
        if (b0 == b1) {
            n = m;
            k0 -= below0;
            k1 -= below1;
            lo = lo0;
            hi = hi0;
            continue;
        }
        uint64_t lo1 = lo + (b1 << shift), hi1 = hi - lo1 > width ? lo1 + width : hi;
        size_t m0 = partition_below(v, m, lo1); /* b0's values, then b1's */
        uint64_t unused;
        int rc = select_ranks(v, m0, k0 - below0, k0 - below0, lo0, hi0, hist, x0, &unused);
        if (rc == 0)
            rc = select_ranks(v + m0, m - m0, k1 - below1, k1 - below1, lo1, hi1, hist, &unused, x1);
        return rc;
    }
}

int gpufl__ana_dist_select(uint64_t *v, size_t n, bool is_signed, gpufl__ana_dist *d)
{
    memset(d, 0, sizeof *d);
    if (!n)
        return 0;
    uint64_t flip = is_signed ? 1ull << 63 : 0; /* int64 order as uint64 order */
    uint64_t total = 0;                         /* wraps as two's complement, where an int64_t sum would be undefined */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        total += v[i];
        uint64_t x = v[i] ^ flip;
        v[i] = x;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    uint32_t *hist = n > SELECT_SORT ? malloc(SELECT_BUCKETS * sizeof *hist) : NULL;
    if (n > SELECT_SORT && !hist)
        return GPUFL_ENOMEM;
    uint64_t p50, p95;
    int rc = select_ranks(v, n, ana_rank(n, 50), ana_rank(n, 95), lo, hi, hist, &p50, &p95);
    free(hist);
    if (rc != 0)
        return rc;
    d->n = n;
    d->total = (int64_t)total;
    d->min = (int64_t)(lo ^ flip);
    d->max = (int64_t)(hi ^ flip);
    d->p50 = (int64_t)(p50 ^ flip);
    d->p95 = (int64_t)(p95 ^ flip);
    d->mean = (double)d->total / (double)n;
    return 0;
}

/* ---- streamed values ----------------------------------------------------------- */

void gpufl__ana_scan_open(ana_scan *s, bool is_signed)
{
    memset(s, 0, sizeof *s);
    s->flip = is_signed ? 1ull << 63 : 0;
    s->lo = UINT64_MAX;
}

int gpufl__ana_scan_count_begin(ana_scan *s)
{
    if (s->n == 0 || s->lo == s->hi)
        return 0; /* nothing to count: no values, or all equal */
    unsigned len = bit_length(s->hi - s->lo);
    s->shift = len > ANA_SCAN_BITS ? len - ANA_SCAN_BITS : 0;
    s->rank[0] = ana_rank(s->n, 50);
    s->rank[1] = ana_rank(s->n, 95);
    s->hist = calloc(1u << ANA_SCAN_BITS, sizeof *s->hist);
    return s->hist ? 0 : GPUFL_ENOMEM;
}

int gpufl__ana_scan_keep_begin(ana_scan *s)
{
    if (!s->hist)
        return 0;
    size_t sum = 0;
    int found = 0;
    for (uint64_t b = 0; found < 2 && b < (1u << ANA_SCAN_BITS); b++) {
        while (found < 2 && s->rank[found] < sum + s->hist[b]) {
            s->bucket[found] = b;
            s->below[found++] = sum;
        }
        sum += s->hist[b];
    }
    if (found < 2)
        return GPUFL_EINVAL; /* the count pass saw fewer values than the first */
    bool one = s->bucket[0] == s->bucket[1];
    for (int i = 0; i < (one ? 1 : 2); i++)
        if (!(s->kept[i] = malloc((s->hist[s->bucket[i]] ? s->hist[s->bucket[i]] : 1) * sizeof *s->kept[i])))
            return GPUFL_ENOMEM;
    if (one)
        s->bucket[1] = UINT64_MAX; /* no value's bucket: all go to kept[0] */
    return 0;
}

/* The k0-th and k1-th smallest of v[0..n) in [lo, hi]. */
static int select_kept(uint64_t *v, size_t n, size_t k0, size_t k1, uint64_t lo, uint64_t hi, uint64_t *x0,
                       uint64_t *x1)
{
    uint32_t *hist = n > SELECT_SORT ? malloc(SELECT_BUCKETS * sizeof *hist) : NULL;
    if (n > SELECT_SORT && !hist)
        return GPUFL_ENOMEM;
    int rc = select_ranks(v, n, k0, k1, lo, hi, hist, x0, x1);
    free(hist);
    return rc;
}

int gpufl__ana_scan_finish(ana_scan *s, gpufl__ana_dist *d)
{
    memset(d, 0, sizeof *d);
    uint64_t x[2] = {s->lo, s->lo}; /* all equal unless counted */
    int rc = 0;
    if (s->hist) {
        uint64_t width = s->shift ? (1ull << s->shift) - 1 : 0, lo[2], hi[2];
        bool one = s->bucket[1] == UINT64_MAX;
        for (int i = 0; i < 2; i++) {
            uint64_t b = s->bucket[one ? 0 : i];
            lo[i] = s->lo + (b << s->shift);
            hi[i] = s->hi - lo[i] > width ? lo[i] + width : s->hi;
            if (i < (one ? 1 : 2) && s->nkept[i] != s->hist[b])
                rc = GPUFL_EINVAL; /* the passes did not see the same values */
        }
        uint64_t unused;
        if (rc == 0 && one)
            rc = select_kept(s->kept[0], s->nkept[0], s->rank[0] - s->below[0], s->rank[1] - s->below[0], lo[0], hi[0],
                             &x[0], &x[1]);
        else if (rc == 0)
            for (int i = 0; i < 2 && rc == 0; i++)
                rc = select_kept(s->kept[i], s->nkept[i], s->rank[i] - s->below[i], s->rank[i] - s->below[i], lo[i],
                                 hi[i], &x[i], &unused);
    }
    if (rc == 0 && s->n) {
        d->n = s->n;
        d->total = (int64_t)s->total;
        d->min = (int64_t)(s->lo ^ s->flip);
        d->max = (int64_t)(s->hi ^ s->flip);
        d->p50 = (int64_t)(x[0] ^ s->flip);
        d->p95 = (int64_t)(x[1] ^ s->flip);
        d->mean = (double)d->total / (double)s->n;
    }
    gpufl__ana_scan_close(s);
    return rc;
}

void gpufl__ana_scan_close(ana_scan *s)
{
    free(s->hist);
    free(s->kept[0]);
    free(s->kept[1]);
    s->hist = NULL;
    s->kept[0] = s->kept[1] = NULL;
}
