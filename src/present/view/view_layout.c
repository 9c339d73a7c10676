/*
 * The timeline view's layout (see view_layout.h for the rules). One
 * single-threaded pass per lane over the rows of the window; the columns
 * are filled as the walk crosses them, so a lane costs its rows in the
 * window plus the columns.
 */
#include "present/view/view_layout.h"

#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"

#define SAMPLE_PERIOD_MAX_NS 1000000000ull /* NVML averages utilization over at most 1 s */

uint64_t gpufl__view_col_start(const gpufl__view_layout *lo, unsigned c)
{
    return lo->from + (uint64_t)((unsigned __int128)(lo->to - lo->from) * c / lo->ncols);
}

/* The column holding time x (from <= x < to). */
static unsigned col_of(const gpufl__view_layout *lo, uint64_t x)
{
    unsigned c = (unsigned)((unsigned __int128)(x - lo->from) * lo->ncols / (lo->to - lo->from));
    if (c >= lo->ncols)
        c = lo->ncols - 1;
    while (c + 1 < lo->ncols && gpufl__view_col_start(lo, c + 1) <= x)
        c++;
    while (c > 0 && gpufl__view_col_start(lo, c) > x)
        c--;
    return c;
}

/* 0 for nothing, else 1 .. 8 eighths, rounded up. */
static uint32_t level_of(unsigned __int128 num, unsigned __int128 den)
{
    if (num == 0 || den == 0)
        return 0;
    unsigned __int128 l = (num * 8 + den - 1) / den;
    return l > 8 ? 8 : (uint32_t)l;
}

/* ---- columns: what occupied each one most ------------------------------- */

typedef struct bins {
    const gpufl__view_layout *lo;
    uint64_t *acc;     /* ns per key in the current column */
    uint32_t *touched; /* keys with acc != 0 */
    size_t ntouched;
    unsigned col;
    bool open;         /* col is being filled */
    uint64_t busy;     /* ns of the current column covered by anything */
    uint64_t total;    /* ns of every column covered */
    gpufl__vcell *out; /* NULL: count `total` only */
    bool coverage;     /* cells are coverage levels, not keys */
} bins;

static void bins_flush(bins *b)
{
    if (!b->open)
        return;
    if (b->out) {
        gpufl__vcell *c = &b->out[b->col];
        uint64_t width = gpufl__view_col_start(b->lo, b->col + 1) - gpufl__view_col_start(b->lo, b->col);
        if (b->coverage) {
            c->key = level_of(b->busy, width);
        } else {
            uint32_t best = 0;
            uint64_t best_ns = 0;
            for (size_t i = 0; i < b->ntouched; i++)
                if (b->acc[b->touched[i]] > best_ns) {
                    best = b->touched[i];
                    best_ns = b->acc[best];
                }
            c->key = best;
            c->idle = b->busy * 2 < width;
        }
    }
    for (size_t i = 0; i < b->ntouched; i++)
        b->acc[b->touched[i]] = 0;
    b->ntouched = 0;
    b->busy = 0;
    b->open = false;
}

/* Adds [a, e) (inside the window, a < e, after everything added before)
 * as time of key (>= 1). */
static void bins_add(bins *b, uint32_t key, uint64_t a, uint64_t e)
{
    b->total += e - a;
    unsigned c = col_of(b->lo, a);
    while (a < e) {
        if (!b->open || b->col != c) {
            bins_flush(b);
            b->col = c;
            b->open = true;
        }
        uint64_t cend = gpufl__view_col_start(b->lo, c + 1);
        uint64_t seg = (e < cend ? e : cend) - a;
        if (!b->coverage) {
            if (b->acc[key] == 0)
                b->touched[b->ntouched++] = key;
            b->acc[key] += seg;
        }
        b->busy += seg;
        a += seg;
        c++;
    }
}

/* ---- one lane over the window ------------------------------------------- */

typedef struct running {
    uint64_t end;
    uint32_t key;
} running;

typedef struct sweep {
    running *st; /* what runs at time t, the latest started on top */
    size_t n, cap;
    uint64_t t;
} sweep;

