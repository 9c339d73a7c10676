/*
 * `gpufl replay-check`'s comparison (src/analyze/ana_replay*.c): did two
 * runs do the same GPU work?
 *
 * Why: a determinism check that calls two different runs the same lets a
 * non-deterministic training job through CI, and one that cannot say
 * where they part sends the user to diff a million kernels by hand. So,
 * on hand-built sessions of one small program (two steps of a few
 * kernels, a copy and a memset on one stream, collectives on another,
 * three allocations) whose answers are known: identical runs, and runs
 * whose stream ids differ, are the same; a renamed kernel, a changed grid,
 * an extra kernel, a missing allocation, a different allocation size and
 * streams started in another order each differ at the right op, with the
 * right kind of change; the framework's blocks and allocator records
 * (those taken at an interval left out); a stream only one run has; the time, op and scope ranges and the ignore
 * options select and loosen what they say; the alignment (insertions,
 * deletions, replacements, a tail that never re-synchronises, the cap on
 * divergences) on plain arrays.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "ana_fixture.h"
#include "analyze/ana_replay.h"
#include "analyze/ana_replay_internal.h"
#include "fs_util.h"

TU_TEMP_DIR_FIXTURES(work, "replay-check")

enum {
    V_RENAME = 1,        /* step 2's relu is a gelu */
    V_GRID = 2,          /* step 2's gemm has grid 128 */
    V_EXTRA = 4,         /* a kernel more in step 2, before softmax */
    V_NO_ALLOC = 8,      /* the 2 MiB allocation is missing */
    V_ALLOC_SIZE = 16,   /* it is 3 MiB */
    V_SWAP_STREAMS = 32, /* the collectives' stream starts work first */
    V_IDS = 64,          /* other stream ids, same order */
    V_FRAMEWORK = 128,   /* PyTorch's layer: blocks and allocator records */
    V_BLOCK = 256,       /* with it: the second block is 512 KiB, not 256 */
    V_SAMPLES = 512,     /* with it: three more "sample" records (timing) */
    V_RESERVED = 1024,   /* with it: the "scope" record reserves more */
    V_THIRD = 2048,      /* a third stream (id 30) runs a kernel */
    V_TIES = 4096,       /* with V_FRAMEWORK: two frees of one instant in the other order */
};

#define T(x) (AF_START + (x))

/* The framework's layer: two blocks and a free on device 0, allocator
 * records of reason "sample" (2, or 5 with V_SAMPLES) and "scope". */
static void framework(af *f, unsigned v)
{
    for (int i = 0; i < 2; i++)
        af_line(f, AF_DEVICE,
                "{\"type\":\"mem_alloc\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":7,\"corr\":0,"
                "\"address\":\"0x%x\",\"bytes\":%u,\"kind\":\"device\",\"framework\":true}",
                (unsigned long long)T(2500 + i * 10), 0x100000 + i * 0x80000,
                i && (v & V_BLOCK) ? 512u << 10 : 256u << 10);
    af_line(f, AF_DEVICE,
            "{\"type\":\"mem_free\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":7,\"corr\":0,"
            "\"address\":\"0x100000\",\"bytes\":%u,\"kind\":\"device\",\"framework\":true}",
            (unsigned long long)T(70000), 256u << 10);
    for (int i = 0; i < 2; i++) /* a snapshot's frees: one instant, the order of the framework's table */
        af_line(f, AF_DEVICE,
                "{\"type\":\"mem_free\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":7,\"corr\":0,"
                "\"address\":\"0x%x\",\"bytes\":%u,\"kind\":\"device\",\"framework\":true}",
                (unsigned long long)T(90000), 0x200000 + i * 0x10000, (i == 0) == !(v & V_TIES) ? 65536u : 32768u);
    unsigned samples = v & V_SAMPLES ? 5 : 2;
    for (unsigned i = 0; i < samples; i++)
        af_line(f, AF_DEVICE,
                "{\"type\":\"allocator\",\"ts_ns\":%llu,\"device\":0,\"framework\":\"pytorch\","
                "\"reason\":\"sample\",\"allocated\":%u,\"reserved\":2097152,\"active\":%u,\"inactive_split\":0}",
                (unsigned long long)T(3000 + i * 100), 1000 + i, 1000 + i);
    af_line(f, AF_DEVICE,
            "{\"type\":\"allocator\",\"ts_ns\":%llu,\"device\":0,\"framework\":\"pytorch\","
            "\"reason\":\"scope\",\"allocated\":524288,\"reserved\":%u,\"active\":524288,\"inactive_split\":0}",
            (unsigned long long)T(50000), v & V_RESERVED ? 4194304u : 2097152u);
}

