/*
 * Building and reading a trace's memory series (ana_mem_series.h).
 *
 * One pass per table, each in its time order: the device samples give the
 * NVML series, the allocator table the framework's, and the memory table
 * is replayed twice over in one walk (driver allocations and framework
 * blocks, each with its own map of live addresses, as in ana_memory.c:
 * a block often starts at its segment's address). Devices are few (a
 * linear search by index, the last one cached).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "analyze/ana_mem_series.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "core/event.h"

static int dev_index(ana_mem_set *m, uint32_t device, uint32_t *hint, ana_mem_dev **out)
{
    if (*hint < m->n && m->devs[*hint].device == device) {
        *out = &m->devs[*hint];
        return 0;
    }
    for (uint32_t i = 0; i < m->n; i++)
        if (m->devs[i].device == device) {
            *hint = i;
            *out = &m->devs[i];
            return 0;
        }
    ana_mem_dev *d = realloc(m->devs, (m->n + 1) * sizeof *d);
    if (!d)
        return GPUFL_ENOMEM;
    m->devs = d;
    memset(&d[m->n], 0, sizeof *d);
    d[m->n].device = device;
    *hint = m->n++;
    *out = &m->devs[*hint];
    return 0;
}

static int push(ana_series *s, uint64_t ts, uint64_t v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        uint64_t *t = realloc(s->ts, cap * sizeof *t);
        if (!t)
            return GPUFL_ENOMEM;
        s->ts = t;
        uint64_t *w = realloc(s->v, cap * sizeof *w);
        if (!w)
            return GPUFL_ENOMEM;
        s->v = w;
        s->cap = cap;
    }
    s->ts[s->n] = ts;
    s->v[s->n] = v;
    s->n++;
    return 0;
}

static void series_free(ana_series *s)
{
    free(s->ts);
    free(s->v);
    free(s->max_tree);
    memset(s, 0, sizeof *s);
}

static int pair_cmp(const void *x, const void *y, void *ctx)
{
    const ana_series *s = ctx;
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    if (s->ts[i] != s->ts[j])
        return s->ts[i] < s->ts[j] ? -1 : 1;
    return (i > j) - (i < j);
}

/* Samples of damaged input may be out of order: a series must not be. */
static int ensure_sorted(ana_series *s)
{
    size_t i = 1;
    while (i < s->n && s->ts[i - 1] <= s->ts[i])
        i++;
    if (i >= s->n)
        return 0;
    size_t *idx = malloc(s->n * sizeof *idx);
    uint64_t *ts = malloc(s->n * sizeof *ts), *v = malloc(s->n * sizeof *v);
    if (!idx || !ts || !v) {
        free(idx);
        free(ts);
        free(v);
        return GPUFL_ENOMEM;
    }
    for (i = 0; i < s->n; i++)
        idx[i] = i;
    qsort_r(idx, s->n, sizeof *idx, pair_cmp, s);
    for (i = 0; i < s->n; i++) {
        ts[i] = s->ts[idx[i]];
        v[i] = s->v[idx[i]];
    }
    free(idx);
    free(s->ts);
    free(s->v);
    s->ts = ts;
    s->v = v;
    s->cap = s->n;
    return 0;
}

