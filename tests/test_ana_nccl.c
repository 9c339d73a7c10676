/*
 * NCCL in one session (ana_nccl.c, ana_nccl_names.c) on hand-built traces:
 * kernel names of every NCCL generation, demangled and mangled, classified;
 * the NCCL kernels in start order with their collective refined from NCCL's
 * API range; comm/compute overlap per device (concurrent kernels on two
 * streams, nested NCCL kernels counted once, and against a naive reference
 * over random kernels); time per collective; the report's NCCL section in
 * text, JSON (and its schema) and HTML, and no section without NCCL.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "ana_fixture.h"
#include "analyze/ana_nccl.h"
#include "analyze/analysis.h"
#include "present/report/report_html.h"
#include "report_render.h"
#include "report_schema.h"

TU_TEMP_DIR_FIXTURES(dir, "ana-nccl")

enum { AR = GFL_NCCL_ALL_REDUCE, AG = GFL_NCCL_ALL_GATHER, RS = GFL_NCCL_REDUCE_SCATTER, BC = GFL_NCCL_BROADCAST };
enum { SR = GFL_NCCL_SEND_RECV, OT = GFL_NCCL_OTHER };
enum { RING = GFL_NCCL_ALGO_RING, TREE = GFL_NCCL_ALGO_TREE, SYM = GFL_NCCL_ALGO_SYMMETRIC };
enum { LL = GFL_NCCL_PROTO_LL, LL128 = GFL_NCCL_PROTO_LL128, SIMPLE = GFL_NCCL_PROTO_SIMPLE };
enum {
    FA = GFL_NCCL_FLAG_ALGO_SPECIALISED,
    FP = GFL_NCCL_FLAG_PROTO_SPECIALISED,
    FR = GFL_NCCL_FLAG_REDOP_SPECIALISED
};

typedef struct name_case {
    const char *name;
    bool nccl;
    uint8_t coll, algo, proto;
    const char *redop, *dtype;
    uint8_t flags;
} name_case;

static const name_case names[] = {
    /* 2.19 and later, demangled, with 2.22's and 2.19's parameters */
    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", true, AR, RING, LL, "Sum", "f32",
     FA | FP | FR},
    {"ncclDevKernel_AllReduce_Sum_u32_TREE_LL(ncclDevComm*, unsigned long, ncclWork*)", true, AR, TREE, LL, "Sum",
     "u32", FA | FP | FR},
    {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", true, SR, 0, 0, "", "", 0},
    {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", true, AG, RING, LL, "", "", FA | FP},
    {"ncclDevKernel_AllGatherV_RING_LL(ncclDevKernelArgsStorage<4096ul>)", true, AG, RING, LL, "", "", FA | FP},
    {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE(ncclDevKernelArgsStorage<4096ul>)", true, RS, RING, SIMPLE,
     "Sum", "bf16", FA | FP | FR},
    {"ncclDevKernel_Reduce_Sum_f8e4m3_NVLS_TREE_LL128(x)", true, GFL_NCCL_REDUCE, GFL_NCCL_ALGO_NVLS_TREE, LL128, "Sum",
     "f8e4m3", FA | FP | FR},
    {"ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)", true, BC, RING, LL, "", "", FA | FP},
    {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", true, OT, 0, 0, "", "", 0},
    {"ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", true, OT, 0, 0, "", "", 0},
    /* 2.19 and later, mangled (demangling off) */
    {"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE", true, AR, RING, LL, "Sum", "f32",
     FA | FP | FR},
    {"_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE", true, SR, 0, 0, "", "", 0},
    {"_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE", true, OT, 0, 0, "", "", 0},
    /* 2.8 to 2.18 */
    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", true, AR, RING, LL, "Sum", "f32",
     FP | FR},
    {"ncclKernel_AllReduce_COLLNET_DIRECT_LL_Sum___nv_bfloat16(ncclDevComm*, unsigned long, ncclWork*)", true, AR,
     GFL_NCCL_ALGO_COLLNET_DIRECT, LL, "Sum", "bf16", FP | FR},
    {"ncclKernel_ReduceScatter_NVLS_LL_Sum_uint64_t(ncclDevComm*, unsigned long, ncclWork*)", true, RS,
     GFL_NCCL_ALGO_NVLS, LL, "Sum", "u64", FP | FR},
    {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", true, SR, 0, 0, "", "", 0},
    {"ncclKernel_AllGather_TREE_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", true, AG, TREE, LL, "", "", FP},
    {"_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork", true, AR, RING, LL, "Sum", "f32", FP | FR},
    /* 2.7 and before */
    {"ncclAllReduceRingLLKernel_sum_f32(ncclColl)", true, AR, RING, LL, "sum", "f32", FP | FR},
    {"ncclReduceScatterTreeLLKernel_sum_f16(ncclColl)", true, RS, TREE, LL, "sum", "f16", FP | FR},
    {"ncclBroadcastRingLLKernel_copy_i8(ncclColl)", true, BC, RING, LL, "", "", FP},
    {"ncclSendRecvKernel_copy_i8(ncclWorkElem)", true, SR, 0, 0, "", "", 0},
    /* symmetric-memory kernels, 2.27 and later */
    {"ncclSymkDevKernel_AllReduce_AGxLL_R_sum_f32(ncclSymkDevWorkArgs4K)", true, AR, SYM, 0, "sum", "f32", 0},
    {"ncclSymDevKernel_ReduceScatter_LD_avg_bf16(ncclSymDevArgs)", true, RS, SYM, 0, "avg", "bf16", 0},
    {"ncclSymkDevKernel_AllGather_STMC(ncclSymkDevWorkArgs4K)", true, AG, SYM, 0, "", "", 0},
    /* a name of NCCL's form whose collective this parser does not know is still NCCL's */
    {"ncclDevKernel_AlltoAll_RING_LL(x)", true, OT, 0, 0, "", "", 0},
    /* not NCCL */
    {"volta_sgemm_128x64_nn", false, 0, 0, 0, "", "", 0},
    {"void at::native::elementwise_kernel<128, 4>(int)", false, 0, 0, 0, "", "", 0},
    {"my_ncclDevKernel_AllReduce_Sum_f32_RING_LL(int)", false, 0, 0, 0, "", "", 0},
    {"ncclAllReduce", false, 0, 0, 0, "", "", 0},
    {"nccl", false, 0, 0, 0, "", "", 0},
    {"_Z3fooi", false, 0, 0, 0, "", "", 0},
    {"_Z99ncclDevKernel_SendRecv", false, 0, 0, 0, "", "", 0},
    {"_Zx", false, 0, 0, 0, "", "", 0},
    {"", false, 0, 0, 0, "", "", 0},
};

static void classify_names(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const name_case *c = &names[i];
        gpufl__nccl_kind k;
        memset(&k, 0xAB, sizeof k);
        bool is = gpufl__nccl_classify(c->name, &k);
        if (is != c->nccl)
            fail_msg("%s: classified %s", c->name, is ? "NCCL" : "not NCCL");
        if (k.coll != c->coll || k.algo != c->algo || k.proto != c->proto || k.flags != c->flags)
            fail_msg("%s: coll %u algo %u proto %u flags %u, expected %u %u %u %u", c->name, k.coll, k.algo, k.proto,
                     k.flags, c->coll, c->algo, c->proto, c->flags);
        if (strcmp(k.redop, c->redop) != 0 || strcmp(k.dtype, c->dtype) != 0)
            fail_msg("%s: redop \"%s\" dtype \"%s\", expected \"%s\" \"%s\"", c->name, k.redop, k.dtype, c->redop,
                     c->dtype);
    }
    gpufl__nccl_kind k;
    assert_false(gpufl__nccl_classify(NULL, &k));
    assert_int_equal(k.coll, GFL_NCCL_NONE);
}

static void names_of_values(void **state)
{
    (void)state;
    assert_string_equal(gpufl__nccl_coll_name(AR), "AllReduce");
    assert_string_equal(gpufl__nccl_coll_name(GFL_NCCL_RECV), "Recv");
    assert_string_equal(gpufl__nccl_coll_name(GFL_NCCL_NONE), "");
    assert_string_equal(gpufl__nccl_coll_name(GFL_NCCL_COLL_COUNT), "");
    assert_string_equal(gpufl__nccl_algo_name(RING), "Ring");
    assert_string_equal(gpufl__nccl_algo_name(GFL_NCCL_ALGO_NVLS_TREE), "NVLSTree");
    assert_string_equal(gpufl__nccl_algo_name(GFL_NCCL_ALGO_UNKNOWN), "");
    assert_string_equal(gpufl__nccl_algo_name(200), "");
    assert_string_equal(gpufl__nccl_proto_name(SIMPLE), "Simple");
    assert_string_equal(gpufl__nccl_proto_name(LL128), "LL128");
    assert_string_equal(gpufl__nccl_proto_name(GFL_NCCL_PROTO_UNKNOWN), "");
    /* every value below the counts has a name */
    for (unsigned v = 1; v < GFL_NCCL_COLL_COUNT; v++)
        assert_true(gpufl__nccl_coll_name(v)[0] != '\0');
    for (unsigned v = 1; v < GFL_NCCL_ALGO_COUNT; v++)
        assert_true(gpufl__nccl_algo_name(v)[0] != '\0');
    for (unsigned v = 1; v < GFL_NCCL_PROTO_COUNT; v++)
        assert_true(gpufl__nccl_proto_name(v)[0] != '\0');
    assert_int_equal(gpufl__nccl_coll_of_api("ncclAllReduce"), AR);
    assert_int_equal(gpufl__nccl_coll_of_api("ncclSend"), GFL_NCCL_SEND);
    assert_int_equal(gpufl__nccl_coll_of_api("ncclRecv"), GFL_NCCL_RECV);
    assert_int_equal(gpufl__nccl_coll_of_api("ncclReduce"), GFL_NCCL_REDUCE);
    assert_int_equal(gpufl__nccl_coll_of_api("ncclGroupEnd"), GFL_NCCL_NONE);
    assert_int_equal(gpufl__nccl_coll_of_api("nccl:all_reduce"), GFL_NCCL_NONE);
    assert_int_equal(gpufl__nccl_coll_of_api(NULL), GFL_NCCL_NONE);
}

#define K_AR "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#define K_AG "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#define K_SR "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
#define K_GEN "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"
#define K_AR_MANGLED "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"

static void kernel(af *f, unsigned dev, unsigned stream, uint64_t start, uint64_t end, const char *name,
                   const char *nvtx)
{
    af_kernel(f, (af_k){.dev = dev,
                        .stream = stream,
                        .start = AF_START + start,
                        .end = AF_START + end,
                        .name = name,
                        .tid = nvtx ? 7 : 0,
                        .nvtx = nvtx});
}

/*
 * GPU 0: compute kernels on stream 1 at [0,100) and [150,300); NCCL on
 * stream 2 at [50,200), inside it a second NCCL kernel [60,120) (another
 * communicator's), and [400,500): NCCL 250 ns, compute 250 ns, both at once
 * [50,100) and [150,200), 100 ns; span 500 ns; busy 400 ns.
 * GPU 1: compute only (no row). GPU 2: one NCCL kernel, nothing else.
 */
static gpufl_trace *two_streams(const char *name)
{
    af f = {0};
    f.end_ns = AF_START + 100000;
    /* recorded out of start order: the reader sorts, the ops follow it */
    kernel(&f, 0, 2, 400, 500, K_AG, NULL);
    kernel(&f, 0, 1, 0, 100, "gemm", NULL);
    kernel(&f, 0, 2, 50, 200, K_AR, NULL);
    kernel(&f, 0, 3, 60, 120, K_AR_MANGLED, NULL);
    kernel(&f, 0, 1, 150, 300, "gemm", NULL);
    kernel(&f, 1, 1, 0, 1000, "gemm", NULL);
    kernel(&f, 2, 4, 10, 20, K_SR, "ncclRecv");
    return af_open(&f, dir, name);
}

static void ops_in_start_order(void **state)
{
    (void)state;
    gpufl_trace *t = two_streams("ops");
    gpufl__nccl_ops o;
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    assert_int_equal(o.n, 4);
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    const gpufl_trace_streams *st = gpufl_trace_get_streams(t);
    static const uint64_t starts[] = {10, 50, 60, 400};
    static const uint64_t ends[] = {20, 200, 120, 500};
    static const unsigned devs[] = {2, 0, 0, 0}, streams[] = {4, 2, 3, 2};
    static const uint8_t colls[] = {GFL_NCCL_RECV, AR, AR, AG};
    for (size_t i = 0; i < o.n; i++) {
        const gpufl__nccl_op *p = &o.op[i];
        assert_int_equal(p->start_ns, AF_START + starts[i]);
        assert_int_equal(p->end_ns, AF_START + ends[i]);
        assert_int_equal(p->device, devs[i]);
        assert_int_equal(st->stream[p->stream_row], streams[i]);
        assert_int_equal(k->start_ns[p->kernel_row], p->start_ns);
        if (i)
            assert_true(p->kernel_row > o.op[i - 1].kernel_row);
        assert_int_equal(p->kind.coll, colls[i]);
        assert_int_equal(p->bytes, 0);
    }
    /* the SendRecv kernel launched inside ncclRecv is a receive, and says where that came from */
    assert_int_equal(o.op[0].coll_from_nvtx, 1);
    assert_int_equal(o.op[1].coll_from_nvtx, 0);
    /* the mangled name reads as the demangled one */
    assert_int_equal(o.op[2].kind.algo, RING);
    assert_string_equal(o.op[2].kind.dtype, "f32");
    gpufl__nccl_ops_free(&o);
    assert_null(o.op);
    assert_int_equal(o.n, 0);
    gpufl__nccl_ops_free(&o); /* twice is fine */
    assert_int_equal(gpufl__nccl_ops_of(NULL, &o), GPUFL_EINVAL);
    assert_int_equal(gpufl__nccl_ops_of(t, NULL), GPUFL_EINVAL);
    gpufl_trace_close(t);
}

/* What the launch's NVTX range adds: a Generic kernel inside ncclAllReduce is an all-reduce; a SendRecv kernel
 * inside ncclSend a send, but inside a collective's range it stays SendRecv; other ranges change nothing. */
static void coll_from_api_range(void **state)
{
    (void)state;
    af f = {0};
    f.end_ns = AF_START + 100000;
    kernel(&f, 0, 1, 0, 10, K_GEN, "ncclAllReduce");
    kernel(&f, 0, 1, 20, 30, K_SR, "ncclSend");
    kernel(&f, 0, 1, 40, 50, K_SR, "ncclAllGather");
    kernel(&f, 0, 1, 60, 70, K_GEN, "ncclGroupEnd");
    kernel(&f, 0, 1, 80, 90, K_AG, "ncclSend");
    gpufl_trace *t = af_open(&f, dir, "api");
    gpufl__nccl_ops o;
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    assert_int_equal(o.n, 5);
    static const uint8_t colls[] = {AR, GFL_NCCL_SEND, SR, OT, AG}, from[] = {1, 1, 0, 0, 0};
    for (size_t i = 0; i < o.n; i++) {
        assert_int_equal(o.op[i].kind.coll, colls[i]);
        assert_int_equal(o.op[i].coll_from_nvtx, from[i]);
    }
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);
}

