/*
 * A job's ranks loaded (src/cli/job_load.c): through `gpufl merge` and
 * `gpufl report`, a job of 7 ranks written last to first, each with its
 * own number of kernels, comes out with every rank's digest in its place,
 * the same at every run; a rank whose session cannot be read fails the
 * whole job, naming that session and no other.
 *
 * Why: the loader is where a faster job report would read ranks
 * concurrently (bench/bench_job.c measured two threads: no faster on 2
 * CPUs); a digest put in another rank's slot, or the wrong session named,
 * would be silent otherwise.
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

#include "core/intern.h"
#include "fs_util.h"
#include "session_file.h"
#include "test_util.h"

#define NRANKS 7

TU_TEMP_DIR_FIXTURES(work, "job-load")

static gfl_event kernel(const char *name, uint32_t stream, uint64_t start, uint64_t end)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_KERNEL;
    ev.h.tid = 7;
    ev.h.ts = start;
    ev.u.kernel.end_ts = end;
    ev.u.kernel.name = gpufl__intern(name);
    ev.u.kernel.context = 1;
    ev.u.kernel.stream = stream;
    ev.u.kernel.grid[0] = ev.u.kernel.block[0] = 1;
    ev.u.kernel.api_start_ts = start - 5000;
    ev.u.kernel.api_end_ts = start - 2000;
    return ev;
}

/* Rank r: r + 1 compute kernels and two AllReduces ending at one instant on every rank. */
static void write_rank(const char *sessions, int r)
{
    char dir[4200], path[4300], sid[64];
    snprintf(dir, sizeof dir, "%s/rank-%d", sessions, r);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(sid, sizeof sid, "load-20261127-000000-%d-%04x", 100 + r, r);
    gpufl__session_meta m = {.session_id = sid,
                             .app_name = "train",
                             .host = "node-a",
                             .gpufl_version = "0.1.0",
                             .pid = 100 + r,
                             .start_ns = 1000000000,
                             .start_wall_ns = 1795000000000000000ull,
                             .format_version = 1,
                             .stop_detail = ""};
    snprintf(path, sizeof path, "%s/trace.gflt", dir);
    tu_gflt_file f;
    tu_gflt_open(&f, path, &m, 4096, -1);
    uint64_t t = m.start_ns + 100000;
    for (int k = 0; k <= r; k++, t += 20000) {
        gfl_event ev = kernel("gemm", 7, t, t + 10000);
        tu_gflt_add(&f, &ev);
    }
    static const char nccl[] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    for (int c = 0; c < 2; c++) {
        uint64_t end = m.start_ns + 1000000 * (uint64_t)(c + 1);
        gfl_event ev = kernel(nccl, 13, end - 50000 + (uint64_t)r * 1000, end);
        tu_gflt_add(&f, &ev);
    }
    m.ended = true;
    m.end_ns = m.start_ns + 3000000;
    m.end_wall_ns = m.start_wall_ns + 3000000;
    tu_gflt_close(&f, &m);
    char json[1024];
    snprintf(json, sizeof json,
             "{\"session_id\":\"%s\",\"host\":\"node-a\",\"job\":{\"launcher\":\"torchrun\",\"rank\":%d,"
             "\"local_rank\":%d,\"world_size\":%d,\"id\":\"load-job\",\"host\":\"node-a\"}}\n",
             sid, r, r, NRANKS);
    snprintf(path, sizeof path, "%s/session.json", dir);
    tu_write_file(path, json);
}

static char *write_job(void)
{
    char *sessions = malloc(4200);
    assert_non_null(sessions);
    snprintf(sessions, 4200, "%s/sessions", work);
    assert_int_equal(mkdir(sessions, 0755), 0);
    for (int r = NRANKS - 1; r >= 0; r--) /* written last to first: the loader orders by rank */
        write_rank(sessions, r);
    return sessions;
}

static void test_every_rank_in_its_place(void **state)
{
    (void)state;
    char *sessions = write_job(), job[4200], *out = NULL, *err = NULL;
    snprintf(job, sizeof job, "%s/job", work);
    const char *merge_args[] = {sessions, "-o", job, "--no-trace", NULL};
    if (tu_run_subcommand(GFL_CLI, "merge", merge_args, &out, &err) != 0)
        fail_msg("gpufl merge failed: %s", err);
    free(out);
    free(err);
    char *first = NULL;
    for (int run = 0; run < 4; run++) {
        const char *args[] = {job, "--format", "json", NULL};
        out = err = NULL;
        if (tu_run_subcommand(GFL_CLI, "report", args, &out, &err) != 0)
            fail_msg("gpufl report failed: %s", err);
        json_error_t jerr;
        json_t *root = json_loads(out, 0, &jerr);
        assert_non_null(root);
        json_t *ranks = json_object_get(root, "ranks");
        assert_int_equal(json_array_size(ranks), NRANKS);
        for (int r = 0; r < NRANKS; r++) {
            json_t *k = json_array_get(ranks, (size_t)r);
            assert_int_equal(json_integer_value(json_object_get(k, "rank")), r);
            assert_int_equal(json_integer_value(json_object_get(k, "pid")), 100 + r);
            assert_int_equal(json_integer_value(json_object_get(k, "kernels")), r + 1 + 2);
            assert_int_equal(json_integer_value(json_object_get(k, "nccl_kernels")), 2);
        }
        json_decref(root);
        if (!first)
            first = out;
        else {
            assert_string_equal(out, first); /* the threads' interleaving does not show */
            free(out);
        }
        free(err);
    }
    free(first);
    free(sessions);
}

static void test_unreadable_rank_named(void **state)
{
    (void)state;
    char *sessions = write_job(), bad[4300], job[4200], *err = NULL;
    snprintf(bad, sizeof bad, "%s/rank-4/trace.gflt", sessions);
    tu_write_file(bad, "this is not a gpufl trace\n");
    snprintf(job, sizeof job, "%s/job", work);
    const char *args[] = {sessions, "-o", job, NULL};
    assert_int_not_equal(tu_run_subcommand(GFL_CLI, "merge", args, NULL, &err), 0);
    if (!strstr(err, "rank-4"))
        fail_msg("the message does not name rank-4's session: %s", err);
    for (int r = 0; r < NRANKS; r++) { /* only the one that failed is named */
        char other[32];
        snprintf(other, sizeof other, "rank-%d/", r);
        if (r != 4 && strstr(err, other))
            fail_msg("the message names rank %d: %s", r, err);
    }
    assert_false(tu_exists(job));
    free(err);
    free(sessions);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_rank_in_its_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable_rank_named, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
