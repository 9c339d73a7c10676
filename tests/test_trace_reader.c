/*
 * The columnar trace (include/gpufl/trace.h, src/read/trace_build.c,
 * columns.c, trace.c): what gpufl_trace_open() makes of a session.
 *
 * Why: analyses and exporters read only these columns, so each must hold
 * what was recorded, row for row. Checked on hand-made sessions written
 * both as .gflt and as NDJSON (the two must give the same trace): every
 * table sorted by start time with all its columns of one length; scopes
 * joined from begin and end, an unterminated one with end_ns 0, one whose
 * begin was lost rebuilt from its end; NVTX ranges and marks; kernels,
 * copies, memsets, syncs, allocations and samples field by field; the
 * session facts, devices, losses and the stop reason; a shuffled table
 * against a plain stable sort; columns never recorded cost no memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/intern.h"
#include "event_gen.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "session_file.h"

TU_TEMP_DIR_FIXTURES(dir, "trace-reader")

static gpufl__session_meta session(void)
{
    return (gpufl__session_meta){.session_id = "trainer-20261121-101010-4242-beef",
                                 .app_name = "trainer",
                                 .host = "node3",
                                 .gpufl_version = "0.1.0",
                                 .pid = 4242,
                                 .start_ns = 1000000,
                                 .start_wall_ns = 1790000000000000000ull,
                                 .format_version = 1,
                                 .ended = true,
                                 .end_ns = 9000000,
                                 .end_wall_ns = 1790000000008000000ull,
                                 .lost = {3, 0, 1},
                                 .stop_reason = 1,
                                 .stopped_at_ns = 8000000,
                                 .stop_detail = "session_max_bytes (1048576) reached"};
}

/* Writes evs as <dir>/<name>.gflt and as the NDJSON directory <dir>/<name>;
 * returns the paths in gflt and ndjson. */
static void write_both(const char *name, const gfl_event *evs, size_t n, const gpufl__session_meta *m, char *gflt,
                       char *ndjson)
{
    sprintf(gflt, "%s/%s.gflt", dir, name);
    sprintf(ndjson, "%s/%s", dir, name);
    tu_write_gflt_and_ndjson(gflt, ndjson, evs, n, m, 7, -1);
}

/* ---- a hand-made session --------------------------------------------------- */

static gfl_event ev_of(uint8_t type, uint64_t ts, uint32_t tid, uint16_t device)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = type;
    ev.h.ts = ts;
    ev.h.tid = tid;
    ev.h.device = device;
    return ev;
}

static gfl_event scope(uint8_t type, uint64_t ts, uint64_t id, uint64_t parent, uint16_t depth, const char *name,
                       uint64_t begin, bool implicit)
{
    gfl_event ev = ev_of(type, ts, 7, 0);
    ev.u.scope = (gfl_scope_payload){id, parent, type == GFL_EV_SCOPE_END ? begin : 0, gpufl__intern(name), depth};
    ev.h.flags = implicit ? GFL_F_SCOPE_IMPLICIT : 0;
    return ev;
}

