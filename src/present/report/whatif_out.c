/*
 * `gpufl whatif` output (whatif_out.h): the step before and after the
 * change, as text or JSON, and the critical path after it. "replayed" is
 * the unchanged schedule, against which the prediction is read; its
 * distance from the recorded steps says how far the model can be trusted
 * on this session.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/names.h"
#include "gpufl/gpufl.h"
#include "present/report/jwriter.h"
#include "present/report/summary_text.h"
#include "present/report/whatif_out.h"

static double change_pct(uint64_t before, uint64_t after)
{
    return before ? 100.0 * ((double)after - (double)before) / (double)before : 0;
}

/* "12.30 ms" and the like, as the text report writes durations
 * (gpufl__format_duration), usable inside an argument list. */
static const char *dur(char *buf, size_t len, uint64_t ns)
{
    gpufl__format_duration(ns, buf, len);
    return buf;
}

static void heading(const gpufl__whatif *w, const gpufl__whatif_change *c, FILE *out)
{
    fprintf(out, "what-if:");
    bool any = false;
    if (c->kernel) {
        fprintf(out, " kernels %s %gx faster (%zu launch%s);", c->kernel, c->speedup, w->changed,
                w->changed == 1 ? "" : "es");
        any = true;
    }
    for (size_t i = 0; i < c->nremove; i++, any = true)
        fprintf(out, " sync %llu removed;", (unsigned long long)c->remove[i]);
    if (c->overlap_copies) {
        fprintf(out, " copies on a stream of their own per device and direction;");
        any = true;
    }
    if (c->host_gap_scale != 1) {
        fprintf(out, " host gaps x%g;", c->host_gap_scale);
        any = true;
    }
    fprintf(out, "%s\n", any ? "" : " no change (the session replayed as recorded)");
}