/* The program: stream 7 (S_COMPUTE) runs, in scope step #1 (id 1; fwd, id
 * 3, inside it): gemm [0], relu [1] (in fwd), then a copy [2] and a memset
 * [3]; in step #2 (id 2): gemm [4], relu [5], softmax [6]. Stream 13
 * runs two allreduces. Device 0 allocates 1 MiB, 2 MiB, frees 1 MiB. */
static gpufl_trace *program(const char *name, unsigned v)
{
    af f = {.end_ns = T(200000)};
    unsigned compute = v & V_IDS ? 21 : 7, comm = v & V_IDS ? 22 : 13;
    uint64_t comm_at = v & V_SWAP_STREAMS ? 500 : 30000;
    af_device(&f, 0, "GPU", 80ull << 30);
    af_scope(&f, 1, 1, 0, 0, "step", T(1000), T(50000));
    af_scope(&f, 1, 3, 1, 1, "fwd", T(4000), T(20000));
    af_scope(&f, 1, 2, 0, 0, "step", T(60000), T(110000));
    af_kernel(
        &f,
        (af_k){.stream = compute, .start = T(2000), .end = T(3000), .name = "gemm", .grid = 64, .tid = 1, .scope = 1});
    af_kernel(&f, (af_k){.stream = compute, .start = T(5000), .end = T(6000), .name = "relu", .tid = 1, .scope = 3});
    af_copy(&f, 0, compute, T(7000), T(8000), "HtoD", "pinned", "device", 4096, 1, T(6900));
    af_memset(&f, 0, compute, T(9000), T(9500), 1024);
    af_kernel(&f, (af_k){.stream = comm, .start = T(comm_at), .end = T(comm_at + 100), .name = "allreduce", .tid = 2});
    af_kernel(
        &f, (af_k){.stream = comm, .start = T(comm_at + 200), .end = T(comm_at + 300), .name = "allreduce", .tid = 2});
    af_kernel(&f, (af_k){.stream = compute,
                         .start = T(61000),
                         .end = T(62000),
                         .name = "gemm",
                         .grid = v & V_GRID ? 128 : 64,
                         .tid = 1,
                         .scope = 2});
    af_kernel(&f, (af_k){.stream = compute,
                         .start = T(63000),
                         .end = T(64000),
                         .name = v & V_RENAME ? "gelu" : "relu",
                         .tid = 1,
                         .scope = 2});
    if (v & V_EXTRA)
        af_kernel(&f,
                  (af_k){.stream = compute, .start = T(64500), .end = T(64800), .name = "extra", .tid = 1, .scope = 2});
    af_kernel(&f,
              (af_k){.stream = compute, .start = T(65000), .end = T(66000), .name = "softmax", .tid = 1, .scope = 2});
    af_mem(&f, false, 0, T(1500), 0x100000, 1 << 20, "device");
    if (!(v & V_NO_ALLOC))
        af_mem(&f, false, 0, T(1600), 0x300000, v & V_ALLOC_SIZE ? 3 << 20 : 2 << 20, "device");
    af_mem(&f, true, 0, T(120000), 0x100000, 1 << 20, "device");
    if (v & V_FRAMEWORK)
        framework(&f, v);
    if (v & V_THIRD)
        af_kernel(&f, (af_k){.stream = 30, .start = T(80000), .end = T(80100), .name = "side", .tid = 3});
    return af_open(&f, work, name);
}

typedef struct pair {
    gpufl_trace *a, *b;
    gpufl__replay r;
    char err[512];
    int rc;
} pair;

static void check(pair *p, unsigned va, unsigned vb, const gpufl__replay_options *o)
{
    p->a = program("a", va);
    p->b = program("b", vb);
    p->rc = gpufl__replay_check(p->a, p->b, o, &p->r, p->err, sizeof p->err);
}

