/*
 * The JSON report's SASS metrics (docs/REPORT.md, `counters.sass`): the
 * section's status, then every kernel and line row of the analysis
 * (ana_sass.c) and its findings, where the text report prints the top ten.
 */
#include "present/report/report_json_parts.h"
#include "present/report/source_code.h"

static const char *text(const gpufl_trace *t, uint32_t id)
{
    const char *s = gpufl_trace_string(t, id);
    return s ? s : "";
}

/* A ratio of 0..1, null when the analysis could not tell (-1). */
static void ratio(jw *w, const char *key, double v)
{
    if (v < 0)
        gpufl__jw_null(w, key);
    else
        gpufl__jw_real(w, key, v, 4);
}

static void where(jw *w, const gpufl_trace *t, gpufl__source_cache *sc, const gpufl__ana_sass_row *r)
{
    gpufl__jw_str(w, "function", text(t, r->name));
    if (r->line) {
        gpufl__jw_str(w, "file", text(t, r->file));
        gpufl__jw_u64(w, "line", r->line);
        gpufl__report_code_json(w, sc, text(t, r->file), r->line);
        gpufl__jw_null(w, "pc");
    } else {
        gpufl__jw_null(w, "file");
        gpufl__jw_null(w, "line");
        gpufl__report_code_json(w, sc, NULL, 0);
        gpufl__jw_u64(w, "pc", r->pc);
    }
}

static void counts(jw *w, const gpufl__ana_sass_row *r)
{
    gpufl__jw_u64(w, "inst_executed", r->inst);
    gpufl__jw_u64(w, "thread_inst_executed", r->thread_inst);
    gpufl__jw_u64(w, "sectors", r->sectors);
    gpufl__jw_u64(w, "sectors_ideal", r->sectors_ideal);
    gpufl__jw_u64(w, "branch_targets", r->branch_targets);
    gpufl__jw_u64(w, "divergent_targets", r->divergent_targets);
    gpufl__jw_u64(w, "valid", r->valid);
    ratio(w, "coalescing", r->coalescing);
    ratio(w, "active", r->active);
}

void gpufl__rj_sass(jw *w, const gpufl_trace *t, const gpufl__ana_section *sec, const gpufl__ana_sass *s)
{
    gpufl__jw_obj(w, "sass");
    gpufl__jw_str(w, "status", sec->status == GPUFL__ANA_SECTION_ROWS ? "rows" : "empty");
    gpufl__jw_str(w, "engine", sec->engine);
    gpufl__jw_u64(w, "rows", sec->rows);
    gpufl__source_cache *sc = gpufl__report_code_cache(t);
    gpufl__jw_arr(w, "kernels");
    for (uint32_t i = 0; i < s->n_kernels; i++) {
        const gpufl__ana_sass_row *k = &s->kernels[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "name", text(t, k->name));
        gpufl__jw_u64(w, "launches", k->launches);
        counts(w, k);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_arr(w, "lines");
    for (uint32_t i = 0; i < s->n_lines; i++) {
        gpufl__jw_obj(w, NULL);
        where(w, t, sc, &s->lines[i]);
        counts(w, &s->lines[i]);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_arr(w, "findings");
    for (uint32_t i = 0; i < s->n_findings; i++) {
        const gpufl__ana_sass_finding *f = &s->findings[i];
        const gpufl__ana_sass_row *l = &s->lines[f->line];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "kind", f->kind == GPUFL__ANA_SASS_UNCOALESCED ? "uncoalesced" : "divergent");
        where(w, t, sc, l);
        gpufl__jw_u64(w, "cost", f->cost); /* sectors beyond the ideal, or idle lanes */
        ratio(w, "coalescing", l->coalescing);
        ratio(w, "active", l->active);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
    gpufl__source_cache_free(sc);
}
