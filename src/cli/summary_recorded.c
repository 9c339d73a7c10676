/*
 * The summary of a session that did not end cleanly, made from what it
 * recorded (see summary_recorded.h).
 *
 * session.json's summary is the collector's aggregate, rewritten every two
 * seconds: a program killed before its first rewrite leaves one that says
 * nothing, and any later one misses what came after it. The recorded
 * events are complete up to the kill. They are read back into a trace (the
 * reader every other command uses, so scopes that never ended end where
 * they end everywhere else: at the session's last recorded time) and fed,
 * row by row, to the collector's own aggregation (collect/stats.c), so the
 * figures are those a clean end would have written.
 *
 * Runs on the command's thread; one pass over the trace's scopes, kernels,
 * copies and samples.
 */
#include "cli/summary_recorded.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect/stats.h"
#include "gpufl/trace.h"
#include "read/rows.h"

static const char *trace_str(const void *ctx, uint32_t id, uint32_t *len)
{
    const char *s = gpufl_trace_string(ctx, id);
    *len = (uint32_t)strlen(s);
    return s;
}

/* The rows of the trace as the events the collector aggregated. */
static void add_scopes(gpufl__stats *st, const gpufl__rows *r)
{
    gfl_event ev;
    for (size_t i = 0; i < gpufl__rows_n(r, GPUFL__TBL_SCOPE); i++) {
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_SCOPE_END;
        ev.h.ts = gpufl__s_end(r->scopes, i); /* never ended: the session's last recorded time */
        ev.u.scope.begin_ts = gpufl__s_begin(r->scopes, i);
        ev.u.scope.name = gpufl__s_name(r->scopes, i);
        gpufl__stats_add(st, &ev);
    }
}

static void add_device_work(gpufl__stats *st, const gpufl__rows *r)
{
    gfl_event ev;
    for (size_t i = 0; i < gpufl__k_n(r); i++) {
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_KERNEL;
        ev.h.ts = gpufl__k_start(r, i);
        ev.u.kernel.end_ts = gpufl__k_end(r, i);
        ev.u.kernel.name = gpufl__k_name(r, i);
        gpufl__stats_add(st, &ev);
    }
    for (size_t i = 0; i < gpufl__rows_n(r, GPUFL__TBL_COPY); i++) {
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_MEMCPY;
        ev.h.ts = gpufl__x_start(r->copies, i);
        ev.u.memcpy.end_ts = gpufl__x_end(r->copies, i);
        ev.u.memcpy.bytes = gpufl__x_bytes(r->copies, i);
        ev.u.memcpy.copy_kind = gpufl__x_kind(r->copies, i);
        gpufl__stats_add(st, &ev);
    }
}

static void add_samples(gpufl__stats *st, const gpufl__rows *r)
{
    gfl_event ev;
    for (size_t i = 0; i < gpufl__h_n(r); i++) {
        gpufl__host_row h;
        gpufl__host_row_get(r, i, &h);
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_HOST_METRICS;
        ev.h.ts = h.ts;
        gfl_host_metrics_payload *m = &ev.u.host;
        m->valid = h.valid;
        m->cpu_count = h.cpu_count;
        m->proc_cpu_pct_x100 = h.proc_cpu_pct_x100;
        m->sys_cpu_pct_x100 = h.sys_cpu_pct_x100;
        m->ram_used_bytes = h.ram_used_bytes;
        m->ram_total_bytes = h.ram_total_bytes;
        m->proc_rss_bytes = h.proc_rss_bytes;
        gpufl__stats_add(st, &ev);
    }
    for (size_t i = 0; i < gpufl__d_n(r); i++) {
        gpufl__dev_row d;
        gpufl__dev_row_get(r, i, &d);
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_DEVICE_METRICS;
        ev.h.ts = d.ts;
        ev.h.device = d.device;
        gfl_device_metrics_payload *m = &ev.u.dev;
        m->valid = d.valid; /* the trace keeps the recorder's GFL_DEV_* bits */
        m->gpu_util_pct = d.gpu_util_pct;
        m->mem_util_pct = d.mem_util_pct;
        m->mem_used_bytes = d.mem_used_bytes;
        m->mem_total_bytes = d.mem_total_bytes;
        m->proc_mem_bytes = d.proc_mem_bytes;
        m->temp_c = d.temp_c;
        m->power_mw = d.power_mw;
        m->energy_mj = d.energy_mj;
        gpufl__stats_add(st, &ev);
    }
}

