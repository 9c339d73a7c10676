/*
 * The memory analysis (analysis.h): allocations and frees replayed in time
 * order per device and memory space: peaks, what was live at the peak,
 * what was never freed, and frees of memory allocated before recording.
 *
 * One replay with a hash map of the live allocations by (device, address),
 * which records for every allocation the event that ended it; the peak's
 * live set is then every allocation made at or before the peak and ended
 * after it, found in one more pass, with no snapshot taken during the
 * replay. Sizes: tens of thousands of allocations in a training session
 * (a caching allocator makes few), millions in the worst case.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "read/rows.h"
#include "core/event.h"

enum { LIVE = 0, FREED = 1, REPLACED = 2 };

typedef struct mem_build {
    const gpufl__rows *a;
    gpufl__ana_mem_row *rows;
    size_t nrows, cap;
    uint64_t *live_bytes, *live_count; /* per row, during the replay */
    size_t *peak_at;                   /* per row: the event that first reached the peak */
    uint32_t *row_of;                  /* per event */
    uint8_t *fate;                     /* per allocation event: LIVE, FREED, REPLACED */
    size_t *ended_at;                  /* per allocation event: the event that ended it */
} mem_build;

/* A framework's blocks lie inside the driver's allocations, often at the
 * same address as the segment that holds them: replayed together, a block
 * would "replace" its segment and the bytes count twice. */
static uint8_t space_of(const gpufl__rows *a, size_t i)
{
    if (gpufl__m_framework(a, i))
        return GPUFL__ANA_SPACE_FRAMEWORK;
    uint8_t kind = gpufl__m_kind(a, i);
    return kind == GFL_MEM_PAGEABLE || kind == GFL_MEM_PINNED ? GPUFL__ANA_SPACE_HOST : GPUFL__ANA_SPACE_DEVICE;
}

const char *gpufl__ana_space_name(uint8_t space)
{
    switch (space) {
    case GPUFL__ANA_SPACE_DEVICE: return "device";
    case GPUFL__ANA_SPACE_HOST: return "host";
    case GPUFL__ANA_SPACE_FRAMEWORK: return "framework";
    default: return "?";
    }
}

const char *gpufl__ana_never_freed_key(uint8_t why)
{
    switch (why) {
    case GPUFL__ANA_NEVER_FREED_LEAKS: return "leaks";
    case GPUFL__ANA_NEVER_FREED_NO_FREES: return "no_frees";
    case GPUFL__ANA_NEVER_FREED_UNENDED: return "unended";
    default: return "?";
    }
}

static int row_for(mem_build *b, ana_map *row_of_key, uint32_t dev, uint8_t space, uint32_t *r)
{
    int put = gpufl__ana_map_put(row_of_key, dev, space, (uint32_t)b->nrows, r);
    if (put < 0)
        return put;
    if (put == 1)
        return 0;
    size_t cap = b->cap;
    if (gpufl__ana_grow(&b->rows, &b->cap, b->nrows + 1, sizeof *b->rows) != 0)
        return GPUFL_ENOMEM;
    if (b->cap != cap) {
        uint64_t *lb = realloc(b->live_bytes, b->cap * sizeof *lb);
        if (lb)
            b->live_bytes = lb;
        uint64_t *lc = realloc(b->live_count, b->cap * sizeof *lc);
        if (lc)
            b->live_count = lc;
        size_t *pa = realloc(b->peak_at, b->cap * sizeof *pa);
        if (pa)
            b->peak_at = pa;
        if (!lb || !lc || !pa)
            return GPUFL_ENOMEM;
    }
    memset(&b->rows[b->nrows], 0, sizeof *b->rows);
    b->rows[b->nrows].device = dev;
    b->rows[b->nrows].space = space;
    b->live_bytes[b->nrows] = b->live_count[b->nrows] = 0;
    b->peak_at[b->nrows] = 0;
    b->nrows++;
    return 0;
}

/* Ends allocation j at event i. */
static void end_alloc(mem_build *b, size_t j, size_t i, uint8_t fate)
{
    uint32_t r = b->row_of[j];
    uint64_t bytes = gpufl__m_bytes(b->a, j);
    b->fate[j] = fate;
    b->ended_at[j] = i;
    b->live_bytes[r] -= bytes;
    b->live_count[r]--;
    if (fate == FREED) {
        b->rows[r].frees++;
        b->rows[r].free_bytes += bytes;
    } else {
        b->rows[r].never_freed++;
        b->rows[r].never_freed_bytes += bytes;
    }
}

