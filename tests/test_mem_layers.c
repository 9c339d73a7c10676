/*
 * The layers of memory and their peaks (src/analyze/ana_mem_layers.c,
 * ana_mem_peaks.c, ana_mem_series.c), and framework blocks kept apart from
 * the driver's allocations in the memory analysis (ana_memory.c).
 *
 * Why: NVML, the driver and the framework's allocator each see part of a
 * process's memory; the gaps between them are what a user asks about ("the
 * driver says 1.6 GiB, NVML 2.2 GiB: where is the rest?"). Every layer must
 * be read at the same moment, a layer that was not recorded must be absent
 * rather than 0, a decimated timeline must keep the peaks, and a tensor at
 * its segment's address must not be taken for a second allocation of it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ana_fixture.h"
#include "analyze/ana_oom.h"
#include "analyze/analysis.h"
#include "session_file.h"

#define MIB (1ull << 20)
#define GIB (1ull << 30)
#define T0 (AF_START + 100000)
#define SAMPLE GFL_SOURCE_DIR "/samples/train_sample"

TU_TEMP_DIR_FIXTURES(dir, "mem-layers")

static void nvml(af *f, uint64_t ts, uint64_t used, uint64_t proc)
{
    af_line(f, AF_SYSTEM,
            "{\"type\":\"device_metrics\",\"ts_ns\":%llu,\"device\":0,\"gpu_util_pct\":50,"
            "\"mem_used_bytes\":%llu,\"mem_total_bytes\":%llu,\"proc_mem_bytes\":%llu}",
            (unsigned long long)ts, (unsigned long long)used, 80ull * GIB, (unsigned long long)proc);
}

static void allocator(af *f, uint64_t ts, uint64_t allocated, uint64_t reserved, uint64_t active, uint64_t split,
                      uint64_t largest)
{
    af_line(f, AF_DEVICE,
            "{\"type\":\"allocator\",\"ts_ns\":%llu,\"device\":0,\"framework\":\"pytorch\",\"reason\":\"sample\","
            "\"allocated\":%llu,\"reserved\":%llu,\"active\":%llu,\"inactive_split\":%llu,\"largest_free\":%llu}",
            (unsigned long long)ts, (unsigned long long)allocated, (unsigned long long)reserved,
            (unsigned long long)active, (unsigned long long)split, (unsigned long long)largest);
}

/* A memory line with a stream, a scope, an NVTX range and the framework
 * flag (what af_mem leaves out). */
static void mem(af *f, bool is_free, uint64_t ts, uint64_t addr, uint64_t bytes, unsigned stream, uint64_t scope,
                const char *nvtx, bool framework)
{
    char extra[160] = "";
    size_t n = 0;
    if (scope)
        n += (size_t)snprintf(extra + n, sizeof extra - n, ",\"scope\":%llu", (unsigned long long)scope);
    if (nvtx)
        n += (size_t)snprintf(extra + n, sizeof extra - n, ",\"nvtx\":\"%s\"", nvtx);
    if (framework)
        snprintf(extra + n, sizeof extra - n, ",\"framework\":true");
    af_line(f, AF_DEVICE,
            "{\"type\":\"%s\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":%u,\"corr\":0,"
            "\"address\":\"0x%llx\",\"bytes\":%llu,\"kind\":\"device\",\"tid\":9%s}",
            is_free ? "mem_free" : "mem_alloc", (unsigned long long)ts, stream, (unsigned long long)addr,
            (unsigned long long)bytes, extra);
}

/* All five layers: NVML (all processes and this one), a driver that
 * allocated a 512 MiB segment for the allocator and 256 MiB outside it,
 * and the allocator's states. The process peaks at T0 + 400. */
