/*
 * Which profiling engine recorded a session (src/session/plugin.c decides,
 * src/session/session.c records): the engine asked for, the one that ran, the
 * device plugin and why they differ, in session.json, as an `engine` event
 * in the logs and trace.gflt, and in what `gpufl report` (text, JSON),
 * `gpufl info` and `gpufl summary` print.
 *
 * Why: with profiling_engine=pc_sampling, session.json said pc_sampling
 * while the trace engine ran, and a session whose device plugin could not
 * start said trace while it held no device activity at all. A reader of
 * the trace alone (a .gflt file copied elsewhere, a crashed session with no
 * final session.json) must learn it from the events.
 *
 * The synthetic plugin (GPUFL_SYNTHETIC) stands for CUPTI; with fail=1 it
 * is a plugin that loads but cannot start.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "session_file.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(dir, "engine-choice")

#define SCRIPT "kernels=40,copies=4,memsets=2,syncs=2,allocs=2,metrics=2,devices=1,streams=2,threads=1,pace=1"

/* Records a session with the given engine, device plugin and synthetic
 * script, in both formats; returns its directory (malloc'd). */
static char *record(const char *name, gpufl_engine engine, const char *plugin, const char *script)
{
    char log_path[4200];
    snprintf(log_path, sizeof log_path, "%s/%s", dir, name);
    tu_setenv("GPUFL_SYNTHETIC", script);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = name;
    o.log_path = log_path;
    o.profiling_engine = engine;
    o.device_plugin = plugin;
    o.log_format = GPUFL_LOG_BOTH;
    o.system_sample_rate_ms = 0;
    assert_true(gpufl_init(&o));
    gpufl_scope s = gpufl_scope_begin("step");
    gpufl_scope_end(s);
    gpufl_shutdown();
    tu_unsetenv("GPUFL_SYNTHETIC");
    char *d = tu_session_dir(log_path);
    assert_non_null(d);
    return d;
}

typedef struct expect {
    const char *requested, *ran, *plugin; /* plugin NULL: none ran */
    const char *why;                      /* a part of the reason; NULL: there is none */
} expect;

static void check_json_engine(json_t *e, const expect *x, const char *what)
{
    if (!json_is_object(e))
        fail_msg("%s: no engine object", what);
    assert_string_equal(tu_str(e, "requested"), x->requested);
    assert_string_equal(tu_str(e, "ran"), x->ran);
    if (x->plugin)
        assert_string_equal(tu_str(e, "plugin"), x->plugin);
    else
        assert_true(json_is_null(json_object_get(e, "plugin")));
    if (x->why) {
        if (!strstr(tu_str(e, "reason"), x->why))
            fail_msg("%s: the reason \"%s\" does not say \"%s\"", what, tu_str(e, "reason"), x->why);
    } else {
        assert_true(json_is_null(json_object_get(e, "reason")));
    }
}

/* The engine event of device.log: the same facts, as written. */
static void check_log_line(const char *d, const expect *x)
{
    tu_ndjson f;
    assert_int_equal(tu_ndjson_load_channel(d, "device", &f), 0);
    assert_int_equal(tu_count_type(&f, "engine"), 1);
    json_t *l = tu_nth_type(&f, "engine", 0);
    assert_string_equal(tu_str(l, "requested"), x->requested);
    assert_string_equal(tu_str(l, "engine"), x->ran);
    if (x->plugin)
        assert_string_equal(tu_str(l, "plugin"), x->plugin);
    else
        assert_null(json_object_get(l, "plugin"));
    if (x->why)
        assert_non_null(strstr(tu_str(l, "reason"), x->why));
    else
        assert_null(json_object_get(l, "reason"));
    /* device activity only when an engine above monitor ran */
    assert_int_equal(tu_count_type(&f, "kernel") > 0, strcmp(x->ran, "monitor") != 0);
    tu_ndjson_free(&f);
}

/* What a reader of one file alone finds: trace.gflt copied out of its
 * session (no session.json beside it), and the NDJSON logs. */
static void check_readers(const char *d, const expect *x)
{
    char src[4300], lone[4300];
    snprintf(src, sizeof src, "%s/trace.gflt", d);
    snprintf(lone, sizeof lone, "%s/lone-%s.gflt", dir, x->ran);
    size_t len;
    char *bytes = tu_read_file(src, &len);
    assert_non_null(bytes);
    FILE *f = fopen(lone, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, len, f), len);
    fclose(f);
    free(bytes);
    char log[4300];
    snprintf(log, sizeof log, "%s/device.log", d);
    const char *paths[] = {lone, log};
    for (size_t p = 0; p < 2; p++) {
        gpufl_trace *t = tu_trace_open(paths[p]);
        const gpufl_trace_info *i = gpufl_trace_get_info(t);
        assert_string_equal(gpufl_trace_string(t, i->engine_requested), x->requested);
        assert_string_equal(gpufl_trace_string(t, i->engine), x->ran);
        assert_string_equal(gpufl_trace_string(t, i->engine_plugin), x->plugin ? x->plugin : "");
        if (x->why)
            assert_non_null(strstr(gpufl_trace_string(t, i->engine_reason), x->why));
        else
            assert_int_equal(i->engine_reason, 0);
        gpufl_trace_close(t);
    }
}