static int replay(mem_build *b)
{
    const gpufl__rows *a = b->a;
    ana_map row_of_key = {0}, live = {0}, fw_live = {0};
    int rc = 0;
    for (size_t i = 0; i < gpufl__m_n(a) && rc == 0; i++) {
        uint32_t dev = gpufl__m_device(a, i), r, j;
        uint64_t addr = gpufl__m_address(a, i), bytes = gpufl__m_bytes(a, i);
        uint8_t space = space_of(a, i);
        if ((rc = row_for(b, &row_of_key, dev, space, &r)) != 0)
            break;
        ana_map *lives = space == GPUFL__ANA_SPACE_FRAMEWORK ? &fw_live : &live;
        b->row_of[i] = r;
        gpufl__ana_mem_row *row = &b->rows[r];
        if (gpufl__m_failed(a, i))
            continue; /* asked for, never given: neither live nor leaked */
        if (gpufl__m_is_free(a, i)) {
            if (gpufl__ana_map_get(lives, dev, addr, &j)) {
                end_alloc(b, j, i, FREED);
                gpufl__ana_map_del(lives, dev, addr);
            } else {
                row->unmatched_frees++;
                row->unmatched_free_bytes += bytes;
            }
            continue;
        }
        int put = gpufl__ana_map_put(lives, dev, addr, (uint32_t)i, &j);
        if (put < 0) {
            rc = put;
            break;
        }
        if (put == 1) { /* the address is live: the old block is gone unfreed */
            end_alloc(b, j, i, REPLACED);
            gpufl__ana_map_set(lives, dev, addr, (uint32_t)i);
        }
        b->fate[i] = LIVE;
        row->allocs++;
        row->alloc_bytes += bytes;
        b->live_bytes[r] += bytes;
        b->live_count[r]++;
        if (b->live_bytes[r] > row->peak_bytes) {
            row->peak_bytes = b->live_bytes[r];
            row->peak_ns = gpufl__m_ts(a, i);
            row->live_at_peak = b->live_count[r];
            b->peak_at[r] = i;
        }
    }
    for (size_t r = 0; r < b->nrows && rc == 0; r++) {
        gpufl__ana_mem_row *row = &b->rows[r];
        row->end_bytes = b->live_bytes[r];
        row->never_freed += b->live_count[r];
        row->never_freed_bytes += b->live_bytes[r];
        if (row->allocs && !row->frees && !row->unmatched_frees)
            row->never_freed_why = GPUFL__ANA_NEVER_FREED_NO_FREES;
        else if (!a->ended)
            row->never_freed_why = GPUFL__ANA_NEVER_FREED_UNENDED;
    }
    gpufl__ana_map_free(&row_of_key);
    gpufl__ana_map_free(&live);
    gpufl__ana_map_free(&fw_live);
    return rc;
}

typedef struct pick {
    uint32_t row;
    uint32_t list; /* 0 live at the peak, 1 never freed */
    size_t i;      /* allocation event */
} pick;

