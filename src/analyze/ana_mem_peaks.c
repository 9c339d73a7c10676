/*
 * Peaks of live memory per device, stream, gpufl scope name and NVTX range
 * name (analysis.h, "memory layers, peaks and leaks").
 *
 * A name's peak is a range maximum of the device's live series over each
 * of its instances (ana_mem_series.h: a tree of maxima, O(log n) per
 * instance), its growth the series' value at the instance's end minus at
 * its begin. Streams are a replay of their own rows. Allocations are given
 * to the caller's innermost NVTX range (its recorded name) and gpufl scope
 * (its id, named through the scope table).
 *
 * Threads: any. Sizes: one group per distinct (kind, name), one tree query
 * per scope or range instance: a training session has millions of op
 * ranges and a few hundred names.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_mem_series.h"
#include "analyze/ana_util.h"
#include "core/event.h"

/* The series peaks are taken from: the framework's blocks replayed when
 * they were recorded (exact at every block, where the allocator's states
 * are samples), else the device's live series. */
static ana_series *live_series(ana_mem_dev *d, uint8_t live)
{
    return live == GPUFL__ANA_MEM_ALLOCATED && d->blocks.n ? &d->blocks : &d->s[live];
}

typedef struct peaks_build {
    ana_mem_set *m;
    const gpufl__rows *a;
    gpufl__ana_mem_peak *rows;
    size_t n, cap;
    int rc;
} peaks_build;

static gpufl__ana_mem_peak *add(peaks_build *b)
{
    if (gpufl__ana_grow(&b->rows, &b->cap, b->n + 1, sizeof *b->rows) != 0) {
        b->rc = GPUFL_ENOMEM;
        return NULL;
    }
    gpufl__ana_mem_peak *p = &b->rows[b->n++];
    memset(p, 0, sizeof *p);
    return p;
}

/* Whether memory row i counts for series `live` of device d. */
static bool row_counts(const gpufl__rows *a, size_t i, uint32_t device, uint8_t live)
{
    if (gpufl__m_failed(a, i) || gpufl__m_device(a, i) != device)
        return false;
    if (live == GPUFL__ANA_MEM_ALLOCATED)
        return gpufl__m_framework(a, i);
    uint8_t kind = gpufl__m_kind(a, i);
    return !gpufl__m_framework(a, i) && kind != GFL_MEM_PAGEABLE && kind != GFL_MEM_PINNED;
}

typedef struct stream_acc {
    uint32_t stream;
    uint64_t live, peak, peak_ns, allocs, alloc_bytes;
} stream_acc;

static int by_stream(const void *x, const void *y)
{
    const stream_acc *p = x, *q = y;
    return (p->stream > q->stream) - (p->stream < q->stream);
}

/* The device's streams, replayed; rows only when it used more than one
 * (one stream is the device row again). */
static void streams(peaks_build *b, const ana_mem_dev *d, uint8_t live)
{
    const gpufl__rows *a = b->a;
    ana_map index = {0}, addrs = {0};
    stream_acc *acc = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < gpufl__m_n(a) && b->rc == 0; i++) {
        if (!row_counts(a, i, d->device, live))
            continue;
        uint32_t stream = gpufl__stream_id(a, gpufl__m_stream_row(a, i)), k, j;
        int put = gpufl__ana_map_put(&index, 0, stream, (uint32_t)n, &k);
        if (put < 0 || (put == 0 && gpufl__ana_grow(&acc, &cap, n + 1, sizeof *acc) != 0)) {
            b->rc = GPUFL_ENOMEM;
            break;
        }
        if (put == 0)
            acc[n++] = (stream_acc){.stream = stream};
        uint64_t addr = gpufl__m_address(a, i);
        if (gpufl__m_is_free(a, i)) {
            if (gpufl__ana_map_get(&addrs, 0, addr, &j)) {
                uint32_t owner = 0;
                (void)gpufl__ana_map_get(&index, 0, gpufl__stream_id(a, gpufl__m_stream_row(a, j)), &owner);
                acc[owner].live -= gpufl__m_bytes(a, j);
                gpufl__ana_map_del(&addrs, 0, addr);
            }
            continue;
        }
        /* by row, so that a free finds the stream its block was allocated on */
        put = gpufl__ana_map_put(&addrs, 0, addr, (uint32_t)i, &j);
        if (put < 0) {
            b->rc = GPUFL_ENOMEM;
            break;
        }
        if (put == 1) { /* the address was live: the old block is gone */
            uint32_t owner = 0;
            (void)gpufl__ana_map_get(&index, 0, gpufl__stream_id(a, gpufl__m_stream_row(a, j)), &owner);
            acc[owner].live -= gpufl__m_bytes(a, j);
            gpufl__ana_map_set(&addrs, 0, addr, (uint32_t)i);
        }
        stream_acc *s = &acc[k];
        s->allocs++;
        s->alloc_bytes += gpufl__m_bytes(a, i);
        s->live += gpufl__m_bytes(a, i);
        if (s->live > s->peak) {
            s->peak = s->live;
            s->peak_ns = gpufl__m_ts(a, i);
        }
    }
    if (b->rc == 0 && n > 1) {
        qsort(acc, n, sizeof *acc, by_stream);
        for (size_t k = 0; k < n; k++) {
            gpufl__ana_mem_peak *p = add(b);
            if (!p)
                break;
            *p = (gpufl__ana_mem_peak){.kind = GPUFL__ANA_MPEAK_STREAM,
                                       .series = live,
                                       .device = d->device,
                                       .stream = acc[k].stream,
                                       .peak_bytes = acc[k].peak,
                                       .peak_ns = acc[k].peak_ns,
                                       .allocs = acc[k].allocs,
                                       .alloc_bytes = acc[k].alloc_bytes,
                                       .blocks = live == GPUFL__ANA_MEM_ALLOCATED};
        }
    }
    free(acc);
    gpufl__ana_map_free(&index);
    gpufl__ana_map_free(&addrs);
}

