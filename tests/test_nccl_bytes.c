/*
 * NCCL bytes (ana_nccl_bytes.c): nccl_coll events matched to NCCL kernels,
 * the bandwidths computed from them, and what the session's NCCL section
 * and the job report (text, JSON, job.digest) show, on hand-built NDJSON
 * sessions.
 *
 * Why: bytes are only as good as the match. The k-th collective of a
 * communicator must land on the k-th kernel of its stream; a communicator
 * whose counts or kinds disagree must get no bytes at all, with the note
 * saying why; bus bandwidth must use NCCL's factors with the
 * communicator's size (a 2-rank AllGather moves half its size over the
 * bus, an AllReduce all of it), and a session without the plugin's
 * events must say how to get them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "ana_fixture.h"
#include "analyze/ana_job.h"
#include "analyze/ana_job_digest_file.h"
#include "analyze/ana_nccl.h"
#include "present/report/report_job.h"

TU_TEMP_DIR_FIXTURES(dir, "nccl-bytes")

#define AR_K "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#define AG_K "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#define BC_K "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#define B 2000000ull /* after the fixture's session start */

static void nccl_kernel(af *f, unsigned stream, uint64_t start, uint64_t end, const char *name)
{
    af_kernel(f, (af_k){.dev = 0, .stream = stream, .start = start, .end = end, .name = name});
}

/* One rank of a 2-rank job: AllReduce 1e6 f32 (1 ms), AllReduce 250000
 * f32 (0.5 ms), AllGather 500000 f32 per rank (1 ms), and a compute
 * kernel; with_events: the plugin's nccl_coll events too. */
static gpufl_trace *rank_session(const char *name, int rank, bool with_events)
{
    af f = {.end_ns = B + 10000000};
    af_kernel(&f, (af_k){.dev = 0, .stream = 1, .start = B, .end = B + 50000, .name = "gemm"});
    nccl_kernel(&f, 7, B + 100000, B + 1100000, AR_K);
    nccl_kernel(&f, 7, B + 2000000, B + 2500000, AR_K);
    nccl_kernel(&f, 7, B + 3000000, B + 4000000, AG_K);
    if (with_events) {
        af_nccl(&f, B + 50000, 0xabcdef, rank, 2, 0, "AllReduce", 1000000, "ncclFloat32", 4);
        af_nccl(&f, B + 1900000, 0xabcdef, rank, 2, 1, "AllReduce", 250000, "ncclFloat32", 4);
        af_nccl(&f, B + 2900000, 0xabcdef, rank, 2, 2, "AllGather", 500000, "ncclFloat32", 4);
    }
    return af_open(&f, dir, name);
}

static void session_bytes_matched(void **state)
{
    (void)state;
    gpufl_trace *t = rank_session("s", 0, true);
    gpufl__nccl_ops o;
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    assert_int_equal(o.n, 3);
    assert_int_equal(o.recorded, 3);
    assert_int_equal(o.matched, 3);
    assert_string_equal(o.bytes_note, "");
    assert_true(o.op[0].has_bytes && o.op[0].bytes == 4000000 && o.op[0].nranks == 2);
    assert_true(o.op[1].has_bytes && o.op[1].bytes == 1000000);
    assert_true(o.op[2].has_bytes && o.op[2].bytes == 2000000 && o.op[2].api_coll == GFL_NCCL_ALL_GATHER);
    gpufl__nccl_row *rows;
    size_t n;
    assert_int_equal(gpufl__nccl_summary_of(&o, &rows, &n), 0);
    assert_int_equal(n, 2);
    /* AllReduce: 5e6 bytes in 1.5 ms; n = 2: bus factor 2(n-1)/n = 1 */
    assert_int_equal(rows[0].coll, GFL_NCCL_ALL_REDUCE);
    assert_int_equal(rows[0].bytes, 5000000);
    assert_int_equal(rows[0].bw_ns, 1500000);
    assert_true(rows[0].alg_bytes == 5e6 && rows[0].bus_bytes == 5e6);
    /* AllGather: 2e6 bytes a rank, size 4e6, bus factor (n-1)/n = 0.5 */
    assert_int_equal(rows[1].coll, GFL_NCCL_ALL_GATHER);
    assert_true(rows[1].alg_bytes == 4e6 && rows[1].bus_bytes == 2e6);
    free(rows);
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);
}