static gpufl_trace *three_layers(void)
{
    af f = {.end_ns = T0 + 1000};
    af_device(&f, 0, "NVIDIA H100", 80 * GIB);
    mem(&f, false, T0 + 10, 0x7000000000, 512 * MIB, 0, 0, NULL, false);
    allocator(&f, T0 + 20, 100 * MIB, 512 * MIB, 120 * MIB, 30 * MIB, 200 * MIB);
    nvml(&f, T0 + 100, 3 * GIB, 1 * GIB);
    mem(&f, false, T0 + 200, 0x7100000000, 256 * MIB, 0, 0, NULL, false);
    allocator(&f, T0 + 300, 300 * MIB, 512 * MIB, 310 * MIB, 20 * MIB, 100 * MIB);
    nvml(&f, T0 + 400, 3 * GIB + 512 * MIB, GIB + 512 * MIB);
    nvml(&f, T0 + 500, 3 * GIB + 200 * MIB, GIB + 200 * MIB);
    allocator(&f, T0 + 600, 50 * MIB, 512 * MIB, 60 * MIB, 5 * MIB, 400 * MIB);
    return af_open(&f, dir, "layers");
}

static void layers_and_gaps(void **state)
{
    (void)state;
    gpufl_trace *t = three_layers();
    gpufl__ana_mem_layers l;
    assert_int_equal(gpufl__analyze_mem_layers(t, 0, &l), 0);
    assert_int_equal(l.n, 1);
    const gpufl__ana_mem_layers_dev *d = &l.devices[0];
    assert_int_equal(d->device, 0);
    assert_int_equal(d->total_bytes, 80 * GIB);
    assert_int_equal(d->known, (1u << GPUFL__ANA_MEM_SERIES) - 1); /* every series */
    assert_int_equal(d->framework_source, GPUFL__ANA_FW_ALLOCATOR);
    assert_string_equal(gpufl_trace_string(t, d->framework), "pytorch");
    assert_false(d->driver_frees);
    assert_int_equal(d->peak[GPUFL__ANA_MEM_ALLOCATED], 300 * MIB);
    assert_int_equal(d->peak_ns[GPUFL__ANA_MEM_ALLOCATED], T0 + 300);
    assert_int_equal(d->peak[GPUFL__ANA_MEM_DRIVER], 768 * MIB);
    assert_int_equal(d->peak[GPUFL__ANA_MEM_LARGEST_FREE], 400 * MIB);
    /* at the process's peak, every layer as it was then */
    assert_int_equal(d->at_layer, GPUFL__ANA_MEM_PROCESS);
    assert_int_equal(d->at_ns, T0 + 400);
    assert_int_equal(d->at_valid, d->known);
    assert_int_equal(d->at[GPUFL__ANA_MEM_PROCESS], GIB + 512 * MIB);
    assert_int_equal(d->at[GPUFL__ANA_MEM_DRIVER], 768 * MIB);
    assert_int_equal(d->at[GPUFL__ANA_MEM_ALLOCATED], 300 * MIB);
    assert_int_equal(d->at[GPUFL__ANA_MEM_INACTIVE_SPLIT], 20 * MIB);
    assert_int_equal(d->ngaps, 4);
    static const uint8_t pairs[4][2] = {{GPUFL__ANA_MEM_DEVICE, GPUFL__ANA_MEM_PROCESS},
                                        {GPUFL__ANA_MEM_PROCESS, GPUFL__ANA_MEM_DRIVER},
                                        {GPUFL__ANA_MEM_DRIVER, GPUFL__ANA_MEM_RESERVED},
                                        {GPUFL__ANA_MEM_RESERVED, GPUFL__ANA_MEM_ALLOCATED}};
    static const int64_t bytes[4] = {2 * GIB, 768 * MIB, 256 * MIB, 212 * MIB};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(d->gaps[i].upper, pairs[i][0]);
        assert_int_equal(d->gaps[i].lower, pairs[i][1]);
        assert_int_equal(d->gaps[i].bytes, bytes[i]);
    }
    char why[512], key[64];
    assert_non_null(strstr(gpufl__ana_mem_gap_why(d->gaps[1].upper, d->gaps[1].lower, why, sizeof why), "context"));
    assert_non_null(strstr(gpufl__ana_mem_gap_why(d->gaps[3].upper, d->gaps[3].lower, why, sizeof why), "not leaked"));
    assert_string_equal(gpufl__ana_mem_gap_key(d->gaps[1].upper, d->gaps[1].lower, key, sizeof key),
                        "process_used-driver");
    /* a gap across an unknown layer holds both explanations */
    gpufl__ana_mem_gap_why(GPUFL__ANA_MEM_PROCESS, GPUFL__ANA_MEM_RESERVED, why, sizeof why);
    assert_non_null(strstr(why, "context"));
    assert_non_null(strstr(why, "outside the framework"));
    /* the timeline: every change, in order */
    assert_int_equal(d->changes, 9); /* the session's start, 3 NVML samples, 2 allocations, 3 states */
    assert_int_equal(d->npoints, 9);
    for (uint32_t i = 1; i < d->npoints; i++)
        assert_true(d->points[i].ts_ns >= d->points[i - 1].ts_ns);
    gpufl__ana_mem_layers_free(&l);

    /* decimated to 3 points, the peaks are still there */
    assert_int_equal(gpufl__analyze_mem_layers(t, 3, &l), 0);
    d = &l.devices[0];
    assert_int_equal(d->npoints, 3);
    uint64_t top[GPUFL__ANA_MEM_SERIES] = {0};
    for (uint32_t i = 0; i < d->npoints; i++)
        for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++) {
            if (!(d->points[i].valid & GPUFL__ANA_MEM_BIT(s)))
                assert_int_equal(d->points[i].v[s], 0);
            if (d->points[i].v[s] > top[s])
                top[s] = d->points[i].v[s];
        }
    for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++)
        assert_int_equal(top[s], d->peak[s]);
    gpufl__ana_mem_layers_free(&l);
    gpufl_trace_close(t);
}

