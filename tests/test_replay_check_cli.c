/*
 * `gpufl replay-check` as a command (src/cli/cmd_replay_check.c,
 * replay_check_job.c, src/present/diff/replay_*.c).
 *
 * Why: CI gates on its exit status, so 0, 1 and 2 must mean the same
 * work, different work and "could not tell" every time, and a session it
 * cannot read must be named. Checked: the recorded sample against itself
 * and against a copy with one kernel removed; the text's divergence lines
 * and the JSON parsed back; usage errors and damaged or missing input
 * exit 2 naming the problem; two job directories compared rank by rank;
 * and a pair of 1 M-kernel sessions (one launch configuration changed,
 * one kernel inserted) checked in bounded time and memory, measured.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "ana_fixture.h"
#include "core/intern.h"
#include "fs_util.h"
#include "session_file.h"
#include "test_util.h"

#define SAMPLE GFL_SOURCE_DIR "/samples/train_sample"

TU_TEMP_DIR_FIXTURES(work, "replay-cli")

static int replay(const char *const *args, char **out, char **err)
{
    return tu_run_subcommand(GFL_CLI, "replay-check", args, out, err);
}

/* A small session: gemm, relu (second: `second`), softmax on stream 7. */
static char *small(const char *name, const char *second)
{
    af f = {.end_ns = AF_START + 100000};
    af_device(&f, 0, "GPU", 80ull << 30);
    af_kernel(&f, (af_k){.stream = 7, .start = AF_START + 1000, .end = AF_START + 2000, .name = "gemm", .grid = 64});
    af_kernel(&f, (af_k){.stream = 7, .start = AF_START + 3000, .end = AF_START + 4000, .name = second});
    af_kernel(&f, (af_k){.stream = 7, .start = AF_START + 5000, .end = AF_START + 6000, .name = "softmax"});
    gpufl_trace_close(af_open(&f, work, name));
    char *p = malloc(4200);
    snprintf(p, 4200, "%s/%s", work, name);
    return p;
}

/* Leaves out the 5000th kernel. */
static bool drop_one(void *ctx, gfl_event *ev, const gpufl__string_lookup *s)
{
    (void)s;
    size_t *seen = ctx;
    return ev->h.type != GFL_EV_KERNEL || ++*seen != 5000;
}

/* Doubles the grid of the 5000th and 9000th kernels. */
static bool grow_two(void *ctx, gfl_event *ev, const gpufl__string_lookup *s)
{
    (void)s;
    size_t *seen = ctx;
    if (ev->h.type == GFL_EV_KERNEL && (++*seen == 5000 || *seen == 9000))
        ev->u.kernel.grid[0] *= 2;
    return true;
}

static void test_sample_against_itself_and_an_edited_copy(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(replay((const char *[]){SAMPLE, SAMPLE, NULL}, &out, &err), 0);
    assert_non_null(strstr(out, "SAME: 2 lanes, 23113 ops in each run"));
    free(out);
    free(err);

    /* the copy lacks the 5000th kernel */
    char copy[4200];
    snprintf(copy, sizeof copy, "%s/edited.gflt", work);
    size_t seen = 0;
    tu_copy_session(SAMPLE "/trace.gflt", copy, drop_one, &seen);
    int rc = replay((const char *[]){SAMPLE, copy, NULL}, &out, &err);
    if (rc != 1)
        fail_msg("exit %d: %s%s", rc, out, err);
    assert_non_null(strstr(out, ": 1 op missing in B"));
    assert_non_null(strstr(out, "DIFFERENT: 1 of 2 lanes differs"));
    assert_non_null(strstr(out, "counts that differ (1 op):"));
    assert_null(strstr(out, "    divergences:")); /* one: shown above */
    free(out);
    free(err);

    snprintf(copy, sizeof copy, "%s/grown.gflt", work);
    seen = 0;
    tu_copy_session(SAMPLE "/trace.gflt", copy, grow_two, &seen);
    assert_int_equal(replay((const char *[]){SAMPLE, copy, NULL}, &out, &err), 1);
    assert_non_null(strstr(out, "along the lane: 2 divergences; 2 ops changed\n    divergences:\n"));
    assert_non_null(strstr(out, ": the launch configuration changed (grid): kernel "));
    free(out);
    free(err);
    assert_int_equal(replay((const char *[]){SAMPLE, copy, "--divergences", "1", NULL}, &out, &err), 1);
    assert_null(strstr(out, "    divergences:"));
    free(out);
    free(err);
}