/* Hands the time from s->t to target to whoever is on top of the stack. */
static void advance(sweep *s, bins *b, uint64_t target)
{
    while (s->t < target && s->n) {
        running *top = &s->st[s->n - 1];
        if (top->end <= s->t) {
            s->n--;
            continue;
        }
        uint64_t e = top->end < target ? top->end : target;
        bins_add(b, top->key, s->t, e);
        s->t = e;
    }
    if (s->t < target)
        s->t = target;
}

typedef struct build {
    gpufl__view_layout *lo;
    const gpufl__view_index *ix;
    size_t *seek;    /* per lane: its first entry that reaches into the window */
    uint8_t *letter; /* per kernel name id: 1 + legend index, 0 other */
    sweep sw;
    uint64_t *acc;
    uint32_t *touched;
    uint64_t *sum_v, *sum_w; /* per column: utilization x ns, ns (NVML) */
} build;

static uint32_t entry_key(const build *bd, const gpufl__vlane *l, size_t off, uint32_t e)
{
    const gpufl__rows *s = &bd->ix->src;
    unsigned table = GPUFL__VROW_TABLE(e);
    size_t i = GPUFL__VROW_INDEX(e);
    switch (l->kind) {
    case GPUFL__VLANE_DEVICE: return 1;
    case GPUFL__VLANE_STREAM:
        if (table == GPUFL__TBL_KERNEL) {
            uint8_t k = bd->letter[gpufl__row_name(s, table, i)];
            return k ? GPUFL__VG_KERNEL + k - 1u : GPUFL__VG_OTHER;
        }
        if (table == GPUFL__TBL_COPY) {
            unsigned kind = gpufl__row_copy_kind(s, table, i);
            return GPUFL__VG_COPY + (kind < GPUFL__VIEW_COPY_KINDS ? kind : 0);
        }
        return GPUFL__VG_MEMSET;
    default: return (uint32_t)off + 1;
    }
}

/* Walks lane l over the window into b; counts[table] gets the rows that
 * overlap it. Returns 0 or GPUFL_ENOMEM. */
static int walk_lane(build *bd, const gpufl__vlane *l, bins *b, size_t counts[GPUFL__TBL_COUNT])
{
    const gpufl__view_layout *lo = bd->lo;
    const gpufl__view_index *ix = bd->ix;
    sweep *s = &bd->sw;
    s->n = 0;
    s->t = lo->from;
    for (size_t off = bd->seek[l - ix->lane]; off < l->n; off++) {
        uint32_t e = ix->row[l->first + off];
        uint64_t st = gpufl__row_start(&ix->src, GPUFL__VROW_TABLE(e), GPUFL__VROW_INDEX(e));
        if (st >= lo->to)
            break;
        uint64_t en = gpufl__view_entry_end(ix, e);
        if (en <= lo->from)
            continue;
        counts[GPUFL__VROW_TABLE(e)]++;
        advance(s, b, st > lo->from ? st : lo->from);
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 64;
            running *r = realloc(s->st, cap * sizeof *r);
            if (!r)
                return GPUFL_ENOMEM;
            s->st = r;
            s->cap = cap;
        }
        s->st[s->n++] = (running){en, entry_key(bd, l, off, e)};
    }
    advance(s, b, lo->to);
    bins_flush(b);
    return 0;
}

static bins bins_for(build *bd, gpufl__vcell *out, bool coverage)
{
    return (bins){.lo = bd->lo, .acc = bd->acc, .touched = bd->touched, .out = out, .coverage = coverage};
}

/* ---- utilization from NVML samples -------------------------------------- */

static uint64_t sample_ts(const build *bd, const gpufl__vlane *l, size_t off)
{
    uint32_t e = bd->ix->row[l->first + off];
    return gpufl__row_start(&bd->ix->src, GPUFL__VROW_TABLE(e), GPUFL__VROW_INDEX(e));
}

