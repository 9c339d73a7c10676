/*
 * Options by name (gpufl_options_size, gpufl_option_name, gpufl_options_set),
 * the API the Python package builds its keywords on. The names must be the
 * option table's, in order; every text must be accepted or refused exactly
 * as the environment and config files take it (checked against
 * gpufl__option_set_text, their parser, on many spellings of every kind);
 * a refusal names the option and leaves the struct unchanged; string values
 * are kept by pointer until gpufl_init copies them; and options set this way
 * on an opaque buffer of gpufl_options_size() bytes reach a real session.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"
#include "gpufl/gpufl.h"
#include "test_util.h"

static void unset_all_env(void)
{
    for (size_t i = 0; i < gpufl__options_count; i++)
        tu_unsetenv(gpufl__options[i].env);
    tu_unsetenv("GPUFL_DISABLED");
}

static int setup(void **state)
{
    unset_all_env();
    *state = tu_mkdtemp("options_by_name");
    return 0;
}

static int teardown(void **state)
{
    gpufl_shutdown();
    unset_all_env();
    tu_rm_rf(*state);
    free(*state);
    return 0;
}

static void test_names_are_the_table(void **state)
{
    (void)state;
    assert_int_equal(gpufl_options_size(), sizeof(gpufl_options));
    size_t n = 0;
    for (const char *name; (name = gpufl_option_name(n)) != NULL; n++)
        assert_string_equal(name, gpufl__options[n].name);
    assert_int_equal(n, gpufl__options_count);
    assert_null(gpufl_option_name(n + 1));
    assert_null(gpufl_option_name((size_t)-1));
}

/* Texts tried on every option: valid and invalid for each kind. */
static const char *const texts[] = {
    "1",
    "0",
    "true",
    "False",
    "YES",
    "no",
    "on",
    "OFF",
    "maybe",
    "",
    "-1",
    "15",
    "16",
    "250",
    "8192",
    "3600000",
    "3600001",
    "16777217",
    "12abc",
    "0x10",
    "64KiB",
    "64k",
    "1M",
    "4GiB",
    "2gb",
    "1T",
    "64KiBx",
    "99999999999999999999999",
    "auto",
    "NVIDIA",
    "amd",
    "none",
    "None_",
    "gpu",
    "monitor",
    "Trace",
    "PcSampling",
    "pc-sampling",
    "sass_metrics",
    "RangeProfiler",
    "deep",
    "deeper",
    "ndjson",
    "GFLT",
    "both",
    "neither",
};

/* Every option, every text: gpufl_options_set accepts exactly what the
 * environment's parser accepts, and stores the same value. */
static void test_parses_like_the_environment(void **state)
{
    (void)state;
    for (size_t i = 0; i < gpufl__options_count; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        if (d->kind == GFL_OPT_STRING)
            continue;
        for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
            gpufl__config c;
            assert_int_equal(gpufl__config_defaults(&c), 0);
            char why[256];
            int env_rc = gpufl__option_set_text(&c, d, texts[t], why, sizeof why);

            gpufl_options o, before;
            gpufl_options_init(&o);
            memcpy(&before, &o, sizeof o);
            int rc = gpufl_options_set(&o, d->name, texts[t]);
            if (env_rc == 0) {
                if (rc != 0)
                    fail_msg("%s = '%s': environment accepts it, gpufl_options_set says %s", d->name, texts[t],
                             gpufl_last_error());
                assert_memory_equal((char *)&o + d->offset, (char *)&c.o + d->offset, d->size);
            } else {
                if (rc != GPUFL_EINVAL)
                    fail_msg("%s = '%s': environment refuses it (%s), gpufl_options_set returned %d", d->name, texts[t],
                             why, rc);
                assert_non_null(strstr(gpufl_last_error(), d->name));
                assert_non_null(strstr(gpufl_last_error(), why));
                assert_memory_equal(&o, &before, sizeof o);
            }
            gpufl__config_free(&c);
        }
    }
}

static void test_strings_are_kept_by_pointer(void **state)
{
    (void)state;
    gpufl_options o;
    gpufl_options_init(&o);
    char name[] = "by-name";
    assert_int_equal(gpufl_options_set(&o, "app_name", name), 0);
    assert_ptr_equal(o.app_name, name);
    assert_int_equal(gpufl_options_set(&o, "api_key", ""), 0);
    assert_string_equal(o.api_key, "");
}

