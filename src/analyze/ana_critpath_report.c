/*
 * The report's critical path (ana_critpath.h, gpufl__ana_critpath_of): the
 * step found from the trace's scope and NVTX tables, its median-long
 * occurrence picked, the graph built over that window and walked back
 * from the step's end in the unchanged schedule (the recorded times).
 *
 * Cost: one pass over the scopes and ranges, then what the window holds.
 * Threads: the caller's (the report's second half, ana_report.c).
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_critpath.h"
#include "analyze/ana_util.h"
#include "read/rows.h"

/* A step with more GPU work than this is not walked: the report also runs
 * inside the recorded program (gpufl_generate_report), where a graph of
 * millions of nodes would be hundreds of MB (about 150 bytes a node). */
#define MAX_WORK 1000000

typedef struct occ {
    uint64_t begin, end;
} occ;

static int by_length(const void *a, const void *b)
{
    const occ *x = a, *y = b;
    uint64_t p = x->end - x->begin, q = y->end - y->begin;
    if (p != q)
        return p < q ? -1 : 1;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The step's table and name: the most repeated outermost range, one whose
 * name says "step" first, then the first seen. False when none repeats. */
static bool pick_step(const gpufl__rows *r, unsigned *table, uint32_t *name)
{
    ana_map count = {0};
    uint32_t best_n = 0;
    bool best_step = false;
    for (unsigned tbl = GPUFL__TBL_SCOPE; tbl <= GPUFL__TBL_NVTX; tbl++) {
        const gpufl_trace_scopes *s = gpufl__rows_ranges(r, tbl);
        for (size_t i = 0; i < s->n; i++) {
            if (gpufl__s_depth(s, i) || gpufl__s_instant(s, i) || gpufl__s_unended(s, i) || !gpufl__s_tid(s, i))
                continue;
            uint32_t c, id = gpufl__s_name(s, i);
            if (!id || gpufl__ana_map_put(&count, id, tbl, 0, &c) < 0)
                continue;
            gpufl__ana_map_set(&count, id, tbl, ++c);
            const char *text = gpufl__rows_str(r, id);
            bool step = text && strcasestr(text, "step");
            if (c >= 2 && ((step && !best_step) || (step == best_step && c > best_n))) {
                *table = tbl;
                *name = id;
                best_n = c;
                best_step = step;
            }
        }
    }
    gpufl__ana_map_free(&count);
    return best_n >= 2;
}

/* The median-long occurrence of the step into c. */
static int pick_occurrence(const gpufl__rows *r, unsigned tbl, gpufl__ana_critpath *c)
{
    const gpufl_trace_scopes *s = gpufl__rows_ranges(r, tbl);
    occ *o = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (gpufl__s_name(s, i) != c->step_name || gpufl__s_depth(s, i) || gpufl__s_instant(s, i) ||
            gpufl__s_unended(s, i) || !gpufl__s_tid(s, i))
            continue;
        if (gpufl__ana_grow(&o, &cap, n + 1, sizeof *o) != 0) {
            free(o);
            return GPUFL_ENOMEM;
        }
        o[n++] = (occ){gpufl__s_begin(s, i), gpufl__s_end(s, i)};
    }
    occ *by_len = malloc((n ? n : 1) * sizeof *by_len);
    if (!by_len) {
        free(o);
        return GPUFL_ENOMEM;
    }
    memcpy(by_len, o, n * sizeof *o);
    qsort(by_len, n, sizeof *by_len, by_length);
    occ m = by_len[ana_rank(n, 50)];
    c->steps = n;
    c->begin_ns = m.begin;
    c->end_ns = m.end;
    for (size_t i = 0; i < n; i++) /* its place in begin order (the ranges are by begin) */
        c->occurrence += o[i].begin < m.begin || (o[i].begin == m.begin && o[i].end <= m.end);
    free(by_len);
    free(o);
    return 0;
}

