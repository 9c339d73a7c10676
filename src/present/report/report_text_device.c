/*
 * The text report's device sections: copies and their bandwidth, idle time
 * by cause and launch statistics (memory: report_text_memory.c).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "core/event.h"
#include "present/report/report_text_util.h"
#include "read/rows.h"

#define MAX_STREAM_ROWS 16 /* per device */

/* ---- copies ----------------------------------------------------------------- */

static void peak_text(const gpufl__ana_copy_row *w, char *buf, size_t len)
{
    switch (w->peak_source) {
    case GPUFL__ANA_PEAK_PCIE: snprintf(buf, len, "PCIe gen%u x%u", w->pcie_gen, w->pcie_width); break;
    case GPUFL__ANA_PEAK_HBM: snprintf(buf, len, "memory (%s)", w->peak_table ? w->peak_table : "?"); break;
    default: snprintf(buf, len, "unknown"); break;
    }
}

void gpufl__rt_section_copies(const rt *c)
{
    const gpufl__ana_copies *cp = &c->r->copies;
    FILE *out = c->out;
    gpufl__rt_title(c, "Copies");
    if (!cp->n) {
        fprintf(out, "  no copies recorded\n");
    } else {
        fprintf(out, "  %s cop%s, %s in %s\n", gpufl__rt_count(cp->count).s, cp->count == 1 ? "y" : "ies",
                gpufl__rt_bytes(cp->bytes).s, gpufl__rt_dur(cp->ns).s);
        fprintf(out, "  %3s %-5s %8s %11s %10s %10s %9s %9s %8s  %-22s %s\n", "GPU", "kind", "count", "bytes", "time",
                "p50 size", "GB/s", "peak", "of peak", "compared with", "pageable");
        for (uint32_t i = 0; i < cp->n; i++) {
            const gpufl__ana_copy_row *w = &cp->rows[i];
            char peak[64], gbps[32], peak_gbps[32];
            peak_text(w, peak, sizeof peak);
            snprintf(gbps, sizeof gbps, "%.2f", w->gbps);
            snprintf(peak_gbps, sizeof peak_gbps, w->peak_gbps > 0 ? "%.1f" : "-", w->peak_gbps);
            fprintf(out, "  %3u %-5s %8s %11s %10s %10s %9s %9s %8s  %-22s %s\n", w->device,
                    gpufl__copy_kind_name(w->kind), gpufl__rt_count(w->count).s, gpufl__rt_bytes(w->bytes).s,
                    gpufl__rt_dur(w->ns).s, gpufl__rt_bytes((uint64_t)w->size.p50).s, gbps, peak_gbps,
                    w->peak_gbps > 0 ? gpufl__rt_pct(w->pct_of_peak).s : "-", peak,
                    w->pageable_count ? gpufl__rt_count(w->pageable_count).s : "-");
        }
        fprintf(out, "  (GB/s: 1e9 bytes/s over the time the copies ran; a DtoD copy reads and writes each\n"
                     "   byte, so 50 %% of the memory's peak is full speed)\n");
    }
    if (cp->memsets)
        fprintf(out, "  memsets: %s, %s in %s\n", gpufl__rt_count(cp->memsets).s, gpufl__rt_bytes(cp->memset_bytes).s,
                gpufl__rt_dur(cp->memset_ns).s);
}

/* ---- idle time ---------------------------------------------------------------- */

static void idle_row(const rt *c, const gpufl__ana_idle_row *w)
{
    char stream[16];
    if (w->stream == GPUFL__ANA_ALL_STREAMS)
        snprintf(stream, sizeof stream, "all");
    else
        snprintf(stream, sizeof stream, "%u", w->stream);
    fprintf(c->out, "  %3u %6s %9s %10s %10s %10s %7s %10s %10s %10s %10s %10s\n", w->device, stream,
            gpufl__rt_count(w->ops).s, gpufl__rt_dur(w->busy_ns).s, gpufl__rt_dur(w->idle_ns).s,
            gpufl__rt_pct(gpufl__rt_share(w->idle_ns, w->last_ns - w->first_ns)).s, gpufl__rt_count(w->gaps).s,
            gpufl__rt_dur(w->host_ns).s, gpufl__rt_dur(w->sync_ns).s, gpufl__rt_dur(w->other_ns).s,
            gpufl__rt_dur(w->lead_ns).s, gpufl__rt_dur(w->tail_ns).s);
}