static void test_text_shows_the_divergence(void **state)
{
    (void)state;
    char *a = small("a", "relu"), *b = small("b", "gelu"), *out, *err;
    assert_int_equal(replay((const char *[]){a, a, NULL}, &out, &err), 0);
    free(out);
    free(err);
    assert_int_equal(replay((const char *[]){a, b, NULL}, &out, &err), 1);
    assert_string_equal(err, "");
    assert_non_null(strstr(out, "DIFFERENT  device 0, stream 7 in A, 7 in B: 3 ops in A, 3 in B\n"));
    assert_non_null(strstr(out, "first divergence at A op 1, B op 1: another kernel ran\n"));
    assert_non_null(strstr(out, "      A ran  relu\n      B ran  gelu\n"));
    assert_non_null(strstr(
        out, "      -          1          -     3.00 us  kernel relu grid(1,1,1) block(32,1,1) regs 16 smem 0+0\n"));
    assert_non_null(strstr(
        out, "      +          -          1     3.00 us  kernel gelu grid(1,1,1) block(32,1,1) regs 16 smem 0+0\n"));
    assert_non_null(strstr(out, "                 0          0     1.00 us  kernel gemm grid(64,1,1)"));
    assert_non_null(strstr(out, "\nDIFFERENT: 1 of 1 lane differs; the first: device 0, stream 7 in A, 7 in B at "
                                "A op 1, B op 1\n"));
    free(out);
    free(err);
    /* the names left out: the same */
    assert_int_equal(replay((const char *[]){a, b, "--ignore-names", "^[rg]elu$", NULL}, &out, &err), 0);
    assert_non_null(strstr(out, "kernels whose name matches /^[rg]elu$/ left out"));
    free(out);
    free(err);
    free(a);
    free(b);
}

static void test_json(void **state)
{
    (void)state;
    char *a = small("a", "relu"), *b = small("b", "gelu"), *out, *err;
    assert_int_equal(replay((const char *[]){a, b, "--json", NULL}, &out, &err), 1);
    json_error_t je;
    json_t *root = json_loads(out, 0, &je);
    if (!root)
        fail_msg("not JSON (%s): %s", je.text, out);
    assert_false(json_is_true(json_object_get(root, "same")));
    assert_int_equal(json_integer_value(json_object_get(root, "lanes_differ")), 1);
    json_t *lane = json_array_get(json_object_get(root, "lanes"), 0);
    assert_string_equal(json_string_value(json_object_get(lane, "lane")), "stream");
    assert_int_equal(json_integer_value(json_object_get(lane, "stream_a")), 7);
    json_t *d = json_object_get(lane, "first_divergence");
    assert_string_equal(json_string_value(json_object_get(d, "change")), "name");
    assert_int_equal(json_integer_value(json_object_get(d, "index_a")), 1);
    assert_int_equal(json_integer_value(json_object_get(d, "index_b")), 1);
    assert_int_equal(json_integer_value(json_object_get(d, "span_a")), 1);
    assert_int_equal(json_integer_value(json_object_get(d, "span_b")), 1);
    assert_true(json_is_true(json_object_get(d, "resynced")));
    /* the list's first entry says the same of it */
    json_t *listed = json_array_get(json_object_get(lane, "divergence_list"), 0);
    static const char *const head[] = {"change", "fields", "index_a", "index_b", "span_a", "span_b", "resynced"};
    for (size_t k = 0; k < sizeof head / sizeof *head; k++)
        if (!json_equal(json_object_get(d, head[k]), json_object_get(listed, head[k])))
            fail_msg("first_divergence and divergence_list[0] differ in %s", head[k]);
    json_t *lines = json_object_get(d, "lines");
    assert_int_equal(json_array_size(lines), 4); /* gemm, -relu, +gelu, softmax */
    json_t *minus = json_array_get(lines, 1);
    assert_string_equal(json_string_value(json_object_get(minus, "tag")), "-");
    assert_true(json_is_null(json_object_get(minus, "index_b")));
    json_t *op = json_object_get(minus, "op");
    assert_string_equal(json_string_value(json_object_get(op, "op")), "kernel");
    assert_string_equal(json_string_value(json_object_get(op, "name")), "relu");
    assert_int_equal(json_integer_value(json_array_get(json_object_get(op, "block"), 0)), 32);
    json_decref(root);
    free(out);
    free(err);
    assert_int_equal(replay((const char *[]){a, a, "--format", "json", NULL}, &out, &err), 0);
    root = json_loads(out, 0, &je);
    assert_non_null(root);
    assert_true(json_is_true(json_object_get(root, "same")));
    assert_true(json_is_null(json_object_get(json_array_get(json_object_get(root, "lanes"), 0), "first_divergence")));
    json_decref(root);
    free(out);
    free(err);
    free(a);
    free(b);
}

