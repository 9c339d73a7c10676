/*
 * The HTML report's PM sampling (report_html_parts.h): a table of each
 * device's metrics (the text report's figures), and the charts' data, one
 * series per device and metric that the page's script draws under the
 * NVML charts on the timeline's time axis.
 *
 * A series has at most GPUFL__HTML_MAX_POINTS points: runs of `per`
 * consecutive samples, each point the run's first start and its mean
 * weighted by each sample's length (the analysis' mean, over the run), so
 * a chart of a long session keeps the level of what it averages rather
 * than one sample in `per`. Samples are 10 us apart by default, so an hour
 * has hundreds of millions of rows: one pass over them for all series
 * after the analysis has counted each; memory: 16 bytes per point kept.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "present/report/report_html.h"
#include "present/report/report_html_parts.h"
#include "present/report/summary_text.h"

/* ---- the table ---------------------------------------------------------------- */

static void td_value(gpufl__hout *o, double v, int unit)
{
    char buf[64];
    gpufl__format_pm_value(v, unit, buf, sizeof buf);
    gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%s</td>", v, buf);
}

void gpufl__html_pm(gpufl__hout *o, const gpufl_trace *t)
{
    gpufl__ana_pm pm = {0};
    if (gpufl__analyze_pm(t, &pm) != 0 || !pm.n) {
        /* out of memory: the section is left out; the data's own pass fails the page */
        gpufl__ana_pm_free(&pm);
        return;
    }
    gpufl__hout_raw(o, "<section id=pm><h2>PM sampling</h2>\n<p>What each GPU's performance monitor counted, "
                       "each metric in its own unit; the mean is weighted by each sample's length. The charts "
                       "are under the timeline.</p>\n");
    static const char *const cols[] = {"GPU", "metric", "samples", "time", "mean", "max", NULL};
    gpufl__html_table_head(o, "pm-metrics", cols);
    for (uint32_t i = 0; i < pm.n; i++) {
        const gpufl__ana_pm_row *r = &pm.rows[i];
        const char *metric = gpufl_trace_string(t, r->metric);
        int unit = gpufl__ana_pm_unit(metric);
        char buf[32];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_u64(o, r->device);
        gpufl__html_td_text(o, metric ? metric : "");
        gpufl__html_td_u64(o, r->samples);
        gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu64 "\">%s</td>", r->ns,
                           gpufl__hfmt_ns(buf, sizeof buf, r->ns));
        td_value(o, r->mean, unit);
        td_value(o, r->max, unit);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
    gpufl__ana_pm_free(&pm);
}

/* ---- the charts' data ------------------------------------------------------------ */

/* A series being bucketed. */
typedef struct series {
    uint64_t per;             /* samples per point */
    uint64_t in_run;          /* samples in the point being summed */
    uint64_t first;           /* its first start */
    double weighted, ns, sum; /* value * length, length, value: its sums */
    uint32_t n;               /* points kept */
    uint64_t *t;
    double *v;
} series;

static void close_point(series *s)
{
    if (!s->in_run)
        return;
    s->t[s->n] = s->first;
    /* samples of no length (damaged input) still count, plainly */
    s->v[s->n] = s->ns > 0 ? s->weighted / s->ns : s->sum / (double)s->in_run;
    s->n++;
    s->in_run = 0;
    s->weighted = s->ns = s->sum = 0;
}

/* The series of pm's rows from the samples, in one pass. Returns 0 or
 * GPUFL_ENOMEM (s's arrays freed by the caller). */
static int bucket(const gpufl_trace_pm_samples *p, const gpufl__ana_pm *pm, series *s)
{
    for (uint32_t k = 0; k < pm->n; k++) {
        uint64_t n = pm->rows[k].samples;
        s[k].per = n > GPUFL__HTML_MAX_POINTS ? (n + GPUFL__HTML_MAX_POINTS - 1) / GPUFL__HTML_MAX_POINTS : 1;
        size_t points = (size_t)((n + s[k].per - 1) / s[k].per) + 1;
        s[k].t = malloc(points * sizeof *s[k].t);
        s[k].v = malloc(points * sizeof *s[k].v);
        if (!s[k].t || !s[k].v)
            return GPUFL_ENOMEM;
    }
    uint32_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        /* rows of one device and metric mostly follow each other: try the last first */
        if (k >= pm->n || pm->rows[k].device != p->device[i] || pm->rows[k].metric != p->metric[i])
            for (k = 0; k < pm->n; k++)
                if (pm->rows[k].device == p->device[i] && pm->rows[k].metric == p->metric[i])
                    break;
        if (k == pm->n)
            continue; /* past the analysis' cap on pairs */
        series *x = &s[k];
        double ns = p->end_ns[i] > p->ts_ns[i] ? (double)(p->end_ns[i] - p->ts_ns[i]) : 0.0;
        if (!x->in_run)
            x->first = p->ts_ns[i];
        x->weighted += p->value[i] * ns;
        x->ns += ns;
        x->sum += p->value[i];
        if (++x->in_run == x->per)
            close_point(x);
    }
    for (k = 0; k < pm->n; k++)
        close_point(&s[k]);
    return 0;
}

static void emit(gpufl__hout *o, const gpufl_trace *t, const gpufl__rows *r, const gpufl__ana_pm_row *row,
                 const series *s, uint64_t t0)
{
    const char *metric = gpufl_trace_string(t, row->metric);
    gpufl__hout_printf(o, "{\"dev\":%u,\"label\":", row->device);
    gpufl__html_device_label(o, r, row->device);
    gpufl__hout_raw(o, ",\"metric\":");
    gpufl__hout_json_str(o, metric ? metric : "");
    gpufl__hout_printf(
        o, ",\"unit\":\"%s\",\"samples\":%" PRIu64 ",\"mean\":%.6g,\"max\":%.6g,\"per\":%" PRIu64 ",\"t\":[",
        gpufl__ana_pm_unit_name(gpufl__ana_pm_unit(metric)), row->samples, row->mean, row->max, s->per);
    for (uint32_t i = 0; i < s->n; i++)
        gpufl__hout_printf(o, i ? ",%" PRId64 : "%" PRId64, (int64_t)(s->t[i] - t0));
    gpufl__hout_raw(o, "],\"v\":[");
    for (uint32_t i = 0; i < s->n; i++)
        gpufl__hout_printf(o, i ? ",%.6g" : "%.6g", s->v[i]);
    gpufl__hout_raw(o, "]}");
}

int gpufl__html_pm_data(gpufl__hout *o, const gpufl_trace *t, const gpufl__rows *r, uint64_t t0)
{
    gpufl__ana_pm pm = {0};
    int rc = gpufl__analyze_pm(t, &pm);
    if (rc != 0 || !pm.n) {
        gpufl__ana_pm_free(&pm);
        return rc;
    }
    series *s = calloc(pm.n, sizeof *s);
    rc = s ? bucket(gpufl_trace_get_pm_samples(t), &pm, s) : GPUFL_ENOMEM;
    if (rc == 0) {
        gpufl__hout_raw(o, ",\n\"pm\":[");
        for (uint32_t k = 0; k < pm.n; k++) {
            if (k)
                gpufl__hout_raw(o, ",\n");
            emit(o, t, r, &pm.rows[k], &s[k], t0);
        }
        gpufl__hout_raw(o, "]");
    }
    for (uint32_t k = 0; s && k < pm.n; k++) {
        free(s[k].t);
        free(s[k].v);
    }
    free(s);
    gpufl__ana_pm_free(&pm);
    return rc;
}
