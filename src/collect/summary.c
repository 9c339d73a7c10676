/*
 * Building and freeing session summaries (see summary.h).
 */
#include "collect/summary.h"

#include <stdlib.h>
#include <string.h>

#include "core/intern.h"
#include "gpufl/gpufl.h"

static int by_total_desc(const void *a, const void *b)
{
    const gpufl__name_stats *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* Copies the longest-running names of a table; 0 or GPUFL_ENOMEM. */
static int copy_names(const gpufl__name_table *t, const gpufl__string_lookup *lookup, gpufl__summary_name **out,
                      uint32_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!t->n)
        return 0;
    gpufl__name_stats *sorted = malloc(t->n * sizeof *sorted);
    if (!sorted)
        return GPUFL_ENOMEM;
    memcpy(sorted, t->items, t->n * sizeof *sorted);
    qsort(sorted, t->n, sizeof *sorted, by_total_desc);
    size_t n = t->n < GFL_SUMMARY_MAX_NAMES ? t->n : GFL_SUMMARY_MAX_NAMES;
    gpufl__summary_name *names = calloc(n, sizeof *names);
    if (!names) {
        free(sorted);
        return GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        names[i].name = strdup(gpufl__lookup(lookup, sorted[i].name, &len));
        names[i].count = sorted[i].count;
        names[i].total_ns = sorted[i].total_ns;
        names[i].min_ns = sorted[i].count ? sorted[i].min_ns : 0;
        names[i].max_ns = sorted[i].max_ns;
        if (!names[i].name) {
            *out = names;
            *n_out = (uint32_t)i;
            free(sorted);
            return GPUFL_ENOMEM;
        }
    }
    free(sorted);
    *out = names;
    *n_out = (uint32_t)n;
    return 0;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

int gpufl__summary_build(gpufl__summary *out, const gpufl__stats *st, const gpufl__session_info *info,
                         const gpufl__sink_status *sinks, uint64_t end_ns, bool ended)
{
    memset(out, 0, sizeof *out);
    out->session_id = strdup(info->id);
    out->app_name = strdup(info->app_name);
    out->host = strdup(info->host);
    out->dir = strdup(info->dir);
    out->status = strdup(ended ? "ended" : st->crashed ? "crashed" : "running");
    out->crashed = st->crashed;
    out->crash_tid = st->crash_tid;
    out->crash_ts = st->crash_ts;
    out->crash = st->crash;
    out->engine_requested = strdup(gpufl__engine_name(info->config->o.profiling_engine));
    if (st->has_engine) {
        uint32_t len;
        out->engine = strdup(gpufl__lookup(&gpufl__intern_lookup, st->engine.ran, &len));
        if (st->engine.plugin)
            out->engine_plugin = strdup(gpufl__lookup(&gpufl__intern_lookup, st->engine.plugin, &len));
        if (st->engine.reason)
            out->engine_reason = strdup(gpufl__lookup(&gpufl__intern_lookup, st->engine.reason, &len));
    }
    out->pid = info->pid;
    out->start_ns = info->start_ns;
    out->start_wall_ns = info->start_wall_ns;
    out->end_ns = end_ns;
    memcpy(out->events, st->events, sizeof out->events);
    for (int r = 0; r < GFL_DROP_REASON_COUNT; r++)
        for (int c = 0; c < GFL_CHANNEL_COUNT; c++)
            out->dropped[r] += st->dropped[r][c];
    if (sinks) {
        out->bytes_written = sinks->bytes_written;
        out->stop_reason = dup_or_null(sinks->stop_reason);
        out->stop_detail = dup_or_null(sinks->stop_detail);
        for (int c = 0; c < GFL_CHANNEL_COUNT; c++)
            out->dropped[GFL_DROP_DISK_LIMIT] += sinks->lost[c];
    }
    out->intern_overflows = gpufl__intern_overflows();
    out->host_stats = st->host;
    out->ndev = st->ndev;
    memcpy(out->dev, st->dev, sizeof out->dev);
    for (uint32_t i = 0; info->devices && i < info->devices->count; i++) {
        const gpufl__device_desc *d = &info->devices->devices[i];
        if (d->index < GFL_STATS_MAX_DEVICES && d->name[0])
            out->dev_name[d->index] = strdup(d->name);
    }
    memcpy(out->copies, st->copies, sizeof out->copies);
    out->kernel_total_ns = st->kernel_total_ns;
    int rc = 0;
    if (!out->session_id || !out->app_name || !out->host || !out->dir || !out->status ||
        gpufl__summary_set_names(out, st, &gpufl__intern_lookup) != 0)
        rc = GPUFL_ENOMEM;
    if (rc != 0)
        gpufl__summary_free(out);
    return rc;
}

static void free_names(gpufl__summary_name *names, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(names[i].name);
    free(names);
}

int gpufl__summary_set_names(gpufl__summary *out, const gpufl__stats *st, const gpufl__string_lookup *names)
{
    free_names(out->scopes, out->nscopes);
    free_names(out->kernels, out->nkernels);
    out->scopes = out->kernels = NULL;
    out->nscopes = out->nkernels = 0;
    if (copy_names(&st->scopes, names, &out->scopes, &out->nscopes) != 0 ||
        copy_names(&st->kernels, names, &out->kernels, &out->nkernels) != 0)
        return GPUFL_ENOMEM;
    return 0;
}

void gpufl__summary_free(gpufl__summary *s)
{
    free(s->session_id);
    free(s->app_name);
    free(s->host);
    free(s->dir);
    free(s->status);
    free(s->stop_reason);
    free(s->stop_detail);
    free(s->engine_requested);
    free(s->engine);
    free(s->engine_plugin);
    free(s->engine_reason);
    free_names(s->scopes, s->nscopes);
    free_names(s->kernels, s->nkernels);
    for (int i = 0; i < GFL_STATS_MAX_DEVICES; i++)
        free(s->dev_name[i]);
    memset(s, 0, sizeof *s);
}

uint64_t gpufl__summary_dropped_total(const gpufl__summary *s)
{
    uint64_t total = 0;
    for (int r = 0; r < GFL_DROP_REASON_COUNT; r++)
        total += s->dropped[r];
    return total;
}