/* Where the time sample `off` stands for begins. */
static uint64_t sample_from(const build *bd, const gpufl__vlane *l, size_t off)
{
    uint64_t ts = sample_ts(bd, l, off), period = 0;
    if (off > 0)
        period = ts - sample_ts(bd, l, off - 1);
    else if (l->n > 1)
        period = sample_ts(bd, l, 1) - ts;
    if (period > SAMPLE_PERIOD_MAX_NS)
        period = SAMPLE_PERIOD_MAX_NS;
    if (period == 0)
        period = 1;
    return ts > period ? ts - period : 0;
}

static bool samples_visible(const build *bd, const gpufl__vlane *l)
{
    size_t off = bd->seek[l - bd->ix->lane];
    return off < l->n && sample_from(bd, l, off) < bd->lo->to;
}

static void util_from_samples(build *bd, const gpufl__vlane *l, gpufl__vcell *out, gpufl__vdevice *d)
{
    const gpufl__view_layout *lo = bd->lo;
    memset(bd->sum_v, 0, lo->ncols * sizeof *bd->sum_v);
    memset(bd->sum_w, 0, lo->ncols * sizeof *bd->sum_w);
    unsigned __int128 all_v = 0, all_w = 0;
    for (size_t off = bd->seek[l - bd->ix->lane]; off < l->n; off++) {
        uint64_t a = sample_from(bd, l, off), e = sample_ts(bd, l, off);
        if (a >= lo->to)
            break;
        uint32_t row = bd->ix->row[l->first + off];
        uint64_t v = (uint64_t)gpufl__d_util_or_none(&bd->ix->src, GPUFL__VROW_INDEX(row));
        a = a > lo->from ? a : lo->from;
        e = e < lo->to ? e : lo->to;
        if (e <= a)
            e = a + 1; /* a lone sample: a point */
        d->samples++;
        for (unsigned c = col_of(lo, a); a < e && c < lo->ncols; c++) {
            uint64_t cend = gpufl__view_col_start(lo, c + 1);
            uint64_t seg = (e < cend ? e : cend) - a;
            bd->sum_v[c] += v * seg;
            bd->sum_w[c] += seg;
            a += seg;
        }
    }
    for (unsigned c = 0; c < lo->ncols; c++) {
        out[c].key = level_of((unsigned __int128)bd->sum_v[c], (unsigned __int128)bd->sum_w[c] * 100);
        all_v += bd->sum_v[c];
        all_w += bd->sum_w[c];
    }
    d->nvml = true;
    d->util_mean = all_w ? (unsigned)((all_v + all_w / 2) / all_w) : 0;
}

/* ---- the legend ------------------------------------------------------------ */

typedef struct name_total {
    uint32_t name;
    uint64_t ns, count;
    const char *text;
} name_total;

static int by_time(const void *pa, const void *pb)
{
    const name_total *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns > b->ns ? -1 : 1;
    return strcmp(a->text, b->text);
}

/* Kernel time per name in the window, over every device: the legend and
 * bd->letter. Returns 0 or GPUFL_ENOMEM. */
