/*
 * The pc_sampling engine of the CUPTI plugin against the fake libcupti
 * (tests/fake_cupti/fake_pc_sampling.c): sampling is enabled and
 * configured on each context as it is created, the samples come out as
 * pc_sample rows with short reason names and source lines from the
 * module's cubin, they are collected before a module is unloaded or a
 * context destroyed, and a refusal steps the session down to trace with
 * the cause named.
 *
 * Why: CI has no GPU; everything between CUPTI's PC sampling calls and the
 * trace is checked here, the GPU test (tests/gpu/test_pc_sampling.cu)
 * checks the real CUPTI.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "fake_cupti.h"
#include "fake_cupti_setup.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"

// clang-format off
#define FAKE_FUNCTIONS(X)                                                                          \
    X(create_context) X(load_module) X(unload_module) X(pc_sample) X(refuse_pc_sampling)          \
    X(pc_sampling_state) X(destroy_context) X(fill_pc_buffer)
// clang-format on

static struct {
    void *lib;
#define AS_FIELD(name) __typeof__(&fake_cupti_##name) name;
    FAKE_FUNCTIONS(AS_FIELD)
#undef AS_FIELD
} fake;

#define CUBIN "fake-cubin file=/src/kernels.cu line=10"

static char *logs;

static int setup(void **state)
{
    (void)state;
    TU_FAKE_CUPTI_SETUP();
    logs = tu_mkdtemp("pcs_plugin");
    return 0;
}

static uint64_t crc_of(const char *cubin) { return tu_fake_cubin_crc(cubin); }

static void start(const char *app, gpufl_engine engine, uint32_t period)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = app;
    o.log_path = logs;
    o.profiling_engine = engine;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.pc_sampling_period = period;
    o.log_format = GPUFL_LOG_BOTH;
    fake.refuse_pc_sampling(CUPTI_SUCCESS);
    assert_true(gpufl_init(&o));
}

/* Samples of (function, reason) in the trace, and the line of the last. */
static uint64_t samples_of(const gpufl_trace *t, const char *function, const char *reason, uint32_t *line,
                           const char **file)
{
    const gpufl_trace_pc_samples *p = gpufl_trace_get_pc_samples(t);
    uint64_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(tu_trace_text(t, p->function[i]), function) && !strcmp(tu_trace_text(t, p->reason[i]), reason)) {
            n += p->samples[i];
            if (line)
                *line = p->line[i];
            if (file)
                *file = tu_trace_text(t, p->file[i]);
        }
    return n;
}

static void samples_become_rows_with_lines(void **state)
{
    (void)state;
    start("pcs", GPUFL_ENGINE_PC_SAMPLING, 9);
    fake.create_context(1, 0);
    fake_cupti_pcs_state st;
    assert_true(fake.pc_sampling_state(1, &st));
    assert_true(st.enabled && st.configured);
    assert_int_equal(st.period, 9);
    assert_int_equal(st.selected, 3); /* every reason but the _not_issued twin */
    assert_false(st.selected_not_issued);
    fake.load_module(1, CUBIN);
    uint64_t crc = crc_of(CUBIN);
    assert_int_equal(fake.pc_sample(1, "_Z5k_memPj", crc, 0x20, 3, 50), 0);
    assert_int_equal(fake.pc_sample(1, "_Z5k_memPj", crc, 0x20, 7, 10), 0);
    assert_int_equal(fake.pc_sample(1, "_Z5k_memPj", crc, 0x40, 9, 5), 0);
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "pc_sampling");
    uint32_t line = 0;
    const char *file = NULL;
    assert_int_equal(samples_of(t, "_Z5k_memPj", "long_scoreboard", &line, &file), 50);
    assert_string_equal(file, "/src/kernels.cu");
    assert_int_equal(line, 12); /* 10 + 0x20 / 16 */
    assert_int_equal(samples_of(t, "_Z5k_memPj", "selected", NULL, NULL), 10);
    assert_int_equal(samples_of(t, "_Z5k_memPj", "wait", &line, NULL), 5);
    assert_int_equal(line, 14);
    gpufl_trace_close(t);
    assert_true(fake.pc_sampling_state(1, &st));
    assert_false(st.enabled); /* disabled at the end */
}

/* A module's samples leave before it goes, a context's before it is
 * destroyed: CUPTI could not name their functions afterwards. */
