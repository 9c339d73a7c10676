/*
 * The HTML report's flight recorder sections (report_html_parts.h): what
 * came before a crash or an out-of-memory (first on the page, as in the
 * text report: it is what the reader of such a session came for), the
 * triggers that fired and the trace windows. Each only when the session
 * has them, so that the page of a session without them is unchanged. The
 * figures are the text and JSON reports' (report_text_flight.c,
 * report_json_flight.c), from the same analysis and the same reader
 * tables; times are since the session's start, exact in data-v.
 * Single-threaded.
 */
#include <inttypes.h>
#include <stdbool.h>

#include "core/event.h"
#include "present/report/report_html_parts.h"

#define NO_DEVICE UINT32_MAX
#define S(id) gpufl_trace_string(t, (id))

static void td_ns(gpufl__hout *o, uint64_t ns)
{
    char buf[32];
    gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu64 "\">%s</td>", ns, gpufl__hfmt_ns(buf, sizeof buf, ns));
}

/* ---- the incident ------------------------------------------------------------------- */

static void last_events(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_flight *f)
{
    static const char *const cols[] = {"at", "what", "where", "thread", "duration", "name", "bytes", NULL};
    gpufl__html_table_head(o, "incident-last", cols);
    for (uint32_t i = 0; i < f->nlast; i++) {
        const gpufl__ana_last_event *e = &f->last[i];
        gpufl__hout_printf(o, "<tr%s>", e->what == GPUFL__ANA_LAST_FAILED_ALLOC ? " class=warn" : "");
        gpufl__html_td_since(o, t, e->ts_ns);
        gpufl__html_td_text(o, gpufl__ana_last_label(e->what));
        if (e->device != NO_DEVICE)
            gpufl__hout_printf(o, "<td>GPU %" PRIu32 "</td>", e->device);
        else
            gpufl__html_td_text(o, "host");
        gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu32 "\">%" PRIu32 "</td>", e->tid, e->tid);
        if (e->what <= GPUFL__ANA_LAST_MEMSET)
            td_ns(o, e->end_ns > e->ts_ns ? e->end_ns - e->ts_ns : 0);
        else
            gpufl__hout_raw(o, "<td></td>");
        gpufl__hout_raw(o, "<td class=kname>");
        gpufl__hout_text(o, e->name ? S(e->name) : "");
        gpufl__hout_raw(o, "</td>");
        if (e->bytes)
            gpufl__html_td_bytes(o, e->bytes);
        else
            gpufl__hout_raw(o, "<td></td>");
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
}

