/*
 * The JSON report's warp stalls (docs/REPORT.md, `counters.stalls`): the
 * section's status with the PC sampling figures the text report prints,
 * every row rather than the top ten.
 */
#include "present/report/report_json_parts.h"
#include "present/report/source_code.h"

static const char *text(const gpufl_trace *t, uint32_t id)
{
    const char *s = gpufl_trace_string(t, id);
    return s ? s : "";
}

static void stall_list(jw *w, const gpufl_trace *t, const char *key, const gpufl__ana_stall *v, uint32_t n)
{
    gpufl__jw_arr(w, key);
    for (uint32_t i = 0; i < n && v[i].samples; i++) {
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "reason", text(t, v[i].reason));
        gpufl__jw_u64(w, "samples", v[i].samples);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

enum { KERNELS, LINES, SCOPES };

static void rows(jw *w, const gpufl_trace *t, const char *key, const gpufl__ana_stall_row *v, uint32_t n, int kind)
{
    gpufl__source_cache *sc = kind == LINES ? gpufl__report_code_cache(t) : NULL;
    gpufl__jw_arr(w, key);
    for (uint32_t i = 0; i < n; i++) {
        const gpufl__ana_stall_row *r = &v[i];
        gpufl__jw_obj(w, NULL);
        if (kind == SCOPES && !r->name)
            gpufl__jw_null(w, "scope");
        else
            gpufl__jw_str(w, kind == SCOPES ? "scope" : kind == LINES ? "function" : "name", text(t, r->name));
        if (kind == LINES) {
            gpufl__jw_str(w, "file", text(t, r->file));
            gpufl__jw_u64(w, "line", r->line);
            gpufl__report_code_json(w, sc, text(t, r->file), r->line);
        }
        gpufl__jw_u64(w, "samples", r->samples);
        gpufl__jw_u64(w, "stalled", r->stalled);
        if (kind == KERNELS)
            gpufl__jw_u64(w, "gpu_time_ns", r->kernel_ns);
        stall_list(w, t, "top", r->top, GPUFL__ANA_TOP_STALLS);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__source_cache_free(sc);
}

void gpufl__rj_stalls(jw *w, const gpufl_trace *t, const gpufl__ana_section *sec, const gpufl__ana_stalls *s)
{
    gpufl__jw_obj(w, "stalls");
    gpufl__jw_str(w, "status", sec->status == GPUFL__ANA_SECTION_ROWS ? "rows" : "empty");
    gpufl__jw_str(w, "engine", sec->engine);
    gpufl__jw_u64(w, "rows", sec->rows);
    gpufl__jw_u64(w, "samples", s->samples);
    gpufl__jw_u64(w, "stalled", s->stalled);
    stall_list(w, t, "reasons", s->reasons, s->nreasons);
    rows(w, t, "kernels", s->kernels, s->nkernels, KERNELS);
    rows(w, t, "lines", s->lines, s->nlines, LINES);
    rows(w, t, "scopes", s->scopes, s->nscopes, SCOPES);
    gpufl__jw_u64(w, "unattributed", s->unattributed);
    gpufl__jw_u64(w, "no_line", s->no_line);
    gpufl__jw_obj_end(w);
}
