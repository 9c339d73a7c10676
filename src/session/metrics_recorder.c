/*
 * gpufl's own metrics (metrics_recorder.h). Names carry the gpufl_ prefix
 * and Prometheus' base units (seconds, bytes); every counter is written
 * from the session's start, so rate() works across scrapes.
 */
#include "session/metrics_recorder.h"

#include <stdio.h>

#include "core/intern.h"
#include "session/metrics_text.h"

#define appendf gpufl__metrics_appendf

/* "# HELP" and "# TYPE" of a family. help holds no quote or backslash,
 * which the two formats escape differently. A counter's family is named
 * without _total in OpenMetrics and with it in 0.0.4 (whose families are
 * named as their samples); name is given without it. */
static int family(gpufl__bytebuf *out, const char *name, const char *type, const char *help, bool om)
{
    const char *suffix = !om && type[0] == 'c' ? "_total" : "";
    return appendf(out, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}

/* name{key="value"} or name{key="value",key2="value2"} and a space. */
static int sample2(gpufl__bytebuf *out, const char *name, const char *key, const char *value, const char *key2,
                   const char *value2)
{
    int rc = appendf(out, "%s{%s=\"", name, key);
    rc = rc ? rc : gpufl__metrics_label_value(out, value);
    if (key2) {
        rc = rc ? rc : appendf(out, "\",%s=\"", key2);
        rc = rc ? rc : gpufl__metrics_label_value(out, value2);
    }
    return rc ? rc : appendf(out, "\"} ");
}

static int sample(gpufl__bytebuf *out, const char *name, const char *key, const char *value)
{
    return sample2(out, name, key, value, NULL, NULL);
}

static const char *row_name(const gpufl__metrics_agg *a, unsigned row)
{
    switch (row) {
    case GPUFL__METRICS_OTHER: return "(other)";
    case GPUFL__METRICS_NO_SCOPE: return "(none)";
    case GPUFL__METRICS_UNKNOWN: return "(unknown)";
    default: return gpufl__intern_str(a->rows[row].name, NULL);
    }
}

/* le's values: the bounds in seconds, as Prometheus' client libraries
 * spell them (gpufl__metrics_bounds_ns, which the test holds to these). */
static const char *const le[GFL_METRICS_BUCKETS + 1] = {"1e-06", "1e-05", "0.0001", "0.001", "0.005", "0.01", "0.025",
                                                        "0.05",  "0.1",   "0.25",   "0.5",   "1",     "2.5",  "5",
                                                        "10",    "30",    "60",     "300",   "+Inf"};

/* scope="NAME" with NAME escaped, into lbl (emptied first). */
static int scope_label(gpufl__bytebuf *lbl, const char *scope)
{
    lbl->len = 0;
    int rc = gpufl__bytebuf_append(lbl, "scope=\"", 7);
    rc = rc ? rc : gpufl__metrics_label_value(lbl, scope);
    rc = rc ? rc : gpufl__bytebuf_append(lbl, "\"", 2); /* and the NUL, not counted */
    lbl->len -= rc ? 0 : 1;
    return rc;
}

/* A scope's histogram is 21 lines and there may be 256 scopes, every
 * 100 ms: its label is escaped once and each line is one snprintf. */
static int scope_histograms(const gpufl__metrics_agg *a, bool om, gpufl__bytebuf *out)
{
    int rc = family(out, "gpufl_scope_duration_seconds", "histogram",
                    "Durations of the scopes that ended, by scope name (the first 256 names; "
                    "the rest under scope (other)).",
                    om);
    gpufl__bytebuf lbl = {0};
    for (unsigned row = 0; rc == 0 && row <= GPUFL__METRICS_OTHER; row++) {
        if (row == a->nscopes)
            row = GPUFL__METRICS_OTHER;
        const gpufl__metrics_scope *r = &a->rows[row];
        if (!r->count || (rc = scope_label(&lbl, row_name(a, row))) != 0)
            continue;
        const char *l = (const char *)lbl.p;
        uint64_t cumulative = 0;
        for (unsigned b = 0; rc == 0 && b <= GFL_METRICS_BUCKETS; b++) {
            cumulative += r->bucket[b];
            rc = appendf(out, "gpufl_scope_duration_seconds_bucket{%s,le=\"%s\"} %llu\n", l, le[b],
                         (unsigned long long)cumulative);
        }
        rc = rc ? rc
                : appendf(out,
                          "gpufl_scope_duration_seconds_sum{%s} %.9f\n"
                          "gpufl_scope_duration_seconds_count{%s} %llu\n",
                          l, (double)r->sum_ns / 1e9, l, (unsigned long long)r->count);
    }
    gpufl__bytebuf_free(&lbl);
    return rc;
}

static int scope_kernels(const gpufl__metrics_agg *a, bool om, gpufl__bytebuf *out)
{
    static const char help_time[] =
        "GPU time of the kernels launched while the scope was the innermost open scope of the "
        "launching thread (Trace engine and up). Scope (none): launched outside every scope; "
        "(unknown): the scope was over 65536 scopes old when the kernel's record arrived; "
        "(other): names past the first 256.";
    int rc = family(out, "gpufl_scope_kernel_seconds", "counter", help_time, om);
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        if (pass == 1)
            rc = family(out, "gpufl_scope_kernels", "counter",
                        "Kernels launched while the scope was the innermost open scope of the launching thread; "
                        "scope labels as gpufl_scope_kernel_seconds_total's.",
                        om);
        for (unsigned row = 0; rc == 0 && row < GPUFL__METRICS_ROWS; row++) {
            if (row == a->nscopes)
                row = GPUFL__METRICS_OTHER;
            const gpufl__metrics_scope *r = &a->rows[row];
            if (!r->kernels)
                continue;
            rc = sample(out, pass ? "gpufl_scope_kernels_total" : "gpufl_scope_kernel_seconds_total", "scope",
                        row_name(a, row));
            rc = rc     ? rc
                 : pass ? appendf(out, "%llu\n", (unsigned long long)r->kernels)
                        : appendf(out, "%.9f\n", (double)r->kernel_ns / 1e9);
        }
    }
    return rc;
}

