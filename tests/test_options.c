/*
 * Options resolution: the documented precedence
 *     built-in defaults < config_file (JSON) < GPUFL_<FIELD> < fields set in code
 * with GPUFL_DISABLED / enabled=false over everything, every option kind,
 * every error path (each must name the file or variable and the key), old
 * callers with a smaller struct_size, and a check that the option table
 * covers every field of gpufl_options. Most cases call gpufl__config_resolve()
 * directly; a few go through gpufl_init() and read session.json back, which is
 * also where we check that the API key never reaches a file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/options.h"
#include "gpufl/gpufl.h"
#include "test_util.h"

typedef struct fixture {
    char *tmp;
} fixture;

/* Every variable the library reads, straight from the option table. */
static void unset_all_env(void)
{
    for (size_t i = 0; i < gpufl__options_count; i++)
        tu_unsetenv(gpufl__options[i].env);
    tu_unsetenv("GPUFL_DISABLED");
    tu_unsetenv("GPUFL_CONFIG_FILE");
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->tmp = tu_mkdtemp("options");
    unset_all_env();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gpufl_shutdown();
    unset_all_env();
    tu_rm_rf(f->tmp);
    free(f->tmp);
    free(f);
    return 0;
}

/* <tmp>/<name> in a static rotating buffer: valid for the next 15 calls. */
static const char *tmp_path(void **state, const char *name)
{
    static char bufs[16][512];
    static int next;
    char *b = bufs[next++ % 16];
    snprintf(b, sizeof bufs[0], "%s/%s", ((fixture *)*state)->tmp, name);
    return b;
}

static const char *write_config(void **state, const char *name, const char *text)
{
    const char *path = tmp_path(state, name);
    tu_write_file(path, text);
    return path;
}

static void *field_of(gpufl_options *o, const gpufl__option_desc *d) { return (char *)o + d->offset; }

static const gpufl__option_desc *desc(const char *name)
{
    const gpufl__option_desc *d = gpufl__option_find(name);
    assert_non_null(d);
    return d;
}

/* Resolves and fails the test with the message if that fails. */
static void resolve_ok(const gpufl_options *user, gpufl__config *out)
{
    char err[GFL_ERR_LEN];
    int rc = gpufl__config_resolve(user, out, err, sizeof err);
    if (rc != 0)
        fail_msg("gpufl__config_resolve failed (%d): %s", rc, err);
}

/* Resolution must fail with a negative code, leave *out empty, and give a
 * message containing every one of the NULL-terminated needles. */
static int resolve_fails(const gpufl_options *user, ...)
{
    gpufl__config out;
    memset(&out, 0xab, sizeof out);
    char err[GFL_ERR_LEN] = "";
    int rc = gpufl__config_resolve(user, &out, err, sizeof err);
    if (rc == 0) {
        gpufl__config_free(&out);
        fail_msg("resolution succeeded, expected an error");
    }
    assert_true(rc < 0);
    assert_null(out.o.app_name);
    assert_int_equal(out.o.struct_size, 0);
    va_list ap;
    va_start(ap, user);
    for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;)
        if (!strstr(err, needle))
            fail_msg("error message \"%s\" does not mention \"%s\"", err, needle);
    va_end(ap);
    return rc;
}

/* ---- a non-default value for every option, generated from the table ---- */

/* What sample values are set to; one per kind, different from every default. */
#define SAMPLE_BYTES_TEXT "3MiB"
#define SAMPLE_BYTES (3ull << 20)
#define SAMPLE_BACKEND_TEXT "Nvidia"
#define SAMPLE_ENGINE_TEXT "Sass-Metrics"
#define SAMPLE_LOG_FORMAT_TEXT "BOTH"

static bool skip_generic(const gpufl__option_desc *d)
{
    /* config_file makes resolution read a file; enabled's variable is the
     * inverse GPUFL_DISABLED. Both have their own tests. */
    return !strcmp(d->name, "config_file") || !strcmp(d->name, "enabled");
}

/* A valid value that is not the default: just above the minimum, except
 * where the valid values have a hole (pc_sampling_period: 0, or 5..31). */
static uint32_t sample_u32(const gpufl__option_desc *d)
{
    return d->offset == offsetof(gpufl_options, pc_sampling_period) ? 8 : (uint32_t)(d->min + 3);
}

static const char *sample_text(const gpufl__option_desc *d, const gpufl_options *def)
{
    static char bufs[64][96];
    char *b = bufs[d - gpufl__options];
    switch (d->kind) {
    case GFL_OPT_STRING:
        /* strings with a syntax of their own get a valid one */
        if (!strcmp(d->name, "dump_signal"))
            return "SIGUSR1";
        if (!strcmp(d->name, "dump_rules"))
            return "power_w=300";
        snprintf(b, sizeof bufs[0], "v-%s", d->name);
        return b;
    case GFL_OPT_BOOL: return *(const bool *)((const char *)def + d->offset) ? "false" : "true";
    case GFL_OPT_U32: snprintf(b, sizeof bufs[0], "%u", sample_u32(d)); return b;
    case GFL_OPT_BYTES: return SAMPLE_BYTES_TEXT;
    case GFL_OPT_BACKEND: return SAMPLE_BACKEND_TEXT;
    case GFL_OPT_ENGINE: return SAMPLE_ENGINE_TEXT;
    case GFL_OPT_LOG_FORMAT: return SAMPLE_LOG_FORMAT_TEXT;
    }
    return NULL;
}

static void set_sample_in_code(gpufl_options *o, const gpufl__option_desc *d, const gpufl_options *def)
{
    void *f = field_of(o, d);
    switch (d->kind) {
    case GFL_OPT_STRING: *(const char **)f = sample_text(d, def); break;
    case GFL_OPT_BOOL: *(bool *)f = !*(const bool *)((const char *)def + d->offset); break;
    case GFL_OPT_U32: *(uint32_t *)f = sample_u32(d); break;
    case GFL_OPT_BYTES: *(uint64_t *)f = SAMPLE_BYTES; break;
    case GFL_OPT_BACKEND: *(gpufl_backend *)f = GPUFL_BACKEND_NVIDIA; break;
    case GFL_OPT_ENGINE: *(gpufl_engine *)f = GPUFL_ENGINE_SASS_METRICS; break;
    case GFL_OPT_LOG_FORMAT: *(gpufl_log_format *)f = GPUFL_LOG_BOTH; break;
    }
}