/* A name's figures while they are gathered. */
typedef struct name_acc {
    gpufl__ana_mem_peak p;
    uint64_t best_b, best_e; /* the instance that reached the peak */
    bool seen;
} name_acc;

typedef struct names {
    name_acc *acc;
    size_t n, cap;
    ana_map index; /* (kind, name) -> acc */
} names;

static name_acc *name_get(peaks_build *b, names *g, uint8_t kind, uint32_t name, ana_mem_dev *d, uint8_t live)
{
    uint32_t k;
    int put = gpufl__ana_map_put(&g->index, kind, name, (uint32_t)g->n, &k);
    if (put < 0 || (put == 0 && gpufl__ana_grow(&g->acc, &g->cap, g->n + 1, sizeof *g->acc) != 0)) {
        b->rc = GPUFL_ENOMEM;
        return NULL;
    }
    if (put == 0) {
        memset(&g->acc[g->n], 0, sizeof g->acc[g->n]);
        g->acc[g->n].p = (gpufl__ana_mem_peak){.kind = kind,
                                               .series = live,
                                               .device = d->device,
                                               .name = name,
                                               .blocks = live_series(d, live) == &d->blocks};
        g->n++;
    }
    return &g->acc[k];
}

static void instances(peaks_build *b, names *g, ana_mem_dev *d, uint8_t live, unsigned tbl)
{
    const gpufl_trace_scopes *s = gpufl__rows_ranges(b->a, tbl);
    uint8_t kind = tbl == GPUFL__TBL_SCOPE ? GPUFL__ANA_MPEAK_SCOPE : GPUFL__ANA_MPEAK_NVTX;
    ana_series *x = live_series(d, live);
    for (size_t i = 0; i < s->n && b->rc == 0; i++) {
        if (gpufl__s_instant(s, i) || !gpufl__s_name(s, i))
            continue;
        uint64_t beg = gpufl__s_begin(s, i), end = gpufl__s_end(s, i), top, v0, v1;
        if (!gpufl__ana_series_max(x, beg, end, &top, NULL, &b->rc))
            continue; /* nothing known while it was open */
        name_acc *n = name_get(b, g, kind, gpufl__s_name(s, i), d, live);
        if (!n)
            return;
        n->p.instances++;
        if (!n->seen || top > n->p.peak_bytes) {
            n->p.peak_bytes = top;
            n->best_b = beg;
            n->best_e = end;
            n->seen = true;
        }
        if (gpufl__ana_series_at(x, beg, &v0) && gpufl__ana_series_at(x, end, &v1)) {
            int64_t grow = (int64_t)(v1 - v0);
            n->p.growth_bytes += grow;
            if (n->p.instances == 1 || grow > n->p.max_growth_bytes)
                n->p.max_growth_bytes = grow;
        }
    }
}

/* Gives each counted allocation to its caller's NVTX range and scope. */
static void allocations(peaks_build *b, names *g, const ana_mem_dev *d, uint8_t live)
{
    const gpufl__rows *a = b->a;
    ana_map scope_name = {0}; /* scope id -> name id */
    for (size_t i = 0; i < a->scopes->n && b->rc == 0; i++) {
        uint32_t v;
        if (gpufl__ana_map_put(&scope_name, 0, gpufl__s_id(a->scopes, i), gpufl__s_name(a->scopes, i), &v) < 0)
            b->rc = GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < gpufl__m_n(a) && b->rc == 0; i++) {
        if (gpufl__m_is_free(a, i) || !row_counts(a, i, d->device, live))
            continue;
        uint32_t c = gpufl__m_caller(a, i), name;
        if (c >= a->callers->n)
            continue;
        uint64_t bytes = gpufl__m_bytes(a, i);
        uint32_t nvtx = gpufl__caller_nvtx(a, c);
        uint32_t k;
        if (nvtx && gpufl__ana_map_get(&g->index, GPUFL__ANA_MPEAK_NVTX, nvtx, &k)) {
            g->acc[k].p.allocs++;
            g->acc[k].p.alloc_bytes += bytes;
        }
        uint64_t scope = gpufl__caller_scope(a, c);
        if (scope && gpufl__ana_map_get(&scope_name, 0, scope, &name) &&
            gpufl__ana_map_get(&g->index, GPUFL__ANA_MPEAK_SCOPE, name, &k)) {
            g->acc[k].p.allocs++;
            g->acc[k].p.alloc_bytes += bytes;
        }
    }
    gpufl__ana_map_free(&scope_name);
}

