/*
 * PM sampling of two sessions compared (ana_diff.h, gpufl__diff_pm): each
 * (device, metric) of either session with its time-weighted mean on both
 * sides (analyze/ana_pm.c), marked moved past a fixed rule and never
 * judged: a counter's level says how the GPU was used, not whether the
 * program got slower, which the kernels and the wall time judge. Metrics
 * are matched by name as text (each session has its own string table).
 * Sizes: GPUFL__ANA_PM_MAX_ROWS pairs a side at most, compared pairwise.
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

/* The row of (device, metric) in d, or NULL. */
static gpufl__diff_pm_metric *find(gpufl__diff *d, uint32_t device, const char *metric)
{
    for (uint32_t i = 0; i < d->npm; i++)
        if (d->pm[i].device == device && !strcmp(d->pm[i].metric, metric))
            return &d->pm[i];
    return NULL;
}

static bool moved(const gpufl__diff_pm_metric *r)
{
    if (r->presence != GPUFL__DIFF_BOTH)
        return true;
    double delta = fabs(r->cand_mean - r->base_mean);
    if (r->unit == GPUFL__PM_UNIT_PCT)
        return delta >= GPUFL__DIFF_PM_MOVE_POINTS;
    if (r->base_mean == 0)
        return delta > 0;
    return delta >= fabs(r->base_mean) * GPUFL__DIFF_PM_MOVE_PCT / 100.0;
}

/* Adds the rows of side (0 the baseline, 1 the candidate) to d. */
static int add_side(gpufl__diff *d, size_t *cap, const gpufl_trace *t, const gpufl__ana_pm *pm, int side)
{
    for (uint32_t i = 0; i < pm->n; i++) {
        const gpufl__ana_pm_row *w = &pm->rows[i];
        const char *metric = text(t, w->metric);
        gpufl__diff_pm_metric *r = find(d, w->device, metric);
        if (!r) {
            if (gpufl__ana_grow(&d->pm, cap, d->npm + 1, sizeof *d->pm))
                return GPUFL_ENOMEM;
            r = &d->pm[d->npm++];
            *r = (gpufl__diff_pm_metric){.device = w->device,
                                         .metric = metric,
                                         .presence = side ? GPUFL__DIFF_NEW : GPUFL__DIFF_GONE,
                                         .unit = (uint8_t)gpufl__ana_pm_unit(metric)};
        } else {
            r->presence = GPUFL__DIFF_BOTH; /* found on the candidate's side: the baseline had it */
        }
        if (side) {
            r->cand_mean = w->mean;
            r->cand_max = w->max;
            r->cand_samples = w->samples;
        } else {
            r->base_mean = w->mean;
            r->base_max = w->max;
            r->base_samples = w->samples;
        }
    }
    return 0;
}

static int by_device_metric(const void *a, const void *b)
{
    const gpufl__diff_pm_metric *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return strcmp(x->metric, y->metric);
}

int gpufl__diff_pm(gpufl__diff *out, const gpufl_trace *bt, const gpufl_trace *ct)
{
    gpufl__ana_pm b = {0}, c = {0};
    int rc = gpufl__analyze_pm(bt, &b);
    if (rc == 0)
        rc = gpufl__analyze_pm(ct, &c);
    out->pm_compared = rc == 0 && (b.n || c.n);
    size_t cap = 0;
    if (out->pm_compared) {
        rc = add_side(out, &cap, bt, &b, 0);
        if (rc == 0)
            rc = add_side(out, &cap, ct, &c, 1);
    }
    if (rc == 0) {
        if (out->npm)
            qsort(out->pm, out->npm, sizeof *out->pm, by_device_metric);
        for (uint32_t i = 0; i < out->npm; i++) {
            out->pm[i].moved = moved(&out->pm[i]);
            out->pm_moved += out->pm[i].moved;
        }
    }
    gpufl__ana_pm_free(&b);
    gpufl__ana_pm_free(&c);
    return rc;
}