static void overlap_two_streams(void **state)
{
    (void)state;
    gpufl_trace *t = two_streams("overlap");
    gpufl__nccl_ops o;
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    gpufl__nccl_overlap *ov;
    size_t n;
    assert_int_equal(gpufl__nccl_overlap_of(t, &o, &ov, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(ov[0].device, 0);
    assert_int_equal(ov[0].comm_ns, 250);
    assert_int_equal(ov[0].compute_ns, 250);
    assert_int_equal(ov[0].overlap_ns, 100);
    assert_int_equal(ov[0].span_ns, 500);
    assert_int_equal(ov[0].busy_ns, 0); /* only the report fills it */
    assert_int_equal(ov[1].device, 2);
    assert_int_equal(ov[1].comm_ns, 10);
    assert_int_equal(ov[1].compute_ns, 0);
    assert_int_equal(ov[1].overlap_ns, 0);
    assert_int_equal(ov[1].span_ns, 10);
    free(ov);
    /* ops out of kernel order, or past the kernels, are refused */
    gpufl__nccl_op keep = o.op[0];
    o.op[0] = o.op[1];
    assert_int_equal(gpufl__nccl_overlap_of(t, &o, &ov, &n), GPUFL_EINVAL);
    assert_null(ov);
    assert_int_equal(n, 0);
    o.op[0] = keep;
    o.op[3].kernel_row = 1000;
    assert_int_equal(gpufl__nccl_overlap_of(t, &o, &ov, &n), GPUFL_EINVAL);
    /* no ops: no rows */
    gpufl__nccl_ops none = {0};
    assert_int_equal(gpufl__nccl_overlap_of(t, &none, &ov, &n), 0);
    assert_null(ov);
    assert_int_equal(n, 0);
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);
}

/* Long kernels of one kind spanning several of the other, in both directions, and kernels starting together. */
static void overlap_long_stretches(void **state)
{
    (void)state;
    af f = {0};
    f.end_ns = AF_START + 6000000000ull;
    /* GPU 0: compute [0,1000) spans NCCL [100,200), [300,400), and [950,1100) runs past it: NCCL 350, overlap
     * 100 + 100 + 50 */
    kernel(&f, 0, 1, 0, 1000, "gemm", NULL);
    kernel(&f, 0, 2, 100, 200, K_AR, NULL);
    kernel(&f, 0, 2, 300, 400, K_AR, NULL);
    kernel(&f, 0, 2, 950, 1100, K_AR, NULL);
    /* GPU 1: NCCL [0,1000) spans compute [100,200), [300,400); compute [0,10) starts with it */
    kernel(&f, 1, 2, 0, 1000, K_AR, NULL);
    kernel(&f, 1, 1, 0, 10, "gemm", NULL);
    kernel(&f, 1, 1, 100, 200, "gemm", NULL);
    kernel(&f, 1, 3, 150, 400, "gemm", NULL);
    /* GPU 2: an NCCL kernel longer than the 32-bit duration column holds (its end in the trace's exact times) */
    kernel(&f, 2, 2, 0, 5000000000ull, K_AR, NULL);
    kernel(&f, 2, 1, 4500000000ull, 4600000000ull, "gemm", NULL);
    gpufl_trace *t = af_open(&f, dir, "long");
    gpufl__nccl_ops o;
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    gpufl__nccl_overlap *ov;
    size_t n;
    assert_int_equal(gpufl__nccl_overlap_of(t, &o, &ov, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(ov[0].comm_ns, 350);
    assert_int_equal(ov[0].compute_ns, 1000);
    assert_int_equal(ov[0].overlap_ns, 250);
    assert_int_equal(ov[0].span_ns, 1100);
    assert_int_equal(ov[1].comm_ns, 1000);
    assert_int_equal(ov[1].compute_ns, 10 + 300);
    assert_int_equal(ov[1].overlap_ns, 310);
    assert_int_equal(ov[2].comm_ns, 5000000000ull);
    assert_int_equal(ov[2].overlap_ns, 100000000);
    assert_int_equal(ov[2].span_ns, 5000000000ull);
    for (size_t i = 0; i < o.n; i++)
        if (o.op[i].device == 2)
            assert_int_equal(o.op[i].end_ns - o.op[i].start_ns, 5000000000ull);
    free(ov);
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);
}

/* A naive reference: every nanosecond of [0, SPAN) marked per device and kind. */
#define SPAN 3000
#define NDEV 3

static void overlap_against_reference(void **state)
{
    (void)state;
    static uint8_t busy[NDEV][2][SPAN]; /* [device][nccl][ns] */
    memset(busy, 0, sizeof busy);
    uint64_t first[NDEV], last[NDEV];
    bool has_nccl[NDEV] = {false};
    for (int d = 0; d < NDEV; d++) {
        first[d] = UINT64_MAX;
        last[d] = 0;
    }
    af f = {0};
    f.end_ns = AF_START + 100000;
    uint32_t seed = 12345;
    for (int i = 0; i < 300; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned dev = (seed >> 8) % NDEV;
        bool nccl = (seed >> 12) % 3 == 0;
        uint64_t s = (seed >> 16) % (SPAN - 200);
        seed = seed * 1103515245u + 12345u;
        uint64_t e = s + (seed >> 16) % 200;
        kernel(&f, dev, nccl ? 9 : 1 + (seed >> 8) % 3, s, e, nccl ? K_AR : "gemm", NULL);
        for (uint64_t x = s; x < e; x++)
            busy[dev][nccl][x] = 1;
        first[dev] = s < first[dev] ? s : first[dev];
        last[dev] = e > last[dev] ? e : last[dev];
        has_nccl[dev] |= nccl;
    }
    gpufl_trace *t = af_open(&f, dir, "random");
    gpufl__nccl_ops o;
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    gpufl__nccl_overlap *ov;
    size_t n;
    assert_int_equal(gpufl__nccl_overlap_of(t, &o, &ov, &n), 0);
    size_t row = 0;
    for (unsigned d = 0; d < NDEV; d++) {
        if (!has_nccl[d])
            continue;
        uint64_t comm = 0, compute = 0, both = 0;
        for (int x = 0; x < SPAN; x++) {
            comm += busy[d][1][x];
            compute += busy[d][0][x];
            both += busy[d][1][x] && busy[d][0][x];
        }
        assert_true(row < n);
        assert_int_equal(ov[row].device, d);
        assert_int_equal(ov[row].comm_ns, comm);
        assert_int_equal(ov[row].compute_ns, compute);
        assert_int_equal(ov[row].overlap_ns, both);
        assert_int_equal(ov[row].span_ns, last[d] - first[d]);
        row++;
    }
    assert_int_equal(row, n);
    free(ov);
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);
}

static void time_per_collective(void **state)
{
    (void)state;
    af f = {0};
    f.end_ns = AF_START + 100000;
    kernel(&f, 0, 2, 0, 100, K_AR, NULL);
    kernel(&f, 0, 2, 200, 500, K_AR_MANGLED, NULL); /* the same row as the demangled name */
    kernel(&f, 0, 2, 600, 650, K_AG, NULL);
    kernel(&f, 0, 2, 700, 1200, "ncclKernel_AllReduce_TREE_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", NULL);
    kernel(&f, 1, 2, 0, 30, K_AR, NULL);
    gpufl_trace *t = af_open(&f, dir, "summary");
    gpufl__nccl_ops o;
    assert_int_equal(gpufl__nccl_ops_of(t, &o), 0);
    assert_int_equal(o.n, 5);
    /* bytes as a source that knows them would give: two of device 0's ring all-reduces' three... */
    o.op[0].bytes = 1000; /* device 0's first all-reduce (starts at 0, before device 1's) */
    o.op[0].has_bytes = 1;
    o.op[0].nranks = 4;
    gpufl__nccl_row *rows;
    size_t n;
    assert_int_equal(gpufl__nccl_summary_of(&o, &rows, &n), 0);
    assert_int_equal(n, 4);
    /* device 0 by time: Tree all-reduce 500, Ring all-reduce 400, all-gather 50; then device 1 */
    assert_int_equal(rows[0].device, 0);
    assert_int_equal(rows[0].coll, AR);
    assert_int_equal(rows[0].algo, TREE);
    assert_int_equal(rows[0].count, 1);
    assert_int_equal(rows[0].total_ns, 500);
    assert_int_equal(rows[0].flags, FP | FR);
    assert_int_equal(rows[1].coll, AR);
    assert_int_equal(rows[1].algo, RING);
    assert_int_equal(rows[1].proto, LL);
    assert_int_equal(rows[1].count, 2);
    assert_int_equal(rows[1].total_ns, 400);
    assert_int_equal(rows[1].max_ns, 300);
    assert_int_equal(rows[1].flags, FA | FP | FR);
    assert_int_equal(rows[2].coll, AG);
    assert_int_equal(rows[2].total_ns, 50);
    assert_int_equal(rows[3].device, 1);
    assert_int_equal(rows[3].total_ns, 30);
    assert_int_equal(rows[3].busy_pct, 0); /* only the report fills it */
    /* bytes: those of the ops that had them, and how many did */
    uint64_t bytes = 0, known = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += rows[i].bytes;
        known += rows[i].bytes_known;
    }
    assert_int_equal(bytes, 1000);
    assert_int_equal(known, 1);
    assert_true(o.op[0].device == 0 && rows[1].bytes == 1000 && rows[1].bytes_known == 1);
    /* bandwidth over the sized op alone: AllReduce of 4 ranks, bus factor 2(n-1)/n = 1.5 */
    assert_true(rows[1].alg_bytes == 1000.0 && rows[1].bus_bytes == 1500.0);
    assert_int_equal(rows[1].bw_ns, o.op[0].end_ns - o.op[0].start_ns);
    assert_true(rows[0].bw_ns == 0 && rows[0].alg_bytes == 0);
    free(rows);
    gpufl__nccl_ops none = {0};
    assert_int_equal(gpufl__nccl_summary_of(&none, &rows, &n), 0);
    assert_null(rows);
    assert_int_equal(n, 0);
    assert_int_equal(gpufl__nccl_summary_of(NULL, &rows, &n), GPUFL_EINVAL);
    gpufl__nccl_ops_free(&o);
    gpufl_trace_close(t);
}