/* A session with driver allocations only: one layer, no gaps, nothing
 * else said to be 0. */
static void unknown_layers_absent(void **state)
{
    (void)state;
    af f = {.end_ns = T0 + 1000};
    mem(&f, false, T0 + 10, 0x1000, 4 * MIB, 0, 0, NULL, false);
    mem(&f, true, T0 + 20, 0x1000, 4 * MIB, 0, 0, NULL, false);
    gpufl_trace *t = af_open(&f, dir, "driver-only");
    gpufl__ana_mem_layers l;
    assert_int_equal(gpufl__analyze_mem_layers(t, 0, &l), 0);
    assert_int_equal(l.n, 1);
    const gpufl__ana_mem_layers_dev *d = &l.devices[0];
    assert_int_equal(d->known, GPUFL__ANA_MEM_BIT(GPUFL__ANA_MEM_DRIVER));
    assert_int_equal(d->framework_source, GPUFL__ANA_FW_NONE);
    assert_true(d->driver_frees);
    assert_int_equal(d->at_layer, GPUFL__ANA_MEM_DRIVER);
    assert_int_equal(d->at_ns, T0 + 10);
    assert_int_equal(d->at[GPUFL__ANA_MEM_DRIVER], 4 * MIB);
    assert_int_equal(d->at_valid, GPUFL__ANA_MEM_BIT(GPUFL__ANA_MEM_DRIVER));
    assert_int_equal(d->ngaps, 0);
    assert_int_equal(d->total_bytes, 0);
    gpufl__ana_mem_layers_free(&l);
    gpufl_trace_close(t);

    f = (af){.end_ns = T0 + 1000};
    t = af_open(&f, dir, "empty");
    assert_int_equal(gpufl__analyze_mem_layers(t, 0, &l), 0);
    assert_int_equal(l.n, 0);
    gpufl__ana_mem_layers_free(&l);
    gpufl__ana_mem_peaks p;
    assert_int_equal(gpufl__analyze_mem_peaks(t, &p), 0);
    assert_int_equal(p.n, 0);
    gpufl__ana_mem_peaks_free(&p);
    gpufl_trace_close(t);
}

