/*
 * The text report (see report_text.h): the session header, the executive
 * summary and the profiling-engine sections; the other sections are in
 * report_text_{scopes,ops,kernels,device}.c.
 */
#include "present/report/report_text.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "core/event.h"
#include "gpufl/gpufl.h"
#include "present/report/crash_text.h"
#include "present/report/job_text.h"
#include "present/report/report_text_util.h"

#define DEFAULT_MAX_FRAMES 6

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "";
}

static void header(const rt *c)
{
    const gpufl_trace_info *in = gpufl_trace_get_info(c->t);
    const gpufl__ana_summary *s = &c->r->summary;
    FILE *out = c->out;
    fprintf(out, "gpufl report: %s\n",
            gpufl__rt_str(c, in->session_id)[0] ? gpufl__rt_str(c, in->session_id) : "(no id)");
    fprintf(out, "  app       %s (pid %d on %s)\n", gpufl__rt_str(c, in->app_name), (int)in->pid,
            gpufl__rt_str(c, in->host)[0] ? gpufl__rt_str(c, in->host) : "?");
    char when[64] = "unknown";
    if (in->start_wall_ns) {
        time_t secs = (time_t)(in->start_wall_ns / 1000000000ull);
        struct tm tm;
        if (gmtime_r(&secs, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    }
    fprintf(out, "  started   %s\n", when);
    char job[256];
    if (gpufl__job_text(c->t, job, sizeof job))
        fprintf(out, "  job       %s\n", job);
    fprintf(out, "  duration  %s (%s)\n", gpufl__rt_dur(s->wall_ns).s,
            s->ended ? "ended cleanly" : "did not end: a crash, or still running; up to the last recorded event");
    gpufl__crash_render_text(c->t, out, "  crashed   ", 12);
    if (in->source_format == GPUFL_TRACE_GFLT)
        fprintf(out, "  recorded  by gpufl %s; read from %s (.gflt version %u)\n",
                gpufl__rt_str(c, in->gpufl_version)[0] ? gpufl__rt_str(c, in->gpufl_version) : "?",
                base_name(in->source), in->format_version);
    else
        fprintf(out, "  recorded  by gpufl %s; read from the NDJSON logs (schema version %u)\n",
                gpufl__rt_str(c, in->gpufl_version)[0] ? gpufl__rt_str(c, in->gpufl_version) : "?", in->format_version);
    if (in->engine)
        fprintf(out, "  engine    %s%s%s%s%s%s\n", gpufl__rt_str(c, in->engine), in->engine_plugin ? " (plugin " : "",
                gpufl__rt_str(c, in->engine_plugin), in->engine_plugin ? ")" : "",
                in->engine_reason ? "; asked for " : "",
                in->engine_reason ? gpufl__rt_str(c, in->engine_requested) : "");
    if (in->engine && in->engine_reason)
        fprintf(out, "            %s\n", gpufl__rt_str(c, in->engine_reason));
    if (in->driver_version || in->cuda_driver_version)
        fprintf(out, "  driver    %s, CUDA %s\n",
                gpufl__rt_str(c, in->driver_version)[0] ? gpufl__rt_str(c, in->driver_version) : "?",
                gpufl__rt_str(c, in->cuda_driver_version)[0] ? gpufl__rt_str(c, in->cuda_driver_version) : "?");
    if (!in->ndevices)
        fprintf(out, "  devices   none described (no device_info)\n");
    for (uint32_t i = 0; i < in->ndevices; i++) {
        const gpufl_trace_device *d = &in->devices[i];
        fprintf(out, "  %s GPU %u: %s", i ? "         " : "devices  ", d->index,
                gpufl__rt_str(c, d->name)[0] ? gpufl__rt_str(c, d->name) : "(unnamed)");
        if (d->sm_count)
            fprintf(out, ", %u SMs", d->sm_count);
        if (d->memory_total_bytes)
            fprintf(out, ", %s", gpufl__rt_bytes(d->memory_total_bytes).s);
        if (d->cc_major >= 0)
            fprintf(out, ", compute capability %d.%d", d->cc_major, d->cc_minor);
        fputc('\n', out);
    }
    if (in->stop_reason)
        fprintf(out, "  WARNING   writing stopped early (%s: %s): the session is incomplete\n",
                gpufl__rt_str(c, in->stop_reason), gpufl__rt_str(c, in->stop_detail));
}

static void device_line(const rt *c, const gpufl__ana_device_summary *d)
{
    FILE *out = c->out;
    fprintf(out, "  GPU %u%s%s: ", d->device, d->name ? " " : "", gpufl__rt_str(c, d->name));
    if (d->kernels || d->copies || d->memsets)
        fprintf(out, "busy %s (%s of the session)", gpufl__rt_dur(d->busy_ns).s, gpufl__rt_pct(d->busy_pct).s);
    else
        fprintf(out, "no GPU work recorded");
    if (d->util_samples)
        fprintf(out, "; NVML utilization mean %.1f %%, peak %u %%", d->util_mean_pct, d->util_peak_pct);
    fputc('\n', out);
    if (d->mem_samples) {
        fprintf(out, "         memory used peak %s", gpufl__rt_bytes(d->mem_used_peak_bytes).s);
        if (d->mem_total_bytes)
            fprintf(out, " of %s (%s)", gpufl__rt_bytes(d->mem_total_bytes).s,
                    gpufl__rt_pct(gpufl__rt_share(d->mem_used_peak_bytes, d->mem_total_bytes)).s);
        fprintf(out, ", all processes");
        if (d->proc_mem_samples)
            fprintf(out, "; this process %s", gpufl__rt_bytes(d->proc_mem_peak_bytes).s);
        fputc('\n', out);
    }
}

/* The few facts worth reading first, each derived from the sections below. */
static void findings(const rt *c)
{
    const gpufl__ana_report *r = c->r;
    FILE *out = c->out;
    int n = 0;
    if (r->hotspots.n) {
        const gpufl__ana_hotspot *h = &r->hotspots.kernels[0];
        char name[81];
        gpufl__rt_fit(gpufl__rt_str(c, h->name), 80, name);
        fprintf(out, "  * the top kernel, %s, took %s of all kernel time (%s in %s launches)\n", name,
                gpufl__rt_pct(h->share * 100.0).s, gpufl__rt_dur((uint64_t)h->dur.total).s,
                gpufl__rt_count(h->dur.n).s);
        n++;
    }
    for (uint32_t i = 0; i < r->idle.n; i++) {
        const gpufl__ana_idle_row *w = &r->idle.rows[i];
        if (w->stream != GPUFL__ANA_ALL_STREAMS || !w->idle_ns)
            continue;
        uint64_t span = w->last_ns - w->first_ns;
        const char *cause = "the next work was launched but started late (queue, launch overhead, other "
                            "streams), or its launch time is unknown";
        uint64_t most = w->other_ns;
        if (w->host_ns > most) {
            cause = "the CPU had not launched the next work yet";
            most = w->host_ns;
        }
        if (w->sync_ns > most) {
            cause = "the host or the stream was waiting on a synchronization";
            most = w->sync_ns;
        }
        fprintf(out, "  * GPU %u was idle %s of the %s between its first and last work; most of it (%s): %s\n",
                w->device, gpufl__rt_pct(gpufl__rt_share(w->idle_ns, span)).s, gpufl__rt_dur(span).s,
                gpufl__rt_pct(gpufl__rt_share(most, w->idle_ns)).s, cause);
        n++;
    }
    if (r->launches.short_kernels) {
        bool one = r->launches.short_kernels == 1;
        fprintf(out,
                "  * %s kernel%s ran shorter than %s own launch call (%s of kernels with API times):"
                " back to back, such kernels keep the GPU waiting for the CPU\n",
                gpufl__rt_count(r->launches.short_kernels).s, gpufl__rt_plural(r->launches.short_kernels),
                one ? "its" : "their",
                gpufl__rt_pct(gpufl__rt_share(r->launches.short_kernels, r->launches.with_api)).s);
        n++;
    }
    uint64_t pageable = 0, pageable_bytes = 0;
    for (uint32_t i = 0; i < r->copies.n; i++) {
        pageable += r->copies.rows[i].pageable_count;
        pageable_bytes += r->copies.rows[i].pageable_bytes;
    }
    if (pageable) {
        fprintf(out,
                "  * %s cop%s (%s) used pageable host memory, which the driver stages through a pinned"
                " buffer: pinned memory copies faster and asynchronously\n",
                gpufl__rt_count(pageable).s, pageable == 1 ? "y" : "ies", gpufl__rt_bytes(pageable_bytes).s);
        n++;
    }
    if (r->summary.dropped_total) {
        fprintf(out, "  * %s event%s were lost while recording: the figures below miss them\n",
                gpufl__rt_count(r->summary.dropped_total).s, gpufl__rt_plural(r->summary.dropped_total));
        n++;
    }
    if (!n && (r->summary.kernels || r->summary.copies || r->summary.memsets))
        fprintf(out, "  * nothing stands out: the GPU work ran back to back and nothing was lost\n");
    else if (!n)
        fprintf(out, "  * no GPU work was recorded\n");
}

static void summary(const rt *c)
{
    const gpufl__ana_summary *s = &c->r->summary;
    FILE *out = c->out;
    gpufl__rt_title(c, "Summary");
    for (uint32_t i = 0; i < s->ndevices; i++)
        device_line(c, &s->devices[i]);
    fprintf(out, "  kernels   %s launches, %s of GPU time, %s distinct\n", gpufl__rt_count(s->kernels).s,
            gpufl__rt_dur(s->kernel_ns).s, gpufl__rt_count(c->r->hotspots.distinct).s);
    fprintf(out, "  copies    %s, %s in %s\n", gpufl__rt_count(s->copies).s, gpufl__rt_bytes(s->copy_bytes).s,
            gpufl__rt_dur(s->copy_ns).s);
    fprintf(out, "  memsets   %s, %s in %s\n", gpufl__rt_count(s->memsets).s, gpufl__rt_bytes(s->memset_bytes).s,
            gpufl__rt_dur(s->memset_ns).s);
    fprintf(out, "  syncs     %s, %s waiting\n", gpufl__rt_count(s->syncs).s, gpufl__rt_dur(s->sync_ns).s);
    fprintf(out, "  scopes    %s gpufl scope%s, %s NVTX range%s, %s NVTX mark%s\n", gpufl__rt_count(s->scopes).s,
            gpufl__rt_plural(s->scopes), gpufl__rt_count(s->nvtx_ranges).s, gpufl__rt_plural(s->nvtx_ranges),
            gpufl__rt_count(s->nvtx_marks).s, gpufl__rt_plural(s->nvtx_marks));
    fprintf(out, "  memory    %s allocation%s, %s free%s\n", gpufl__rt_count(s->allocations).s,
            gpufl__rt_plural(s->allocations), gpufl__rt_count(s->frees).s, gpufl__rt_plural(s->frees));
    fprintf(out, "  dropped   %s", s->dropped_total ? gpufl__rt_count(s->dropped_total).s : "none");
    for (unsigned i = 0; s->dropped_total && i < 16; i++)
        if (s->dropped[i])
            fprintf(out, " (%s %s)", i < GFL_DROP_REASON_COUNT ? gpufl__drop_reason_name((uint8_t)i) : "?",
                    gpufl__rt_count(s->dropped[i]).s);
    fputc('\n', out);
    if (s->skipped_bytes || s->skipped_lines || s->skipped_chunks)
        fprintf(out, "  skipped   %s of a torn end, %s line%s or event%s and %s chunk%s of unknown types\n",
                gpufl__rt_bytes(s->skipped_bytes).s, gpufl__rt_count(s->skipped_lines).s,
                gpufl__rt_plural(s->skipped_lines), gpufl__rt_plural(s->skipped_lines),
                gpufl__rt_count(s->skipped_chunks).s, gpufl__rt_plural(s->skipped_chunks));
    fprintf(out, "\n  Findings\n");
    findings(c);
}

static void counter_section(const rt *c, const char *title, const gpufl__ana_section *s)
{
    fprintf(c->out, "  %-22s ", title);
    if (s->rows && s == &c->r->counters.sass)
        fprintf(c->out, "%s row%s recorded: see \"SASS metrics\"\n", gpufl__rt_count(s->rows).s,
                gpufl__rt_plural(s->rows));
    else if (s->rows)
        fprintf(c->out, "%s row%s recorded (profiling_engine %s); this gpufl does not analyze them yet\n",
                gpufl__rt_count(s->rows).s, gpufl__rt_plural(s->rows), s->engine ? s->engine : "?");
    else
        fprintf(c->out, "not recorded: the %s engine records them\n", s->engine ? s->engine : "?");
}

static void counters(const rt *c)
{
    const gpufl__ana_counters *k = &c->r->counters;
    if (k->pcs.samples)
        gpufl__rt_section_stalls(c);
    gpufl__rt_section_hw(c);
    gpufl__rt_title(c, "Profiling counters");
    if (k->pcs.samples)
        fprintf(c->out, "  %-22s %s samples: above\n", "warp stall reasons", gpufl__rt_count(k->pcs.samples).s);
    else
        counter_section(c, "warp stall reasons", &k->stalls);
    counter_section(c, "SASS metrics", &k->sass);
    if (k->ranges.session.ranges)
        fprintf(c->out, "  %-22s %s ranges: above\n", "hardware counters", gpufl__rt_count(k->ranges.session.ranges).s);
    else
        counter_section(c, "hardware counters", &k->hw);
}

int gpufl__report_text(const gpufl_trace *t, const gpufl__ana_report *r, const gpufl__report_text_opts *o, FILE *out)
{
    rt c = {.out = out, .t = t, .r = r};
    if (o)
        c.o = *o;
    if (!c.o.max_frames)
        c.o.max_frames = DEFAULT_MAX_FRAMES;
    header(&c);
    gpufl__rt_section_incident(&c);
    summary(&c);
    gpufl__rt_section_flight(&c);
    gpufl__rt_section_scopes(&c);
    gpufl__rt_section_ops(&c);
    gpufl__rt_section_hotspots(&c);
    gpufl__rt_section_occupancy(&c);
    gpufl__rt_section_copies(&c);
    gpufl__rt_section_idle(&c);
    gpufl__rt_section_critpath(&c);
    gpufl__rt_section_launches(&c);
    gpufl__rt_section_nccl(&c);
    gpufl__rt_section_memory(&c);
    counters(&c);
    gpufl__rt_section_sass(&c);
    gpufl__rt_section_pm(&c);
    if (fflush(out) != 0 || ferror(out))
        return GPUFL_EIO;
    return 0;
}
