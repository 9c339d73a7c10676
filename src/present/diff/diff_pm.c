/*
 * `gpufl diff`'s PM sampling section (diff_pm.h): the rows the analysis
 * marked moved, or all of them, never a verdict.
 */
#include "present/diff/diff_pm.h"

#include <math.h>

#include "core/utf8.h"
#include "present/report/summary_text.h"

#define METRIC_WIDTH 66 /* as the report's PM section: the longest CUPTI names fit */

/* ---- text ------------------------------------------------------------------------- */

/* "+25.1 points", "+100.0 %", "n/a" (from a baseline of 0), "new", "gone" */
static void change(const gpufl__diff_pm_metric *r, char *buf, size_t len)
{
    double delta = r->cand_mean - r->base_mean;
    if (r->presence != GPUFL__DIFF_BOTH)
        snprintf(buf, len, "%s", gpufl__diff_presence_name(r->presence));
    else if (r->unit == GPUFL__PM_UNIT_PCT)
        snprintf(buf, len, "%+.1f points", delta);
    else if (r->base_mean != 0)
        snprintf(buf, len, "%+.1f %%", 100.0 * delta / fabs(r->base_mean));
    else
        snprintf(buf, len, delta == 0 ? "0.0 %%" : "n/a");
}

static void mean(const gpufl__diff_pm_metric *r, int side, char *buf, size_t len)
{
    bool has = r->presence == GPUFL__DIFF_BOTH || (r->presence == GPUFL__DIFF_GONE) == (side == 0);
    if (has)
        gpufl__format_pm_value(side ? r->cand_mean : r->base_mean, r->unit, buf, len);
    else
        snprintf(buf, len, "-");
}

void gpufl__diff_text_pm(const gpufl__diff *d, bool all, FILE *out)
{
    if (!d->pm_compared)
        return;
    fprintf(out,
            "\nPM sampling: metrics whose mean moved %.0f points or more (percentages) or %.0f %% of the "
            "baseline's or more (others); not judged\n",
            GPUFL__DIFF_PM_MOVE_POINTS, GPUFL__DIFF_PM_MOVE_PCT);
    if (!d->pm_moved && !all) {
        fprintf(out, "  none of %u metric%s\n", d->npm, d->npm == 1 ? "" : "s");
        return;
    }
    fprintf(out, "  %3s %-*s %14s %14s %14s\n", "GPU", METRIC_WIDTH, "metric (time-weighted mean)", "baseline",
            "candidate", "change");
    for (uint32_t i = 0; i < d->npm; i++) {
        const gpufl__diff_pm_metric *r = &d->pm[i];
        if (!all && !r->moved)
            continue;
        char b[48], c[48], ch[48];
        mean(r, 0, b, sizeof b);
        mean(r, 1, c, sizeof c);
        change(r, ch, sizeof ch);
        fprintf(out, "  %3u %-*s %14s %14s %14s%s\n", r->device, METRIC_WIDTH, r->metric, b, c, ch,
                all && r->moved ? "  (moved)" : "");
    }
    uint32_t hidden = d->npm - d->pm_moved;
    if (!all && hidden)
        fprintf(out, "  ... and %u metric%s that moved less (--all lists them)\n", hidden, hidden == 1 ? "" : "s");
}

/* ---- JSON ------------------------------------------------------------------------- */

static void put(json_t *o, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(o, key, v) != 0)
        *ok = false;
}

static json_t *real_if(bool has, double v) { return has ? json_real(v) : json_null(); }

static json_t *row(const gpufl__diff_pm_metric *r)
{
    json_t *o = json_object();
    bool ok = o != NULL, base = r->presence != GPUFL__DIFF_NEW, cand = r->presence != GPUFL__DIFF_GONE;
    if (ok) {
        put(o, "device", json_integer(r->device), &ok);
        put(o, "metric", gpufl__json_text(r->metric), &ok);
        put(o, "unit", json_string(gpufl__ana_pm_unit_name(r->unit)), &ok);
        put(o, "presence", json_string(gpufl__diff_presence_name(r->presence)), &ok);
        put(o, "baseline_mean", real_if(base, r->base_mean), &ok);
        put(o, "candidate_mean", real_if(cand, r->cand_mean), &ok);
        put(o, "change", real_if(base && cand, r->cand_mean - r->base_mean), &ok);
        put(o, "change_pct",
            real_if(base && cand && r->base_mean != 0, 100.0 * (r->cand_mean - r->base_mean) / fabs(r->base_mean)),
            &ok);
        put(o, "baseline_max", real_if(base, r->base_max), &ok);
        put(o, "candidate_max", real_if(cand, r->cand_max), &ok);
        put(o, "baseline_samples", json_integer((json_int_t)r->base_samples), &ok);
        put(o, "candidate_samples", json_integer((json_int_t)r->cand_samples), &ok);
        put(o, "moved", json_boolean(r->moved), &ok);
    }
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

json_t *gpufl__diff_json_pm(const gpufl__diff *d)
{
    if (!d->pm_compared)
        return json_null();
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < d->npm; i++)
        if (json_array_append_new(a, row(&d->pm[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}
