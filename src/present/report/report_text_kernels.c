/*
 * The text report's kernel sections: hotspots (time, launch configuration,
 * the scopes, PyTorch ops and CPU stacks that launched them) and occupancy.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "core/event.h"
#include "present/report/report_text_util.h"

#define NAME_WIDTH 200
#define SHORT_NAME_WIDTH 60

static void config_line(const rt *c, const gpufl__ana_hotspot *h)
{
    const gpufl__ana_launch_config *g = &h->config;
    FILE *out = c->out;
    fprintf(out,
            "      config  grid (%u, %u, %u) block (%u, %u, %u), %u registers/thread, shared %s static + %s "
            "dynamic",
            g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2], g->registers,
            gpufl__rt_bytes(g->static_smem).s, gpufl__rt_bytes(g->dynamic_smem).s);
    if (g->local_mem)
        fprintf(out, ", local %s/thread", gpufl__rt_bytes(g->local_mem).s);
    if (g->occupancy_x10000)
        fprintf(out, ", occupancy %.1f %% (limited by %s)", g->occupancy_x10000 / 100.0,
                gpufl__limiter_name(g->limiter));
    fputc('\n', out);
    fprintf(out, "              %s of %s launches; %u configuration%s; %u device%s, %u stream%s\n",
            gpufl__rt_count(h->config_launches).s, gpufl__rt_count(h->dur.n).s, h->configs,
            gpufl__rt_plural(h->configs), h->devices, gpufl__rt_plural(h->devices), h->streams,
            gpufl__rt_plural(h->streams));
}

static void scopes_line(const rt *c, const gpufl__ana_hotspot *h, int tree, const char *label)
{
    const gpufl__ana_scope_tree *tr = &c->r->scopes.trees[tree];
    if (!h->nscopes[tree] && (!tr->n || !h->unscoped_ns[tree]))
        return; /* the session has no such tree */
    fprintf(c->out, "      %-7s ", label);
    for (uint32_t i = 0; i < h->nscopes[tree]; i++) {
        const gpufl__ana_hot_scope *s = &h->scopes[tree][i];
        char path[512], cut[SHORT_NAME_WIDTH + 1];
        if (s->node < tr->n)
            gpufl__ana_scope_path(c->t, tr, s->node, "/", path, sizeof path);
        else
            snprintf(path, sizeof path, "%s", gpufl__rt_str(c, s->name));
        gpufl__rt_fit(path, SHORT_NAME_WIDTH, cut);
        fprintf(c->out, "%s%s %s (%s launch%s)", i ? "; " : "", cut, gpufl__rt_pct(s->share * 100.0).s,
                gpufl__rt_count(s->launches).s, s->launches == 1 ? "" : "es");
    }
    if (h->unscoped_ns[tree])
        fprintf(c->out, "%soutside any: %s", h->nscopes[tree] ? "; " : "",
                gpufl__rt_pct(gpufl__rt_share(h->unscoped_ns[tree], (uint64_t)h->dur.total)).s);
    fputc('\n', c->out);
}

static void frame_text(const rt *c, const gpufl__stack_frame_rec *f, char *buf, size_t len)
{
    if (!f->present)
        snprintf(buf, len, "(not recorded: a piece of the stack's definition is missing)");
    else if (f->source)
        snprintf(buf, len, "%s", f->module ? f->module : "?");
    else if (c->o.name_frame)
        c->o.name_frame(c->o.frame_ctx, f->module, f->offset, buf, len);
    else
        snprintf(buf, len, "%s+0x%" PRIx64, f->module ? f->module : "?", f->offset);
}

/* The first frame of a source stack that is the program's own, not an
 * installed package's (site-packages, dist-packages, the standard
 * library); 0 when none is. */
static uint32_t first_own_frame(const gpufl__stack_rec *s)
{
    static const char *const libraries[] = {"/site-packages/", "/dist-packages/", "/lib/python3"};
    for (uint32_t i = 0; i < s->total; i++) {
        const char *m = s->frames[i].present && s->frames[i].module ? s->frames[i].module : "";
        bool library = false;
        for (size_t k = 0; k < sizeof libraries / sizeof libraries[0]; k++)
            library = library || strstr(m, libraries[k]) != NULL;
        if (!library)
            return i;
    }
    return 0;
}

