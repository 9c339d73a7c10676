/*
 * Warp stalls from PC sampling (analysis.h, gpufl__analyze_stalls): the
 * session's samples summed by stall reason, by kernel, by source line and
 * by the innermost gpufl scope of the launches they fall in.
 *
 * Each grouping is a table of rows and a table of (row, reason) cells,
 * both reached through hash maps; a row's top reasons are picked from its
 * cells at the end. A PC sample row is one (PC, reason) of a collection:
 * consecutive rows of one collection and function share the launches
 * they are spread over, so that list is computed once per collection.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/analysis.h"
#include "core/idmap.h"
#include "read/rows.h"

typedef struct cell {
    uint32_t row, reason;
    uint64_t samples;
} cell;

typedef struct grouping {
    gpufl__idmap row_of;  /* key -> row */
    gpufl__idmap cell_of; /* row << 32 | reason -> cell */
    gpufl__ana_stall_row *rows;
    size_t nrows, rows_cap;
    cell *cells;
    size_t ncells, cells_cap;
} grouping;

static void grouping_free(grouping *g)
{
    gpufl__idmap_free(&g->row_of);
    gpufl__idmap_free(&g->cell_of);
    free(g->rows);
    free(g->cells);
}

/* Adds samples of reason to the row of key (made with `name` when new),
 * whose index goes to *row when row is not NULL. */
static int add_to(grouping *g, uint64_t key, uint32_t name, uint32_t reason, uint64_t samples, uint32_t selected,
                  uint32_t *row)
{
    uint32_t r, c;
    if (!gpufl__idmap_get(&g->row_of, key, &r)) {
        if (gpufl__ana_grow(&g->rows, &g->rows_cap, g->nrows + 1, sizeof *g->rows) ||
            gpufl__idmap_put(&g->row_of, key, (uint32_t)g->nrows))
            return GPUFL_ENOMEM;
        r = (uint32_t)g->nrows++;
        memset(&g->rows[r], 0, sizeof g->rows[r]);
        g->rows[r].name = name;
    }
    uint64_t ck = (uint64_t)r << 32 | reason;
    if (!gpufl__idmap_get(&g->cell_of, ck, &c)) {
        if (gpufl__ana_grow(&g->cells, &g->cells_cap, g->ncells + 1, sizeof *g->cells) ||
            gpufl__idmap_put(&g->cell_of, ck, (uint32_t)g->ncells))
            return GPUFL_ENOMEM;
        c = (uint32_t)g->ncells++;
        g->cells[c] = (cell){r, reason, 0};
    }
    g->cells[c].samples += samples;
    g->rows[r].samples += samples;
    if (reason != selected)
        g->rows[r].stalled += samples;
    if (row)
        *row = r;
    return 0;
}

static int add(grouping *g, uint64_t key, uint32_t name, uint32_t reason, uint64_t samples, uint32_t selected)
{
    return add_to(g, key, name, reason, samples, selected, NULL);
}

static void keep_top(gpufl__ana_stall *top, uint32_t reason, uint64_t samples)
{
    for (unsigned i = 0; i < GPUFL__ANA_TOP_STALLS; i++)
        if (samples > top[i].samples) {
            memmove(&top[i + 1], &top[i], (GPUFL__ANA_TOP_STALLS - 1 - i) * sizeof *top);
            top[i] = (gpufl__ana_stall){reason, samples};
            return;
        }
}

