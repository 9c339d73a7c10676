/*
 * `gpufl mem analyze` (src/cli/mem_analyze.c, mem_plots.c) on sessions the
 * library recorded: a training loop whose framework (PyTorch, through
 * gpufl_record_block and gpufl_record_allocator) keeps 1 MiB of tensors a
 * step, the same loop without the leak, and the bundled H200 session.
 *
 * Why: CI gates on the exit code (0 no leak, 1 a leak, 2 an error or bad
 * usage), so each must be the right one, every option must do what it says
 * or be refused, the leak must name the Python line that made the memory
 * that grew, and the plots must be written where asked, or the command
 * must say why not.
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
#include <sys/stat.h>

#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "test_util.h"

#define MIB (1ull << 20)
#define SAMPLE GFL_SOURCE_DIR "/samples/train_sample"

static char *dir;
static char leak_dir[4096], flat_dir[4096];

/* innermost first, as PyTorch gives them: the framework's own code, then the program's */
static const gpufl_source_frame leak_stack[] = {
    {"/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", "forward", 134},
    {"/work/train.py", "step", 42},
    {"/work/train.py", "main", 97}};
static const gpufl_source_frame temp_stack[] = {{"/work/train.py", "forward", 17}};

/* Records ten steps of a loop; leaks: keeps 1 MiB of tensors a step. */
static void record_loop(const char *name, bool leaks, char *session)
{
    char log_path[4200];
    snprintf(log_path, sizeof log_path, "%s/%s", dir, name);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = name;
    o.log_path = log_path;
    o.system_sample_rate_ms = 0;
    o.log_format = GPUFL_LOG_GFLT;
    assert_true(gpufl_init(&o));
    uint64_t kept = 0;
    for (unsigned k = 0; k < 10; k++) {
        gpufl_scope s = gpufl_scope_begin("step");
        assert_int_equal(gpufl_record_block(0, 0x7f0000100000ull, 4 * MIB, 0, 0, 0, temp_stack, 1), 0);
        assert_int_equal(gpufl_record_block(0, 0x7f0000100000ull, 4 * MIB, 1, 0, 0, NULL, 0), 0);
        if (leaks) {
            assert_int_equal(gpufl_record_block(0, 0x7f1000000000ull + k * MIB, MIB, 0, 0, 0, leak_stack, 3), 0);
            kept += MIB;
        }
        gpufl_scope_end(s);
        gpufl_allocator_state st = {.struct_size = sizeof st,
                                    .framework = "pytorch",
                                    .reason = "step",
                                    .allocated_bytes = 10 * MIB + kept,
                                    .reserved_bytes = 64 * MIB,
                                    .active_bytes = 10 * MIB + kept};
        assert_int_equal(gpufl_record_allocator(&st), 0);
    }
    snprintf(session, 4096, "%s", gpufl_session_dir());
    gpufl_shutdown();
}

static int setup(void **state)
{
    (void)state;
    dir = tu_mkdtemp("mem-analyze");
    record_loop("leak", true, leak_dir);
    record_loop("flat", false, flat_dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_rf(dir);
    free(dir);
    return 0;
}

/* needle must be in text (the command's output, shown when it is not). */
static void expect_in(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" is not in:\n%s", needle, text);
}

/* `gpufl mem analyze ARGS...`: its exit code, stdout and stderr. */
static int mem_analyze(const char *const *args, char **out, char **err)
{
    const char *argv[16] = {"analyze"};
    size_t n = 1;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    return tu_run_subcommand(GFL_CLI, "mem", argv, out, err);
}

static void leak_found(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(mem_analyze((const char *[]){leak_dir, NULL}, &out, &err), 1);
    expect_in(out, "LEAK, severity medium: step (scope, GPU 0, framework allocated): +1.00 MiB a "
                   "repetition");
    /* the allocations that grew, with the Python line that made them */
    expect_in(out, "made in those repetitions and still live after them: 8 allocations, 8.00 MiB");
    /* the installed package's frame summed up, the program's line shown */
    expect_in(out, "#0-0 in installed packages, innermost forward (/usr/lib/python3/dist-packages/");
    expect_in(out, "#1  step (/work/train.py:42)");
    expect_in(out, "verdict: 1 leak found: step (medium)");
    /* the framework's blocks, apart from the driver's allocations; the
     * peaks from the blocks, exact where the allocator's states are samples */
    expect_in(out, "GPU 0, framework blocks (tensors)");
    expect_in(out, "GPU 0: peak of framework blocks live 13.0 MiB");
    expect_in(out, "    step                                     scope        10    13.0 MiB");
    free(out);
    free(err);

    assert_int_equal(mem_analyze((const char *[]){leak_dir, "--format", "json", NULL}, &out, &err), 1);
    json_error_t e;
    json_t *doc = json_loads(out, 0, &e);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "schema")), "gpufl-mem-analyze");
    assert_true(json_is_true(json_object_get(doc, "leak_found")));
    json_t *row = json_array_get(json_object_get(json_object_get(doc, "leaks"), "rows"), 0);
    assert_string_equal(json_string_value(json_object_get(row, "scope")), "step");
    assert_true(json_is_true(json_object_get(row, "detected")));
    assert_string_equal(json_string_value(json_object_get(row, "layer")), "allocated");
    assert_float_equal(json_number_value(json_object_get(row, "slope_bytes_per_step")), (double)MIB, 1);
    assert_float_equal(json_number_value(json_object_get(row, "memory_increase_mb")), 7, 1e-6);
    json_t *grew = json_array_get(json_object_get(json_object_get(row, "grew"), "stacks"), 0);
    assert_int_equal(json_integer_value(json_object_get(grew, "bytes")), 8 * MIB);
    json_t *frames = json_object_get(grew, "frames");
    assert_int_equal(json_array_size(frames), 3);
    assert_string_equal(json_string_value(json_array_get(frames, 1)), "step (/work/train.py:42)");
    json_t *layers = json_array_get(json_object_get(doc, "memory_layers"), 0);
    assert_string_equal(json_string_value(json_object_get(layers, "framework")), "pytorch");
    assert_string_equal(json_string_value(json_object_get(layers, "framework_source")), "allocator");
    json_decref(doc);
    free(out);
    free(err);
}

