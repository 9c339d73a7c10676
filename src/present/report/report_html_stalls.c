/*
 * The HTML report's warp stalls (PC sampling): the text report's section
 * as sortable tables, every kernel and the top source lines and scopes,
 * each with its top stall reasons as shares of its samples.
 */
#include <stdio.h>
#include <string.h>

#include "present/report/report_html_parts.h"
#include "present/report/source_code.h"

#define S(id) gpufl_trace_string(t, (id))

static void td_share(gpufl__hout *o, uint64_t part, uint64_t whole)
{
    double v = whole ? 100.0 * (double)part / (double)whole : 0.0;
    gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%.1f %%</td>", v, v);
}

static void td_top(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_stall_row *r)
{
    char buf[512];
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < GPUFL__ANA_TOP_STALLS && r->top[i].samples && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s %.1f %%", i ? ", " : "", S(r->top[i].reason),
                              r->samples ? 100.0 * (double)r->top[i].samples / (double)r->samples : 0.0);
    gpufl__html_td_text(o, buf);
}

static void reasons(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_stalls *s)
{
    static const char *const cols[] = {"reason", "samples", "share", NULL};
    gpufl__html_table_head(o, "stall-reasons", cols);
    for (uint32_t i = 0; i < s->nreasons; i++) {
        gpufl__hout_raw(o, "<tr>");
        const char *name = S(s->reasons[i].reason);
        gpufl__html_td_text(o, strcmp(name, "selected") ? name : "selected (issuing)");
        gpufl__html_td_u64(o, s->reasons[i].samples);
        td_share(o, s->reasons[i].samples, s->samples);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
}

static void kernels(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_stalls *s)
{
    static const char *const cols[] = {"kernel", "samples", "stalled", "GPU time (ns)", "top stalls", NULL};
    gpufl__html_table_head(o, "stall-kernels", cols);
    for (uint32_t i = 0; i < s->nkernels; i++) {
        const gpufl__ana_stall_row *k = &s->kernels[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_text(o, S(k->name));
        gpufl__html_td_u64(o, k->samples);
        td_share(o, k->stalled, k->samples);
        gpufl__html_td_u64(o, k->kernel_ns);
        td_top(o, t, k);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
}

static void lines(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_stalls *s)
{
    if (!s->nlines) {
        gpufl__hout_raw(o, "<p>No source lines: build kernels with <code>-lineinfo</code> and keep "
                           "<code>enable_source_collection</code> on.</p>\n");
        return;
    }
    static const char *const cols[] = {"source line", "code", "function", "samples", "of all", "top stalls", NULL};
    gpufl__html_table_head(o, "stall-lines", cols);
    gpufl__source_cache *sc = gpufl__report_code_cache(t);
    for (uint32_t i = 0; i < s->nlines; i++) {
        const gpufl__ana_stall_row *l = &s->lines[i];
        char where[4200], code[121];
        snprintf(where, sizeof where, "%s:%u", S(l->file), l->line);
        gpufl__report_code(sc, S(l->file), l->line, sizeof code - 1, code);
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_text(o, where);
        gpufl__html_td_text(o, code);
        gpufl__html_td_text(o, S(l->name));
        gpufl__html_td_u64(o, l->samples);
        td_share(o, l->samples, s->samples);
        td_top(o, t, l);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__source_cache_free(sc);
}

static void scopes(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_stalls *s)
{
    if (!s->nscopes)
        return;
    gpufl__hout_raw(o, "<p>By scope: the samples of each collection shared among the launches of their "
                       "function running then, by time (docs/REPORT.md).</p>\n");
    static const char *const cols[] = {"scope", "samples", "stalled", "top stalls", NULL};
    gpufl__html_table_head(o, "stall-scopes", cols);
    for (uint32_t i = 0; i < s->nscopes; i++) {
        const gpufl__ana_stall_row *k = &s->scopes[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_text(o, k->name ? S(k->name) : "(outside every scope)");
        gpufl__html_td_u64(o, k->samples);
        td_share(o, k->stalled, k->samples);
        td_top(o, t, k);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    if (s->unattributed)
        gpufl__hout_printf(o, "<p>%llu samples fell in no recorded launch.</p>\n", (unsigned long long)s->unattributed);
}

void gpufl__html_stalls(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    const gpufl__ana_stalls *s = &r->counters.pcs;
    if (!s->samples)
        return;
    gpufl__hout_printf(o,
                       "<section id=stalls><h2>Warp stalls (PC sampling)</h2>\n<p>%llu warp samples, "
                       "%.1f %% stalled. A share is of the row's samples; <em>selected</em> is a warp that "
                       "issued, never a stall.</p>\n",
                       (unsigned long long)s->samples,
                       s->samples ? 100.0 * (double)s->stalled / (double)s->samples : 0.0);
    reasons(o, t, s);
    kernels(o, t, s);
    lines(o, t, s);
    scopes(o, t, s);
    gpufl__hout_raw(o, "</section>\n");
}
