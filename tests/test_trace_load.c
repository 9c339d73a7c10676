/*
 * The parallel trace loaders (src/read/gflt_load.c, ndjson_load.c,
 * trace_merge.c): a session read on several threads must give exactly the
 * trace that reading it on one thread gives.
 *
 * Why: the loaders cut a file into segments (runs of .gflt chunks, ranges of
 * NDJSON lines), read them in any order and merge their rows, their tables
 * of launch configurations, streams and callers, and their string ids. Any
 * slip (a line at a range boundary read twice or lost, equal start times
 * reordered, a row number or string id left in a segment's numbering, an
 * exact time attached to the wrong row) shows as a difference. So every
 * column, table, string, count and session fact of the trace is compared,
 * byte for byte, between the reference (trace_build.c: one event source,
 * one segment) and the loaders on 1, 3 and 8 threads, for random sessions
 * of every event type (times shuffled, and nearly in order), for files cut
 * short, and for damage, whose message must be the one the event source
 * gives (file and line, or file and offset).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/intern.h"
#include "event_gen.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "read/event_source.h"
#include "read/trace_internal.h"
#include "session_file.h"

TU_TEMP_DIR_FIXTURES(dir, "trace-load")

static gpufl__session_meta session(void)
{
    return (gpufl__session_meta){.session_id = "load-20261121-101010-77-beef",
                                 .app_name = "trainer",
                                 .host = "node3",
                                 .gpufl_version = "0.1.0",
                                 .pid = 77,
                                 .start_ns = 1000000000000ull,
                                 .start_wall_ns = 1790000000000000000ull,
                                 .format_version = 1,
                                 .ended = true,
                                 .end_ns = 3000000000000ull,
                                 .end_wall_ns = 1790000002000000000ull,
                                 .lost = {5, 0, 2},
                                 .stop_detail = ""};
}

/* ---- sessions ------------------------------------------------------------ */

static const uint8_t types[] = {GFL_EV_KERNEL,       GFL_EV_KERNEL,      GFL_EV_KERNEL,    GFL_EV_KERNEL,
                                GFL_EV_MEMCPY,       GFL_EV_MEMSET,      GFL_EV_SYNC,      GFL_EV_MEM_ALLOC,
                                GFL_EV_MEM_FREE,     GFL_EV_NVTX_RANGE,  GFL_EV_NVTX_MARK, GFL_EV_DEVICE_METRICS,
                                GFL_EV_HOST_METRICS, GFL_EV_SCOPE_BEGIN, GFL_EV_SCOPE_END, GFL_EV_DEVICE_INFO,
                                GFL_EV_LOG,          GFL_EV_DROPPED,     GFL_EV_TRIGGER,   GFL_EV_TRACE_WINDOW};

/* n random events of every type. Kernels repeat a few launch
 * configurations on a few streams from a few callers, as real ones do;
 * scopes mostly pair up. With in_order, times rise with small jitter (the
 * collector's order); else they are spread at random. */
