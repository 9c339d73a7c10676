/*
 * The text report's flight recorder sections: what came before a crash or
 * an out-of-memory (printed first, under the session header: it is what
 * the reader of such a session came for), the triggers that fired and the
 * trace windows, each only when the session has them, so the report of a
 * session without them is unchanged.
 */
#include <inttypes.h>
#include <string.h>

#include "core/event.h"
#include "present/report/report_text_util.h"

#define NO_DEVICE UINT32_MAX

/* A session time as the time since the session's start. */
static rt_num since_start(const rt *c, uint64_t ns)
{
    uint64_t start = gpufl_trace_get_info(c->t)->start_ns;
    return gpufl__rt_dur(ns > start ? ns - start : 0);
}

static void last_event(const rt *c, const gpufl__ana_last_event *e)
{
    char where[32] = "host";
    if (e->device != NO_DEVICE)
        snprintf(where, sizeof where, "GPU %u", e->device);
    char name[48];
    gpufl__rt_fit(gpufl__rt_str(c, e->name), 40, name);
    fprintf(c->out, "  %12s  %-12s %-6s tid %-8" PRIu32, since_start(c, e->ts_ns).s, gpufl__ana_last_label(e->what),
            where, e->tid);
    if (e->what <= GPUFL__ANA_LAST_MEMSET)
        fprintf(c->out, " %10s", gpufl__rt_dur(e->end_ns > e->ts_ns ? e->end_ns - e->ts_ns : 0).s);
    if (e->name)
        fprintf(c->out, "  %s", name);
    if (e->bytes)
        fprintf(c->out, "  %s", gpufl__rt_bytes(e->bytes).s);
    fputc('\n', c->out);
}

void gpufl__rt_section_incident(const rt *c)
{
    const gpufl__ana_flight *f = &c->r->flight;
    if (f->incident == GPUFL__ANA_INCIDENT_NONE)
        return;
    bool crash = f->incident == GPUFL__ANA_INCIDENT_CRASH;
    gpufl__rt_title(c, crash ? "Last events before the crash" : "Last events before the OOM");
    FILE *out = c->out;
    fprintf(out, "  %s at %s into the session", crash ? "crash" : "out of memory", since_start(c, f->incident_ns).s);
    if (f->incident_tid)
        fprintf(out, " on thread %" PRIu32, f->incident_tid);
    if (f->incident_device != NO_DEVICE)
        fprintf(out, ", GPU %" PRIu32, f->incident_device);
    fprintf(out, "; the last %" PRIu32 " event%s of %s, newest last:\n", f->nlast, gpufl__rt_plural(f->nlast),
            f->incident_device != NO_DEVICE ? "that thread and device" : "that thread");
    for (uint32_t i = 0; i < f->nlast; i++)
        last_event(c, &f->last[i]);
    if (!f->nlast)
        fprintf(out, "  (none recorded)\n");
    if (!f->has_failed)
        return;
    fprintf(out, "  failed allocation: %s asked for at %s\n", gpufl__rt_bytes(f->failed_bytes).s,
            since_start(c, f->failed_ns).s);
    fprintf(out, "  live then on GPU %" PRIu32 ": %s allocation%s, %s\n", f->incident_device,
            gpufl__rt_count(f->live_count).s, gpufl__rt_plural(f->live_count), gpufl__rt_bytes(f->live_bytes).s);
    for (uint32_t i = 0; i < f->nlargest; i++) {
        const gpufl__ana_allocation *l = &f->largest[i];
        fprintf(out, "    %10s at 0x%" PRIx64 ", allocated at %s by tid %" PRIu32 "\n", gpufl__rt_bytes(l->bytes).s,
                l->address, since_start(c, l->ts_ns).s, l->tid);
    }
}

static void triggers(const rt *c)
{
    const gpufl_trace_triggers *g = gpufl_trace_get_triggers(c->t);
    if (!g->n)
        return;
    gpufl__rt_title(c, "Triggers");
    for (size_t i = 0; i < g->n; i++) {
        uint8_t o = g->outcome[i];
        fprintf(c->out, "  %12s  %-12s %-10s", since_start(c, g->ts_ns[i]).s, gpufl__rt_str(c, g->kind[i]),
                o < GFL_TRIGGER_OUTCOME_COUNT ? gpufl__trigger_outcome_name(o) : "unknown");
        if (g->dump[i])
            fprintf(c->out, " dumps/%s", gpufl__rt_str(c, g->dump[i]));
        if (g->tid[i])
            fprintf(c->out, " (tid %" PRIu32 ")", g->tid[i]);
        if (g->detail[i])
            fprintf(c->out, "  %s", gpufl__rt_str(c, g->detail[i]));
        fputc('\n', c->out);
    }
}

static void windows(const rt *c)
{
    const gpufl_trace_windows *w = gpufl_trace_get_trace_windows(c->t);
    const gpufl__ana_flight *f = &c->r->flight;
    if (!w->n)
        return;
    gpufl__rt_title(c, "Trace windows");
    fprintf(c->out, "  device activity recorded in %zu window%s, %s of %s (%s)\n", w->n, gpufl__rt_plural(w->n),
            gpufl__rt_dur(f->traced_ns).s, gpufl__rt_dur(f->session_ns).s,
            gpufl__rt_pct(gpufl__rt_share(f->traced_ns, f->session_ns)).s);
    for (size_t i = 0; i < w->n; i++) {
        uint64_t end = w->end_ns[i] > w->begin_ns[i] ? w->end_ns[i] : w->begin_ns[i];
        fprintf(c->out, "  #%-4" PRIu32 " %12s .. %-12s %10s  %s", w->index[i], since_start(c, w->begin_ns[i]).s,
                since_start(c, end).s, gpufl__rt_dur(end - w->begin_ns[i]).s, gpufl__rt_str(c, w->reason[i]));
        if (w->detail[i])
            fprintf(c->out, " (%s)", gpufl__rt_str(c, w->detail[i]));
        if (w->unended[i])
            fprintf(c->out, "  unended: still open at the session's end");
        fputc('\n', c->out);
    }
}

void gpufl__rt_section_flight(const rt *c)
{
    triggers(c);
    windows(c);
}