static void assert_sample(const gpufl_options *o, const gpufl__option_desc *d, const gpufl_options *def)
{
    const void *f = (const char *)o + d->offset;
    switch (d->kind) {
    case GFL_OPT_STRING:
        if (strcmp(*(const char *const *)f, sample_text(d, def)) != 0)
            fail_msg("%s is \"%s\"", d->name, *(const char *const *)f);
        break;
    case GFL_OPT_BOOL:
        if (*(const bool *)f == *(const bool *)((const char *)def + d->offset))
            fail_msg("%s kept its default", d->name);
        break;
    case GFL_OPT_U32:
        if (*(const uint32_t *)f != sample_u32(d))
            fail_msg("%s is %u", d->name, *(const uint32_t *)f);
        break;
    case GFL_OPT_BYTES:
        if (*(const uint64_t *)f != SAMPLE_BYTES)
            fail_msg("%s is %llu", d->name, (unsigned long long)*(const uint64_t *)f);
        break;
    case GFL_OPT_BACKEND: assert_int_equal(*(const gpufl_backend *)f, GPUFL_BACKEND_NVIDIA); break;
    case GFL_OPT_ENGINE: assert_int_equal(*(const gpufl_engine *)f, GPUFL_ENGINE_SASS_METRICS); break;
    case GFL_OPT_LOG_FORMAT: assert_int_equal(*(const gpufl_log_format *)f, GPUFL_LOG_BOTH); break;
    }
}

static void assert_all_samples(const gpufl_options *o)
{
    gpufl_options def;
    gpufl_options_init(&def);
    for (size_t i = 0; i < gpufl__options_count; i++)
        if (!skip_generic(&gpufl__options[i]))
            assert_sample(o, &gpufl__options[i], &def);
}

/* ---- defaults ------------------------------------------------------------ */

static void test_defaults(void **state)
{
    (void)state;
    gpufl_options def;
    gpufl_options_init(&def);
    assert_int_equal(def.struct_size, sizeof def);
    assert_string_equal(def.app_name, "gpufl");
    assert_true(def.enabled);
    assert_true(def.enable_source_collection);
    assert_int_equal(def.log_rotate_bytes, 64ull << 20);
    assert_int_equal(def.session_max_bytes, 4ull << 30);
    assert_int_equal(def.min_free_bytes, 512ull << 20);
    assert_int_equal(def.ring_events, 8192);
    assert_int_equal(def.profiling_engine, GPUFL_ENGINE_MONITOR);

    gpufl__config c, c2;
    resolve_ok(NULL, &c);
    resolve_ok(&def, &c2);
    for (size_t i = 0; i < gpufl__options_count; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        const void *a = (const char *)&c.o + d->offset, *b = (const char *)&def + d->offset;
        const void *a2 = (const char *)&c2.o + d->offset;
        if (d->kind == GFL_OPT_STRING) {
            assert_string_equal(*(const char *const *)a, *(const char *const *)b);
            assert_string_equal(*(const char *const *)a2, *(const char *const *)b);
        } else {
            assert_memory_equal(a, b, d->size);
            assert_memory_equal(a2, b, d->size);
        }
    }
    assert_int_equal(c.o.struct_size, sizeof(gpufl_options));
    gpufl__config_free(&c);
    gpufl__config_free(&c2);
}

/* ---- every kind from every source ----------------------------------------- */

static void test_every_option_from_environment(void **state)
{
    (void)state;
    gpufl_options def;
    gpufl_options_init(&def);
    for (size_t i = 0; i < gpufl__options_count; i++)
        if (!skip_generic(&gpufl__options[i]))
            tu_setenv(gpufl__options[i].env, sample_text(&gpufl__options[i], &def));
    gpufl__config c;
    resolve_ok(NULL, &c);
    assert_all_samples(&c.o);
    gpufl__config_free(&c);
}

static void test_every_option_from_file(void **state)
{
    gpufl_options def;
    gpufl_options_init(&def);
    json_t *root = json_object();
    for (size_t i = 0; i < gpufl__options_count; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        if (skip_generic(d))
            continue;
        json_t *v = NULL;
        switch (d->kind) {
        case GFL_OPT_BOOL: v = json_boolean(!strcmp(sample_text(d, &def), "true")); break;
        case GFL_OPT_U32: v = json_integer((json_int_t)sample_u32(d)); break;
        default: v = json_string(sample_text(d, &def)); break; /* sizes as "3MiB" */
        }
        json_object_set_new(root, d->name, v);
    }
    const char *path = tmp_path(state, "all.json");
    assert_int_equal(json_dump_file(root, path, 0), 0);
    json_decref(root);

    gpufl_options o;
    gpufl_options_init(&o);
    o.config_file = path;
    gpufl__config c;
    resolve_ok(&o, &c);
    assert_all_samples(&c.o);
    assert_string_equal(c.o.config_file, path);
    gpufl__config_free(&c);
}

static void test_every_option_from_code(void **state)
{
    (void)state;
    gpufl_options def, o;
    gpufl_options_init(&def);
    gpufl_options_init(&o);
    for (size_t i = 0; i < gpufl__options_count; i++)
        if (!skip_generic(&gpufl__options[i]))
            set_sample_in_code(&o, &gpufl__options[i], &def);
    gpufl__config c;
    resolve_ok(&o, &c);
    assert_all_samples(&c.o);
    /* The resolved strings are copies the config owns. */
    assert_ptr_not_equal(c.o.app_name, o.app_name);
    gpufl__config_free(&c);
}

