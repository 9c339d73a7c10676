/*
 * Leaks by repetition (analysis.h, "Leaks"): for every scope or NVTX range
 * name repeated often enough to be a step, live memory after each
 * repetition, a line fitted through it after a warm-up, a verdict, and the
 * allocations that grew, by stack.
 *
 * Why a fit rather than "never freed": a caching allocator never returns
 * its segments, so everything it holds is never freed; what tells a leak
 * is memory that keeps growing step after step once the cache has filled.
 * The warm-up (the first 20 % of repetitions, at least one) leaves out that
 * filling. The thresholds: p < 0.01 says the growth is not noise; r² >= 0.5
 * that it is steady rather than one jump; 1 MiB over the fitted steps that
 * it matters (a caching allocator rounds blocks up to 512 B and segments
 * to 2 MiB, so smaller rises are its bookkeeping).
 *
 * Threads: any. Sizes: one value per instance of a repeated name; the
 * allocations that grew are replayed once per leak found (or per name
 * asked for), O(allocation rows) each.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_mem_series.h"
#include "analyze/ana_stats.h"
#include "analyze/ana_util.h"
#include "core/event.h"

#define P_MAX 0.01
#define R2_MIN 0.5
#define RISE_MIN (1ull << 20)
#define MIB (1024.0 * 1024.0)

const char *gpufl__ana_severity_name(uint8_t s)
{
    static const char *const names[] = {"none", "low", "medium", "high", "critical"};
    return s < sizeof names / sizeof names[0] ? names[s] : "?";
}

/* By the rise against the device's memory, else by the slope. */
static uint8_t severity(double rise, double slope, uint64_t total)
{
    if (total) {
        double share = rise / (double)total;
        return share >= 0.10    ? GPUFL__ANA_SEVERITY_CRITICAL
               : share >= 0.02  ? GPUFL__ANA_SEVERITY_HIGH
               : share >= 0.005 ? GPUFL__ANA_SEVERITY_MEDIUM
                                : GPUFL__ANA_SEVERITY_LOW;
    }
    return slope >= 64 * MIB  ? GPUFL__ANA_SEVERITY_CRITICAL
           : slope >= 8 * MIB ? GPUFL__ANA_SEVERITY_HIGH
           : slope >= MIB     ? GPUFL__ANA_SEVERITY_MEDIUM
                              : GPUFL__ANA_SEVERITY_LOW;
}

static void suggest(gpufl__ana_leak *l, const char *text)
{
    if (l->nsuggestions < GPUFL__ANA_LEAK_MAX_SUGGESTIONS)
        l->suggestions[l->nsuggestions++] = text;
}

static void suggestions(gpufl__ana_leak *l, const ana_mem_dev *d)
{
    if (!l->detected) {
        if (l->slope > 0 && l->p_value < 0.05 && l->increase_bytes >= (int64_t)RISE_MIN)
            suggest(l, "memory grew a little from one repetition to the next, not steadily enough to call it a "
                       "leak: record more repetitions to be sure");
        return;
    }
    if (l->series == GPUFL__ANA_MEM_ALLOCATED) {
        suggest(l, "tensors kept across steps: a list or dict that grows every step (outputs, losses or "
                   "activations kept for logging) holds their memory; keep Python numbers or detached CPU "
                   "copies instead");
        suggest(l, "a loss summed with its graph (total += loss) keeps every step's autograd graph alive: "
                   "add loss.item() or loss.detach() instead");
        if (l->ngroups)
            suggest(l, "the stacks listed with it made the allocations that grew and are still live: find what keeps "
                       "those tensors referenced");
        else if (!l->blocks)
            suggest(l, "record the framework's blocks (gpufl.torch memory tracking) to see which code made "
                       "the allocations that grew");
        return;
    }
    suggest(l, "driver allocations made in every repetition are not freed: free them, or allocate once and "
               "reuse the buffer");
    if (!d->driver_frees)
        suggest(l, "no driver free was recorded: under a caching allocator (PyTorch) its segments grow when "
                   "tensors are kept across steps or losses are summed with their graph (use .item() or "
                   ".detach()); record its layer (gpufl.torch) to tell a leak from fragmentation");
}

/* One instance of a name. */
typedef struct inst {
    uint32_t name;
    uint64_t begin, end;
    size_t row;
} inst;