/* Tensors inside a segment, the first at the segment's own address: the
 * driver row keeps its one allocation, the blocks are replayed apart and
 * are the framework's allocated layer when no allocator state was
 * recorded. */
static void blocks_apart(void **state)
{
    (void)state;
    af f = {.end_ns = T0 + 1000};
    mem(&f, false, T0 + 10, 0x7000000000, 20 * MIB, 0, 0, NULL, false);
    mem(&f, false, T0 + 20, 0x7000000000, 2 * MIB, 0, 0, NULL, true);
    mem(&f, false, T0 + 30, 0x7000200000, 4 * MIB, 0, 0, NULL, true);
    mem(&f, true, T0 + 40, 0x7000000000, 2 * MIB, 0, 0, NULL, true);
    gpufl_trace *t = af_open(&f, dir, "blocks");
    gpufl__ana_memory m;
    assert_int_equal(gpufl__analyze_memory(t, NULL, &m), 0);
    assert_int_equal(m.n, 2);
    assert_int_equal(m.rows[0].space, GPUFL__ANA_SPACE_DEVICE);
    assert_int_equal(m.rows[0].allocs, 1);
    assert_int_equal(m.rows[0].never_freed, 1);
    assert_int_equal(m.rows[0].never_freed_why, GPUFL__ANA_NEVER_FREED_NO_FREES);
    assert_int_equal(m.rows[1].space, GPUFL__ANA_SPACE_FRAMEWORK);
    assert_string_equal(gpufl__ana_space_name(m.rows[1].space), "framework");
    assert_int_equal(m.rows[1].allocs, 2);
    assert_int_equal(m.rows[1].frees, 1);
    assert_int_equal(m.rows[1].peak_bytes, 6 * MIB);
    assert_int_equal(m.rows[1].end_bytes, 4 * MIB);
    assert_int_equal(m.rows[1].never_freed_why, GPUFL__ANA_NEVER_FREED_LEAKS);
    gpufl__ana_memory_free(&m);

    gpufl__ana_mem_layers l;
    assert_int_equal(gpufl__analyze_mem_layers(t, 0, &l), 0);
    const gpufl__ana_mem_layers_dev *d = &l.devices[0];
    assert_int_equal(d->framework_source, GPUFL__ANA_FW_BLOCKS);
    assert_int_equal(d->known,
                     GPUFL__ANA_MEM_BIT(GPUFL__ANA_MEM_DRIVER) | GPUFL__ANA_MEM_BIT(GPUFL__ANA_MEM_ALLOCATED));
    assert_int_equal(d->peak[GPUFL__ANA_MEM_DRIVER], 20 * MIB);
    assert_int_equal(d->peak[GPUFL__ANA_MEM_ALLOCATED], 6 * MIB);
    assert_int_equal(d->at_layer, GPUFL__ANA_MEM_DRIVER);
    assert_int_equal(d->ngaps, 1);
    assert_int_equal(d->gaps[0].lower, GPUFL__ANA_MEM_ALLOCATED);
    assert_int_equal(d->gaps[0].bytes, 20 * MIB); /* at the driver's peak no block was live yet */
    gpufl__ana_mem_layers_free(&l);
    /* peaks of live memory: the framework's blocks, not the driver's segment */
    gpufl__ana_mem_peaks p;
    assert_int_equal(gpufl__analyze_mem_peaks(t, &p), 0);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.rows[0].series, GPUFL__ANA_MEM_ALLOCATED);
    assert_true(p.rows[0].blocks);
    assert_int_equal(p.rows[0].peak_bytes, 6 * MIB);
    assert_int_equal(p.rows[0].allocs, 2);
    gpufl__ana_mem_peaks_free(&p);
    gpufl_trace_close(t);
}