static size_t sample_session(gfl_event *evs)
{
    size_t n = 0;
    gfl_event ev = ev_of(GFL_EV_DEVICE_INFO, 1000100, 0, 0);
    ev.u.info = (gfl_device_info_payload){.memory_total_bytes = 150754820096ull,
                                          .name = gpufl__intern("NVIDIA H200"),
                                          .uuid = gpufl__intern("GPU-1234"),
                                          .pci_bus_id = gpufl__intern("00000000:19:00.0"),
                                          .driver_version = gpufl__intern("580.159.04"),
                                          .cuda_driver_version = 13000,
                                          .sm_count = 132,
                                          .power_limit_mw = 700000,
                                          .max_sm_clock_mhz = 1980,
                                          .max_mem_clock_mhz = 3201,
                                          .cc_major = 9,
                                          .cc_minor = 0};
    evs[n++] = ev;
    evs[n++] = scope(GFL_EV_SCOPE_BEGIN, 2000000, 11, 0, 0, "step", 0, false);
    evs[n++] = scope(GFL_EV_SCOPE_BEGIN, 2100000, 12, 11, 1, "forward", 0, false);
    /* kernels arrive late and out of order (device buffers) */
    for (int i = 4; i >= 0; i--) {
        ev = ev_of(GFL_EV_KERNEL, 2200000 + (uint64_t)i * 1000, 7, 0);
        ev.u.kernel = (gfl_kernel_payload){.end_ts = 2200500 + (uint64_t)i * 1000,
                                           .scope_id = 12,
                                           .external_id = 100 + (uint64_t)i,
                                           .api_start_ts = 2150000 + (uint64_t)i,
                                           .api_end_ts = 2150100 + (uint64_t)i,
                                           .name = gpufl__intern("gemm"),
                                           .context = 1,
                                           .stream = 7,
                                           .correlation = 50 + (uint32_t)i,
                                           .grid = {64, 8, 1},
                                           .block = {256, 1, 1},
                                           .registers = 96,
                                           .static_smem = 1024,
                                           .dynamic_smem = 4096,
                                           .occupancy_x10000 = 5000,
                                           .limiter = GFL_LIMIT_REGISTERS,
                                           .external_kind = 2};
        evs[n++] = ev;
    }
    ev = ev_of(GFL_EV_MEMCPY, 2150000, 7, 0);
    ev.u.memcpy = (gfl_memcpy_payload){.end_ts = 2160000,
                                       .bytes = 1 << 20,
                                       .scope_id = 12,
                                       .context = 1,
                                       .stream = 7,
                                       .correlation = 49,
                                       .copy_kind = GFL_COPY_HTOD,
                                       .src_kind = GFL_MEM_PINNED,
                                       .dst_kind = GFL_MEM_DEVICE};
    evs[n++] = ev;
    ev = ev_of(GFL_EV_MEMSET, 2140000, 7, 0);
    ev.u.memset = (gfl_memset_payload){.end_ts = 2141000,
                                       .bytes = 4096,
                                       .value = 0xab,
                                       .context = 1,
                                       .stream = 7,
                                       .correlation = 48,
                                       .mem_kind = GFL_MEM_DEVICE};
    evs[n++] = ev;
    evs[n++] = scope(GFL_EV_SCOPE_END, 2900000, 12, 11, 1, "forward", 2100000, false);
    ev = ev_of(GFL_EV_SYNC, 2950000, 7, 0);
    ev.u.sync = (gfl_sync_payload){.end_ts = 2990000,
                                   .scope_id = 11,
                                   .context = 1,
                                   .stream = 7,
                                   .correlation = 60,
                                   .cuda_event = 3,
                                   .sync_kind = GFL_SYNC_EVENT};
    evs[n++] = ev;
    ev = ev_of(GFL_EV_MEM_ALLOC, 2050000, 7, 0);
    ev.u.mem = (gfl_mem_payload){.address = 0x7f0000001000ull,
                                 .bytes = 1 << 20,
                                 .scope_id = 11,
                                 .context = 1,
                                 .stream = 7,
                                 .correlation = 40,
                                 .mem_kind = GFL_MEM_DEVICE,
                                 .is_async = 1};
    evs[n++] = ev;
    ev.h.type = GFL_EV_MEM_FREE;
    ev.h.ts = 2980000;
    evs[n++] = ev;
    /* a scope whose begin was lost (only its end was read), an unterminated
     * one, and one closed implicitly */
    evs[n++] = scope(GFL_EV_SCOPE_END, 3100000, 99, 0, 0, "lost begin", 3000000, false);
    evs[n++] = scope(GFL_EV_SCOPE_BEGIN, 3200000, 13, 11, 1, "backward", 0, false);
    evs[n++] = scope(GFL_EV_SCOPE_BEGIN, 3300000, 14, 13, 2, "inner", 0, false);
    evs[n++] = scope(GFL_EV_SCOPE_END, 3400000, 14, 13, 2, "inner", 3300000, true);
    ev = ev_of(GFL_EV_NVTX_RANGE, 2210000, 7, 0);
    ev.u.nvtx = (gfl_nvtx_payload){
        .end_ts = 2230000, .id = 5, .name = gpufl__intern("aten::mm"), .domain = gpufl__intern("PyTorch"), .depth = 1};
    evs[n++] = ev;
    ev = ev_of(GFL_EV_NVTX_MARK, 2220000, 7, 0);
    ev.u.nvtx = (gfl_nvtx_payload){.id = 6, .name = gpufl__intern("checkpoint")};
    evs[n++] = ev;
    ev = ev_of(GFL_EV_DEVICE_METRICS, 2500000, 0, 0);
    ev.u.dev = (gfl_device_metrics_payload){.valid = GFL_DEV_GPU_UTIL | GFL_DEV_MEM | GFL_DEV_TEMP | GFL_DEV_FAN,
                                            .gpu_util_pct = 97,
                                            .fan_pct = 40,
                                            .mem_used_bytes = 80ull << 30,
                                            .mem_total_bytes = 141ull << 30,
                                            .mem_free_bytes = 60ull << 30,
                                            .temp_c = 61};
    evs[n++] = ev;
    ev = ev_of(GFL_EV_HOST_METRICS, 2400000, 0, 0);
    ev.u.host = (gfl_host_metrics_payload){.valid = GFL_HOST_PROC_CPU | GFL_HOST_RSS,
                                           .cpu_count = 64,
                                           .proc_cpu_pct_x100 = 12345,
                                           .proc_rss_bytes = 9ull << 30};
    evs[n++] = ev;
    ev = ev_of(GFL_EV_DROPPED, 2600000, 7, 0);
    ev.u.dropped =
        (gfl_dropped_payload){.count = 12, .total = 12, .reason = GFL_DROP_RING_FULL, .channel = GFL_CHANNEL_SCOPE};
    evs[n++] = ev;
    ev.u.dropped.count = 5;
    ev.u.dropped.total = 17;
    evs[n++] = ev;
    ev = ev_of(GFL_EV_LOG, 1000200, 7, 0);
    ev.u.log = (gfl_log_payload){gpufl__intern("recording"), GFL_LOG_INFO};
    evs[n++] = ev;
    return n;
}

