/*
 * The text report's SASS metrics section (engine sass_metrics or deep):
 * per kernel, instructions, coalescing and active lanes; then the
 * findings (uncoalesced access, divergent branches) by line or pc. The
 * thresholds are the analysis's (analysis.h, docs/REPORT.md).
 */
#include <inttypes.h>

#include "present/report/report_text_util.h"
#include "present/report/source_code.h"

#define MAX_KERNELS 10
#define MAX_FINDINGS 10
#define CODE_WIDTH 72

static void pct(FILE *out, double v)
{
    if (v < 0)
        fprintf(out, "   n/a");
    else
        fprintf(out, " %4.0f%%", 100.0 * v);
}

static void where(const rt *c, const gpufl__ana_sass_row *l, char *buf, size_t len)
{
    if (l->line)
        snprintf(buf, len, "%s:%u", gpufl__rt_str(c, l->file), l->line);
    else
        snprintf(buf, len, "pc 0x%x", l->pc);
}

void gpufl__rt_section_sass(const rt *c)
{
    const gpufl__ana_sass *s = &c->r->sass;
    if (!s->rows)
        return;
    gpufl__rt_title(c, "SASS metrics");
    fprintf(c->out, "  %-40s %9s %14s %10s %7s\n", "kernel", "launches", "warp inst", "coalesced", "active");
    for (uint32_t i = 0; i < s->n_kernels && i < MAX_KERNELS; i++) {
        const gpufl__ana_sass_row *k = &s->kernels[i];
        char name[41];
        gpufl__rt_fit(gpufl__rt_str(c, k->name), 40, name);
        fprintf(c->out, "  %-40s %9" PRIu64 " %14s    ", name, k->launches, gpufl__rt_count(k->inst).s);
        pct(c->out, k->coalescing);
        fprintf(c->out, " ");
        pct(c->out, k->active);
        fprintf(c->out, "\n");
    }
    if (s->n_kernels > MAX_KERNELS)
        fprintf(c->out, "  ... and %u more\n", s->n_kernels - MAX_KERNELS);
    if (!s->n_findings) {
        fprintf(c->out, "  no uncoalesced access or divergent branches over the thresholds\n");
        return;
    }
    gpufl__source_cache *sc = gpufl__report_code_cache(c->t);
    for (uint32_t i = 0; i < s->n_findings && i < MAX_FINDINGS; i++) {
        const gpufl__ana_sass_finding *f = &s->findings[i];
        const gpufl__ana_sass_row *l = &s->lines[f->line];
        char at[300], name[41];
        where(c, l, at, sizeof at);
        gpufl__rt_fit(gpufl__rt_str(c, l->name), 40, name);
        if (f->kind == GPUFL__ANA_SASS_UNCOALESCED)
            fprintf(c->out, "  uncoalesced access: %s in %s: %.0f %% of its %s sectors needed\n", at, name,
                    100.0 * l->coalescing, gpufl__rt_count(l->sectors).s);
        else
            fprintf(c->out, "  divergent branches: %s in %s: %.1f of 32 threads active per instruction\n", at, name,
                    32.0 * l->active);
        char code[CODE_WIDTH + 1];
        gpufl__source_from from =
            l->line ? gpufl__report_code(sc, gpufl__rt_str(c, l->file), l->line, CODE_WIDTH, code) : GPUFL__SOURCE_NONE;
        if (from)
            fprintf(c->out, "      | %s%s\n", code, from == GPUFL__SOURCE_NOW ? "   (the file as it is now)" : "");
    }
    gpufl__source_cache_free(sc);
}
