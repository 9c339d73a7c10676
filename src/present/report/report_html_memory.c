/*
 * The HTML report's memory sections (report_html_parts.h): the layers of
 * the process's memory at its peak and the gaps between them, the leak
 * verdict of each repeated scope, and the allocations replayed per device
 * and space. The figures are the text and JSON reports'
 * (report_text_memory.c, report_json_memory.c), from the same analyses;
 * what a caching allocator holds is "held", never a leak. Times are since
 * the session's start, exact in data-v. Single-threaded.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>

#include "present/report/report_html_parts.h"

#define S(id) gpufl_trace_string(t, (id))

/* "-1.00 MiB" for a negative size (a gap read at two moments, a shrink). */
static void td_sbytes(gpufl__hout *o, int64_t v)
{
    char buf[32];
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    gpufl__hout_printf(o, "<td class=n data-v=\"%" PRId64 "\">%s%s</td>", v, v < 0 ? "-" : "",
                       gpufl__hfmt_bytes(buf, sizeof buf, mag));
}

static void td_real(gpufl__hout *o, double v, const char *fmt)
{
    char buf[32];
    snprintf(buf, sizeof buf, fmt, v);
    gpufl__hout_printf(o, "<td class=n data-v=\"%.9f\">%s</td>", v, buf);
}

/* ---- layers ---------------------------------------------------------------------- */