int gpufl__whatif_write_text(const gpufl__whatif *w, const gpufl__whatif_change *c, FILE *out)
{
    const gpufl__step_stats *b = &w->before, *a = &w->after;
    char x[32], y[32], z[32];
    heading(w, c, out);
    const char *name = gpufl_trace_string(w->g.t, w->step_name);
    if (w->window)
        fprintf(out, "window: %s from its first node's start to its last node's end",
                dur(x, sizeof x, w->recorded_median_ns));
    else
        fprintf(out, "step: `%s`, %zu occurrence%s", name ? name : "", w->nsteps, w->nsteps == 1 ? "" : "s");
    fprintf(out, "; graph: %zu nodes, %zu edges (%zu inferred from timing)\n\n", w->g.n, w->g.nedges, w->g.inferred);
    fprintf(out, "  %-34s %12s %12s %12s %9s\n", "", "recorded", "replayed", "predicted", "change");
    fprintf(out, "  %-34s %12s %12s %12s %+8.1f %%\n", "step time (median)", dur(x, sizeof x, w->recorded_median_ns),
            dur(y, sizeof y, b->median_ns), dur(z, sizeof z, a->median_ns), change_pct(b->median_ns, a->median_ns));
    fprintf(out, "  %-34s %12s %12s %12s %+8.1f %%\n", "steps together", dur(x, sizeof x, w->recorded_total_ns),
            dur(y, sizeof y, b->total_ns), dur(z, sizeof z, a->total_ns), change_pct(b->total_ns, a->total_ns));
    const struct {
        const char *what;
        uint64_t before, after;
    } rows[] = {{"GPU busy", b->busy_ns, a->busy_ns},
                {"GPU idle, waiting for launches", b->idle_host_ns, a->idle_host_ns},
                {"GPU idle, other", b->idle_other_ns, a->idle_other_ns},
                {"host waiting in syncs", b->sync_ns, a->sync_ns}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(out, "  %-34s %12s %12s %12s %+8.1f %%\n", rows[i].what, "", dur(y, sizeof y, rows[i].before),
                dur(z, sizeof z, rows[i].after), change_pct(rows[i].before, rows[i].after));
    fprintf(out, "\n  the unchanged replay is %+.2f %% off the recorded median step\n",
            change_pct(w->recorded_median_ns, b->median_ns));
    if (w->window)
        fprintf(out, "\ncritical path after the change (the window; shares of its time):\n");
    else
        fprintf(out, "\ncritical path after the change (all %zu steps; shares of their time):\n", w->nsteps);
    gpufl__critpath_write_text(w->g.t, &w->cp_after, 15, out);
    fflush(out);
    return ferror(out) ? GPUFL_EIO : 0;
}

static void stats_json(jw *j, const char *key, const gpufl__step_stats *s)
{
    gpufl__jw_obj(j, key);
    gpufl__jw_u64(j, "median_ns", s->median_ns);
    gpufl__jw_u64(j, "total_ns", s->total_ns);
    gpufl__jw_u64(j, "min_ns", s->min_ns);
    gpufl__jw_u64(j, "max_ns", s->max_ns);
    gpufl__jw_u64(j, "busy_ns", s->busy_ns);
    gpufl__jw_u64(j, "idle_host_ns", s->idle_host_ns);
    gpufl__jw_u64(j, "idle_other_ns", s->idle_other_ns);
    gpufl__jw_u64(j, "sync_ns", s->sync_ns);
    gpufl__jw_obj_end(j);
}

static void path_json(jw *j, const char *key, const gpufl__graph *g, const gpufl__critpath *cp)
{
    gpufl__jw_obj(j, key);
    gpufl__jw_u64(j, "window_ns", cp->window_ns);
    gpufl__jw_u64(j, "path_ns", cp->path_ns);
    gpufl__jw_arr(j, "items");
    for (size_t i = 0; i < cp->n; i++) {
        const gpufl__cp_item *it = &cp->items[i];
        gpufl__jw_obj(j, NULL);
        gpufl__jw_str(j, "kind", gpufl__cp_kind_name(it->kind));
        const char *name = gpufl__cp_item_name(g->t, it);
        if (*name)
            gpufl__jw_str(j, "name", name);
        else
            gpufl__jw_null(j, "name");
        gpufl__jw_u64(j, "ns", it->ns);
        gpufl__jw_real(j, "share", cp->window_ns ? (double)it->ns / (double)cp->window_ns : 0, 6);
        gpufl__jw_u64(j, "pieces", it->count);
        gpufl__jw_obj_end(j);
    }
    gpufl__jw_arr_end(j);
    gpufl__jw_obj_end(j);
}

int gpufl__whatif_write_json(const gpufl__whatif *w, const gpufl__whatif_change *c, FILE *out)
{
    jw j;
    gpufl__jw_init(&j);
    gpufl__jw_obj(&j, NULL);
    gpufl__jw_str(&j, "schema", "gpufl-whatif");
    gpufl__jw_u64(&j, "schema_version", 1);
    gpufl__jw_obj(&j, "step");
    if (w->window)
        gpufl__jw_null(&j, "name");
    else
        gpufl__jw_str(&j, "name", gpufl_trace_string(w->g.t, w->step_name));
    gpufl__jw_u64(&j, "occurrences", w->nsteps);
    gpufl__jw_bool(&j, "window", w->window);
    gpufl__jw_obj_end(&j);
    gpufl__jw_obj(&j, "change");
    gpufl__jw_str(&j, "kernel", c->kernel);
    gpufl__jw_real(&j, "speedup", c->kernel ? c->speedup : 1, 6);
    gpufl__jw_u64(&j, "kernels_changed", w->changed);
    gpufl__jw_arr(&j, "remove_syncs");
    for (size_t i = 0; i < c->nremove; i++)
        gpufl__jw_u64(&j, NULL, c->remove[i]);
    gpufl__jw_arr_end(&j);
    gpufl__jw_bool(&j, "overlap_copies", c->overlap_copies);
    gpufl__jw_real(&j, "host_gap_scale", c->host_gap_scale, 6);
    gpufl__jw_obj_end(&j);
    gpufl__jw_obj(&j, "graph");
    gpufl__jw_u64(&j, "nodes", w->g.n);
    gpufl__jw_u64(&j, "edges", w->g.nedges);
    gpufl__jw_u64(&j, "inferred_edges", w->g.inferred);
    gpufl__jw_obj_end(&j);
    gpufl__jw_obj(&j, "recorded");
    gpufl__jw_u64(&j, "median_ns", w->recorded_median_ns);
    gpufl__jw_u64(&j, "total_ns", w->recorded_total_ns);
    gpufl__jw_obj_end(&j);
    stats_json(&j, "replayed", &w->before);
    stats_json(&j, "predicted", &w->after);
    gpufl__jw_real(&j, "replay_error_pct", change_pct(w->recorded_median_ns, w->before.median_ns), 3);
    gpufl__jw_real(&j, "predicted_change_pct", change_pct(w->before.median_ns, w->after.median_ns), 3);
    path_json(&j, "critical_path_before", &w->g, &w->cp_before);
    path_json(&j, "critical_path_after", &w->g, &w->cp_after);
    gpufl__jw_obj_end(&j);
    int rc = gpufl__jw_finish(&j);
    if (rc == 0 && (fwrite(j.buf, 1, j.n, out) != j.n || fflush(out) != 0))
        rc = GPUFL_EIO;
    gpufl__jw_free(&j);
    return rc;
}