static void pair_free(pair *p)
{
    gpufl__replay_free(&p->r);
    gpufl_trace_close(p->a);
    gpufl_trace_close(p->b);
}

/* The lane of kind (and, for streams, A's stream id). */
static const gpufl__rp_lane *lane(const gpufl__replay *r, uint8_t kind, uint32_t stream_a)
{
    for (size_t i = 0; i < r->nlanes; i++)
        if (r->lanes[i].kind == kind && (kind != GPUFL__RP_LANE_STREAM || r->lanes[i].stream_a == stream_a))
            return &r->lanes[i];
    fail_msg("no lane of kind %u, stream %u", kind, stream_a);
    return NULL;
}

static void test_identical_runs_are_the_same(void **state)
{
    (void)state;
    pair p;
    check(&p, 0, 0, NULL);
    assert_int_equal(p.rc, 0);
    assert_true(p.r.same);
    assert_int_equal(p.r.ndiffer, 0);
    assert_int_equal(p.r.nlanes, 3); /* two streams, the allocations */
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_STREAM, 7)->n_a, 7);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_STREAM, 13)->n_b, 2);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_ALLOCS, 0)->n_a, 3);
    assert_int_equal(p.r.ops_a, 12);
    pair_free(&p);
}

static void test_other_stream_ids_same_order_are_the_same(void **state)
{
    (void)state;
    pair p;
    check(&p, 0, V_IDS, NULL);
    assert_int_equal(p.rc, 0);
    assert_true(p.r.same);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_STREAM, 7);
    assert_int_equal(l->stream_b, 21);
    assert_false(l->mapped);
    pair_free(&p);
}

static void test_renamed_kernel(void **state)
{
    (void)state;
    pair p;
    check(&p, 0, V_RENAME, NULL);
    assert_int_equal(p.rc, 0);
    assert_false(p.r.same);
    assert_int_equal(p.r.ndiffer, 1);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_STREAM, 7);
    assert_false(l->same);
    assert_int_equal(l->change, GPUFL__RP_CH_NAME);
    assert_int_equal(l->at_a, 5);
    assert_int_equal(l->at_b, 5);
    assert_int_equal(l->span_a, 1);
    assert_int_equal(l->span_b, 1);
    assert_int_equal(l->changed, 1);
    assert_int_equal(l->divergences, 1);
    /* diff lines: 3 common before, '-' relu, '+' gelu, the common softmax after */
    assert_int_equal(l->nlines, 6);
    assert_int_equal(l->lines[2].tag, ' ');
    assert_int_equal(l->lines[2].index_a, 4);
    assert_int_equal(l->lines[3].tag, '-');
    assert_string_equal(p.r.keys[l->lines[3].key].name, "relu");
    assert_int_equal(l->lines[3].at_ns, 63000);
    assert_int_equal(l->lines[4].tag, '+');
    assert_string_equal(p.r.keys[l->lines[4].key].name, "gelu");
    assert_int_equal(l->lines[4].index_b, 5);
    assert_int_equal(l->lines[5].index_a, 6);
    /* counts: one relu fewer, one gelu more */
    assert_int_equal(l->counts_total, 2);
    /* the list of divergences: this one */
    assert_int_equal(l->ndivs, 1);
    assert_int_equal(l->divs[0].change, GPUFL__RP_CH_NAME);
    assert_int_equal(l->divs[0].at_a, 5);
    assert_string_equal(p.r.keys[l->divs[0].key_a].name, "relu");
    assert_string_equal(p.r.keys[l->divs[0].key_b].name, "gelu");
    pair_free(&p);
}