static gfl_event *random_session(size_t n, uint64_t seed, bool in_order)
{
    uint64_t rng = seed;
    uint32_t names[24];
    for (int i = 0; i < 24; i++) {
        char name[64];
        snprintf(name, sizeof name, "name_%d_%llu", i, (unsigned long long)seed);
        names[i] = gpufl__intern(name);
    }
    gfl_event *evs = calloc(n, sizeof *evs);
    assert_non_null(evs);
    gfl_event config[6];
    for (int c = 0; c < 6; c++)
        tu_random_event(&rng, GFL_EV_KERNEL, 0.3, names, 24, &config[c]);
    uint64_t open_scope = 0, ts = 1000000000000ull;
    for (size_t i = 0; i < n; i++) {
        gfl_event *ev = &evs[i];
        uint8_t type = types[tu_rand(&rng) % sizeof types];
        tu_random_event(&rng, type, 0.3, names, 24, ev);
        if (type == GFL_EV_KERNEL && tu_rand(&rng) % 8) {
            /* a common configuration, stream and caller, new times */
            gfl_kernel_payload k = config[tu_rand(&rng) % 6].u.kernel;
            k.end_ts = ev->u.kernel.end_ts;
            k.api_start_ts = ev->u.kernel.api_start_ts;
            k.api_end_ts = ev->u.kernel.api_end_ts;
            k.correlation = ev->u.kernel.correlation;
            k.stream = (uint32_t)(tu_rand(&rng) % 4);
            ev->u.kernel = k;
            ev->h.tid = 7;
            ev->h.device = 0;
        }
        if (type == GFL_EV_TRIGGER)
            ev->u.trigger.outcome %= GFL_TRIGGER_OUTCOME_COUNT;
        if (type == GFL_EV_TRACE_WINDOW) {
            /* a few windows, opened and closed in any order, some never closed */
            ev->u.trace_window.index = 1 + (uint32_t)(tu_rand(&rng) % 6);
            ev->u.trace_window.end_ts = tu_rand(&rng) % 3 ? 0 : ev->h.ts + 1 + tu_rand(&rng) % 100000;
        }
        if (type == GFL_EV_MEM_ALLOC && tu_rand(&rng) % 4 == 0)
            ev->h.flags |= GFL_F_MEM_FAILED;
        if (type == GFL_EV_SCOPE_END && open_scope && tu_rand(&rng) % 4) {
            ev->u.scope.id = open_scope; /* ends the scope begun last */
            open_scope = 0;
        } else if (type == GFL_EV_SCOPE_BEGIN) {
            open_scope = ev->u.scope.id;
        }
        if (in_order) {
            ts += tu_rand(&rng) % 2000;
            uint64_t jitter = tu_rand(&rng) % 16 == 0 ? tu_rand(&rng) % 50000 : 0;
            uint64_t start = ts - jitter;
            if (tu_rand(&rng) % 32 == 0)
                start = evs[i ? i - 1 : 0].h.ts ? evs[i ? i - 1 : 0].h.ts : start; /* equal times */
            /* the span's end follows the start it was drawn for */
            int64_t shift = (int64_t)(start - ev->h.ts);
            ev->h.ts = start;
            if (type == GFL_EV_KERNEL) {
                ev->u.kernel.end_ts += (uint64_t)shift;
                if (ev->u.kernel.api_start_ts && tu_rand(&rng) % 4) {
                    ev->u.kernel.api_start_ts = start - 1000 - tu_rand(&rng) % 5000;
                    ev->u.kernel.api_end_ts = ev->u.kernel.api_start_ts + tu_rand(&rng) % 3000;
                }
            }
        }
    }
    return evs;
}

/* Writes evs as <dir>/<name>.gflt (chunks of chunk_events) and as the
 * NDJSON directory <dir>/<name>. */
static void write_both(const char *name, const gfl_event *evs, size_t n, uint32_t chunk_events, char *gflt,
                       char *ndjson)
{
    gpufl__session_meta m = session();
    sprintf(gflt, "%s/%s.gflt", dir, name);
    sprintf(ndjson, "%s/%s", dir, name);
    tu_write_gflt_and_ndjson(gflt, ndjson, evs, n, &m, chunk_events, 1);
}

/* ---- loading --------------------------------------------------------------- */

/* The reference: one event source, one segment. rc, and the message. */
static int load_reference(const char *path, gpufl_trace **t, char *err, size_t err_len)
{
    gpufl__event_source *src;
    *t = NULL;
    int rc = gpufl__source_open(path, &src, err, err_len);
    if (rc != 0)
        return rc;
    rc = gpufl__trace_build(src, t, err, err_len);
    gpufl__source_close(src);
    return rc;
}

static void must(int rc, const char *path, const char *err)
{
    if (rc != 0)
        fail_msg("%s: %s", path, err);
}

/* ---- comparing --------------------------------------------------------------- */

