/*
 * The text report's device sections: copies and their bandwidth, idle time
 * by cause, launch statistics, and device memory.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "core/event.h"
#include "present/report/report_text_util.h"

#define MAX_STREAM_ROWS 16 /* per device */
#define MAX_ALLOC_ROWS 5   /* per memory row and list */

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

/* ---- memory -------------------------------------------------------------------- */

/* The name of gpufl scope `id` (a linear search: a few calls per report). */
static const char *scope_name(const rt *c, uint64_t id)
{
    const gpufl_trace_scopes *s = gpufl_trace_get_scopes(c->t);
    for (size_t i = 0; s && i < s->n; i++)
        if (s->id[i] == id)
            return gpufl__rt_str(c, s->name[i]);
    return "?";
}

static void allocation(const rt *c, const gpufl__ana_allocation *a)
{
    FILE *out = c->out;
    uint64_t start = c->r->summary.start_ns;
    fprintf(out, "      %10s at %s, %s", gpufl__rt_bytes(a->bytes).s,
            gpufl__rt_dur(a->ts_ns > start ? a->ts_ns - start : 0).s, gpufl__mem_kind_name(a->kind));
    if (a->tid)
        fprintf(out, ", thread %u", a->tid);
    if (a->scope)
        fprintf(out, ", scope %s", scope_name(c, a->scope));
    if (a->nvtx)
        fprintf(out, ", NVTX %s", gpufl__rt_str(c, a->nvtx));
    if (a->stack)
        fprintf(out, ", stack %u", a->stack);
    fputc('\n', out);
}

static void allocations(const rt *c, const char *title, uint64_t count, uint32_t n, const gpufl__ana_allocation *list)
{
    if (!n)
        return;
    uint32_t shown = n < MAX_ALLOC_ROWS ? n : MAX_ALLOC_ROWS;
    fprintf(c->out, "    %s (%s; the largest %u, time after the session's start):\n", title, gpufl__rt_count(count).s,
            shown);
    for (uint32_t i = 0; i < shown; i++)
        allocation(c, &list[i]);
}

/* Whether the never-freed list repeats the live-at-peak one (a caching
 * allocator that never frees makes them equal). */
static bool same_allocations(const gpufl__ana_mem_row *w)
{
    if (w->nlive != w->nleaks || w->live_at_peak != w->never_freed || !w->nlive)
        return false;
    for (uint32_t i = 0; i < w->nlive; i++)
        if (w->live[i].address != w->leaks[i].address || w->live[i].ts_ns != w->leaks[i].ts_ns)
            return false;
    return true;
}

void gpufl__rt_section_memory(const rt *c)
{
    const gpufl__ana_memory *m = &c->r->memory;
    FILE *out = c->out;
    gpufl__rt_title(c, "Memory");
    if (!m->recorded) {
        fprintf(out, "  allocations not recorded (enable_memory_tracking)\n");
        return;
    }
    uint64_t start = c->r->summary.start_ns;
    for (uint32_t i = 0; i < m->n; i++) {
        const gpufl__ana_mem_row *w = &m->rows[i];
        fprintf(out, "  GPU %u, %s memory: %s allocation%s (%s), %s free%s (%s)\n", w->device,
                w->space == GPUFL__ANA_SPACE_HOST ? "host" : "device", gpufl__rt_count(w->allocs).s,
                gpufl__rt_plural(w->allocs), gpufl__rt_bytes(w->alloc_bytes).s, gpufl__rt_count(w->frees).s,
                gpufl__rt_plural(w->frees), gpufl__rt_bytes(w->free_bytes).s);
        fprintf(out, "    peak %s live", gpufl__rt_bytes(w->peak_bytes).s);
        if (w->peak_bytes)
            fprintf(out, " at %s, in %s allocation%s", gpufl__rt_dur(w->peak_ns > start ? w->peak_ns - start : 0).s,
                    gpufl__rt_count(w->live_at_peak).s, gpufl__rt_plural(w->live_at_peak));
        fprintf(out, "; %s live at the end\n", gpufl__rt_bytes(w->end_bytes).s);
        if (w->never_freed)
            fprintf(out, "    never freed: %s allocation%s, %s\n", gpufl__rt_count(w->never_freed).s,
                    gpufl__rt_plural(w->never_freed), gpufl__rt_bytes(w->never_freed_bytes).s);
        if (w->unmatched_frees)
            fprintf(out, "    frees of memory allocated before recording (or lost): %s, %s\n",
                    gpufl__rt_count(w->unmatched_frees).s, gpufl__rt_bytes(w->unmatched_free_bytes).s);
        allocations(c, "live at the peak", w->live_at_peak, w->nlive, w->live);
        if (same_allocations(w))
            fprintf(out, "    never freed: the same allocations (nothing live at the peak was freed)\n");
        else
            allocations(c, "never freed", w->never_freed, w->nleaks, w->leaks);
    }
}