/* Sizes: integers in files, and the unit suffixes everywhere. */
static void test_byte_sizes(void **state)
{
    static const struct {
        const char *text;
        unsigned long long value;
    } good[] = {
        {"1048576", 1048576},
        {"64KiB", 64ull << 10},
        {"64K", 64ull << 10},
        {"64kb", 64ull << 10},
        {"64MiB", 64ull << 20},
        {"64M", 64ull << 20},
        {"64mib", 64ull << 20},
        {"2GiB", 2ull << 30},
        {"2GB", 2ull << 30},
        {"1TiB", 1ull << 40},
        {"0", 0},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        unsigned long long v = 1;
        if (gpufl__bytes_parse(good[i].text, &v) != 0 || v != good[i].value)
            fail_msg("\"%s\" parsed as %llu", good[i].text, v);
    }
    static const char *const bad[] = {
        "", "MiB", "-1", "64 MiB", "64XiB", "64MiBs", "64i", "1.5G", " 64M", "99999999999999999999", "17179869184T"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned long long v = 77;
        if (gpufl__bytes_parse(bad[i], &v) == 0)
            fail_msg("\"%s\" accepted as %llu", bad[i], v);
        assert_int_equal(v, 77);
    }

    /* Through a file: both integers and strings, in each BYTES field. */
    const char *path = write_config(state, "sizes.json",
                                    "{\"log_rotate_bytes\": \"64MiB\", \"session_max_bytes\": 2147483648,"
                                    " \"min_free_bytes\": \"1G\"}");
    gpufl_options o;
    gpufl_options_init(&o);
    o.config_file = path;
    tu_setenv("GPUFL_SESSION_MAX_BYTES", "5GiB");
    gpufl__config c;
    resolve_ok(&o, &c);
    assert_int_equal(c.o.log_rotate_bytes, 64ull << 20);
    assert_int_equal(c.o.session_max_bytes, 5ull << 30); /* env over file */
    assert_int_equal(c.o.min_free_bytes, 1ull << 30);
    gpufl__config_free(&c);
    tu_unsetenv("GPUFL_SESSION_MAX_BYTES");
}

static void test_backend_and_engine_names(void **state)
{
    static const struct {
        const char *text;
        gpufl_engine e;
    } engines[] = {
        {"PcSampling", GPUFL_ENGINE_PC_SAMPLING},
        {"pc_sampling", GPUFL_ENGINE_PC_SAMPLING},
        {"PC-SAMPLING", GPUFL_ENGINE_PC_SAMPLING},
        {"pcsampling", GPUFL_ENGINE_PC_SAMPLING},
        {"MONITOR", GPUFL_ENGINE_MONITOR},
        {"Trace", GPUFL_ENGINE_TRACE},
        {"SASS_METRICS", GPUFL_ENGINE_SASS_METRICS},
        {"SassMetrics", GPUFL_ENGINE_SASS_METRICS},
        {"RangeProfiler", GPUFL_ENGINE_RANGE_PROFILER},
        {"range-profiler", GPUFL_ENGINE_RANGE_PROFILER},
        {"deep", GPUFL_ENGINE_DEEP},
        {"DEEP", GPUFL_ENGINE_DEEP},
    };
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        gpufl__config c;
        /* from the environment */
        tu_setenv("GPUFL_PROFILING_ENGINE", engines[i].text);
        resolve_ok(NULL, &c);
        if (c.o.profiling_engine != engines[i].e)
            fail_msg("GPUFL_PROFILING_ENGINE=%s gave %d", engines[i].text, c.o.profiling_engine);
        gpufl__config_free(&c);
        tu_unsetenv("GPUFL_PROFILING_ENGINE");
        /* from a file */
        char text[128];
        snprintf(text, sizeof text, "{\"profiling_engine\": \"%s\"}", engines[i].text);
        gpufl_options o;
        gpufl_options_init(&o);
        o.config_file = write_config(state, "engine.json", text);
        resolve_ok(&o, &c);
        if (c.o.profiling_engine != engines[i].e)
            fail_msg("file profiling_engine=%s gave %d", engines[i].text, c.o.profiling_engine);
        gpufl__config_free(&c);
    }
    static const struct {
        const char *text;
        gpufl_backend b;
    } backends[] = {
        {"auto", GPUFL_BACKEND_AUTO},     {"AUTO", GPUFL_BACKEND_AUTO}, {"Nvidia", GPUFL_BACKEND_NVIDIA},
        {"NVIDIA", GPUFL_BACKEND_NVIDIA}, {"amd", GPUFL_BACKEND_AMD},   {"None", GPUFL_BACKEND_NONE},
    };
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        gpufl__config c;
        tu_setenv("GPUFL_BACKEND", backends[i].text);
        resolve_ok(NULL, &c);
        if (c.o.backend != backends[i].b)
            fail_msg("GPUFL_BACKEND=%s gave %d", backends[i].text, c.o.backend);
        gpufl__config_free(&c);
    }
    tu_setenv("GPUFL_BACKEND", "cuda");
    resolve_fails(NULL, "GPUFL_BACKEND", "cuda", NULL);
    tu_unsetenv("GPUFL_BACKEND");
    static const char *const bad_engines[] = {"pc sampling", "turbo", "tracer", ""};
    for (size_t i = 0; i < sizeof bad_engines / sizeof bad_engines[0]; i++) {
        tu_setenv("GPUFL_PROFILING_ENGINE", bad_engines[i]);
        resolve_fails(NULL, "GPUFL_PROFILING_ENGINE", NULL);
    }
    tu_unsetenv("GPUFL_PROFILING_ENGINE");
    /* The names written back (session.json, the CLI) are the canonical ones. */
    assert_string_equal(gpufl__engine_name(GPUFL_ENGINE_PC_SAMPLING), "pc_sampling");
    assert_string_equal(gpufl__backend_name(GPUFL_BACKEND_NONE), "none");
}