/* Three steps (scope ids 100..102), each with an NVTX range "fwd" and two
 * streams: a 2 MiB temporary on stream 7 freed in the step, 1 MiB kept on
 * stream 8. */
static void peaks_by_name_and_stream(void **state)
{
    (void)state;
    af f = {.end_ns = T0 + 10000};
    for (unsigned k = 0; k < 3; k++) {
        uint64_t b = T0 + k * 1000, id = 100 + k;
        af_scope(&f, 9, id, 0, 0, "step", b, b + 500);
        af_nvtx(&f, 9, 10 + k, "fwd", b + 100, b + 300);
        mem(&f, false, b + 150, 0x1000, 2 * MIB, 7, id, "fwd", false);
        mem(&f, false, b + 200, 0x9000000 + k * MIB, MIB, 8, id, "fwd", false);
        mem(&f, true, b + 400, 0x1000, 2 * MIB, 7, id, NULL, false);
    }
    gpufl_trace *t = af_open(&f, dir, "peaks");
    gpufl__ana_mem_peaks p;
    assert_int_equal(gpufl__analyze_mem_peaks(t, &p), 0);
    assert_int_equal(p.n, 5); /* device, 2 streams, scope "step", NVTX "fwd" */
    assert_int_equal(p.names_left_out, 0);
    const gpufl__ana_mem_peak *d = &p.rows[0], *s7 = &p.rows[1], *s8 = &p.rows[2], *sc = &p.rows[3], *nv = &p.rows[4];
    assert_int_equal(d->kind, GPUFL__ANA_MPEAK_DEVICE);
    assert_int_equal(d->series, GPUFL__ANA_MEM_DRIVER);
    assert_false(d->blocks);
    assert_int_equal(d->peak_bytes, 5 * MIB); /* the third step: 2 kept + 2 + 1 */
    assert_int_equal(d->peak_ns, T0 + 2200);
    assert_int_equal(d->allocs, 6);
    assert_int_equal(s7->kind, GPUFL__ANA_MPEAK_STREAM);
    assert_int_equal(s7->stream, 7);
    assert_int_equal(s7->peak_bytes, 2 * MIB);
    assert_int_equal(s8->stream, 8);
    assert_int_equal(s8->peak_bytes, 3 * MIB);
    assert_int_equal(s8->allocs, 3);
    assert_int_equal(sc->kind, GPUFL__ANA_MPEAK_SCOPE);
    assert_string_equal(gpufl_trace_string(t, sc->name), "step");
    assert_int_equal(sc->instances, 3);
    assert_int_equal(sc->peak_bytes, 5 * MIB);
    assert_int_equal(sc->peak_ns, T0 + 2200);
    assert_int_equal(sc->growth_bytes, 3 * MIB); /* 1 MiB kept by each */
    assert_int_equal(sc->max_growth_bytes, MIB);
    assert_int_equal(sc->allocs, 6);
    assert_int_equal(sc->alloc_bytes, 9 * MIB);
    assert_int_equal(nv->kind, GPUFL__ANA_MPEAK_NVTX);
    assert_string_equal(gpufl_trace_string(t, nv->name), "fwd");
    assert_int_equal(nv->peak_bytes, 5 * MIB);
    assert_int_equal(nv->growth_bytes, 9 * MIB); /* the temporary is freed after the range */
    assert_int_equal(nv->allocs, 6);
    gpufl__ana_mem_peaks_free(&p);
    gpufl_trace_close(t);
}

/* A scope over a thousand allocations: its peak is found where it was
 * reached (past the runs of points the search skips whole). */