#define SAME(a, b, f, n)                                                                                               \
    do {                                                                                                               \
        if ((n) && memcmp((a)->f, (b)->f, (n) * sizeof *(a)->f) != 0)                                                  \
            fail_msg("%s differs", #f);                                                                                \
    } while (0)

static void same_scopes(const gpufl_trace_scopes *a, const gpufl_trace_scopes *b)
{
    assert_int_equal(a->n, b->n);
    SAME(a, b, begin_ns, a->n);
    SAME(a, b, end_ns, a->n);
    SAME(a, b, id, a->n);
    SAME(a, b, parent, a->n);
    SAME(a, b, name, a->n);
    SAME(a, b, tid, a->n);
    SAME(a, b, depth, a->n);
    SAME(a, b, implicit, a->n);
    SAME(a, b, domain, a->n);
    SAME(a, b, instant, a->n);
    SAME(a, b, has_seq, a->n);
    SAME(a, b, seq, a->n);
}

static void same_exact(const gpufl_trace_exact *a, size_t na, const gpufl_trace_exact *b, size_t nb)
{
    assert_int_equal(na, nb);
    if (na)
        assert_memory_equal(a, b, na * sizeof *a);
}

static void same_transfers(const gpufl_trace_transfers *a, const gpufl_trace_transfers *b)
{
    assert_int_equal(a->n, b->n);
    SAME(a, b, start_ns, a->n);
    SAME(a, b, dur_ns, a->n);
    SAME(a, b, bytes, a->n);
    SAME(a, b, stream_row, a->n);
    SAME(a, b, caller_row, a->n);
    SAME(a, b, correlation, a->n);
    SAME(a, b, dst_device, a->n);
    SAME(a, b, kind, a->n);
    SAME(a, b, src_kind, a->n);
    SAME(a, b, dst_kind, a->n);
    SAME(a, b, value, a->n);
    SAME(a, b, api_lead_ns, a->n);
    SAME(a, b, api_dur_ns, a->n);
    SAME(a, b, graph_id, a->n);
    same_exact(a->exact, a->nexact, b->exact, b->nexact);
}

static void same_info(const gpufl_trace *ta, const gpufl_trace *tb)
{
    const gpufl_trace_info *a = gpufl_trace_get_info(ta), *b = gpufl_trace_get_info(tb);
    assert_int_equal(a->format_version, b->format_version);
    assert_int_equal(a->session_id, b->session_id);
    assert_int_equal(a->app_name, b->app_name);
    assert_int_equal(a->driver_version, b->driver_version);
    assert_int_equal(a->cuda_driver_version, b->cuda_driver_version);
    assert_int_equal(a->start_ns, b->start_ns);
    assert_int_equal(a->end_ns, b->end_ns);
    assert_int_equal(a->ndevices, b->ndevices);
    if (a->ndevices)
        assert_memory_equal(a->devices, b->devices, a->ndevices * sizeof *a->devices);
    assert_memory_equal(a->dropped, b->dropped, sizeof a->dropped);
    assert_memory_equal(a->lost, b->lost, sizeof a->lost);
    assert_int_equal(a->skipped_bytes, b->skipped_bytes);
    assert_int_equal(a->skipped_lines, b->skipped_lines);
    assert_int_equal(a->skipped_chunks, b->skipped_chunks);
    assert_int_equal(a->source_format, b->source_format);
    assert_string_equal(a->source, b->source);
    for (unsigned ty = 0; ty < 256; ty++)
        assert_int_equal(gpufl_trace_event_count(ta, ty), gpufl_trace_event_count(tb, ty));
}

/* Every string id the same text; every table and column the same bytes. */
static void same_trace(const gpufl_trace *ta, const gpufl_trace *tb)
{
    same_info(ta, tb);
    assert_int_equal(ta->strings.n, tb->strings.n);
    for (uint32_t id = 0; id < ta->strings.n; id++)
        assert_string_equal(gpufl_trace_string(ta, id), gpufl_trace_string(tb, id));
    same_scopes(gpufl_trace_get_scopes(ta), gpufl_trace_get_scopes(tb));
    same_scopes(gpufl_trace_get_nvtx(ta), gpufl_trace_get_nvtx(tb));

    const gpufl_trace_launch_configs *ga = gpufl_trace_get_launch_configs(ta), *gb = gpufl_trace_get_launch_configs(tb);
    assert_int_equal(ga->n, gb->n);
    SAME(ga, gb, name, ga->n);
    SAME(ga, gb, mangled, ga->n);
    SAME(ga, gb, grid, ga->n);
    SAME(ga, gb, block, ga->n);
    SAME(ga, gb, registers, ga->n);
    SAME(ga, gb, static_smem, ga->n);
    SAME(ga, gb, dynamic_smem, ga->n);
    SAME(ga, gb, local_mem, ga->n);
    SAME(ga, gb, occupancy_x10000, ga->n);
    SAME(ga, gb, limiter, ga->n);
    const gpufl_trace_streams *sa = gpufl_trace_get_streams(ta), *sb = gpufl_trace_get_streams(tb);
    assert_int_equal(sa->n, sb->n);
    SAME(sa, sb, device, sa->n);
    SAME(sa, sb, context, sa->n);
    SAME(sa, sb, stream, sa->n);
    const gpufl_trace_callers *ca = gpufl_trace_get_callers(ta), *cb = gpufl_trace_get_callers(tb);
    assert_int_equal(ca->n, cb->n);
    SAME(ca, cb, tid, ca->n);
    SAME(ca, cb, scope, ca->n);
    SAME(ca, cb, nvtx, ca->n);
    SAME(ca, cb, external_id, ca->n);
    SAME(ca, cb, external_kind, ca->n);
    SAME(ca, cb, stack, ca->n);

    const gpufl_trace_kernels *ka = gpufl_trace_get_kernels(ta), *kb = gpufl_trace_get_kernels(tb);
    assert_int_equal(ka->n, kb->n);
    SAME(ka, kb, start_ns, ka->n);
    SAME(ka, kb, dur_ns, ka->n);
    SAME(ka, kb, config_row, ka->n);
    SAME(ka, kb, stream_row, ka->n);
    SAME(ka, kb, caller_row, ka->n);
    SAME(ka, kb, correlation, ka->n);
    SAME(ka, kb, api_lead_ns, ka->n);
    SAME(ka, kb, api_dur_ns, ka->n);
    SAME(ka, kb, graph_id, ka->n);
    same_exact(ka->exact, ka->nexact, kb->exact, kb->nexact);
    same_transfers(gpufl_trace_get_copies(ta), gpufl_trace_get_copies(tb));
    same_transfers(gpufl_trace_get_memsets(ta), gpufl_trace_get_memsets(tb));

    const gpufl_trace_syncs *ya = gpufl_trace_get_syncs(ta), *yb = gpufl_trace_get_syncs(tb);
    assert_int_equal(ya->n, yb->n);
    SAME(ya, yb, start_ns, ya->n);
    SAME(ya, yb, dur_ns, ya->n);
    SAME(ya, yb, stream_row, ya->n);
    SAME(ya, yb, caller_row, ya->n);
    SAME(ya, yb, correlation, ya->n);
    SAME(ya, yb, kind, ya->n);
    SAME(ya, yb, cuda_event, ya->n);
    same_exact(ya->exact, ya->nexact, yb->exact, yb->nexact);

    const gpufl_trace_memory *ma = gpufl_trace_get_memory(ta), *mb = gpufl_trace_get_memory(tb);
    assert_int_equal(ma->n, mb->n);
    SAME(ma, mb, ts_ns, ma->n);
    SAME(ma, mb, address, ma->n);
    SAME(ma, mb, bytes, ma->n);
    SAME(ma, mb, stream_row, ma->n);
    SAME(ma, mb, caller_row, ma->n);
    SAME(ma, mb, correlation, ma->n);
    SAME(ma, mb, is_free, ma->n);
    SAME(ma, mb, kind, ma->n);
    SAME(ma, mb, failed, ma->n);

    const gpufl_trace_triggers *xa = gpufl_trace_get_triggers(ta), *xb = gpufl_trace_get_triggers(tb);
    assert_int_equal(xa->n, xb->n);
    SAME(xa, xb, ts_ns, xa->n);
    SAME(xa, xb, tid, xa->n);
    SAME(xa, xb, kind, xa->n);
    SAME(xa, xb, detail, xa->n);
    SAME(xa, xb, dump, xa->n);
    SAME(xa, xb, outcome, xa->n);

    const gpufl_trace_windows *wa = gpufl_trace_get_trace_windows(ta), *wb = gpufl_trace_get_trace_windows(tb);
    assert_int_equal(wa->n, wb->n);
    SAME(wa, wb, begin_ns, wa->n);
    SAME(wa, wb, end_ns, wa->n);
    SAME(wa, wb, index, wa->n);
    SAME(wa, wb, reason, wa->n);
    SAME(wa, wb, detail, wa->n);
    SAME(wa, wb, unended, wa->n);

    const gpufl_trace_device_samples *da = gpufl_trace_get_device_samples(ta), *db = gpufl_trace_get_device_samples(tb);
    assert_int_equal(da->n, db->n);
    SAME(da, db, ts_ns, da->n);
    SAME(da, db, device, da->n);
    SAME(da, db, valid, da->n);
    SAME(da, db, gpu_util_pct, da->n);
    SAME(da, db, mem_util_pct, da->n);
    SAME(da, db, mem_used_bytes, da->n);
    SAME(da, db, mem_total_bytes, da->n);
    SAME(da, db, proc_mem_bytes, da->n);
    SAME(da, db, energy_mj, da->n);
    SAME(da, db, temp_c, da->n);
    SAME(da, db, power_mw, da->n);
    SAME(da, db, sm_clock_mhz, da->n);
    SAME(da, db, mem_clock_mhz, da->n);
    SAME(da, db, throttle_reasons, da->n);
    SAME(da, db, pcie_rx_kbps, da->n);
    SAME(da, db, pcie_tx_kbps, da->n);
    SAME(da, db, mem_free_bytes, da->n);
    SAME(da, db, ecc_corrected, da->n);
    SAME(da, db, ecc_uncorrected, da->n);
    SAME(da, db, power_limit_mw, da->n);
    SAME(da, db, gfx_clock_mhz, da->n);
    SAME(da, db, mem_temp_c, da->n);
    SAME(da, db, fan_pct, da->n);

    const gpufl_trace_host_samples *ha = gpufl_trace_get_host_samples(ta), *hb = gpufl_trace_get_host_samples(tb);
    assert_int_equal(ha->n, hb->n);
    SAME(ha, hb, ts_ns, ha->n);
    SAME(ha, hb, valid, ha->n);
    SAME(ha, hb, proc_cpu_pct_x100, ha->n);
    SAME(ha, hb, sys_cpu_pct_x100, ha->n);
    SAME(ha, hb, ram_used_bytes, ha->n);
    SAME(ha, hb, ram_total_bytes, ha->n);
    SAME(ha, hb, proc_rss_bytes, ha->n);
    SAME(ha, hb, cpu_count, ha->n);
}

/* The exact times of every row agree with what the columns say. */
static void check_accessors(const gpufl_trace *t)
{
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    size_t exact = 0;
    for (size_t i = 0; i < k->n; i++) {
        uint64_t end = gpufl_trace_kernel_end(k, i), api0 = gpufl_trace_kernel_api_start(k, i),
                 api1 = gpufl_trace_kernel_api_end(k, i);
        if (k->dur_ns[i] != GPUFL_TRACE_EXACT)
            assert_int_equal(end, k->start_ns[i] + k->dur_ns[i]);
        if (k->api_lead_ns[i] == 0)
            assert_true(api0 == 0 && api1 == 0);
        else if (k->api_lead_ns[i] != GPUFL_TRACE_EXACT)
            assert_true(api0 == k->start_ns[i] - k->api_lead_ns[i] && api1 == api0 + k->api_dur_ns[i]);
        exact += k->dur_ns[i] == GPUFL_TRACE_EXACT || k->api_lead_ns[i] == GPUFL_TRACE_EXACT;
    }
    assert_int_equal(exact, k->nexact);
    for (size_t i = 1; i < k->nexact; i++)
        assert_true(k->exact[i - 1].row < k->exact[i].row);
}

/* Loads path as the reference and on 1, 3 and 8 threads: all the same. */
static void all_agree(const char *path, size_t min_rows)
{
    char err[1024];
    gpufl_trace *ref;
    must(load_reference(path, &ref, err, sizeof err), path, err);
    assert_true(gpufl_trace_get_kernels(ref)->n + gpufl_trace_get_nvtx(ref)->n >= min_rows);
    check_accessors(ref);
    static const unsigned threads[] = {1, 3, 8};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        gpufl_trace *t;
        must(gpufl__trace_open(path, threads[i], &t, err, sizeof err), path, err);
        same_trace(ref, t);
        gpufl_trace_close(t);
    }
    gpufl_trace_close(ref);
}

