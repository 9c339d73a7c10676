/*
 * `gpufl info SESSION [--json]`: what a recorded session holds, read from
 * its logs or trace.gflt (not from session.json, so it works on a crashed
 * session, a single log and a converted file too): app, host, devices,
 * duration, events per type, losses, why writing stopped, what was skipped,
 * file sizes and format version.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/trace_access.h"
#include "cli/cli.h"
#include "collect/session_json.h"
#include "core/event.h"
#include "core/utf8.h"
#include "gpufl/trace.h"
#include "present/report/crash_text.h"
#include "present/report/summary_text.h"

#define MAX_FILES 4096

typedef struct file_size {
    char name[256];
    unsigned long long bytes;
} file_size;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const file_size *)a)->name, ((const file_size *)b)->name);
}

/* The regular files of a directory, or the one file, with their sizes. */
static size_t list_files(const char *path, file_size *out, size_t max)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode)) {
        const char *base = strrchr(path, '/');
        snprintf(out[0].name, sizeof out[0].name, "%s", base ? base + 1 : path);
        out[0].bytes = (unsigned long long)st.st_size;
        return 1;
    }
    DIR *d = opendir(path);
    size_t n = 0;
    struct dirent *e;
    while (d && n < max && (e = readdir(d)) != NULL) {
        char full[4400];
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        if (e->d_name[0] == '.' || stat(full, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        snprintf(out[n].name, sizeof out[n].name, "%s", e->d_name);
        out[n++].bytes = (unsigned long long)st.st_size;
    }
    if (d)
        closedir(d);
    qsort(out, n, sizeof *out, by_name);
    return n;
}

/* Names made valid UTF-8 for json_pack, which refuses any other text (a
 * session's names come from outside: app names, paths, a damaged file);
 * the copies are freed once the document is built. */
typedef struct texts {
    char **v;
    size_t n, cap;
} texts;

/* s itself when it is valid UTF-8, else a copy with U+FFFD in place of the
 * bad bytes, kept in k; "" when out of memory. */
static const char *text_of(texts *k, const char *s)
{
    size_t n = strlen(s);
    if (gpufl__utf8_invalid_at(s, n) == n)
        return s;
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 8;
        char **v = realloc(k->v, cap * sizeof *v);
        if (!v)
            return "";
        k->v = v;
        k->cap = cap;
    }
    char *fixed = gpufl__utf8_fix(s);
    if (!fixed)
        return "";
    k->v[k->n++] = fixed;
    return fixed;
}

static void texts_free(texts *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i]);
    free(k->v);
}

