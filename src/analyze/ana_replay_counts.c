/*
 * Which ops a lane has more or fewer of in B than in A
 * (ana_replay_internal.h): one histogram pass over each side's keys, for
 * the lanes that differ only. It says "3 more launches of X" whatever the
 * alignment made of the order, which is what a user reads first when a
 * loop ran a different number of times.
 */
#include <stdlib.h>

#include "analyze/ana_replay_internal.h"
#include "gpufl/gpufl.h"

static uint64_t gap(const gpufl__rp_count *c) { return c->n_a > c->n_b ? c->n_a - c->n_b : c->n_b - c->n_a; }

static int by_gap(const void *x, const void *y)
{
    const gpufl__rp_count *a = x, *b = y;
    uint64_t ga = gap(a), gb = gap(b);
    if (ga != gb)
        return ga < gb ? 1 : -1;
    return (a->key > b->key) - (a->key < b->key);
}

int gpufl__rp_count_keys(const gpufl__rp_seq *a, const gpufl__rp_seq *b, size_t nkeys, size_t keep,
                         gpufl__rp_lane *lane)
{
    uint64_t *na = calloc(nkeys + 1, sizeof *na), *nb = calloc(nkeys + 1, sizeof *nb);
    gpufl__rp_count *v = NULL;
    size_t n = 0, cap = 0;
    int rc = GPUFL_ENOMEM;
    if (!na || !nb)
        goto done;
    for (size_t i = 0; a && i < a->n; i++)
        na[a->key[i]]++;
    for (size_t i = 0; b && i < b->n; i++)
        nb[b->key[i]]++;
    for (size_t k = 0; k < nkeys; k++) {
        if (na[k] == nb[k])
            continue;
        if (gpufl__ana_grow(&v, &cap, n + 1, sizeof *v) != 0)
            goto done;
        v[n++] = (gpufl__rp_count){.key = (uint32_t)k, .n_a = na[k], .n_b = nb[k]};
    }
    qsort(v, n, sizeof *v, by_gap);
    lane->counts_total = n;
    lane->ncounts = n < keep ? n : keep;
    lane->counts = v;
    v = NULL;
    rc = 0;
done:
    free(v);
    free(na);
    free(nb);
    return rc;
}