static void bw_factors(void **state)
{
    (void)state;
    double a, b;
    assert_true(gpufl__nccl_bw_bytes(GFL_NCCL_ALL_REDUCE, 1000, 8, &a, &b));
    assert_true(a == 1000 && b == 1750); /* 2 x 7/8 */
    assert_true(gpufl__nccl_bw_bytes(GFL_NCCL_REDUCE_SCATTER, 1000, 4, &a, &b));
    assert_true(a == 4000 && b == 3000); /* size x 4, x 3/4 */
    assert_true(gpufl__nccl_bw_bytes(GFL_NCCL_BROADCAST, 1000, 0, &a, &b));
    assert_true(a == 1000 && b == 1000);
    assert_true(gpufl__nccl_bw_bytes(GFL_NCCL_SEND, 10, 0, &a, &b));
    assert_false(gpufl__nccl_bw_bytes(GFL_NCCL_ALL_REDUCE, 1000, 0, &a, &b)); /* n unknown */
    assert_false(gpufl__nccl_bw_bytes(GFL_NCCL_OTHER, 1000, 2, &a, &b));
    assert_int_equal(gpufl__nccl_coll_of_func("AllReduce"), GFL_NCCL_ALL_REDUCE);
    assert_int_equal(gpufl__nccl_coll_of_func("Recv"), GFL_NCCL_RECV);
    assert_int_equal(gpufl__nccl_coll_of_func("AlltoAll"), GFL_NCCL_OTHER);
    assert_int_equal(gpufl__nccl_coll_of_func(NULL), GFL_NCCL_NONE);
}

/* Sessions whose events cannot be matched: no bytes, and the reason. */
static void refused_matches(void **state)
{
    (void)state;
    gpufl__nccl_ops o;
    /* counts disagree: 3 kernels, 2 events */
    af f = {.end_ns = B + 10000000};
    nccl_kernel(&f, 7, B + 100000, B + 200000, AR_K);
    nccl_kernel(&f, 7, B + 300000, B + 400000, AR_K);
    nccl_kernel(&f, 7, B + 500000, B + 600000, AR_K);
    af_nccl(&f, B, 0x11, 0, 2, 0, "AllReduce", 10, "ncclFloat32", 4);
    af_nccl(&f, B + 250000, 0x11, 0, 2, 1, "AllReduce", 10, "ncclFloat32", 4);
    gpufl_trace *t = af_open(&f, dir, "counts");
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    assert_int_equal(o.matched, 0);
    for (size_t i = 0; i < o.n; i++)
        assert_false(o.op[i].has_bytes);
    if (!strstr(o.bytes_note, "2 collectives recorded but 3 NCCL kernels on its stream"))
        fail_msg("note: %s", o.bytes_note);
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);

    /* kinds disagree */
    f = (af){.end_ns = B + 10000000};
    nccl_kernel(&f, 7, B + 100000, B + 200000, AR_K);
    af_nccl(&f, B, 0x11, 0, 2, 0, "Broadcast", 10, "ncclFloat32", 4);
    t = af_open(&f, dir, "kinds");
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    assert_false(o.op[0].has_bytes);
    if (!strstr(o.bytes_note, "#1 is Broadcast but kernel #1 of its stream is AllReduce"))
        fail_msg("note: %s", o.bytes_note);
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);

    /* two communicators, one stream */
    f = (af){.end_ns = B + 10000000};
    nccl_kernel(&f, 7, B + 100000, B + 200000, AR_K);
    nccl_kernel(&f, 7, B + 300000, B + 400000, AR_K);
    af_nccl(&f, B, 0x11, 0, 2, 0, "AllReduce", 10, "ncclFloat32", 4);
    af_nccl(&f, B + 250000, 0x22, 0, 2, 0, "AllReduce", 10, "ncclFloat32", 4);
    t = af_open(&f, dir, "lanes");
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    assert_int_equal(o.matched, 0);
    if (!strstr(o.bytes_note, "2 NCCL communicator(s) recorded but 1 NCCL stream(s)"))
        fail_msg("note: %s", o.bytes_note);
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);

    /* no events at all: how to get them */
    f = (af){.end_ns = B + 10000000};
    nccl_kernel(&f, 7, B + 100000, B + 200000, AR_K);
    t = af_open(&f, dir, "none");
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    assert_int_equal(o.recorded, 0);
    assert_string_equal(o.bytes_note, "bytes: not recorded (run under gpufl run, which sets NCCL_PROFILER_PLUGIN, "
                                      "or set it yourself)");
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);
}

