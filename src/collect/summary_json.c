/*
 * Summary <-> JSON (see summary_json.h and docs/FORMAT.md, "session.json").
 *
 * Means are stored as means (that is what a person reading the file wants);
 * loading turns them back into sums over the sample count, which is all the
 * renderers need.
 */
#include "collect/summary_json.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/regular_file.h"
#include "core/utf8.h"
#include "gpufl/gpufl.h"

static double mean_x100(uint64_t sum, uint64_t n) { return n ? (double)sum / (double)n / 100.0 : 0; }

static json_t *names_to_json(const gpufl__summary_name *names, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++) {
        json_t *o = json_pack("{s:o,s:I,s:I,s:I,s:I}", "name", gpufl__json_text(names[i].name), "count",
                              (json_int_t)names[i].count, "total_ns", (json_int_t)names[i].total_ns, "min_ns",
                              (json_int_t)names[i].min_ns, "max_ns", (json_int_t)names[i].max_ns);
        /* only a summary of recorded events has them (never ended: counted
         * to the session's last recorded time) */
        if (o && names[i].unended)
            json_object_set_new(o, "unended", json_integer((json_int_t)names[i].unended));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *host_to_json(const gpufl__host_stats *h)
{
    return json_pack("{s:I,s:I,s:f,s:f,s:f,s:f,s:I,s:I,s:I}", "samples", (json_int_t)h->samples, "cpu_count",
                     (json_int_t)h->cpu_count, "proc_cpu_pct_mean",
                     mean_x100(h->proc_cpu_sum_x100, h->proc_cpu_samples), "proc_cpu_pct_max",
                     h->proc_cpu_max_x100 / 100.0, "sys_cpu_pct_mean",
                     mean_x100(h->sys_cpu_sum_x100, h->sys_cpu_samples), "sys_cpu_pct_max", h->sys_cpu_max_x100 / 100.0,
                     "proc_rss_peak_bytes", (json_int_t)h->rss_max, "ram_used_peak_bytes", (json_int_t)h->ram_used_max,
                     "ram_total_bytes", (json_int_t)h->ram_total);
}

static json_t *devices_to_json(const gpufl__summary *s)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < s->ndev; i++) {
        const gpufl__device_stats *d = &s->dev[i];
        if (!d->samples)
            continue;
        json_t *o =
            json_pack("{s:I,s:I,s:f,s:I,s:I,s:I,s:I}", "device", (json_int_t)i, "samples", (json_int_t)d->samples,
                      "gpu_util_pct_mean", d->util_samples ? (double)d->util_sum / (double)d->util_samples : 0.0,
                      "gpu_util_pct_max", (json_int_t)d->util_max, "mem_used_peak_bytes", (json_int_t)d->mem_used_max,
                      "mem_total_bytes", (json_int_t)d->mem_total, "power_max_mw", (json_int_t)d->power_max_mw);
        if (o && s->dev_name[i])
            json_object_set_new(o, "name", json_string(s->dev_name[i]));
        if (o && d->has_temp)
            json_object_set_new(o, "temp_max_c", json_integer(d->temp_max));
        if (o && d->has_energy)
            json_object_set_new(o, "energy_mj", json_integer((json_int_t)(d->energy_last_mj - d->energy_first_mj)));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *gpufl__summary_to_json(const gpufl__summary *s)
{
    json_t *events = json_object(), *dropped = json_object(), *copies = json_object();
    for (int t = 1; events && t < GFL_EV_TYPE_COUNT; t++)
        json_object_set_new(events, gpufl__event_type_name((uint8_t)t), json_integer((json_int_t)s->events[t]));
    for (int r = 0; dropped && r < GFL_DROP_REASON_COUNT; r++)
        json_object_set_new(dropped, gpufl__drop_reason_name((uint8_t)r), json_integer((json_int_t)s->dropped[r]));
    for (int k = 0; copies && k < GFL_COPY_KIND_COUNT; k++) {
        const gpufl__copy_stats *c = &s->copies[k];
        if (c->count)
            json_object_set_new(copies, gpufl__copy_kind_name((uint8_t)k),
                                json_pack("{s:I,s:I,s:I}", "count", (json_int_t)c->count, "bytes", (json_int_t)c->bytes,
                                          "total_ns", (json_int_t)c->total_ns));
    }
    json_t *logs = json_pack("{s:I}", "bytes_written", (json_int_t)s->bytes_written);
    if (logs)
        json_object_set_new(logs, "stopped",
                            s->stop_reason ? json_pack("{s:s,s:s}", "reason", s->stop_reason, "detail",
                                                       s->stop_detail ? s->stop_detail : "")
                                           : json_null());
    return json_pack("{s:I,s:o,s:o,s:I,s:o,s:I,s:o,s:o,s:o,s:I,s:o,s:o}", "duration_ns",
                     (json_int_t)(s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0), "events", events, "dropped",
                     dropped, "dropped_total", (json_int_t)gpufl__summary_dropped_total(s), "logs", logs,
                     "intern_overflows", (json_int_t)s->intern_overflows, "host", host_to_json(&s->host_stats),
                     "devices", devices_to_json(s), "copies", copies, "kernel_total_ns", (json_int_t)s->kernel_total_ns,
                     "scopes", names_to_json(s->scopes, s->nscopes), "kernels", names_to_json(s->kernels, s->nkernels));
}

json_t *gpufl__crash_to_json(const gpufl__summary *s)
{
    const gfl_crash_payload *c = &s->crash;
    char addr[24];
    snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)c->address);
    const char *code = gpufl__signal_code_name(c->signal, c->code);
    json_t *o = json_pack("{s:I,s:I,s:i,s:s,s:i,s:s,s:s,s:s,s:i,s:i}", "ts_ns", (json_int_t)s->crash_ts, "tid",
                          (json_int_t)s->crash_tid, "signal", (int)c->signal, "signal_name",
                          gpufl__signal_name(c->signal), "code", (int)c->code, "code_name", code ? code : "", "address",
                          addr, "action", gpufl__crash_action_name(c->action), "stack_frames", (int)c->frames,
                          "open_scopes", (int)c->open_scopes);
    if (o && c->sender_pid)
        json_object_set_new(o, "pid", json_integer(c->sender_pid));
    return o;
}