/* The commands say it: report (text and JSON), info (text and JSON), summary. */
static void check_commands(const char *d, const expect *x)
{
    char *out, *err;
    assert_int_equal(tu_run_subcommand(GFL_CLI, "report", (const char *[]){d, "--format", "json", NULL}, &out, &err),
                     0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    check_json_engine(json_object_get(json_object_get(j, "session"), "engine"), x, "report --format json");
    json_decref(j);
    free(out);
    free(err);

    char line[512];
    snprintf(line, sizeof line, "engine    %s%s%s%s", x->ran, x->plugin ? " (plugin " : "", x->plugin ? x->plugin : "",
             x->plugin ? ")" : "");
    assert_int_equal(tu_run_subcommand(GFL_CLI, "report", (const char *[]){d, NULL}, &out, &err), 0);
    if (!strstr(out, line) || (x->why && !strstr(out, x->why)))
        fail_msg("gpufl report does not say \"%s\" (and why): %.600s", line, out);
    free(out);
    free(err);

    snprintf(line, sizeof line, "engine     %s", x->ran);
    assert_int_equal(tu_run_subcommand(GFL_CLI, "info", (const char *[]){d, NULL}, &out, &err), 0);
    if (!strstr(out, line) || (x->why && !strstr(out, x->why)))
        fail_msg("gpufl info does not say \"%s\" (and why): %s", line, out);
    free(out);
    free(err);

    assert_int_equal(tu_run_subcommand(GFL_CLI, "summary", (const char *[]){d, NULL}, &out, &err), 0);
    if (!strstr(out, line) || (x->why && !strstr(out, x->why)))
        fail_msg("gpufl summary does not say \"%s\" (and why): %s", line, out);
    if (x->why && !strstr(out, x->requested))
        fail_msg("gpufl summary does not say that %s was asked for: %s", x->requested, out);
    free(out);
    free(err);
}

static void check_session(const char *d, const expect *x)
{
    json_t *s = tu_session_json(d);
    check_json_engine(json_object_get(s, "engine"), x, "session.json");
    /* the option itself still says what was asked for */
    assert_string_equal(tu_str(json_object_get(s, "options"), "profiling_engine"), x->requested);
    json_decref(s);
    check_log_line(d, x);
    check_readers(d, x);
    check_commands(d, x);
}

/* ---- tests ------------------------------------------------------------------------- */

static void pc_sampling_records_as_trace(void **state)
{
    (void)state;
    char *d = record("pcs", GPUFL_ENGINE_PC_SAMPLING, GFL_SYNTHETIC_PLUGIN, SCRIPT);
    expect x = {"pc_sampling", "trace", "synthetic", "the synthetic plugin records no PC samples"};
    check_session(d, &x);
    free(d);
}

static void trace_records_as_trace(void **state)
{
    (void)state;
    char *d = record("trace", GPUFL_ENGINE_TRACE, GFL_SYNTHETIC_PLUGIN, SCRIPT);
    expect x = {"trace", "trace", "synthetic", NULL};
    check_session(d, &x);
    free(d);
}

static void plugin_that_cannot_start_records_as_monitor(void **state)
{
    (void)state;
    char *d = record("nostart", GPUFL_ENGINE_TRACE, GFL_SYNTHETIC_PLUGIN, SCRIPT ",fail=1");
    expect x = {"trace", "monitor", NULL, "could not start (the script says fail=1"};
    check_session(d, &x);
    free(d);
}

static void missing_plugin_records_as_monitor(void **state)
{
    (void)state;
    char plugin[4200];
    snprintf(plugin, sizeof plugin, "%s/no-such-plugin.so", dir);
    char *d = record("noplugin", GPUFL_ENGINE_SASS_METRICS, plugin, SCRIPT);
    expect x = {"sass_metrics", "monitor", NULL, "could not be loaded"};
    check_session(d, &x);
    free(d);
}

static void monitor_records_as_monitor(void **state)
{
    (void)state;
    char *d = record("monitor", GPUFL_ENGINE_MONITOR, GFL_SYNTHETIC_PLUGIN, SCRIPT);
    expect x = {"monitor", "monitor", NULL, NULL};
    check_session(d, &x);
    free(d);
}

/* A session that died before its first checkpoint after the plugin started
 * has only the init's session.json ("ran": null): `gpufl summary` then
 * takes the engine from the recorded events. */
static void unended_session_says_it_from_events(void **state)
{
    (void)state;
    char *d = record("died", GPUFL_ENGINE_PC_SAMPLING, GFL_SYNTHETIC_PLUGIN, SCRIPT);
    json_t *s = tu_session_json(d);
    json_object_set_new(s, "status", json_string("running"));
    json_object_set_new(json_object_get(s, "engine"), "ran", json_null());
    json_object_set_new(json_object_get(s, "engine"), "plugin", json_null());
    json_object_set_new(json_object_get(s, "engine"), "reason", json_null());
    char path[4300];
    snprintf(path, sizeof path, "%s/session.json", d);
    assert_int_equal(json_dump_file(s, path, 0), 0);
    json_decref(s);
    char *out, *err;
    assert_int_equal(tu_run_subcommand(GFL_CLI, "summary", (const char *[]){d, NULL}, &out, &err), 0);
    if (!strstr(out, "engine     trace (plugin synthetic); asked for pc_sampling") ||
        !strstr(out, "the synthetic plugin records no PC samples"))
        fail_msg("gpufl summary of an unended session does not say which engine recorded: %s", out);
    free(out);
    free(err);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pc_sampling_records_as_trace),
        cmocka_unit_test(trace_records_as_trace),
        cmocka_unit_test(plugin_that_cannot_start_records_as_monitor),
        cmocka_unit_test(missing_plugin_records_as_monitor),
        cmocka_unit_test(monitor_records_as_monitor),
        cmocka_unit_test(unended_session_says_it_from_events),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