static void layers(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_mem_layers *l)
{
    gpufl__hout_raw(o, "<section id=mem-layers><h2>Memory layers</h2>\n"
                       "<p>Each layer of this process's GPU memory at the process's peak and at its own: NVML "
                       "sees the device and this process, the driver its allocations, a framework's allocator "
                       "its reserved and allocated bytes. A layer that was not recorded is left out.</p>\n");
    static const char *const cols[] = {"GPU", "layer", "at the process's peak", "peak", "peak at", NULL};
    gpufl__html_table_head(o, "mem-layer-rows", cols);
    for (uint32_t k = 0; k < l->n; k++) {
        const gpufl__ana_mem_layers_dev *d = &l->devices[k];
        for (uint8_t s = 0; s < GPUFL__ANA_MEM_SERIES; s++) {
            if (!(d->known & GPUFL__ANA_MEM_BIT(s)))
                continue;
            gpufl__hout_raw(o, "<tr>");
            gpufl__html_td_u64(o, d->device);
            gpufl__html_td_text(o, gpufl__ana_mem_label(s));
            if (d->at_valid & GPUFL__ANA_MEM_BIT(s))
                gpufl__html_td_bytes(o, d->at[s]);
            else
                gpufl__html_td_text(o, "-");
            gpufl__html_td_bytes(o, d->peak[s]);
            gpufl__html_td_since(o, t, d->peak_ns[s]);
            gpufl__hout_raw(o, "</tr>\n");
        }
    }
    gpufl__html_table_end(o);
    static const char *const gap_cols[] = {"GPU", "gap", "bytes", "what usually explains it", NULL};
    gpufl__html_table_head(o, "mem-gap-rows", gap_cols);
    for (uint32_t k = 0; k < l->n; k++) {
        const gpufl__ana_mem_layers_dev *d = &l->devices[k];
        for (uint32_t i = 0; i < d->ngaps; i++) {
            const gpufl__ana_mem_gap *g = &d->gaps[i];
            char pair[96], why[512];
            snprintf(pair, sizeof pair, "%s - %s", gpufl__ana_mem_key(g->upper), gpufl__ana_mem_key(g->lower));
            gpufl__hout_raw(o, "<tr>");
            gpufl__html_td_u64(o, d->device);
            gpufl__html_td_text(o, pair);
            td_sbytes(o, g->bytes);
            gpufl__html_td_text(o, gpufl__ana_mem_gap_why(g->upper, g->lower, why, sizeof why));
            gpufl__hout_raw(o, "</tr>\n");
        }
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

/* ---- leaks ------------------------------------------------------------------------ */

static void leaks(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_leaks *l)
{
    gpufl__hout_printf(o,
                       "<section id=leaks><h2>Leaks</h2>\n"
                       "<p>Each scope or NVTX range repeated at least %u times is a step: live memory after "
                       "each repetition, a line through them after a warm-up, a leak when it rises steadily "
                       "(p below 0.01, r² at least 0.5, a MiB or more).</p>\n",
                       l->min_steps);
    if (!l->n) {
        gpufl__hout_raw(o, "<p>Nothing was repeated often enough.</p>\n</section>\n");
        return;
    }
    static const char *const cols[] = {"scope or range", "kind",     "GPU",      "layer", "repetitions", "fitted",
                                       "verdict",        "per step", "increase", "r²",    "p",           NULL};
    gpufl__html_table_head(o, "leak-rows", cols);
    for (uint32_t i = 0; i < l->n; i++) {
        const gpufl__ana_leak *r = &l->rows[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_text(o, S(r->name));
        gpufl__html_td_text(o, r->tree == GPUFL__ANA_TREE_SCOPES ? "scope" : "NVTX");
        gpufl__html_td_u64(o, r->device);
        gpufl__html_td_text(o, gpufl__ana_mem_label(r->series));
        gpufl__html_td_u64(o, r->repetitions);
        gpufl__html_td_u64(o, r->repetitions - r->warmup);
        gpufl__html_td_text(o, r->detected ? gpufl__ana_severity_name(r->severity) : "no leak");
        td_sbytes(o, (int64_t)llround(r->slope));
        td_sbytes(o, r->increase_bytes);
        td_real(o, r->r_squared, "%.2f");
        if (r->p_value < 0.0001)
            gpufl__hout_printf(o, "<td class=n data-v=\"%.9f\">&lt; 0.0001</td>", r->p_value);
        else
            td_real(o, r->p_value, "%.4f");
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

/* ---- allocations replayed ------------------------------------------------------- */

/* How to read the never-freed figures of a row. */
static const char *held_text(uint8_t why)
{
    switch (why) {
    case GPUFL__ANA_NEVER_FREED_NO_FREES: return "held: no free recorded (a caching allocator)";
    case GPUFL__ANA_NEVER_FREED_UNENDED: return "not freed yet: the session did not end";
    default: return "leak candidates";
    }
}

static void allocations(gpufl__hout *o, const gpufl__ana_memory *m)
{
    gpufl__hout_raw(o, "<section id=memory><h2>Memory allocations</h2>\n");
    static const char *const cols[] = {
        "GPU",         "space",       "allocations",       "allocated",       "frees",           "peak", "live at peak",
        "live at end", "never freed", "never freed bytes", "unmatched frees", "never freed are", NULL};
    gpufl__html_table_head(o, "mem-rows", cols);
    for (uint32_t i = 0; i < m->n; i++) {
        const gpufl__ana_mem_row *r = &m->rows[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_u64(o, r->device);
        gpufl__html_td_text(o, gpufl__ana_space_name(r->space));
        gpufl__html_td_u64(o, r->allocs);
        gpufl__html_td_bytes(o, r->alloc_bytes);
        gpufl__html_td_u64(o, r->frees);
        gpufl__html_td_bytes(o, r->peak_bytes);
        gpufl__html_td_u64(o, r->live_at_peak);
        gpufl__html_td_bytes(o, r->end_bytes);
        gpufl__html_td_u64(o, r->never_freed);
        gpufl__html_td_bytes(o, r->never_freed_bytes);
        gpufl__html_td_u64(o, r->unmatched_frees);
        gpufl__html_td_text(o, held_text(r->never_freed_why));
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

void gpufl__html_memory(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    if (r->mem_layers.n)
        layers(o, t, &r->mem_layers);
    if (r->mem_layers.n || r->memory.recorded)
        leaks(o, t, &r->leaks);
    if (r->memory.recorded)
        allocations(o, &r->memory);
}
