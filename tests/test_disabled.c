/*
 * Disabled mode starts nothing. With GPUFL_DISABLED set (1/true/yes/on, any
 * case), with enabled=false in code, or with "enabled": false in a config
 * file, gpufl_init() must return true without creating a thread, a
 * directory, a ring or a mapping of the device plugin, and every later call
 * must be a cheap no-op. This is what lets a program ship with gpufl compiled
 * in and turned off. Controls show that the same options, not disabled, do
 * start those things, and that GPUFL_DISABLED=0/false/"" does not disable.
 *
 * Order matters: a real session leaves a "last session" behind (for
 * gpufl_generate_report) and the plugin mapped (it is never unloaded), so the
 * cases that record run after every disabled case.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpufl/gpufl.h"
#include "ring/producer.h"
#include "test_util.h"

#define PLUGIN_NEEDLE "libgpufl_synthetic"

typedef struct fixture {
    char *tmp;
    char logs[512]; /* <tmp>/logs: must never be created while disabled */
} fixture;

static void unset_env(void)
{
    tu_unsetenv("GPUFL_DISABLED");
    tu_unsetenv("GPUFL_CONFIG_FILE");
    tu_unsetenv("GPUFL_SYNTHETIC");
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->tmp = tu_mkdtemp("disabled");
    snprintf(f->logs, sizeof f->logs, "%s/logs", f->tmp);
    unset_env();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gpufl_shutdown();
    unset_env();
    tu_rm_rf(f->tmp);
    free(f->tmp);
    free(f);
    return 0;
}

/* Options that, if honoured, would start every part there is: the
 * collector, the sampler, the device plugin and its threads. */
static void busy_options(gpufl_options *o, const fixture *f)
{
    gpufl_options_init(o);
    o->log_path = f->logs;
    o->profiling_engine = GPUFL_ENGINE_TRACE;
    o->device_plugin = GFL_SYNTHETIC_PLUGIN;
    o->system_sample_rate_ms = 10;
    o->continuous_system_sampling = true;
}

static void count_call(void *arg) { (*(int *)arg)++; }

/* What the process looks like before a disabled init. */
typedef struct snapshot {
    int threads;
    uint32_t producers;
} snapshot;

static snapshot take_snapshot(const fixture *f)
{
    assert_false(tu_mapped(PLUGIN_NEEDLE)); /* a case that records ran too early */
    assert_false(tu_exists(f->logs));
    return (snapshot){tu_thread_count(), gpufl__producer_count()};
}

static void assert_nothing_started(const fixture *f, snapshot before)
{
    assert_false(gpufl_is_recording());
    assert_int_equal(tu_thread_count(), before.threads);
    assert_int_equal(gpufl__producer_count(), before.producers);
    assert_false(tu_exists(f->logs));
    assert_false(tu_mapped(PLUGIN_NEEDLE));
    assert_string_equal(gpufl_session_dir(), "");
}

/* Every public call, after a disabled init: each is an inert no-op. */
static void exercise_inert_api(const fixture *f, snapshot before)
{
    gpufl_scope s = gpufl_scope_begin("inert");
    assert_int_equal(s, 0);
    gpufl_scope_end(s);
    gpufl_scope_end(0);
    gpufl_scope_end(0x10000000001ull); /* looks like a real token */
    assert_int_equal(gpufl_scope_begin(NULL), 0);

    int body = 0;
    GFL_SCOPE("inert-block") { body++; }
    assert_int_equal(body, 1);
    {
        GFL_SCOPED("inert-scoped");
        body++;
    }
    assert_int_equal(body, 2);

    int n = 0;
    gpufl_monitor("inert-monitor", count_call, &n);
    gpufl_monitor(NULL, count_call, &n);
    assert_int_equal(n, 2);
    gpufl_monitor("inert-null", NULL, NULL);

    gpufl_system_start("inert-window");
    gpufl_system_stop("inert-window");
    gpufl_system_start(NULL);
    gpufl_system_stop(NULL);
    gpufl_system_stop("never-started");

    char report[600];
    snprintf(report, sizeof report, "%s/report.txt", f->tmp);
    assert_int_equal(gpufl_generate_report(report), GPUFL_ESTATE);
    assert_false(tu_exists(report));
    assert_int_equal(gpufl_generate_report(NULL), GPUFL_ESTATE);

    /* A second init while disabled is just as inert. */
    gpufl_options o;
    busy_options(&o, f);
    o.enabled = false;
    assert_true(gpufl_init(&o));

    gpufl_shutdown();
    gpufl_shutdown();
    assert_nothing_started(f, before);
}

static void disabled_by_variable(void **state, const char *value)
{
    fixture *f = *state;
    snapshot before = take_snapshot(f);
    tu_setenv("GPUFL_DISABLED", value);
    gpufl_options o;
    busy_options(&o, f);
    assert_true(gpufl_init(&o));
    assert_string_equal(gpufl_last_error(), "");
    assert_nothing_started(f, before);
    exercise_inert_api(f, before);
    tu_unsetenv("GPUFL_DISABLED");
}

static void test_env_1(void **state) { disabled_by_variable(state, "1"); }
static void test_env_TRUE(void **state) { disabled_by_variable(state, "TRUE"); }
static void test_env_on(void **state) { disabled_by_variable(state, "on"); }
static void test_env_Yes(void **state) { disabled_by_variable(state, "Yes"); }