static void expect_trouble(const char *const *args, const char *says)
{
    char *out, *err;
    int rc = replay(args, &out, &err);
    if (rc != 2 || !strstr(err, says))
        fail_msg("exit %d (2 expected), stderr without '%s':\n%s", rc, says, err);
    assert_string_equal(out, "");
    free(out);
    free(err);
}

static void test_bad_input_and_usage(void **state)
{
    (void)state;
    char *a = small("a", "relu");
    char damaged[4200], log[4300], missing[4200];
    snprintf(damaged, sizeof damaged, "%s/damaged", work);
    snprintf(missing, sizeof missing, "%s/nowhere", work);
    assert_int_equal(mkdir(damaged, 0755), 0);
    snprintf(log, sizeof log, "%s/device.log", damaged);
    tu_write_file(log, "{\"type\":\"session_start\",\"ts_ns\":1000000,\"wall_ns\":1790000000000000000,"
                       "\"session_id\":\"d\",\"app_name\":\"test\",\"pid\":42,\"host\":\"h\",\"channel\":\"device\","
                       "\"part\":0,\"format_version\":1,\"gpufl_version\":\"0.1.0\"}\n"
                       "{\"type\":\"kernel\",\"start_ns\":oops}\n"
                       "{\"type\":\"session_end\",\"ts_ns\":2000000,\"wall_ns\":1790000000001000000,"
                       "\"session_id\":\"d\",\"app_name\":\"test\",\"lines\":1,\"lost\":0}\n");
    expect_trouble((const char *[]){a, damaged, NULL}, "device.log");
    expect_trouble((const char *[]){damaged, a, NULL}, "gpufl replay-check: A: ");
    expect_trouble((const char *[]){a, missing, NULL}, "nowhere");
    /* a .gflt damaged in the middle: named, with where */
    size_t n;
    char *bytes = tu_read_file(SAMPLE "/trace.gflt", &n);
    assert_non_null(bytes);
    bytes[n / 2] ^= 0x5a;
    char broken[4200];
    snprintf(broken, sizeof broken, "%s/broken.gflt", work);
    FILE *fp = fopen(broken, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
    free(bytes);
    expect_trouble((const char *[]){SAMPLE, broken, NULL}, "broken.gflt");
    expect_trouble((const char *[]){a, NULL}, "expected two sessions");
    expect_trouble((const char *[]){a, a, a, NULL}, "is a third");
    expect_trouble((const char *[]){a, a, "--from-time", "soon", NULL}, "bad --from-time 'soon'");
    expect_trouble((const char *[]){a, a, "--from-time", "2ms", "--to-time", "1ms", NULL}, "time range is empty");
    expect_trouble((const char *[]){a, a, "--from-op", "5", "--to-op", "5", NULL}, "op range is empty");
    expect_trouble((const char *[]){a, a, "--ignore-names", "(", NULL}, "bad --ignore-names '('");
    expect_trouble((const char *[]){a, a, "--stream-map", "7", NULL}, "bad --stream-map '7'");
    expect_trouble((const char *[]){a, a, "--stream-map", "8:7", NULL}, "A has no stream 8 (its streams: 7)");
    expect_trouble((const char *[]){a, a, "--scope", "step#0", NULL}, "bad --scope 'step#0'");
    expect_trouble((const char *[]){a, a, "--scope", "step", NULL}, "A: no gpufl scope is named 'step'");
    expect_trouble((const char *[]){a, a, "--window", "0", NULL}, "bad --window '0'");
    expect_trouble((const char *[]){a, a, "--bogus", NULL}, "bad argument '--bogus'");
    free(a);
}

/* ---- job directories ---------------------------------------------------------------------- */

static gfl_event kernel(const char *name, uint32_t stream, uint64_t start, uint32_t grid)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_KERNEL;
    ev.h.tid = 7;
    ev.h.ts = start;
    ev.u.kernel.end_ts = start + 500;
    ev.u.kernel.name = gpufl__intern(name);
    ev.u.kernel.context = 1;
    ev.u.kernel.stream = stream;
    ev.u.kernel.grid[0] = grid;
    ev.u.kernel.grid[1] = ev.u.kernel.grid[2] = 1;
    ev.u.kernel.block[0] = 256;
    ev.u.kernel.block[1] = ev.u.kernel.block[2] = 1;
    ev.u.kernel.registers = 32;
    return ev;
}