/* Two communicators on two streams, paired by first use; one collective
 * of a datatype nobody can size. */
static void two_communicators(void **state)
{
    (void)state;
    af f = {.end_ns = B + 10000000};
    nccl_kernel(&f, 7, B + 100000, B + 200000, AR_K);
    nccl_kernel(&f, 9, B + 150000, B + 300000, BC_K);
    nccl_kernel(&f, 7, B + 400000, B + 500000, AR_K);
    af_nccl(&f, B, 0xa, 1, 4, 0, "AllReduce", 100, "ncclFloat64", 8);
    af_nccl(&f, B + 10, 0xb, 1, 4, 0, "Broadcast", 64, NULL, 0);
    af_nccl(&f, B + 350000, 0xa, 1, 4, 1, "AllReduce", 3, "ncclInt8", 1);
    gpufl_trace *t = af_open(&f, dir, "two");
    gpufl__nccl_ops o;
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    assert_int_equal(o.n, 3);
    assert_true(o.op[0].has_bytes && o.op[0].bytes == 800 && o.op[0].nranks == 4);
    assert_false(o.op[1].has_bytes); /* its datatype was not sized */
    assert_int_equal(o.op[1].api_coll, GFL_NCCL_BROADCAST);
    assert_true(o.op[2].has_bytes && o.op[2].bytes == 3);
    assert_int_equal(o.matched, 2);
    if (!strstr(o.bytes_note, "2 communicators paired with NCCL streams by order of first use") ||
        !strstr(o.bytes_note, "communicator 000000000000000b: 1 collective(s) of an unknown datatype"))
        fail_msg("note: %s", o.bytes_note);
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);
}

static char *render_text(const gpufl__job_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_int_equal(gpufl__report_job_text(r, 10, m), 0);
    fclose(m);
    return buf;
}

static json_t *render_json(const gpufl__job_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_int_equal(gpufl__report_job_json(r, 10, m), 0);
    fclose(m);
    json_error_t e;
    json_t *j = json_loads(buf, 0, &e);
    if (!j)
        fail_msg("job JSON: %s", e.text);
    free(buf);
    return j;
}

static json_t *coll_of(json_t *rank, const char *name)
{
    json_t *arr = json_object_get(rank, "collectives"), *c;
    size_t i;
    json_array_foreach(arr, i, c) if (!strcmp(json_string_value(json_object_get(c, "collective")), name)) return c;
    fail_msg("no %s row", name);
    return NULL;
}

static void load_ranks(gpufl__job_rank *ranks, bool second_has_events)
{
    for (int i = 0; i < 2; i++) {
        char name[32], path[4200];
        snprintf(name, sizeof name, "rank-%d", i);
        gpufl_trace *t = rank_session(name, i, i == 0 || second_has_events);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        assert_int_equal(gpufl__job_rank_digest(t, path, &ranks[i]), 0);
        gpufl_trace_close(t);
    }
}

/* The job report of two ranks: bytes, algorithm and bus bandwidth per
 * collective kind and rank, in text and JSON, and through job.digest. */