static void out_of_memory(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_flight *f)
{
    char b1[32], b2[32], at[32];
    uint64_t start = gpufl_trace_get_info(t)->start_ns;
    gpufl__hout_printf(o, "<p id=incident-failed class=warn>Failed allocation: %s asked for at %s.</p>\n",
                       gpufl__hfmt_bytes(b1, sizeof b1, f->failed_bytes),
                       gpufl__hfmt_ns(at, sizeof at, f->failed_ns > start ? f->failed_ns - start : 0));
    gpufl__hout_printf(o,
                       "<p id=incident-live>Live then on GPU %" PRIu32 ": <span data-v=\"%" PRIu64 "\">%" PRIu64
                       "</span> allocation%s, <span data-v=\"%" PRIu64 "\">%s</span>.</p>\n",
                       f->incident_device, f->live_count, f->live_count, f->live_count == 1 ? "" : "s", f->live_bytes,
                       gpufl__hfmt_bytes(b2, sizeof b2, f->live_bytes));
    if (!f->nlargest)
        return;
    gpufl__hout_raw(o, "<h3>Largest live allocations</h3>\n");
    static const char *const cols[] = {"bytes", "address", "allocated at", "thread", NULL};
    gpufl__html_table_head(o, "incident-largest", cols);
    for (uint32_t i = 0; i < f->nlargest; i++) {
        const gpufl__ana_allocation *l = &f->largest[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_bytes(o, l->bytes);
        gpufl__hout_printf(o, "<td>0x%" PRIx64 "</td>", l->address);
        gpufl__html_td_since(o, t, l->ts_ns);
        gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu32 "\">%" PRIu32 "</td>", l->tid, l->tid);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
}

void gpufl__html_incident(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    const gpufl__ana_flight *f = &r->flight;
    if (f->incident == GPUFL__ANA_INCIDENT_NONE)
        return;
    bool crash = f->incident == GPUFL__ANA_INCIDENT_CRASH;
    char at[32];
    uint64_t start = gpufl_trace_get_info(t)->start_ns;
    gpufl__hout_printf(
        o, "<section id=incident><h2>Last events before the %s</h2>\n<p class=warn>%s at %s into the session",
        crash ? "crash" : "OOM", crash ? "Crash" : "Out of memory",
        gpufl__hfmt_ns(at, sizeof at, f->incident_ns > start ? f->incident_ns - start : 0));
    if (f->incident_tid)
        gpufl__hout_printf(o, " on thread %" PRIu32, f->incident_tid);
    if (f->incident_device != NO_DEVICE)
        gpufl__hout_printf(o, ", GPU %" PRIu32, f->incident_device);
    gpufl__hout_printf(o, "; the last %" PRIu32 " event%s of %s, newest last.</p>\n", f->nlast,
                       f->nlast == 1 ? "" : "s",
                       f->incident_device != NO_DEVICE ? "that thread and device" : "that thread");
    if (f->nlast)
        last_events(o, t, f);
    if (f->has_failed)
        out_of_memory(o, t, f);
    gpufl__hout_raw(o, "</section>\n");
}

/* ---- triggers and trace windows ----------------------------------------------------- */

static void triggers(gpufl__hout *o, const gpufl_trace *t)
{
    const gpufl_trace_triggers *g = gpufl_trace_get_triggers(t);
    if (!g->n)
        return;
    gpufl__hout_printf(o, "<section id=triggers><h2>Triggers</h2>\n<p>%zu trigger%s fired.</p>\n", g->n,
                       g->n == 1 ? "" : "s");
    static const char *const cols[] = {"at", "kind", "detail", "outcome", "dump", "thread", NULL};
    gpufl__html_table_head(o, "triggers-table", cols);
    for (size_t i = 0; i < g->n; i++) {
        uint8_t oc = g->outcome[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_since(o, t, g->ts_ns[i]);
        gpufl__html_td_text(o, S(g->kind[i]));
        gpufl__html_td_text(o, S(g->detail[i]));
        gpufl__html_td_text(o, oc < GFL_TRIGGER_OUTCOME_COUNT ? gpufl__trigger_outcome_name(oc) : "unknown");
        if (g->dump[i]) {
            gpufl__hout_raw(o, "<td>dumps/");
            gpufl__hout_text(o, S(g->dump[i]));
            gpufl__hout_raw(o, "</td>");
        } else {
            gpufl__hout_raw(o, "<td></td>");
        }
        if (g->tid[i])
            gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu32 "\">%" PRIu32 "</td>", g->tid[i], g->tid[i]);
        else
            gpufl__hout_raw(o, "<td></td>");
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

static void windows(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_flight *f)
{
    const gpufl_trace_windows *w = gpufl_trace_get_trace_windows(t);
    if (!w->n)
        return;
    char traced[32], session[32];
    double pct = f->session_ns ? 100.0 * (double)f->traced_ns / (double)f->session_ns : 0.0;
    gpufl__hout_printf(o,
                       "<section id=windows><h2>Trace windows</h2>\n<p id=windows-share>Device activity "
                       "recorded in %zu window%s, <span data-v=\"%" PRIu64 "\">%s</span> of <span data-v=\"%" PRIu64
                       "\">%s</span> (%.1f %%): device work outside them is not in this report.</p>\n",
                       w->n, w->n == 1 ? "" : "s", f->traced_ns, gpufl__hfmt_ns(traced, sizeof traced, f->traced_ns),
                       f->session_ns, gpufl__hfmt_ns(session, sizeof session, f->session_ns), pct);
    static const char *const cols[] = {"#", "begin", "end", "length", "reason", "detail", NULL};
    gpufl__html_table_head(o, "windows-table", cols);
    for (size_t i = 0; i < w->n; i++) {
        /* the reader's end, never before the begin (as the text report) */
        uint64_t end = w->end_ns[i] > w->begin_ns[i] ? w->end_ns[i] : w->begin_ns[i];
        gpufl__hout_printf(o, "<tr><td class=n data-v=\"%" PRIu32 "\">%" PRIu32 "</td>", w->index[i], w->index[i]);
        gpufl__html_td_since(o, t, w->begin_ns[i]);
        gpufl__html_td_since(o, t, end);
        td_ns(o, end - w->begin_ns[i]);
        gpufl__html_td_text(o, S(w->reason[i]));
        gpufl__hout_raw(o, "<td>");
        gpufl__hout_text(o, S(w->detail[i]));
        if (w->unended[i])
            gpufl__hout_raw(o, w->detail[i] ? " (unended: still open at the session's end)"
                                            : "unended: still open at the session's end");
        gpufl__hout_raw(o, "</td></tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

void gpufl__html_flight(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    triggers(o, t);
    windows(o, t, &r->flight);
}
