/*
 * libgpufl_nccl.so, gpufl's NCCL profiler plugin (inject/nccl_profiler.c),
 * driven the way NCCL drives it: dlopen, the versioned table by name,
 * init per communicator, start and stop per collective, finalize, with
 * descriptions laid out as NCCL 2.24-2.25 (v2), 2.26 (v3) and 2.27 and
 * later (v4) lay them out (inject/nccl_profiler_abi.h, checked here
 * against the offsets those versions use on x86-64 and aarch64).
 *
 * Why: the plugin is the only source of NCCL's payload. Inside a session
 * every collective must come back, in both formats alike, with its bytes
 * (count x datatype size) and NCCL's names; without a session it must ask
 * NCCL for nothing; hostile descriptions (NULL names, an unknown datatype,
 * more collectives in flight than it has slots) are recorded as far as
 * they can be and never crash.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "fake_cupti_setup.h" /* tu_plugin_session_end: not CUPTI's alone */
#include "inject/nccl_profiler_abi.h"
#include "test_util.h"

/* NCCL's layouts, as offsets (LP64): what the plugin must read */
_Static_assert(offsetof(gpufl__nccl_descr_v4, rank) == 16, "v4 rank");
_Static_assert(offsetof(gpufl__nccl_descr_v4, coll.seq) == 24, "v4 coll.seqNumber");
_Static_assert(offsetof(gpufl__nccl_descr_v4, coll.count) == 56, "v4 coll.count");
_Static_assert(offsetof(gpufl__nccl_descr_v4, coll.datatype) == 72, "v4 coll.datatype");
_Static_assert(offsetof(gpufl__nccl_descr_v4, coll.channels) == 80, "v4 coll.nChannels");
_Static_assert(offsetof(gpufl__nccl_descr_v4, coll.algo) == 88, "v4 coll.algo");
_Static_assert(offsetof(gpufl__nccl_descr_v4, coll.proto) == 96, "v4 coll.proto");
_Static_assert(offsetof(gpufl__nccl_descr_v4, p2p.peer) == 56, "v4 p2p.peer");
_Static_assert(offsetof(gpufl__nccl_descr_v3, coll.comm_hash) == 32, "v3 coll.commHash");
_Static_assert(offsetof(gpufl__nccl_descr_v3, coll.datatype) == 88, "v3 coll.datatype");
_Static_assert(offsetof(gpufl__nccl_descr_v3, coll.algo) == 104, "v3 coll.algo");
_Static_assert(offsetof(gpufl__nccl_descr_v2, coll.traffic_bytes) == 96, "v2 coll.trafficBytes");
_Static_assert(offsetof(gpufl__nccl_descr_v2, coll.algo) == 112, "v2 coll.algo");
_Static_assert(offsetof(gpufl__nccl_profiler_v4, finalize) == 40, "v4 table");

static char *log_path;
static void *plugin;
static const gpufl__nccl_profiler_v4 *v4;
static const gpufl__nccl_profiler_v3 *v3, *v2;

