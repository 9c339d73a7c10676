/*
 * The text report's memory section: the layers of the process's memory
 * (NVML, driver, framework) and the gaps between them, the peaks of live
 * memory by device, stream and name, the leak verdict of each repeated
 * scope, and the allocations replayed per device and space with what was
 * live at the peak. Memory a caching allocator holds (a driver row with no
 * free) is called held, never leaked: the leak verdict is the growth
 * across repetitions.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/event.h"
#include "present/report/report_text_util.h"
#include "read/rows.h"

#define MAX_ALLOC_ROWS 5 /* per memory row and list */
#define MAX_NAME_ROWS 10 /* peaks per kind and device */
#define MAX_CLEAN_LEAK_ROWS 10
#define NAME_WIDTH 40
#define DEFAULT_MAX_FRAMES 6 /* as the whole report's */

static rt_num since_start(const rt *c, uint64_t ts)
{
    uint64_t start = c->r->summary.start_ns;
    return gpufl__rt_dur(ts > start ? ts - start : 0);
}

/* "+1.00 MiB", "-512.0 KiB", "0 B" */
static rt_num signed_bytes(int64_t v)
{
    rt_num n, b = gpufl__rt_bytes(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
    snprintf(n.s, sizeof n.s, "%s%s", v > 0 ? "+" : v < 0 ? "-" : "", b.s);
    return n;
}

/* ---- layers -------------------------------------------------------------------- */

static void layer_line(const rt *c, const gpufl__ana_mem_layers_dev *d, uint8_t s)
{
    bool at = d->at_valid & GPUFL__ANA_MEM_BIT(s);
    fprintf(c->out, "    %-36s %12s %12s  at %s\n", gpufl__ana_mem_label(s), at ? gpufl__rt_bytes(d->at[s]).s : "-",
            gpufl__rt_bytes(d->peak[s]).s, since_start(c, d->peak_ns[s]).s);
}

static void layers_device(const rt *c, const gpufl__ana_mem_layers_dev *d)
{
    FILE *out = c->out;
    fprintf(out, "  GPU %u: the layers at this process's peak (%s, %s into the session)\n", d->device,
            gpufl__ana_mem_label(d->at_layer), since_start(c, d->at_ns).s);
    fprintf(out, "    %-36s %12s %12s\n", "layer", "then", "peak");
    for (uint8_t s = 0; s < GPUFL__ANA_MEM_SERIES; s++)
        if (d->known & GPUFL__ANA_MEM_BIT(s))
            layer_line(c, d, s);
    if (!(d->known & GPUFL__ANA_MEM_BIT(GPUFL__ANA_MEM_PROCESS)))
        fprintf(out, "    this process (NVML): not recorded (system sampling, NVML per-process figures)\n");
    if (d->framework_source == GPUFL__ANA_FW_NONE)
        fprintf(out, "    framework allocator: not recorded (gpufl.memory records PyTorch's; gpufl mem track)\n");
    else if (d->framework_source == GPUFL__ANA_FW_BLOCKS)
        fprintf(out, "    (framework allocated: its blocks replayed; its reserved bytes were not recorded)\n");
    for (uint32_t i = 0; i < d->ngaps; i++) {
        const gpufl__ana_mem_gap *g = &d->gaps[i];
        char why[512], pair[96];
        snprintf(pair, sizeof pair, "%s - %s", gpufl__ana_mem_key(g->upper), gpufl__ana_mem_key(g->lower));
        fprintf(out, "    %s %-27s %12s  %s\n", i ? "   " : "gap", pair, signed_bytes(g->bytes).s,
                gpufl__ana_mem_gap_why(g->upper, g->lower, why, sizeof why));
    }
    if ((d->known & GPUFL__ANA_MEM_BIT(GPUFL__ANA_MEM_DRIVER)) && !d->driver_frees &&
        d->framework_source == GPUFL__ANA_FW_NONE)
        fprintf(out, "    the driver recorded no free: a caching allocator (PyTorch's) keeps the segments it\n"
                     "    reserved for reuse, so driver memory here is held, not leaked (leaks: below)\n");
}

/* ---- peaks ----------------------------------------------------------------------- */

static void peak_name_row(const rt *c, const gpufl__ana_mem_peak *p)
{
    char name[NAME_WIDTH + 1];
    gpufl__rt_fit(gpufl__rt_str(c, p->name), NAME_WIDTH, name);
    fprintf(c->out, "    %-40s %-5s %9s %11s %10s %11s %9s\n", name,
            p->kind == GPUFL__ANA_MPEAK_SCOPE ? "scope" : "NVTX", gpufl__rt_count(p->instances).s,
            gpufl__rt_bytes(p->peak_bytes).s, since_start(c, p->peak_ns).s, signed_bytes(p->growth_bytes).s,
            gpufl__rt_count(p->allocs).s);
}

static void peaks(const rt *c)
{
    const gpufl__ana_mem_peaks *pk = &c->r->mem_peaks;
    FILE *out = c->out;
    uint32_t names = 0;
    for (uint32_t i = 0; i < pk->n; i++) {
        const gpufl__ana_mem_peak *p = &pk->rows[i];
        switch (p->kind) {
        case GPUFL__ANA_MPEAK_DEVICE:
            names = 0;
            fprintf(out, "  GPU %u: peak of %s %s at %s, %s allocation%s made\n", p->device,
                    p->blocks ? "framework blocks live" : gpufl__ana_mem_label(p->series),
                    gpufl__rt_bytes(p->peak_bytes).s, since_start(c, p->peak_ns).s, gpufl__rt_count(p->allocs).s,
                    gpufl__rt_plural(p->allocs));
            break;
        case GPUFL__ANA_MPEAK_STREAM:
            fprintf(out, "    stream %-6u peak %s at %s, %s allocation%s (%s)\n", p->stream,
                    gpufl__rt_bytes(p->peak_bytes).s, since_start(c, p->peak_ns).s, gpufl__rt_count(p->allocs).s,
                    gpufl__rt_plural(p->allocs), gpufl__rt_bytes(p->alloc_bytes).s);
            break;
        default:
            if (names++ == 0)
                fprintf(out, "    %-40s %-5s %9s %11s %10s %11s %9s\n", "while open: scope or NVTX range", "kind",
                        "instances", "peak", "at", "growth", "allocs");
            if (names <= 2 * MAX_NAME_ROWS)
                peak_name_row(c, p);
            break;
        }
    }
    if (pk->names_left_out)
        fprintf(out, "    ... %s more name%s\n", gpufl__rt_count(pk->names_left_out).s,
                gpufl__rt_plural(pk->names_left_out));
    if (pk->n)
        fprintf(out, "    (peak: the most live while an instance was open; growth: live at the end minus at the\n"
                     "     begin, summed over instances; allocs: made with it the innermost scope or range)\n");
}

/* ---- leaks ------------------------------------------------------------------------- */

static rt_num p_text(double p)
{
    rt_num n;
    if (p < 0.0001)
        snprintf(n.s, sizeof n.s, "p < 0.0001");
    else
        snprintf(n.s, sizeof n.s, "p %.4f", p);
    return n;
}

static void leak_head(const rt *c, const gpufl__ana_leak *l)
{
    char name[NAME_WIDTH + 1];
    gpufl__rt_fit(gpufl__rt_str(c, l->name), NAME_WIDTH, name);
    if (l->detected)
        fprintf(c->out, "    LEAK, severity %s: ", gpufl__ana_severity_name(l->severity));
    else
        fprintf(c->out, "    ");
    fprintf(c->out, "%s (%s, GPU %u, %s): ", name, l->tree == GPUFL__ANA_TREE_SCOPES ? "scope" : "NVTX", l->device,
            gpufl__ana_mem_label(l->series));
}

static void leak_row(const rt *c, const gpufl__ana_leak *l)
{
    FILE *out = c->out;
    leak_head(c, l);
    uint32_t fitted = l->repetitions - l->warmup;
    fprintf(out, "%s%s a repetition, %s over the last %u of %u", l->detected ? "" : "no leak; ",
            signed_bytes((int64_t)llround(l->slope)).s, signed_bytes(l->increase_bytes).s, fitted, l->repetitions);
    if (l->detected)
        fprintf(out, " in %s", gpufl__rt_dur(l->window_ns).s);
    fprintf(out, " (%s, r² %.2f)\n", p_text(l->p_value).s, l->r_squared);
    if (l->grew_count) {
        fprintf(out, "      made in those repetitions and still live after them: %s allocation%s, %s\n",
                gpufl__rt_count(l->grew_count).s, gpufl__rt_plural(l->grew_count), gpufl__rt_bytes(l->grew_bytes).s);
        for (uint32_t i = 0; i < l->ngroups; i++) {
            const gpufl__ana_leak_group *g = &l->groups[i];
            if (g->stack)
                fprintf(out, "        stack %u: %s allocation%s, %s\n", g->stack, gpufl__rt_count(g->count).s,
                        gpufl__rt_plural(g->count), gpufl__rt_bytes(g->bytes).s);
            else
                fprintf(out, "        no stack recorded: %s allocation%s, %s\n", gpufl__rt_count(g->count).s,
                        gpufl__rt_plural(g->count), gpufl__rt_bytes(g->bytes).s);
            if (g->stack && c->o.stacks)
                gpufl__rt_stack_frames(c, g->stack);
        }
    }
    for (uint32_t i = 0; i < l->nsuggestions; i++)
        fprintf(out, "      * %s\n", l->suggestions[i]);
}

/* The NVTX ranges inside leaking scope row `scope` that rise with it, in one line. */
static void riders(const rt *c, uint32_t scope)
{
    const gpufl__ana_leaks *lk = &c->r->leaks;
    uint32_t n = 0, shown = 0;
    for (uint32_t i = 0; i < lk->n; i++)
        n += gpufl__ana_leak_rides_on(lk, i) == (int)scope;
    if (!n)
        return;
    fprintf(c->out, "      rising with it, inside it: %u NVTX range%s (", n, gpufl__rt_plural(n));
    for (uint32_t i = 0; i < lk->n && shown < 4; i++)
        if (gpufl__ana_leak_rides_on(lk, i) == (int)scope)
            fprintf(c->out, "%s%s", shown++ ? ", " : "", gpufl__rt_str(c, lk->rows[i].name));
    fprintf(c->out, "%s): not leaks of their own\n", n > shown ? ", ..." : "");
}

static void leaks(const rt *c)
{
    const gpufl__ana_leaks *lk = &c->r->leaks;
    FILE *out = c->out;
    fprintf(out,
            "\n  Leaks: each scope or NVTX range repeated at least %u times is a step; live memory after each\n"
            "  repetition, a line through them after a warm-up (the first 20 %%), a leak when it rises\n"
            "  steadily (p < 0.01, r² >= 0.5, 1 MiB or more)\n",
            lk->min_steps);
    if (!lk->n) {
        fprintf(out, "    nothing repeated often enough (or no memory recorded while it ran)\n");
        return;
    }
    uint32_t clean = 0;
    for (uint32_t i = 0; i < lk->n; i++) {
        const gpufl__ana_leak *l = &lk->rows[i];
        if (gpufl__ana_leak_rides_on(lk, i) >= 0)
            continue; /* told with the scope it rides on */
        if (!l->detected && clean++ >= MAX_CLEAN_LEAK_ROWS)
            continue;
        leak_row(c, l);
        if (l->detected && l->tree == GPUFL__ANA_TREE_SCOPES)
            riders(c, i);
    }
    if (clean > MAX_CLEAN_LEAK_ROWS)
        fprintf(out, "    ... %u more without a leak\n", clean - MAX_CLEAN_LEAK_ROWS);
    if (!lk->detected)
        fprintf(out, "    no leak found\n");
}

/* ---- allocations replayed --------------------------------------------------------- */

/* The name of gpufl scope `id` (a linear search: a few calls per report). */
static const char *scope_name(const rt *c, uint64_t id)
{
    gpufl__rows r;
    gpufl__rows_open(&r, c->t);
    for (size_t i = 0; i < gpufl__rows_n(&r, GPUFL__TBL_SCOPE); i++)
        if (gpufl__s_id(r.scopes, i) == id)
            return gpufl__rt_str(c, gpufl__s_name(r.scopes, i));
    return "?";
}

static void allocation(const rt *c, const gpufl__ana_allocation *a, bool frames)
{
    FILE *out = c->out;
    fprintf(out, "      %10s at %s, %s", gpufl__rt_bytes(a->bytes).s, since_start(c, a->ts_ns).s,
            gpufl__mem_kind_name(a->kind));
    if (a->tid)
        fprintf(out, ", thread %u", a->tid);
    if (a->scope)
        fprintf(out, ", scope %s", scope_name(c, a->scope));
    if (a->nvtx)
        fprintf(out, ", NVTX %s", gpufl__rt_str(c, a->nvtx));
    if (a->stack)
        fprintf(out, ", stack %u", a->stack);
    fputc('\n', out);
    if (frames && a->stack && c->o.stacks)
        gpufl__rt_stack_frames(c, a->stack);
}

static void allocations(const rt *c, const char *title, uint64_t count, uint32_t n, const gpufl__ana_allocation *list,
                        bool frames)
{
    if (!n)
        return;
    uint32_t shown = n < MAX_ALLOC_ROWS ? n : MAX_ALLOC_ROWS;
    fprintf(c->out, "    %s (%s; the largest %u, time after the session's start):\n", title, gpufl__rt_count(count).s,
            shown);
    for (uint32_t i = 0; i < shown; i++)
        allocation(c, &list[i], frames);
}

/* Whether the never-freed list repeats the live-at-peak one (a caching
 * allocator that never frees makes them equal). */
static bool same_allocations(const gpufl__ana_mem_row *w)
{
    if (w->nlive != w->nleaks || w->live_at_peak != w->never_freed || !w->nlive)
        return false;
    for (uint32_t i = 0; i < w->nlive; i++)
        if (w->live[i].address != w->leaks[i].address || w->live[i].ts_ns != w->leaks[i].ts_ns)
            return false;
    return true;
}

static const char *space_title(uint8_t space)
{
    switch (space) {
    case GPUFL__ANA_SPACE_HOST: return "host memory";
    case GPUFL__ANA_SPACE_FRAMEWORK: return "framework blocks (tensors)";
    default: return "device memory";
    }
}

static void mem_row(const rt *c, const gpufl__ana_mem_row *w)
{
    FILE *out = c->out;
    /* a framework's blocks carry source (Python) stacks: worth printing;
     * driver stacks stay ids, as in the hotspots' note */
    bool frames = w->space == GPUFL__ANA_SPACE_FRAMEWORK;
    fprintf(out, "  GPU %u, %s: %s allocation%s (%s), %s free%s (%s)\n", w->device, space_title(w->space),
            gpufl__rt_count(w->allocs).s, gpufl__rt_plural(w->allocs), gpufl__rt_bytes(w->alloc_bytes).s,
            gpufl__rt_count(w->frees).s, gpufl__rt_plural(w->frees), gpufl__rt_bytes(w->free_bytes).s);
    fprintf(out, "    peak %s live", gpufl__rt_bytes(w->peak_bytes).s);
    if (w->peak_bytes)
        fprintf(out, " at %s, in %s allocation%s", since_start(c, w->peak_ns).s, gpufl__rt_count(w->live_at_peak).s,
                gpufl__rt_plural(w->live_at_peak));
    fprintf(out, "; %s live at the end\n", gpufl__rt_bytes(w->end_bytes).s);
    const char *list = "never freed";
    if (w->never_freed && w->space == GPUFL__ANA_SPACE_FRAMEWORK) {
        /* blocks come from the framework's snapshots: those listed are the
         * tensors live at the last one, not blocks the program failed to free */
        list = "live at the end";
        fprintf(out,
                "    live at the end: %s block%s, %s (tensors live when the framework's last snapshot was\n"
                "    taken; leaks are judged above)\n",
                gpufl__rt_count(w->never_freed).s, gpufl__rt_plural(w->never_freed),
                gpufl__rt_bytes(w->never_freed_bytes).s);
    } else if (w->never_freed && w->never_freed_why == GPUFL__ANA_NEVER_FREED_NO_FREES) {
        list = "held at the end";
        fprintf(out,
                "    held at the end: %s allocation%s, %s; no free was recorded, as when a caching allocator\n"
                "    keeps its segments for reuse: memory held, not leaked (leaks are judged above)\n",
                gpufl__rt_count(w->never_freed).s, gpufl__rt_plural(w->never_freed),
                gpufl__rt_bytes(w->never_freed_bytes).s);
    } else if (w->never_freed && w->never_freed_why == GPUFL__ANA_NEVER_FREED_UNENDED) {
        list = "not freed yet";
        fprintf(out, "    not freed yet (the session did not end): %s allocation%s, %s\n",
                gpufl__rt_count(w->never_freed).s, gpufl__rt_plural(w->never_freed),
                gpufl__rt_bytes(w->never_freed_bytes).s);
    } else if (w->never_freed) {
        fprintf(out, "    never freed: %s allocation%s, %s\n", gpufl__rt_count(w->never_freed).s,
                gpufl__rt_plural(w->never_freed), gpufl__rt_bytes(w->never_freed_bytes).s);
    }
    if (w->unmatched_frees)
        fprintf(out, "    frees of memory allocated before recording (or lost): %s, %s\n",
                gpufl__rt_count(w->unmatched_frees).s, gpufl__rt_bytes(w->unmatched_free_bytes).s);
    allocations(c, "live at the peak", w->live_at_peak, w->nlive, w->live, frames);
    if (same_allocations(w))
        fprintf(out, "    %s: the same allocations (nothing live at the peak was freed)\n", list);
    else
        allocations(c, list, w->never_freed, w->nleaks, w->leaks, frames);
}

void gpufl__rt_section_memory(const rt *c)
{
    const gpufl__ana_report *r = c->r;
    FILE *out = c->out;
    gpufl__rt_title(c, "Memory");
    for (uint32_t i = 0; i < r->mem_layers.n; i++)
        layers_device(c, &r->mem_layers.devices[i]);
    if (r->mem_layers.n)
        fputc('\n', out);
    peaks(c);
    if (r->mem_layers.n || r->memory.recorded)
        leaks(c);
    bool above = r->mem_layers.n || r->mem_peaks.n || r->memory.recorded;
    if (above)
        fputc('\n', out);
    if (!r->memory.recorded)
        fprintf(out, "  allocations not recorded (enable_memory_tracking)\n");
    for (uint32_t i = 0; i < r->memory.n; i++)
        mem_row(c, &r->memory.rows[i]);
}

int gpufl__report_text_memory(const gpufl_trace *t, const gpufl__ana_report *r, const gpufl__report_text_opts *o,
                              FILE *out)
{
    rt c = {.out = out, .t = t, .r = r};
    if (o)
        c.o = *o;
    if (!c.o.max_frames)
        c.o.max_frames = DEFAULT_MAX_FRAMES;
    gpufl__rt_section_memory(&c);
    if (fflush(out) != 0 || ferror(out))
        return GPUFL_EIO;
    return 0;
}
