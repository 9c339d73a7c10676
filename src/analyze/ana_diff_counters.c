/*
 * Hardware counters of two sessions compared (ana_diff.h,
 * gpufl__diff_counters): for all ranges together, then for each scope or
 * NVTX range name both sessions measured, the metrics whose value moved.
 * Names and metrics are matched as text: each session has its own string
 * table. A few names and ten metrics: quadratic matching is fine.
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

/* Metric k of row r as compared: per range when summed, else the mean. */
static double figure(const gpufl__ana_hw *hw, const gpufl__ana_hw_row *r, uint32_t k)
{
    return hw->summed[k] ? (r->ranges ? r->values[k] / (double)r->ranges : 0) : r->values[k];
}

static bool moved(double b, double c, int unit)
{
    if (unit == GPUFL__HW_PCT)
        return fabs(c - b) >= GPUFL__DIFF_COUNTER_MOVE_PCT;
    if (b == 0)
        return c != 0;
    return fabs(c - b) / fabs(b) * 100.0 >= GPUFL__DIFF_COUNTER_MOVE_PCT;
}

/* Compares rows rb (of bt's hw) and rc (of ct's), adding the metrics that
 * moved; scope is NULL for all ranges. */
static int compare_rows(gpufl__diff *d, size_t *cap, const gpufl_trace *bt, const gpufl__ana_hw *hb,
                        const gpufl__ana_hw_row *rb, const gpufl_trace *ct, const gpufl__ana_hw *hc,
                        const gpufl__ana_hw_row *rc, const char *scope)
{
    for (uint32_t kb = 0; kb < hb->nmetrics; kb++) {
        const char *metric = text(bt, hb->metrics[kb]);
        uint32_t kc = 0;
        while (kc < hc->nmetrics && strcmp(text(ct, hc->metrics[kc]), metric))
            kc++;
        if (kc == hc->nmetrics || !rb->has[kb] || !rc->has[kc])
            continue;
        int unit;
        (void)gpufl__ana_hw_label(metric, &unit);
        double b = figure(hb, rb, kb), c = figure(hc, rc, kc);
        if (!moved(b, c, unit))
            continue;
        if (gpufl__ana_grow(&d->counters, cap, d->ncounters + 1, sizeof *d->counters))
            return GPUFL_ENOMEM;
        d->counters[d->ncounters++] = (gpufl__diff_counter){scope, metric, b, c, unit};
    }
    return 0;
}

static const gpufl_trace *sort_trace;
static int by_name(const void *a, const void *b)
{
    const gpufl__ana_hw_row *x = a, *y = b;
    return strcmp(text(sort_trace, x->name), text(sort_trace, y->name));
}

int gpufl__diff_counters(gpufl__diff *out, const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                         const gpufl__ana_report *c)
{
    const gpufl__ana_hw *hb = &b->counters.ranges, *hc = &c->counters.ranges;
    out->counters_compared = hb->session.ranges && hc->session.ranges;
    if (!out->counters_compared)
        return 0;
    size_t cap = 0;
    int rc = compare_rows(out, &cap, bt, hb, &hb->session, ct, hc, &hc->session, NULL);
    /* the baseline's names in order of their text, each matched in the candidate */
    gpufl__ana_hw_row *sorted = hb->nrows ? malloc(hb->nrows * sizeof *sorted) : NULL;
    if (rc == 0 && hb->nrows && !sorted)
        rc = GPUFL_ENOMEM;
    if (rc == 0 && sorted && hb->nrows) {
        memcpy(sorted, hb->rows, hb->nrows * sizeof *sorted);
        sort_trace = bt;
        qsort(sorted, hb->nrows, sizeof *sorted, by_name);
    }
    for (uint32_t i = 0; rc == 0 && i < hb->nrows; i++) {
        const char *name = text(bt, sorted[i].name);
        for (uint32_t j = 0; j < hc->nrows; j++)
            if (!strcmp(text(ct, hc->rows[j].name), name)) {
                rc = compare_rows(out, &cap, bt, hb, &sorted[i], ct, hc, &hc->rows[j], name);
                break;
            }
    }
    free(sorted);
    return rc;
}