static void test_bool_spellings(void **state)
{
    (void)state;
    static const char *const yes[] = {"1", "true", "TRUE", "Yes", "on", "ON"};
    static const char *const no[] = {"0", "false", "False", "NO", "off"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        gpufl__config c;
        tu_setenv("GPUFL_ENABLE_STACK_TRACE", yes[i]);
        resolve_ok(NULL, &c);
        if (!c.o.enable_stack_trace)
            fail_msg("GPUFL_ENABLE_STACK_TRACE=%s read as false", yes[i]);
        gpufl__config_free(&c);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        gpufl__config c;
        tu_setenv("GPUFL_ENABLE_SOURCE_COLLECTION", no[i]);
        resolve_ok(NULL, &c);
        if (c.o.enable_source_collection)
            fail_msg("GPUFL_ENABLE_SOURCE_COLLECTION=%s read as true", no[i]);
        gpufl__config_free(&c);
    }
    tu_unsetenv("GPUFL_ENABLE_STACK_TRACE");
    tu_unsetenv("GPUFL_ENABLE_SOURCE_COLLECTION");
}

/* The variables the reference C++ library documents, one by one. */
static void test_named_environment_variables(void **state)
{
    const char *file = write_config(state, "env.json", "{\"app_name\": \"from-env-file\"}");
    tu_setenv("GPUFL_BACKEND_URL", "https://collector.example:8443");
    tu_setenv("GPUFL_API_KEY", "key-123");
    tu_setenv("GPUFL_API_PATH", "/api/v2");
    tu_setenv("GPUFL_CONFIG_FILE", file);
    tu_setenv("GPUFL_REMOTE_UPLOAD", "true");
    tu_setenv("GPUFL_PROFILING_ENGINE", "PcSampling");
    gpufl__config c;
    resolve_ok(NULL, &c);
    assert_string_equal(c.o.backend_url, "https://collector.example:8443");
    assert_string_equal(c.o.api_key, "key-123");
    assert_string_equal(c.o.api_path, "/api/v2");
    assert_string_equal(c.o.config_file, file);
    assert_string_equal(c.o.app_name, "from-env-file");
    assert_true(c.o.remote_upload);
    assert_int_equal(c.o.profiling_engine, GPUFL_ENGINE_PC_SAMPLING);
    gpufl__config_free(&c);
    unset_all_env();
}

/* ---- precedence ----------------------------------------------------------- */

static void test_code_over_env_over_file(void **state)
{
    const char *file = write_config(state, "prec.json",
                                    "{\"app_name\": \"file\", \"enable_stack_trace\": true,"
                                    " \"ring_events\": 100, \"log_rotate_bytes\": \"1MiB\","
                                    " \"backend\": \"amd\", \"profiling_engine\": \"trace\"}");
    gpufl_options o;
    gpufl_options_init(&o);
    o.config_file = file;
    gpufl__config c;

    /* file over defaults */
    resolve_ok(&o, &c);
    assert_string_equal(c.o.app_name, "file");
    assert_true(c.o.enable_stack_trace);
    assert_int_equal(c.o.ring_events, 100);
    assert_int_equal(c.o.log_rotate_bytes, 1ull << 20);
    assert_int_equal(c.o.backend, GPUFL_BACKEND_AMD);
    assert_int_equal(c.o.profiling_engine, GPUFL_ENGINE_TRACE);
    gpufl__config_free(&c);

    /* environment over file */
    tu_setenv("GPUFL_APP_NAME", "env");
    tu_setenv("GPUFL_ENABLE_STACK_TRACE", "0");
    tu_setenv("GPUFL_RING_EVENTS", "200");
    tu_setenv("GPUFL_LOG_ROTATE_BYTES", "2MiB");
    tu_setenv("GPUFL_BACKEND", "none");
    tu_setenv("GPUFL_PROFILING_ENGINE", "deep");
    resolve_ok(&o, &c);
    assert_string_equal(c.o.app_name, "env");
    assert_false(c.o.enable_stack_trace);
    assert_int_equal(c.o.ring_events, 200);
    assert_int_equal(c.o.log_rotate_bytes, 2ull << 20);
    assert_int_equal(c.o.backend, GPUFL_BACKEND_NONE);
    assert_int_equal(c.o.profiling_engine, GPUFL_ENGINE_DEEP);
    gpufl__config_free(&c);

    /* code over environment */
    o.app_name = "code";
    o.enable_stack_trace = true;
    o.ring_events = 300;
    o.log_rotate_bytes = 3ull << 20;
    o.backend = GPUFL_BACKEND_NVIDIA;
    o.profiling_engine = GPUFL_ENGINE_RANGE_PROFILER;
    resolve_ok(&o, &c);
    assert_string_equal(c.o.app_name, "code");
    assert_true(c.o.enable_stack_trace);
    assert_int_equal(c.o.ring_events, 300);
    assert_int_equal(c.o.log_rotate_bytes, 3ull << 20);
    assert_int_equal(c.o.backend, GPUFL_BACKEND_NVIDIA);
    assert_int_equal(c.o.profiling_engine, GPUFL_ENGINE_RANGE_PROFILER);
    gpufl__config_free(&c);

    /* A field "set" in code to its default value does not count as set:
     * the environment still decides it (documented). */
    o.app_name = "gpufl";
    o.ring_events = 8192;
    resolve_ok(&o, &c);
    assert_string_equal(c.o.app_name, "env");
    assert_int_equal(c.o.ring_events, 200);
    gpufl__config_free(&c);
    /* NULL and "" strings in code mean "use the default", too. */
    o.app_name = NULL;
    o.api_path = "";
    tu_setenv("GPUFL_API_PATH", "/env/path");
    resolve_ok(&o, &c);
    assert_string_equal(c.o.app_name, "env");
    assert_string_equal(c.o.api_path, "/env/path");
    gpufl__config_free(&c);
    unset_all_env();
}