static void test_changed_launch_config(void **state)
{
    (void)state;
    pair p;
    check(&p, 0, V_GRID, NULL);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_STREAM, 7);
    assert_int_equal(l->change, GPUFL__RP_CH_CONFIG);
    assert_int_equal(l->fields, GPUFL__RP_F_GRID);
    assert_int_equal(l->at_a, 4);
    assert_false(p.r.same);
    pair_free(&p);
    /* two changed ops in a row: one divergence of two ops, named by its first */
    check(&p, 0, V_GRID | V_RENAME, NULL);
    l = lane(&p.r, GPUFL__RP_LANE_STREAM, 7);
    assert_int_equal(l->change, GPUFL__RP_CH_CONFIG);
    assert_int_equal(l->divergences, 1);
    assert_int_equal(l->changed, 2);
    assert_int_equal(l->span_a, 2);
    assert_int_equal(l->nlines, 3 + 2 + 2 + 1);
    pair_free(&p);
}

static void test_extra_kernel(void **state)
{
    (void)state;
    pair p;
    check(&p, 0, V_EXTRA, NULL);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_STREAM, 7);
    assert_int_equal(l->change, GPUFL__RP_CH_EXTRA);
    assert_int_equal(l->at_a, 6);
    assert_int_equal(l->at_b, 6);
    assert_int_equal(l->span_a, 0);
    assert_int_equal(l->span_b, 1);
    assert_int_equal(l->only_b, 1);
    assert_int_equal(l->only_a, 0);
    assert_int_equal(l->n_b, 8);
    /* the same pair the other way: a kernel missing in B */
    pair q;
    check(&q, V_EXTRA, 0, NULL);
    l = lane(&q.r, GPUFL__RP_LANE_STREAM, 7);
    assert_int_equal(l->change, GPUFL__RP_CH_MISSING);
    assert_int_equal(l->span_a, 1);
    assert_int_equal(l->only_a, 1);
    pair_free(&q);
    pair_free(&p);
}

static void test_missing_allocation(void **state)
{
    (void)state;
    pair p;
    check(&p, 0, V_NO_ALLOC, NULL);
    assert_false(p.r.same);
    assert_true(lane(&p.r, GPUFL__RP_LANE_STREAM, 7)->same);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_ALLOCS, 0);
    assert_int_equal(l->change, GPUFL__RP_CH_MISSING);
    assert_int_equal(l->at_a, 1);
    assert_int_equal(p.r.keys[l->lines[1].key].bytes, 2 << 20);
    assert_int_equal(p.r.keys[l->lines[1].key].what, GPUFL__RP_ALLOC);
    pair_free(&p);
}

static void test_allocation_size(void **state)
{
    (void)state;
    pair p;
    check(&p, 0, V_ALLOC_SIZE, NULL);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_ALLOCS, 0);
    assert_int_equal(l->change, GPUFL__RP_CH_SIZE);
    assert_int_equal(l->at_a, 1);
    assert_int_equal(l->at_b, 1);
    pair_free(&p);
}

static void test_streams_started_in_another_order(void **state)
{
    (void)state;
    pair p;
    check(&p, 0, V_SWAP_STREAMS | V_IDS, NULL);
    assert_false(p.r.same);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_STREAM, 7);
    assert_int_equal(l->stream_b, 22); /* B's first stream: the collectives */
    assert_int_equal(l->at_a, 0);
    assert_int_equal(l->at_b, 0);
    assert_true(l->looks_like);
    assert_int_equal(l->looks_like_b, 21);
    pair_free(&p);

    /* paired by hand, the rest by order: the same */
    gpufl__replay_options o;
    gpufl__replay_options_default(&o);
    gpufl__rp_pair map = {7, 21};
    o.stream_map = &map;
    o.nstream_map = 1;
    check(&p, 0, V_SWAP_STREAMS | V_IDS, &o);
    assert_int_equal(p.rc, 0);
    assert_true(p.r.same);
    assert_true(lane(&p.r, GPUFL__RP_LANE_STREAM, 7)->mapped);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_STREAM, 13)->stream_b, 22);
    pair_free(&p);

    /* a stream a session does not have is refused, naming the side */
    map = (gpufl__rp_pair){7, 99};
    check(&p, 0, V_IDS, &o);
    assert_int_equal(p.rc, GPUFL_EINVAL);
    assert_non_null(strstr(p.err, "B has no stream 99"));
    assert_non_null(strstr(p.err, "21, 22"));
    pair_free(&p);
}