/* Out of line: inlined, GCC takes the pointers into the returned text for pointers into the helper's local
 * (-Wdangling-pointer). */
__attribute__((noinline)) static char *render(const gpufl_trace *t, bool json) { return tu_render_report(t, json); }

static json_t *json_report(const gpufl_trace *t)
{
    char *js = render(t, true);
    json_error_t err;
    json_t *doc = json_loads(js, 0, &err);
    free(js);
    if (!doc)
        fail_msg("the JSON report does not parse: %s", err.text);
    char why[512];
    if (report_schema_check(doc, why, sizeof why) != 0)
        fail_msg("the JSON report does not follow its schema: %s", why);
    return doc;
}

static void report_section(void **state)
{
    (void)state;
    gpufl_trace *t = two_streams("report");
    gpufl__ana_report rep;
    assert_int_equal(gpufl__analyze_report(t, NULL, &rep), 0);
    assert_non_null(rep.nccl);
    assert_int_equal(rep.nccl->ops.n, 4);
    assert_int_equal(rep.nccl->overlap[0].busy_ns, 400); /* GPU 0's kernels: [0,300) and [400,500) */
    /* GPU 0's Ring all-reduces: 150 + 60 ns of 400 ns busy */
    assert_int_equal(rep.nccl->rows[0].device, 0);
    assert_int_equal(rep.nccl->rows[0].total_ns, 210);
    assert_true(rep.nccl->rows[0].busy_pct > 52.49 && rep.nccl->rows[0].busy_pct < 52.51);

    char path[4200], err[256];
    snprintf(path, sizeof path, "%s/nccl.html", dir);
    assert_int_equal(gpufl__report_html(t, &rep, path, err, sizeof err), 0);
    gpufl__ana_report_free(&rep);
    assert_null(rep.nccl);
    char *html = tu_read_file(path, NULL);
    assert_non_null(html);
    assert_non_null(strstr(html, "<a href=\"#nccl\">NCCL</a>"));
    const char *sec = strstr(html, "<section id=nccl>");
    assert_non_null(sec);
    assert_non_null(strstr(sec, "AllReduce"));
    assert_non_null(strstr(sec, "unknown"));
    free(html);

    char *text = render(t, false);
    const char *n = strstr(text, "\nNCCL\n----\n");
    if (!n)
        fail_msg("no NCCL section in:\n%s", text);
    assert_non_null(strstr(n, "  GPU 0: NCCL 250 ns, 40.0 % overlapped with compute (compute kernels 250 ns, "
                              "span 500 ns; 62.5 % of GPU busy time)\n"));
    assert_non_null(strstr(n, "  GPU 2: NCCL 10 ns, 0.0 % overlapped with compute"));
    const char *row = strstr(n, "    0 AllReduce      Ring          LL               2     210 ns   52.5 %");
    if (!row)
        fail_msg("no all-reduce row in:\n%s", n);
    assert_non_null(strstr(row, "unknown\n"));
    assert_non_null(strstr(n, "    2 Recv           -             -                1"));
    assert_non_null(strstr(n, "Ring for every algorithm but Tree"));
    free(text);

    json_t *doc = json_report(t);
    json_t *nc = json_object_get(doc, "nccl");
    assert_non_null(nc);
    assert_int_equal(json_integer_value(json_object_get(nc, "kernels")), 4);
    json_t *d0 = json_array_get(json_object_get(nc, "devices"), 0);
    assert_int_equal(json_integer_value(json_object_get(d0, "comm_ns")), 250);
    assert_int_equal(json_integer_value(json_object_get(d0, "compute_ns")), 250);
    assert_int_equal(json_integer_value(json_object_get(d0, "overlap_ns")), 100);
    assert_true(json_number_value(json_object_get(d0, "overlap_pct")) == 40.0);
    assert_int_equal(json_integer_value(json_object_get(d0, "busy_ns")), 400);
    json_t *r0 = json_array_get(json_object_get(nc, "collectives"), 0);
    assert_string_equal(json_string_value(json_object_get(r0, "collective")), "AllReduce");
    assert_string_equal(json_string_value(json_object_get(r0, "algorithm")), "Ring");
    assert_string_equal(json_string_value(json_object_get(r0, "protocol")), "LL");
    assert_true(json_is_true(json_object_get(r0, "algorithm_specialised")));
    assert_int_equal(json_integer_value(json_object_get(r0, "kernels")), 2);
    assert_true(json_is_null(json_object_get(r0, "bytes")));
    assert_int_equal(json_integer_value(json_object_get(r0, "bytes_known")), 0);
    json_decref(doc);
    gpufl_trace_close(t);
}

