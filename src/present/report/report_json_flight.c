/*
 * The JSON report's flight recorder members (report_json_parts.h; schema:
 * docs/REPORT.md): the triggers, the trace windows and what came before a
 * crash or an out-of-memory. Always written (empty or null), because the
 * schema promises every member in every report; the figures are those of
 * the text report (report_text_flight.c), from the same analysis.
 */
#include <stdio.h>

#include "core/event.h"
#include "present/report/report_json_parts.h"

#define NO_DEVICE UINT32_MAX

static void str_id(jw *w, const gpufl_trace *t, const char *key, uint32_t id)
{
    if (id)
        gpufl__jw_str(w, key, gpufl_trace_string(t, id));
    else
        gpufl__jw_null(w, key);
}

static void device(jw *w, const char *key, uint32_t d)
{
    if (d == NO_DEVICE)
        gpufl__jw_null(w, key);
    else
        gpufl__jw_u64(w, key, d);
}

static void triggers(jw *w, const gpufl_trace *t)
{
    const gpufl_trace_triggers *g = gpufl_trace_get_triggers(t);
    gpufl__jw_arr(w, "triggers");
    for (size_t i = 0; i < g->n; i++) {
        uint8_t o = g->outcome[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "ts_ns", g->ts_ns[i]);
        gpufl__jw_u64(w, "tid", g->tid[i]);
        str_id(w, t, "kind", g->kind[i]);
        str_id(w, t, "detail", g->detail[i]);
        gpufl__jw_str(w, "outcome", o < GFL_TRIGGER_OUTCOME_COUNT ? gpufl__trigger_outcome_name(o) : "unknown");
        str_id(w, t, "dump", g->dump[i]);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

static void windows(jw *w, const gpufl_trace *t)
{
    const gpufl_trace_windows *tw = gpufl_trace_get_trace_windows(t);
    gpufl__jw_arr(w, "trace_windows");
    for (size_t i = 0; i < tw->n; i++) {
        /* the reader's end, never before the begin (as the text report) */
        uint64_t end = tw->end_ns[i] > tw->begin_ns[i] ? tw->end_ns[i] : tw->begin_ns[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "index", tw->index[i]);
        gpufl__jw_u64(w, "begin_ns", tw->begin_ns[i]);
        gpufl__jw_u64(w, "end_ns", end);
        gpufl__jw_u64(w, "dur_ns", end - tw->begin_ns[i]);
        str_id(w, t, "reason", tw->reason[i]);
        str_id(w, t, "detail", tw->detail[i]);
        gpufl__jw_bool(w, "unended", tw->unended[i] != 0);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

static void incident(jw *w, const gpufl_trace *t, const gpufl__ana_flight *f)
{
    if (f->incident == GPUFL__ANA_INCIDENT_NONE) {
        gpufl__jw_null(w, "incident");
        return;
    }
    gpufl__jw_obj(w, "incident");
    gpufl__jw_str(w, "kind", f->incident == GPUFL__ANA_INCIDENT_CRASH ? "crash" : "oom");
    gpufl__jw_u64(w, "ts_ns", f->incident_ns);
    gpufl__jw_u64(w, "tid", f->incident_tid);
    device(w, "device", f->incident_device);
    gpufl__jw_arr(w, "last");
    for (uint32_t i = 0; i < f->nlast; i++) {
        const gpufl__ana_last_event *e = &f->last[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "ts_ns", e->ts_ns);
        gpufl__jw_u64(w, "end_ns", e->end_ns);
        gpufl__jw_str(w, "what", gpufl__ana_last_key(e->what));
        str_id(w, t, "name", e->name);
        gpufl__jw_u64(w, "bytes", e->bytes);
        device(w, "device", e->device);
        gpufl__jw_u64(w, "tid", e->tid);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    if (f->has_failed) {
        gpufl__jw_obj(w, "failed_allocation");
        gpufl__jw_u64(w, "ts_ns", f->failed_ns);
        gpufl__jw_u64(w, "bytes", f->failed_bytes);
        gpufl__jw_obj_end(w);
    } else {
        gpufl__jw_null(w, "failed_allocation");
    }
    gpufl__jw_u64(w, "live_count", f->live_count);
    gpufl__jw_u64(w, "live_bytes", f->live_bytes);
    gpufl__rj_allocations(w, t, "largest", f->nlargest, f->largest);
    gpufl__jw_obj_end(w);
}

void gpufl__rj_flight(jw *w, const gpufl_trace *t, const gpufl__ana_report *r)
{
    triggers(w, t);
    windows(w, t);
    incident(w, t, &r->flight);
}