static int build_legend(build *bd)
{
    gpufl__view_layout *lo = bd->lo;
    const gpufl__view_index *ix = bd->ix;
    size_t nnames = ix->max_name ? ix->max_name : 1;
    uint32_t *slot = calloc(nnames, sizeof *slot); /* 1 + index in totals */
    name_total *totals = NULL;
    size_t n = 0, cap = 0;
    int rc = GPUFL_ENOMEM;
    if (!slot)
        goto out;
    for (size_t li = 0; li < ix->nlanes; li++) {
        const gpufl__vlane *l = &ix->lane[li];
        if (l->kind != GPUFL__VLANE_DEVICE)
            continue;
        for (size_t off = bd->seek[li]; off < l->n; off++) {
            uint32_t e = ix->row[l->first + off];
            size_t i = GPUFL__VROW_INDEX(e);
            uint64_t st = gpufl__row_start(&ix->src, GPUFL__TBL_KERNEL, i);
            if (st >= lo->to)
                break;
            uint64_t en = gpufl__view_entry_end(ix, e);
            if (en <= lo->from)
                continue;
            uint32_t name = gpufl__row_name(&ix->src, GPUFL__TBL_KERNEL, i);
            if (!slot[name]) {
                if (n == cap) {
                    cap = cap ? cap * 2 : 64;
                    name_total *t = realloc(totals, cap * sizeof *t);
                    if (!t)
                        goto out;
                    totals = t;
                }
                totals[n] = (name_total){name, 0, 0, gpufl__rows_str(&ix->src, name)};
                slot[name] = (uint32_t)++n;
            }
            uint64_t ns = (en < lo->to ? en : lo->to) - (st > lo->from ? st : lo->from);
            totals[slot[name] - 1].ns += ns;
            totals[slot[name] - 1].count++;
            lo->kernel_ns += ns;
        }
    }
    if (n)
        qsort(totals, n, sizeof *totals, by_time);
    lo->nlegend = n < GPUFL__VIEW_LETTERS ? n : GPUFL__VIEW_LETTERS;
    lo->other_names = n - lo->nlegend;
    for (size_t i = 0; i < lo->nlegend; i++) {
        lo->legend[i] = (gpufl__vlegend){totals[i].name, totals[i].ns, totals[i].count};
        bd->letter[totals[i].name] = (uint8_t)(i + 1);
    }
    rc = 0;
out:
    free(slot);
    free(totals);
    return rc;
}

/* ---- rows ------------------------------------------------------------------ */

static bool lane_visible(const build *bd, size_t li)
{
    const gpufl__vlane *l = &bd->ix->lane[li];
    if (l->kind == GPUFL__VLANE_SAMPLES)
        return samples_visible(bd, l);
    size_t off = bd->seek[li];
    if (off >= l->n)
        return false;
    uint32_t e = bd->ix->row[l->first + off];
    return gpufl__row_start(&bd->ix->src, GPUFL__VROW_TABLE(e), GPUFL__VROW_INDEX(e)) < bd->lo->to;
}

static bool is_thread_lane(const gpufl__vlane *l)
{
    return l->kind == GPUFL__VLANE_SCOPE || l->kind == GPUFL__VLANE_NVTX;
}

/* Lanes [li, *end) are one device's, or one thread's. */
static size_t group_end(const gpufl__view_index *ix, size_t li)
{
    const gpufl__vlane *a = &ix->lane[li];
    size_t end = li + 1;
    for (; end < ix->nlanes; end++) {
        const gpufl__vlane *b = &ix->lane[end];
        if (is_thread_lane(a) != is_thread_lane(b) || (is_thread_lane(a) ? a->tid != b->tid : a->device != b->device))
            break;
    }
    return end;
}

/* Rows of a device's lanes [li, end); with out NULL, counts them in *nrows
 * and *ncells (rows with cells) only. Returns 0 or GPUFL_ENOMEM. */
static int device_rows(build *bd, size_t li, size_t end, size_t *nrows, size_t *ncells, bool fill)
{
    gpufl__view_layout *lo = bd->lo;
    const gpufl__view_index *ix = bd->ix;
    bool any = false;
    for (size_t i = li; i < end; i++)
        any |= lane_visible(bd, i);
    if (!any)
        return 0;
    if (!fill) {
        *nrows += 2;
        *ncells += 1;
        for (size_t i = li; i < end; i++)
            if (ix->lane[i].kind == GPUFL__VLANE_STREAM && lane_visible(bd, i))
                (*nrows)++, (*ncells)++;
        return 0;
    }
    gpufl__vdevice *d = &lo->device[lo->ndevices++];
    d->device = ix->lane[li].device;
    lo->row[lo->nrows++] = (gpufl__vrow){.kind = GPUFL__VR_DEVICE, .device = d->device};
    gpufl__vrow *util = &lo->row[lo->nrows++];
    *util = (gpufl__vrow){.kind = GPUFL__VR_UTIL, .device = d->device, .cell = lo->cells + (*ncells)++ * lo->ncols};
    size_t counts[GPUFL__TBL_COUNT];
    for (size_t i = li; i < end; i++) {
        const gpufl__vlane *l = &ix->lane[i];
        memset(counts, 0, sizeof counts);
        if (l->kind == GPUFL__VLANE_DEVICE) {
            bins b = bins_for(bd, util->cell, true);
            if (walk_lane(bd, l, &b, counts) != 0)
                return GPUFL_ENOMEM;
            d->busy_ns = b.total;
        } else if (l->kind == GPUFL__VLANE_SAMPLES) {
            if (samples_visible(bd, l)) {
                util_from_samples(bd, l, util->cell, d);
                util->nvml = true;
            }
        } else if (lane_visible(bd, i)) {
            gpufl__vrow *r = &lo->row[lo->nrows++];
            *r = (gpufl__vrow){.kind = GPUFL__VR_STREAM,
                               .lane = l,
                               .device = d->device,
                               .stream = l->stream,
                               .cell = lo->cells + (*ncells)++ * lo->ncols};
            bins b = bins_for(bd, r->cell, false);
            if (walk_lane(bd, l, &b, counts) != 0)
                return GPUFL_ENOMEM;
            d->kernels += counts[GPUFL__TBL_KERNEL];
            d->copies += counts[GPUFL__TBL_COPY];
            d->memsets += counts[GPUFL__TBL_MEMSET];
        }
    }
    return 0;
}