static void check_sorted_u64(const uint64_t *v, size_t n, const char *what)
{
    for (size_t i = 1; i < n; i++)
        if (v[i - 1] > v[i])
            fail_msg("%s not sorted at row %zu", what, i);
}

#define S(id) gpufl_trace_string(t, (id))

static void check_sample_trace(gpufl_trace *t)
{
    const gpufl_trace_info *i = gpufl_trace_get_info(t);
    assert_string_equal(S(i->session_id), "trainer-20261121-101010-4242-beef");
    assert_string_equal(S(i->app_name), "trainer");
    assert_string_equal(S(i->host), "node3");
    assert_string_equal(S(i->gpufl_version), "0.1.0");
    assert_int_equal(i->pid, 4242);
    assert_int_equal(i->start_ns, 1000000);
    assert_int_equal(i->end_ns, 9000000);
    /* no event is later than the session's end */
    assert_int_equal(i->last_ns, 9000000);
    assert_true(i->start_wall_ns == 1790000000000000000ull);
    assert_int_equal(i->ndevices, 1);
    assert_string_equal(S(i->devices[0].name), "NVIDIA H200");
    assert_string_equal(S(i->devices[0].uuid), "GPU-1234");
    assert_int_equal(i->devices[0].cc_major, 9);
    assert_int_equal(i->devices[0].sm_count, 132);
    assert_string_equal(S(i->driver_version), "580.159.04");
    assert_string_equal(S(i->cuda_driver_version), "13.0");
    assert_int_equal(i->dropped[GFL_DROP_RING_FULL], 17);
    assert_int_equal(i->dropped[GFL_DROP_DISK_LIMIT], 4); /* the session's lost */
    assert_int_equal(i->lost[0], 3);
    assert_int_equal(i->lost[2], 1);
    assert_string_equal(S(i->stop_reason), "disk_cap");
    assert_string_equal(S(i->stop_detail), "session_max_bytes (1048576) reached");
    assert_int_equal(i->stopped_at_ns, 8000000);
    assert_int_equal(gpufl_trace_event_count(t, GFL_EV_KERNEL), 5);
    assert_int_equal(gpufl_trace_event_count(t, GFL_EV_SCOPE_BEGIN), 4);
    assert_int_equal(gpufl_trace_event_count(t, GFL_EV_SCOPE_END), 3);
    assert_int_equal(gpufl_trace_event_count(t, GFL_EV_LOG), 1);
    assert_int_equal(gpufl_trace_event_count(t, GFL_EV_DROPPED), 2);
    assert_int_equal(gpufl_trace_event_count(t, 300), 0);

    const gpufl_trace_scopes *sc = gpufl_trace_get_scopes(t);
    assert_int_equal(sc->n, 5);
    check_sorted_u64(sc->begin_ns, sc->n, "scopes");
    static const struct {
        uint64_t begin, end, id, parent;
        const char *name;
        uint16_t depth;
        uint8_t implicit;
    } want[] = {{2000000, 0, 11, 0, "step", 0, 0},
                {2100000, 2900000, 12, 11, "forward", 1, 0},
                {3000000, 3100000, 99, 0, "lost begin", 0, 0},
                {3200000, 0, 13, 11, "backward", 1, 0},
                {3300000, 3400000, 14, 13, "inner", 2, 1}};
    for (size_t r = 0; r < 5; r++) {
        assert_int_equal(sc->begin_ns[r], want[r].begin);
        /* never ended (end 0 above): to the session's last recorded time */
        assert_int_equal(sc->end_ns[r], want[r].end ? want[r].end : i->last_ns);
        assert_int_equal(sc->unended[r], want[r].end == 0);
        assert_int_equal(sc->id[r], want[r].id);
        assert_int_equal(sc->parent[r], want[r].parent);
        assert_string_equal(S(sc->name[r]), want[r].name);
        assert_int_equal(sc->depth[r], want[r].depth);
        assert_int_equal(sc->implicit[r], want[r].implicit);
        assert_int_equal(sc->tid[r], 7);
        assert_int_equal(sc->domain[r], 0);
        assert_int_equal(sc->instant[r], 0);
    }
    const gpufl_trace_scopes *nv = gpufl_trace_get_nvtx(t);
    assert_int_equal(nv->n, 2);
    assert_int_equal(nv->begin_ns[0], 2210000);
    assert_int_equal(nv->end_ns[0], 2230000);
    assert_string_equal(S(nv->name[0]), "aten::mm");
    assert_string_equal(S(nv->domain[0]), "PyTorch");
    assert_int_equal(nv->depth[0], 1);
    assert_int_equal(nv->instant[0], 0);
    assert_int_equal(nv->begin_ns[1], 2220000);
    assert_int_equal(nv->end_ns[1], 2220000);
    assert_int_equal(nv->instant[1], 1);
    assert_string_equal(S(nv->domain[1]), "");

    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    assert_int_equal(k->n, 5);
    check_sorted_u64(k->start_ns, k->n, "kernels");
    /* one launch configuration, one stream, one caller: row 0 everywhere */
    const gpufl_trace_launch_configs *g = k->configs;
    const gpufl_trace_streams *st = k->streams;
    const gpufl_trace_callers *cl = k->callers;
    assert_ptr_equal(g, gpufl_trace_get_launch_configs(t));
    assert_ptr_equal(st, gpufl_trace_get_streams(t));
    assert_ptr_equal(cl, gpufl_trace_get_callers(t));
    assert_int_equal(g->n, 1);
    assert_int_equal(st->n, 1); /* all device work ran on stream 7 */
    assert_int_equal(k->nexact, 0);
    assert_string_equal(S(g->name[0]), "gemm");
    assert_int_equal(g->mangled[0], 0);
    assert_int_equal(g->grid[0][0], 64);
    assert_int_equal(g->grid[0][1], 8);
    assert_int_equal(g->block[0][0], 256);
    assert_int_equal(g->registers[0], 96);
    assert_int_equal(g->static_smem[0], 1024);
    assert_int_equal(g->dynamic_smem[0], 4096);
    assert_int_equal(g->occupancy_x10000[0], 5000);
    assert_int_equal(g->limiter[0], GFL_LIMIT_REGISTERS);
    assert_int_equal(st->stream[0], 7);
    assert_int_equal(st->context[0], 1);
    assert_int_equal(st->device[0], 0);
    for (size_t r = 0; r < 5; r++) {
        assert_int_equal(k->start_ns[r], 2200000 + r * 1000);
        assert_int_equal(k->dur_ns[r], 500);
        assert_int_equal(gpufl_trace_kernel_end(k, r), 2200500 + r * 1000);
        assert_int_equal(k->correlation[r], 50 + r);
        assert_int_equal(gpufl_trace_kernel_api_start(k, r), 2150000 + r);
        assert_int_equal(gpufl_trace_kernel_api_end(k, r), 2150100 + r);
        assert_int_equal(k->api_lead_ns[r], 2200000 + r * 1000 - (2150000 + r));
        assert_int_equal(k->api_dur_ns[r], 100);
        assert_int_equal(k->config_row[r], 0);
        assert_int_equal(k->stream_row[r], 0);
        uint32_t c = k->caller_row[r];
        assert_true(c < cl->n);
        assert_int_equal(cl->external_id[c], 100 + r);
        assert_int_equal(cl->scope[c], 12);
        assert_int_equal(cl->tid[c], 7);
        assert_int_equal(cl->external_kind[c], 2);
        assert_int_equal(cl->stack[c], 0);
        assert_int_equal(cl->nvtx[c], 0);
        assert_int_equal(k->graph_id[r], 0);
    }
    const gpufl_trace_transfers *c = gpufl_trace_get_copies(t), *m = gpufl_trace_get_memsets(t);
    assert_int_equal(c->n, 1);
    assert_int_equal(c->bytes[0], 1 << 20);
    assert_int_equal(c->kind[0], GFL_COPY_HTOD);
    assert_int_equal(c->src_kind[0], GFL_MEM_PINNED);
    assert_int_equal(c->dst_kind[0], GFL_MEM_DEVICE);
    assert_int_equal(gpufl_trace_transfer_end(c, 0), 2160000);
    assert_int_equal(c->value[0], 0);
    assert_int_equal(m->n, 1);
    assert_int_equal(m->kind[0], 0);
    assert_int_equal(m->dst_kind[0], GFL_MEM_DEVICE);
    assert_int_equal(m->value[0], 0xab);
    assert_int_equal(m->bytes[0], 4096);
    const gpufl_trace_syncs *y = gpufl_trace_get_syncs(t);
    assert_int_equal(y->n, 1);
    assert_int_equal(y->kind[0], GFL_SYNC_EVENT);
    assert_int_equal(y->cuda_event[0], 3);
    assert_int_equal(gpufl_trace_sync_end(y, 0), 2990000);
    const gpufl_trace_memory *mem = gpufl_trace_get_memory(t);
    assert_int_equal(mem->n, 2);
    assert_int_equal(mem->ts_ns[0], 2050000);
    assert_int_equal(mem->is_free[0], 0);
    assert_int_equal(mem->is_free[1], 1);
    assert_true(mem->address[1] == 0x7f0000001000ull);
    const gpufl_trace_device_samples *d = gpufl_trace_get_device_samples(t);
    assert_int_equal(d->n, 1);
    assert_int_equal(d->valid[0], GFL_DEV_GPU_UTIL | GFL_DEV_MEM | GFL_DEV_TEMP | GFL_DEV_FAN);
    assert_int_equal(d->gpu_util_pct[0], 97);
    assert_int_equal(d->fan_pct[0], 40);
    assert_int_equal(d->temp_c[0], 61);
    assert_true(d->mem_free_bytes[0] == 60ull << 30);
    assert_int_equal(d->power_mw[0], 0);
    const gpufl_trace_host_samples *h = gpufl_trace_get_host_samples(t);
    assert_int_equal(h->n, 1);
    assert_int_equal(h->valid[0], GFL_HOST_PROC_CPU | GFL_HOST_RSS);
    assert_int_equal(h->proc_cpu_pct_x100[0], 12345);
    assert_int_equal(h->cpu_count[0], 64);
    assert_int_equal(h->ram_used_bytes[0], 0);
}