static void test_null_value_restores_the_default(void **state)
{
    (void)state;
    gpufl_options o, def;
    gpufl_options_init(&o);
    gpufl_options_init(&def);
    for (size_t i = 0; i < gpufl__options_count; i++)
        memset((char *)&o + gpufl__options[i].offset, 0x5a, gpufl__options[i].size);
    for (size_t i = 0; i < gpufl__options_count; i++)
        assert_int_equal(gpufl_options_set(&o, gpufl__options[i].name, NULL), 0);
    assert_memory_equal(&o, &def, sizeof o);
}

static void test_refusals(void **state)
{
    (void)state;
    gpufl_options o, before;
    gpufl_options_init(&o);
    memcpy(&before, &o, sizeof o);

    assert_int_equal(gpufl_options_set(&o, "sampling_rate", "10"), GPUFL_EINVAL);
    assert_non_null(strstr(gpufl_last_error(), "no option 'sampling_rate'"));
    assert_int_equal(gpufl_options_set(&o, "ring_events", "8"), GPUFL_EINVAL);
    assert_non_null(strstr(gpufl_last_error(), "ring_events"));
    assert_non_null(strstr(gpufl_last_error(), "outside 16..16777216"));
    assert_int_equal(gpufl_options_set(&o, "profiling_engine", "fast"), GPUFL_EINVAL);
    assert_non_null(strstr(gpufl_last_error(), "is not an engine"));
    assert_int_equal(gpufl_options_set(&o, NULL, "1"), GPUFL_EINVAL);
    assert_int_equal(gpufl_options_set(NULL, "app_name", "x"), GPUFL_EINVAL);
    assert_memory_equal(&o, &before, sizeof o);

    /* A success clears the message of an earlier failure on this thread. */
    assert_int_equal(gpufl_options_set(&o, "ring_events", "1024"), 0);
    assert_string_equal(gpufl_last_error(), "");

    /* Not set up with gpufl_options_init: struct_size covers nothing. */
    gpufl_options raw;
    memset(&raw, 0, sizeof raw);
    assert_int_equal(gpufl_options_set(&raw, "app_name", "x"), GPUFL_EINVAL);
    assert_non_null(strstr(gpufl_last_error(), "gpufl_options_init"));
    assert_null(raw.app_name);
    /* An older caller's struct ends before log_format: that option is refused,
     * earlier ones are set. */
    gpufl_options old;
    gpufl_options_init(&old);
    old.struct_size = offsetof(gpufl_options, log_format);
    assert_int_equal(gpufl_options_set(&old, "log_format", "both"), GPUFL_EINVAL);
    assert_int_equal(old.log_format, GPUFL_LOG_COMPACT);
    assert_int_equal(gpufl_options_set(&old, "device_plugin", "x.so"), 0);
}

/* The way the Python package uses it: an opaque buffer of the size the
 * library gives, options by name only, then a real session. */
static void test_opaque_buffer_records_a_session(void **state)
{
    char logs[4096];
    snprintf(logs, sizeof logs, "%s/logs", (const char *)*state);
    size_t n = gpufl_options_size();
    uint64_t *buf = calloc((n + 7) / 8, sizeof *buf);
    assert_non_null(buf);
    gpufl_options *o = (gpufl_options *)buf;
    gpufl_options_init(o);
    assert_int_equal(gpufl_options_set(o, "app_name", "opaque-app"), 0);
    assert_int_equal(gpufl_options_set(o, "log_path", logs), 0);
    assert_int_equal(gpufl_options_set(o, "backend", "None_"), 0);
    assert_int_equal(gpufl_options_set(o, "ring_events", "1024"), 0);
    assert_true(gpufl_init(o));
    assert_true(gpufl_is_recording());
    gpufl_scope_end(gpufl_scope_begin("by-name"));
    gpufl_shutdown();

    char *dir = tu_session_dir(logs);
    assert_non_null(dir);
    json_t *j = tu_session_json(dir);
    assert_string_equal(tu_str(j, "app_name"), "opaque-app");
    json_t *opts = json_object_get(j, "options");
    assert_non_null(opts);
    assert_string_equal(tu_str(opts, "backend"), "none");
    assert_int_equal(tu_int(opts, "ring_events"), 1024);
    json_decref(j);
    tu_ndjson scopes = {0};
    assert_int_equal(tu_ndjson_load_channel(dir, "scope", &scopes), 0);
    assert_int_equal(tu_count_type(&scopes, "scope_begin"), 1);
    tu_ndjson_free(&scopes);
    free(dir);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_names_are_the_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parses_like_the_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strings_are_kept_by_pointer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_value_restores_the_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_opaque_buffer_records_a_session, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