static int from_samples(ana_mem_set *m)
{
    const gpufl__rows *a = m->a;
    uint32_t hint = 0;
    for (size_t i = 0; i < gpufl__d_n(a); i++) {
        uint32_t valid = gpufl__d_valid(a, i);
        if (!(valid & (GPUFL__DS_MEMORY | GPUFL__DS_PROC_MEM)))
            continue;
        ana_mem_dev *d;
        int rc = dev_index(m, gpufl__d_device(a, i), &hint, &d);
        uint64_t ts = gpufl__d_ts(a, i);
        if (rc == 0 && (valid & GPUFL__DS_MEMORY)) {
            rc = push(&d->s[GPUFL__ANA_MEM_DEVICE], ts, gpufl__d_mem_used(a, i));
            if (!d->total_bytes)
                d->total_bytes = gpufl__d_mem_total(a, i);
        }
        if (rc == 0 && (valid & GPUFL__DS_PROC_MEM))
            rc = push(&d->s[GPUFL__ANA_MEM_PROCESS], ts, gpufl__d_proc_mem(a, i));
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int from_allocator(ana_mem_set *m)
{
    const gpufl_trace_allocator *al = m->a->allocator;
    uint32_t hint = 0;
    for (size_t i = 0; i < al->n; i++) {
        ana_mem_dev *d;
        int rc = dev_index(m, al->device[i], &hint, &d);
        if (rc != 0)
            return rc;
        uint64_t ts = al->ts_ns[i];
        d->framework_source = GPUFL__ANA_FW_ALLOCATOR;
        if (!d->framework)
            d->framework = al->framework[i];
        if ((rc = push(&d->s[GPUFL__ANA_MEM_RESERVED], ts, al->reserved[i])) != 0 ||
            (rc = push(&d->s[GPUFL__ANA_MEM_ACTIVE], ts, al->active[i])) != 0 ||
            (rc = push(&d->s[GPUFL__ANA_MEM_ALLOCATED], ts, al->allocated[i])) != 0 ||
            (rc = push(&d->s[GPUFL__ANA_MEM_INACTIVE_SPLIT], ts, al->inactive_split[i])) != 0)
            return rc;
        /* 0 is "unknown" for the largest free block: absent, not a point */
        if (al->largest_free[i] && (rc = push(&d->s[GPUFL__ANA_MEM_LARGEST_FREE], ts, al->largest_free[i])) != 0)
            return rc;
    }
    return 0;
}

/* Live bytes of one replay, per device (the device's last point). */
static uint64_t last_value(const ana_series *s) { return s->n ? s->v[s->n - 1] : 0; }

static int replay_row(ana_mem_set *m, ana_map *live, ana_mem_dev *d, ana_series *s, size_t i)
{
    const gpufl__rows *a = m->a;
    uint64_t addr = gpufl__m_address(a, i), now = last_value(s);
    uint32_t dev = d->device, j;
    if (!s->n && push(s, a->start_ns, 0) != 0)
        return GPUFL_ENOMEM;
    if (gpufl__m_is_free(a, i)) {
        if (!gpufl__ana_map_get(live, dev, addr, &j))
            return 0; /* allocated before recording: its bytes were never counted */
        gpufl__ana_map_del(live, dev, addr);
        now -= gpufl__m_bytes(a, j);
    } else {
        int put = gpufl__ana_map_put(live, dev, addr, (uint32_t)i, &j);
        if (put < 0)
            return put;
        if (put == 1) { /* the address was live: the old one is gone */
            now -= gpufl__m_bytes(a, j);
            gpufl__ana_map_set(live, dev, addr, (uint32_t)i);
        }
        now += gpufl__m_bytes(a, i);
    }
    return push(s, gpufl__m_ts(a, i), now);
}

static int from_memory(ana_mem_set *m)
{
    const gpufl__rows *a = m->a;
    ana_map driver = {0}, blocks = {0};
    uint32_t hint = 0;
    int rc = 0;
    for (size_t i = 0; i < gpufl__m_n(a) && rc == 0; i++) {
        if (gpufl__m_failed(a, i))
            continue;
        bool fw = gpufl__m_framework(a, i);
        uint8_t kind = gpufl__m_kind(a, i);
        if (!fw && (kind == GFL_MEM_PAGEABLE || kind == GFL_MEM_PINNED))
            continue; /* host memory: no layer of the device's */
        ana_mem_dev *d;
        if ((rc = dev_index(m, gpufl__m_device(a, i), &hint, &d)) != 0)
            break;
        if (fw) {
            d->block_rows++;
            rc = replay_row(m, &blocks, d, &d->blocks, i);
        } else {
            d->driver_rows++;
            d->driver_frees += gpufl__m_is_free(a, i);
            rc = replay_row(m, &driver, d, &d->s[GPUFL__ANA_MEM_DRIVER], i);
        }
    }
    gpufl__ana_map_free(&driver);
    gpufl__ana_map_free(&blocks);
    return rc;
}

static int copy_series(ana_series *dst, const ana_series *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (push(dst, src->ts[i], src->v[i]) != 0)
            return GPUFL_ENOMEM;
    return 0;
}

static int by_device(const void *x, const void *y)
{
    const ana_mem_dev *p = x, *q = y;
    return (p->device > q->device) - (p->device < q->device);
}

int gpufl__ana_mem_set_build(const gpufl__rows *a, ana_mem_set *out)
{
    memset(out, 0, sizeof *out);
    out->a = a;
    int rc = from_samples(out);
    if (rc == 0)
        rc = from_allocator(out);
    if (rc == 0)
        rc = from_memory(out);
    for (uint32_t k = 0; k < out->n && rc == 0; k++) {
        ana_mem_dev *d = &out->devs[k];
        for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES && rc == 0; s++)
            rc = ensure_sorted(&d->s[s]);
        if (rc == 0 && d->framework_source == GPUFL__ANA_FW_NONE && d->blocks.n) {
            d->framework_source = GPUFL__ANA_FW_BLOCKS;
            rc = copy_series(&d->s[GPUFL__ANA_MEM_ALLOCATED], &d->blocks);
        }
        const gpufl_trace_device *info = gpufl__rows_device(a, d->device);
        if (info && info->memory_total_bytes)
            d->total_bytes = info->memory_total_bytes;
    }
    if (rc != 0) {
        gpufl__ana_mem_set_free(out);
        return rc;
    }
    if (out->n)
        qsort(out->devs, out->n, sizeof *out->devs, by_device);
    return 0;
}

void gpufl__ana_mem_set_free(ana_mem_set *m)
{
    for (uint32_t k = 0; k < m->n; k++) {
        for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++)
            series_free(&m->devs[k].s[s]);
        series_free(&m->devs[k].blocks);
    }
    free(m->devs);
    m->devs = NULL;
    m->n = 0;
}