/* ---- the tests ---------------------------------------------------------------- */

/* Times at random: every segment overlaps every other (the heap merge). */
static void test_shuffled_sessions_agree(void **state)
{
    (void)state;
    enum { N = 24000 };
    gfl_event *evs = random_session(N, 11, false);
    char gflt[4200], ndjson[4200];
    write_both("shuffled", evs, N, 500, gflt, ndjson);
    all_agree(gflt, N / 10);
    all_agree(ndjson, N / 10);
    free(evs);
}

/* Times nearly in order, equal times across boundaries (segments are
 * concatenated, or merged where they overlap). */
static void test_ordered_sessions_agree(void **state)
{
    (void)state;
    enum { N = 24000 };
    gfl_event *evs = random_session(N, 12, true);
    char gflt[4200], ndjson[4200];
    write_both("ordered", evs, N, 700, gflt, ndjson);
    all_agree(gflt, N / 10);
    all_agree(ndjson, N / 10);
    free(evs);
}

/* PyTorch's op sequence numbers on NVTX ranges (GFL_F_NVTX_SEQ) read back
 * alike from both formats, a 0 included; without the flag there is none. */
static void test_nvtx_seq_in_both_formats(void **state)
{
    (void)state;
    gfl_event evs[3];
    memset(evs, 0, sizeof evs);
    uint64_t seqs[3] = {0, 41, 77};
    for (int i = 0; i < 3; i++) {
        evs[i].h.type = GFL_EV_NVTX_RANGE;
        evs[i].h.tid = 9;
        evs[i].h.ts = 1000000000000ull + (uint64_t)i * 1000;
        evs[i].h.flags = i < 2 ? GFL_F_NVTX_SEQ : 0; /* the third: a value but no flag */
        evs[i].u.nvtx.end_ts = evs[i].h.ts + 500;
        evs[i].u.nvtx.id = (uint64_t)i + 1;
        evs[i].u.nvtx.name = gpufl__intern(i ? "aten::mm" : "aten::addmm");
        evs[i].u.nvtx.seq = seqs[i];
    }
    char gflt[4200], ndjson[4200];
    write_both("nvtx_seq", evs, 3, 700, gflt, ndjson);
    const char *paths[2] = {gflt, ndjson};
    for (int p = 0; p < 2; p++) {
        gpufl_trace *t = tu_trace_open(paths[p]);
        const gpufl_trace_scopes *r = gpufl_trace_get_nvtx(t);
        assert_int_equal(r->n, 3);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(r->has_seq[i], i < 2);
            assert_int_equal(r->seq[i], i < 2 ? seqs[i] : 0);
        }
        gpufl_trace_close(t);
    }
}

