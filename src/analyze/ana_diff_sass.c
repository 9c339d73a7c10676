/*
 * SASS metrics of two sessions compared (ana_diff.h, gpufl__diff_sass):
 * for each kernel both sessions measured, its coalescing and its active
 * lanes when either moved by GPUFL__DIFF_SASS_MOVE_PCT points or more.
 * Kernels are matched by name as text: each session has its own string
 * table. A few kernels a session at most (tens), so a linear match.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_diff.h"
#include "analyze/ana_util.h"

static const char *text(const gpufl_trace *t, uint32_t id)
{
    const char *s = gpufl_trace_string(t, id);
    return s ? s : "";
}

static double pct(double ratio) { return ratio < 0 ? -1.0 : 100.0 * ratio; }

static const gpufl__ana_sass_row *kernel_named(const gpufl_trace *t, const gpufl__ana_sass *s, const char *name)
{
    for (uint32_t i = 0; i < s->n_kernels; i++)
        if (!strcmp(text(t, s->kernels[i].name), name))
            return &s->kernels[i];
    return NULL;
}

static int add(gpufl__diff *d, size_t *cap, gpufl__diff_sass_row row)
{
    if (gpufl__ana_grow(&d->sass, cap, d->nsass + 1, sizeof *d->sass))
        return GPUFL_ENOMEM;
    d->sass[d->nsass++] = row;
    return 0;
}

static int by_kernel(const void *a, const void *b)
{
    const gpufl__diff_sass_row *x = a, *y = b;
    int k = strcmp(x->kernel, y->kernel);
    return k ? k : strcmp(x->metric, y->metric);
}

int gpufl__diff_sass(gpufl__diff *out, const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                     const gpufl__ana_report *c)
{
    const gpufl__ana_sass *sb = &b->sass, *sc = &c->sass;
    out->sass_compared = sb->rows && sc->rows;
    if (!out->sass_compared)
        return 0;
    size_t cap = 0;
    for (uint32_t i = 0; i < sb->n_kernels; i++) {
        const gpufl__ana_sass_row *kb = &sb->kernels[i];
        const char *name = text(bt, kb->name);
        const gpufl__ana_sass_row *kc = kernel_named(ct, sc, name);
        if (!kc)
            continue; /* new and gone kernels are the kernel comparison's */
        const struct {
            const char *metric;
            double base, cand;
        } m[] = {{"coalescing", pct(kb->coalescing), pct(kc->coalescing)},
                 {"active_lanes", pct(kb->active), pct(kc->active)}};
        for (size_t j = 0; j < sizeof m / sizeof *m; j++)
            if (m[j].base >= 0 && m[j].cand >= 0 && fabs(m[j].base - m[j].cand) >= GPUFL__DIFF_SASS_MOVE_PCT &&
                add(out, &cap, (gpufl__diff_sass_row){name, m[j].metric, m[j].base, m[j].cand}))
                return GPUFL_ENOMEM;
    }
    if (out->nsass > 1)
        qsort(out->sass, out->nsass, sizeof *out->sass, by_kernel);
    return 0;
}