static const gpufl__session_meta *meta(const char *sid)
{
    static gpufl__session_meta m;
    m = (gpufl__session_meta){.session_id = sid,
                              .app_name = "train",
                              .host = "node-a",
                              .gpufl_version = "0.1.0",
                              .pid = 100,
                              .start_ns = 1000000000,
                              .start_wall_ns = 1795000000000000000ull,
                              .format_version = 1,
                              .stop_detail = ""};
    return &m;
}

/* JOB/rank-R: a session of rank r, its kernel k (of 4) given grid `grid_of_k` when not 0. */
static void write_rank(const char *job, int r, int k_changed)
{
    char dir[4200], path[4300], sid[64];
    snprintf(dir, sizeof dir, "%s/rank-%d", job, r);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(sid, sizeof sid, "train-20261127-000000-%d-%04x", 100 + r, r);
    gpufl__session_meta m = *meta(sid);
    snprintf(path, sizeof path, "%s/trace.gflt", dir);
    tu_gflt_file f;
    tu_gflt_open(&f, path, &m, 4096, -1);
    for (int k = 0; k < 4; k++) {
        gfl_event ev =
            kernel(k % 2 ? "relu" : "gemm", 7, m.start_ns + 1000 + 1000 * (uint64_t)k, k == k_changed ? 999 : 64);
        tu_gflt_add(&f, &ev);
    }
    m.ended = true;
    m.end_ns = m.start_ns + 100000;
    m.end_wall_ns = m.start_wall_ns + 100000;
    tu_gflt_close(&f, &m);
    char json[1024];
    snprintf(json, sizeof json,
             "{\"session_id\":\"%s\",\"job\":{\"launcher\":\"torchrun\",\"rank\":%d,\"world_size\":2,"
             "\"id\":\"j\"}}\n",
             sid, r);
    snprintf(path, sizeof path, "%s/session.json", dir);
    tu_write_file(path, json);
}

static void test_jobs_rank_by_rank(void **state)
{
    (void)state;
    char ja[4200], jb[4200], jc[4200], *out, *err;
    snprintf(ja, sizeof ja, "%s/job-a", work);
    snprintf(jb, sizeof jb, "%s/job-b", work);
    snprintf(jc, sizeof jc, "%s/job-c", work);
    assert_int_equal(mkdir(ja, 0755), 0);
    assert_int_equal(mkdir(jb, 0755), 0);
    assert_int_equal(mkdir(jc, 0755), 0);
    for (int r = 0; r < 2; r++) {
        write_rank(ja, r, -1);
        write_rank(jb, r, -1);
        write_rank(jc, r, r == 1 ? 2 : -1);
    }
    assert_int_equal(replay((const char *[]){ja, jb, NULL}, &out, &err), 0);
    assert_non_null(strstr(out, "== rank 0\n"));
    assert_non_null(strstr(out, "== rank 1\n"));
    assert_non_null(strstr(out, "JOB SAME: 0 of 2 ranks differ\n"));
    free(out);
    free(err);

    assert_int_equal(replay((const char *[]){ja, jc, NULL}, &out, &err), 1);
    assert_non_null(strstr(out, "the launch configuration changed (grid)"));
    assert_non_null(strstr(out, "JOB DIFFERENT: 1 of 2 ranks differs\n"));
    free(out);
    free(err);

    assert_int_equal(replay((const char *[]){ja, jc, "--json", NULL}, &out, &err), 1);
    json_t *root = json_loads(out, 0, NULL);
    assert_non_null(root);
    json_t *ranks = json_object_get(root, "ranks");
    assert_int_equal(json_array_size(ranks), 2);
    assert_true(json_is_true(json_object_get(json_array_get(ranks, 0), "same")));
    json_t *r1 = json_array_get(ranks, 1);
    assert_int_equal(json_integer_value(json_object_get(r1, "rank")), 1);
    assert_false(json_is_true(json_object_get(r1, "same")));
    assert_false(json_is_true(json_object_get(json_object_get(r1, "check"), "same")));
    json_decref(root);
    free(out);
    free(err);

    /* a rank only one run has */
    char jd[4200];
    snprintf(jd, sizeof jd, "%s/job-d", work);
    assert_int_equal(mkdir(jd, 0755), 0);
    for (int r = 0; r < 3; r++)
        write_rank(jd, r, -1);
    assert_int_equal(replay((const char *[]){ja, jd, NULL}, &out, &err), 1);
    assert_non_null(strstr(out, "== rank 2\nDIFFERENT: only B has this rank ("));
    assert_non_null(strstr(out, "JOB DIFFERENT: 1 of 3 ranks differs\n"));
    free(out);
    free(err);

    /* a job against one session */
    char one[4300];
    snprintf(one, sizeof one, "%s/rank-0", ja);
    expect_trouble((const char *[]){ja, one, NULL}, "is a job directory and");
}