static int by_samples(const void *a, const void *b)
{
    const gpufl__ana_stall_row *x = a, *y = b;
    return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

/* The rows with their top stalls (never "selected"), most samples first,
 * at most max; the grouping gives its rows away. */
static gpufl__ana_stall_row *finish(grouping *g, uint32_t selected, size_t max, uint32_t *n)
{
    for (size_t i = 0; i < g->ncells; i++)
        if (g->cells[i].reason != selected)
            keep_top(g->rows[g->cells[i].row].top, g->cells[i].reason, g->cells[i].samples);
    if (g->nrows)
        qsort(g->rows, g->nrows, sizeof *g->rows, by_samples);
    *n = (uint32_t)(g->nrows < max ? g->nrows : max);
    gpufl__ana_stall_row *rows = g->rows;
    g->rows = NULL;
    return rows;
}

/* ---- launches by function ------------------------------------------------------ */

/* Kernel rows of each sampled function, in start order (CSR over the
 * functions' dense numbers), and each function's longest launch. */
typedef struct launches {
    gpufl__idmap fn_of; /* function string id -> dense number */
    uint32_t *first;    /* per function: its rows are rows[first[f]..first[f+1]) */
    uint32_t *rows;
    uint64_t *longest;
    size_t nfn;
} launches;

static uint32_t function_of_kernel(const gpufl__rows *r, size_t k)
{
    uint32_t c = gpufl__k_config(r, k);
    if (c >= r->configs->n)
        return 0;
    return r->configs->mangled[c] ? r->configs->mangled[c] : r->configs->name[c];
}

static int launches_build(launches *L, const gpufl__rows *r)
{
    memset(L, 0, sizeof *L);
    size_t n = gpufl__k_n(r);
    for (size_t k = 0; k < n; k++) {
        uint32_t f = function_of_kernel(r, k), d;
        if (!gpufl__idmap_get(&L->fn_of, f, &d) && gpufl__idmap_put(&L->fn_of, f, (uint32_t)L->nfn++))
            return GPUFL_ENOMEM;
    }
    L->first = calloc(L->nfn + 1, sizeof *L->first);
    L->rows = malloc((n ? n : 1) * sizeof *L->rows);
    L->longest = calloc(L->nfn + 1, sizeof *L->longest);
    if (!L->first || !L->rows || !L->longest)
        return GPUFL_ENOMEM;
    for (size_t k = 0; k < n; k++) {
        uint32_t d = 0;
        (void)gpufl__idmap_get(&L->fn_of, function_of_kernel(r, k), &d);
        L->first[d + 1]++;
        uint64_t dur = gpufl__k_dur(r, k);
        if (dur > L->longest[d])
            L->longest[d] = dur;
    }
    for (size_t f = 0; f < L->nfn; f++)
        L->first[f + 1] += L->first[f];
    uint32_t *fill = calloc(L->nfn + 1, sizeof *fill);
    if (!fill)
        return GPUFL_ENOMEM;
    for (size_t k = 0; k < n; k++) { /* the kernel table is in start order: so is each list */
        uint32_t d = 0;
        (void)gpufl__idmap_get(&L->fn_of, function_of_kernel(r, k), &d);
        L->rows[L->first[d] + fill[d]++] = (uint32_t)k;
    }
    free(fill);
    return 0;
}

static void launches_free(launches *L)
{
    gpufl__idmap_free(&L->fn_of);
    free(L->first);
    free(L->rows);
    free(L->longest);
}

/* ---- spreading a collection over its launches ------------------------------------- */

typedef struct share {
    uint32_t scope; /* scope name id, 0 none */
    double weight;  /* fraction of the collection's samples */
} share;

typedef struct spread {
    uint64_t ts, since;
    uint32_t function, device;
    bool valid;
    share *v;
    size_t n, cap;
} spread;

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

static int spread_over(spread *s, const gpufl__rows *r, const launches *L, const gpufl__idmap *scope_names,
                       uint64_t slack)
{
    s->n = 0;
    uint32_t d;
    if (!gpufl__idmap_get(&L->fn_of, s->function, &d))
        return 0;
    uint64_t lo = s->since > slack ? s->since - slack : 0, hi = s->ts;
    uint64_t earliest = lo > L->longest[d] ? lo - L->longest[d] : 0;
    /* the last launch that started by hi, then back while one could still overlap */
    size_t a = L->first[d], b = L->first[d + 1];
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (gpufl__k_start(r, L->rows[mid]) <= hi)
            a = mid + 1;
        else
            b = mid;
    }
    double total = 0;
    for (size_t i = a; i > L->first[d];) {
        size_t k = L->rows[--i];
        uint64_t start = gpufl__k_start(r, k);
        if (start < earliest)
            break;
        if (gpufl__k_device(r, k) != s->device)
            continue;
        uint64_t ov = overlap(start, gpufl__k_end(r, k), lo, hi);
        if (!ov)
            continue;
        uint32_t name = 0;
        (void)gpufl__idmap_get(scope_names, gpufl__k_scope(r, k), &name);
        if (gpufl__ana_grow(&s->v, &s->cap, s->n + 1, sizeof *s->v))
            return GPUFL_ENOMEM;
        s->v[s->n++] = (share){name, (double)ov};
        total += (double)ov;
    }
    for (size_t i = 0; i < s->n; i++)
        s->v[i].weight /= total;
    return 0;
}