void gpufl__rt_stack_frames(const rt *c, uint32_t id)
{
    const gpufl__stack_rec *s = gpufl__stack_table_find(c->o.stacks, id);
    if (!s) {
        fprintf(c->out, "                (its definition was not recorded)\n");
        return;
    }
    /* a Python stack starts in the framework's own code (torch's Linear,
     * Module.__call__): the line worth reading is the program's, so the
     * installed packages' frames above it are summed up in one line */
    uint32_t first = s->source ? first_own_frame(s) : 0;
    if (first) {
        char text[2400], cut[NAME_WIDTH + 1];
        frame_text(c, &s->frames[0], text, sizeof text);
        gpufl__rt_fit(text, NAME_WIDTH - 30, cut);
        fprintf(c->out, "                #0-%u in installed packages, innermost %s\n", first - 1, cut);
    }
    uint32_t end = s->total - first < c->o.max_frames ? s->total : first + c->o.max_frames;
    for (uint32_t i = first; i < end; i++) {
        char text[2400], cut[NAME_WIDTH + 1];
        frame_text(c, &s->frames[i], text, sizeof text);
        gpufl__rt_fit(text, NAME_WIDTH, cut);
        fprintf(c->out, "                #%-2u %s\n", i, cut);
    }
    if (s->total > end)
        fprintf(c->out, "                ... %u more frame%s%s\n", s->total - end, gpufl__rt_plural(s->total - end),
                s->truncated ? " (and the stack was deeper than recorded)" : "");
    else if (s->truncated)
        fprintf(c->out, "                ... (the stack was deeper than recorded)\n");
}

static void stacks_lines(const rt *c, const gpufl__ana_hotspot *h)
{
    if (!h->distinct_stacks)
        return;
    fprintf(c->out, "      stacks  %u distinct", h->distinct_stacks);
    if (h->no_stack_launches)
        fprintf(c->out, "; %s launch%s without one", gpufl__rt_count(h->no_stack_launches).s,
                h->no_stack_launches == 1 ? "" : "es");
    if (!c->o.stacks)
        fprintf(c->out, " (frames: gpufl stacks SESSION)");
    fputc('\n', c->out);
    for (uint32_t i = 0; i < h->nstacks; i++) {
        const gpufl__ana_hot_stack *s = &h->stacks[i];
        fprintf(c->out, "              stack %u: %s launch%s (%s), %s\n", s->stack, gpufl__rt_count(s->launches).s,
                s->launches == 1 ? "" : "es", gpufl__rt_pct(s->share * 100.0).s, gpufl__rt_dur(s->gpu_ns).s);
        if (c->o.stacks)
            gpufl__rt_stack_frames(c, s->stack);
    }
}

static void hotspot(const rt *c, uint32_t rank, const gpufl__ana_hotspot *h)
{
    FILE *out = c->out;
    char name[NAME_WIDTH + 1];
    gpufl__rt_fit(gpufl__rt_str(c, h->name)[0] ? gpufl__rt_str(c, h->name) : "(unnamed)", NAME_WIDTH, name);
    fprintf(out, "  %2u. %s  %s of kernel time: %s in %s launch%s\n", rank, name, gpufl__rt_pct(h->share * 100.0).s,
            gpufl__rt_dur((uint64_t)h->dur.total).s, gpufl__rt_count(h->dur.n).s, h->dur.n == 1 ? "" : "es");
    fprintf(out, "      time    mean %s, p50 %s, p95 %s, min %s, max %s\n", gpufl__rt_dur((uint64_t)h->dur.mean).s,
            gpufl__rt_dur((uint64_t)h->dur.p50).s, gpufl__rt_dur((uint64_t)h->dur.p95).s,
            gpufl__rt_dur((uint64_t)h->dur.min).s, gpufl__rt_dur((uint64_t)h->dur.max).s);
    config_line(c, h);
    scopes_line(c, h, GPUFL__ANA_TREE_SCOPES, "scopes");
    scopes_line(c, h, GPUFL__ANA_TREE_NVTX, "NVTX");
    gpufl__rt_hot_ops(c, h);
    stacks_lines(c, h);
}