static int thread_rows(build *bd, size_t li, size_t end, size_t *nrows, size_t *ncells, bool fill)
{
    gpufl__view_layout *lo = bd->lo;
    const gpufl__view_index *ix = bd->ix;
    bool header = false;
    size_t counts[GPUFL__TBL_COUNT];
    for (size_t i = li; i < end; i++) {
        const gpufl__vlane *l = &ix->lane[i];
        if (!lane_visible(bd, i))
            continue;
        if (!header) {
            header = true;
            (*nrows)++;
            if (fill) {
                lo->row[lo->nrows++] = (gpufl__vrow){.kind = GPUFL__VR_THREAD, .tid = l->tid};
                lo->threads++;
            }
        }
        (*nrows)++;
        if (!fill) {
            (*ncells)++;
            continue;
        }
        gpufl__vrow *r = &lo->row[lo->nrows++];
        *r = (gpufl__vrow){.kind = l->kind == GPUFL__VLANE_SCOPE ? GPUFL__VR_SCOPE : GPUFL__VR_NVTX,
                           .lane = l,
                           .tid = l->tid,
                           .level = l->level,
                           .cell = lo->cells + (*ncells)++ * lo->ncols};
        memset(counts, 0, sizeof counts);
        bins b = bins_for(bd, r->cell, false);
        if (walk_lane(bd, l, &b, counts) != 0)
            return GPUFL_ENOMEM;
        lo->scopes += counts[GPUFL__TBL_SCOPE];
        lo->nvtx += counts[GPUFL__TBL_NVTX];
    }
    return 0;
}

/* The "traced" and "triggers" rows, when the session has windows or
 * triggers (in the window or not: that none is in it is worth seeing). */
static void flight_rows(build *bd, size_t *nrows, size_t *ncells, bool fill)
{
    gpufl__view_layout *lo = bd->lo;
    const gpufl__view_index *ix = bd->ix;
    if (ix->nwindows) {
        gpufl__vcell *cell = lo->cells + *ncells * lo->ncols;
        (*ncells)++;
        if (fill) {
            lo->row[lo->nrows++] = (gpufl__vrow){.kind = GPUFL__VR_TRACED, .cell = cell};
            uint64_t covered_to = lo->from; /* union: windows are by start */
            for (size_t i = 0; i < ix->nwindows; i++) {
                uint64_t w0 = ix->window[i][0], w1 = ix->window[i][1];
                if (w0 >= lo->to || (w1 <= lo->from && !(w0 == w1 && w0 == lo->from)))
                    continue; /* outside; a zero-length window is in the column of its time */
                uint64_t a = w0 > lo->from ? w0 : lo->from, e = w1 < lo->to ? w1 : lo->to;
                lo->windows++;
                for (unsigned c = col_of(lo, a), last = e > a ? col_of(lo, e - 1) : c; c <= last; c++)
                    cell[c].key = 1;
                if (e > covered_to) {
                    lo->traced_ns += e - (a > covered_to ? a : covered_to);
                    covered_to = e;
                }
            }
        }
        (*nrows)++;
    }
    if (ix->ntriggers) {
        gpufl__vcell *cell = lo->cells + *ncells * lo->ncols;
        (*ncells)++;
        if (fill) {
            lo->row[lo->nrows++] = (gpufl__vrow){.kind = GPUFL__VR_TRIGGERS, .cell = cell};
            for (size_t i = 0; i < ix->ntriggers; i++)
                if (ix->trigger_ns[i] >= lo->from && ix->trigger_ns[i] < lo->to) {
                    cell[col_of(lo, ix->trigger_ns[i])].key++;
                    lo->triggers++;
                }
        }
        (*nrows)++;
    }
}