static void job_report_bytes(void **state)
{
    (void)state;
    gpufl__job_rank ranks[2];
    load_ranks(ranks, true);
    assert_int_equal(ranks[1].nccl_recorded, 3);
    assert_true(ranks[1].coll[2].has_bytes && ranks[1].coll[2].bytes == 2000000 && ranks[1].coll[2].nranks == 2);

    /* job.digest keeps them */
    char err[512];
    assert_int_equal(gpufl__job_digest_write(dir, ranks, 2, err, sizeof err), 0);
    gpufl__job_rank *back = NULL;
    size_t nback = 0;
    if (!gpufl__job_digest_read(dir, &back, &nback, err, sizeof err))
        fail_msg("digest: %s", err);
    assert_int_equal(nback, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(back[i].ncoll, ranks[i].ncoll);
        assert_int_equal(back[i].nccl_recorded, 3);
        for (size_t k = 0; k < back[i].ncoll; k++) {
            assert_int_equal(back[i].coll[k].bytes, ranks[i].coll[k].bytes);
            assert_int_equal(back[i].coll[k].has_bytes, 1);
            assert_int_equal(back[i].coll[k].nranks, 2);
            assert_int_equal(back[i].coll[k].api_coll, ranks[i].coll[k].api_coll);
        }
    }

    gpufl__job_report r;
    assert_int_equal(gpufl__job_report_build(back, nback, &r), 0);
    char *text = render_text(&r);
    /* AllReduce: 5 MB in 1.5 ms, bus = alg for 2 ranks; AllGather: size 2 x 2 MB in 1 ms, half of it on the bus */
    if (!strstr(text, "5.000 MB, alg bw 3.33 GB/s, bus bw 3.33 GB/s") ||
        !strstr(text, "2.000 MB, alg bw 4.00 GB/s, bus bw 2.00 GB/s"))
        fail_msg("job text:\n%s", text);
    free(text);
    json_t *j = render_json(&r);
    json_t *r1 = json_array_get(json_object_get(j, "ranks"), 1);
    json_t *ag = coll_of(r1, "AllGather"), *ar = coll_of(r1, "AllReduce");
    assert_int_equal(json_integer_value(json_object_get(ag, "bytes")), 2000000);
    assert_true(json_number_value(json_object_get(ag, "algbw_gbps")) == 4.0);
    assert_true(json_number_value(json_object_get(ag, "busbw_gbps")) == 2.0);
    assert_int_equal(json_integer_value(json_object_get(ar, "bytes")), 5000000);
    assert_int_equal(json_integer_value(json_object_get(ar, "bytes_known")), 2);
    assert_int_equal(json_integer_value(json_object_get(r1, "nccl_recorded")), 3);
    assert_string_equal(json_string_value(json_object_get(r1, "bytes_note")), "");
    json_decref(j);
    gpufl__job_report_free(&r);
    for (size_t i = 0; i < 2; i++) {
        gpufl__job_rank_free(&ranks[i]);
        gpufl__job_rank_free(&back[i]);
    }
    free(back);
}

/* A rank without the plugin's events: no bytes, and how to get them. */
static void job_report_without_plugin(void **state)
{
    (void)state;
    gpufl__job_rank ranks[2];
    load_ranks(ranks, false);
    gpufl__job_report r;
    assert_int_equal(gpufl__job_report_build(ranks, 2, &r), 0);
    char *text = render_text(&r);
    if (!strstr(text, "(bytes: not recorded (run under gpufl run, which sets NCCL_PROFILER_PLUGIN, or set it "
                      "yourself))"))
        fail_msg("job text:\n%s", text);
    free(text);
    json_t *j = render_json(&r);
    json_t *r1 = json_array_get(json_object_get(j, "ranks"), 1);
    assert_true(json_is_null(json_object_get(coll_of(r1, "AllReduce"), "bytes")));
    assert_true(json_is_null(json_object_get(coll_of(r1, "AllReduce"), "busbw_gbps")));
    assert_int_equal(json_integer_value(json_object_get(
                         coll_of(json_array_get(json_object_get(j, "ranks"), 0), "AllReduce"), "bytes")),
                     5000000);
    json_decref(j);
    gpufl__job_report_free(&r);
    gpufl__job_rank_free(&ranks[0]);
    gpufl__job_rank_free(&ranks[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(session_bytes_matched), cmocka_unit_test(bw_factors),
        cmocka_unit_test(refused_matches),       cmocka_unit_test(two_communicators),
        cmocka_unit_test(job_report_bytes),      cmocka_unit_test(job_report_without_plugin),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