static int inst_cmp(const void *x, const void *y)
{
    const inst *p = x, *q = y;
    if (p->name != q->name)
        return p->name < q->name ? -1 : 1;
    if (p->begin != q->begin)
        return p->begin < q->begin ? -1 : 1;
    if (p->end != q->end)
        return p->end < q->end ? -1 : 1;
    return (p->row > q->row) - (p->row < q->row);
}

/* Live bytes after instance k of run[0..n) ends: of a replay, the value at
 * its end; of the sampled allocator table, the first state recorded after
 * it and before the next repetition begins (states are taken at step
 * boundaries), else the last one before its end. */
static bool live_after(const ana_mem_dev *d, uint8_t series, const inst *run, size_t n, size_t k, uint64_t *v)
{
    const ana_series *x = &d->s[series];
    if (series == GPUFL__ANA_MEM_ALLOCATED && d->framework_source == GPUFL__ANA_FW_ALLOCATOR) {
        uint64_t before = k + 1 < n ? run[k + 1].begin : UINT64_MAX;
        if (before > run[k].end && gpufl__ana_series_first_in(x, run[k].end, before, v))
            return true;
    }
    return gpufl__ana_series_at(x, run[k].end, v);
}

/* Whether memory row i is one of the series' own allocations on device d. */
static bool own_row(const gpufl__rows *a, size_t i, uint32_t device, uint8_t series)
{
    if (gpufl__m_failed(a, i) || gpufl__m_device(a, i) != device)
        return false;
    if (series == GPUFL__ANA_MEM_ALLOCATED)
        return gpufl__m_framework(a, i);
    uint8_t kind = gpufl__m_kind(a, i);
    return !gpufl__m_framework(a, i) && kind != GFL_MEM_PAGEABLE && kind != GFL_MEM_PINNED;
}

/* Whether ts falls in one of the fitted repetitions run[from..n). */
static bool in_run(const inst *run, size_t from, size_t n, uint64_t ts)
{
    size_t lo = from, hi = n; /* the last one beginning at or before ts */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (run[mid].begin <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k > from && k + 2 > lo; k--) /* it, and the one before (threads overlap) */
        if (ts <= run[k - 1].end)
            return true;
    return false;
}

static int group_cmp(const void *x, const void *y)
{
    const gpufl__ana_leak_group *p = x, *q = y;
    if (p->bytes != q->bytes)
        return p->bytes > q->bytes ? -1 : 1;
    return (p->stack > q->stack) - (p->stack < q->stack);
}

/* The allocations made in the fitted repetitions and live after the last:
 * a replay of the series' rows up to that end. */
static int grew(const gpufl__rows *a, const ana_mem_dev *d, const inst *run, size_t n, size_t from, gpufl__ana_leak *l)
{
    ana_map live = {0}, by_stack = {0};
    gpufl__ana_leak_group *g = NULL;
    size_t ng = 0, cap = 0;
    uint64_t last = run[n - 1].end;
    int rc = 0;
    for (size_t i = 0; i < gpufl__m_n(a) && gpufl__m_ts(a, i) <= last && rc == 0; i++) {
        if (!own_row(a, i, d->device, l->series))
            continue;
        uint64_t addr = gpufl__m_address(a, i);
        uint32_t j;
        if (gpufl__m_is_free(a, i)) {
            gpufl__ana_map_del(&live, d->device, addr);
            continue;
        }
        int put = gpufl__ana_map_put(&live, d->device, addr, (uint32_t)i, &j);
        if (put < 0)
            rc = put;
        else if (put == 1)
            gpufl__ana_map_set(&live, d->device, addr, (uint32_t)i);
    }
    for (size_t s = 0; s < live.cap && rc == 0; s++) {
        if (!live.slots[s].used)
            continue;
        size_t i = live.slots[s].v;
        if (!in_run(run, from, n, gpufl__m_ts(a, i)))
            continue;
        uint32_t c = gpufl__m_caller(a, i), stack = c < a->callers->n ? gpufl__caller_stack(a, c) : 0, k;
        int put = gpufl__ana_map_put(&by_stack, 0, stack, (uint32_t)ng, &k);
        if (put < 0 || (put == 0 && gpufl__ana_grow(&g, &cap, ng + 1, sizeof *g) != 0)) {
            rc = GPUFL_ENOMEM;
            break;
        }
        if (put == 0)
            g[ng++] = (gpufl__ana_leak_group){.stack = stack};
        g[k].count++;
        g[k].bytes += gpufl__m_bytes(a, i);
        l->grew_count++;
        l->grew_bytes += gpufl__m_bytes(a, i);
    }
    if (rc == 0 && ng) {
        qsort(g, ng, sizeof *g, group_cmp);
        l->ngroups = ng < GPUFL__ANA_LEAK_MAX_GROUPS ? (uint32_t)ng : GPUFL__ANA_LEAK_MAX_GROUPS;
        memcpy(l->groups, g, l->ngroups * sizeof *g);
    }
    free(g);
    gpufl__ana_map_free(&live);
    gpufl__ana_map_free(&by_stack);
    return rc;
}