static void long_scope_peak(void **state)
{
    (void)state;
    af f = {.end_ns = T0 + 100000};
    af_scope(&f, 9, 100, 0, 0, "epoch", T0, T0 + 50000);
    for (unsigned k = 0; k < 1000; k++)
        mem(&f, false, T0 + 10 + k * 10, 0x100000 + k * 0x1000, k == 700 ? 64 * MIB : 4096, 0, 100, NULL, false);
    mem(&f, true, T0 + 20000, 0x100000 + 700 * 0x1000, 64 * MIB, 0, 0, NULL, false);
    gpufl_trace *t = af_open(&f, dir, "long");
    gpufl__ana_mem_peaks p;
    assert_int_equal(gpufl__analyze_mem_peaks(t, &p), 0);
    assert_int_equal(p.n, 2);
    const gpufl__ana_mem_peak *sc = &p.rows[1];
    assert_int_equal(sc->kind, GPUFL__ANA_MPEAK_SCOPE);
    assert_int_equal(sc->peak_bytes, p.rows[0].peak_bytes);
    assert_int_equal(sc->peak_bytes, 64 * MIB + 999 * 4096ull);
    assert_int_equal(sc->peak_ns, T0 + 10 + 999 * 10);
    assert_int_equal(sc->allocs, 1000);
    assert_int_equal(sc->growth_bytes, 999 * 4096);
    gpufl__ana_mem_peaks_free(&p);
    gpufl_trace_close(t);
}

/* The bundled H200 session: NVML and the driver's allocations, no
 * framework layer; the process used more than the driver allocated. */
static void sample_layers(void **state)
{
    (void)state;
    gpufl_trace *t = tu_trace_open(SAMPLE);
    gpufl__ana_report r;
    assert_int_equal(gpufl__analyze_report(t, NULL, &r), 0);
    assert_int_equal(r.mem_layers.n, 1);
    const gpufl__ana_mem_layers_dev *d = &r.mem_layers.devices[0];
    uint32_t want = GPUFL__ANA_MEM_BIT(GPUFL__ANA_MEM_DEVICE) | GPUFL__ANA_MEM_BIT(GPUFL__ANA_MEM_PROCESS) |
                    GPUFL__ANA_MEM_BIT(GPUFL__ANA_MEM_DRIVER);
    assert_int_equal(d->known, want);
    assert_int_equal(d->framework_source, GPUFL__ANA_FW_NONE);
    assert_false(d->driver_frees);
    assert_int_equal(d->peak[GPUFL__ANA_MEM_DRIVER], r.memory.rows[0].peak_bytes);
    assert_int_equal(d->peak[GPUFL__ANA_MEM_PROCESS], r.summary.devices[0].proc_mem_peak_bytes);
    assert_int_equal(d->at_layer, GPUFL__ANA_MEM_PROCESS);
    assert_int_equal(d->ngaps, 2);
    assert_int_equal(d->gaps[1].upper, GPUFL__ANA_MEM_PROCESS);
    assert_int_equal(d->gaps[1].lower, GPUFL__ANA_MEM_DRIVER);
    assert_true(d->gaps[1].bytes > (int64_t)(500 * MIB)); /* context, libraries: 2.21 GiB vs 1.60 */
    assert_true(d->npoints <= GPUFL__ANA_MEM_MAX_POINTS);
    assert_true(r.mem_peaks.n > 1);
    assert_int_equal(r.mem_peaks.rows[0].kind, GPUFL__ANA_MPEAK_DEVICE);
    assert_int_equal(r.mem_peaks.rows[0].peak_bytes, d->peak[GPUFL__ANA_MEM_DRIVER]);
    assert_int_equal(r.leaks.detected, 0);
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
}

/* At an out-of-memory, a driver segment of the allocator and the blocks in
 * it are the same memory seen from two layers: the segment's row says how
 * many of the live blocks lie inside it, and a segment outside the
 * allocator's says nothing. */