/* ---- loading ---------------------------------------------------------- */

static uint64_t u64_of(const json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 ? (uint64_t)v : 0;
}

static double real_of(const json_t *o, const char *key) { return json_number_value(json_object_get(o, key)); }

static char *str_of(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? strdup(v) : NULL;
}

static void crash_from_json(const json_t *o, gpufl__summary *s)
{
    if (!json_is_object(o))
        return;
    s->crashed = true;
    s->crash_ts = u64_of(o, "ts_ns");
    s->crash_tid = (uint32_t)u64_of(o, "tid");
    s->crash.signal = (int32_t)json_integer_value(json_object_get(o, "signal"));
    s->crash.code = (int32_t)json_integer_value(json_object_get(o, "code"));
    const char *addr = json_string_value(json_object_get(o, "address"));
    s->crash.address = addr ? strtoull(addr, NULL, 16) : 0;
    s->crash.sender_pid = (uint32_t)u64_of(o, "pid");
    const char *action = json_string_value(json_object_get(o, "action"));
    for (uint8_t a = 0; action && a < GFL_CRASH_ACTION_COUNT; a++)
        if (!strcmp(action, gpufl__crash_action_name(a)))
            s->crash.action = a;
    s->crash.frames = (uint16_t)u64_of(o, "stack_frames");
    s->crash.open_scopes = (uint32_t)u64_of(o, "open_scopes");
}

static int names_from_json(const json_t *a, gpufl__summary_name **out, uint32_t *n_out)
{
    size_t n = json_array_size(a);
    *out = NULL;
    *n_out = 0;
    if (!n)
        return 0;
    gpufl__summary_name *names = calloc(n, sizeof *names);
    if (!names)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(a, i);
        names[i].name = str_of(e, "name");
        if (!names[i].name)
            names[i].name = strdup("");
        names[i].count = u64_of(e, "count");
        names[i].total_ns = u64_of(e, "total_ns");
        names[i].min_ns = u64_of(e, "min_ns");
        names[i].max_ns = u64_of(e, "max_ns");
    }
    *out = names;
    *n_out = (uint32_t)n;
    return 0;
}

static void host_from_json(const json_t *h, gpufl__host_stats *out)
{
    out->samples = u64_of(h, "samples");
    out->cpu_count = (uint32_t)u64_of(h, "cpu_count");
    out->proc_cpu_samples = out->sys_cpu_samples = out->samples;
    out->proc_cpu_sum_x100 = (uint64_t)(real_of(h, "proc_cpu_pct_mean") * 100.0 * (double)out->samples + 0.5);
    out->proc_cpu_max_x100 = (uint32_t)(real_of(h, "proc_cpu_pct_max") * 100.0 + 0.5);
    out->sys_cpu_sum_x100 = (uint64_t)(real_of(h, "sys_cpu_pct_mean") * 100.0 * (double)out->samples + 0.5);
    out->sys_cpu_max_x100 = (uint32_t)(real_of(h, "sys_cpu_pct_max") * 100.0 + 0.5);
    out->rss_max = u64_of(h, "proc_rss_peak_bytes");
    out->ram_used_max = u64_of(h, "ram_used_peak_bytes");
    out->ram_total = u64_of(h, "ram_total_bytes");
}

static void devices_from_json(const json_t *a, gpufl__summary *s)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *o = json_array_get(a, i);
        uint64_t idx = u64_of(o, "device");
        if (idx >= GFL_STATS_MAX_DEVICES)
            continue;
        gpufl__device_stats *d = &s->dev[idx];
        free(s->dev_name[idx]);
        s->dev_name[idx] = str_of(o, "name");
        d->samples = d->util_samples = u64_of(o, "samples");
        d->util_sum = (uint64_t)(real_of(o, "gpu_util_pct_mean") * (double)d->samples + 0.5);
        d->util_max = (uint32_t)u64_of(o, "gpu_util_pct_max");
        d->mem_used_max = u64_of(o, "mem_used_peak_bytes");
        d->mem_total = u64_of(o, "mem_total_bytes");
        d->power_max_mw = (uint32_t)u64_of(o, "power_max_mw");
        if (json_object_get(o, "temp_max_c")) {
            d->has_temp = true;
            d->temp_max = (int32_t)json_integer_value(json_object_get(o, "temp_max_c"));
        }
        if (json_object_get(o, "energy_mj")) {
            d->has_energy = true;
            d->energy_last_mj = u64_of(o, "energy_mj");
        }
        if (idx + 1 > s->ndev)
            s->ndev = (uint32_t)idx + 1;
    }
}

