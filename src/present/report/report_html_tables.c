/*
 * The HTML report's tables (report_html.h): plain HTML, so that the report
 * reads with JavaScript off; the page's script only adds sorting. Numeric
 * cells carry their exact value in data-v (ns, bytes, counts) for sorting,
 * and show it rounded. Every string from the trace goes through
 * gpufl__hout_text().
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/names.h"
#include "present/report/job_text.h"
#include "present/report/report_html.h"
#include "present/report/report_html_parts.h"

#define S(id) gpufl_trace_string(t, (id))

static void td_ns(gpufl__hout *o, int64_t ns)
{
    char buf[32];
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    gpufl__hout_printf(o, "<td class=n data-v=\"%" PRId64 "\">%s%s</td>", ns, ns < 0 ? "-" : "",
                       gpufl__hfmt_ns(buf, sizeof buf, mag));
}

static void td_pct(gpufl__hout *o, double pct)
{
    gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%.1f %%</td>", pct, pct);
}

static void fact(gpufl__hout *o, const char *key, const char *value)
{
    gpufl__hout_printf(o, "<tr><th>%s</th><td>", key);
    gpufl__hout_text(o, value);
    gpufl__hout_raw(o, "</td></tr>\n");
}

/* ---- summary -------------------------------------------------------------------- */

static void session_facts(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_summary *s)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    char buf[128], dur[32];
    gpufl__hout_raw(o, "<table class=facts>\n");
    fact(o, "application", S(info->app_name));
    fact(o, "host", S(info->host));
    snprintf(buf, sizeof buf, "%" PRId32, info->pid);
    fact(o, "pid", buf);
    fact(o, "session", S(info->session_id));
    char job[256];
    if (gpufl__job_text(t, job, sizeof job))
        fact(o, "job", job);
    if (info->start_wall_ns) {
        time_t secs = (time_t)(info->start_wall_ns / 1000000000u);
        struct tm tm;
        if (gmtime_r(&secs, &tm) && strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm))
            fact(o, "started", buf);
    }
    snprintf(buf, sizeof buf, "%s%s", gpufl__hfmt_ns(dur, sizeof dur, s->wall_ns),
             s->ended ? "" : " (the session did not record its end: up to its last event)");
    fact(o, "duration", buf);
    fact(o, "gpufl version", S(info->gpufl_version));
    if (info->engine) {
        snprintf(buf, sizeof buf, "%s%s%s%s", S(info->engine), info->engine_plugin ? " (plugin " : "",
                 info->engine_plugin ? S(info->engine_plugin) : "", info->engine_plugin ? ")" : "");
        fact(o, "engine", buf);
        if (info->engine_reason) {
            fact(o, "engine asked for", S(info->engine_requested));
            fact(o, "engine note", S(info->engine_reason));
        }
    }
    if (info->driver_version)
        fact(o, "driver", S(info->driver_version));
    if (info->cuda_driver_version)
        fact(o, "CUDA driver", S(info->cuda_driver_version));
    fact(o, "read from", info->source ? info->source : "");
    gpufl__hout_raw(o, "</table>\n");
}

static void warnings(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_summary *s)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    if (s->dropped_total) {
        gpufl__hout_printf(o, "<p class=warn>%" PRIu64 " events were lost:", s->dropped_total);
        for (int i = 0; i < 16; i++) {
            const gpufl__drop_reason_names *d = gpufl__drop_reason((uint8_t)i);
            if (s->dropped[i])
                gpufl__hout_printf(o, " %s %" PRIu64 ";", d ? d->label : "other", s->dropped[i]);
        }
        gpufl__hout_raw(o, " figures below undercount.</p>\n");
    }
    if (s->skipped_bytes || s->skipped_lines || s->skipped_chunks)
        gpufl__hout_printf(o,
                           "<p class=warn>The reader skipped %" PRIu64 " bytes of a torn end, %" PRIu64
                           " events and %" PRIu64 " chunks of unknown types.</p>\n",
                           s->skipped_bytes, s->skipped_lines, s->skipped_chunks);
    if (info->stop_reason) {
        gpufl__hout_raw(o, "<p class=warn>Recording stopped early: ");
        gpufl__hout_text(o, S(info->stop_reason));
        gpufl__hout_raw(o, " (");
        gpufl__hout_text(o, S(info->stop_detail));
        gpufl__hout_raw(o, ").</p>\n");
    }
}