static void test_sample_session_both_formats(void **state)
{
    (void)state;
    gfl_event evs[64];
    size_t n = sample_session(evs);
    gpufl__session_meta m = session();
    char gflt[4200], ndjson[4200];
    write_both("sample", evs, n, &m, gflt, ndjson);
    gpufl_trace *a = tu_trace_open(gflt), *b = tu_trace_open(ndjson);
    check_sample_trace(a);
    check_sample_trace(b);
    assert_int_equal(gpufl_trace_get_info(a)->source_format, GPUFL_TRACE_GFLT);
    assert_int_equal(gpufl_trace_get_info(b)->source_format, GPUFL_TRACE_NDJSON);
    assert_string_equal(gpufl_trace_get_info(a)->source, gflt);
    gpufl_trace_close(a);
    gpufl_trace_close(b);
    /* a session directory with trace.gflt is read from it */
    char both[4200], moved[4300];
    snprintf(both, sizeof both, "%s", ndjson);
    snprintf(moved, sizeof moved, "%s/trace.gflt", both);
    assert_int_equal(rename(gflt, moved), 0);
    a = tu_trace_open(both);
    assert_int_equal(gpufl_trace_get_info(a)->source_format, GPUFL_TRACE_GFLT);
    check_sample_trace(a);
    gpufl_trace_close(a);
}

