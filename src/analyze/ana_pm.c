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
    double *weighted = NULL, *plain = NULL; /* per row: value * length, value */
    for (size_t i = 0; p && i < p->n; i++) {
        uint32_t k = 0;
        while (k < out->n && (out->rows[k].device != p->device[i] || out->rows[k].metric != p->metric[i]))
            k++;
        if (k == out->n) {
            if (out->n == GPUFL__ANA_PM_MAX_ROWS)
                continue; /* more pairs than a report shows */
            gpufl__ana_pm_row *rows = realloc(out->rows, (out->n + 1) * sizeof *rows);
            double *w = realloc(weighted, (out->n + 1) * sizeof *w);
            if (w)
                weighted = w;
            double *pl = w ? realloc(plain, (out->n + 1) * sizeof *pl) : NULL;
            if (rows)
                out->rows = rows;
            if (pl)
                plain = pl;
            if (!rows || !w || !pl) {
                free(weighted);
                free(plain);
                gpufl__ana_pm_free(out);
                return GPUFL_ENOMEM;
            }
            out->rows[k] = (gpufl__ana_pm_row){.device = p->device[i], .metric = p->metric[i]};
            weighted[k] = plain[k] = 0;
            out->n++;
        }
        gpufl__ana_pm_row *r = &out->rows[k];
        uint64_t ns = p->end_ns[i] > p->ts_ns[i] ? p->end_ns[i] - p->ts_ns[i] : 0;
        r->samples++;
        r->ns += ns;
        weighted[k] += p->value[i] * (double)ns;
        plain[k] += p->value[i];
        if (r->samples == 1 || p->value[i] > r->max)
            r->max = p->value[i];
    }
    /* samples without length (damaged input) still say something: plainly */
    for (uint32_t k = 0; k < out->n; k++)
        out->rows[k].mean =
            out->rows[k].ns ? weighted[k] / (double)out->rows[k].ns : plain[k] / (double)out->rows[k].samples;
    free(weighted);
    free(plain);
    return 0;
}

int gpufl__ana_pm_unit(const char *metric)
{
    if (!metric)
        return GPUFL__PM_UNIT_RAW;
    const char *last = strrchr(metric, '.');
    last = last ? last + 1 : metric;
    if (!strncmp(last, "pct", 3))
        return GPUFL__PM_UNIT_PCT;
    if (!strcmp(last, "per_second"))
        return strstr(metric, "bytes") ? GPUFL__PM_UNIT_BYTES_PER_SEC : GPUFL__PM_UNIT_PER_SEC;
    return GPUFL__PM_UNIT_RAW;
}

const char *gpufl__ana_pm_unit_name(int unit)
{
    switch (unit) {
    case GPUFL__PM_UNIT_PCT: return "pct";
    case GPUFL__PM_UNIT_BYTES_PER_SEC: return "bytes_per_second";
    case GPUFL__PM_UNIT_PER_SEC: return "per_second";
    default: return "raw";
    }
}

void gpufl__ana_pm_free(gpufl__ana_pm *pm)
{
    if (!pm)
        return;
    free(pm->rows);
    memset(pm, 0, sizeof *pm);
}