static void test_config_file_in_code_beats_variable(void **state)
{
    const char *a = write_config(state, "a.json", "{\"app_name\": \"from-a\"}");
    const char *b = write_config(state, "b.json", "{\"app_name\": \"from-b\"}");
    gpufl__config c;

    tu_setenv("GPUFL_CONFIG_FILE", b);
    resolve_ok(NULL, &c);
    assert_string_equal(c.o.app_name, "from-b");
    assert_string_equal(c.o.config_file, b);
    gpufl__config_free(&c);

    gpufl_options o;
    gpufl_options_init(&o);
    o.config_file = a;
    resolve_ok(&o, &c);
    assert_string_equal(c.o.app_name, "from-a");
    assert_string_equal(c.o.config_file, a);
    gpufl__config_free(&c);

    /* The variable's file is not even read when code names one. */
    tu_setenv("GPUFL_CONFIG_FILE", tmp_path(state, "does-not-exist.json"));
    resolve_ok(&o, &c);
    assert_string_equal(c.o.app_name, "from-a");
    gpufl__config_free(&c);
    /* ...but it is when code does not. */
    resolve_fails(NULL, "does-not-exist.json", NULL);
    /* An empty variable means no file. */
    tu_setenv("GPUFL_CONFIG_FILE", "");
    resolve_ok(NULL, &c);
    assert_string_equal(c.o.app_name, "gpufl");
    assert_string_equal(c.o.config_file, "");
    gpufl__config_free(&c);
    tu_unsetenv("GPUFL_CONFIG_FILE");
}

static void test_disabled_wins(void **state)
{
    gpufl__config c;
    static const char *const on[] = {"1", "true", "TRUE", "yes", "Yes", "on", "ON"};
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        tu_setenv("GPUFL_DISABLED", on[i]);
        resolve_ok(NULL, &c);
        if (c.o.enabled)
            fail_msg("GPUFL_DISABLED=%s did not disable", on[i]);
        gpufl__config_free(&c);
    }
    static const char *const off[] = {"0", "false", "", "no", "OFF"};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        tu_setenv("GPUFL_DISABLED", off[i]);
        resolve_ok(NULL, &c);
        if (!c.o.enabled)
            fail_msg("GPUFL_DISABLED=\"%s\" disabled", off[i]);
        gpufl__config_free(&c);
    }
    /* enabled=false from a file is not undone by GPUFL_DISABLED=0 ... */
    gpufl_options o;
    gpufl_options_init(&o);
    o.config_file = write_config(state, "off.json", "{\"enabled\": false}");
    tu_setenv("GPUFL_DISABLED", "0");
    resolve_ok(&o, &c);
    assert_false(c.o.enabled);
    gpufl__config_free(&c);
    tu_unsetenv("GPUFL_DISABLED");
    /* ... and enabled=false in code beats a file that says true. */
    o.config_file = write_config(state, "on.json", "{\"enabled\": true}");
    o.enabled = false;
    resolve_ok(&o, &c);
    assert_false(c.o.enabled);
    gpufl__config_free(&c);
    /* Control: the file's true alone keeps it enabled. */
    o.enabled = true;
    resolve_ok(&o, &c);
    assert_true(c.o.enabled);
    gpufl__config_free(&c);
}

/* ---- errors ---------------------------------------------------------------- */

static int resolve_file_fails(void **state, const char *text, const char *key)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.config_file = write_config(state, "broken-config.json", text);
    return resolve_fails(&o, "broken-config.json", key, NULL);
}

static void test_file_errors(void **state)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.config_file = tmp_path(state, "missing-config.json");
    assert_int_equal(resolve_fails(&o, "missing-config.json", NULL), GPUFL_ENOTFOUND);

    /* Invalid JSON: the message says where. */
    o.config_file = write_config(state, "syntax.json", "{\n  \"app_name\": \"x\",\n  oops\n}\n");
    assert_int_equal(resolve_fails(&o, "syntax.json", "line 3", "column", NULL), GPUFL_ECONFIG);
    /* Duplicate keys are a mistake too. */
    o.config_file = write_config(state, "dup.json", "{\"app_name\": \"a\",\n\"app_name\": \"b\"}");
    assert_int_equal(resolve_fails(&o, "dup.json", "app_name", "line 2", NULL), GPUFL_ECONFIG);

    assert_int_equal(resolve_file_fails(state, "[1, 2]", "object"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"app_nmae\": \"typo\"}", "app_nmae"), GPUFL_ECONFIG);
    /* wrong types */
    assert_int_equal(resolve_file_fails(state, "{\"ring_events\": \"lots\"}", "ring_events"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"ring_events\": 1.5}", "ring_events"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"enable_stack_trace\": 1}", "enable_stack_trace"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"enable_stack_trace\": \"true\"}", "enable_stack_trace"),
                     GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"app_name\": 5}", "app_name"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"log_path\": null}", "log_path"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"profiling_engine\": 2}", "profiling_engine"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"log_rotate_bytes\": [1]}", "log_rotate_bytes"), GPUFL_ECONFIG);
    /* bad values of the right type */
    assert_int_equal(resolve_file_fails(state, "{\"profiling_engine\": \"turbo\"}", "profiling_engine"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"backend\": \"intel\"}", "backend"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"min_free_bytes\": \"lots\"}", "min_free_bytes"), GPUFL_ECONFIG);
    /* out of range */
    assert_int_equal(resolve_file_fails(state, "{\"ring_events\": 8}", "ring_events"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"ring_events\": 4294967297}", "ring_events"), GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"system_sample_rate_ms\": -5}", "system_sample_rate_ms"),
                     GPUFL_ECONFIG);
    assert_int_equal(resolve_file_fails(state, "{\"log_rotate_bytes\": \"1KiB\"}", "log_rotate_bytes"), GPUFL_ECONFIG);
    /* A config file cannot name another one. */
    assert_int_equal(resolve_file_fails(state, "{\"config_file\": \"other.json\"}", "config_file"), GPUFL_ECONFIG);
    /* Control: the same file without the mistakes resolves. */
    gpufl__config c;
    o.config_file = write_config(state, "fine.json", "{\"ring_events\": 16, \"app_name\": \"ok\"}");
    resolve_ok(&o, &c);
    assert_int_equal(c.o.ring_events, 16);
    gpufl__config_free(&c);
}