static void test_time_range(void **state)
{
    (void)state;
    gpufl__replay_options o;
    gpufl__replay_options_default(&o);
    o.to_ns = 50000; /* step 1 only: the rename is after it */
    o.has_to = true;
    pair p;
    check(&p, 0, V_RENAME, &o);
    assert_true(p.r.same);
    assert_false(p.r.graphs_compared);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_STREAM, 7)->n_a, 4);
    pair_free(&p);

    gpufl__replay_options_default(&o);
    o.from_ns = 60000; /* step 2: indices stay those of the whole lane */
    check(&p, 0, V_RENAME, &o);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_STREAM, 7);
    assert_false(l->same);
    assert_int_equal(l->n_a, 3);
    assert_int_equal(l->at_a, 5);
    assert_int_equal(l->lines[0].index_a, 4);
    pair_free(&p);
}

static void test_op_range(void **state)
{
    (void)state;
    gpufl__replay_options o;
    gpufl__replay_options_default(&o);
    o.to_op = 5;
    o.has_to_op = true;
    pair p;
    check(&p, 0, V_RENAME, &o);
    assert_true(p.r.same);
    pair_free(&p);
    o.from_op = 5;
    o.to_op = 6;
    check(&p, 0, V_RENAME, &o);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_STREAM, 7);
    assert_false(l->same);
    assert_int_equal(l->n_a, 1);
    assert_int_equal(l->at_a, 5);
    /* the allocations' range too: index 1 only (the 2 MiB one) */
    o.from_op = 1;
    o.to_op = 2;
    pair_free(&p);
    check(&p, 0, V_ALLOC_SIZE, &o);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_ALLOCS, 0)->n_a, 1);
    assert_false(p.r.same);
    pair_free(&p);
}

static void test_scope(void **state)
{
    (void)state;
    gpufl__replay_options o;
    gpufl__replay_options_default(&o);
    o.scope = "step";
    o.occurrence = 1;
    pair p;
    check(&p, 0, V_RENAME, &o);
    assert_int_equal(p.rc, 0);
    assert_true(p.r.same);
    /* gemm and relu (inside fwd, nested in step #1); the collectives ran outside any scope */
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_STREAM, 7)->n_a, 2);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_STREAM, 13)->n_a, 0);
    pair_free(&p);

    o.occurrence = 2;
    check(&p, 0, V_RENAME, &o);
    assert_false(p.r.same);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_STREAM, 7)->at_a, 5);
    pair_free(&p);

    o.occurrence = 0; /* every step */
    check(&p, 0, 0, &o);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_STREAM, 7)->n_a, 5);
    pair_free(&p);

    o.occurrence = 3;
    check(&p, 0, 0, &o);
    assert_int_equal(p.rc, GPUFL_EINVAL);
    assert_string_equal(p.err, "A: scope 'step' occurs 2 times; occurrence #3 was asked for");
    pair_free(&p);

    o.scope = "nope";
    o.occurrence = 0;
    check(&p, 0, 0, &o);
    assert_int_equal(p.rc, GPUFL_EINVAL);
    assert_string_equal(p.err, "A: no gpufl scope is named 'nope'");
    pair_free(&p);
}

static void test_ignore_options(void **state)
{
    (void)state;
    gpufl__replay_options o;
    gpufl__replay_options_default(&o);
    regex_t re;
    assert_int_equal(regcomp(&re, "^(relu|gelu)$", REG_EXTENDED | REG_NOSUB), 0);
    o.ignore_names = &re;
    pair p;
    check(&p, 0, V_RENAME, &o);
    assert_true(p.r.same);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_STREAM, 7)->n_a, 5);
    pair_free(&p);
    regfree(&re);

    gpufl__replay_options_default(&o);
    o.ignore_config = true;
    check(&p, 0, V_GRID, &o);
    assert_true(p.r.same);
    pair_free(&p);
    check(&p, 0, V_RENAME, &o); /* names still count */
    assert_false(p.r.same);
    pair_free(&p);

    gpufl__replay_options_default(&o);
    o.ignore_allocs = true;
    check(&p, 0, V_ALLOC_SIZE, &o);
    assert_true(p.r.same);
    assert_int_equal(p.r.nlanes, 2);
    pair_free(&p);
}