static void summary(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_summary *s)
{
    gpufl__hout_raw(o, "<section id=summary><h2>Summary</h2>\n");
    session_facts(o, t, s);
    warnings(o, t, s);
    static const char *const cols[] = {"what", "count", "time", "bytes", NULL};
    gpufl__html_table_head(o, NULL, cols);
    struct {
        const char *what;
        uint64_t n, ns, bytes;
        int has_ns, has_bytes;
    } rows[] = {
        {"kernels", s->kernels, s->kernel_ns, 0, 1, 0},
        {"copies", s->copies, s->copy_ns, s->copy_bytes, 1, 1},
        {"memsets", s->memsets, s->memset_ns, s->memset_bytes, 1, 1},
        {"syncs (host waiting)", s->syncs, s->sync_ns, 0, 1, 0},
        {"gpufl scopes", s->scopes, 0, 0, 0, 0},
        {"NVTX ranges", s->nvtx_ranges, 0, 0, 0, 0},
        {"NVTX marks", s->nvtx_marks, 0, 0, 0, 0},
        {"allocations", s->allocations, 0, 0, 0, 0},
        {"frees", s->frees, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_text(o, rows[i].what);
        gpufl__html_td_u64(o, rows[i].n);
        if (rows[i].has_ns)
            td_ns(o, (int64_t)rows[i].ns);
        else
            gpufl__hout_raw(o, "<td></td>");
        if (rows[i].has_bytes)
            gpufl__html_td_bytes(o, rows[i].bytes);
        else
            gpufl__hout_raw(o, "<td></td>");
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);

    if (s->ndevices) {
        gpufl__hout_raw(o, "<h3>GPUs</h3>\n");
        static const char *const dcols[] = {
            "GPU",    "name",      "busy",      "busy time",   "kernels", "kernel time",         "copies",
            "copied", "util mean", "util peak", "memory peak", "memory",  "process memory peak", NULL};
        gpufl__html_table_head(o, NULL, dcols);
        for (uint32_t i = 0; i < s->ndevices; i++) {
            const gpufl__ana_device_summary *d = &s->devices[i];
            gpufl__hout_raw(o, "<tr>");
            gpufl__html_td_u64(o, d->device);
            gpufl__html_td_text(o, S(d->name));
            td_pct(o, d->busy_pct);
            td_ns(o, (int64_t)d->busy_ns);
            gpufl__html_td_u64(o, d->kernels);
            td_ns(o, (int64_t)d->kernel_ns);
            gpufl__html_td_u64(o, d->copies);
            gpufl__html_td_bytes(o, d->copy_bytes);
            if (d->util_samples) {
                td_pct(o, d->util_mean_pct);
                td_pct(o, d->util_peak_pct);
            } else {
                gpufl__hout_raw(o, "<td></td><td></td>");
            }
            if (d->mem_samples)
                gpufl__html_td_bytes(o, d->mem_used_peak_bytes);
            else
                gpufl__hout_raw(o, "<td></td>");
            if (d->mem_total_bytes)
                gpufl__html_td_bytes(o, d->mem_total_bytes);
            else
                gpufl__hout_raw(o, "<td></td>");
            if (d->proc_mem_samples)
                gpufl__html_td_bytes(o, d->proc_mem_peak_bytes);
            else
                gpufl__hout_raw(o, "<td></td>");
            gpufl__hout_raw(o, "</tr>\n");
        }
        gpufl__html_table_end(o);
    }
    gpufl__hout_raw(o, "</section>\n");
}

/* ---- hotspots -------------------------------------------------------------------- */

static void op_name(gpufl__hout *o, const gpufl_trace *t, uint32_t name, uint32_t module, bool backward_only)
{
    gpufl__hout_text(o, S(name));
    if (backward_only)
        gpufl__hout_raw(o, " (backward only)");
    if (module) {
        gpufl__hout_raw(o, " in ");
        gpufl__hout_text(o, gpufl__ana_module_path(S(module)));
    }
}

static void hot_where(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_hotspot *h)
{
    gpufl__hout_raw(o, "<td class=where>");
    int any = 0;
    for (uint32_t i = 0; i < h->nops; i++) { /* PyTorch's ops first: what the user wrote */
        if (any++)
            gpufl__hout_raw(o, "; ");
        op_name(o, t, h->ops[i].name, h->ops[i].module, h->ops[i].backward_only);
        gpufl__hout_printf(o, " %.0f%%", h->ops[i].share * 100);
    }
    for (int tree = GPUFL__ANA_TREE_COUNT - 1; tree >= 0; tree--) /* NVTX first: frameworks' names */
        for (uint32_t i = 0; i < h->nscopes[tree]; i++) {
            if (any++)
                gpufl__hout_raw(o, "; ");
            gpufl__hout_text(o, S(h->scopes[tree][i].name));
            gpufl__hout_printf(o, " %.0f%%", h->scopes[tree][i].share * 100);
        }
    gpufl__hout_raw(o, "</td>");
}

static void hotspots(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_hotspots *h)
{
    char buf[64];
    gpufl__hout_raw(o, "<section id=hotspots><h2>Kernel hotspots</h2>\n");
    gpufl__hout_printf(o, "<p>%" PRIu64 " launches of %" PRIu32 " distinct kernels, %s of GPU time", h->launches,
                       h->distinct, gpufl__hfmt_ns(buf, sizeof buf, h->total_ns));
    if (h->n < h->distinct)
        gpufl__hout_printf(o, "; the %" PRIu32 " with the most GPU time", h->n);
    gpufl__hout_raw(o, ".</p>\n");
    if (!h->n) {
        gpufl__hout_raw(o, "<p>No kernels were recorded.</p></section>\n");
        return;
    }
    static const char *const cols[] = {
        "#",    "kernel", "launches",  "GPU time",      "share",     "mean",    "p50",         "p95", "max",
        "grid", "block",  "registers", "shared memory", "occupancy", "configs", "launched in", NULL};
    gpufl__html_table_head(o, NULL, cols);
    for (uint32_t i = 0; i < h->n; i++) {
        const gpufl__ana_hotspot *k = &h->kernels[i];
        const gpufl__ana_launch_config *c = &k->config;
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_u64(o, i + 1);
        gpufl__hout_raw(o, "<td class=kname>");
        gpufl__hout_text(o, S(k->name));
        gpufl__hout_raw(o, "</td>");
        gpufl__html_td_u64(o, k->dur.n);
        td_ns(o, k->dur.total);
        td_pct(o, k->share * 100);
        td_ns(o, (int64_t)(k->dur.mean + 0.5));
        td_ns(o, k->dur.p50);
        td_ns(o, k->dur.p95);
        td_ns(o, k->dur.max);
        gpufl__hout_printf(o, "<td>%" PRIu32 "&times;%" PRIu32 "&times;%" PRIu32 "</td>", c->grid[0], c->grid[1],
                           c->grid[2]);
        gpufl__hout_printf(o, "<td>%u&times;%u&times;%u</td>", c->block[0], c->block[1], c->block[2]);
        gpufl__html_td_u64(o, c->registers);
        gpufl__html_td_bytes(o, (uint64_t)c->static_smem + c->dynamic_smem);
        if (c->occupancy_x10000)
            gpufl__hout_printf(o, "<td class=n data-v=\"%u\">%.1f %%%s%s</td>", c->occupancy_x10000,
                               c->occupancy_x10000 / 100.0, c->limiter ? ", " : "", gpufl__limiter(c->limiter)->label);
        else
            gpufl__hout_raw(o, "<td></td>");
        gpufl__html_td_u64(o, k->configs);
        hot_where(o, t, k);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

/* ---- scopes --------------------------------------------------------------------- */

static void scope_tree(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_scope_tree *tr, const char *title)
{
    char buf[32];
    gpufl__hout_printf(o, "<h3>%s</h3>\n", title);
    if (!tr->n) {
        gpufl__hout_raw(o, "<p>None recorded.</p>\n");
        return;
    }
    gpufl__hout_printf(o, "<p>%" PRIu64 " instances in %" PRIu32 " paths. GPU work launched inside them: %s",
                       tr->instances, tr->n, gpufl__hfmt_ns(buf, sizeof buf, tr->attributed_ns));
    gpufl__hout_printf(o, "; outside any: %s.", gpufl__hfmt_ns(buf, sizeof buf, tr->unattributed_ns));
    if (tr->n > GPUFL__HTML_MAX_NODES)
        gpufl__hout_printf(o, " The first %u paths are listed (of %" PRIu32 ", in tree order).", GPUFL__HTML_MAX_NODES,
                           tr->n);
    gpufl__hout_raw(o, "</p>\n");
    static const char *const cols[] = {"path",      "count",    "threads",         "wall time", "mean",    "p95", "max",
                                       "of parent", "GPU time", "GPU time (self)", "GPU ops",   "unended", NULL};
    gpufl__hout_raw(o, "<table class=tree><thead><tr>");
    for (const char *const *c = cols; *c; c++)
        gpufl__hout_printf(o, "<th>%s</th>", *c);
    gpufl__hout_raw(o, "</tr></thead><tbody>\n");
    uint32_t n = tr->n < GPUFL__HTML_MAX_NODES ? tr->n : GPUFL__HTML_MAX_NODES;
    for (uint32_t i = 0; i < n; i++) {
        const gpufl__ana_scope_node *s = &tr->nodes[i];
        gpufl__hout_printf(o, "<tr><td class=tname style=\"padding-left:%" PRIu32 "em\">",
                           (s->depth < 40 ? s->depth : 40) + 1);
        gpufl__hout_text(o, S(s->name));
        if (s->domain) {
            gpufl__hout_raw(o, " <span class=dom>[");
            gpufl__hout_text(o, S(s->domain));
            gpufl__hout_raw(o, "]</span>");
        }
        gpufl__hout_raw(o, "</td>");
        gpufl__html_td_u64(o, s->count);
        gpufl__html_td_u64(o, s->threads);
        td_ns(o, s->wall.total);
        td_ns(o, (int64_t)(s->wall.mean + 0.5));
        td_ns(o, s->wall.p95);
        td_ns(o, s->wall.max);
        td_pct(o, s->share_of_parent * 100);
        td_ns(o, (int64_t)s->gpu_ns);
        td_ns(o, (int64_t)s->gpu_self_ns);
        gpufl__html_td_u64(o, s->gpu_ops);
        gpufl__html_td_u64(o, s->unended);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__hout_raw(o, "</tbody></table>\n");
}

static void scopes(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_scopes *s)
{
    gpufl__hout_raw(o, "<section id=scopes><h2>Scopes and NVTX ranges</h2>\n");
    scope_tree(o, t, &s->trees[GPUFL__ANA_TREE_SCOPES], "gpufl scopes");
    scope_tree(o, t, &s->trees[GPUFL__ANA_TREE_NVTX], "NVTX ranges");
    if (s->nvtx_marks)
        gpufl__hout_printf(o, "<p>%" PRIu64 " NVTX marks (instants, on the timeline).</p>\n", s->nvtx_marks);
    gpufl__hout_raw(o, "</section>\n");
}

/* ---- PyTorch ops ---------------------------------------------------------------- */

static void op_cells(gpufl__hout *o, const gpufl__ana_op *p)
{
    gpufl__html_td_u64(o, p->calls);
    gpufl__html_td_u64(o, p->backward_calls);
    gpufl__html_td_u64(o, p->kernels);
    td_ns(o, (int64_t)p->forward_ns);
    td_ns(o, (int64_t)p->backward_ns);
    td_ns(o, (int64_t)p->total_ns);
    td_pct(o, p->share * 100);
    gpufl__html_td_bytes(o, p->alloc_bytes);
}

static void ops(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_ops *p)
{
    char b1[32], b2[32];
    if (!p->op_ranges)
        return;
    gpufl__hout_raw(o, "<section id=ops><h2>PyTorch ops</h2>\n");
    gpufl__hout_printf(o,
                       "<p>%" PRIu64 " op ranges (%" PRIu64 " backward) in %" PRIu64
                       " module ranges. GPU work launched in ops: %s; outside any op: %s. GPU time is that of "
                       "the kernels, copies and memsets launched in an op's own ranges (not in ops inside them); "
                       "<b>backward</b> is that of its backward ops (AddmmBackward0 for aten::addmm, matched by "
                       "autograd's sequence number) and the ops they run. <b>calls</b>: its ranges not inside one "
                       "of its own.</p>\n",
                       p->op_ranges, p->backward_ranges, p->module_ranges, gpufl__hfmt_ns(b1, sizeof b1, p->in_ops_ns),
                       gpufl__hfmt_ns(b2, sizeof b2, p->outside_ns));
    static const char *const cols[] = {"op",       "calls", "backward calls", "kernels",   "forward",
                                       "backward", "total", "share",          "allocated", NULL};
    gpufl__html_table_head(o, NULL, cols);
    for (uint32_t i = 0; i < p->n; i++) {
        gpufl__hout_raw(o, "<tr><td class=kname>");
        op_name(o, t, p->ops[i].name, 0, p->ops[i].backward_only);
        gpufl__hout_raw(o, "</td>");
        op_cells(o, &p->ops[i]);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "<h3>By module</h3>\n<p>The innermost nn.Module range around each op; a backward op's is "
                       "its forward op's.</p>\n<table class=tree><thead><tr>");
    static const char *const mcols[] = {"module / op", "calls", "backward calls", "kernels",   "forward",
                                        "backward",    "total", "share",          "allocated", NULL};
    for (const char *const *c = mcols; *c; c++)
        gpufl__hout_printf(o, "<th>%s</th>", *c);
    gpufl__hout_raw(o, "</tr></thead><tbody>\n");
    for (uint32_t m = 0; m < p->nmodules; m++) {
        const gpufl__ana_op_module *md = &p->modules[m];
        gpufl__hout_raw(o, "<tr class=dev><td class=tname>");
        gpufl__hout_text(o, md->module ? gpufl__ana_module_path(S(md->module)) : "(no module)");
        gpufl__hout_raw(o, "</td><td></td><td></td>");
        gpufl__html_td_u64(o, md->kernels);
        td_ns(o, (int64_t)md->forward_ns);
        td_ns(o, (int64_t)md->backward_ns);
        td_ns(o, (int64_t)md->total_ns);
        td_pct(o, md->share * 100);
        gpufl__html_td_bytes(o, md->alloc_bytes);
        gpufl__hout_raw(o, "</tr>\n");
        for (uint32_t i = 0; i < md->nops; i++) {
            const gpufl__ana_op *op = &p->module_ops[md->first + i];
            gpufl__hout_raw(o, "<tr><td class=tname style=\"padding-left:2em\">");
            op_name(o, t, op->name, 0, op->backward_only);
            gpufl__hout_raw(o, "</td>");
            op_cells(o, op);
            gpufl__hout_raw(o, "</tr>\n");
        }
    }
    gpufl__hout_raw(o, "</tbody></table>\n</section>\n");
}

/* ---- idle, copies, launches, memory -------------------------------------------------- */

static void idle(gpufl__hout *o, const gpufl__ana_idle *d)
{
    gpufl__hout_raw(o, "<section id=idle><h2>GPU idle time</h2>\n"
                       "<p>Gaps between the first and the last work of each device and stream, by cause: "
                       "<b>host</b> the next work was not launched yet and its thread was busy elsewhere; "
                       "<b>sync</b> its thread was waiting in a sync, or the stream waited on an event; "
                       "<b>other</b> it was launched but started later (queue, launch overhead).</p>\n");
    if (!d->n) {
        gpufl__hout_raw(o, "<p>No GPU work was recorded.</p></section>\n");
        return;
    }
    static const char *const cols[] = {"GPU",  "stream", "ops",   "busy",         "idle",       "idle %", "gaps",
                                       "host", "sync",   "other", "before first", "after last", NULL};
    gpufl__html_table_head(o, NULL, cols);
    for (uint32_t i = 0; i < d->n; i++) {
        const gpufl__ana_idle_row *r = &d->rows[i];
        uint64_t span = r->last_ns > r->first_ns ? r->last_ns - r->first_ns : 0;
        gpufl__hout_printf(o, "<tr%s>", r->stream == GPUFL__ANA_ALL_STREAMS ? " class=dev" : "");
        gpufl__html_td_u64(o, r->device);
        if (r->stream == GPUFL__ANA_ALL_STREAMS)
            gpufl__hout_raw(o, "<td>all</td>");
        else
            gpufl__html_td_u64(o, r->stream);
        gpufl__html_td_u64(o, r->ops);
        td_ns(o, (int64_t)r->busy_ns);
        td_ns(o, (int64_t)r->idle_ns);
        td_pct(o, span ? (double)r->idle_ns * 100.0 / (double)span : 0);
        gpufl__html_td_u64(o, r->gaps);
        td_ns(o, (int64_t)r->host_ns);
        td_ns(o, (int64_t)r->sync_ns);
        td_ns(o, (int64_t)r->other_ns);
        td_ns(o, (int64_t)r->lead_ns);
        td_ns(o, (int64_t)r->tail_ns);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

static void copies(gpufl__hout *o, const gpufl__ana_copies *c)
{
    /* one buffer per formatted value: all are read only when the line is printed */
    char b1[32], b2[32], b3[32], b4[32];
    gpufl__hout_raw(o, "<section id=copies><h2>Copies</h2>\n");
    gpufl__hout_printf(o, "<p>%" PRIu64 " copies, %s in %s; %" PRIu64 " memsets, %s in %s.</p>\n", c->count,
                       gpufl__hfmt_bytes(b1, sizeof b1, c->bytes), gpufl__hfmt_ns(b2, sizeof b2, c->ns), c->memsets,
                       gpufl__hfmt_bytes(b3, sizeof b3, c->memset_bytes), gpufl__hfmt_ns(b4, sizeof b4, c->memset_ns));
    if (!c->n) {
        gpufl__hout_raw(o, "</section>\n");
        return;
    }
    static const char *const cols[] = {"GPU",  "kind",      "count",   "bytes",     "time",     "size p50",
                                       "GB/s", "peak GB/s", "of peak", "peak from", "pageable", NULL};
    gpufl__html_table_head(o, NULL, cols);
    for (uint32_t i = 0; i < c->n; i++) {
        const gpufl__ana_copy_row *r = &c->rows[i];
        gpufl__hout_raw(o, "<tr>");
        gpufl__html_td_u64(o, r->device);
        gpufl__html_td_text(o, gpufl__copy_kind(r->kind)->key);
        gpufl__html_td_u64(o, r->count);
        gpufl__html_td_bytes(o, r->bytes);
        td_ns(o, (int64_t)r->ns);
        gpufl__html_td_bytes(o, (uint64_t)r->size.p50);
        gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%.2f</td>", r->gbps, r->gbps);
        if (r->peak_source != GPUFL__ANA_PEAK_UNKNOWN) {
            gpufl__hout_printf(o, "<td class=n data-v=\"%.4f\">%.1f</td>", r->peak_gbps, r->peak_gbps);
            td_pct(o, r->pct_of_peak);
            if (r->peak_source == GPUFL__ANA_PEAK_PCIE) {
                gpufl__hout_printf(o, "<td>PCIe gen %" PRIu32 " x%" PRIu32 "</td>", r->pcie_gen, r->pcie_width);
            } else {
                gpufl__hout_raw(o, "<td>memory: ");
                gpufl__hout_text(o, r->peak_table ? r->peak_table : "");
                gpufl__hout_raw(o, "</td>");
            }
        } else {
            gpufl__hout_raw(o, "<td></td><td></td><td>unknown</td>");
        }
        gpufl__hout_printf(o, "<td class=n data-v=\"%" PRIu64 "\">%" PRIu64 " (%s)</td>", r->pageable_count,
                           r->pageable_count, gpufl__hfmt_bytes(b1, sizeof b1, r->pageable_bytes));
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

static void dist_row(gpufl__hout *o, const char *what, const gpufl__ana_dist *d)
{
    gpufl__hout_raw(o, "<tr>");
    gpufl__html_td_text(o, what);
    gpufl__html_td_u64(o, d->n);
    td_ns(o, (int64_t)(d->mean < 0 ? d->mean - 0.5 : d->mean + 0.5));
    td_ns(o, d->min);
    td_ns(o, d->p50);
    td_ns(o, d->p95);
    td_ns(o, d->max);
    gpufl__hout_raw(o, "</tr>\n");
}

static void launches(gpufl__hout *o, const gpufl__ana_launches *l)
{
    char buf[32];
    gpufl__hout_raw(o, "<section id=launches><h2>Kernel launches</h2>\n");
    gpufl__hout_printf(o,
                       "<p>%" PRIu64 " of %" PRIu64 " kernels have the times of their launch call. %" PRIu64
                       " ran shorter than their own launch call (%s of GPU time): back to back, such "
                       "kernels keep the GPU waiting for the CPU.</p>\n",
                       l->with_api, l->kernels, l->short_kernels, gpufl__hfmt_ns(buf, sizeof buf, l->short_kernel_ns));
    if (l->with_api) {
        static const char *const cols[] = {"", "n", "mean", "min", "p50", "p95", "max", NULL};
        gpufl__html_table_head(o, NULL, cols);
        dist_row(o, "latency: call to kernel start", &l->latency);
        dist_row(o, "queue: call return to kernel start", &l->queue);
        dist_row(o, "launch call", &l->call);
        gpufl__html_table_end(o);
    }
    gpufl__hout_raw(o, "</section>\n");
}

void gpufl__html_tables(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
{
    summary(o, t, &r->summary);
    hotspots(o, t, &r->hotspots);
    scopes(o, t, &r->scopes);
    ops(o, t, &r->ops);
    idle(o, &r->idle);
    copies(o, &r->copies);
    launches(o, &r->launches);
    gpufl__html_memory(o, t, r);
}