typedef struct leaks_build {
    ana_mem_set *m;
    const gpufl__ana_leak_options *o;
    gpufl__ana_leak *rows;
    size_t n, cap;
} leaks_build;

/* Fits one name's run of n >= min_steps instances; adds a row when at
 * least three repetitions remain after the warm-up. */
static int fit_run(leaks_build *b, ana_mem_dev *d, uint8_t series, uint8_t tree, const inst *run, size_t n)
{
    const gpufl__rows *a = b->m->a;
    uint64_t *live = malloc(n * sizeof *live);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    int rc = live && x && y ? 0 : GPUFL_ENOMEM;
    /* a sampled series is unknown before its first state: those first
     * repetitions are left out (after it, the series stays known) */
    size_t skip = 0, known = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        if (live_after(d, series, run, n, k, &live[known]))
            known++;
        else if (!known)
            skip++;
    }
    run += skip;
    n -= skip;
    if (known > n)
        known = n;
    size_t warmup = (known + 4) / 5 ? (known + 4) / 5 : 1;
    if (rc != 0 || known < b->o->min_steps || known < warmup + 3) {
        free(live);
        free(x);
        free(y);
        return rc;
    }
    for (size_t k = warmup; k < known; k++) {
        x[k - warmup] = (double)k;
        y[k - warmup] = (double)live[k];
    }
    ana_linfit f;
    gpufl__ana_linfit(x, y, known - warmup, &f);
    free(x);
    free(y);
    if (gpufl__ana_grow(&b->rows, &b->cap, b->n + 1, sizeof *b->rows) != 0) {
        free(live);
        return GPUFL_ENOMEM;
    }
    gpufl__ana_leak *l = &b->rows[b->n++];
    memset(l, 0, sizeof *l);
    l->tree = tree;
    l->name = run[0].name;
    l->device = d->device;
    l->series = series;
    l->repetitions = (uint32_t)known;
    l->warmup = (uint32_t)warmup;
    l->live = live;
    l->slope = f.slope;
    l->intercept = f.intercept;
    l->r_squared = f.r_squared;
    l->p_value = f.p_value;
    double rise = f.slope * (double)(known - warmup - 1);
    l->increase_bytes = (int64_t)llround(rise);
    l->window_ns = gpufl__span(run[warmup].begin, run[known - 1].end);
    l->detected = f.p_value < P_MAX && f.slope > 0 && f.r_squared >= R2_MIN && rise >= (double)RISE_MIN;
    l->severity = l->detected ? severity(rise, f.slope, d->total_bytes) : GPUFL__ANA_SEVERITY_NONE;
    l->blocks = series == GPUFL__ANA_MEM_ALLOCATED && d->block_rows > 0;
    bool rows_of_series = series == GPUFL__ANA_MEM_DRIVER || l->blocks;
    if ((l->detected || b->o->scope) && rows_of_series)
        rc = grew(a, d, run, known, warmup, l);
    suggestions(l, d);
    return rc;
}

static int tree_runs(leaks_build *b, ana_mem_dev *d, uint8_t series, uint8_t tree)
{
    const gpufl__rows *a = b->m->a;
    const gpufl_trace_scopes *s =
        gpufl__rows_ranges(a, tree == GPUFL__ANA_TREE_SCOPES ? GPUFL__TBL_SCOPE : GPUFL__TBL_NVTX);
    inst *v = malloc((s->n ? s->n : 1) * sizeof *v);
    if (!v)
        return GPUFL_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t name = gpufl__s_name(s, i);
        if (gpufl__s_instant(s, i) || !name)
            continue;
        if (b->o->scope && strcmp(gpufl__rows_str(a, name), b->o->scope) != 0)
            continue;
        v[n++] = (inst){name, gpufl__s_begin(s, i), gpufl__s_end(s, i), i};
    }
    if (n)
        qsort(v, n, sizeof *v, inst_cmp);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i;
        while (j < n && v[j].name == v[i].name)
            j++;
        if (j - i >= b->o->min_steps)
            rc = fit_run(b, d, series, tree, v + i, j - i);
        i = j;
    }
    free(v);
    return rc;
}

