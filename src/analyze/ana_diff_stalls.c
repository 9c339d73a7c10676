/*
 * Warp stalls of two sessions compared (ana_diff.h, gpufl__diff_stalls):
 * the session's stall reasons whose share moved, then each kernel both
 * sessions sampled enough whose top stall changed or moved. Strings are
 * compared as text: each session has its own string table.
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

static int add(gpufl__diff *d, size_t *cap, gpufl__diff_stall row)
{
    if (gpufl__ana_grow(&d->stalls, cap, d->nstalls + 1, sizeof *d->stalls))
        return GPUFL_ENOMEM;
    d->stalls[d->nstalls++] = row;
    return 0;
}

static double share(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

static bool moved(double a, double b) { return a >= 0 && b >= 0 && fabs(a - b) >= GPUFL__DIFF_STALL_MOVE_PCT; }

/* The session's share of reason (by text), 0 when it has none. */
static double session_share(const gpufl_trace *t, const gpufl__ana_stalls *s, const char *reason)
{
    for (uint32_t i = 0; i < s->nreasons; i++)
        if (!strcmp(text(t, s->reasons[i].reason), reason))
            return share(s->reasons[i].samples, s->samples);
    return 0.0;
}

static int session_rows(gpufl__diff *d, size_t *cap, const gpufl_trace *bt, const gpufl__ana_stalls *b,
                        const gpufl_trace *ct, const gpufl__ana_stalls *c)
{
    for (int side = 0; side < 2; side++) {
        const gpufl_trace *t = side ? ct : bt;
        const gpufl__ana_stalls *s = side ? c : b;
        for (uint32_t i = 0; i < s->nreasons; i++) {
            const char *r = text(t, s->reasons[i].reason);
            if (side && session_share(bt, b, r) > 0) /* listed from the baseline's side already */
                continue;
            double pb = session_share(bt, b, r), pc = session_share(ct, c, r);
            if (moved(pb, pc) && add(d, cap, (gpufl__diff_stall){NULL, r, pb, pc, NULL, NULL}))
                return GPUFL_ENOMEM;
        }
    }
    return 0;
}

/* A kernel row's share of reason, -1 when it is not among its top stalls. */
static double top_share(const gpufl_trace *t, const gpufl__ana_stall_row *k, const char *reason)
{
    for (unsigned i = 0; i < GPUFL__ANA_TOP_STALLS && k->top[i].samples; i++)
        if (!strcmp(text(t, k->top[i].reason), reason))
            return share(k->top[i].samples, k->samples);
    return -1.0;
}

static const gpufl__ana_stall_row *kernel_named(const gpufl_trace *t, const gpufl__ana_stalls *s, const char *name)
{
    for (uint32_t i = 0; i < s->nkernels; i++)
        if (!strcmp(text(t, s->kernels[i].name), name))
            return &s->kernels[i];
    return NULL;
}

static int by_kernel(const void *a, const void *b)
{
    const gpufl__diff_stall *x = a, *y = b;
    int k = strcmp(x->kernel, y->kernel);
    return k ? k : strcmp(x->reason, y->reason);
}

static int kernel_rows(gpufl__diff *d, size_t *cap, const gpufl_trace *bt, const gpufl__ana_stalls *b,
                       const gpufl_trace *ct, const gpufl__ana_stalls *c)
{
    uint32_t first = d->nstalls;
    for (uint32_t i = 0; i < b->nkernels; i++) {
        const gpufl__ana_stall_row *kb = &b->kernels[i];
        const char *name = text(bt, kb->name);
        const gpufl__ana_stall_row *kc = kernel_named(ct, c, name);
        if (!kc || kb->samples < GPUFL__DIFF_STALL_MIN_SAMPLES || kc->samples < GPUFL__DIFF_STALL_MIN_SAMPLES ||
            !kb->top[0].samples || !kc->top[0].samples)
            continue;
        const char *tb = text(bt, kb->top[0].reason), *tc = text(ct, kc->top[0].reason);
        /* the baseline's top stall, and the candidate's when it is another */
        for (int which = 0; which < 2; which++) {
            const char *r = which ? tc : tb;
            if (which && !strcmp(tb, tc))
                break;
            double pb = top_share(bt, kb, r), pc = top_share(ct, kc, r);
            if ((strcmp(tb, tc) || moved(pb, pc)) && add(d, cap, (gpufl__diff_stall){name, r, pb, pc, tb, tc}))
                return GPUFL_ENOMEM;
        }
    }
    if (d->nstalls > first)
        qsort(d->stalls + first, d->nstalls - first, sizeof *d->stalls, by_kernel);
    return 0;
}

int gpufl__diff_stalls(gpufl__diff *out, const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                       const gpufl__ana_report *c)
{
    const gpufl__ana_stalls *sb = &b->counters.pcs, *sc = &c->counters.pcs;
    out->stalls_compared = sb->samples && sc->samples;
    if (!out->stalls_compared)
        return 0;
    size_t cap = 0;
    int rc = session_rows(out, &cap, bt, sb, ct, sc);
    if (rc == 0)
        rc = kernel_rows(out, &cap, bt, sb, ct, sc);
    return rc;
}