/* Every row, or (fill false) their number and how many have cells. */
static int all_rows(build *bd, size_t *nrows, size_t *ncells, bool fill)
{
    flight_rows(bd, nrows, ncells, fill);
    for (size_t li = 0, end; li < bd->ix->nlanes; li = end) {
        end = group_end(bd->ix, li);
        int rc = is_thread_lane(&bd->ix->lane[li]) ? thread_rows(bd, li, end, nrows, ncells, fill)
                                                   : device_rows(bd, li, end, nrows, ncells, fill);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int gpufl__view_layout_build(gpufl__view_layout *lo, const gpufl__view_index *ix, uint64_t from, uint64_t to,
                             unsigned ncols)
{
    memset(lo, 0, sizeof *lo);
    lo->ix = ix;
    lo->from = from;
    lo->to = to;
    lo->ncols = ncols;
    build bd = {.lo = lo, .ix = ix};
    size_t keys = GPUFL__VG_COUNT, ndev = 0;
    for (size_t li = 0; li < ix->nlanes; li++) {
        if (ix->lane[li].n + 1 > keys)
            keys = ix->lane[li].n + 1;
        ndev += !is_thread_lane(&ix->lane[li]); /* at least one per device */
    }
    int rc = GPUFL_ENOMEM;
    bd.seek = malloc((ix->nlanes + 1) * sizeof *bd.seek);
    bd.letter = calloc(ix->max_name + 1, 1);
    bd.acc = calloc(keys, sizeof *bd.acc);
    bd.touched = malloc(keys * sizeof *bd.touched);
    bd.sum_v = malloc(ncols * sizeof *bd.sum_v);
    bd.sum_w = malloc(ncols * sizeof *bd.sum_w);
    lo->device = calloc(ndev + 1, sizeof *lo->device);
    if (!bd.seek || !bd.letter || !bd.acc || !bd.touched || !bd.sum_v || !bd.sum_w || !lo->device)
        goto out;
    for (size_t li = 0; li < ix->nlanes; li++)
        bd.seek[li] = gpufl__view_lane_seek(ix, &ix->lane[li], from);
    if ((rc = build_legend(&bd)) != 0)
        goto out;
    size_t nrows = 0, ncells = 0;
    if ((rc = all_rows(&bd, &nrows, &ncells, false)) != 0)
        goto out;
    rc = GPUFL_ENOMEM;
    lo->row = calloc(nrows + 1, sizeof *lo->row);
    lo->cells = calloc(ncells * ncols + 1, sizeof *lo->cells);
    if (!lo->row || !lo->cells)
        goto out;
    nrows = ncells = 0;
    rc = all_rows(&bd, &nrows, &ncells, true);
out:
    free(bd.seek);
    free(bd.letter);
    free(bd.acc);
    free(bd.touched);
    free(bd.sum_v);
    free(bd.sum_w);
    free(bd.sw.st);
    if (rc != 0)
        gpufl__view_layout_free(lo);
    return rc;
}

void gpufl__view_layout_free(gpufl__view_layout *lo)
{
    free(lo->row);
    free(lo->cells);
    free(lo->device);
    lo->row = NULL;
    lo->cells = NULL;
    lo->device = NULL;
    lo->nrows = lo->ndevices = 0;
}
