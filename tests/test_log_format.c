/*
 * log_format through the real library: sessions written as NDJSON, .gflt,
 * both, compact (the default) or none, and read back (src/sink/gflt_sink.c, session_sinks.c; the readers).
 *
 * Why: the binary trace must hold exactly what the logs hold, and must obey
 * the same storage rules. Checked: the option from code, environment and
 * config file; a session with the synthetic device plugin written both
 * ways, where every event line of every log comes back unchanged through
 * the NDJSON reader (exactness against the live writer), and trace.gflt
 * holds the same events channel by channel; a .gflt-only session; a
 * compact one (scope.log and system.log exact, no device.log, read as
 * trace.gflt, no loss counted for the missing channel); a none one
 * (session.json alone, its summary right); the disk
 * cap and the free-space floor with .gflt (writing stops, the stop chunk
 * says why, every event is either in the file or counted lost); and a
 * recording process killed with SIGKILL, whose trace.gflt reads back to its
 * last whole chunk without an error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/intern.h"
#include "core/options.h"
#include "core/os.h"
#include "event_gen.h"
#include "format/ndjson_format.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "read/event_source.h"
#include "read/ndjson_parse.h"
#include "test_util.h"

/* The main thread's ring is made by the first session that records on it
 * and keeps its size: every session here asks for one that never fills, so
 * that every event is either written or counted lost by the writer. */
#define RING_EVENTS (1u << 20)

static char *current_log_path;

static char *new_log_path(const char *tag)
{
    current_log_path = tu_mkdtemp(tag);
    return current_log_path;
}