static void collects_before_unload_and_destroy(void **state)
{
    (void)state;
    start("pcs_unload", GPUFL_ENGINE_PC_SAMPLING, 0);
    fake.create_context(2, 1);
    fake.load_module(2, CUBIN);
    assert_int_equal(fake.pc_sample(2, "k_a", crc_of(CUBIN), 0x10, 9, 7), 0);
    fake_cupti_pcs_state st;
    fake.unload_module(2);
    assert_true(fake.pc_sampling_state(2, &st));
    assert_int_equal(st.pending, 0);
    assert_int_equal(st.period, 0); /* CUPTI's choice: not configured */
    assert_int_equal(fake.pc_sample(2, "k_b", 77, 0x10, 3, 9), 0);
    fake.destroy_context(2);
    assert_true(fake.pc_sampling_state(2, &st));
    assert_false(st.enabled);
    gpufl_trace *t = tu_plugin_session_end();
    assert_int_equal(samples_of(t, "k_a", "wait", NULL, NULL), 7);
    assert_int_equal(samples_of(t, "k_b", "long_scoreboard", NULL, NULL), 9);
    const gpufl_trace_pc_samples *p = gpufl_trace_get_pc_samples(t);
    for (size_t i = 0; i < p->n; i++)
        assert_int_equal(p->device[i], 1);
    gpufl_trace_close(t);
}

/* A full hardware buffer stops the GPU's sampling for good: the engine
 * starts it again, sampling half as often, and later kernels are
 * sampled. */
static void full_buffer_restarts_with_a_longer_period(void **state)
{
    (void)state;
    start("pcs_full", GPUFL_ENGINE_PC_SAMPLING, 0);
    fake.create_context(6, 0);
    fake_cupti_pcs_state st;
    assert_true(fake.pc_sampling_state(6, &st));
    assert_int_equal(st.period, 0); /* CUPTI's choice (the fake's 12) */
    fake.fill_pc_buffer(6);
    assert_int_equal(fake.pc_sample(6, "k_lost", 1, 0x10, 3, 5), -1);
    for (int i = 0; i < 400 && (fake.pc_sampling_state(6, &st), st.enables < 2); i++)
        usleep(10000); /* the worker collects every 100 ms */
    assert_int_equal(st.enables, 2);
    assert_int_equal(st.period, 13); /* one step longer than what CUPTI chose */
    assert_int_equal(fake.pc_sample(6, "k_later", 1, 0x10, 3, 5), 0);
    gpufl_trace *t = tu_plugin_session_end();
    assert_int_equal(samples_of(t, "k_later", "long_scoreboard", NULL, NULL), 5);
    assert_string_equal(tu_trace_text(t, gpufl_trace_get_info(t)->engine), "pc_sampling");
    gpufl_trace_close(t);
}