static void test_framework_layer(void **state)
{
    (void)state;
    pair p;
    check(&p, V_FRAMEWORK, V_FRAMEWORK | V_SAMPLES, NULL);
    assert_int_equal(p.rc, 0);
    assert_true(p.r.same); /* "sample" records follow the clock: left out */
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_BLOCKS, 0)->n_a, 5);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_ALLOCATOR, 0)->n_a, 1);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_ALLOCS, 0)->n_a, 3); /* the driver's, apart */
    pair_free(&p);

    check(&p, V_FRAMEWORK, V_FRAMEWORK | V_TIES, NULL);
    assert_true(p.r.same); /* events of one instant have no order between them */
    pair_free(&p);

    check(&p, V_FRAMEWORK, V_FRAMEWORK | V_BLOCK, NULL);
    assert_int_equal(p.r.ndiffer, 1);
    const gpufl__rp_lane *l = lane(&p.r, GPUFL__RP_LANE_BLOCKS, 0);
    assert_int_equal(l->change, GPUFL__RP_CH_SIZE);
    assert_int_equal(l->at_a, 1);
    pair_free(&p);

    check(&p, V_FRAMEWORK, V_FRAMEWORK | V_RESERVED, NULL);
    l = lane(&p.r, GPUFL__RP_LANE_ALLOCATOR, 0);
    assert_false(l->same);
    assert_int_equal(l->change, GPUFL__RP_CH_SIZE);
    assert_int_equal(p.r.keys[l->lines[0].key].reserved, 2097152);
    assert_string_equal(p.r.keys[l->lines[0].key].name, "scope");
    pair_free(&p);

    /* one run without the layer: its lanes are missing in B */
    check(&p, V_FRAMEWORK, 0, NULL);
    assert_int_equal(p.r.ndiffer, 2);
    assert_int_equal(lane(&p.r, GPUFL__RP_LANE_BLOCKS, 0)->change, GPUFL__RP_CH_MISSING);
    pair_free(&p);
}

static void test_stream_one_run_lacks(void **state)
{
    (void)state;
    pair p;
    check(&p, 0, V_THIRD, NULL);
    assert_false(p.r.same);
    assert_int_equal(p.r.ndiffer, 1);
    const gpufl__rp_lane *l = NULL;
    for (size_t i = 0; i < p.r.nlanes; i++)
        if (p.r.lanes[i].kind == GPUFL__RP_LANE_STREAM && !p.r.lanes[i].has_a)
            l = &p.r.lanes[i];
    assert_non_null(l);
    assert_int_equal(l->change, GPUFL__RP_CH_ONLY_B);
    assert_int_equal(l->stream_b, 30);
    assert_int_equal(l->only_b, 1);
    assert_int_equal(l->nlines, 1);
    assert_int_equal(l->lines[0].tag, '+');
    assert_int_equal(l->at_b, 0);
    pair_free(&p);

    /* outside the range it is no difference */
    gpufl__replay_options o;
    gpufl__replay_options_default(&o);
    o.to_ns = 70000;
    o.has_to = true;
    check(&p, 0, V_THIRD, &o);
    assert_true(p.r.same);
    pair_free(&p);
}

/* ---- the alignment on plain arrays ------------------------------------------------------- */

static uint32_t *seq(size_t n, uint32_t salt)
{
    uint32_t *v = malloc((n + 1) * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)(i * 2654435761u) ^ salt;
    return v;
}