static int leak_cmp(const void *x, const void *y, void *ctx)
{
    const gpufl__ana_leak *p = x, *q = y;
    if (p->detected != q->detected)
        return p->detected ? -1 : 1;
    if (p->severity != q->severity)
        return p->severity > q->severity ? -1 : 1;
    /* the program's own scopes before NVTX ranges, and the coarsest unit
     * first: a leaking step makes every op range inside it rise too, and
     * the step (fewer repetitions) is what the user repeats */
    if (p->tree != q->tree)
        return p->tree < q->tree ? -1 : 1;
    if (p->repetitions != q->repetitions)
        return p->repetitions < q->repetitions ? -1 : 1;
    if (p->increase_bytes != q->increase_bytes)
        return p->increase_bytes > q->increase_bytes ? -1 : 1;
    int c = gpufl__ana_strcmp(ctx, p->name, q->name);
    if (c)
        return c;
    return (p->device > q->device) - (p->device < q->device);
}

int gpufl__ana_leaks_with(ana_mem_set *m, const gpufl__ana_leak_options *o, gpufl__ana_leaks *out)
{
    memset(out, 0, sizeof *out);
    gpufl__ana_leak_options opt = {.min_steps = GPUFL__ANA_LEAK_MIN_STEPS};
    if (o) {
        if (o->min_steps && o->min_steps < 4)
            return GPUFL_EINVAL;
        opt.min_steps = o->min_steps ? o->min_steps : opt.min_steps;
        opt.scope = o->scope;
    }
    out->min_steps = opt.min_steps;
    leaks_build b = {.m = m, .o = &opt};
    int rc = 0;
    for (uint32_t k = 0; k < m->n && rc == 0; k++) {
        ana_mem_dev *d = &m->devs[k];
        uint8_t series = gpufl__ana_mem_live_series(d);
        if (series == GPUFL__ANA_MEM_SERIES)
            continue;
        rc = tree_runs(&b, d, series, GPUFL__ANA_TREE_SCOPES);
        if (rc == 0)
            rc = tree_runs(&b, d, series, GPUFL__ANA_TREE_NVTX);
    }
    out->rows = b.rows;
    out->n = (uint32_t)b.n;
    if (rc != 0) {
        gpufl__ana_leaks_free(out);
        return rc;
    }
    if (out->n)
        qsort_r(out->rows, out->n, sizeof *out->rows, leak_cmp, (void *)m->a->t);
    for (uint32_t i = 0; i < out->n; i++)
        out->detected += out->rows[i].detected;
    return 0;
}

int gpufl__analyze_leaks(const gpufl_trace *t, const gpufl__ana_leak_options *o, gpufl__ana_leaks *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    if (o && o->min_steps && o->min_steps < 4)
        return GPUFL_EINVAL;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    ana_mem_set m;
    int rc = gpufl__ana_mem_set_build(&a, &m);
    if (rc != 0)
        return rc;
    rc = gpufl__ana_leaks_with(&m, o, out);
    gpufl__ana_mem_set_free(&m);
    return rc;
}

void gpufl__ana_leaks_free(gpufl__ana_leaks *l)
{
    if (!l)
        return;
    for (uint32_t i = 0; i < l->n && l->rows; i++)
        free(l->rows[i].live);
    free(l->rows);
    memset(l, 0, sizeof *l);
}

int gpufl__ana_leak_rides_on(const gpufl__ana_leaks *l, uint32_t i)
{
    const gpufl__ana_leak *r = &l->rows[i];
    if (!r->detected || r->tree != GPUFL__ANA_TREE_NVTX)
        return -1;
    for (uint32_t j = 0; j < i; j++) {
        const gpufl__ana_leak *s = &l->rows[j];
        /* a range repeated k times a step rises by 1/k of the step's slope
         * each time, by as much over the run; one also run outside the
         * step (before it) shares its slope: either makes it the step's */
        if (s->detected && s->tree == GPUFL__ANA_TREE_SCOPES && s->device == r->device && s->increase_bytes > 0 &&
            r->repetitions >= s->repetitions &&
            (fabs((double)(r->increase_bytes - s->increase_bytes)) <= 0.1 * (double)s->increase_bytes ||
             fabs(r->slope - s->slope) <= 0.1 * s->slope))
            return (int)j;
    }
    return -1;
}