ana_mem_dev *gpufl__ana_mem_set_dev(const ana_mem_set *m, uint32_t device)
{
    for (uint32_t k = 0; k < m->n; k++)
        if (m->devs[k].device == device)
            return &m->devs[k];
    return NULL;
}

/* Points at or before t. */
static size_t count_le(const ana_series *s, uint64_t t) { return gpufl__ana_count_le(s->ts, s->n, 0, t); }

bool gpufl__ana_series_at(const ana_series *s, uint64_t t, uint64_t *v)
{
    size_t k = count_le(s, t);
    if (!k)
        return false;
    *v = s->v[k - 1];
    return true;
}

bool gpufl__ana_series_first_in(const ana_series *s, uint64_t t, uint64_t before, uint64_t *v)
{
    size_t k = t ? count_le(s, t - 1) : 0; /* the first point at or after t */
    if (k >= s->n || s->ts[k] >= before)
        return false;
    *v = s->v[k];
    return true;
}

/* A bottom-up tree of maxima: leaves at [n, 2n), node i the max of 2i and
 * 2i + 1; a range query climbs from both ends. */
static int build_tree(ana_series *s)
{
    s->max_tree = malloc(2 * s->n * sizeof *s->max_tree);
    if (!s->max_tree)
        return GPUFL_ENOMEM;
    memcpy(s->max_tree + s->n, s->v, s->n * sizeof *s->v);
    for (size_t i = s->n - 1; i >= 1; i--)
        s->max_tree[i] = s->max_tree[2 * i] > s->max_tree[2 * i + 1] ? s->max_tree[2 * i] : s->max_tree[2 * i + 1];
    return 0;
}

static uint64_t tree_max(const ana_series *s, size_t lo, size_t hi) /* [lo, hi), lo < hi */
{
    uint64_t best = 0;
    for (lo += s->n, hi += s->n; lo < hi; lo /= 2, hi /= 2) {
        if (lo & 1) {
            best = s->max_tree[lo] > best ? s->max_tree[lo] : best;
            lo++;
        }
        if (hi & 1) {
            hi--;
            best = s->max_tree[hi] > best ? s->max_tree[hi] : best;
        }
    }
    return best;
}

#define AT_RUN 256 /* points skipped at once looking for where a maximum is reached */

bool gpufl__ana_series_max(ana_series *s, uint64_t b, uint64_t e, uint64_t *v, uint64_t *at, int *rc)
{
    size_t first = count_le(s, b), last = count_le(s, e); /* points in (b, e]: [first, last) */
    size_t lo = first ? first - 1 : first;                /* with the value at b */
    if (lo >= last)
        return false;
    if (!s->max_tree && s->n > 1 && build_tree(s) != 0) {
        *rc = GPUFL_ENOMEM;
        return false;
    }
    uint64_t best = s->n > 1 ? tree_max(s, lo, last) : s->v[0];
    *v = best;
    /* the first point holding it: runs of points whose maximum is lower
     * are skipped whole, so a range over the whole session costs a tree
     * query per run, not a step per point */
    if (at) {
        size_t k = lo;
        while (k < last && s->v[k] != best) {
            size_t run_end = k + AT_RUN < last ? k + AT_RUN : last;
            if (s->n > 1 && k % AT_RUN == 0 && run_end - k == AT_RUN && tree_max(s, k, run_end) < best)
                k = run_end;
            else
                k++;
        }
        *at = k == lo && first ? b : s->ts[k];
    }
    return true;
}

uint8_t gpufl__ana_mem_live_series(const ana_mem_dev *d)
{
    if (ana_series_known(&d->s[GPUFL__ANA_MEM_ALLOCATED]))
        return GPUFL__ANA_MEM_ALLOCATED;
    if (ana_series_known(&d->s[GPUFL__ANA_MEM_DRIVER]))
        return GPUFL__ANA_MEM_DRIVER;
    return GPUFL__ANA_MEM_SERIES;
}
