/*
 * PM sampling over a session (analysis.h): per device and metric, how many
 * samples, their time-weighted mean and their maximum. Samples are
 * 10 us apart by default, so a session of an hour has hundreds of
 * millions of rows: one pass, a small table of (device, metric) pairs.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/analysis.h"

int gpufl__analyze_pm(const gpufl_trace *t, gpufl__ana_pm *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    const gpufl_trace_pm_samples *p = gpufl_trace_get_pm_samples(t);
    double *weighted = NULL;
    for (size_t i = 0; p && i < p->n; i++) {
        uint32_t k = 0;
        while (k < out->n && (out->rows[k].device != p->device[i] || out->rows[k].metric != p->metric[i]))
            k++;
        if (k == out->n) {
            if (out->n == GPUFL__ANA_PM_MAX_ROWS)
                continue; /* more pairs than a report shows */
            gpufl__ana_pm_row *rows = realloc(out->rows, (out->n + 1) * sizeof *rows);
            double *w = realloc(weighted, (out->n + 1) * sizeof *w);
            if (rows)
                out->rows = rows;
            if (w)
                weighted = w;
            if (!rows || !w) {
                free(weighted);
                gpufl__ana_pm_free(out);
                return GPUFL_ENOMEM;
            }
            out->rows[k] = (gpufl__ana_pm_row){.device = p->device[i], .metric = p->metric[i]};
            weighted[k] = 0;
            out->n++;
        }
        gpufl__ana_pm_row *r = &out->rows[k];
        uint64_t ns = p->end_ns[i] > p->ts_ns[i] ? p->end_ns[i] - p->ts_ns[i] : 0;
        r->samples++;
        r->ns += ns;
        weighted[k] += p->value[i] * (double)ns;
        if (r->samples == 1 || p->value[i] > r->max)
            r->max = p->value[i];
    }
    for (uint32_t k = 0; k < out->n; k++)
        out->rows[k].mean = out->rows[k].ns ? weighted[k] / (double)out->rows[k].ns : 0;
    free(weighted);
    return 0;
}

void gpufl__ana_pm_free(gpufl__ana_pm *pm)
{
    if (!pm)
        return;
    free(pm->rows);
    memset(pm, 0, sizeof *pm);
}