static int cleanup(void **state)
{
    (void)state;
    gpufl_shutdown();
    gpufl__os = &gpufl__os_real;
    unsetenv("GPUFL_LOG_FORMAT");
    unsetenv("GPUFL_SYNTHETIC");
    if (current_log_path) {
        tu_rm_rf(current_log_path);
        free(current_log_path);
        current_log_path = NULL;
    }
    return 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static uint64_t file_size(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static bool has(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return tu_exists(path);
}

/* ---- the option ------------------------------------------------------------ */

static void test_option(void **state)
{
    (void)state;
    gpufl__config c;
    char err[GFL_ERR_LEN];
    assert_int_equal(gpufl__config_resolve(NULL, &c, err, sizeof err), 0);
    assert_int_equal(c.o.log_format, GPUFL_LOG_COMPACT); /* the default */
    gpufl__config_free(&c);
    static const struct {
        const char *text;
        gpufl_log_format f;
    } ok[] = {{"gflt", GPUFL_LOG_GFLT},
              {"Both", GPUFL_LOG_BOTH},
              {"NDJSON", GPUFL_LOG_NDJSON},
              {"none", GPUFL_LOG_NONE},
              {"Compact", GPUFL_LOG_COMPACT}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        tu_setenv("GPUFL_LOG_FORMAT", ok[i].text);
        assert_int_equal(gpufl__config_resolve(NULL, &c, err, sizeof err), 0);
        assert_int_equal(c.o.log_format, ok[i].f);
        gpufl__config_free(&c);
    }
    tu_setenv("GPUFL_LOG_FORMAT", "binary");
    assert_int_equal(gpufl__config_resolve(NULL, &c, err, sizeof err), GPUFL_ECONFIG);
    assert_non_null(strstr(err, "GPUFL_LOG_FORMAT"));
    assert_non_null(strstr(err, "compact, ndjson, gflt, both, none"));
    /* set in code: wins over the environment */
    tu_setenv("GPUFL_LOG_FORMAT", "gflt");
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_BOTH;
    assert_int_equal(gpufl__config_resolve(&o, &c, err, sizeof err), 0);
    assert_int_equal(c.o.log_format, GPUFL_LOG_BOTH);
    gpufl__config_free(&c);
    unsetenv("GPUFL_LOG_FORMAT");
    /* a config file */
    char *d = new_log_path("logfmt-cfg");
    char path[4200];
    snprintf(path, sizeof path, "%s/cfg.json", d);
    tu_write_file(path, "{\"log_format\": \"gflt\"}");
    gpufl_options_init(&o);
    o.config_file = path;
    assert_int_equal(gpufl__config_resolve(&o, &c, err, sizeof err), 0);
    assert_int_equal(c.o.log_format, GPUFL_LOG_GFLT);
    gpufl__config_free(&c);
    tu_write_file(path, "{\"log_format\": 1}");
    assert_int_equal(gpufl__config_resolve(&o, &c, err, sizeof err), GPUFL_ECONFIG);
    assert_non_null(strstr(err, "log_format"));
}

/* ---- a session written both ways ------------------------------------------- */

#define SCRIPT                                                                                                         \
    "kernels=3000,copies=300,memsets=30,syncs=30,allocs=30,metrics=10,devices=2,streams=4,"                            \
    "threads=2,pace=1"

/* Every event line of one log read back and formatted again is the line
 * itself; the events are appended to evs (with their strings in t). */
static size_t check_log_exact(const char *path, gpufl__strtab *t, gfl_event **evs, size_t *n, size_t *cap)
{
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    gpufl__ndjson_parser p;
    gpufl__ndjson_parser_init(&p, t);
    gpufl__string_lookup names = gpufl__strtab_lookup(t);
    size_t lines = 0;
    for (char *line = text, *nl; (nl = memchr(line, '\n', (size_t)(text + len - line))) != NULL; line = nl + 1) {
        gfl_event ev;
        gpufl__meta_line meta;
        char why[512];
        int kind = gpufl__ndjson_parse_line(&p, line, (size_t)(nl - line), &ev, &meta, why, sizeof why);
        if (kind < 0)
            fail_msg("%s: %s: %.*s", path, why, (int)(nl - line), line);
        assert_true(kind != GFL_LINE_UNKNOWN);
        if (kind != GFL_LINE_EVENT)
            continue;
        char *again = malloc(gpufl__ndjson_bound(&ev, &names));
        assert_non_null(again);
        size_t n2 = gpufl__ndjson_format(&ev, &names, again);
        if (n2 != (size_t)(nl - line) + 1 || memcmp(again, line, n2) != 0)
            fail_msg("%s: the line does not come back:\n  %.*s\n  %.*s", path, (int)(nl - line), line, (int)n2, again);
        free(again);
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 1024;
            *evs = realloc(*evs, *cap * sizeof **evs);
            assert_non_null(*evs);
        }
        (*evs)[(*n)++] = ev;
        lines++;
    }
    gpufl__ndjson_parser_free(&p);
    free(text);
    return lines;
}

static void test_both_with_plugin(void **state)
{
    (void)state;
    char *log_path = new_log_path("logfmt-both");
    tu_setenv("GPUFL_SYNTHETIC", SCRIPT);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "both";
    o.log_path = log_path;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    o.log_format = GPUFL_LOG_BOTH;
    o.ring_events = RING_EVENTS;
    o.system_sample_rate_ms = 5;
    o.continuous_system_sampling = true;
    assert_true(gpufl_init(&o));
    for (int i = 0; i < 50; i++) {
        gpufl_scope s = gpufl_scope_begin(i % 2 ? "odd \"step\"" : "even");
        sleep_ms(2);
        gpufl_scope_end(s);
    }
    gpufl_system_start("checkpoint");
    gpufl_system_stop("checkpoint");
    gpufl_shutdown();
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    assert_true(has(dir, "trace.gflt") && has(dir, "device.log") && has(dir, "session.json"));

    /* NDJSON: every event line is exact */
    gpufl__strtab t;
    assert_int_equal(gpufl__strtab_init(&t), 0);
    gfl_event *nd[GFL_CHANNEL_COUNT] = {0};
    size_t nn[GFL_CHANNEL_COUNT] = {0}, caps[GFL_CHANNEL_COUNT] = {0};
    for (uint8_t ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.log", dir, gpufl__channel_name(ch));
        check_log_exact(path, &t, &nd[ch], &nn[ch], &caps[ch]);
    }
    assert_true(nn[GFL_CHANNEL_DEVICE] >= 3000 + 300 + 30 * 4);
    assert_true(nn[GFL_CHANNEL_SCOPE] == 100);

    /* .gflt: the same events, channel by channel, as their lines give them */
    char gflt[4200], err[1024];
    snprintf(gflt, sizeof gflt, "%s/trace.gflt", dir);
    gpufl__event_source *src;
    assert_int_equal(gpufl__source_open(gflt, &src, err, sizeof err), 0);
    gpufl__string_lookup names = gpufl__strtab_lookup(&t);
    gpufl__strtab canon;
    assert_int_equal(gpufl__strtab_init(&canon), 0);
    gpufl__string_lookup canon_names = gpufl__strtab_lookup(&canon);
    size_t at[GFL_CHANNEL_COUNT] = {0};
    const gfl_event *ev;
    int rc;
    while ((rc = gpufl__source_next(src, &ev)) == 1) {
        unsigned ch = gpufl__event_route(ev);
        assert_true(at[ch] < nn[ch]);
        gfl_event as_line;
        tu_ndjson_roundtrip(ev, &src->strings, &canon, &as_line);
        const char *diff = tu_event_diff(&nd[ch][at[ch]], &names, &as_line, &canon_names);
        if (diff)
            fail_msg("%s event %zu: %s", gpufl__channel_name((uint8_t)ch), at[ch], diff);
        at[ch]++;
    }
    assert_int_equal(rc, 0);
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        assert_int_equal(at[ch], nn[ch]);
    assert_true(src->meta.ended);
    assert_string_equal(src->meta.app_name, "both");
    gpufl__source_close(src);

    /* both count what session.json counts; the NDJSON reader agrees */
    json_t *session = tu_session_json(dir);
    assert_string_equal(tu_str(json_object_get(session, "options"), "log_format"), "both");
    json_t *events = json_object_get(json_object_get(session, "summary"), "events");
    gpufl_trace *a, *b;
    assert_int_equal(gpufl_trace_open(gflt, &a, err, sizeof err), 0);
    char logs[4200];
    snprintf(logs, sizeof logs, "%s/scope.log", dir);
    assert_int_equal(gpufl_trace_open(dir, &b, err, sizeof err), 0);
    assert_int_equal(gpufl_trace_get_info(b)->source_format, GPUFL_TRACE_GFLT); /* the directory prefers it */
    const char *key;
    json_t *v;
    json_object_foreach(events, key, v)
    {
        unsigned type = 0;
        for (unsigned ty = 1; ty < GFL_EV_TYPE_COUNT; ty++)
            if (!strcmp(key, gpufl__event_type_name((uint8_t)ty)))
                type = ty;
        assert_true(type != 0);
        assert_int_equal(gpufl_trace_event_count(a, type), json_integer_value(v));
    }
    json_t *logs_json = json_object_get(json_object_get(session, "summary"), "logs");
    uint64_t total = file_size(dir, "trace.gflt") + file_size(dir, "device.log") + file_size(dir, "scope.log") +
                     file_size(dir, "system.log");
    /* every byte but the closing lines and chunks, written after the summary */
    assert_true((uint64_t)tu_int(logs_json, "bytes_written") <= total);
    assert_true(total - (uint64_t)tu_int(logs_json, "bytes_written") < 2048);
    json_decref(session);
    gpufl_trace_close(a);
    gpufl_trace_close(b);
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        free(nd[ch]);
    gpufl__strtab_free(&t);
    gpufl__strtab_free(&canon);
    free(dir);
}

/* ---- .gflt alone ------------------------------------------------------------ */

static void test_gflt_only(void **state)
{
    (void)state;
    char *log_path = new_log_path("logfmt-gflt");
    tu_setenv("GPUFL_LOG_FORMAT", "gflt");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "gflt_only";
    o.log_path = log_path;
    o.ring_events = RING_EVENTS;
    o.system_sample_rate_ms = 5;
    assert_true(gpufl_init(&o));
    for (int i = 0; i < 200; i++) {
        gpufl_scope outer = gpufl_scope_begin("outer");
        gpufl_scope_begin("left open"); /* closed implicitly by its parent */
        if (i % 50 == 0)
            sleep_ms(10);
        gpufl_scope_end(outer);
    }
    gpufl_shutdown();
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    assert_true(has(dir, "trace.gflt") && has(dir, "session.json"));
    assert_false(has(dir, "device.log") || has(dir, "scope.log") || has(dir, "system.log"));
    gpufl_trace *t;
    char err[1024];
    assert_int_equal(gpufl_trace_open(dir, &t, err, sizeof err), 0);
    const gpufl_trace_info *i = gpufl_trace_get_info(t);
    assert_string_equal(gpufl_trace_string(t, i->app_name), "gflt_only");
    assert_true(i->end_ns > i->start_ns);
    const gpufl_trace_scopes *s = gpufl_trace_get_scopes(t);
    assert_int_equal(s->n, 400);
    size_t implicit = 0;
    for (size_t r = 0; r < s->n; r++) {
        assert_true(s->end_ns[r] >= s->begin_ns[r]);
        implicit += s->implicit[r];
    }
    assert_int_equal(implicit, 200);
    assert_true(gpufl_trace_get_host_samples(t)->n > 0);
    json_t *session = tu_session_json(dir);
    assert_string_equal(tu_str(json_object_get(session, "options"), "log_format"), "gflt");
    json_t *events = json_object_get(json_object_get(session, "summary"), "events");
    assert_int_equal(tu_int(events, "scope_begin"), gpufl_trace_event_count(t, GFL_EV_SCOPE_BEGIN));
    assert_int_equal(tu_int(events, "host_metrics"), gpufl_trace_event_count(t, GFL_EV_HOST_METRICS));
    uint64_t written = (uint64_t)tu_int(json_object_get(json_object_get(session, "summary"), "logs"), "bytes_written");
    assert_true(written <= file_size(dir, "trace.gflt") && file_size(dir, "trace.gflt") - written < 512);
    json_decref(session);
    gpufl_trace_close(t);
    free(dir);
}

/* ---- compact, the default, and none ------------------------------------------ */

/* The default: every event in trace.gflt, scope.log and system.log as
 * NDJSON beside it (exact lines, all of those channels' events), no
 * device.log; the directory reads as trace.gflt, and session.json counts
 * what it holds. */
static void test_compact_default(void **state)
{
    (void)state;
    char *log_path = new_log_path("logfmt-compact");
    tu_setenv("GPUFL_SYNTHETIC", SCRIPT);
    gpufl_options o;
    gpufl_options_init(&o);
    assert_int_equal(o.log_format, GPUFL_LOG_COMPACT);
    o.app_name = "compact";
    o.log_path = log_path;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    o.ring_events = RING_EVENTS;
    o.system_sample_rate_ms = 5;
    o.continuous_system_sampling = true;
    assert_true(gpufl_init(&o));
    for (int i = 0; i < 50; i++) {
        gpufl_scope sc = gpufl_scope_begin("step");
        sleep_ms(2);
        gpufl_scope_end(sc);
    }
    gpufl_shutdown();
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    assert_true(has(dir, "trace.gflt") && has(dir, "scope.log") && has(dir, "system.log") && has(dir, "session.json"));
    assert_false(has(dir, "device.log"));

    gpufl__strtab t;
    assert_int_equal(gpufl__strtab_init(&t), 0);
    gfl_event *nd[GFL_CHANNEL_COUNT] = {0};
    size_t nn[GFL_CHANNEL_COUNT] = {0}, caps[GFL_CHANNEL_COUNT] = {0};
    for (uint8_t ch = GFL_CHANNEL_SCOPE; ch < GFL_CHANNEL_COUNT; ch++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.log", dir, gpufl__channel_name(ch));
        check_log_exact(path, &t, &nd[ch], &nn[ch], &caps[ch]);
    }
    assert_int_equal(nn[GFL_CHANNEL_SCOPE], 100);
    assert_true(nn[GFL_CHANNEL_SYSTEM] > 0);

    gpufl_trace *tr;
    char err[1024];
    assert_int_equal(gpufl_trace_open(dir, &tr, err, sizeof err), 0);
    const gpufl_trace_info *info = gpufl_trace_get_info(tr);
    assert_int_equal(info->source_format, GPUFL_TRACE_GFLT); /* it alone holds the device work */
    assert_int_equal(gpufl_trace_get_kernels(tr)->n, 3000);
    /* the logs' channels hold what trace.gflt holds of them */
    assert_int_equal(gpufl_trace_event_count(tr, GFL_EV_SCOPE_BEGIN) + gpufl_trace_event_count(tr, GFL_EV_SCOPE_END),
                     nn[GFL_CHANNEL_SCOPE]);
    json_t *session = tu_session_json(dir);
    assert_string_equal(tu_str(json_object_get(session, "options"), "log_format"), "compact");
    json_t *summary = json_object_get(session, "summary");
    assert_int_equal(tu_int(json_object_get(summary, "events"), "kernel"), 3000);
    /* no device.log is no loss */
    assert_int_equal(tu_int(json_object_get(summary, "dropped"), "disk_limit"), 0);
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        assert_int_equal(info->lost[ch], 0);
    uint64_t total = file_size(dir, "trace.gflt") + file_size(dir, "scope.log") + file_size(dir, "system.log");
    uint64_t written = (uint64_t)tu_int(json_object_get(summary, "logs"), "bytes_written");
    assert_true(written <= total && total - written < 2048);
    json_decref(session);
    gpufl_trace_close(tr);
    for (int ch = 0; ch < GFL_CHANNEL_COUNT; ch++)
        free(nd[ch]);
    gpufl__strtab_free(&t);
    free(dir);
}

/* none: session.json alone (no log, no reserve file left), and its
 * summary still counts what was recorded. */
static void test_none(void **state)
{
    (void)state;
    char *log_path = new_log_path("logfmt-none");
    tu_setenv("GPUFL_LOG_FORMAT", "none");
    tu_setenv("GPUFL_SYNTHETIC", SCRIPT);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "none";
    o.log_path = log_path;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    o.ring_events = RING_EVENTS;
    assert_true(gpufl_init(&o));
    for (int i = 0; i < 10; i++)
        gpufl_scope_end(gpufl_scope_begin("step"));
    gpufl_shutdown();
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    assert_true(has(dir, "session.json"));
    assert_false(has(dir, "trace.gflt") || has(dir, "device.log") || has(dir, "scope.log") || has(dir, "system.log") ||
                 has(dir, ".gpufl-reserve"));
    json_t *session = tu_session_json(dir);
    assert_string_equal(tu_str(session, "status"), "ended");
    assert_string_equal(tu_str(json_object_get(session, "options"), "log_format"), "none");
    json_t *summary = json_object_get(session, "summary");
    assert_int_equal(tu_int(json_object_get(summary, "events"), "kernel"), 3000);
    assert_int_equal(tu_int(json_object_get(summary, "events"), "scope_begin"), 10);
    assert_int_equal(tu_int(json_object_get(summary, "logs"), "bytes_written"), 0);
    assert_int_equal(tu_int(json_object_get(summary, "dropped"), "disk_limit"), 0);
    json_decref(session);
    free(dir);
}

/* ---- storage limits --------------------------------------------------------- */

/* Scope pairs with random names never seen before, so that even .gflt
 * (which sends each name once, compressed) fills up: 16 random bytes a
 * name. */
static uint64_t produce_unique(unsigned pairs, uint64_t *rng)
{
    for (unsigned i = 0; i < pairs; i++) {
        char name[40];
        snprintf(name, sizeof name, "%016llx%016llx", (unsigned long long)tu_rand(rng),
                 (unsigned long long)tu_rand(rng));
        gpufl_scope_end(gpufl_scope_begin(name));
    }
    return 2ull * pairs;
}

/* The trace of dir (its trace.gflt) says writing stopped for `reason`, and
 * so does session.json; every scope event produced is in the file or
 * counted lost. */
static void check_stopped(const char *dir, const char *reason, uint64_t produced)
{
    gpufl_trace *t;
    char err[1024], gflt[4200];
    snprintf(gflt, sizeof gflt, "%s/trace.gflt", dir);
    assert_int_equal(gpufl_trace_open(gflt, &t, err, sizeof err), 0);
    const gpufl_trace_info *i = gpufl_trace_get_info(t);
    assert_string_equal(gpufl_trace_string(t, i->stop_reason), reason);
    assert_true(gpufl_trace_string(t, i->stop_detail)[0] != '\0');
    assert_true(i->end_ns != 0); /* the end chunk made it, from the reserve */
    uint64_t read = gpufl_trace_event_count(t, GFL_EV_SCOPE_BEGIN) + gpufl_trace_event_count(t, GFL_EV_SCOPE_END);
    /* every scope event is either in the file or counted lost */
    assert_int_equal(read + i->lost[GFL_CHANNEL_SCOPE], produced);
    assert_true(i->lost[GFL_CHANNEL_SCOPE] > 0);
    json_t *session = tu_session_json(dir);
    json_t *summary = json_object_get(session, "summary");
    assert_string_equal(tu_str(json_object_get(json_object_get(summary, "logs"), "stopped"), "reason"), reason);
    assert_int_equal(i->dropped[GFL_DROP_DISK_LIMIT], i->lost[0] + i->lost[1] + i->lost[2]);
    /* session.json counts the losses of the copy that readers read (with
     * log_format both, the one that lost fewer) */
    gpufl_trace *whole;
    assert_int_equal(gpufl_trace_open(dir, &whole, err, sizeof err), 0);
    assert_int_equal(tu_int(json_object_get(summary, "dropped"), "disk_limit"),
                     gpufl_trace_get_info(whole)->dropped[GFL_DROP_DISK_LIMIT]);
    gpufl_trace_close(whole);
    json_decref(session);
    gpufl_trace_close(t);
}

/* A session under a 1 MiB cap that records `rounds` rounds of `pairs` new
 * scopes; returns its directory and the scope events produced. */
static char *capped_session(const char *app, gpufl_log_format format, int rounds, unsigned pairs, uint64_t *produced)
{
    char *log_path = new_log_path(app);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = app;
    o.log_path = log_path;
    o.log_format = format;
    o.session_max_bytes = 1ull << 20;
    o.min_free_bytes = 0;
    o.ring_events = RING_EVENTS;
    assert_true(gpufl_init(&o));
    uint64_t seq = 12345;
    *produced = 0;
    for (int round = 0; round < rounds; round++) {
        *produced += produce_unique(pairs, &seq);
        sleep_ms(50);
    }
    gpufl_shutdown();
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    return dir;
}

static void test_gflt_disk_cap(void **state)
{
    (void)state;
    uint64_t produced;
    char *dir = capped_session("gflt_cap", GPUFL_LOG_GFLT, 12, 10000, &produced); /* ~160 KB a round */
    /* under the cap, and filled up to a chunk or two of it (a chunk that
     * does not fit is not written at all) */
    assert_true(file_size(dir, "trace.gflt") <= 1ull << 20);
    assert_true(file_size(dir, "trace.gflt") > 512u << 10);
    check_stopped(dir, "disk_cap", produced);
    free(dir);
}

/* compact under the cap: scope.log fills it, trace.gflt stops too, and the
 * losses session.json counts are trace.gflt's, the copy readers read */
static void test_compact_shares_the_cap(void **state)
{
    (void)state;
    uint64_t produced;
    char *dir = capped_session("compact_cap", GPUFL_LOG_COMPACT, 4, 5000, &produced);
    assert_false(has(dir, "device.log"));
    uint64_t total = file_size(dir, "trace.gflt") + file_size(dir, "scope.log") + file_size(dir, "system.log");
    assert_true(total <= 1ull << 20);
    check_stopped(dir, "disk_cap", produced);
    free(dir);
}

/* both formats under one cap: the NDJSON logs fill it, .gflt stops too */
static void test_both_share_the_cap(void **state)
{
    (void)state;
    uint64_t produced;
    char *dir = capped_session("both_cap", GPUFL_LOG_BOTH, 4, 5000, &produced);
    uint64_t total = file_size(dir, "trace.gflt") + file_size(dir, "device.log") + file_size(dir, "scope.log") +
                     file_size(dir, "system.log");
    assert_true(total <= 1ull << 20);
    check_stopped(dir, "disk_cap", produced);
    free(dir);
}

static int low_space_statvfs(const char *path, struct statvfs *st)
{
    int rc = gpufl__os_real.statvfs(path, st);
    st->f_bavail = 16;
    st->f_frsize = 4096;
    return rc;
}

static void test_gflt_free_space(void **state)
{
    (void)state;
    static gpufl__os_ops fake;
    fake = gpufl__os_real;
    fake.statvfs = low_space_statvfs;
    gpufl__os = &fake;
    char *log_path = new_log_path("logfmt-free");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "gflt_free";
    o.log_path = log_path;
    o.log_format = GPUFL_LOG_GFLT;
    o.min_free_bytes = 64ull << 20;
    o.ring_events = RING_EVENTS;
    assert_true(gpufl_init(&o));
    uint64_t seq = 12345;
    uint64_t produced = produce_unique(1000, &seq);
    sleep_ms(100);
    gpufl_shutdown();
    gpufl__os = &gpufl__os_real;
    char *dir = tu_session_dir(log_path);
    check_stopped(dir, "free_space", produced);
    gpufl_trace *t;
    char err[1024];
    assert_int_equal(gpufl_trace_open(dir, &t, err, sizeof err), 0);
    assert_int_equal(gpufl_trace_get_scopes(t)->n, 0); /* nothing made it */
    assert_non_null(strstr(gpufl_trace_string(t, gpufl_trace_get_info(t)->stop_detail), "free space"));
    gpufl_trace_close(t);
    free(dir);
}

/* ---- a crash ------------------------------------------------------------------ */

/* A child records .gflt as fast as it can and is killed mid-write; what it
 * left reads back without an error, in order, up to its last whole chunk. */
static void test_gflt_killed(void **state)
{
    (void)state;
    char *log_path = new_log_path("logfmt-kill");
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        gpufl_options o;
        gpufl_options_init(&o);
        o.app_name = "killed";
        o.log_path = log_path;
        o.log_format = GPUFL_LOG_GFLT;
        o.ring_events = RING_EVENTS;
        if (!gpufl_init(&o))
            _exit(2);
        for (uint64_t i = 0;; i++) {
            gpufl_scope_end(gpufl_scope_begin("busy"));
            if (i == 200000 && write(ready[1], "r", 1) != 1)
                _exit(3);
        }
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    sleep_ms(1500); /* a second's chunk is on disk, another being built */
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    close(ready[0]);
    close(ready[1]);
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    char gflt[4200], err[1024];
    snprintf(gflt, sizeof gflt, "%s/trace.gflt", dir);
    gpufl__event_source *s;
    assert_int_equal(gpufl__source_open(gflt, &s, err, sizeof err), 0);
    const gfl_event *ev;
    uint64_t n = 0, last_ts = 0, begins = 0;
    int rc;
    while ((rc = gpufl__source_next(s, &ev)) == 1) {
        if (ev->h.type == GFL_EV_SCOPE_BEGIN) {
            assert_true(ev->h.ts >= last_ts); /* one thread: in order */
            last_ts = ev->h.ts;
            begins++;
        }
        n++;
    }
    if (rc != 0)
        fail_msg("%s", s->err);
    assert_true(begins >= 100000);
    assert_false(s->meta.ended);
    gpufl__source_close(s);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_option, cleanup),
        cmocka_unit_test_teardown(test_both_with_plugin, cleanup),
        cmocka_unit_test_teardown(test_gflt_only, cleanup),
        cmocka_unit_test_teardown(test_compact_default, cleanup),
        cmocka_unit_test_teardown(test_none, cleanup),
        cmocka_unit_test_teardown(test_gflt_disk_cap, cleanup),
        cmocka_unit_test_teardown(test_both_share_the_cap, cleanup),
        cmocka_unit_test_teardown(test_compact_shares_the_cap, cleanup),
        cmocka_unit_test_teardown(test_gflt_free_space, cleanup),
        cmocka_unit_test_teardown(test_gflt_killed, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