static void refusal_steps_down_to_trace_and_says_why(void **state)
{
    (void)state;
    start("pcs_refused", GPUFL_ENGINE_PC_SAMPLING, 0);
    fake.refuse_pc_sampling(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    fake.create_context(3, 0);
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_string_equal(tu_trace_text(t, info->engine), "trace");
    assert_string_equal(tu_trace_text(t, info->engine_requested), "pc_sampling");
    const char *why = tu_trace_text(t, info->engine_reason);
    if (!strstr(why, "cuptiPCSamplingEnable") || !strstr(why, "administrators"))
        fail_msg("the reason does not name the call and the cause: %s", why);
    gpufl_trace_close(t);
}

static void trace_engine_does_not_sample(void **state)
{
    (void)state;
    start("pcs_trace", GPUFL_ENGINE_TRACE, 0);
    fake.create_context(4, 0);
    fake_cupti_pcs_state st;
    assert_true(fake.pc_sampling_state(4, &st));
    assert_false(st.enabled);
    gpufl_trace_close(tu_plugin_session_end());
}

/* enable_source_collection: the files line info named are copied into the
 * session's sources/ at its end, so the report shows a line's code after
 * the file is gone; a FIFO and a file over 1 MiB are listed with the
 * reason and never read or copied. */
static void sources_are_copied_with_the_session(void **state)
{
    (void)state;
    char *src = tu_mkdtemp("pcs_src");
    char k[4200], fifo[4200], big[4200], ck[4400], cf[4400], cb[4400];
    snprintf(k, sizeof k, "%s/kernels.cu", src);
    snprintf(fifo, sizeof fifo, "%s/fifo.cu", src);
    snprintf(big, sizeof big, "%s/big.cu", src);
    char text[2048] = "";
    for (int i = 1; i <= 20; i++) {
        char l[128];
        snprintf(l, sizeof l, i == 12 ? "    float v = in[i] * 2.0f;   // line %d, the load\n" : "// line %d\n", i);
        strcat(text, l);
    }
    tu_write_file(k, text);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    FILE *f = fopen(big, "w");
    assert_non_null(f);
    for (int i = 0; i < 40000; i++)
        fputs("// a line of a generated file, forty bytes\n", f);
    fclose(f);
    snprintf(ck, sizeof ck, "fake-cubin file=%s line=10", k);
    snprintf(cf, sizeof cf, "fake-cubin file=%s line=10", fifo);
    snprintf(cb, sizeof cb, "fake-cubin file=%s line=10", big);

    start("pcs_src", GPUFL_ENGINE_PC_SAMPLING, 0);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", gpufl_session_dir());
    fake.create_context(5, 0);
    fake.load_module(5, ck);
    fake.load_module(5, cf);
    fake.load_module(5, cb);
    assert_int_equal(fake.pc_sample(5, "k_src", crc_of(ck), 0x20, 3, 80), 0);
    assert_int_equal(fake.pc_sample(5, "k_src", crc_of(ck), 0x20, 3, 20), 0);
    assert_int_equal(fake.pc_sample(5, "k_fifo", crc_of(cf), 0x10, 3, 5), 0);
    assert_int_equal(fake.pc_sample(5, "k_big", crc_of(cb), 0x10, 3, 5), 0);
    gpufl_trace *t = tu_plugin_session_end();

    char at[4400];
    snprintf(at, sizeof at, "%s/sources/index.json", dir);
    json_error_t jerr;
    json_t *index = json_load_file(at, 0, &jerr);
    assert_non_null(index);
    json_t *files = json_object_get(index, "files"), *e;
    assert_int_equal(json_array_size(files), 3);
    size_t i;
    int seen = 0;
    json_array_foreach(files, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        const char *stored = json_string_value(json_object_get(e, "stored"));
        const char *skipped = json_string_value(json_object_get(e, "skipped"));
        if (!strcmp(path, k)) {
            assert_non_null(stored);
            assert_null(skipped);
            assert_int_equal(json_integer_value(json_object_get(e, "size")), strlen(text));
            snprintf(at, sizeof at, "%s/sources/%s", dir, stored);
            size_t len = 0;
            char *copy = tu_read_file(at, &len);
            assert_non_null(copy);
            assert_int_equal(len, strlen(text));
            assert_memory_equal(copy, text, len);
            free(copy);
            seen |= 1;
        } else if (!strcmp(path, fifo)) {
            assert_null(stored);
            assert_non_null(strstr(skipped, "FIFO"));
            seen |= 2;
        } else if (!strcmp(path, big)) {
            assert_null(stored);
            assert_non_null(strstr(skipped, "larger than"));
            seen |= 4;
        }
    }
    assert_int_equal(seen, 7);
    json_decref(index);
    size_t n_stored = 0;
    snprintf(at, sizeof at, "%s/sources", dir);
    DIR *d = opendir(at);
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d));)
        n_stored += de->d_name[0] != '.';
    closedir(d);
    assert_int_equal(n_stored, 2); /* index.json and the one copy */

    /* the original gone, the report still shows the code, from the copy */
    assert_int_equal(unlink(k), 0);
    char *out = NULL, err[256];
    size_t len = 0;
    assert_int_equal(gpufl_trace_report(t, "text", 0, &out, &len, err, sizeof err), 0);
    assert_non_null(strstr(out, "kernels.cu:12"));
    assert_non_null(strstr(out, "| float v = in[i] * 2.0f;   // line 12, the load\n"));
    gpufl_trace_free_text(out);
    assert_int_equal(gpufl_trace_report(t, "json", 0, &out, &len, err, sizeof err), 0);
    json_t *r = json_loads(out, 0, &jerr);
    assert_non_null(r);
    gpufl_trace_free_text(out);
    json_t *lines = json_object_get(json_object_get(json_object_get(r, "counters"), "stalls"), "lines");
    assert_true(json_array_size(lines) >= 1);
    int coded = 0;
    json_array_foreach(lines, i, e)
    {
        if (json_integer_value(json_object_get(e, "line")) == 12) {
            assert_string_equal(json_string_value(json_object_get(e, "code")),
                                "float v = in[i] * 2.0f;   // line 12, the load");
            assert_string_equal(json_string_value(json_object_get(e, "code_from")), "copy");
            coded++;
        } else if (strstr(json_string_value(json_object_get(e, "file")), "big.cu")) {
            /* not copied, but unchanged since: read from the file itself */
            assert_string_equal(json_string_value(json_object_get(e, "code")),
                                "// a line of a generated file, forty bytes");
            assert_string_equal(json_string_value(json_object_get(e, "code_from")), "file");
            coded++;
        } else {
            assert_true(json_is_null(json_object_get(e, "code"))); /* the FIFO's: never read */
            assert_true(json_is_null(json_object_get(e, "code_from")));
        }
    }
    assert_int_equal(coded, 2);
    json_decref(r);
    gpufl_trace_close(t);
    tu_rm_rf(src);
    free(src);
}