static int setup(void **state)
{
    (void)state;
    plugin = dlopen(GFL_NCCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (!plugin)
        fail_msg("dlopen %s: %s", GFL_NCCL_PLUGIN, dlerror());
    v4 = dlsym(plugin, "ncclProfiler_v4");
    v3 = dlsym(plugin, "ncclProfiler_v3");
    v2 = dlsym(plugin, "ncclProfiler_v2");
    assert_non_null(v4);
    assert_non_null(v3);
    assert_non_null(v2);
    assert_null(dlsym(plugin, "ncclProfiler_v1")); /* v1 numbered its names: not offered */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_end_session(&log_path);
    return 0;
}

static uint32_t ring_events; /* 0: the default */

static void start(gpufl_log_format format)
{
    log_path = tu_mkdtemp("nccl-plugin");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "nccl-plugin";
    o.log_path = log_path;
    o.system_sample_rate_ms = 0;
    o.log_format = format;
    if (ring_events)
        o.ring_events = ring_events;
    assert_true(gpufl_init(&o));
}

/* A v4 collective through start and stop, as NCCL's enqueue does. */
static void coll_v4(void *ctx, uint64_t seq, const char *func, size_t count, const char *dtype, int root,
                    const char *algo, const char *proto, uint8_t channels)
{
    gpufl__nccl_descr_v4 d;
    memset(&d, 0x5A, sizeof d); /* what NCCL leaves in the rest of the union */
    d.type = GPUFL__NCCL_PROFILE_COLL;
    d.parent = NULL;
    d.rank = 1;
    d.coll.seq = seq;
    d.coll.func = func;
    d.coll.send_buff = NULL;
    d.coll.recv_buff = NULL;
    d.coll.count = count;
    d.coll.root = root;
    d.coll.datatype = dtype;
    d.coll.channels = channels;
    d.coll.warps = 16;
    d.coll.algo = algo;
    d.coll.proto = proto;
    void *h = (void *)1;
    assert_int_equal(v4->start_event(ctx, &h, &d), 0);
    assert_non_null(h);
    assert_int_equal(v4->record_event_state(h, 22, NULL), 0);
    assert_int_equal(v4->stop_event(h), 0);
}

/* Everything the plugin offers, without a session: NCCL is asked for nothing. */
static void idle_without_session(void **state)
{
    (void)state;
    assert_false(gpufl_is_recording());
    void *ctx = (void *)1;
    int mask = -1;
    assert_int_equal(v4->init(&ctx, &mask, "c", 0xabc, 1, 2, 0, NULL), 0);
    assert_int_equal(mask, 0);
    assert_null(ctx);
    gpufl__nccl_descr_v4 d = {.type = GPUFL__NCCL_PROFILE_COLL};
    void *h = (void *)1;
    assert_int_equal(v4->start_event(NULL, &h, &d), 0);
    assert_null(h);
    assert_int_equal(v4->stop_event(NULL), 0);
    assert_int_equal(v4->finalize(NULL), 0);
    mask = -1;
    assert_int_equal(v3->init(&ctx, &mask), 0);
    assert_int_equal(mask, 0);
    mask = -1;
    assert_int_equal(v2->init(&ctx, &mask), 0);
    assert_int_equal(mask, 0);
    assert_int_equal(v4->init(NULL, NULL, NULL, 0, 0, 0, 0, NULL), 0); /* hostile: no outputs at all */
}

static void same_column(const void *a, const void *b, size_t n, size_t size, const char *what)
{
    if ((n && memcmp(a, b, n * size) != 0))
        fail_msg("column %s differs between NDJSON and .gflt", what);
}

static const char *str(const gpufl_trace *t, uint32_t id) { return id ? gpufl_trace_string(t, id) : "(none)"; }

static void collectives_in_both_formats(void **state)
{
    (void)state;
    start(GPUFL_LOG_BOTH);
    void *ctx = NULL;
    int mask = 0;
    assert_int_equal(v4->init(&ctx, &mask, "dp", 0xfeedface12345678ull, 1, 2, 1, NULL), 0);
    assert_int_equal(mask, GPUFL__NCCL_PROFILE_COLL | GPUFL__NCCL_PROFILE_P2P);
    assert_non_null(ctx);

    /* 0: AllReduce of 1 000 000 float32 = 4 000 000 bytes */
    coll_v4(ctx, 7, "AllReduce", 1000000, "ncclFloat32", 0, "Ring", "Simple", 4);
    /* 1: Broadcast from rank 0, bf16 */
    coll_v4(ctx, 8, "Broadcast", 4096, "ncclBfloat16", 0, "Ring", "LL", 2);
    /* 2, 3: hostile: no names at all; a datatype nobody knows */
    coll_v4(ctx, 9, NULL, 100, NULL, -1, NULL, NULL, 0);
    coll_v4(ctx, 10, "AllGather", 100, "ncclFloat128", -1, "Ring", "LL128", 1);
    /* 4: a name longer than the plugin keeps */
    coll_v4(ctx, 11, "ReduceScatterWithAVeryLongNameIndeed", 10, "ncclInt64", -1, "", "", 0);
    /* 5: a point-to-point Send to rank 0 */
    gpufl__nccl_descr_v4 p = {.type = GPUFL__NCCL_PROFILE_P2P, .rank = 1};
    p.p2p.func = "Send", p.p2p.datatype = "ncclInt8", p.p2p.count = 333, p.p2p.peer = 0, p.p2p.channels = 1;
    void *h = NULL;
    assert_int_equal(v4->start_event(ctx, &h, &p), 0);
    assert_int_equal(v4->stop_event(h), 0);
    /* a type gpufl did not ask for gets no handle */
    gpufl__nccl_descr_v4 g = {.type = GPUFL__NCCL_PROFILE_GROUP};
    h = (void *)1;
    assert_int_equal(v4->start_event(ctx, &h, &g), 0);
    assert_null(h);
    assert_int_equal(v4->finalize(ctx), 0);

    /* 6: NCCL 2.26 (v3): the communicator in the description */
    mask = 0;
    assert_int_equal(v3->init(&ctx, &mask), 0);
    assert_int_equal(mask, GPUFL__NCCL_PROFILE_COLL | GPUFL__NCCL_PROFILE_P2P);
    gpufl__nccl_descr_v3 d3;
    memset(&d3, 0, sizeof d3);
    d3.type = GPUFL__NCCL_PROFILE_COLL, d3.rank = 0;
    d3.coll.comm_hash = 0x3333, d3.coll.seq = 1, d3.coll.func = "Reduce", d3.coll.count = 250;
    d3.coll.root = 1, d3.coll.datatype = "ncclFloat64", d3.coll.max_channels = 3, d3.coll.algo = "Tree";
    d3.coll.proto = "LL";
    assert_int_equal(v3->start_event(ctx, &h, &d3), 0);
    assert_int_equal(v3->stop_event(h), 0);
    /* 7: NCCL 2.24 (v2): traffic bytes before the channels */
    assert_int_equal(v2->init(&ctx, &mask), 0);
    gpufl__nccl_descr_v2 d2;
    memset(&d2, 0, sizeof d2);
    d2.type = GPUFL__NCCL_PROFILE_COLL, d2.rank = 3;
    d2.coll.comm_hash = 0x2222, d2.coll.seq = 5, d2.coll.func = "AllReduce", d2.coll.count = 64;
    d2.coll.root = 0, d2.coll.datatype = "ncclFloat16", d2.coll.traffic_bytes = 999, d2.coll.max_channels = 2;
    d2.coll.algo = "CollNetDirect", d2.coll.proto = "Simple";
    assert_int_equal(v2->start_event(ctx, &h, &d2), 0);
    assert_int_equal(v2->stop_event(h), 0);
    assert_int_equal(v2->finalize(ctx), 0);

    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s", gpufl_session_dir());
    gpufl_shutdown();

    gpufl_trace *tj, *tb;
    char err[512];
    snprintf(path, sizeof path, "%s/device.log", dir);
    if (gpufl_trace_open(path, &tj, err, sizeof err) != 0)
        fail_msg("%s", err);
    snprintf(path, sizeof path, "%s/trace.gflt", dir);
    if (gpufl_trace_open(path, &tb, err, sizeof err) != 0)
        fail_msg("%s", err);
    const gpufl_trace_nccl_collectives *j = gpufl_trace_get_nccl_collectives(tj);
    const gpufl_trace_nccl_collectives *b = gpufl_trace_get_nccl_collectives(tb);
    assert_int_equal(j->n, 8);
    assert_int_equal(b->n, 8);

    /* the numbers alike in both; strings by text (the tables number them apart) */
#define SAME(col) same_column(j->col, b->col, j->n, sizeof *j->col, #col)
    SAME(start_ns), SAME(end_ns), SAME(comm_hash), SAME(seq), SAME(count), SAME(bytes), SAME(rank), SAME(root);
    SAME(nranks), SAME(tid), SAME(channels), SAME(abi), SAME(bytes_known), SAME(p2p);
#undef SAME
    for (size_t i = 0; i < j->n; i++) {
        assert_string_equal(str(tj, j->func[i]), str(tb, b->func[i]));
        assert_string_equal(str(tj, j->datatype[i]), str(tb, b->datatype[i]));
        assert_string_equal(str(tj, j->algo[i]), str(tb, b->algo[i]));
        assert_string_equal(str(tj, j->proto[i]), str(tb, b->proto[i]));
        assert_true(j->end_ns[i] >= j->start_ns[i]);
        assert_true(j->end_ns[i] != 0);
    }

    const gpufl_trace_nccl_collectives *c = b;
    const gpufl_trace *t = tb;
    assert_string_equal(str(t, c->func[0]), "AllReduce");
    assert_int_equal(c->bytes_known[0], 1);
    assert_int_equal(c->bytes[0], 4000000);
    assert_int_equal(c->count[0], 1000000);
    assert_int_equal(c->comm_hash[0], 0xfeedface12345678ull);
    assert_int_equal(c->seq[0], 7);
    assert_int_equal(c->rank[0], 1);
    assert_int_equal(c->nranks[0], 2);
    assert_int_equal(c->channels[0], 4);
    assert_int_equal(c->abi[0], 4);
    assert_string_equal(str(t, c->datatype[0]), "ncclFloat32");
    assert_string_equal(str(t, c->algo[0]), "Ring");
    assert_string_equal(str(t, c->proto[0]), "Simple");

    assert_int_equal(c->bytes[1], 8192);
    assert_int_equal(c->root[1], 0);

    assert_string_equal(str(t, c->func[2]), "unknown");
    assert_int_equal(c->bytes_known[2], 0);
    assert_int_equal(c->datatype[2], 0);
    assert_int_equal(c->algo[2], 0);
    assert_int_equal(c->root[2], -1);
    assert_int_equal(c->count[2], 100);

    assert_int_equal(c->bytes_known[3], 0);
    assert_int_equal(c->bytes[3], 0);
    assert_string_equal(str(t, c->datatype[3]), "ncclFloat128");

    assert_string_equal(str(t, c->func[4]), "ReduceScatterWithAVeryLongNameI"); /* 31 bytes kept */
    assert_int_equal(c->bytes[4], 80);

    assert_string_equal(str(t, c->func[5]), "Send");
    assert_int_equal(c->p2p[5], 1);
    assert_int_equal(c->root[5], 0);
    assert_int_equal(c->bytes[5], 333);
    assert_int_equal(c->p2p[0], 0);

    assert_string_equal(str(t, c->func[6]), "Reduce");
    assert_int_equal(c->comm_hash[6], 0x3333);
    assert_int_equal(c->bytes[6], 2000);
    assert_int_equal(c->root[6], 1);
    assert_int_equal(c->channels[6], 3);
    assert_int_equal(c->abi[6], 3);
    assert_int_equal(c->nranks[6], 0); /* v3 does not say */
    assert_string_equal(str(t, c->algo[6]), "Tree");

    assert_int_equal(c->comm_hash[7], 0x2222);
    assert_int_equal(c->rank[7], 3);
    assert_int_equal(c->bytes[7], 128);
    assert_int_equal(c->channels[7], 2);
    assert_int_equal(c->abi[7], 2);
    assert_string_equal(str(t, c->algo[7]), "CollNetDirect");
    assert_string_equal(str(t, c->proto[7]), "Simple");
    gpufl_trace_close(tj);
    gpufl_trace_close(tb);
}

/* More collectives in flight than the plugin has slots: the overflow is
 * recorded at its start without an end, and NCCL gets no handle. */
static void slots_run_out(void **state)
{
    (void)state;
    start(GPUFL_LOG_GFLT);
    void *ctx = NULL;
    int mask = 0;
    assert_int_equal(v4->init(&ctx, &mask, "dp", 0x77, 1, 8, 0, NULL), 0);
    enum { N = 1100 };
    static void *handles[N];
    size_t with = 0;
    for (size_t i = 0; i < N; i++) {
        gpufl__nccl_descr_v4 d = {.type = GPUFL__NCCL_PROFILE_COLL, .rank = 0};
        d.coll.seq = i, d.coll.func = "AllGather", d.coll.count = 1, d.coll.datatype = "ncclInt32";
        assert_int_equal(v4->start_event(ctx, &handles[i], &d), 0);
        with += handles[i] != NULL;
    }
    assert_int_equal(with, 1024);
    for (size_t i = 0; i < N; i++)
        if (handles[i])
            assert_int_equal(v4->stop_event(handles[i]), 0);
    assert_int_equal(v4->finalize(ctx), 0);
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_nccl_collectives *c = gpufl_trace_get_nccl_collectives(t);
    assert_int_equal(c->n, N);
    size_t ended = 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < c->n; i++) {
        ended += c->end_ns[i] != 0;
        bytes += c->bytes[i];
    }
    assert_int_equal(ended, 1024);
    assert_int_equal(bytes, 4 * N);
    gpufl_trace_close(t);
}

