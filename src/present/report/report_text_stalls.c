/*
 * The text report's warp stall section (PC sampling): where the warps of
 * the session's kernels were waiting, by reason, by kernel, by source line
 * and by scope. A share is of the row's samples; "selected" (the warp was
 * issuing an instruction) is counted in a row's samples but is never one
 * of its stalls.
 */
#include <stdio.h>
#include <string.h>

#include "present/report/report_text_util.h"
#include "present/report/source_code.h"

#define MAX_ROWS 10
#define NAME_WIDTH 44
#define FILE_WIDTH 48
#define CODE_WIDTH 72

/* "long_scoreboard 61% wait 12% ..." for a row's top stalls */
static void top_stalls(const rt *c, const gpufl__ana_stall_row *row)
{
    for (unsigned i = 0; i < GPUFL__ANA_TOP_STALLS && row->top[i].samples; i++)
        fprintf(c->out, "%s%s %s", i ? ", " : "", gpufl__rt_str(c, row->top[i].reason),
                gpufl__rt_pct(gpufl__rt_share(row->top[i].samples, row->samples)).s);
    fputc('\n', c->out);
}

static void reasons(const rt *c, const gpufl__ana_stalls *s)
{
    fprintf(c->out, "  %s warp samples, %s stalled; by reason:\n", gpufl__rt_count(s->samples).s,
            gpufl__rt_pct(gpufl__rt_share(s->stalled, s->samples)).s);
    for (uint32_t i = 0; i < s->nreasons && i < MAX_ROWS; i++)
        fprintf(c->out, "    %-28s %12s %8s\n",
                strcmp(gpufl__rt_str(c, s->reasons[i].reason), "selected") ? gpufl__rt_str(c, s->reasons[i].reason)
                                                                           : "selected (issuing)",
                gpufl__rt_count(s->reasons[i].samples).s,
                gpufl__rt_pct(gpufl__rt_share(s->reasons[i].samples, s->samples)).s);
}

static void kernels(const rt *c, const gpufl__ana_stalls *s)
{
    fprintf(c->out, "\n  %-*s %10s %8s %10s  top stalls\n", NAME_WIDTH, "kernel", "samples", "stalled", "GPU time");
    for (uint32_t i = 0; i < s->nkernels && i < MAX_ROWS; i++) {
        const gpufl__ana_stall_row *k = &s->kernels[i];
        char name[NAME_WIDTH + 1];
        gpufl__rt_fit(gpufl__rt_str(c, k->name), NAME_WIDTH, name);
        fprintf(c->out, "  %-*s %10s %8s %10s  ", NAME_WIDTH, name, gpufl__rt_count(k->samples).s,
                gpufl__rt_pct(gpufl__rt_share(k->stalled, k->samples)).s,
                k->kernel_ns ? gpufl__rt_dur(k->kernel_ns).s : "-");
        top_stalls(c, k);
    }
    if (s->nkernels > MAX_ROWS)
        fprintf(c->out, "  (%u more kernels)\n", s->nkernels - MAX_ROWS);
}

/* The file's last FILE_WIDTH - 8 characters: the end names it best. */
static void file_line(const rt *c, const gpufl__ana_stall_row *l, char *buf, size_t len)
{
    const char *f = gpufl__rt_str(c, l->file);
    size_t n = strlen(f), keep = FILE_WIDTH - 8;
    snprintf(buf, len, "%s%s:%u", n > keep ? "..." : "", n > keep ? f + n - keep + 3 : f, l->line);
}

static void lines(const rt *c, const gpufl__ana_stalls *s)
{
    if (!s->nlines) {
        fprintf(c->out,
                "\n  source lines: none (build kernels with -lineinfo, and keep enable_source_collection on)\n");
        return;
    }
    fprintf(c->out, "\n  %-*s %10s %8s  top stalls\n", FILE_WIDTH, "source line", "samples", "of all");
    gpufl__source_cache *sc = gpufl__report_code_cache(c->t);
    for (uint32_t i = 0; i < s->nlines && i < MAX_ROWS; i++) {
        const gpufl__ana_stall_row *l = &s->lines[i];
        char where[FILE_WIDTH + 16], code[CODE_WIDTH + 1];
        file_line(c, l, where, sizeof where);
        fprintf(c->out, "  %-*s %10s %8s  ", FILE_WIDTH, where, gpufl__rt_count(l->samples).s,
                gpufl__rt_pct(gpufl__rt_share(l->samples, s->samples)).s);
        top_stalls(c, l);
        gpufl__source_from from = gpufl__report_code(sc, gpufl__rt_str(c, l->file), l->line, CODE_WIDTH, code);
        if (from)
            fprintf(c->out, "      | %s%s\n", code, from == GPUFL__SOURCE_NOW ? "   (the file as it is now)" : "");
    }
    gpufl__source_cache_free(sc);
    if (s->no_line)
        fprintf(c->out, "  (%s of the samples are at instructions without line info)\n",
                gpufl__rt_pct(gpufl__rt_share(s->no_line, s->samples)).s);
}

static void scopes(const rt *c, const gpufl__ana_stalls *s)
{
    if (!s->nscopes)
        return;
    fprintf(c->out, "\n  %-*s %10s %8s  top stalls (samples shared among the launches running)\n", NAME_WIDTH, "scope",
            "samples", "stalled");
    for (uint32_t i = 0; i < s->nscopes && i < MAX_ROWS; i++) {
        const gpufl__ana_stall_row *k = &s->scopes[i];
        char name[NAME_WIDTH + 1];
        gpufl__rt_fit(k->name ? gpufl__rt_str(c, k->name) : "(outside every scope)", NAME_WIDTH, name);
        fprintf(c->out, "  %-*s %10s %8s  ", NAME_WIDTH, name, gpufl__rt_count(k->samples).s,
                gpufl__rt_pct(gpufl__rt_share(k->stalled, k->samples)).s);
        top_stalls(c, k);
    }
    if (s->unattributed)
        fprintf(c->out, "  (%s samples fell in no recorded launch)\n", gpufl__rt_count(s->unattributed).s);
}

void gpufl__rt_section_stalls(const rt *c)
{
    const gpufl__ana_stalls *s = &c->r->counters.pcs;
    gpufl__rt_title(c, "Warp stalls (PC sampling)");
    reasons(c, s);
    kernels(c, s);
    lines(c, s);
    scopes(c, s);
}