/* Many kernels in a shuffled order on several streams and devices: the
 * table is the stable sort of the rows (checked against qsort of (start,
 * arrival) pairs), every column moved with its row. */
typedef struct ref {
    uint64_t start;
    uint32_t arrival;
} ref;

static int ref_order(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->arrival < y->arrival ? -1 : x->arrival > y->arrival;
}

static void test_sort_against_reference(void **state)
{
    (void)state;
    enum { N = 50000 };
    gfl_event *evs = calloc(N, sizeof *evs);
    ref *refs = calloc(N, sizeof *refs);
    assert_non_null(evs);
    assert_non_null(refs);
    uint64_t rng = 31337;
    uint32_t nm[3] = {gpufl__intern("a"), gpufl__intern("b"), gpufl__intern("c")};
    for (uint32_t i = 0; i < N; i++) {
        uint64_t start = 5000000 + tu_rand(&rng) % 100000; /* many equal starts too */
        evs[i] = ev_of(GFL_EV_KERNEL, start, 1 + i % 5, (uint16_t)(i % 3));
        evs[i].u.kernel.end_ts = start + tu_rand(&rng) % 1000;
        evs[i].u.kernel.correlation = i; /* the arrival order */
        evs[i].u.kernel.name = nm[i % 3];
        evs[i].u.kernel.stream = (uint32_t)(tu_rand(&rng) % 4);
        evs[i].u.kernel.grid[2] = i;
        refs[i] = (ref){start, i};
    }
    qsort(refs, N, sizeof *refs, ref_order);
    gpufl__session_meta m = session();
    char gflt[4200], ndjson[4200];
    write_both("shuffled", evs, N, &m, gflt, ndjson);
    gpufl_trace *t = tu_trace_open(gflt);
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    assert_int_equal(k->n, N);
    for (size_t r = 0; r < N; r++) {
        const gfl_event *e = &evs[refs[r].arrival];
        assert_int_equal(k->correlation[r], refs[r].arrival);
        assert_int_equal(k->start_ns[r], e->h.ts);
        assert_int_equal(gpufl_trace_kernel_end(k, r), e->u.kernel.end_ts);
        assert_int_equal(k->streams->device[k->stream_row[r]], e->h.device);
        assert_int_equal(k->callers->tid[k->caller_row[r]], e->h.tid);
        assert_int_equal(k->streams->stream[k->stream_row[r]], e->u.kernel.stream);
        assert_int_equal(k->configs->grid[k->config_row[r]][2], refs[r].arrival);
        assert_string_equal(S(k->configs->name[k->config_row[r]]), gpufl__intern_str(e->u.kernel.name, NULL));
    }
    gpufl_trace_close(t);
    free(evs);
    free(refs);
}