static void truncate_copy(const char *from, const char *to, off_t keep)
{
    size_t n;
    char *data = tu_read_file(from, &n);
    assert_non_null(data);
    assert_true((size_t)keep <= n);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, (size_t)keep, f), (size_t)keep);
    fclose(f);
    free(data);
}

/* A file cut short reads to its last whole chunk or line, and says how
 * much it skipped, whichever loader reads it. */
static void test_truncated_files_agree(void **state)
{
    (void)state;
    enum { N = 20000 };
    gfl_event *evs = random_session(N, 13, true);
    char gflt[4200], ndjson[4200], cut[4300];
    write_both("cut", evs, N, 600, gflt, ndjson);
    struct stat st;
    assert_int_equal(stat(gflt, &st), 0);
    sprintf(cut, "%s/cut-short.gflt", dir);
    truncate_copy(gflt, cut, st.st_size * 2 / 3);
    all_agree(cut, 1);
    char err[1024];
    gpufl_trace *t;
    must(gpufl__trace_open(cut, 3, &t, err, sizeof err), cut, err);
    assert_true(gpufl_trace_get_info(t)->skipped_bytes > 0);
    gpufl_trace_close(t);

    char log[4300];
    sprintf(log, "%s/device.log", ndjson);
    assert_int_equal(stat(log, &st), 0);
    sprintf(cut, "%s/cut-short.log", dir);
    truncate_copy(log, cut, st.st_size * 3 / 5);
    all_agree(cut, 1);
    must(gpufl__trace_open(cut, 3, &t, err, sizeof err), cut, err);
    assert_true(gpufl_trace_get_info(t)->skipped_bytes > 0);
    gpufl_trace_close(t);
    free(evs);
}