/* The launches of the collection's stretch, or of the wider one when
 * none ran in it (CUPTI decoding late under a flood of samples). */
static int spread_compute(spread *s, const gpufl__rows *r, const launches *L, const gpufl__idmap *scope_names)
{
    int rc = spread_over(s, r, L, scope_names, GPUFL__ANA_PCS_SLACK_NS);
    if (rc == 0 && !s->n)
        rc = spread_over(s, r, L, scope_names, GPUFL__ANA_PCS_WIDE_SLACK_NS);
    return rc;
}

/* ---- the analysis ------------------------------------------------------------------- */

/* The string id of the reason "selected" (a warp that issued), looked up
 * among the reasons the rows use; UINT32_MAX when none is. */
static uint32_t selected_id(const gpufl_trace *t, const gpufl_trace_pc_samples *p)
{
    uint32_t last = UINT32_MAX;
    for (size_t i = 0; i < p->n; i++) {
        if (p->reason[i] == last)
            continue;
        last = p->reason[i];
        const char *x = gpufl_trace_string(t, last);
        if (x && !strcmp(x, "selected"))
            return last;
    }
    return UINT32_MAX;
}

typedef struct job {
    const gpufl__rows *r;
    const gpufl_trace_pc_samples *p;
    uint32_t selected;
    grouping reasons, kernels, lines, scopes;
    gpufl__idmap scope_names, kernel_names;
    launches L;
    spread sp;
} job;

static int scope_share(job *j, gpufl__ana_stalls *out, size_t i)
{
    const gpufl_trace_pc_samples *p = j->p;
    spread *s = &j->sp;
    if (!s->valid || s->ts != p->ts_ns[i] || s->since != p->since_ns[i] || s->function != p->function[i] ||
        s->device != p->device[i]) {
        *s = (spread){.ts = p->ts_ns[i],
                      .since = p->since_ns[i],
                      .function = p->function[i],
                      .device = p->device[i],
                      .valid = true,
                      .v = s->v,
                      .cap = s->cap};
        if (spread_compute(s, j->r, &j->L, &j->scope_names))
            return GPUFL_ENOMEM;
    }
    if (!s->n) {
        out->unattributed += p->samples[i];
        return 0;
    }
    for (size_t k = 0; k < s->n; k++) {
        uint64_t part = (uint64_t)((double)p->samples[i] * s->v[k].weight + 0.5);
        if (part && add(&j->scopes, s->v[k].scope, s->v[k].scope, p->reason[i], part, j->selected))
            return GPUFL_ENOMEM;
    }
    return 0;
}

static int index_names(job *j)
{
    const gpufl__rows *r = j->r;
    for (size_t i = 0; i < r->scopes->n; i++)
        if (gpufl__idmap_put(&j->scope_names, r->scopes->id[i], r->scopes->name[i]))
            return GPUFL_ENOMEM;
    for (size_t c = 0; c < r->configs->n; c++) {
        uint32_t f = r->configs->mangled[c] ? r->configs->mangled[c] : r->configs->name[c];
        if (gpufl__idmap_put(&j->kernel_names, f, r->configs->name[c]))
            return GPUFL_ENOMEM;
    }
    return launches_build(&j->L, r);
}

