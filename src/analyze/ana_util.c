/*
 * Sorting, percentiles and growing arrays for the analyses (ana_util.h).
 *
 * The radix sort takes 11-bit digits (six passes for 64 bits, histograms of
 * 2048 counters that stay in L1) and skip a pass when every key has the same
 * digit there, which makes durations (rarely over 2^33 ns) three passes.
 */
#include "analyze/ana_util.h"

#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"

#define DIGIT_BITS 11
#define DIGITS 6 /* ceil(64 / 11) */
#define BUCKETS (1u << DIGIT_BITS)
#define SMALL 64 /* below this, insertion sort */

static inline unsigned digit(uint64_t v, int d) { return (unsigned)(v >> (d * DIGIT_BITS)) & (BUCKETS - 1); }

/* Turns a digit's histogram into where each bucket starts in the output
 * of a pass (an exclusive prefix sum). */
static void counts_to_starts(size_t h[BUCKETS])
{
    size_t sum = 0;
    for (unsigned b = 0; b < BUCKETS; b++) {
        size_t c = h[b];
        h[b] = sum;
        sum += c;
    }
}

static void insertion_u64(uint64_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

int gpufl__ana_sort_u64(uint64_t *v, size_t n, uint64_t *tmp)
{
    if (n < SMALL) {
        insertion_u64(v, n);
        return 0;
    }
    uint64_t *own = NULL;
    if (!tmp) {
        own = tmp = malloc(n * sizeof *tmp);
        if (!tmp)
            return GPUFL_ENOMEM;
    }
    size_t(*hist)[BUCKETS] = calloc(DIGITS, sizeof *hist);
    if (!hist) {
        free(own);
        return GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < DIGITS; d++)
            hist[d][digit(v[i], d)]++;
    uint64_t *src = v, *dst = tmp;
    for (int d = 0; d < DIGITS; d++) {
        if (hist[d][digit(v[0], d)] == n)
            continue; /* every value has this digit */
        counts_to_starts(hist[d]);
        for (size_t i = 0; i < n; i++)
            dst[hist[d][digit(src[i], d)]++] = src[i];
        uint64_t *s = src;
        src = dst;
        dst = s;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
    free(hist);
    free(own);
    return 0;
}

void gpufl__ana_dist_sorted(const uint64_t *v, size_t n, gpufl__ana_dist *d)
{
    memset(d, 0, sizeof *d);
    if (!n)
        return;
    uint64_t total = 0; /* wraps as two's complement, where an int64_t sum would be undefined */
    for (size_t i = 0; i < n; i++)
        total += v[i];
    d->n = n;
    d->total = (int64_t)total;
    d->min = (int64_t)v[0];
    d->max = (int64_t)v[n - 1];
    d->p50 = (int64_t)v[ana_rank(n, 50)];
    d->p95 = (int64_t)v[ana_rank(n, 95)];
    d->mean = (double)d->total / (double)n;
}

int gpufl__ana_dist_of(uint64_t *v, size_t n, bool is_signed, gpufl__ana_dist *d)
{
    memset(d, 0, sizeof *d);
    if (is_signed)
        for (size_t i = 0; i < n; i++)
            v[i] = ana_flip(v[i]);
    int rc = gpufl__ana_sort_u64(v, n, NULL);
    if (is_signed)
        for (size_t i = 0; i < n; i++)
            v[i] = ana_flip(v[i]);
    if (rc != 0)
        return rc;
    gpufl__ana_dist_sorted(v, n, d);
    return 0;
}

size_t gpufl__ana_count_le(const uint64_t *v, size_t n, size_t hint, uint64_t t)
{
    size_t lo, hi; /* the answer is in [lo, hi] */
    if (hint > n)
        hint = n;
    if (hint > 0 && v[hint - 1] > t) { /* fewer than hint: gallop down */
        hi = hint - 1;
        for (size_t step = 1;; step *= 2) {
            if (hi < step) {
                lo = 0;
                break;
            }
            if (v[hi - step] <= t) {
                lo = hi - step + 1;
                break;
            }
            hi -= step;
        }
    } else { /* at least hint: gallop up */
        lo = hint;
        for (size_t step = 1;; step *= 2) {
            if (n - lo < step) {
                hi = n;
                break;
            }
            if (v[lo + step - 1] > t) {
                hi = lo + step - 1;
                break;
            }
            lo += step;
        }
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int gpufl__ana_grow(void *arrp, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void **arr = arrp;
    void *p = realloc(*arr, c * size);
    if (!p)
        return GPUFL_ENOMEM;
    *arr = p;
    *cap = c;
    return 0;
}

int gpufl__ana_strcmp(const gpufl_trace *t, uint32_t a, uint32_t b)
{
    if (a == b)
        return 0;
    return strcmp(gpufl_trace_string(t, a), gpufl_trace_string(t, b));
}

/* ---- hash map --------------------------------------------------------------- */

static inline size_t slot_of(uint64_t k1, uint64_t k2, size_t cap)
{
    uint64_t h = k1 ^ (k2 * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 31;
    return (size_t)h & (cap - 1);
}

static ana_slot *find(const ana_map *m, uint64_t k1, uint64_t k2)
{
    for (size_t i = slot_of(k1, k2, m->cap);; i = (i + 1) & (m->cap - 1)) {
        ana_slot *s = &m->slots[i];
        if (!s->used || (s->k1 == k1 && s->k2 == k2))
            return s;
    }
}

bool gpufl__ana_map_get(const ana_map *m, uint64_t k1, uint64_t k2, uint32_t *v)
{
    if (!m->cap)
        return false;
    const ana_slot *s = find(m, k1, k2);
    if (!s->used)
        return false;
    *v = s->v;
    return true;
}

static int rehash(ana_map *m, size_t cap)
{
    ana_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return GPUFL_ENOMEM;
    ana_map bigger = {slots, cap, m->n};
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].used)
            *find(&bigger, m->slots[i].k1, m->slots[i].k2) = m->slots[i];
    free(m->slots);
    *m = bigger;
    return 0;
}

int gpufl__ana_map_put(ana_map *m, uint64_t k1, uint64_t k2, uint32_t v_new, uint32_t *v)
{
    if (2 * (m->n + 1) > m->cap) {
        int rc = rehash(m, m->cap ? 2 * m->cap : 64);
        if (rc != 0)
            return rc;
    }
    ana_slot *s = find(m, k1, k2);
    if (s->used) {
        *v = s->v;
        return 1;
    }
    *s = (ana_slot){k1, k2, v_new, 1};
    m->n++;
    *v = v_new;
    return 0;
}

void gpufl__ana_map_set(ana_map *m, uint64_t k1, uint64_t k2, uint32_t v)
{
    if (!m->cap)
        return;
    ana_slot *s = find(m, k1, k2);
    if (s->used)
        s->v = v;
}

/* Backward-shift deletion: the keys after the hole that probed past it move
 * back, so lookups never need tombstones. */
void gpufl__ana_map_del(ana_map *m, uint64_t k1, uint64_t k2)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1;
    ana_slot *s = find(m, k1, k2);
    if (!s->used)
        return;
    size_t hole = (size_t)(s - m->slots);
    for (size_t j = (hole + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
        size_t home = slot_of(m->slots[j].k1, m->slots[j].k2, m->cap);
        /* j may move to the hole when its home is not in (hole, j] cyclically */
        bool stays = hole < j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].used = 0;
    m->n--;
}

void gpufl__ana_map_free(ana_map *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}