static void counts_from_json(const json_t *sum, gpufl__summary *s)
{
    const json_t *events = json_object_get(sum, "events");
    for (int t = 1; t < GFL_EV_TYPE_COUNT; t++)
        s->events[t] = u64_of(events, gpufl__event_type_name((uint8_t)t));
    const json_t *dropped = json_object_get(sum, "dropped");
    for (int r = 0; r < GFL_DROP_REASON_COUNT; r++)
        s->dropped[r] = u64_of(dropped, gpufl__drop_reason_name((uint8_t)r));
    const json_t *copies = json_object_get(sum, "copies");
    for (int k = 0; k < GFL_COPY_KIND_COUNT; k++) {
        const json_t *c = json_object_get(copies, gpufl__copy_kind_name((uint8_t)k));
        s->copies[k].count = u64_of(c, "count");
        s->copies[k].bytes = u64_of(c, "bytes");
        s->copies[k].total_ns = u64_of(c, "total_ns");
    }
    const json_t *logs = json_object_get(sum, "logs");
    s->bytes_written = u64_of(logs, "bytes_written");
    const json_t *stopped = json_object_get(logs, "stopped");
    if (json_is_object(stopped)) {
        s->stop_reason = str_of(stopped, "reason");
        s->stop_detail = str_of(stopped, "detail");
    }
    s->intern_overflows = u64_of(sum, "intern_overflows");
    s->kernel_total_ns = u64_of(sum, "kernel_total_ns");
}

int gpufl__summary_load(const char *path, gpufl__summary *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    char file[PATH_MAX];
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, err_len, "'%s': %s", path, strerror(errno));
        return GPUFL_ENOTFOUND;
    }
    if (S_ISDIR(st.st_mode))
        snprintf(file, sizeof file, "%s/session.json", path);
    else
        snprintf(file, sizeof file, "%s", path);
    json_error_t jerr;
    json_t *root = gpufl__json_load_regular(file, 0, &jerr);
    if (!root) {
        if (jerr.line < 1)
            snprintf(err, err_len, "'%s': cannot read it: %s", file, jerr.text);
        else
            snprintf(err, err_len, "'%s': line %d: %s", file, jerr.line, jerr.text);
        return jerr.line < 1 ? GPUFL_ENOTFOUND : GPUFL_EINVAL;
    }
    int rc = 0;
    const char *format = json_string_value(json_object_get(root, "format"));
    if (!json_is_object(root) || !format || strcmp(format, "gpufl-session") != 0) {
        snprintf(err, err_len, "'%s': not a gpufl session.json (no \"format\": \"gpufl-session\")", file);
        rc = GPUFL_EINVAL;
        goto out;
    }
    out->session_id = str_of(root, "session_id");
    out->app_name = str_of(root, "app_name");
    out->host = str_of(root, "host");
    out->dir = str_of(root, "log_dir");
    out->status = str_of(root, "status");
    out->pid = (int)u64_of(root, "pid");
    out->start_ns = u64_of(root, "start_ns");
    out->start_wall_ns = u64_of(root, "start_wall_ns");
    const json_t *sum = json_object_get(root, "summary");
    out->end_ns = out->start_ns + u64_of(sum, "duration_ns");
    if (!out->session_id || !out->app_name || !out->status) {
        snprintf(err, err_len, "'%s': session_id, app_name or status is missing", file);
        rc = GPUFL_EINVAL;
        goto out;
    }
    if (!out->host)
        out->host = strdup("");
    if (!out->dir)
        out->dir = strdup(path);
    counts_from_json(sum, out);
    crash_from_json(json_object_get(root, "crash"), out);
    const json_t *engine = json_object_get(root, "engine"); /* absent from older sessions */
    out->engine_requested = str_of(engine, "requested");
    out->engine = str_of(engine, "ran");
    out->engine_plugin = str_of(engine, "plugin");
    out->engine_reason = str_of(engine, "reason");
    host_from_json(json_object_get(sum, "host"), &out->host_stats);
    devices_from_json(json_object_get(sum, "devices"), out);
    if (names_from_json(json_object_get(sum, "scopes"), &out->scopes, &out->nscopes) != 0 ||
        names_from_json(json_object_get(sum, "kernels"), &out->kernels, &out->nkernels) != 0) {
        snprintf(err, err_len, "'%s': out of memory", file);
        rc = GPUFL_ENOMEM;
    }
out:
    json_decref(root);
    if (rc != 0)
        gpufl__summary_free(out);
    return rc;
}