/* Columns a session never recorded cost nothing: the same kernels with and
 * without their launch attribution. */
static void test_unrecorded_columns_are_free(void **state)
{
    (void)state;
    enum { N = 20000 };
    gfl_event *evs = calloc(N, sizeof *evs);
    assert_non_null(evs);
    for (uint32_t i = 0; i < N; i++) {
        evs[i] = ev_of(GFL_EV_KERNEL, 1000000 + i * 100, 0, 0);
        evs[i].u.kernel.end_ts = evs[i].h.ts + 50;
        evs[i].u.kernel.correlation = i + 1;
    }
    gpufl__session_meta m = session();
    char gflt[4200], ndjson[4200];
    write_both("bare", evs, N, &m, gflt, ndjson);
    gpufl_trace *bare = tu_trace_open(gflt);
    for (uint32_t i = 0; i < N; i++) {
        evs[i].u.kernel.api_start_ts = evs[i].h.ts - 10;
        evs[i].u.kernel.api_end_ts = evs[i].h.ts - 5;
    }
    write_both("attributed", evs, N, &m, gflt, ndjson);
    gpufl_trace *full = tu_trace_open(gflt);
    size_t a = gpufl_trace_memory_bytes(bare), b = gpufl_trace_memory_bytes(full);
    /* start, duration, correlation: 16 bytes a kernel (one configuration,
     * stream and caller: their row columns are 0 throughout); the API call's
     * lead and duration add 8 (each column rounded up to a page) */
    assert_true(a >= N * 16 && a < N * 16 + 64 * 1024);
    assert_true(b - a >= N * 8 && b - a <= N * 8 + 2 * 4096);
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(bare);
    for (size_t r = 0; r < N; r += 997) /* unrecorded columns read 0 */
        assert_true(gpufl_trace_kernel_api_start(k, r) == 0 && k->api_lead_ns[r] == 0 && k->caller_row[r] == 0 &&
                    k->callers->scope[0] == 0 && k->configs->grid[k->config_row[r]][1] == 0);
    gpufl_trace_close(bare);
    gpufl_trace_close(full);
    free(evs);
}

