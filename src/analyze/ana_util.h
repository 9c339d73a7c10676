/*
 * Helpers the analyses share: sorting 64-bit values (LSD radix sort: O(n),
 * which matters at 10 M rows where a
 * comparison sort costs a second), nearest-rank percentiles and
 * distributions, a growing array, and the argument check they open with.
 *
 * Threads: any; no shared state.
 */
#ifndef GPUFL_ANALYZE_ANA_UTIL_H
#define GPUFL_ANALYZE_ANA_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "analyze/analysis.h"

/* The argument check every gpufl__analyze_X() opens with: clears the
 * size bytes of the result at out first, so that the caller may free it
 * whatever happens next. False when out or t is NULL (the analysis then
 * returns GPUFL_EINVAL, out cleared when it is not NULL). */
static inline bool ana_args_ok(const gpufl_trace *t, void *out, size_t size)
{
    if (!out)
        return false;
    memset(out, 0, size);
    return t != NULL;
}

/* Sorts v[0..n) ascending. tmp: n values of scratch, or NULL to have one
 * allocated. Returns 0, or GPUFL_ENOMEM with v unchanged. */
int gpufl__ana_sort_u64(uint64_t *v, size_t n, uint64_t *tmp) __attribute__((warn_unused_result));

/* The 0-based index of the nearest-rank p-th percentile of n sorted values
 * (n > 0, p in 0..100): ceil(p * n / 100) - 1, at least 0. */
static inline size_t ana_rank(size_t n, unsigned p)
{
    size_t r = (size_t)(((unsigned __int128)n * p + 99) / 100);
    return r ? r - 1 : 0;
}

/* A distribution of v[0..n), sorted ascending, read as int64_t (values
 * sorted as signed numbers, or unsigned ones below 2^63). */
void gpufl__ana_dist_sorted(const uint64_t *v, size_t n, gpufl__ana_dist *d);

/* Sorts v[0..n) (as int64_t values when is_signed) and fills d. Returns 0
 * or GPUFL_ENOMEM (d zeroed). */
int gpufl__ana_dist_of(uint64_t *v, size_t n, bool is_signed, gpufl__ana_dist *d) __attribute__((warn_unused_result));

/* How many of v[0..n) (ascending) are <= t, searched outwards from hint, a
 * previous answer: a step or two when successive queries come in nearly
 * increasing order, O(log distance) otherwise; any hint is correct. */
size_t gpufl__ana_count_le(const uint64_t *v, size_t n, size_t hint, uint64_t t);

/* Maps int64 order onto uint64 order and back. */
static inline uint64_t ana_flip(uint64_t x) { return x ^ (1ull << 63); }

/* A growing array of fixed-size items: gpufl__ana_grow(&arr, &cap, need, size)
 * makes room for `need` items. 0 or GPUFL_ENOMEM (array unchanged). */
int gpufl__ana_grow(void *arrp, size_t *cap, size_t need, size_t size) __attribute__((warn_unused_result));

/* strcmp of two string ids' text (a, b: ids of t). */
int gpufl__ana_strcmp(const gpufl_trace *t, uint32_t a, uint32_t b);

/*
 * A hash map from a pair of 64-bit keys to a 32-bit value (open addressing,
 * linear probing, at most half full). The analyses key it by what they
 * group on (a scope id, a node and a name, a device and an address); it
 * grows per distinct key, never per lookup.
 */
typedef struct ana_slot {
    uint64_t k1, k2;
    uint32_t v;
    uint32_t used;
} ana_slot;

typedef struct ana_map {
    ana_slot *slots;
    size_t cap; /* a power of two, or 0 before the first put */
    size_t n;   /* keys held */
} ana_map;

/* The value of (k1, k2) into *v: true, or false when absent. */
bool gpufl__ana_map_get(const ana_map *m, uint64_t k1, uint64_t k2, uint32_t *v);

/* Finds (k1, k2), or adds it with the value v_new. *v: its value (v_new
 * when added). Returns 1 found, 0 added, or GPUFL_ENOMEM (map unchanged). */
int gpufl__ana_map_put(ana_map *m, uint64_t k1, uint64_t k2, uint32_t v_new, uint32_t *v)
    __attribute__((warn_unused_result));

/* Sets the value of a key that is present (gpufl__ana_map_get found it). */
void gpufl__ana_map_set(ana_map *m, uint64_t k1, uint64_t k2, uint32_t v);

/* Removes (k1, k2) if present. */
void gpufl__ana_map_del(ana_map *m, uint64_t k1, uint64_t k2);

void gpufl__ana_map_free(ana_map *m);

#endif /* GPUFL_ANALYZE_ANA_UTIL_H */