/* Off, nothing is copied (and no line is looked up). */
static void no_sources_when_collection_is_off(void **state)
{
    (void)state;
    char *src = tu_mkdtemp("pcs_src_off");
    char k[4200], ck[4400];
    snprintf(k, sizeof k, "%s/kernels.cu", src);
    tu_write_file(k, "a\nb\nc\n");
    snprintf(ck, sizeof ck, "fake-cubin file=%s line=1", k);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "pcs_src_off";
    o.log_path = logs;
    o.profiling_engine = GPUFL_ENGINE_PC_SAMPLING;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    o.enable_source_collection = false;
    fake.refuse_pc_sampling(CUPTI_SUCCESS);
    assert_true(gpufl_init(&o));
    char dir[4096], at[4200];
    snprintf(dir, sizeof dir, "%s", gpufl_session_dir());
    fake.create_context(6, 0);
    fake.load_module(6, ck);
    assert_int_equal(fake.pc_sample(6, "k_off", crc_of(ck), 0x10, 3, 9), 0);
    gpufl_trace *t = tu_plugin_session_end();
    assert_int_equal(samples_of(t, "k_off", "long_scoreboard", NULL, NULL), 9);
    snprintf(at, sizeof at, "%s/sources", dir);
    assert_false(tu_exists(at));
    gpufl_trace_close(t);
    tu_rm_rf(src);
    free(src);
}

/* A relative path in line info is the build's, taken from the program's
 * working directory when the session ends. */
static void relative_paths_are_read_from_the_working_directory(void **state)
{
    (void)state;
    char *src = tu_mkdtemp("pcs_src_rel"), cwd[4096], at[4400];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(at, sizeof at, "%s/rel", src);
    assert_int_equal(mkdir(at, 0755), 0);
    snprintf(at, sizeof at, "%s/rel/k.cu", src);
    tu_write_file(at, "x\ny\n");
    assert_int_equal(chdir(src), 0);
    const char *ck = "fake-cubin file=rel/k.cu line=1";
    start("pcs_src_rel", GPUFL_ENGINE_PC_SAMPLING, 0);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", gpufl_session_dir());
    fake.create_context(7, 0);
    fake.load_module(7, ck);
    assert_int_equal(fake.pc_sample(7, "k_rel", crc_of(ck), 0x10, 3, 4), 0);
    gpufl_trace *t = tu_plugin_session_end();
    assert_int_equal(chdir(cwd), 0);
    json_error_t jerr;
    snprintf(at, sizeof at, "%s/sources/index.json", dir);
    json_t *index = json_load_file(at, 0, &jerr);
    assert_non_null(index);
    json_t *e = json_array_get(json_object_get(index, "files"), 0);
    assert_string_equal(json_string_value(json_object_get(e, "path")), "rel/k.cu");
    assert_string_equal(json_string_value(json_object_get(e, "stored")), "0001-k.cu");
    snprintf(at, sizeof at, "%s/sources/0001-k.cu", dir);
    size_t len = 0;
    char *copy = tu_read_file(at, &len);
    assert_non_null(copy);
    assert_memory_equal(copy, "x\ny\n", 4);
    free(copy);
    json_decref(index);
    gpufl_trace_close(t);
    tu_rm_rf(src);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(samples_become_rows_with_lines),
        cmocka_unit_test(collects_before_unload_and_destroy),
        cmocka_unit_test(full_buffer_restarts_with_a_longer_period),
        cmocka_unit_test(refusal_steps_down_to_trace_and_says_why),
        cmocka_unit_test(trace_engine_does_not_sample),
        cmocka_unit_test(sources_are_copied_with_the_session),
        cmocka_unit_test(no_sources_when_collection_is_off),
        cmocka_unit_test(relative_paths_are_read_from_the_working_directory),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