static void test_align(void **state)
{
    (void)state;
    size_t n = 1000;
    uint32_t *a = seq(n, 0), *b = seq(n + 10, 0);
    gpufl__rp_align al;

    gpufl__rp_align_keys(a, n, b, n, 64, NULL, 0, &al);
    assert_true(al.same);

    b[500] = 7; /* one changed */
    gpufl__rp_align_keys(a, n, b, n, 64, NULL, 0, &al);
    assert_false(al.same);
    assert_int_equal(al.at_a, 500);
    assert_int_equal(al.span_a, 1);
    assert_int_equal(al.span_b, 1);
    assert_int_equal(al.changed, 1);
    assert_int_equal(al.divergences, 1);

    /* three inserted at 200 and the change at 500 further on */
    memmove(b + 203, b + 200, (n - 200) * sizeof *b);
    b[200] = b[201] = b[202] = 9;
    gpufl__rp_span spans[4];
    gpufl__rp_align_keys(a, n, b, n + 3, 64, spans, 4, &al);
    assert_int_equal(al.nspans, 2);
    assert_int_equal(spans[0].at_b, 200);
    assert_int_equal(spans[0].span_b, 3);
    assert_int_equal(spans[1].at_a, 500);
    assert_int_equal(spans[1].at_b, 503);
    assert_int_equal(spans[1].span_a, 1);
    gpufl__rp_align_keys(a, n, b, n + 3, 64, spans, 1, &al); /* room for one: the first */
    assert_int_equal(al.nspans, 1);
    assert_int_equal(al.at_a, 200);
    assert_int_equal(al.at_b, 200);
    assert_int_equal(al.span_a, 0);
    assert_int_equal(al.span_b, 3);
    assert_int_equal(al.divergences, 2);
    assert_int_equal(al.only_b, 3);
    assert_int_equal(al.changed, 1);

    /* the last two missing: a deletion at the very end */
    free(b);
    b = seq(n + 10, 0);
    gpufl__rp_align_keys(a, n, b, n - 2, 64, NULL, 0, &al);
    assert_int_equal(al.at_a, n - 2);
    assert_int_equal(al.span_a, 2);
    assert_int_equal(al.span_b, 0);
    assert_true(al.resynced);

    /* two replaced by five */
    memmove(b + 105, b + 102, (n - 102) * sizeof *b);
    for (int k = 100; k < 105; k++)
        b[k] = 5;
    gpufl__rp_align_keys(a, n, b, n + 3, 64, NULL, 0, &al);
    assert_int_equal(al.at_a, 100);
    assert_int_equal(al.span_a, 2);
    assert_int_equal(al.span_b, 5);
    assert_int_equal(al.changed, 2);
    assert_int_equal(al.only_b, 3);

    /* a tail that never agrees again */
    uint32_t *c = seq(n, 0x5a5a5a5a);
    memcpy(c, a, 300 * sizeof *c);
    gpufl__rp_align_keys(a, n, c, n, 64, NULL, 0, &al);
    assert_int_equal(al.at_a, 300);
    assert_false(al.resynced);
    assert_int_equal(al.unaligned_a, n - 300);
    assert_int_equal(al.unaligned_b, n - 300);

    /* a change past the window does not re-sync within it: 70 inserted */
    uint32_t *d = malloc((n + 70) * sizeof *d);
    memcpy(d, a, 10 * sizeof *d);
    for (int k = 0; k < 70; k++)
        d[10 + k] = 3;
    memcpy(d + 80, a + 10, (n - 10) * sizeof *d);
    gpufl__rp_align_keys(a, n, d, n + 70, 64, NULL, 0, &al);
    assert_false(al.resynced);
    gpufl__rp_align_keys(a, n, d, n + 70, 128, NULL, 0, &al);
    assert_true(al.resynced);
    assert_int_equal(al.span_b, 70);

    free(a);
    free(b);
    free(c);
    free(d);
}

static void test_align_caps_divergences(void **state)
{
    (void)state;
    size_t n = 200000;
    uint32_t *a = seq(n, 0), *b = seq(n, 0);
    for (size_t i = 5; i < n; i += 10)
        b[i] = 1; /* 20000 single changes */
    gpufl__rp_align al;
    gpufl__rp_align_keys(a, n, b, n, 64, NULL, 0, &al);
    assert_true(al.capped);
    assert_int_equal(al.divergences, GPUFL__RP_MAX_DIVERGENCES);
    assert_int_equal(al.changed, GPUFL__RP_MAX_DIVERGENCES);
    assert_int_equal(al.unaligned_a, n - 100005);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_identical_runs_are_the_same, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_stream_ids_same_order_are_the_same, setup, teardown),
        cmocka_unit_test_setup_teardown(test_renamed_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_launch_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extra_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_allocation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allocation_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streams_started_in_another_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_op_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scope, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ignore_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_framework_layer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_one_run_lacks, setup, teardown),
        cmocka_unit_test(test_align),
        cmocka_unit_test(test_align_caps_divergences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