/* Unended scopes per name, into the summary's rows (matched by text: the
 * rows hold names, not ids). */
static void count_unended(gpufl__summary *s, const gpufl__rows *r)
{
    for (size_t i = 0; i < gpufl__rows_n(r, GPUFL__TBL_SCOPE); i++) {
        if (!gpufl__s_unended(r->scopes, i))
            continue;
        const char *name = gpufl__rows_str(r, gpufl__s_name(r->scopes, i));
        for (uint32_t k = 0; k < s->nscopes; k++)
            if (!strcmp(s->scopes[k].name, name)) {
                s->scopes[k].unended++;
                break;
            }
    }
}

/* The bytes of the session's files but session.json: what it wrote. */
static uint64_t files_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    uint64_t total = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && strcmp(e->d_name, "session.json") != 0 && stat(path, &st) == 0 &&
            S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    if (d)
        closedir(d);
    return total;
}

/* The session directory of path: path itself, or the one its file is in. */
static void session_dir(const char *path, char *out, size_t len)
{
    struct stat st;
    snprintf(out, len, "%s", path);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return;
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, len, ".");
    else if (slash == out)
        out[1] = '\0';
    else
        *slash = '\0';
}

int gpufl__summary_from_recorded(const char *path, gpufl__summary *s, char *err, size_t err_len)
{
    char dir[4096];
    session_dir(path, dir, sizeof dir);
    gpufl_trace *t;
    int rc = gpufl_trace_open(dir, &t, err, err_len);
    if (rc != 0)
        return rc;
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    gpufl__stats st;
    gpufl__stats_init(&st);
    gpufl__rows rows;
    gpufl__rows_open(&rows, t);
    add_scopes(&st, &rows);
    add_device_work(&st, &rows);
    add_samples(&st, &rows);
    gpufl__string_lookup names = {trace_str, t};
    rc = gpufl__summary_set_names(s, &st, &names);
    if (rc == 0 && st.out_of_memory)
        rc = GPUFL_ENOMEM;
    if (rc == 0) {
        count_unended(s, &rows);
        /* every event read, not only those with a table of their own */
        for (unsigned ty = 0; ty < GFL_EV_TYPE_COUNT; ty++)
            s->events[ty] = gpufl_trace_event_count(t, ty);
        for (unsigned r = 0; r < GFL_DROP_REASON_COUNT; r++)
            s->dropped[r] = info->dropped[r];
        s->end_ns = info->end_ns ? info->end_ns : info->last_ns;
        s->host_stats = st.host;
        memcpy(s->dev, st.dev, sizeof s->dev);
        s->ndev = st.ndev;
        memcpy(s->copies, st.copies, sizeof s->copies);
        s->kernel_total_ns = st.kernel_total_ns;
        s->bytes_written = files_bytes(dir);
        if (info->stop_reason) {
            free(s->stop_reason);
            free(s->stop_detail);
            s->stop_reason = strdup(gpufl_trace_string(t, info->stop_reason));
            s->stop_detail = strdup(gpufl_trace_string(t, info->stop_detail));
            if (!s->stop_reason || !s->stop_detail)
                rc = GPUFL_ENOMEM;
        }
        if (info->engine) { /* the engine event: which engine recorded */
            char **dst[] = {&s->engine_requested, &s->engine, &s->engine_plugin, &s->engine_reason};
            uint32_t ids[] = {info->engine_requested, info->engine, info->engine_plugin, info->engine_reason};
            for (size_t k = 0; k < 4; k++) {
                free(*dst[k]);
                *dst[k] = ids[k] ? strdup(gpufl_trace_string(t, ids[k])) : NULL;
                if (ids[k] && !*dst[k])
                    rc = GPUFL_ENOMEM;
            }
        }
        s->from_events = true;
    }
    if (rc != 0)
        snprintf(err, err_len, "%s: out of memory summarizing the recorded events", dir);
    gpufl__stats_free(&st);
    gpufl_trace_close(t);
    return rc;
}