static void oom_segment_holds_its_blocks(void **state)
{
    (void)state;
    af f = {.end_ns = T0 + 1000};
    af_device(&f, 0, "NVIDIA H100", 80 * GIB);
    mem(&f, false, T0 + 10, 0x7000000000, 512 * MIB, 0, 0, NULL, false); /* the allocator's segment */
    mem(&f, false, T0 + 11, 0x7100000000, 64 * MIB, 0, 0, NULL, false);  /* a library's workspace */
    mem(&f, false, T0 + 20, 0x7000000000, 256 * MIB, 0, 0, NULL, true);
    mem(&f, false, T0 + 30, 0x7000000000 + 256 * MIB, 128 * MIB, 0, 0, NULL, true);
    mem(&f, false, T0 + 40, 0x7000000000 + 384 * MIB, 64 * MIB, 0, 0, NULL, true);
    mem(&f, true, T0 + 50, 0x7000000000 + 384 * MIB, 64 * MIB, 0, 0, NULL, true); /* freed: cached */
    af_line(&f, AF_DEVICE,
            "{\"type\":\"mem_alloc\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":0,\"corr\":0,"
            "\"address\":\"0x0\",\"bytes\":%llu,\"kind\":\"device\",\"tid\":9,\"failed\":true,"
            "\"framework\":true}",
            (unsigned long long)(T0 + 100), (unsigned long long)GIB);
    gpufl_trace *t = af_open(&f, dir, "oom-segments");
    gpufl__ana_oom o;
    assert_int_equal(gpufl__analyze_oom(t, &o), 0);
    assert_true(o.found);
    uint32_t segments = 0;
    for (uint32_t i = 0; i < o.nlive; i++) {
        const gpufl__ana_oom_live *l = &o.live[i];
        if (l->framework || l->address != 0x7000000000) {
            assert_int_equal(l->blocks_inside, 0);
            continue;
        }
        segments++;
        assert_int_equal(l->blocks_inside, 2);
        assert_int_equal(l->block_bytes_inside, 384 * MIB);
    }
    assert_int_equal(segments, 1);
    gpufl_trace_close(t);
}

/* The OOM's device figures come from the first NVML sample after it (a
 * sample from before may predate the allocations that filled the GPU),
 * unless none came within 2 s: then the last one before. */
static void oom_reads_the_nvml_sample_after_it(void **state)
{
    (void)state;
    for (int later = 0; later < 2; later++) {
        af f = {.end_ns = T0 + 5000000000ull};
        af_device(&f, 0, "NVIDIA H100", 80 * GIB);
        nvml(&f, T0 + 50, 2 * GIB, 1 * GIB);
        af_line(&f, AF_DEVICE,
                "{\"type\":\"mem_alloc\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":0,\"corr\":0,"
                "\"address\":\"0x0\",\"bytes\":%llu,\"kind\":\"device\",\"tid\":9,\"failed\":true}",
                (unsigned long long)(T0 + 100), (unsigned long long)(90 * GIB));
        nvml(&f, T0 + 100 + (later ? 3000000000ull : 400), 34 * GIB, 33 * GIB);
        gpufl_trace *t = af_open(&f, dir, later ? "oom-nvml-late" : "oom-nvml-next");
        gpufl__ana_oom o;
        assert_int_equal(gpufl__analyze_oom(t, &o), 0);
        assert_true(o.found && o.has_process_used);
        assert_int_equal(o.process_used_bytes, later ? 1 * GIB : 33 * GIB);
        assert_int_equal(o.all_processes_used_bytes, later ? 2 * GIB : 34 * GIB);
        gpufl_trace_close(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layers_and_gaps),
        cmocka_unit_test(unknown_layers_absent),
        cmocka_unit_test(blocks_apart),
        cmocka_unit_test(peaks_by_name_and_stream),
        cmocka_unit_test(long_scope_peak),
        cmocka_unit_test(sample_layers),
        cmocka_unit_test(oom_segment_holds_its_blocks),
        cmocka_unit_test(oom_reads_the_nvml_sample_after_it),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
