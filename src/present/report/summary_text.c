/*
 * Session summary as text (see summary_text.h). Sections appear only when
 * the session has data for them; an empty one says what would fill it.
 */
#include "present/report/summary_text.h"

#include "analyze/analysis.h"
#include "present/report/report_text_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

/* Names come last on a row, as in `gpufl report`, cut at the report's
 * width: long C++ kernel names differ far from their start. */
#define NAME_WIDTH 200
#define MAX_ROWS 20

void gpufl__format_duration(uint64_t ns, char *buf, size_t len)
{
    if (ns >= 1000000000ull)
        snprintf(buf, len, "%.3f s", (double)ns / 1e9);
    else if (ns >= 1000000ull)
        snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
    else if (ns >= 1000ull)
        snprintf(buf, len, "%.2f us", (double)ns / 1e3);
    else
        snprintf(buf, len, "%" PRIu64 " ns", ns);
}

void gpufl__format_bytes(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", bytes);
        return;
    }
    double v = (double)bytes / 1024.0;
    int u = 0;
    while (v >= 1024.0 && u < 3) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, v < 10 ? "%.2f %s" : "%.1f %s", v, units[u]);
}

void gpufl__format_pm_value(double v, int unit, char *buf, size_t len)
{
    static const char *const prefix[] = {"", "k", "M", "G", "T", "P"};
    if (unit == GPUFL__PM_UNIT_PCT) {
        snprintf(buf, len, "%.1f %%", v);
        return;
    }
    if (unit != GPUFL__PM_UNIT_BYTES_PER_SEC && unit != GPUFL__PM_UNIT_PER_SEC) {
        snprintf(buf, len, "%.4g", v);
        return;
    }
    unsigned p = 0;
    while (p + 1 < sizeof prefix / sizeof *prefix && fabs(v) >= 1000.0) {
        v /= 1000.0;
        p++;
    }
    snprintf(buf, len, "%.3g %s%s", v, prefix[p], unit == GPUFL__PM_UNIT_BYTES_PER_SEC ? "B/s" : "/s");
}

/* Rows by name, each name cut to NAME_WIDTH ("..." at the cut) unless that
 * would make it read like another row's: then it is shown whole. */
static void name_table(FILE *out, const char *title, const gpufl__summary_name *rows, uint32_t n)
{
    char total[32], mean[32], min[32], max[32];
    char cut[MAX_ROWS][NAME_WIDTH + 1];
    uint32_t shown = n < MAX_ROWS ? n : MAX_ROWS;
    for (uint32_t i = 0; i < shown; i++)
        gpufl__rt_fit(rows[i].name, NAME_WIDTH, cut[i]);
    fprintf(out, "\n%s\n", title);
    fprintf(out, "  %9s %12s %12s %12s %12s  %s\n", "count", "total", "mean", "min", "max", "name");
    for (uint32_t i = 0; i < shown; i++) {
        const gpufl__summary_name *r = &rows[i];
        bool whole = false;
        for (uint32_t j = 0; j < shown && !whole && strcmp(cut[i], r->name) != 0; j++)
            whole = j != i && !strcmp(cut[i], cut[j]);
        gpufl__format_duration(r->total_ns, total, sizeof total);
        gpufl__format_duration(r->count ? r->total_ns / r->count : 0, mean, sizeof mean);
        gpufl__format_duration(r->min_ns, min, sizeof min);
        gpufl__format_duration(r->max_ns, max, sizeof max);
        fprintf(out, "  %9" PRIu64 " %12s %12s %12s %12s  %s", r->count, total, mean, min, max,
                whole ? r->name : cut[i]);
        /* never ended: timed to the session's last recorded time */
        if (r->unended)
            fprintf(out, "  (%" PRIu64 " unended)", r->unended);
        fprintf(out, "\n");
    }
    if (n > MAX_ROWS)
        fprintf(out, "  ... and %u more\n", n - MAX_ROWS);
}

