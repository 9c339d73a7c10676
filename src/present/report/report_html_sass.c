/*
 * The HTML report's SASS metrics (engine sass_metrics or deep): the text
 * report's section as sortable tables, every kernel and line with its
 * coalescing and active lanes, then the findings (uncoalesced access,
 * divergent branches) at the analysis's thresholds (docs/REPORT.md).
 */
#include <stdio.h>

#include "present/report/report_html_parts.h"
#include "present/report/source_code.h"

#define S(id) gpufl_trace_string(t, (id))

/* A 0..1 ratio as a percentage, "n/a" when not measured (-1). */
static void td_ratio(gpufl__hout *o, double v)
{
    if (v < 0)
        gpufl__hout_raw(o, "<td class=n data-v=\"-1\">n/a</td>");
    else
        gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%.1f %%</td>", 100.0 * v, 100.0 * v);
}

static void where(const gpufl_trace *t, const gpufl__ana_sass_row *l, char *buf, size_t len)
{
    if (l->line)
        snprintf(buf, len, "%s:%u", S(l->file), l->line);
    else
        snprintf(buf, len, "pc 0x%x", l->pc);
}

static void kernels(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_sass *s)
{
    static const char *const cols[] = {"kernel",         "launches", "warp instructions", "coalescing", "active lanes",
                                       "global sectors", NULL};
    gpufl__html_table_head(o, "sass-kernels", cols);
    for (uint32_t i = 0; i < s->n_kernels; i++) {
        const gpufl__ana_sass_row *k = &s->kernels[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_text(o, S(k->name));
        gpufl__html_td_u64(o, k->launches);
        gpufl__html_td_u64(o, k->inst);
        td_ratio(o, k->coalescing);
        td_ratio(o, k->active);
        gpufl__html_td_u64(o, k->sectors);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
}

static void findings(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_sass *s)
{
    if (!s->n_findings) {
        gpufl__hout_raw(o, "<p>No uncoalesced access or divergent branches over the thresholds.</p>\n");
        return;
    }
    static const char *const cols[] = {"finding", "where", "kernel", "coalescing", "active lanes", "cost", NULL};
    gpufl__html_table_head(o, "sass-findings", cols);
    for (uint32_t i = 0; i < s->n_findings; i++) {
        const gpufl__ana_sass_finding *f = &s->findings[i];
        const gpufl__ana_sass_row *l = &s->lines[f->line];
        char at[4200];
        where(t, l, at, sizeof at);
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_text(o, f->kind == GPUFL__ANA_SASS_UNCOALESCED ? "uncoalesced access" : "divergent branches");
        gpufl__html_td_text(o, at);
        gpufl__html_td_text(o, S(l->name));
        td_ratio(o, l->coalescing);
        td_ratio(o, l->active);
        char cost[64];
        snprintf(cost, sizeof cost, "%llu %s", (unsigned long long)f->cost,
                 f->kind == GPUFL__ANA_SASS_UNCOALESCED ? "excess sectors" : "idle lanes");
        gpufl__html_td_text(o, cost);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
}

static void lines(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_sass *s)
{
    static const char *const cols[] = {"source line", "code",         "kernel", "warp instructions",
                                       "coalescing",  "active lanes", NULL};
    gpufl__html_table_head(o, "sass-lines", cols);
    gpufl__source_cache *sc = gpufl__report_code_cache(t);
    for (uint32_t i = 0; i < s->n_lines; i++) {
        const gpufl__ana_sass_row *l = &s->lines[i];
        char at[4200], code[121] = "";
        where(t, l, at, sizeof at);
        if (l->line)
            gpufl__report_code(sc, S(l->file), l->line, sizeof code - 1, code);
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_text(o, at);
        gpufl__html_td_text(o, code);
        gpufl__html_td_text(o, S(l->name));
        gpufl__html_td_u64(o, l->inst);
        td_ratio(o, l->coalescing);
        td_ratio(o, l->active);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__source_cache_free(sc);
}

void gpufl__html_sass(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    const gpufl__ana_sass *s = &r->sass;
    if (!s->rows)
        return;
    gpufl__hout_printf(o, "<section id=sass><h2>SASS metrics</h2>\n<p>Counted per instruction over all of a "
                          "kernel's launches. Coalescing: global memory sectors needed of those touched; active "
                          "lanes: the share of a warp's 32 threads running each instruction.</p>\n");
    findings(o, t, s);
    kernels(o, t, s);
    lines(o, t, s);
    gpufl__hout_raw(o, "</section>\n");
}