/* GPUFL_DISABLED wins even over options that would otherwise be an error:
 * nothing is read or checked at all. */
static void test_env_beats_broken_options(void **state)
{
    fixture *f = *state;
    snapshot before = take_snapshot(f);
    tu_setenv("GPUFL_DISABLED", "1");
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing.json", f->tmp);
    gpufl_options o;
    busy_options(&o, f);
    o.config_file = missing;
    o.ring_events = 1; /* out of range */
    assert_true(gpufl_init(&o));
    assert_string_equal(gpufl_last_error(), "");
    assert_nothing_started(f, before);
    tu_unsetenv("GPUFL_DISABLED");
}

/* With no options at all the log directory would be ./gpufl: run in the
 * temporary directory and check it is not created there. */
static void test_env_with_null_options(void **state)
{
    fixture *f = *state;
    snapshot before = take_snapshot(f);
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(f->tmp), 0);
    tu_setenv("GPUFL_DISABLED", "yes");
    bool ok = gpufl_init(NULL);
    bool made = tu_exists("gpufl");
    tu_unsetenv("GPUFL_DISABLED");
    assert_int_equal(chdir(cwd), 0);
    assert_true(ok);
    assert_false(made);
    assert_nothing_started(f, before);
}

static void test_enabled_false_in_code(void **state)
{
    fixture *f = *state;
    snapshot before = take_snapshot(f);
    gpufl_options o;
    busy_options(&o, f);
    o.enabled = false;
    assert_true(gpufl_init(&o));
    assert_string_equal(gpufl_last_error(), "");
    assert_nothing_started(f, before);
    exercise_inert_api(f, before);
}

static void test_enabled_false_in_config_file(void **state)
{
    fixture *f = *state;
    snapshot before = take_snapshot(f);
    char path[600];
    snprintf(path, sizeof path, "%s/off.json", f->tmp);
    tu_write_file(path, "{\"enabled\": false, \"app_name\": \"off\"}");
    gpufl_options o;
    busy_options(&o, f);
    o.config_file = path;
    assert_true(gpufl_init(&o));
    assert_string_equal(gpufl_last_error(), "");
    assert_nothing_started(f, before);
    exercise_inert_api(f, before);

    /* The same file named by GPUFL_CONFIG_FILE. */
    busy_options(&o, f);
    tu_setenv("GPUFL_CONFIG_FILE", path);
    assert_true(gpufl_init(&o));
    assert_nothing_started(f, before);
    tu_unsetenv("GPUFL_CONFIG_FILE");
}

/* ---- cases that record: after every disabled one --------------------------- */

static void not_disabled_by(void **state, const char *value)
{
    fixture *f = *state;
    tu_setenv("GPUFL_DISABLED", value);
    gpufl_options o;
    gpufl_options_init(&o); /* monitor: the plugin stays unmapped for the last case */
    o.log_path = f->logs;
    assert_true(gpufl_init(&o));
    tu_unsetenv("GPUFL_DISABLED");
    assert_true(gpufl_is_recording());
    gpufl_scope s = gpufl_scope_begin("recorded");
    assert_true(s != 0);
    gpufl_scope_end(s);
    gpufl_shutdown();
    assert_false(gpufl_is_recording());
    char *dir = tu_session_dir(f->logs);
    assert_non_null(dir);
    assert_string_equal(gpufl_session_dir(), dir);
    tu_ndjson scopes;
    assert_int_equal(tu_ndjson_load_channel(dir, "scope", &scopes), 0);
    assert_int_equal(tu_count_type(&scopes, "scope_begin"), 1);
    assert_int_equal(tu_count_type(&scopes, "scope_end"), 1);
    tu_ndjson_free(&scopes);
    free(dir);
}

static void test_env_0_records(void **state) { not_disabled_by(state, "0"); }
static void test_env_false_records(void **state) { not_disabled_by(state, "false"); }
static void test_env_empty_records(void **state) { not_disabled_by(state, ""); }

/* Control for the whole file: the busy options, not disabled, do start the
 * collector, the sampler and the plugin, which maps the library. */
static void test_control_busy_options_start_everything(void **state)
{
    fixture *f = *state;
    assert_false(tu_mapped(PLUGIN_NEEDLE));
    int threads = tu_thread_count();
    tu_setenv("GPUFL_SYNTHETIC", "kernels=10,copies=0,memsets=0,syncs=0,allocs=0,metrics=0,threads=1");
    gpufl_options o;
    busy_options(&o, f);
    assert_true(gpufl_init(&o));
    assert_true(gpufl_is_recording());
    assert_true(tu_mapped(PLUGIN_NEEDLE));
    assert_true(tu_thread_count() > threads);
    assert_true(tu_exists(f->logs));
    assert_true(gpufl_scope_begin("x") != 0);
    gpufl_shutdown();
    tu_unsetenv("GPUFL_SYNTHETIC");
    assert_int_equal(tu_thread_count(), threads);
    char *dir = tu_session_dir(f->logs);
    assert_non_null(dir);
    free(dir);
    assert_int_equal(gpufl_generate_report(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_env_1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_TRUE, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_on, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_Yes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_beats_broken_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_with_null_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enabled_false_in_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enabled_false_in_config_file, setup, teardown),
        /* from here on, sessions record */
        cmocka_unit_test_setup_teardown(test_env_0_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_false_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_empty_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_busy_options_start_everything, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