/* Rows of a table sorted by start that start in [from, to]. */
static size_t starting_in(const uint64_t *start, size_t n, uint64_t from, uint64_t to)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (start[mid] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t a = lo;
    hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (start[mid] <= to)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - a;
}

static int walk(const gpufl_trace *t, gpufl__ana_critpath *c)
{
    gpufl__graph g;
    int rc = gpufl__graph_build_window(t, c->begin_ns, c->end_ns, &g);
    if (rc)
        return rc;
    gpufl__sched s;
    char err[256];
    rc = gpufl__whatif_schedule(&g, NULL, &s, err, sizeof err);
    uint32_t b = GPUFL__GNONE;
    for (uint32_t i = 0; rc == 0 && i + 1 < g.n && b == GPUFL__GNONE; i++) {
        const gpufl__gnode *n = &g.nodes[i];
        if (n->kind == GPUFL__GN_MARK && n->sub == 0 && n->name == c->step_name && n->range == c->nvtx &&
            n->start == c->begin_ns && g.nodes[i + 1].end == c->end_ns)
            b = i;
    }
    if (rc == 0 && b != GPUFL__GNONE)
        rc = gpufl__critpath_add(&g, &s, b + 1, s.start[b], &c->path);
    if (rc == 0) {
        gpufl__critpath_sort(&g, &c->path);
        c->work = malloc((c->path.nwork ? c->path.nwork : 1) * sizeof *c->work);
        rc = c->work ? 0 : GPUFL_ENOMEM;
    }
    for (size_t i = 0; rc == 0 && i < c->path.nwork; i++) {
        const gpufl__gnode *n = &g.nodes[c->path.work[i]];
        c->work[c->nwork++] = (gpufl__ana_cp_work){(uint8_t)(n->kind == GPUFL__GN_KERNEL ? GPUFL__TBL_KERNEL
                                                             : n->kind == GPUFL__GN_COPY ? GPUFL__TBL_COPY
                                                                                         : GPUFL__TBL_MEMSET),
                                                   n->row};
    }
    free(c->path.work);
    c->path.work = NULL;
    c->path.nwork = c->path.wcap = 0;
    if (s.n)
        gpufl__sched_free(&s);
    gpufl__graph_free(&g);
    return rc;
}

int gpufl__ana_critpath_of(const gpufl_trace *t, gpufl__ana_critpath **out)
{
    if (!out)
        return GPUFL_EINVAL;
    *out = NULL;
    if (!t)
        return GPUFL_EINVAL;
    gpufl__rows r;
    gpufl__rows_open(&r, t);
    unsigned tbl = GPUFL__TBL_SCOPE; /* set by pick_step when it finds one */
    uint32_t name = 0;
    if (!pick_step(&r, &tbl, &name))
        return 0;
    gpufl__ana_critpath *c = calloc(1, sizeof *c);
    if (!c)
        return GPUFL_ENOMEM;
    c->step_name = name;
    c->nvtx = tbl == GPUFL__TBL_NVTX;
    int rc = pick_occurrence(&r, tbl, c);
    size_t work = starting_in(r.kernels->start_ns, r.kernels->n, c->begin_ns, c->end_ns) +
                  starting_in(r.copies->start_ns, r.copies->n, c->begin_ns, c->end_ns) +
                  starting_in(r.memsets->start_ns, r.memsets->n, c->begin_ns, c->end_ns);
    if (rc == 0 && work > MAX_WORK) {
        gpufl__ana_critpath_free(c);
        return 0;
    }
    if (rc == 0)
        rc = walk(t, c);
    if (rc) {
        gpufl__ana_critpath_free(c);
        /* a cycle (damaged input) leaves the report without the section, not without the report */
        return rc == GPUFL_ECORRUPT ? 0 : rc;
    }
    *out = c;
    return 0;
}

void gpufl__ana_critpath_free(gpufl__ana_critpath *c)
{
    if (!c)
        return;
    gpufl__critpath_free(&c->path);
    free(c->work);
    free(c);
}