static json_t *info_json_texts(const gpufl_trace *t, const file_size *files, size_t nfiles, texts *k)
{
    const gpufl_trace_info *i = gpufl_trace_get_info(t);
#define S(id) text_of(k, gpufl_trace_string(t, (id)))
    char start[64];
    gpufl__iso_time(i->start_wall_ns, start, sizeof start);
    ta a; /* its end: as recorded, or (a session that did not end) its latest row */
    gpufl__ta_open(&a, t);
    json_t *j = json_pack(
        "{s:s,s:s,s:s,s:i,s:s,s:I,s:s,s:I,s:b,s:s,s:i,s:s,s:s}", "session_id", S(i->session_id), "app_name",
        S(i->app_name), "host", S(i->host), "pid", (int)i->pid, "gpufl_version", S(i->gpufl_version), "start_wall_ns",
        (json_int_t)i->start_wall_ns, "start_time", start, "duration_ns", (json_int_t)ta_span(a.start_ns, a.end_ns),
        "ended", i->end_ns != 0, "format", i->source_format == GPUFL_TRACE_GFLT ? "gflt" : "ndjson", "format_version",
        (int)i->format_version, "source", text_of(k, i->source), "driver_version", S(i->driver_version));
    if (!j)
        return NULL;
    json_object_set_new(j, "cuda_driver_version", json_string(S(i->cuda_driver_version)));
    json_t *devs = json_array();
    for (uint32_t d = 0; d < i->ndevices; d++) {
        const gpufl_trace_device *dv = &i->devices[d];
        json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:i,s:I}", "index", (int)dv->index, "name", S(dv->name), "uuid",
                              S(dv->uuid), "pci_bus_id", S(dv->pci_bus_id), "sm_count", (int)dv->sm_count,
                              "memory_total_bytes", (json_int_t)dv->memory_total_bytes);
        if (o && dv->cc_major >= 0) {
            char cc[16];
            snprintf(cc, sizeof cc, "%d.%d", dv->cc_major, dv->cc_minor);
            json_object_set_new(o, "compute_capability", json_string(cc));
        }
        json_array_append_new(devs, o);
    }
    json_object_set_new(j, "devices", devs);
    json_t *events = json_object();
    json_int_t total = 0;
    for (unsigned ty = 1; ty < GFL_EV_TYPE_COUNT; ty++) {
        size_t n = gpufl_trace_event_count(t, ty);
        total += (json_int_t)n;
        if (n)
            json_object_set_new(events, gpufl__event_type_name((uint8_t)ty), json_integer((json_int_t)n));
    }
    json_object_set_new(j, "events", events);
    json_object_set_new(j, "events_total", json_integer(total));
    json_t *dropped = json_object();
    json_int_t dropped_total = 0;
    for (unsigned r = 0; r < GFL_DROP_REASON_COUNT; r++) {
        dropped_total += (json_int_t)i->dropped[r];
        if (i->dropped[r])
            json_object_set_new(dropped, gpufl__drop_reason_name((uint8_t)r), json_integer((json_int_t)i->dropped[r]));
    }
    json_object_set_new(j, "dropped", dropped);
    json_object_set_new(j, "dropped_total", json_integer(dropped_total));
    /* What writing lost after it stopped, by the channel it came from: part
     * of dropped's disk_limit, but which channel says what is missing. */
    json_object_set_new(j, "lost_after_stop",
                        json_pack("{s:I,s:I,s:I}", "device", (json_int_t)i->lost[0], "scope", (json_int_t)i->lost[1],
                                  "system", (json_int_t)i->lost[2]));
    json_object_set_new(j, "stopped",
                        i->stop_reason ? json_pack("{s:s,s:s,s:I}", "reason", S(i->stop_reason), "detail",
                                                   S(i->stop_detail), "at_ns", (json_int_t)i->stopped_at_ns)
                                       : json_null());
    json_object_set_new(j, "crash", gpufl__crash_json(t));
    /* which engine recorded, from the session's engine event (null: an
     * older session, which did not record it) */
    json_object_set_new(j, "engine",
                        i->engine
                            ? json_pack("{s:s,s:s,s:o,s:o}", "requested", S(i->engine_requested), "ran", S(i->engine),
                                        "plugin", i->engine_plugin ? json_string(S(i->engine_plugin)) : json_null(),
                                        "reason", i->engine_reason ? json_string(S(i->engine_reason)) : json_null())
                            : json_null());
    json_object_set_new(j, "skipped",
                        json_pack("{s:I,s:I,s:I}", "bytes", (json_int_t)i->skipped_bytes, "records",
                                  (json_int_t)i->skipped_lines, "chunks", (json_int_t)i->skipped_chunks));
    json_t *fa = json_array();
    json_int_t bytes = 0;
    for (size_t f = 0; f < nfiles; f++) {
        json_array_append_new(
            fa, json_pack("{s:s,s:I}", "name", text_of(k, files[f].name), "bytes", (json_int_t)files[f].bytes));
        bytes += (json_int_t)files[f].bytes;
    }
    json_object_set_new(j, "files", fa);
    json_object_set_new(j, "files_bytes", json_integer(bytes));
#undef S
    return j;
}

static json_t *info_json(const gpufl_trace *t, const file_size *files, size_t nfiles)
{
    texts k = {0};
    json_t *j = info_json_texts(t, files, nfiles, &k);
    texts_free(&k);
    return j;
}

/* One device line with only the facts the recording had: a device seen
 * only through its records has an index and nothing else. */
static void print_device(json_t *o, bool first)
{
    const char *name = json_string_value(json_object_get(o, "name"));
    const char *cc = json_string_value(json_object_get(o, "compute_capability"));
    const char *uuid = json_string_value(json_object_get(o, "uuid"));
    long long sms = (long long)json_integer_value(json_object_get(o, "sm_count"));
    long long mem = (long long)json_integer_value(json_object_get(o, "memory_total_bytes"));
    printf("%s %lld: %s", first ? "devices   " : "          ",
           (long long)json_integer_value(json_object_get(o, "index")), name && name[0] ? name : "(not described)");
    if (cc)
        printf(", compute capability %s", cc);
    if (sms)
        printf(", %lld SMs", sms);
    if (mem)
        printf(", %.1f GiB", (double)mem / (1024.0 * 1024 * 1024));
    if (uuid && uuid[0])
        printf(", %s", uuid);
    printf("\n");
}