static int pick_cmp(const void *x, const void *y, void *ctx)
{
    const pick *p = x, *q = y;
    const gpufl__rows *a = ctx;
    if (p->row != q->row)
        return p->row < q->row ? -1 : 1;
    if (p->list != q->list)
        return p->list < q->list ? -1 : 1;
    uint64_t bp = gpufl__m_bytes(a, p->i), bq = gpufl__m_bytes(a, q->i);
    if (bp != bq)
        return bp > bq ? -1 : 1;
    if (gpufl__m_ts(a, p->i) != gpufl__m_ts(a, q->i))
        return gpufl__m_ts(a, p->i) < gpufl__m_ts(a, q->i) ? -1 : 1;
    uint64_t ap = gpufl__m_address(a, p->i), aq = gpufl__m_address(a, q->i);
    if (ap != aq)
        return ap < aq ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

static gpufl__ana_allocation allocation(const gpufl__rows *a, size_t i)
{
    uint32_t c = gpufl__m_caller(a, i);
    bool known = c < a->callers->n;
    return (gpufl__ana_allocation){.ts_ns = gpufl__m_ts(a, i),
                                   .address = gpufl__m_address(a, i),
                                   .bytes = gpufl__m_bytes(a, i),
                                   .kind = gpufl__m_kind(a, i),
                                   .tid = known ? gpufl__caller_tid(a, c) : 0,
                                   .scope = known ? gpufl__caller_scope(a, c) : 0,
                                   .nvtx = known ? gpufl__caller_nvtx(a, c) : 0,
                                   .stack = known ? gpufl__caller_stack(a, c) : 0};
}

/* The lists: allocations live at each row's peak, and never freed. */
static int lists(mem_build *b, uint32_t max)
{
    const gpufl__rows *a = b->a;
    pick *p = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < gpufl__m_n(a); i++) {
        if (gpufl__m_is_free(a, i) || gpufl__m_failed(a, i))
            continue;
        uint32_t r = b->row_of[i];
        bool at_peak =
            b->rows[r].peak_bytes && i <= b->peak_at[r] && (b->fate[i] == LIVE || b->ended_at[i] > b->peak_at[r]);
        bool never = b->fate[i] != FREED;
        if ((at_peak || never) && gpufl__ana_grow(&p, &cap, n + 2, sizeof *p) != 0) {
            free(p);
            return GPUFL_ENOMEM;
        }
        if (at_peak)
            p[n++] = (pick){r, 0, i};
        if (never)
            p[n++] = (pick){r, 1, i};
    }
    if (n)
        qsort_r(p, n, sizeof *p, pick_cmp, (void *)a);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i;
        while (j < n && p[j].row == p[i].row && p[j].list == p[i].list)
            j++;
        size_t m = j - i < max ? j - i : max;
        gpufl__ana_allocation *out = calloc(m ? m : 1, sizeof *out);
        if (!out) {
            rc = GPUFL_ENOMEM;
            break;
        }
        for (size_t k = 0; k < m; k++)
            out[k] = allocation(a, p[i + k].i);
        gpufl__ana_mem_row *row = &b->rows[p[i].row];
        if (p[i].list == 0) {
            row->live = out;
            row->nlive = (uint32_t)m;
        } else {
            row->leaks = out;
            row->nleaks = (uint32_t)m;
        }
        i = j;
    }
    free(p);
    return rc;
}

static int by_device_space(const void *x, const void *y)
{
    const gpufl__ana_mem_row *p = x, *q = y;
    if (p->device != q->device)
        return p->device < q->device ? -1 : 1;
    return (p->space > q->space) - (p->space < q->space);
}

int gpufl__analyze_memory(const gpufl_trace *t, const gpufl__ana_options *o, gpufl__ana_memory *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__ana_options f;
    gpufl__ana_options_default(&f);
    uint32_t max = o && o->max_allocations ? o->max_allocations : f.max_allocations;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    size_t n = gpufl__m_n(&a);
    out->recorded = n > 0;
    if (!n)
        return 0;
    mem_build b = {.a = &a};
    b.row_of = malloc(n * sizeof *b.row_of);
    b.fate = malloc(n);
    b.ended_at = malloc(n * sizeof *b.ended_at);
    int rc = b.row_of && b.fate && b.ended_at ? replay(&b) : GPUFL_ENOMEM;
    if (rc == 0)
        rc = lists(&b, max);
    free(b.row_of);
    free(b.fate);
    free(b.ended_at);
    free(b.live_bytes);
    free(b.live_count);
    free(b.peak_at);
    out->rows = b.rows;
    out->n = (uint32_t)b.nrows;
    if (rc != 0) {
        gpufl__ana_memory_free(out);
        return rc;
    }
    if (out->n)
        qsort(out->rows, out->n, sizeof *out->rows, by_device_space);
    return 0;
}

void gpufl__ana_memory_free(gpufl__ana_memory *m)
{
    if (!m)
        return;
    for (uint32_t i = 0; i < m->n && m->rows; i++) {
        free(m->rows[i].live);
        free(m->rows[i].leaks);
    }
    free(m->rows);
    memset(m, 0, sizeof *m);
}