/* ---- a million kernels -------------------------------------------------------------------- */

#define MILLION 1000000

/* 1 M kernels of 50 names and 7 grids on stream 7; `variant` 1 changes
 * kernel 700000's grid, 2 inserts a kernel before kernel 300000. */
static void write_million(const char *path, int variant)
{
    static const char *const names[] = {"gemm", "relu", "softmax", "layernorm", "dropout"};
    char name[64];
    tu_gflt_file f;
    tu_gflt_open(&f, path, meta("big-20261127-000000-1-0001"), 16384, 1);
    uint64_t t = 1000000000 + 1000;
    for (uint32_t i = 0; i < MILLION; i++, t += 1000) {
        if (variant == 2 && i == 300000) {
            gfl_event ev = kernel("inserted", 7, t, 1);
            tu_gflt_add(&f, &ev);
            t += 1000;
        }
        snprintf(name, sizeof name, "%s_%u", names[i % 5], (i / 5) % 10);
        gfl_event ev = kernel(name, 7, t, variant == 1 && i == 700000 ? 4096 : 32 + (i % 7));
        tu_gflt_add(&f, &ev);
    }
    gpufl__session_meta m = *meta("big-20261127-000000-1-0001");
    m.ended = true;
    m.end_ns = t + 1000;
    m.end_wall_ns = m.start_wall_ns + (t - m.start_ns);
    tu_gflt_close(&f, &m);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_million_kernels(void **state)
{
    (void)state;
    char a[4200], b[4200], c[4200], *out, *err;
    snprintf(a, sizeof a, "%s/a.gflt", work);
    snprintf(b, sizeof b, "%s/b.gflt", work);
    snprintf(c, sizeof c, "%s/c.gflt", work);
    write_million(a, 0);
    write_million(b, 1);
    write_million(c, 2);

    double t0 = now_s();
    int rc = replay((const char *[]){a, b, NULL}, &out, &err);
    double secs = now_s() - t0;
    struct rusage ru;
    assert_int_equal(getrusage(RUSAGE_CHILDREN, &ru), 0);
    if (rc != 1)
        fail_msg("exit %d: %s%s", rc, out, err);
    assert_non_null(
        strstr(out, "first divergence at A op 700000, B op 700000: the launch configuration changed (grid)"));
    assert_non_null(strstr(out, "along the lane: 1 divergence; 1 op changed\n"));
    print_message("replay-check of 2 x 1 M kernels (one changed): %.2f s, peak RSS of the command %ld MiB\n", secs,
                  ru.ru_maxrss / 1024);
    /* bounds far above what was measured (docs/REPORT.md), so that only a
     * quadratic step or a per-op leak fails it */
    assert_true(secs < 60);
    assert_true(ru.ru_maxrss < 1024 * 1024); /* KiB */
    free(out);
    free(err);

    rc = replay((const char *[]){a, c, NULL}, &out, &err);
    if (rc != 1)
        fail_msg("exit %d: %s%s", rc, out, err);
    assert_non_null(strstr(out, "first divergence at A op 300000, B op 300000: 1 op extra in B"));
    assert_non_null(strstr(out, "1000000 ops in A, 1000001 in B"));
    free(out);
    free(err);

    rc = replay((const char *[]){a, a, NULL}, &out, &err);
    assert_int_equal(rc, 0);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sample_against_itself_and_an_edited_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_shows_the_divergence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input_and_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jobs_rank_by_rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_million_kernels, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