static void header(const gpufl__summary *s, FILE *out)
{
    char when[64] = "?", dur[32];
    time_t secs = (time_t)(s->start_wall_ns / 1000000000ull);
    struct tm tm;
    if (gmtime_r(&secs, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    gpufl__format_duration(s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0, dur, sizeof dur);
    fprintf(out, "gpufl session %s\n", s->session_id);
    fprintf(out, "  app        %s (pid %d on %s)\n", s->app_name, s->pid, s->host);
    fprintf(out, "  started    %s\n", when);
    fprintf(out, "  duration   %s (%s)\n", dur,
            strcmp(s->status, "ended") == 0 ? "ended cleanly"
            : s->from_events                ? "did not end cleanly: killed, crashed or still running; figures are "
                                              "from the recorded events, up to the last recorded time"
                                            : "still running, or ended without shutdown: figures are from the last "
                                              "checkpoint");
    if (s->engine)
        fprintf(out, "  engine     %s%s%s%s%s%s\n", s->engine, s->engine_plugin ? " (plugin " : "",
                s->engine_plugin ? s->engine_plugin : "", s->engine_plugin ? ")" : "",
                s->engine_reason ? "; asked for " : "",
                s->engine_reason && s->engine_requested ? s->engine_requested : "");
    else if (s->engine_requested)
        fprintf(out, "  engine     %s asked for; which engine ran is not recorded yet\n", s->engine_requested);
    if (s->engine && s->engine_reason)
        fprintf(out, "             %s\n", s->engine_reason);
    fprintf(out, "  directory  %s\n", s->dir);
}

static void counts(const gpufl__summary *s, FILE *out)
{
    char bytes[32];
    fprintf(out, "  events    ");
    int shown = 0;
    for (int t = 1; t < GFL_EV_TYPE_COUNT; t++) {
        if (!s->events[t] || t == GFL_EV_DROPPED)
            continue;
        fprintf(out, "%s %s %" PRIu64, shown++ ? "," : "", gpufl__event_type_name((uint8_t)t), s->events[t]);
    }
    fprintf(out, "%s\n", shown ? "" : " none");
    uint64_t dropped = gpufl__summary_dropped_total(s);
    fprintf(out, "  dropped    %" PRIu64, dropped);
    for (int r = 0; dropped && r < GFL_DROP_REASON_COUNT; r++)
        if (s->dropped[r])
            fprintf(out, " (%s %" PRIu64 ")", gpufl__drop_reason_name((uint8_t)r), s->dropped[r]);
    fprintf(out, "\n");
    gpufl__format_bytes(s->bytes_written, bytes, sizeof bytes);
    fprintf(out, "  logs       %s written", bytes);
    if (s->stop_reason)
        fprintf(out, "; writing STOPPED (%s: %s)", s->stop_reason, s->stop_detail ? s->stop_detail : "");
    fprintf(out, "\n");
}

static void host(const gpufl__summary *s, FILE *out)
{
    const gpufl__host_stats *h = &s->host_stats;
    fprintf(out, "\nHost\n");
    if (!h->samples) {
        fprintf(out, "  no samples (set system_sample_rate_ms, and open a scope or a system window)\n");
        return;
    }
    char rss[32], used[32], total[32];
    gpufl__format_bytes(h->rss_max, rss, sizeof rss);
    gpufl__format_bytes(h->ram_used_max, used, sizeof used);
    gpufl__format_bytes(h->ram_total, total, sizeof total);
    fprintf(out, "  samples       %" PRIu64 "\n", h->samples);
    if (h->proc_cpu_samples)
        fprintf(out, "  process CPU   mean %.1f%%, max %.1f%% (100%% = one of %u CPUs)\n",
                (double)h->proc_cpu_sum_x100 / (double)h->proc_cpu_samples / 100.0, h->proc_cpu_max_x100 / 100.0,
                h->cpu_count);
    if (h->sys_cpu_samples)
        fprintf(out, "  machine CPU   mean %.1f%%, max %.1f%%\n",
                (double)h->sys_cpu_sum_x100 / (double)h->sys_cpu_samples / 100.0, h->sys_cpu_max_x100 / 100.0);
    fprintf(out, "  process RSS   peak %s\n", rss);
    fprintf(out, "  machine RAM   peak %s used of %s\n", used, total);
}

static void devices(const gpufl__summary *s, FILE *out)
{
    for (uint32_t i = 0; i < s->ndev; i++) {
        const gpufl__device_stats *d = &s->dev[i];
        if (!d->samples)
            continue;
        char used[32], total[32];
        gpufl__format_bytes(d->mem_used_max, used, sizeof used);
        gpufl__format_bytes(d->mem_total, total, sizeof total);
        fprintf(out, "\nGPU %u%s%s%s\n  samples %" PRIu64 ", utilization mean %.1f%% max %u%%, memory peak %s of %s", i,
                s->dev_name[i] ? " (" : "", s->dev_name[i] ? s->dev_name[i] : "", s->dev_name[i] ? ")" : "", d->samples,
                d->util_samples ? (double)d->util_sum / (double)d->util_samples : 0.0, d->util_max, used, total);
        if (d->has_temp)
            fprintf(out, ", max %d C", d->temp_max);
        if (d->power_max_mw)
            fprintf(out, ", max %.1f W", d->power_max_mw / 1000.0);
        if (d->has_energy && d->energy_last_mj > d->energy_first_mj)
            fprintf(out, ", %.1f J", (double)(d->energy_last_mj - d->energy_first_mj) / 1000.0);
        fprintf(out, "\n");
    }
}

static void copies(const gpufl__summary *s, FILE *out)
{
    int shown = 0;
    for (int k = 0; k < GFL_COPY_KIND_COUNT; k++) {
        const gpufl__copy_stats *c = &s->copies[k];
        if (!c->count)
            continue;
        if (!shown++)
            fprintf(out, "\nCopies\n");
        char bytes[32], time[32];
        gpufl__format_bytes(c->bytes, bytes, sizeof bytes);
        gpufl__format_duration(c->total_ns, time, sizeof time);
        double gbps = c->total_ns ? (double)c->bytes / (double)c->total_ns : 0; /* bytes/ns = GB/s */
        fprintf(out, "  %-6s %9" PRIu64 " copies %12s in %12s (%.2f GB/s)\n", gpufl__copy_kind_name((uint8_t)k),
                c->count, bytes, time, gbps);
    }
}

void gpufl__summary_render_overview(const gpufl__summary *s, FILE *out)
{
    header(s, out);
    counts(s, out);
}

void gpufl__summary_render_text(const gpufl__summary *s, FILE *out)
{
    header(s, out);
    counts(s, out);
    if (s->nscopes)
        name_table(out, "Scopes (by total time)", s->scopes, s->nscopes);
    else
        fprintf(out, "\nScopes\n  none (mark phases with GFL_SCOPE or gpufl_scope_begin)\n");
    host(s, out);
    devices(s, out);
    if (s->nkernels) {
        char total[32];
        gpufl__format_duration(s->kernel_total_ns, total, sizeof total);
        name_table(out, "GPU kernels (by total time)", s->kernels, s->nkernels);
        fprintf(out, "  all kernels: %" PRIu64 " launches, %s of GPU time\n", s->events[GFL_EV_KERNEL], total);
    }
    copies(s, out);
}