void gpufl__rt_section_hotspots(const rt *c)
{
    const gpufl__ana_hotspots *hs = &c->r->hotspots;
    gpufl__rt_title(c, "Hotspots");
    if (!hs->n) {
        fprintf(c->out, "  no kernels recorded (kernels are recorded by the trace engine and up)\n");
        return;
    }
    fprintf(c->out, "  top %u of %s kernel%s by GPU time (%s launches, %s)\n\n", hs->n, gpufl__rt_count(hs->distinct).s,
            gpufl__rt_plural(hs->distinct), gpufl__rt_count(hs->launches).s, gpufl__rt_dur(hs->total_ns).s);
    for (uint32_t i = 0; i < hs->n; i++) {
        if (i)
            fputc('\n', c->out);
        hotspot(c, i + 1, &hs->kernels[i]);
    }
    bool frames_shown = false;
    for (uint32_t i = 0; c->o.stacks && i < hs->n; i++)
        frames_shown |= hs->kernels[i].nstacks > 0;
    if (frames_shown && c->o.frames_note)
        fprintf(c->out, "\n  note: %s\n", c->o.frames_note);
}

static const char *limiter_advice(uint8_t limiter)
{
    switch (limiter) {
    case 1: return "warps: the block size reaches the SM's warp slots";
    case 2: return "registers: fewer registers per thread (__launch_bounds__, -maxrregcount) raise it";
    case 3: return "shared_memory: less shared memory per block, or a larger carveout, raise it";
    case 4: return "blocks: the SM's block slots run out first; larger blocks raise it";
    default: return NULL;
    }
}

void gpufl__rt_section_occupancy(const rt *c)
{
    const gpufl__ana_hotspots *hs = &c->r->hotspots;
    FILE *out = c->out;
    gpufl__rt_title(c, "Occupancy");
    uint32_t known = 0, seen_limiters = 0;
    for (uint32_t i = 0; i < hs->n; i++) {
        const gpufl__ana_launch_config *g = &hs->kernels[i].config;
        if (!g->occupancy_x10000)
            continue;
        if (!known++)
            fprintf(out,
                    "  theoretical occupancy of the hot kernels' most common configurations\n"
                    "  %9s  %-13s %6s %5s %11s %8s  %s\n",
                    "occupancy", "limiter", "block", "regs", "smem/block", "share", "kernel");
        char name[SHORT_NAME_WIDTH + 1];
        gpufl__rt_fit(gpufl__rt_str(c, hs->kernels[i].name), SHORT_NAME_WIDTH, name);
        fprintf(out, "  %9s  %-13s %6u %5u %11s %8s  %s\n", gpufl__rt_pct(g->occupancy_x10000 / 100.0).s,
                gpufl__limiter_name(g->limiter), (unsigned)g->block[0] * g->block[1] * g->block[2], g->registers,
                gpufl__rt_bytes((uint64_t)g->static_smem + g->dynamic_smem).s,
                gpufl__rt_pct(hs->kernels[i].share * 100.0).s, name);
        if (g->limiter < 32)
            seen_limiters |= 1u << g->limiter;
    }
    if (!known) {
        fprintf(out, "  not recorded for %s: the trace engine computes it for each launch\n",
                hs->n ? "the hot kernels" : "any kernel");
        return;
    }
    fprintf(out, "  limited by\n");
    for (uint8_t l = 1; l < 5; l++)
        if (seen_limiters & (1u << l))
            fprintf(out, "    %s\n", limiter_advice(l));
    if (known < hs->n)
        fprintf(out, "  %u of the top %u kernels %s no occupancy recorded\n", hs->n - known, hs->n,
                hs->n - known == 1 ? "has" : "have");
}
