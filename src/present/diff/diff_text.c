/*
 * `gpufl diff` as text (diff_text.h). Kernels and scopes share one row
 * layout: verdict, totals and their change, counts, medians and their
 * change, the noise, then the name and notes; the name comes last so that
 * long template names do not break the columns.
 */
#include "present/diff/diff_text.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "present/diff/diff_pm.h"
#include "present/report/summary_text.h"

#define NAME_WIDTH 80
#define VALUE_LABEL_WIDTH 30

typedef struct num {
    char s[48];
} num;

static num dur(uint64_t ns)
{
    num n;
    gpufl__format_duration(ns, n.s, sizeof n.s);
    return n;
}

static num count(uint64_t v)
{
    num n;
    snprintf(n.s, sizeof n.s, "%" PRIu64, v);
    return n;
}

/* delta in % of base: "+12.5 %", "-3.0 %", "0.0 %"; "n/a" when base is 0. */
static num pct(int64_t delta, uint64_t base)
{
    num n;
    if (delta == 0)
        snprintf(n.s, sizeof n.s, "0.0 %%");
    else if (base == 0)
        snprintf(n.s, sizeof n.s, "n/a");
    else
        snprintf(n.s, sizeof n.s, "%+.1f %%", (double)delta * 100.0 / (double)base);
    return n;
}

static int64_t sdelta(uint64_t base, uint64_t cand)
{
    return cand >= base ? (int64_t)(cand - base) : -(int64_t)(base - cand);
}

static uint64_t nonneg(int64_t v) { return v > 0 ? (uint64_t)v : 0; }

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* name cut to NAME_WIDTH bytes, ending in "..." when cut, never inside a
 * UTF-8 sequence; control characters shown as '?'. */
