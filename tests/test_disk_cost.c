/*
 * What the default log_format (compact) costs on disk, and that a compact
 * session reads like an NDJSON one of the same events.
 *
 * Why: the default has to be something a production job can leave on for
 * weeks (issue 13): at most 20 bytes a kernel on disk, measured on the real
 * session bundled in samples/train_sample (an H200, 18 529 kernels). That
 * session was recorded as gflt, whose trace.gflt is what compact's .gflt
 * sink writes too (the same sink, every event); compact adds scope.log and
 * system.log, which `gpufl convert` writes with the live NDJSON formatter.
 * So compact's bytes for that session are its trace.gflt and session.json
 * plus the converted scope.log and system.log. The figures are printed for
 * bench/RESULTS.md.
 *
 * And: `gpufl report`, `summary` and `export` of a compact session give
 * what they give for the same events as NDJSON logs (its conversion), and
 * `gpufl convert` takes a compact session both ways.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "record.h"
#include "test_util.h"

/* The target the default is held to, bytes on disk per kernel. */
#define MAX_BYTES_PER_KERNEL 20.0

TU_TEMP_DIR_FIXTURES(work, "disk-cost")

static char *path_in(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* Size of dir/name; 0 when it does not exist. */
static uint64_t size_of(const char *dir, const char *name)
{
    char *p = path_in(dir, name);
    struct stat st;
    uint64_t n = stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
    free(p);
    return n;
}

static void convert(const char *in, const char *out)
{
    char *err;
    const char *argv[] = {GFL_CLI, "convert", in, out, NULL};
    int rc = tu_run(argv, NULL, &err);
    if (rc != 0)
        fail_msg("gpufl convert %s %s: exit %d: %s", in, out, rc, err);
    free(err);
}

static size_t kernels_in(const char *path)
{
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        fail_msg("%s", err);
    size_t n = gpufl_trace_get_kernels(t)->n;
    gpufl_trace_close(t);
    return n;
}

static void test_default_on_the_real_sample(void **state)
{
    (void)state;
    gpufl_options o;
    gpufl_options_init(&o);
    assert_int_equal(o.log_format, GPUFL_LOG_COMPACT); /* the figure below is the default's */

    char *sample = path_in(GFL_SOURCE_DIR, "samples/train_sample");
    char *nd = path_in(work, "sample-ndjson");
    convert(sample, nd);
    size_t kernels = kernels_in(sample);
    assert_true(kernels > 10000);
    uint64_t gflt = size_of(sample, "trace.gflt"), meta = size_of(sample, "session.json");
    uint64_t device = size_of(nd, "device.log"), scope = size_of(nd, "scope.log"), system = size_of(nd, "system.log");
    assert_true(gflt > 0 && meta > 0 && device > 0 && scope > 0 && system > 0);
    uint64_t compact = gflt + scope + system + meta, ndjson = device + scope + system + meta;
    double per_kernel = (double)compact / (double)kernels;
    print_message("samples/train_sample: %zu kernels; on disk with session.json (%llu bytes):\n"
                  "  compact %llu bytes (trace.gflt %llu, scope.log %llu, system.log %llu): %.1f bytes a kernel\n"
                  "  gflt    %llu bytes: %.1f bytes a kernel\n"
                  "  ndjson  %llu bytes (device.log %llu): %.1f bytes a kernel\n"
                  "  both    %llu bytes: %.1f bytes a kernel\n",
                  kernels, (unsigned long long)meta, (unsigned long long)compact, (unsigned long long)gflt,
                  (unsigned long long)scope, (unsigned long long)system, per_kernel, (unsigned long long)(gflt + meta),
                  (double)(gflt + meta) / (double)kernels, (unsigned long long)ndjson, (unsigned long long)device,
                  (double)ndjson / (double)kernels, (unsigned long long)(ndjson + gflt),
                  (double)(ndjson + gflt) / (double)kernels);
    if (per_kernel > MAX_BYTES_PER_KERNEL)
        fail_msg("the default takes %.1f bytes a kernel on disk, over %.0f", per_kernel, MAX_BYTES_PER_KERNEL);
    free(sample);
    free(nd);
}

/* stdout of `gpufl ARGS...` (at most 6), which must succeed. */
static char *cli_out(const char *a, const char *b, const char *c, const char *d, const char *e)
{
    const char *argv[] = {GFL_CLI, a, b, c, d, e, NULL};
    char *out, *err;
    int rc = tu_run(argv, &out, &err);
    if (rc != 0)
        fail_msg("gpufl %s %s: exit %d: %s", a, b, rc, err);
    free(err);
    return out;
}

/* text without its lines that contain `skip` (NULL: none) */
static void drop_lines(char *text, const char *skip)
{
    char *w = text;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        char saved = line[len];
        line[len] = '\0';
        bool keep = !skip || !strstr(line, skip);
        line[len] = saved;
        if (keep) {
            memmove(w, line, len);
            w += len;
        }
        line += len;
    }
    *w = '\0';
}

static void expect_same_output(const char *what, char *a, char *b)
{
    if (strcmp(a, b) != 0)
        fail_msg("%s differs between the compact session and its NDJSON conversion:\n%s\n----\n%s", what, a, b);
    free(a);
    free(b);
}

static void test_compact_reads_like_ndjson(void **state)
{
    (void)state;
    char *logs = path_in(work, "compact");
    char *dir = tu_record_synthetic(logs, "disk_cost", GPUFL_LOG_COMPACT, 0);
    assert_int_equal(size_of(dir, "device.log"), 0);
    assert_true(size_of(dir, "scope.log") > 0 && size_of(dir, "trace.gflt") > 0);
    char *nd = path_in(work, "compact-ndjson"), *bin = path_in(work, "compact.gflt");
    convert(dir, nd); /* all three logs, device.log from trace.gflt */
    convert(dir, bin);
    assert_true(size_of(nd, "device.log") > 0);
    size_t kernels = kernels_in(dir);
    assert_int_equal(kernels, 2000);
    assert_int_equal(kernels_in(nd), kernels);
    assert_int_equal(kernels_in(bin), kernels);

    char *a = cli_out("report", dir, "--format", "json", NULL), *b = cli_out("report", nd, "--format", "json", NULL);
    drop_lines(a, "\"source_format\"");
    drop_lines(b, "\"source_format\"");
    expect_same_output("gpufl report --format json", a, b);
    expect_same_output("gpufl summary --json", cli_out("summary", dir, "--json", NULL, NULL),
                       cli_out("summary", nd, "--json", NULL, NULL));
    char *ca = path_in(work, "a.json"), *cb = path_in(work, "b.json");
    const char *ea[] = {GFL_CLI, "export", dir, "-f", "chrome", "-o", ca, NULL};
    const char *eb[] = {GFL_CLI, "export", nd, "-f", "chrome", "-o", cb, NULL};
    assert_int_equal(tu_run(ea, NULL, NULL), 0);
    assert_int_equal(tu_run(eb, NULL, NULL), 0);
    expect_same_output("gpufl export -f chrome", tu_read_file(ca, NULL), tu_read_file(cb, NULL));
    free(ca);
    free(cb);
    free(nd);
    free(bin);
    free(dir);
    free(logs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_on_the_real_sample),
        cmocka_unit_test(test_compact_reads_like_ndjson),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
