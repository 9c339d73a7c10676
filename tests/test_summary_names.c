/*
 * `gpufl summary` (src/present/report/summary_text.c) on kernels and scopes with
 * long names that share a long prefix, as C++ template kernels do.
 *
 * Why: the summary once cut every name at 37 characters, so the three
 * elementwise kernels of a PyTorch step read as one name three times. Each
 * row must be told apart: names come last and long, as in `gpufl report`,
 * and two that would still read the same are shown whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "summary-names")

#define ELEMENTWISE                                                                                                    \
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"                      \
    "BinaryFunctor<float, float, float, at::native::binary_internal::"
/* 240 characters in common, more than any column */
#define LONG_PREFIX                                                                                                    \
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4<cutlass::gemm::"                       \
    "threadblock::DefaultMmaCore<cutlass::gemm::GemmShape<128, 128, 32>, cutlass::gemm::GemmShape<64,"                 \
    " 64, 32>, cutlass::gemm::GemmShape<16, 8, 8>, float, cutlass::layout::RowMajor>>"

static const char *const names[] = {
    ELEMENTWISE "MulFunctor<float> > >(at::TensorIteratorBase&, ...)::{lambda(int)#1}>(int, ...)",
    ELEMENTWISE "AddFunctor<float> > >(at::TensorIteratorBase&, ...)::{lambda(int)#1}>(int, ...)",
    ELEMENTWISE "DivFunctor<float> > >(at::TensorIteratorBase&, ...)::{lambda(int)#1}>(int, ...)",
    LONG_PREFIX "::variant_one>(Params)",
    LONG_PREFIX "::variant_two>(Params)",
    "short_kernel",
};
#define NNAMES (sizeof names / sizeof names[0])

/* A session.json whose summary holds names as its kernels and scopes. */
static char *write_session(void)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < NNAMES; i++)
        json_array_append_new(rows, json_pack("{s:s,s:i,s:i,s:i,s:i}", "name", names[i], "count", 10, "total_ns",
                                              1000000 - (int)i * 1000, "min_ns", 90000, "max_ns", 110000));
    json_t *root = json_pack("{s:s,s:i,s:s,s:s,s:i,s:s,s:s,s:i,s:i,s:s,s:{s:i,s:i,s:O,s:O}}", "format", "gpufl-session",
                             "format_version", 1, "session_id", "names-1", "app_name", "names", "pid", 1, "host", "h",
                             "log_dir", work, "start_ns", 0, "start_wall_ns", 0, "status", "ended", "summary",
                             "duration_ns", 2000000, "kernel_total_ns", 5985000, "kernels", rows, "scopes", rows);
    assert_non_null(root);
    char *path = malloc(strlen(work) + 32);
    assert_non_null(path);
    sprintf(path, "%s/session.json", work);
    assert_int_equal(json_dump_file(root, path, 0), 0);
    json_decref(root);
    json_decref(rows);
    return path;
}

/* The rows of the table titled title (up to the blank line after it). */
static size_t table_rows(const char *text, const char *title, char rows[][1024], size_t max)
{
    const char *p = strstr(text, title);
    assert_non_null(p);
    p = strchr(p, '\n') + 1; /* the title */
    p = strchr(p, '\n') + 1; /* the column heads */
    size_t n = 0;
    while (*p && *p != '\n' && strncmp(p, "  all kernels", 13) != 0) {
        const char *end = strchr(p, '\n');
        assert_non_null(end);
        assert_true(n < max && (size_t)(end - p) < 1024);
        snprintf(rows[n++], 1024, "%.*s", (int)(end - p), p);
        p = end + 1;
    }
    return n;
}

static void expect_distinct(const char *text, const char *title)
{
    char rows[NNAMES + 1][1024];
    size_t n = table_rows(text, title, rows, NNAMES + 1);
    assert_int_equal(n, NNAMES);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(rows[i], rows[j]))
                fail_msg("%s: two rows read the same:\n%s", title, rows[i]);
}

static void test_long_names_are_told_apart(void **state)
{
    (void)state;
    char *path = write_session(), *out, *err;
    int rc = tu_run_subcommand(GFL_CLI, "summary", (const char *const[]){work, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl summary: exit %d: %s", rc, err);
    expect_distinct(out, "GPU kernels (by total time)");
    expect_distinct(out, "Scopes (by total time)");
    /* what tells them apart is shown */
    static const char *const marks[] = {"MulFunctor",  "AddFunctor",  "DivFunctor",
                                        "variant_one", "variant_two", "short_kernel"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (!strstr(out, marks[i]))
            fail_msg("'%s' is not shown:\n%s", marks[i], out);
    free(out);
    free(err);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_names_are_told_apart),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
