/*
 * Writing session.json (see session_json.h and docs/FORMAT.md).
 */
#include "collect/session_json.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collect/summary_json.h"
#include "core/clock.h"
#include "core/machine_id.h"
#include "core/options.h"
#include "core/os.h"
#include "core/redact.h"
#include "core/utf8.h"
#include "gpufl/gpufl.h"

void gpufl__iso_time(uint64_t wall_ns, char *buf, size_t len)
{
    time_t secs = (time_t)(wall_ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03uZ", (unsigned)(wall_ns / 1000000ull % 1000));
}

/* A URL option without its userinfo (core/redact.h). */
static json_t *url_json(const char *url)
{
    char *safe = gpufl__url_redact(url ? url : "");
    json_t *j = safe ? gpufl__json_text(safe) : NULL;
    free(safe);
    return j;
}

/* Every option except the API key, whose presence alone is recorded; URLs
 * without their userinfo (a password in backend_url). */
static json_t *options_json(const gpufl_options *o)
{
    json_t *j = json_object();
    for (size_t i = 0; j && i < gpufl__options_count; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        const void *f = (const char *)o + d->offset;
        if (strcmp(d->name, "api_key") == 0) {
            json_object_set_new(j, "api_key_set", json_boolean(o->api_key && o->api_key[0]));
            continue;
        }
        json_t *v = NULL;
        switch (d->kind) {
        case GFL_OPT_STRING:
            v = gpufl__option_is_url(d) ? url_json(*(const char *const *)f) : gpufl__json_text(*(const char *const *)f);
            break;
        case GFL_OPT_BOOL: v = json_boolean(*(const bool *)f); break;
        case GFL_OPT_U32: v = json_integer(*(const uint32_t *)f); break;
        case GFL_OPT_BYTES: v = json_integer((json_int_t) * (const uint64_t *)f); break;
        case GFL_OPT_BACKEND: v = json_string(gpufl__backend_name(o->backend)); break;
        case GFL_OPT_ENGINE: v = json_string(gpufl__engine_name(o->profiling_engine)); break;
        case GFL_OPT_LOG_FORMAT: v = json_string(gpufl__log_format_name(o->log_format)); break;
        }
        json_object_set_new(j, d->name, v);
    }
    return j;
}

/* One object per GPU, with the driver's versions repeated in each so that a
 * device object stands on its own. */
static json_t *devices_json(const gpufl__device_list *list)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && list && i < list->count; i++) {
        const gpufl__device_desc *d = &list->devices[i];
        json_t *o =
            json_pack("{s:i,s:o,s:o,s:o,s:o,s:o}", "index", (int)d->index, "vendor", gpufl__json_text(list->vendor),
                      "name", gpufl__json_text(d->name), "uuid", gpufl__json_text(d->uuid), "pci_bus_id",
                      gpufl__json_text(d->pci_bus_id), "driver_version", gpufl__json_text(list->driver_version));
        if (!o)
            continue;
        if (list->cuda_driver_version > 0) {
            char v[16];
            snprintf(v, sizeof v, "%d.%d", list->cuda_driver_version / 1000, list->cuda_driver_version % 1000 / 10);
            json_object_set_new(o, "cuda_driver_version", json_string(v));
        }
        if (d->cc_major >= 0) {
            char cc[16];
            snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
            json_object_set_new(o, "compute_capability", json_string(cc));
        }
        const struct {
            const char *key;
            uint64_t value;
        } nums[] = {{"sm_count", d->sm_count},
                    {"memory_total_bytes", d->memory_total_bytes},
                    {"power_limit_mw", d->power_limit_mw},
                    {"max_sm_clock_mhz", d->max_sm_clock_mhz},
                    {"max_mem_clock_mhz", d->max_mem_clock_mhz},
                    {"pcie_max_gen", d->pcie_max_gen},
                    {"pcie_max_width", d->pcie_max_width}};
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
            if (nums[k].value) /* 0 is unknown: leave it out */
                json_object_set_new(o, nums[k].key, json_integer((json_int_t)nums[k].value));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *host_info_json(void)
{
    struct utsname u;
    char os[600] = "";
    if (uname(&u) == 0)
        snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    json_t *j = json_pack("{s:I,s:I,s:s}", "cpu_count", (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "ram_total_bytes",
                          (json_int_t)(pages > 0 && page > 0 ? pages * page : 0), "os", os);
    /* Readers symbolize stacks from local module files only when this id is
     * theirs; a machine without one just leaves it out. */
    char id[GPUFL__MACHINE_ID_MAX];
    if (j && gpufl__machine_id(id) == 0)
        json_object_set_new(j, "machine_id", json_string(id));
    return j;
}

static json_t *text_or_null(const char *s) { return s ? gpufl__json_text(s) : json_null(); }

/* The engine asked for and, once the device plugin has started or been
 * given up (the first checkpoint after it: session/session.c asks for one at
 * once), the engine that records, its plugin and why they differ. */
static json_t *engine_json(const gpufl__session_info *info, const gpufl__summary *summary)
{
    const char *ran = summary ? summary->engine : NULL;
    return json_pack("{s:s,s:o,s:o,s:o}", "requested", gpufl__engine_name(info->config->o.profiling_engine), "ran",
                     text_or_null(ran), "plugin", text_or_null(ran ? summary->engine_plugin : NULL), "reason",
                     text_or_null(ran ? summary->engine_reason : NULL));
}

/* Where the session stands in a job of many processes (core/job.h): what
 * its launcher set and was valid, the host and the GPUs this host has
 * (their UUIDs, as devices lists them), so that a job's sessions can be
 * found and ordered by rank. */
static json_t *job_json(const gpufl__session_info *info)
{
    const gpufl__job *j = &info->job;
    json_t *o = json_pack("{s:s}", "launcher", j->launcher);
    if (!o)
        return NULL;
    const struct {
        const char *key;
        uint32_t bit, value;
    } nums[] = {{"rank", GPUFL__JOB_RANK, j->rank},
                {"local_rank", GPUFL__JOB_LOCAL_RANK, j->local_rank},
                {"world_size", GPUFL__JOB_WORLD_SIZE, j->world_size},
                {"local_world_size", GPUFL__JOB_LOCAL_WORLD_SIZE, j->local_world_size}};
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
        if (j->has & nums[k].bit)
            json_object_set_new(o, nums[k].key, json_integer(nums[k].value));
    if (j->id[0]) {
        json_object_set_new(o, "id", gpufl__json_text(j->id));
        json_object_set_new(o, "id_from", json_string(j->id_from));
    }
    if (j->step[0])
        json_object_set_new(o, "step", gpufl__json_text(j->step));
    if (j->master[0])
        json_object_set_new(o, "master", gpufl__json_text(j->master));
    json_object_set_new(o, "host", gpufl__json_text(info->host));
    json_t *uuids = json_array();
    for (uint32_t i = 0; uuids && info->devices && i < info->devices->count; i++)
        json_array_append_new(uuids, gpufl__json_text(info->devices->devices[i].uuid));
    json_object_set_new(o, "gpu_uuids", uuids);
    if (j->cuda_visible_devices[0])
        json_object_set_new(o, "cuda_visible_devices", gpufl__json_text(j->cuda_visible_devices));
    return o;
}

/* The document's common part: identity, options, host, devices. status:
 * "ended", "crashed", "running" or "dump". */
static json_t *session_root(const gpufl__session_info *info, const char *status)
{
    char start[40];
    gpufl__iso_time(info->start_wall_ns, start, sizeof start);
    /* Names from outside (app, host, the directory, device names) need not
     * be UTF-8: U+FFFD replaces what is not, as in the NDJSON logs. */
    json_t *root =
        json_pack("{s:s,s:i,s:s,s:s,s:o,s:i,s:o,s:o,s:I,s:I,s:s,s:s,s:s,s:o,s:o,s:o}", "format", "gpufl-session",
                  "format_version", GFL_FORMAT_VERSION, "gpufl_version", GPUFL_VERSION_STRING, "session_id", info->id,
                  "app_name", gpufl__json_text(info->app_name), "pid", info->pid, "host", gpufl__json_text(info->host),
                  "log_dir", gpufl__json_text(info->dir), "start_ns", (json_int_t)info->start_ns, "start_wall_ns",
                  (json_int_t)info->start_wall_ns, "start_time", start, "clock_source", gpufl__clock_source(), "status",
                  status, "options", options_json(&info->config->o), "host_info", host_info_json(), "devices",
                  devices_json(info->devices));
    if (root && info->job.launcher) /* absent when no launcher started the process */
        json_object_set_new(root, "job", job_json(info));
    return root;
}

/* Writes root (taken) as dir/session.json, atomically. */
static int write_root(json_t *root, const char *dir)
{
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!text) {
        errno = ENOMEM;
        return GPUFL_ENOMEM;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/session.json", dir);
    size_t n = strlen(text);
    text[n] = '\n'; /* json_dumps leaves room for the NUL, which we replace */
    int rc = gpufl__write_file_atomic(path, text, n + 1) == 0 ? 0 : GPUFL_EIO;
    free(text);
    return rc;
}

int gpufl__session_json_write_dump(const gpufl__session_info *info, const char *dir, const gpufl__dump_note *note)
{
    json_t *root = session_root(info, "dump");
    if (!root) {
        errno = ENOMEM;
        return GPUFL_ENOMEM;
    }
    char at[40];
    gpufl__iso_time(info->start_wall_ns + (note->at_ns - info->start_ns), at, sizeof at);
    json_t *d =
        json_pack("{s:o,s:o,s:o,s:I,s:s,s:I,s:I,s:I,s:I}", "name", gpufl__json_text(note->name), "trigger",
                  gpufl__json_text(note->kind), "detail", gpufl__json_text(note->detail), "at_ns",
                  (json_int_t)note->at_ns, "at_time", at, "from_ns", (json_int_t)note->from_ns, "to_ns",
                  (json_int_t)note->to_ns, "events", (json_int_t)note->events, "bytes", (json_int_t)note->bytes);
    if (d && note->oom)
        json_object_set_new(d, "oom", gpufl__json_text(note->oom));
    json_object_set_new(root, "dump", d);
    json_object_set_new(root, "session_dir", gpufl__json_text(info->dir));
    return write_root(root, dir);
}

int gpufl__session_json_write(const gpufl__session_info *info, const gpufl__summary *summary,
                              const gpufl__session_end *end)
{
    json_t *root = session_root(info, end ? "ended" : summary && summary->crashed ? "crashed" : "running");
    if (!root) {
        errno = ENOMEM;
        return GPUFL_ENOMEM;
    }
    if (end) {
        char stop[40];
        gpufl__iso_time(end->end_wall_ns, stop, sizeof stop);
        json_object_set_new(root, "end_ns", json_integer((json_int_t)end->end_ns));
        json_object_set_new(root, "end_wall_ns", json_integer((json_int_t)end->end_wall_ns));
        json_object_set_new(root, "end_time", json_string(stop));
    }
    json_object_set_new(root, "engine", engine_json(info, summary));
    if (summary && summary->crashed)
        json_object_set_new(root, "crash", gpufl__crash_to_json(summary));
    if (summary)
        json_object_set_new(root, "summary", gpufl__summary_to_json(summary));
    return write_root(root, info->dir);
}