static void fit(const char *name, char buf[NAME_WIDTH + 1])
{
    size_t n = strlen(name);
    if (n > NAME_WIDTH) {
        n = NAME_WIDTH - 3;
        while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
    strcpy(buf + n, strlen(name) > n ? "..." : "");
}

/* ---- the result and the session ------------------------------------------------ */

static void head(const gpufl__diff *d, const gpufl__diff_text_opts *o, FILE *out)
{
    fprintf(out, "gpufl diff\n");
    fprintf(out, "  baseline   %s\n", o->baseline ? o->baseline : "");
    fprintf(out, "  candidate  %s\n", o->candidate ? o->candidate : "");
    fprintf(out, "  threshold  %.1f %%, min impact %.1f %%\n\n", d->options.threshold_pct, d->options.min_impact_pct);
    if (d->regressions)
        fprintf(out, "Result: REGRESSION: %u regression%s", d->regressions, plural(d->regressions));
    else
        fprintf(out, "Result: no regression");
    if (d->improvements)
        fprintf(out, "%s%u improvement%s", d->regressions ? ", " : " (", d->improvements, plural(d->improvements));
    fprintf(out, "%s\n", d->improvements && !d->regressions ? ")" : "");
}

static const char *verdict_word(uint8_t verdict)
{
    return verdict == GPUFL__DIFF_SAME ? "" : gpufl__diff_verdict_name(verdict);
}

static void value_row(FILE *out, const char *label, num b, num c, int64_t delta, uint64_t base, uint8_t verdict)
{
    const char *word = verdict_word(verdict);
    fprintf(out, "  %-*s %12s %12s %10s%s%s\n", VALUE_LABEL_WIDTH, label, b.s, c.s, pct(delta, base).s,
            word[0] ? "  " : "", word);
}

static void dur_row(FILE *out, const char *label, const gpufl__diff_value *v)
{
    value_row(out, label, dur(v->base), dur(v->cand), sdelta(v->base, v->cand), v->base, v->verdict);
}

static void count_row(FILE *out, const char *label, const gpufl__diff_value *v)
{
    value_row(out, label, count(v->base), count(v->cand), sdelta(v->base, v->cand), v->base, v->verdict);
}

static void session(const gpufl__diff *d, FILE *out)
{
    fprintf(out, "\nSession %*s %12s %12s %10s\n", VALUE_LABEL_WIDTH - 6, "", "baseline", "candidate", "change");
    dur_row(out, "wall time", &d->wall_ns);
    dur_row(out, "kernel time", &d->kernel_ns);
    count_row(out, "kernel launches", &d->launches);
    for (uint32_t i = 0; i < d->ndevices; i++) {
        const gpufl__diff_device *dv = &d->devices[i];
        char label[64];
        if (dv->presence != GPUFL__DIFF_BOTH)
            fprintf(out, "  GPU %u%s%s: only in the %s\n", dv->device, dv->name[0] ? " " : "", dv->name,
                    dv->presence == GPUFL__DIFF_NEW ? "candidate" : "baseline");
        snprintf(label, sizeof label, "GPU %u busy", dv->device);
        dur_row(out, label, &dv->busy_ns);
        snprintf(label, sizeof label, "GPU %u idle", dv->device);
        dur_row(out, label, &dv->idle_ns);
        snprintf(label, sizeof label, "GPU %u kernel launches", dv->device);
        count_row(out, label, &dv->kernels);
    }
}

/* ---- kernels and scopes ----------------------------------------------------------- */

static bool worth_listing(const gpufl__diff_change *ch)
{
    return ch->verdict != GPUFL__DIFF_SAME || ch->presence != GPUFL__DIFF_BOTH || ch->flags ||
           ch->per_item != GPUFL__DIFF_STEADY;
}

static void table_head(FILE *out, const char *base, const char *cand, const char *what)
{
    fprintf(out, "  %-9s %10s %10s %9s %8s %8s %10s %10s %9s %7s  %s\n", "verdict", base, cand, "change", "base n",
            "cand n", "p50 base", "p50 cand", "change", "noise", what);
}

/* One row; notes (may be "") follow the name in parentheses. */
static void change_row(FILE *out, const gpufl__diff_change *ch, const char *name, const char *notes)
{
    const gpufl__ana_dist *b = &ch->base, *c = &ch->cand;
    bool both = ch->presence == GPUFL__DIFF_BOTH;
    bool has_b = ch->presence != GPUFL__DIFF_NEW, has_c = ch->presence != GPUFL__DIFF_GONE;
    num noise, item;
    if (!both)
        snprintf(noise.s, sizeof noise.s, "-");
    else if (!ch->noise_known)
        snprintf(noise.s, sizeof noise.s, "n/a");
    else
        snprintf(noise.s, sizeof noise.s, "%.1f %%", ch->item_noise_pct);
    if (!both)
        snprintf(item.s, sizeof item.s, "-");
    else if (ch->item_pct == 0)
        snprintf(item.s, sizeof item.s, "0.0 %%");
    else
        snprintf(item.s, sizeof item.s, "%+.1f %%", ch->item_pct);
    char fitted[NAME_WIDTH + 1];
    fit(name, fitted);
    fprintf(out, "  %-9s %10s %10s %9s %8s %8s %10s %10s %9s %7s  %s%s%s%s\n", verdict_word(ch->verdict),
            has_b ? dur(nonneg(b->total)).s : "-", has_c ? dur(nonneg(c->total)).s : "-",
            both    ? pct(ch->total_ns, nonneg(b->total)).s
            : has_c ? "new"
                    : "gone",
            has_b ? count(b->n).s : "-", has_c ? count(c->n).s : "-", has_b ? dur(nonneg(b->p50)).s : "-",
            has_c ? dur(nonneg(c->p50)).s : "-", item.s, noise.s, fitted, notes[0] ? "  (" : "", notes,
            notes[0] ? ")" : "");
}

/* Appends "; "-separated notes of ch to buf (len bytes). */
static void change_notes(const gpufl__diff_change *ch, const char *item, char *buf, size_t len)
{
    size_t at = strlen(buf);
#define NOTE(...)                                                                                                      \
    do {                                                                                                               \
        if (at < len)                                                                                                  \
            at += (size_t)snprintf(buf + at, len - at, "%s", at ? "; " : "");                                          \
        if (at < len)                                                                                                  \
            at += (size_t)snprintf(buf + at, len - at, __VA_ARGS__);                                                   \
    } while (0)
    if (ch->per_item != GPUFL__DIFF_STEADY)
        NOTE("%s per %s", gpufl__diff_per_item_name(ch->per_item), item);
    if (ch->flags & GPUFL__DIFF_F_NOISE)
        NOTE("within noise");
    if (ch->flags & GPUFL__DIFF_F_SMALL)
        NOTE("below min impact");
#undef NOTE
}

static void config_note(const gpufl__diff_kernel *k, char *buf, size_t len)
{
    const gpufl__ana_launch_config *a = &k->base_config, *b = &k->cand_config;
    bool grid = memcmp(a->grid, b->grid, sizeof a->grid) != 0;
    bool block = memcmp(a->block, b->block, sizeof a->block) != 0;
    size_t at = 0;
    if (grid)
        at += (size_t)snprintf(buf + at, len - at, "grid %ux%ux%u -> %ux%ux%u", a->grid[0], a->grid[1], a->grid[2],
                               b->grid[0], b->grid[1], b->grid[2]);
    if (block && at < len)
        at += (size_t)snprintf(buf + at, len - at, "%sblock %ux%ux%u -> %ux%ux%u", at ? ", " : "", a->block[0],
                               a->block[1], a->block[2], b->block[0], b->block[1], b->block[2]);
    if (!grid && !block)
        snprintf(buf, len, "registers or memory per launch changed");
}

static void kernels(const gpufl__diff *d, bool all, FILE *out)
{
    uint32_t both = 0, hidden = 0;
    for (uint32_t i = 0; i < d->nkernels; i++)
        both += d->kernels[i].time.presence == GPUFL__DIFF_BOTH;
    uint32_t kreg = 0, kimp = 0;
    for (uint32_t i = 0; i < d->nkernels; i++) {
        kreg += d->kernels[i].time.verdict == GPUFL__DIFF_REGRESSED;
        kimp += d->kernels[i].time.verdict == GPUFL__DIFF_IMPROVED;
    }
    fprintf(out,
            "\nKernels: %u in both, %u new, %u gone; %u regressed, %u improved, %u with other launch "
            "counts\n",
            both, d->new_kernels, d->gone_kernels, kreg, kimp, d->count_changes);
    if (d->kernels_partial)
        fprintf(out, "  (a session ran more kernels than its report lists: only those listed were "
                     "compared)\n");
    for (uint32_t i = 0; i < d->nkernels; i++)
        hidden += !all && !worth_listing(&d->kernels[i].time);
    if (hidden == d->nkernels) {
        if (hidden)
            fprintf(out, "  none changed (--all lists the %u)\n", hidden);
        return;
    }
    table_head(out, "total base", "total cand", "kernel (GPU time per launch)");
    for (uint32_t i = 0; i < d->nkernels; i++) {
        const gpufl__diff_kernel *k = &d->kernels[i];
        if (!all && !worth_listing(&k->time))
            continue;
        char notes[512] = "";
        change_notes(&k->time, "launch", notes, sizeof notes);
        if (k->matched_configs > 1) {
            size_t at = strlen(notes);
            snprintf(notes + at, sizeof notes - at, "%s%u configurations compared like for like", at ? "; " : "",
                     k->matched_configs);
        }
        if (k->time.flags & GPUFL__DIFF_F_CONFIG) {
            char cfg[200];
            config_note(k, cfg, sizeof cfg);
            size_t at = strlen(notes);
            snprintf(notes + at, sizeof notes - at, "%sconfig: %s", at ? "; " : "", cfg);
        }
        change_row(out, &k->time, k->name, notes);
    }
    if (hidden)
        fprintf(out, "  ... and %u unchanged kernel%s (--all lists them)\n", hidden, plural(hidden));
}

static void scopes(const gpufl__diff *d, bool all, FILE *out)
{
    uint32_t n[GPUFL__ANA_TREE_COUNT] = {0}, hidden = 0;
    for (uint32_t i = 0; i < d->nscopes; i++)
        n[d->scopes[i].tree < GPUFL__ANA_TREE_COUNT ? d->scopes[i].tree : 0]++;
    fprintf(out, "\nScopes: %u gpufl scope path%s, %u NVTX range path%s\n", n[GPUFL__ANA_TREE_SCOPES],
            plural(n[GPUFL__ANA_TREE_SCOPES]), n[GPUFL__ANA_TREE_NVTX], plural(n[GPUFL__ANA_TREE_NVTX]));
    for (uint32_t i = 0; i < d->nscopes; i++)
        hidden += !all && !worth_listing(&d->scopes[i].wall);
    if (hidden == d->nscopes) {
        if (hidden)
            fprintf(out, "  none changed (--all lists the %u)\n", hidden);
        return;
    }
    table_head(out, "wall base", "wall cand", "scope path (wall time per instance)");
    for (uint32_t i = 0; i < d->nscopes; i++) {
        const gpufl__diff_scope *s = &d->scopes[i];
        if (!all && !worth_listing(&s->wall))
            continue;
        char notes[256] = "", name[NAME_WIDTH + 64];
        change_notes(&s->wall, "instance", notes, sizeof notes);
        if (s->tree == GPUFL__ANA_TREE_NVTX)
            snprintf(name, sizeof name, "nvtx %s%s%s%s", s->domain[0] ? "[" : "", s->domain, s->domain[0] ? "] " : "",
                     s->path);
        else
            snprintf(name, sizeof name, "%s", s->path);
        change_row(out, &s->wall, name, notes);
    }
    if (hidden)
        fprintf(out, "  ... and %u unchanged scope%s (--all lists them)\n", hidden, plural(hidden));
}

/* "33.9 %", or "(not top 4)" for a kernel's reason outside its top stalls */
static void stall_pct(double v, char *buf, size_t len)
{
    if (v < 0)
        snprintf(buf, len, "(not top 4)");
    else
        snprintf(buf, len, "%.1f %%", v);
}

/* Only when both sessions have PC samples; never a verdict. */
static void stalls(const gpufl__diff *d, FILE *out)
{
    if (!d->stalls_compared)
        return;
    fprintf(out, "\nWarp stalls (PC sampling): shares that moved %.0f points or more, top stalls that changed\n",
            GPUFL__DIFF_STALL_MOVE_PCT);
    if (!d->nstalls) {
        fputs("  none\n", out);
        return;
    }
    for (uint32_t i = 0; i < d->nstalls; i++) {
        const gpufl__diff_stall *s = &d->stalls[i];
        char b[32], c[32], name[NAME_WIDTH + 1];
        stall_pct(s->base_pct, b, sizeof b);
        stall_pct(s->cand_pct, c, sizeof c);
        fit(s->kernel ? s->kernel : "(session)", name);
        fprintf(out, "  %-*s %-22s %12s -> %-12s", NAME_WIDTH, name, s->reason, b, c);
        if (s->kernel && strcmp(s->base_top, s->cand_top))
            fprintf(out, "  top stall %s -> %s", s->base_top, s->cand_top);
        fputc('\n', out);
    }
}

/* A counter's figure in its unit: "61.3 %", "1.2e+08" (bytes and others
 * as numbers: the per-range figures are rarely round). */
static void counter_value(double v, int unit, char *buf, size_t len)
{
    if (unit == GPUFL__HW_PCT)
        snprintf(buf, len, "%.1f %%", v);
    else if (unit == GPUFL__HW_NS)
        snprintf(buf, len, "%.3f ms", v / 1e6);
    else
        snprintf(buf, len, "%.4g", v);
}

/* Only when both sessions have range metrics; never a verdict. */
static void counters(const gpufl__diff *d, FILE *out)
{
    if (!d->counters_compared)
        return;
    fprintf(out,
            "\nHardware counters (range profiler): moved %.0f %% or more (percentages: points); bytes, time and "
            "counts per range\n",
            GPUFL__DIFF_COUNTER_MOVE_PCT);
    if (!d->ncounters) {
        fputs("  none\n", out);
        return;
    }
    for (uint32_t i = 0; i < d->ncounters; i++) {
        const gpufl__diff_counter *k = &d->counters[i];
        char b[32], c[32], name[NAME_WIDTH + 1];
        counter_value(k->base, k->unit, b, sizeof b);
        counter_value(k->cand, k->unit, c, sizeof c);
        fit(k->scope ? k->scope : "(all ranges)", name);
        fprintf(out, "  %-*s %-50s %12s -> %s\n", NAME_WIDTH, name, k->metric, b, c);
    }
}

/* Only when both sessions have SASS metrics; never a verdict. */
static void sass(const gpufl__diff *d, FILE *out)
{
    if (!d->sass_compared)
        return;
    fprintf(out, "\nSASS metrics: coalescing and active lanes that moved %.0f points or more\n",
            GPUFL__DIFF_SASS_MOVE_PCT);
    if (!d->nsass) {
        fputs("  none\n", out);
        return;
    }
    for (uint32_t i = 0; i < d->nsass; i++) {
        const gpufl__diff_sass_row *s = &d->sass[i];
        char name[NAME_WIDTH + 1];
        fit(s->kernel, name);
        fprintf(out, "  %-*s %-22s %10.1f %% -> %.1f %%\n", NAME_WIDTH, name, s->metric, s->base_pct, s->cand_pct);
    }
}

static void legend(FILE *out)
{
    fputs("\nHow changes are judged\n"
          "  change     candidate - baseline, in % of the baseline; n = launches or instances\n"
          "  change     after p50: per launch or instance; for a kernel, each launch\n"
          "             configuration that both sessions ran is compared with itself, launch\n"
          "             by launch: launches at the same place in the program (the same\n"
          "             neighbours on their stream) are paired in order, whatever the counts,\n"
          "             and the medians of their duration ratios are weighted by baseline\n"
          "             time; otherwise (and for scopes) the change of the median\n"
          "  noise      of that change: 2 standard errors, the spread taken from the MAD of\n"
          "             the paired ratios (under two pairs: of each session's durations);\n"
          "             for scopes and kernels with no configuration in common, from each\n"
          "             session's p50-p95 distance; n/a with a single launch or instance\n"
          "             (the threshold alone decides)\n"
          "  slower     the change per launch or instance is past the threshold and past\n"
          "             the noise (faster: down)\n"
          "  regressed  the total moved past the threshold and by at least min impact (of the\n"
          "             baseline's kernel time; scopes and idle: of its wall time), and the move\n"
          "             is real: n moved past the threshold, or the change per launch or\n"
          "             instance past the noise (improved: down); a new kernel regresses, a\n"
          "             gone one improves, when its total is at least min impact; new and\n"
          "             gone scopes are not judged\n"
          "  wall time  regressed or improved past the threshold; busy, kernel time and\n"
          "             launches are not judged (the kernels judge them in detail)\n"
          "  matching   kernels by demangled name, all launch configurations together\n"
          "             (\"config\": the most common one changed); scopes by path and NVTX domain\n",
          out);
}

int gpufl__diff_text(const gpufl__diff *d, const gpufl__diff_text_opts *o, FILE *out)
{
    gpufl__diff_text_opts none = {0};
    if (!o)
        o = &none;
    head(d, o, out);
    session(d, out);
    kernels(d, o->all, out);
    scopes(d, o->all, out);
    stalls(d, out);
    counters(d, out);
    gpufl__diff_text_pm(d, o->all, out);
    sass(d, out);
    legend(out);
    return ferror(out) ? GPUFL_EIO : 0;
}