static int sum(job *j, gpufl__ana_stalls *out)
{
    const gpufl_trace_pc_samples *p = j->p;
    for (size_t i = 0; i < p->n; i++) {
        uint32_t f = p->function[i], reason = p->reason[i], name = f;
        uint64_t n = p->samples[i];
        (void)gpufl__idmap_get(&j->kernel_names, f, &name);
        out->samples += n;
        if (reason != j->selected)
            out->stalled += n;
        if (add(&j->reasons, reason, reason, reason, n, j->selected) ||
            add(&j->kernels, f, name, reason, n, j->selected))
            return GPUFL_ENOMEM;
        if (p->file[i] && p->line[i]) {
            uint32_t row;
            if (add_to(&j->lines, (uint64_t)p->file[i] << 32 | p->line[i], name, reason, n, j->selected, &row))
                return GPUFL_ENOMEM;
            j->lines.rows[row].file = p->file[i];
            j->lines.rows[row].line = p->line[i];
        } else {
            out->no_line += n;
        }
        if (scope_share(j, out, i))
            return GPUFL_ENOMEM;
    }
    return 0;
}

/* Each kernel row's GPU time: the launches of its function (the row's key),
 * before finish() sorts the rows away from their keys. */
static void kernel_times(job *j)
{
    const gpufl__idmap *m = &j->kernels.row_of;
    for (size_t slot = 0; m->mask && slot <= m->mask; slot++) {
        uint32_t d;
        if (!m->vals[slot] || !gpufl__idmap_get(&j->L.fn_of, m->keys[slot], &d))
            continue;
        gpufl__ana_stall_row *row = &j->kernels.rows[m->vals[slot] - 1];
        for (size_t k = j->L.first[d]; k < j->L.first[d + 1]; k++)
            row->kernel_ns += gpufl__k_dur(j->r, j->L.rows[k]);
    }
}

int gpufl__analyze_stalls(const gpufl_trace *t, gpufl__ana_stalls *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__rows r;
    gpufl__rows_open(&r, t);
    job j = {.r = &r, .p = gpufl_trace_get_pc_samples(t)};
    if (!j.p || !j.p->n)
        return 0;
    j.selected = selected_id(t, j.p);
    int rc = index_names(&j);
    if (rc == 0)
        rc = sum(&j, out);
    if (rc == 0) {
        gpufl__ana_stall_row *reasons = finish(&j.reasons, UINT32_MAX, SIZE_MAX, &out->nreasons);
        out->reasons = malloc((out->nreasons ? out->nreasons : 1) * sizeof *out->reasons);
        if (!out->reasons)
            rc = GPUFL_ENOMEM;
        for (uint32_t i = 0; rc == 0 && i < out->nreasons; i++)
            out->reasons[i] = (gpufl__ana_stall){reasons[i].name, reasons[i].samples};
        free(reasons);
        kernel_times(&j);
        out->kernels = finish(&j.kernels, j.selected, SIZE_MAX, &out->nkernels);
        out->lines = finish(&j.lines, j.selected, GPUFL__ANA_TOP_LINES, &out->nlines);
        out->scopes = finish(&j.scopes, j.selected, SIZE_MAX, &out->nscopes);
    }
    grouping_free(&j.reasons);
    grouping_free(&j.kernels);
    grouping_free(&j.lines);
    grouping_free(&j.scopes);
    gpufl__idmap_free(&j.scope_names);
    gpufl__idmap_free(&j.kernel_names);
    launches_free(&j.L);
    free(j.sp.v);
    if (rc != 0)
        gpufl__ana_stalls_free(out);
    return rc;
}

void gpufl__ana_stalls_free(gpufl__ana_stalls *s)
{
    if (!s)
        return;
    free(s->reasons);
    free(s->kernels);
    free(s->lines);
    free(s->scopes);
    memset(s, 0, sizeof *s);
}