void gpufl__rt_section_idle(const rt *c)
{
    const gpufl__ana_idle *id = &c->r->idle;
    FILE *out = c->out;
    gpufl__rt_title(c, "Idle time");
    if (!id->n) {
        fprintf(out, "  no GPU work recorded\n");
        return;
    }
    fprintf(out, "  between each GPU's (or stream's) first and last work, by cause: host = the CPU had not\n"
                 "  launched the next work yet, sync = the host or the stream was waiting, other = launched\n"
                 "  but started late; lead and tail: before the first and after the last work\n");
    fprintf(out, "  %3s %6s %9s %10s %10s %10s %7s %10s %10s %10s %10s %10s\n", "GPU", "stream", "ops", "busy", "idle",
            "idle %", "gaps", "host", "sync", "other", "lead", "tail");
    uint32_t streams = 0, hidden = 0;
    for (uint32_t i = 0; i < id->n; i++) {
        const gpufl__ana_idle_row *w = &id->rows[i];
        if (w->stream == GPUFL__ANA_ALL_STREAMS) {
            streams = 0;
        } else if (++streams > MAX_STREAM_ROWS) {
            hidden++;
            continue;
        }
        idle_row(c, w);
    }
    if (hidden)
        fprintf(out, "  ... %u more stream%s\n", hidden, gpufl__rt_plural(hidden));
}

/* ---- launches ------------------------------------------------------------------ */

static void dist_row(const rt *c, const char *label, const gpufl__ana_dist *d)
{
    fprintf(c->out, "  %-9s %10s %10s %10s %10s %10s\n", label, gpufl__rt_sdur((int64_t)d->mean).s,
            gpufl__rt_sdur(d->p50).s, gpufl__rt_sdur(d->p95).s, gpufl__rt_sdur(d->min).s, gpufl__rt_sdur(d->max).s);
}

void gpufl__rt_section_launches(const rt *c)
{
    const gpufl__ana_launches *l = &c->r->launches;
    FILE *out = c->out;
    gpufl__rt_title(c, "Launches");
    if (!l->kernels) {
        fprintf(out, "  no kernels recorded\n");
        return;
    }
    fprintf(out, "  %s kernel%s, %s with the times of their launch call\n", gpufl__rt_count(l->kernels).s,
            gpufl__rt_plural(l->kernels), gpufl__rt_count(l->with_api).s);
    if (!l->with_api)
        return;
    fprintf(out, "  %-9s %10s %10s %10s %10s %10s\n", "", "mean", "p50", "p95", "min", "max");
    dist_row(c, "latency", &l->latency);
    dist_row(c, "queue", &l->queue);
    dist_row(c, "call", &l->call);
    fprintf(out, "  (latency: call start to kernel start; queue: call return to kernel start; call: the\n"
                 "   launch call itself)\n");
    fprintf(out, "  short kernels: %s (%s) ran shorter than their launch call, %s of GPU time\n",
            gpufl__rt_count(l->short_kernels).s, gpufl__rt_pct(gpufl__rt_share(l->short_kernels, l->with_api)).s,
            gpufl__rt_dur(l->short_kernel_ns).s);
}

/* ---- PM sampling ---------------------------------------------------------------- */

void gpufl__rt_section_pm(const rt *c)
{
    gpufl__ana_pm pm = {0};
    if (gpufl__analyze_pm(c->t, &pm) != 0 || !pm.n) {
        gpufl__ana_pm_free(&pm);
        return;
    }
    FILE *out = c->out;
    gpufl__rt_title(c, "PM sampling");
    fprintf(out, "  what the GPU's performance monitor counted, each metric in its own unit\n");
    fprintf(out, "  %3s %-66s %10s %10s %16s %16s\n", "GPU", "metric", "samples", "time", "mean", "max");
    for (uint32_t i = 0; i < pm.n; i++) {
        const gpufl__ana_pm_row *w = &pm.rows[i];
        fprintf(out, "  %3u %-66s %10s %10s %16.4g %16.4g\n", w->device, gpufl__rt_str(c, w->metric),
                gpufl__rt_count(w->samples).s, gpufl__rt_dur(w->ns).s, w->mean, w->max);
    }
    gpufl__ana_pm_free(&pm);
}