static void test_environment_errors(void **state)
{
    (void)state;
    static const struct {
        const char *var, *value;
    } bad[] = {
        {"GPUFL_RING_EVENTS", "abc"},
        {"GPUFL_RING_EVENTS", "-1"},
        {"GPUFL_RING_EVENTS", "64K"},
        {"GPUFL_RING_EVENTS", "8"},
        {"GPUFL_SYSTEM_SAMPLE_RATE_MS", "3600001"},
        {"GPUFL_ENABLE_STACK_TRACE", "maybe"},
        {"GPUFL_REMOTE_UPLOAD", "2"},
        {"GPUFL_LOG_ROTATE_BYTES", "1"},
        {"GPUFL_SESSION_MAX_BYTES", "a lot"},
        {"GPUFL_PROFILING_ENGINE", "warp-speed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_setenv(bad[i].var, bad[i].value);
        resolve_fails(NULL, bad[i].var, NULL);
        tu_unsetenv(bad[i].var);
    }
    /* GPUFL_DISABLED wins over a broken variable in gpufl_init. */
    char *logs = tu_mkdtemp("options-env");
    char sub[512];
    snprintf(sub, sizeof sub, "%s/logs", logs);
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_path = sub;
    tu_setenv("GPUFL_RING_EVENTS", "abc");
    assert_false(gpufl_init(&o));
    assert_non_null(strstr(gpufl_last_error(), "GPUFL_RING_EVENTS"));
    assert_false(tu_exists(sub));
    tu_setenv("GPUFL_DISABLED", "1");
    assert_true(gpufl_init(&o));
    assert_string_equal(gpufl_last_error(), "");
    assert_false(gpufl_is_recording());
    assert_false(tu_exists(sub));
    tu_unsetenv("GPUFL_DISABLED");
    tu_unsetenv("GPUFL_RING_EVENTS");
    tu_rm_rf(logs);
    free(logs);
}

static void test_code_errors(void **state)
{
    (void)state;
    gpufl_options o;
    gpufl_options_init(&o);
    o.ring_events = 4;
    resolve_fails(&o, "ring_events", NULL);
    gpufl_options_init(&o);
    o.system_sample_rate_ms = 3600001;
    resolve_fails(&o, "system_sample_rate_ms", NULL);
    gpufl_options_init(&o);
    o.backend = (gpufl_backend)42;
    resolve_fails(&o, "backend", NULL);
    gpufl_options_init(&o);
    o.profiling_engine = (gpufl_engine)-1;
    resolve_fails(&o, "profiling_engine", NULL);
    gpufl_options_init(&o);
    o.session_max_bytes = 1;
    resolve_fails(&o, "session_max_bytes", NULL);
}

static void test_struct_size_zero(void **state)
{
    (void)state;
    gpufl_options o;
    gpufl_options_init(&o);
    o.struct_size = 0;
    assert_int_equal(resolve_fails(&o, "struct_size", NULL), GPUFL_EINVAL);
    /* gpufl_init says the same and starts nothing. */
    int threads = tu_thread_count();
    assert_false(gpufl_init(&o));
    assert_non_null(strstr(gpufl_last_error(), "struct_size"));
    assert_null(strstr(gpufl_last_error(), "gpufl_init: gpufl_init"));
    assert_false(gpufl_is_recording());
    assert_int_equal(tu_thread_count(), threads);
}

/* A caller compiled against an older, shorter gpufl_options: only the bytes
 * it declares may be read, and the fields it does not have are defaults
 * (or whatever file and environment say). The struct is copied into a heap
 * block of exactly the old size so that ASan catches any read past it. */
static void test_smaller_struct_size(void **state)
{
    const size_t old_size = offsetof(gpufl_options, log_rotate_bytes);
    gpufl_options full;
    gpufl_options_init(&full);
    full.struct_size = old_size;
    full.app_name = "old-caller";
    full.ring_events = 1;                /* beyond old_size: garbage to the library */
    full.device_plugin = "/nonexistent"; /* beyond */
    full.log_rotate_bytes = 7;           /* beyond */
    gpufl_options *old = malloc(old_size);
    memcpy(old, &full, old_size);

    gpufl__config c;
    resolve_ok(old, &c);
    assert_string_equal(c.o.app_name, "old-caller");
    assert_int_equal(c.o.ring_events, 8192);
    assert_string_equal(c.o.device_plugin, "");
    assert_int_equal(c.o.log_rotate_bytes, 64ull << 20);
    assert_int_equal(c.o.struct_size, sizeof(gpufl_options));
    gpufl__config_free(&c);

    /* The environment still reaches the fields the caller does not know. */
    tu_setenv("GPUFL_RING_EVENTS", "64");
    resolve_ok(old, &c);
    assert_int_equal(c.o.ring_events, 64);
    gpufl__config_free(&c);
    tu_unsetenv("GPUFL_RING_EVENTS");

    /* Even shorter: `enabled` itself is beyond the caller's struct. */
    const size_t tiny = offsetof(gpufl_options, backend_url);
    gpufl_options *t = malloc(tiny);
    gpufl_options_init(&full);
    full.struct_size = tiny;
    full.log_path = tmp_path(state, "tiny-logs");
    full.enabled = false;
    full.enable_stack_trace = true;
    memcpy(t, &full, tiny);
    resolve_ok(t, &c);
    assert_true(c.o.enabled);
    assert_false(c.o.enable_stack_trace);
    gpufl__config_free(&c);
    /* gpufl_init must not read `enabled` past the caller's struct either. */
    memcpy(t, &full, tiny);
    assert_true(gpufl_init(t));
    assert_true(gpufl_is_recording());
    gpufl_shutdown();
    free(t);
    free(old);
}

/* ---- through gpufl_init ------------------------------------------------------ */

/* session.json of the one session under log_path. */
static json_t *load_session_json(const char *log_path)
{
    char *dir = tu_session_dir(log_path);
    assert_non_null(dir);
    json_t *j = tu_session_json(dir);
    free(dir);
    return j;
}

static void test_init_records_resolved_options(void **state)
{
    const char *logs = tmp_path(state, "logs");
    const char *file = write_config(state, "init.json",
                                    "{\"app_name\": \"from-file\", \"ring_events\": 1024,"
                                    " \"log_rotate_bytes\": \"1MiB\", \"enable_memory_tracking\": true,"
                                    " \"backend\": \"NONE\"}");
    tu_setenv("GPUFL_RING_EVENTS", "2048");
    tu_setenv("GPUFL_PROFILING_ENGINE", "PC-SAMPLING");
    tu_setenv("GPUFL_API_PATH", "/env-api");
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_path = logs;
    o.config_file = file;
    o.app_name = "from-code";
    o.api_path = "/code-api";
    assert_true(gpufl_init(&o));
    assert_true(gpufl_is_recording());
    gpufl_shutdown();

    json_t *sj = load_session_json(logs);
    json_t *opts = json_object_get(sj, "options");
    assert_true(json_is_object(opts));
    assert_string_equal(json_string_value(json_object_get(sj, "app_name")), "from-code");
    assert_string_equal(json_string_value(json_object_get(opts, "app_name")), "from-code");
    assert_string_equal(json_string_value(json_object_get(opts, "api_path")), "/code-api");
    assert_int_equal(json_integer_value(json_object_get(opts, "ring_events")), 2048);
    assert_int_equal(json_integer_value(json_object_get(opts, "log_rotate_bytes")), 1 << 20);
    assert_true(json_is_true(json_object_get(opts, "enable_memory_tracking")));
    assert_string_equal(json_string_value(json_object_get(opts, "backend")), "none");
    assert_string_equal(json_string_value(json_object_get(opts, "profiling_engine")), "pc_sampling");
    assert_string_equal(json_string_value(json_object_get(opts, "config_file")), file);
    assert_string_equal(json_string_value(json_object_get(opts, "log_path")), logs);
    /* Every option is there, except the key, whose presence alone is. */
    for (size_t i = 0; i < gpufl__options_count; i++) {
        const char *name = gpufl__options[i].name;
        if (!strcmp(name, "api_key"))
            assert_null(json_object_get(opts, name));
        else if (!json_object_get(opts, name))
            fail_msg("session.json options lack \"%s\"", name);
    }
    assert_true(json_is_false(json_object_get(opts, "api_key_set")));
    json_decref(sj);
    unset_all_env();
}

static void test_init_bad_config(void **state)
{
    char logs[512];
    snprintf(logs, sizeof logs, "%s", tmp_path(state, "never-created"));
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_path = logs;
    int threads = tu_thread_count();

    o.config_file = write_config(state, "bad-init.json", "{\"ring_evnets\": 64}");
    assert_false(gpufl_init(&o));
    assert_non_null(strstr(gpufl_last_error(), "bad-init.json"));
    assert_non_null(strstr(gpufl_last_error(), "ring_evnets"));
    assert_false(gpufl_is_recording());
    assert_false(tu_exists(logs));
    assert_int_equal(tu_thread_count(), threads);

    o.config_file = tmp_path(state, "absent-init.json");
    assert_false(gpufl_init(&o));
    assert_non_null(strstr(gpufl_last_error(), "absent-init.json"));
    assert_false(tu_exists(logs));

    tu_setenv("GPUFL_CONFIG_FILE", write_config(state, "bad-env.json", "{\"enabled\": \"no\"}"));
    o.config_file = NULL;
    assert_false(gpufl_init(&o));
    assert_non_null(strstr(gpufl_last_error(), "bad-env.json"));
    assert_non_null(strstr(gpufl_last_error(), "enabled"));
    tu_unsetenv("GPUFL_CONFIG_FILE");

    /* A good init afterwards clears the error and records. */
    o.config_file = write_config(state, "good-init.json", "{\"ring_events\": 64}");
    assert_true(gpufl_init(&o));
    assert_string_equal(gpufl_last_error(), "");
    assert_true(tu_exists(logs));
    gpufl_shutdown();
}

/* Looks for needle in every file of dir (recursively). */
static bool dir_contains(const char *dir, const char *needle, int *files)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    bool found = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_type == DT_DIR) {
            found |= dir_contains(path, needle, files);
            continue;
        }
        size_t len;
        char *text = tu_read_file(path, &len);
        assert_non_null(text);
        (*files)++;
        found |= memmem(text, len, needle, strlen(needle)) != NULL;
        free(text);
    }
    closedir(d);
    return found;
}