static int recorder(const gpufl__metrics_view *v, bool om, gpufl__bytebuf *out)
{
    const gpufl__stats *st = v->stats;
    int rc =
        family(out, "gpufl_events_recorded", "counter",
               "Events the collector took from the rings, by kind (gpufl_events_dropped_total never got there).", om);
    for (unsigned t = 1; rc == 0 && t < GFL_EV_TYPE_COUNT; t++) {
        if (!st->events[t])
            continue;
        rc = sample(out, "gpufl_events_recorded_total", "kind", gpufl__event_type_name((uint8_t)t));
        rc = rc ? rc : appendf(out, "%llu\n", (unsigned long long)st->events[t]);
    }
    rc = rc ? rc
            : family(out, "gpufl_events_dropped", "counter",
                     "Events lost, by reason (the dropped figures of session.json).", om);
    for (unsigned r = 0; rc == 0 && r < GFL_DROP_REASON_COUNT; r++) {
        uint64_t n = 0;
        for (unsigned ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
            n += st->dropped[r][ch];
        rc = sample(out, "gpufl_events_dropped_total", "reason", gpufl__drop_reason_name((uint8_t)r));
        rc = rc ? rc : appendf(out, "%llu\n", (unsigned long long)n);
    }
    rc = rc ? rc
            : family(out, "gpufl_bytes_written", "counter",
                     "Bytes written into the session's files, by file (every part of a rotated log).", om);
    for (unsigned f = 0; rc == 0 && f < v->sinks->nfiles; f++) {
        rc = sample(out, "gpufl_bytes_written_total", "file", v->sinks->files[f].name);
        rc = rc ? rc : appendf(out, "%llu\n", (unsigned long long)v->sinks->files[f].bytes);
    }
    return rc;
}

static int triggers(const gpufl__metrics_agg *a, bool om, gpufl__bytebuf *out)
{
    int rc = family(out, "gpufl_triggers", "counter",
                    "Triggers fired, by kind and outcome: dumped (the flight window written out), storm (too soon "
                    "after the last dump), no_window.",
                    om);
    for (unsigned i = 0; rc == 0 && i <= GFL_METRICS_MAX_TRIGGERS; i++) {
        if (i == a->ntriggers)
            i = GFL_METRICS_MAX_TRIGGERS;
        const gpufl__metrics_trigger *t = &a->triggers[i];
        const char *kind = i < GFL_METRICS_MAX_TRIGGERS ? gpufl__intern_str(t->kind, NULL) : "(other)";
        for (unsigned o = 0; rc == 0 && o < GFL_TRIGGER_OUTCOME_COUNT; o++) {
            if (!t->count[o])
                continue;
            rc = sample2(out, "gpufl_triggers_total", "trigger", kind, "outcome",
                         gpufl__trigger_outcome_name((uint8_t)o));
            rc = rc ? rc : appendf(out, "%llu\n", (unsigned long long)t->count[o]);
        }
    }
    return rc;
}

int gpufl__metrics_render_recorder(const gpufl__metrics_view *v, bool om, gpufl__bytebuf *out)
{
    int rc = scope_histograms(v->agg, om, out);
    rc = rc ? rc : scope_kernels(v->agg, om, out);
    rc = rc ? rc : recorder(v, om, out);
    return rc ? rc : triggers(v->agg, om, out);
}