static void print_text(const gpufl_trace *t, json_t *j)
{
    const gpufl_trace_info *i = gpufl_trace_get_info(t);
#define JS(key) json_string_value(json_object_get(j, key))
#define JI(o, key) (long long)json_integer_value(json_object_get(o, key))
    printf("session    %s\n", JS("session_id"));
    printf("app        %s (pid %lld) on %s\n", JS("app_name"), JI(j, "pid"), JS("host"));
    printf("started    %s\n", JS("start_time"));
    char dur[32];
    gpufl__format_duration((uint64_t)JI(j, "duration_ns"), dur, sizeof dur);
    if (i->end_ns)
        printf("duration   %s\n", dur);
    else
        printf("duration   did not end (killed, or still recording); events reach %s\n", dur);
    gpufl__crash_render_text(t, stdout, "crashed    ", 11);
    if (i->source_format == GPUFL_TRACE_GFLT)
        printf("format     .gflt version %u, written by gpufl %s\n", i->format_version, JS("gpufl_version"));
    else
        printf("format     NDJSON schema version %u, written by gpufl %s\n", i->format_version, JS("gpufl_version"));
    printf("source     %s\n", i->source);
    const gpufl_trace_read *rd = gpufl_trace_get_read(t);
    printf("read       %s: %s\n", rd->files, rd->why);
    json_t *devs = json_object_get(j, "devices");
    if (json_array_size(devs) == 0)
        printf("devices    none recorded\n");
    for (size_t d = 0; d < json_array_size(devs); d++) {
        json_t *o = json_array_get(devs, d);
        print_device(o, d == 0);
    }
    if (JS("driver_version")[0])
        printf("driver     %s (CUDA %s)\n", JS("driver_version"),
               JS("cuda_driver_version")[0] ? JS("cuda_driver_version") : "?");
    printf("events     %lld\n", JI(j, "events_total"));
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(j, "events"), key, v)
        printf("  %-16s %lld\n", key, (long long)json_integer_value(v));
    if (JI(j, "dropped_total") == 0)
        printf("dropped    none\n");
    else
        printf("dropped    %lld\n", JI(j, "dropped_total"));
    json_object_foreach(json_object_get(j, "dropped"), key, v)
        printf("  %-16s %lld\n", key, (long long)json_integer_value(v));
    if (i->lost[0] || i->lost[1] || i->lost[2])
        printf("  after writing stopped: %llu device, %llu scope, %llu system events\n", (unsigned long long)i->lost[0],
               (unsigned long long)i->lost[1], (unsigned long long)i->lost[2]);
    if (i->engine)
        printf("engine     %s%s%s%s%s%s%s%s\n", gpufl_trace_string(t, i->engine), i->engine_plugin ? " (plugin " : "",
               i->engine_plugin ? gpufl_trace_string(t, i->engine_plugin) : "", i->engine_plugin ? ")" : "",
               i->engine_reason ? "; asked for " : "",
               i->engine_reason ? gpufl_trace_string(t, i->engine_requested) : "", i->engine_reason ? ": " : "",
               i->engine_reason ? gpufl_trace_string(t, i->engine_reason) : "");
    else
        printf("engine     not recorded (a session of an older gpufl)\n");
    if (i->stop_reason)
        printf("writing    stopped at +%.3f s: %s (%s)\n",
               i->stopped_at_ns > i->start_ns ? (double)(i->stopped_at_ns - i->start_ns) / 1e9 : 0.0,
               gpufl_trace_string(t, i->stop_reason), gpufl_trace_string(t, i->stop_detail));
    else
        printf("writing    never stopped\n");
    if (i->skipped_bytes || i->skipped_lines || i->skipped_chunks)
        printf("skipped    %llu bytes of a torn tail, %llu records and %llu chunks of unknown types\n",
               (unsigned long long)i->skipped_bytes, (unsigned long long)i->skipped_lines,
               (unsigned long long)i->skipped_chunks);
    printf("files      %lld bytes\n", JI(j, "files_bytes"));
    json_t *files = json_object_get(j, "files");
    for (size_t f = 0; f < json_array_size(files); f++) {
        json_t *o = json_array_get(files, f);
        printf("  %-16s %lld\n", json_string_value(json_object_get(o, "name")), JI(o, "bytes"));
    }
#undef JS
#undef JI
}

int gpufl_cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (argv[i][0] == '-') {
            return gpufl__cli_usage_error("info", "unknown option '%s'", argv[i]);
        } else if (path) {
            return gpufl__cli_usage_error("info", "one SESSION only ('%s' is a second)", argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (!path)
        return gpufl__cli_usage_error("info", "which SESSION?");
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl info: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    static file_size files[MAX_FILES];
    size_t nfiles = list_files(path, files, MAX_FILES);
    json_t *j = info_json(t, files, nfiles);
    int rc = GFL_EXIT_OK;
    if (!j) {
        fprintf(stderr, "gpufl info: out of memory\n");
        rc = GFL_EXIT_FAIL;
    } else if (json) {
        json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        printf("\n");
    } else {
        print_text(t, j);
    }
    json_decref(j);
    gpufl_trace_close(t);
    return rc;
}
