/*
 * The JSON report's members for the layers of memory, their peaks and the
 * leak verdicts (report_json_parts.h; schema: docs/REPORT.md), also what
 * `gpufl mem analyze --format json` writes. The figures are the text
 * report's (report_text_memory.c), from the same analyses. A layer the
 * session did not record is absent from "layers" and null in the
 * timeline's points, never 0.
 */
#include <math.h>
#include <stdio.h>

#include "present/report/report_json_parts.h"

#define FRAC_DECIMALS 6
#define P_DECIMALS 9

static void str_id(jw *w, const gpufl_trace *t, const char *key, uint32_t id)
{
    if (id)
        gpufl__jw_str(w, key, gpufl_trace_string(t, id));
    else
        gpufl__jw_null(w, key);
}

static const char *framework_source(uint8_t s)
{
    switch (s) {
    case GPUFL__ANA_FW_ALLOCATOR: return "allocator";
    case GPUFL__ANA_FW_BLOCKS: return "blocks";
    default: return NULL;
    }
}

static void layers(jw *w, const gpufl__ana_mem_layers_dev *d)
{
    gpufl__jw_arr(w, "layers");
    for (uint8_t s = 0; s < GPUFL__ANA_MEM_SERIES; s++) {
        if (!(d->known & GPUFL__ANA_MEM_BIT(s)))
            continue;
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "layer", gpufl__ana_mem_key(s));
        gpufl__jw_str(w, "label", gpufl__ana_mem_label(s));
        gpufl__jw_u64(w, "peak_bytes", d->peak[s]);
        gpufl__jw_u64(w, "peak_ns", d->peak_ns[s]);
        if (d->at_valid & GPUFL__ANA_MEM_BIT(s))
            gpufl__jw_u64(w, "at_peak_bytes", d->at[s]);
        else
            gpufl__jw_null(w, "at_peak_bytes");
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

static void gaps(jw *w, const gpufl__ana_mem_layers_dev *d)
{
    gpufl__jw_arr(w, "gaps");
    for (uint32_t i = 0; i < d->ngaps; i++) {
        const gpufl__ana_mem_gap *g = &d->gaps[i];
        char key[64], why[512];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "gap", gpufl__ana_mem_gap_key(g->upper, g->lower, key, sizeof key));
        gpufl__jw_str(w, "upper", gpufl__ana_mem_key(g->upper));
        gpufl__jw_str(w, "lower", gpufl__ana_mem_key(g->lower));
        gpufl__jw_i64(w, "bytes", g->bytes);
        gpufl__jw_str(w, "why", gpufl__ana_mem_gap_why(g->upper, g->lower, why, sizeof why));
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

/* The timeline: every series as a member of each point, null where it was
 * not known, so that plots keep one shape. */
static void timeline(jw *w, const gpufl__ana_mem_layers_dev *d)
{
    gpufl__jw_obj(w, "timeline");
    gpufl__jw_u64(w, "changes", d->changes);
    gpufl__jw_arr(w, "points");
    for (uint32_t i = 0; i < d->npoints; i++) {
        const gpufl__ana_mem_point *p = &d->points[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "ts_ns", p->ts_ns);
        for (uint8_t s = 0; s < GPUFL__ANA_MEM_SERIES; s++)
            if (p->valid & GPUFL__ANA_MEM_BIT(s))
                gpufl__jw_u64(w, gpufl__ana_mem_key(s), p->v[s]);
            else
                gpufl__jw_null(w, gpufl__ana_mem_key(s));
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}

void gpufl__rj_memory_layers(jw *w, const gpufl_trace *t, const gpufl__ana_mem_layers *l)
{
    gpufl__jw_arr(w, "memory_layers");
    for (uint32_t k = 0; k < l->n; k++) {
        const gpufl__ana_mem_layers_dev *d = &l->devices[k];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "device", d->device);
        if (d->total_bytes)
            gpufl__jw_u64(w, "total_bytes", d->total_bytes);
        else
            gpufl__jw_null(w, "total_bytes");
        str_id(w, t, "framework", d->framework);
        gpufl__jw_str(w, "framework_source", framework_source(d->framework_source));
        gpufl__jw_bool(w, "driver_frees", d->driver_frees);
        layers(w, d);
        gpufl__jw_str(w, "at_peak_layer", gpufl__ana_mem_key(d->at_layer));
        gpufl__jw_u64(w, "at_peak_ns", d->at_ns);
        gaps(w, d);
        timeline(w, d);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

static const char *peak_kind(uint8_t k)
{
    switch (k) {
    case GPUFL__ANA_MPEAK_DEVICE: return "device";
    case GPUFL__ANA_MPEAK_STREAM: return "stream";
    case GPUFL__ANA_MPEAK_SCOPE: return "scope";
    default: return "nvtx";
    }
}

void gpufl__rj_memory_peaks(jw *w, const gpufl_trace *t, const gpufl__ana_mem_peaks *p)
{
    gpufl__jw_obj(w, "memory_peaks");
    gpufl__jw_arr(w, "rows");
    for (uint32_t i = 0; i < p->n; i++) {
        const gpufl__ana_mem_peak *r = &p->rows[i];
        bool named = r->kind == GPUFL__ANA_MPEAK_SCOPE || r->kind == GPUFL__ANA_MPEAK_NVTX;
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "kind", peak_kind(r->kind));
        gpufl__jw_str(w, "layer", r->blocks ? "blocks" : gpufl__ana_mem_key(r->series));
        gpufl__jw_u64(w, "device", r->device);
        if (r->kind == GPUFL__ANA_MPEAK_STREAM)
            gpufl__jw_u64(w, "stream", r->stream);
        else
            gpufl__jw_null(w, "stream");
        if (named)
            str_id(w, t, "name", r->name);
        else
            gpufl__jw_null(w, "name");
        gpufl__jw_u64(w, "instances", r->instances);
        gpufl__jw_u64(w, "peak_bytes", r->peak_bytes);
        gpufl__jw_u64(w, "peak_ns", r->peak_ns);
        gpufl__jw_i64(w, "growth_bytes", r->growth_bytes);
        gpufl__jw_i64(w, "max_growth_bytes", r->max_growth_bytes);
        gpufl__jw_u64(w, "allocs", r->allocs);
        gpufl__jw_u64(w, "alloc_bytes", r->alloc_bytes);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_u64(w, "names_left_out", p->names_left_out);
    gpufl__jw_obj_end(w);
}

/* A stack's frames as text, or null when the stacks were not loaded or
 * this one was never defined. Source frames are "function (file:line)";
 * native ones module+offset (`gpufl stacks` names them). */
static void frames(jw *w, const gpufl__stack_table *stacks, uint32_t id)
{
    const gpufl__stack_rec *s = id ? gpufl__stack_table_find(stacks, id) : NULL;
    if (!s) {
        gpufl__jw_null(w, "frames");
        return;
    }
    gpufl__jw_arr(w, "frames");
    for (uint32_t i = 0; i < s->total; i++) {
        const gpufl__stack_frame_rec *f = &s->frames[i];
        char text[2400];
        if (!f->present)
            snprintf(text, sizeof text, "?");
        else if (f->source)
            snprintf(text, sizeof text, "%s", f->module ? f->module : "?");
        else
            snprintf(text, sizeof text, "%s+0x%llx", f->module ? f->module : "?", (unsigned long long)f->offset);
        gpufl__jw_str(w, NULL, text);
    }
    gpufl__jw_arr_end(w);
}

static void leak(jw *w, const gpufl_trace *t, const gpufl__ana_leak *l, const gpufl__stack_table *stacks)
{
    gpufl__jw_obj(w, NULL);
    str_id(w, t, "scope", l->name);
    gpufl__jw_str(w, "kind", l->tree == GPUFL__ANA_TREE_SCOPES ? "scope" : "nvtx");
    gpufl__jw_u64(w, "device", l->device);
    gpufl__jw_str(w, "layer", gpufl__ana_mem_key(l->series));
    gpufl__jw_u64(w, "repetitions", l->repetitions);
    gpufl__jw_u64(w, "warmup", l->warmup);
    gpufl__jw_bool(w, "detected", l->detected);
    gpufl__jw_str(w, "severity", gpufl__ana_severity_name(l->severity));
    gpufl__jw_real(w, "memory_increase_mb", (double)l->increase_bytes / (1024.0 * 1024.0), FRAC_DECIMALS);
    gpufl__jw_real(w, "time_window_seconds", (double)l->window_ns / 1e9, FRAC_DECIMALS);
    gpufl__jw_real(w, "slope_bytes_per_step", l->slope, 3);
    gpufl__jw_real(w, "r_squared", l->r_squared, FRAC_DECIMALS);
    gpufl__jw_real(w, "p_value", l->p_value, P_DECIMALS);
    gpufl__jw_arr(w, "suggestions");
    for (uint32_t i = 0; i < l->nsuggestions; i++)
        gpufl__jw_str(w, NULL, l->suggestions[i]);
    gpufl__jw_arr_end(w);
    gpufl__jw_obj(w, "grew");
    gpufl__jw_u64(w, "count", l->grew_count);
    gpufl__jw_u64(w, "bytes", l->grew_bytes);
    gpufl__jw_arr(w, "stacks");
    for (uint32_t i = 0; i < l->ngroups; i++) {
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "stack", l->groups[i].stack);
        gpufl__jw_u64(w, "count", l->groups[i].count);
        gpufl__jw_u64(w, "bytes", l->groups[i].bytes);
        frames(w, stacks, l->groups[i].stack);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
    gpufl__jw_obj_end(w);
}

void gpufl__rj_leaks(jw *w, const gpufl_trace *t, const gpufl__ana_leaks *l, const gpufl__stack_table *stacks)
{
    gpufl__jw_obj(w, "leaks");
    gpufl__jw_u64(w, "min_steps", l->min_steps);
    gpufl__jw_u64(w, "detected", l->detected);
    gpufl__jw_arr(w, "rows");
    for (uint32_t i = 0; i < l->n; i++)
        leak(w, t, &l->rows[i], stacks);
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}