static void test_api_key_never_written(void **state)
{
    const char *logs = tmp_path(state, "keylogs");
    char key[96];
    snprintf(key, sizeof key, "gfl-secret-%d-%lx", (int)getpid(), (unsigned long)random());
    /* From code, with everything that writes text turned on. */
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_path = logs;
    o.api_key = key;
    o.backend_url = "http://localhost:1";
    o.enable_debug_output = true;
    o.remote_upload = true; /* logs a deprecation warning into system.log */
    assert_true(gpufl_init(&o));
    gpufl_scope s = gpufl_scope_begin("work");
    gpufl_system_start("window");
    gpufl_system_stop("window");
    gpufl_scope_end(s);
    assert_int_equal(gpufl_generate_report(NULL), 0);
    gpufl_shutdown();
    assert_int_equal(gpufl_generate_report(NULL), 0);

    char *dir = tu_session_dir(logs);
    assert_non_null(dir);
    int files = 0;
    assert_false(dir_contains(dir, key, &files));
    assert_true(files >= 5); /* session.json, three logs, summary.txt */
    /* Control: the key did reach the session (its presence is recorded). */
    json_t *sj = load_session_json(logs);
    assert_true(json_is_true(json_object_get(json_object_get(sj, "options"), "api_key_set")));
    json_decref(sj);
    /* Control for the search itself: a value that is written is found. */
    files = 0;
    assert_true(dir_contains(dir, "http://localhost:1", &files));
    free(dir);
}