static int name_cmp(const void *x, const void *y, void *ctx)
{
    const name_acc *p = x, *q = y;
    if (p->p.kind != q->p.kind)
        return p->p.kind < q->p.kind ? -1 : 1;
    if (p->p.peak_bytes != q->p.peak_bytes)
        return p->p.peak_bytes > q->p.peak_bytes ? -1 : 1;
    if (p->p.growth_bytes != q->p.growth_bytes)
        return p->p.growth_bytes > q->p.growth_bytes ? -1 : 1;
    int c = gpufl__ana_strcmp(ctx, p->p.name, q->p.name);
    return c ? c : (p->p.name > q->p.name) - (p->p.name < q->p.name);
}

static uint64_t names_out(peaks_build *b, names *g, ana_mem_dev *d, uint8_t live)
{
    uint64_t left = 0;
    if (g->n)
        qsort_r(g->acc, g->n, sizeof *g->acc, name_cmp, (void *)b->a->t);
    uint32_t shown[4] = {0};
    for (size_t k = 0; k < g->n && b->rc == 0; k++) {
        name_acc *n = &g->acc[k];
        if (shown[n->p.kind]++ >= GPUFL__ANA_MEM_MAX_NAMES) {
            left++;
            continue;
        }
        uint64_t v;
        gpufl__ana_series_max(live_series(d, live), n->best_b, n->best_e, &v, &n->p.peak_ns, &b->rc);
        gpufl__ana_mem_peak *p = add(b);
        if (p)
            *p = n->p;
    }
    return left;
}

static void device_rows(peaks_build *b, ana_mem_dev *d, gpufl__ana_mem_peaks *out)
{
    uint8_t live = gpufl__ana_mem_live_series(d);
    if (live == GPUFL__ANA_MEM_SERIES)
        return;
    const ana_series *x = live_series(d, live);
    gpufl__ana_mem_peak *p = add(b);
    if (!p)
        return;
    p->kind = GPUFL__ANA_MPEAK_DEVICE;
    p->series = live;
    p->blocks = x == &d->blocks;
    p->device = d->device;
    for (size_t k = 0; k < x->n; k++)
        if (k == 0 || x->v[k] > p->peak_bytes) {
            p->peak_bytes = x->v[k];
            p->peak_ns = x->ts[k];
        }
    const gpufl__rows *a = b->a;
    for (size_t i = 0; i < gpufl__m_n(a); i++)
        if (!gpufl__m_is_free(a, i) && row_counts(a, i, d->device, live)) {
            p->allocs++;
            p->alloc_bytes += gpufl__m_bytes(a, i);
        }
    streams(b, d, live);
    names g = {0};
    instances(b, &g, d, live, GPUFL__TBL_SCOPE);
    instances(b, &g, d, live, GPUFL__TBL_NVTX);
    if (b->rc == 0)
        allocations(b, &g, d, live);
    if (b->rc == 0)
        out->names_left_out += names_out(b, &g, d, live);
    free(g.acc);
    gpufl__ana_map_free(&g.index);
}

int gpufl__ana_mem_peaks_with(ana_mem_set *m, gpufl__ana_mem_peaks *out)
{
    memset(out, 0, sizeof *out);
    peaks_build b = {.m = m, .a = m->a};
    for (uint32_t k = 0; k < m->n && b.rc == 0; k++)
        device_rows(&b, &m->devs[k], out);
    out->rows = b.rows;
    out->n = (uint32_t)b.n;
    if (b.rc != 0) {
        gpufl__ana_mem_peaks_free(out);
        return b.rc;
    }
    return 0;
}

int gpufl__analyze_mem_peaks(const gpufl_trace *t, gpufl__ana_mem_peaks *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    ana_mem_set m;
    int rc = gpufl__ana_mem_set_build(&a, &m);
    if (rc != 0)
        return rc;
    rc = gpufl__ana_mem_peaks_with(&m, out);
    gpufl__ana_mem_set_free(&m);
    return rc;
}

void gpufl__ana_mem_peaks_free(gpufl__ana_mem_peaks *p)
{
    if (!p)
        return;
    free(p->rows);
    memset(p, 0, sizeof *p);
}