/* A session without NCCL kernels: no section, no member, and the report's schema holds without it. */
static void no_nccl_no_section(void **state)
{
    (void)state;
    af f = {0};
    f.end_ns = AF_START + 100000;
    kernel(&f, 0, 1, 0, 100, "gemm", NULL);
    kernel(&f, 0, 1, 200, 300, "nccl_lookalike_kernel", "ncclAllReduce");
    gpufl_trace *t = af_open(&f, dir, "plain");
    gpufl__ana_report rep;
    assert_int_equal(gpufl__analyze_report(t, NULL, &rep), 0);
    assert_null(rep.nccl);
    gpufl__ana_report_free(&rep);
    gpufl__nccl_report *r = (gpufl__nccl_report *)1;
    assert_int_equal(gpufl__nccl_report_of(t, NULL, &r), 0);
    assert_null(r);
    char *text = render(t, false);
    assert_null(strstr(text, "\nNCCL\n"));
    free(text);
    json_t *doc = json_report(t);
    assert_null(json_object_get(doc, "nccl"));
    json_decref(doc);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classify_names),
        cmocka_unit_test(names_of_values),
        cmocka_unit_test(ops_in_start_order),
        cmocka_unit_test(coll_from_api_range),
        cmocka_unit_test(overlap_two_streams),
        cmocka_unit_test(overlap_long_stretches),
        cmocka_unit_test(overlap_against_reference),
        cmocka_unit_test(time_per_collective),
        cmocka_unit_test(report_section),
        cmocka_unit_test(no_nccl_no_section),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