static void no_leak(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(mem_analyze((const char *[]){flat_dir, NULL}, &out, &err), 0);
    expect_in(out, "verdict: no leak found (1 repeated scope or range judged)");
    free(out);
    free(err);
    /* the bundled PyTorch session: its cache fills in the first steps */
    assert_int_equal(mem_analyze((const char *[]){SAMPLE, "--scope", "step", NULL}, &out, &err), 0);
    expect_in(out, "step (NVTX, GPU 0, driver allocations live): no leak");
    assert_null(strstr(out, "forward (NVTX")); /* --scope: only the name asked for */
    expect_in(out, "held at the end: 1 998 allocations, 1.60 GiB");
    assert_null(strstr(out, "never freed:"));
    free(out);
    free(err);
}

static void options(void **state)
{
    (void)state;
    char *out, *err, file[4200];
    /* --output: the analysis goes to the file, nothing to stdout */
    snprintf(file, sizeof file, "%s/analysis.json", dir);
    assert_int_equal(mem_analyze((const char *[]){leak_dir, "--format", "json", "-o", file, NULL}, &out, &err), 1);
    assert_string_equal(out, "");
    char *text = tu_read_file(file, NULL);
    assert_non_null(text);
    expect_in(text, "\"leak_found\": true");
    free(text);
    free(out);
    free(err);
    /* --min-steps: ten repetitions are not enough for 11 */
    assert_int_equal(mem_analyze((const char *[]){leak_dir, "--min-steps", "11", NULL}, &out, &err), 0);
    expect_in(out, "names repeated at least 11 times");
    expect_in(out, "nothing repeated often enough");
    free(out);
    free(err);
    assert_int_equal(mem_analyze((const char *[]){leak_dir, "--min-steps", "10", NULL}, &out, &err), 1);
    free(out);
    free(err);
}

static void plots(void **state)
{
    (void)state;
    char *out, *err, plot_dir[4200], file[4300];
    snprintf(plot_dir, sizeof plot_dir, "%s/my-plots", dir);
    assert_int_equal(
        mem_analyze((const char *[]){leak_dir, "--visualization", "--plot-dir", plot_dir, NULL}, &out, &err), 1);
    expect_in(err, plot_dir);
    free(out);
    free(err);
    static const char *const files[] = {"memory_layers_gpu0.svg", "leak_01_step_gpu0.svg"};
    static const char *const marks[] = {"<polyline", "<circle"};
    for (int i = 0; i < 2; i++) {
        snprintf(file, sizeof file, "%s/%s", plot_dir, files[i]);
        char *svg = tu_read_file(file, NULL);
        if (!svg)
            fail_msg("%s was not written", file);
        assert_true(!strncmp(svg, "<svg ", 5));
        expect_in(svg, marks[i]);
        expect_in(svg, "</svg>\n");
        free(svg);
    }
    /* without --plot-dir: SESSION/plots */
    assert_int_equal(mem_analyze((const char *[]){flat_dir, "--visualization", NULL}, &out, &err), 0);
    snprintf(file, sizeof file, "%s/plots/leak_01_step_gpu0.svg", flat_dir);
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    free(out);
    free(err);
    /* a plot directory that cannot be made: refused, saying why */
    snprintf(file, sizeof file, "%s/analysis.txt/plots", dir);
    snprintf(plot_dir, sizeof plot_dir, "%s/analysis.txt", dir);
    tu_write_file(plot_dir, "a file");
    assert_int_equal(mem_analyze((const char *[]){flat_dir, "--visualization", "--plot-dir", file, NULL}, &out, &err),
                     2);
    expect_in(err, "cannot make the plot directory");
    free(out);
    free(err);
}

static void bad_usage(void **state)
{
    (void)state;
    const char *const *const cases[] = {
        (const char *[]){NULL},                                     /* no session */
        (const char *[]){"/nonexistent/session", NULL},             /* unreadable */
        (const char *[]){SAMPLE, "--format", "xml", NULL},          /* unknown format */
        (const char *[]){SAMPLE, "--min-steps", "3", NULL},         /* too few to fit a line */
        (const char *[]){SAMPLE, "--min-steps", "many", NULL},      /* not a number */
        (const char *[]){SAMPLE, "--plot-dir", "/tmp/x", NULL},     /* plots not asked for */
        (const char *[]){SAMPLE, "--scope", "no-such-scope", NULL}, /* not a repeated name */
        (const char *[]){SAMPLE, "--frobnicate", NULL},             /* unknown option */
        (const char *[]){SAMPLE, SAMPLE, NULL},                     /* two sessions */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out, *err;
        int rc = mem_analyze(cases[i], &out, &err);
        if (rc != 2)
            fail_msg("case %zu: exit %d, not 2 (stderr: %s)", i, rc, err);
        assert_true(strlen(err) > 0);
        free(out);
        free(err);
    }
    char *out, *err;
    assert_int_equal(mem_analyze((const char *[]){"--help", NULL}, &out, &err), 0);
    expect_in(out, "--min-steps");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(leak_found), cmocka_unit_test(no_leak),   cmocka_unit_test(options),
        cmocka_unit_test(plots),      cmocka_unit_test(bad_usage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