/* Several threads enqueue at once, as NCCL's users do with several
 * communicators: every collective is recorded once, with its own bytes
 * (slots are never shared between two collectives in flight). */
enum { THREADS = 4, PER_THREAD = 3000 };

static void *enqueue(void *arg)
{
    void *ctx = arg;
    for (size_t i = 0; i < PER_THREAD; i++) {
        gpufl__nccl_descr_v4 d = {.type = GPUFL__NCCL_PROFILE_COLL, .rank = 0};
        /* count tells the thread and the collective apart: bytes = 4 x count */
        d.coll.seq = i, d.coll.func = "AllReduce", d.coll.count = 1 + i, d.coll.datatype = "ncclFloat32";
        void *h = NULL;
        if (v4->start_event(ctx, &h, &d) != 0 || !h || v4->stop_event(h) != 0)
            return (void *)1;
    }
    return NULL;
}

static void threads_at_once(void **state)
{
    (void)state;
    ring_events = 1u << 16;
    start(GPUFL_LOG_GFLT);
    ring_events = 0;
    void *ctx[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        int mask = 0;
        assert_int_equal(v4->init(&ctx[i], &mask, "c", 0x100 + (uint64_t)i, 1, 4, i, NULL), 0);
        assert_int_equal(pthread_create(&th[i], NULL, enqueue, ctx[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *rc;
        assert_int_equal(pthread_join(th[i], &rc), 0);
        assert_null(rc);
        assert_int_equal(v4->finalize(ctx[i]), 0);
    }
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_nccl_collectives *c = gpufl_trace_get_nccl_collectives(t);
    assert_int_equal(c->n, THREADS * PER_THREAD);
    uint64_t per_comm[THREADS] = {0};
    for (size_t i = 0; i < c->n; i++) {
        assert_true(c->comm_hash[i] >= 0x100 && c->comm_hash[i] < 0x100 + THREADS);
        assert_int_equal(c->bytes[i], 4 * c->count[i]);
        assert_int_equal(c->count[i], c->seq[i] + 1);
        per_comm[c->comm_hash[i] - 0x100] += c->count[i];
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(per_comm[i], (uint64_t)PER_THREAD * (PER_THREAD + 1) / 2);
    gpufl_trace_close(t);
}

/* The library entry itself: what it refuses, and datatype sizes. */
static void record_api(void **state)
{
    (void)state;
    gpufl_nccl_collective c = {.struct_size = sizeof c, .func = "AllReduce", .datatype = "ncclFloat32", .count = 1};
    assert_int_equal(gpufl_record_nccl_collective(&c), GPUFL_ESTATE); /* no session */
    assert_int_equal(gpufl_record_nccl_collective(NULL), GPUFL_EINVAL);
    c.struct_size = 8;
    assert_int_equal(gpufl_record_nccl_collective(&c), GPUFL_EINVAL);
    assert_int_equal(gpufl_nccl_datatype_size("ncclFloat32"), 4);
    assert_int_equal(gpufl_nccl_datatype_size("ncclBfloat16"), 2);
    assert_int_equal(gpufl_nccl_datatype_size("ncclUint64"), 8);
    assert_int_equal(gpufl_nccl_datatype_size("ncclFloat8e5m2"), 1);
    assert_int_equal(gpufl_nccl_datatype_size("float"), 0);
    assert_int_equal(gpufl_nccl_datatype_size(NULL), 0);
    /* a count whose bytes would wrap keeps its count, not bytes */
    start(GPUFL_LOG_GFLT);
    c.struct_size = sizeof c;
    c.count = UINT64_MAX / 2;
    c.datatype = "ncclInt64";
    c.rank = -7;
    assert_int_equal(gpufl_record_nccl_collective(&c), 0);
    gpufl_trace *t = tu_plugin_session_end();
    const gpufl_trace_nccl_collectives *n = gpufl_trace_get_nccl_collectives(t);
    assert_int_equal(n->n, 1);
    assert_int_equal(n->bytes_known[0], 0);
    assert_int_equal(n->count[0], UINT64_MAX / 2);
    assert_int_equal(n->rank[0], -1);
    assert_int_equal(n->abi[0], 0);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(idle_without_session, teardown),
        cmocka_unit_test_teardown(collectives_in_both_formats, teardown),
        cmocka_unit_test_teardown(slots_run_out, teardown),
        cmocka_unit_test_teardown(threads_at_once, teardown),
        cmocka_unit_test_teardown(record_api, teardown),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