/* ---- deprecated options ---------------------------------------------------- */

/* remote_upload and kernel_sample_rate_ms are accepted, each logs exactly
 * one deprecation warning into system.log, and nothing else changes. */
static void test_deprecated_options_warn_once(void **state)
{
    const char *logs = tmp_path(state, "deprecated");
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_path = logs;
    o.remote_upload = true;
    o.kernel_sample_rate_ms = 5;
    assert_true(gpufl_init(&o));
    gpufl_scope_end(gpufl_scope_begin("work"));
    gpufl_shutdown();
    char *dir = tu_session_dir(logs);
    assert_non_null(dir);
    tu_ndjson sys;
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &sys), 0);
    int upload = 0, rate = 0, other_warnings = 0;
    for (size_t i = 0; i < sys.n; i++) {
        json_t *l = sys.lines[i];
        if (strcmp(json_string_value(json_object_get(l, "type")), "log") != 0 ||
            strcmp(json_string_value(json_object_get(l, "level")), "warn") != 0)
            continue;
        const char *m = json_string_value(json_object_get(l, "message"));
        if (strstr(m, "remote_upload") && strstr(m, "deprecated"))
            upload++;
        else if (strstr(m, "kernel_sample_rate_ms") && strstr(m, "deprecated"))
            rate++;
        else
            other_warnings++;
    }
    assert_int_equal(upload, 1);
    assert_int_equal(rate, 1);
    assert_int_equal(other_warnings, 0);
    tu_ndjson_free(&sys);
    /* accepted: the session records them as given */
    json_t *sj = load_session_json(logs);
    json_t *opts = json_object_get(sj, "options");
    assert_true(json_is_true(json_object_get(opts, "remote_upload")));
    assert_int_equal(json_integer_value(json_object_get(opts, "kernel_sample_rate_ms")), 5);
    json_decref(sj);
    free(dir);
}

/* ---- the table covers the struct ----------------------------------------- */

static size_t kind_size(gpufl__opt_kind k)
{
    switch (k) {
    case GFL_OPT_STRING: return sizeof(const char *);
    case GFL_OPT_BOOL: return sizeof(bool);
    case GFL_OPT_U32: return sizeof(uint32_t);
    case GFL_OPT_BYTES: return sizeof(uint64_t);
    case GFL_OPT_BACKEND: return sizeof(gpufl_backend);
    case GFL_OPT_ENGINE: return sizeof(gpufl_engine);
    case GFL_OPT_LOG_FORMAT: return sizeof(gpufl_log_format);
    }
    return 0;
}

static size_t kind_align(gpufl__opt_kind k)
{
    switch (k) {
    case GFL_OPT_STRING: return alignof(const char *);
    case GFL_OPT_BOOL: return alignof(bool);
    case GFL_OPT_U32: return alignof(uint32_t);
    case GFL_OPT_BYTES: return alignof(uint64_t);
    case GFL_OPT_BACKEND: return alignof(gpufl_backend);
    case GFL_OPT_ENGINE: return alignof(gpufl_engine);
    case GFL_OPT_LOG_FORMAT: return alignof(gpufl_log_format);
    }
    return 1;
}

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static int by_offset(const void *a, const void *b)
{
    const gpufl__option_desc *x = *(const gpufl__option_desc *const *)a;
    const gpufl__option_desc *y = *(const gpufl__option_desc *const *)b;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

static void test_table_covers_struct(void **state)
{
    (void)state;
    size_t n = gpufl__options_count;
    const gpufl__option_desc **sorted = malloc(n * sizeof *sorted);
    for (size_t i = 0; i < n; i++)
        sorted[i] = &gpufl__options[i];
    qsort(sorted, n, sizeof *sorted, by_offset);

    assert_int_equal(offsetof(gpufl_options, struct_size), 0);
    size_t end = sizeof(size_t); /* struct_size is not an option */
    for (size_t i = 0; i < n; i++) {
        const gpufl__option_desc *d = sorted[i];
        if (d->size != kind_size(d->kind))
            fail_msg("option %s: size %zu does not fit its kind", d->name, d->size);
        size_t expected = round_up(end, kind_align(d->kind));
        if (d->offset != expected)
            fail_msg("gpufl_options has a field at offset %zu that the option table lacks "
                     "(next in the table: %s at %zu)",
                     end, d->name, d->offset);
        end = d->offset + d->size;
    }
    if (round_up(end, alignof(gpufl_options)) != sizeof(gpufl_options))
        fail_msg("gpufl_options has fields after offset %zu that the option table lacks", end);
    free(sorted);

    /* Names are unique and each variable is GPUFL_<NAME>, but for enabled. */
    for (size_t i = 0; i < n; i++) {
        const gpufl__option_desc *d = &gpufl__options[i];
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(gpufl__options[j].name, d->name);
        assert_ptr_equal(gpufl__option_find(d->name), d);
        char env[96] = "GPUFL_";
        for (size_t k = 0; d->name[k]; k++)
            env[6 + k] = (char)toupper((unsigned char)d->name[k]);
        if (!strcmp(d->name, "enabled"))
            assert_string_equal(d->env, "GPUFL_DISABLED");
        else
            assert_string_equal(d->env, env);
        assert_non_null(d->doc);
        assert_true(d->doc[0] != '\0');
    }
    assert_null(gpufl__option_find("struct_size"));
    assert_non_null(desc("device_plugin"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_option_from_environment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_option_from_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_option_from_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_byte_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backend_and_engine_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bool_spellings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_named_environment_variables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_code_over_env_over_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_file_in_code_beats_variable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disabled_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_code_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_struct_size_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_smaller_struct_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_records_resolved_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_bad_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api_key_never_written, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deprecated_options_warn_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_covers_struct, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