/* Empty sessions and bad paths. */
static void test_empty_and_errors(void **state)
{
    (void)state;
    gpufl__session_meta m = session();
    m.ended = false;
    m.stop_reason = 0;
    char gflt[4200], ndjson[4200];
    write_both("empty", NULL, 0, &m, gflt, ndjson);
    gpufl_trace *t = tu_trace_open(gflt);
    assert_int_equal(gpufl_trace_get_kernels(t)->n, 0);
    assert_non_null(gpufl_trace_get_kernels(t)->start_ns);
    assert_int_equal(gpufl_trace_get_info(t)->end_ns, 0);
    assert_int_equal(gpufl_trace_get_info(t)->stop_reason, 0);
    assert_string_equal(gpufl_trace_string(t, 123456), "");
    gpufl_trace_close(t);
    gpufl_trace_close(NULL);
    char err[1024];
    assert_int_equal(gpufl_trace_open("/nonexistent/x.gflt", &t, err, sizeof err), GPUFL_ENOTFOUND);
    assert_null(t);
    assert_non_null(strstr(err, "/nonexistent/x.gflt"));
    assert_int_equal(gpufl_trace_open(gflt, NULL, err, sizeof err), GPUFL_EINVAL);
    /* a damaged file: the error names it */
    char *text = tu_read_file(gflt, NULL);
    assert_non_null(text);
    free(text);
    FILE *f = fopen(gflt, "r+b");
    assert_non_null(f);
    fseek(f, 20, SEEK_SET);
    fputc('X', f);
    fclose(f);
    assert_int_equal(gpufl_trace_open(gflt, &t, err, sizeof err), GPUFL_ECORRUPT);
    assert_non_null(strstr(err, gflt));
    assert_int_equal(gpufl_trace_open(gflt, &t, NULL, 0), GPUFL_ECORRUPT);
}

/* The names of enum values come from the table the outputs print from;
 * each family ends with NULL, and an unknown family is NULL. */
static void test_enum_names(void **state)
{
    (void)state;
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_COPY_KIND, 0), "unknown");
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_COPY_KIND, 1), "HtoD");
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_COPY_KIND, 5), "PtoP");
    assert_null(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_COPY_KIND, 6));
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_MEM_KIND, 2), "pinned");
    assert_null(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_MEM_KIND, 8));
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_SYNC_KIND, 2), "stream_wait_event");
    assert_null(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_SYNC_KIND, 5));
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_LIMITER, 3), "shared_memory");
    assert_null(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_LIMITER, 5));
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_DROP_REASON, 0), "ring_full");
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_DROP_REASON, 7), "out_of_session");
    assert_null(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_DROP_REASON, 8));
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_EVENT_TYPE, GFL_EV_KERNEL), "kernel");
    assert_null(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_EVENT_TYPE, GFL_EV_TYPE_COUNT));
    assert_null(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_COUNT, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_session_both_formats),
        cmocka_unit_test(test_sort_against_reference),
        cmocka_unit_test(test_unrecorded_columns_are_free),
        cmocka_unit_test(test_empty_and_errors),
        cmocka_unit_test(test_enum_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