/* Damage in the middle: the same error as the event source's. */
static void same_error(const char *path)
{
    char want[1024], got[1024];
    gpufl_trace *t;
    int rc = load_reference(path, &t, want, sizeof want);
    assert_int_equal(rc, GPUFL_ECORRUPT);
    for (unsigned threads = 1; threads <= 8; threads += 7) {
        assert_int_equal(gpufl__trace_open(path, threads, &t, got, sizeof got), GPUFL_ECORRUPT);
        assert_null(t);
        assert_string_equal(got, want);
    }
    assert_non_null(strstr(want, path));
}

static void test_damage_is_reported_alike(void **state)
{
    (void)state;
    enum { N = 20000 };
    gfl_event *evs = random_session(N, 14, true);
    char gflt[4200], ndjson[4200], bad[4300];
    write_both("damaged", evs, N, 600, gflt, ndjson);

    /* a byte flipped well inside the file: a chunk fails its checksum */
    size_t n;
    char *data = tu_read_file(gflt, &n);
    assert_non_null(data);
    data[n * 3 / 5] ^= 0x55;
    sprintf(bad, "%s/flipped.gflt", dir);
    FILE *f = fopen(bad, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    free(data);
    same_error(bad);

    /* a line that is not JSON, in a later range of device.log */
    char log[4300];
    sprintf(log, "%s/device.log", ndjson);
    data = tu_read_file(log, &n);
    assert_non_null(data);
    char *line = memchr(data + n * 4 / 5, '\n', n - n * 4 / 5);
    assert_non_null(line);
    line[1] = '#';
    sprintf(bad, "%s/broken.log", dir);
    f = fopen(bad, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    free(data);
    same_error(bad);
    char want[1024];
    gpufl_trace *t;
    (void)load_reference(bad, &t, want, sizeof want);
    assert_non_null(strstr(want, "broken.log:")); /* file:line */
    free(evs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shuffled_sessions_agree),  cmocka_unit_test(test_ordered_sessions_agree),
        cmocka_unit_test(test_nvtx_seq_in_both_formats), cmocka_unit_test(test_truncated_files_agree),
        cmocka_unit_test(test_damage_is_reported_alike),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
