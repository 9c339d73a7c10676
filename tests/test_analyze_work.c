/*
 * The hotspots and copies analyses (src/analyze/ana_hotspots.c,
 * ana_copies.c, ana_peaks.c) and the helpers every analysis leans on
 * (ana_util.c: radix sorts, nearest-rank percentiles, the hash map).
 *
 * Why: hotspots must be ordered the same way on every run (total time,
 * ties by name), keep the most common launch configuration, and say where
 * a kernel was launched from; copies must turn bytes and time into GB/s
 * and compare them with the right peak (the host link for HtoD and DtoH,
 * the memory for DtoD, none for peer copies). The sorts and the map are
 * checked against plain references (qsort, a linear array) on random data.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ana_fixture.h"
#include "analyze/ana_util.h"
#include "analyze/analysis.h"
#include "event_gen.h"

TU_TEMP_DIR_FIXTURES(dir, "analyze-work")

static bool near(double a, double b)
{
    return a > b - 1e-6 * (b < 0 ? -b : b) - 1e-12 && a < b + 1e-6 * (b < 0 ? -b : b) + 1e-12;
}

static void hotspots(void **state)
{
    (void)state;
    af f = {.end_ns = 3000000};
    af_scope(&f, 5, 1, 0, 0, "step", 1050000, 2900000);
    uint64_t at = 1100000;
#define K(NAME, DUR, ...)                                                                                              \
    do {                                                                                                               \
        af_kernel(&f, (af_k){.start = at, .end = at + (DUR), .name = NAME, .tid = 5, __VA_ARGS__});                    \
        at += (DUR) + 1000;                                                                                            \
    } while (0)
    K("gemm", 100000, .stream = 7, .grid = 10, .scope = 1, .stack = 4);
    K("gemm", 100000, .stream = 8, .grid = 10, .scope = 1, .stack = 5);
    K("gemm", 50000, .stream = 7, .grid = 20, .stack = 4);
    K("relu", 125000, .stream = 7, .stack = 6);
    K("relu", 125000, .stream = 7);
    K("add", 10000, .stream = 7, .stack = 9);
    K("add", 10000, .stream = 7, .stack = 8);
    K("add", 10000, .stream = 7, .stack = 9);
    K("add", 10000, .stream = 7, .stack = 8);
    K("add", 10000, .stream = 7);
    K("zero", 1000, .stream = 7);
#undef K
    gpufl_trace *t = af_open(&f, dir, "hot");
    gpufl__ana_options o = {.top_kernels = 3};
    gpufl__ana_hotspots h;
    assert_int_equal(gpufl__analyze_hotspots(t, &o, &h), 0);
    assert_int_equal(h.n, 3);
    assert_int_equal(h.distinct, 4);
    assert_int_equal(h.launches, 11);
    assert_int_equal(h.total_ns, 551000);
    assert_false(h.stack_frames);
    /* gemm and relu tie at 250 us: by name */
    assert_string_equal(gpufl_trace_string(t, h.kernels[0].name), "gemm");
    assert_string_equal(gpufl_trace_string(t, h.kernels[1].name), "relu");
    assert_string_equal(gpufl_trace_string(t, h.kernels[2].name), "add");
    const gpufl__ana_hotspot *g = &h.kernels[0];
    assert_int_equal(g->dur.n, 3);
    assert_int_equal(g->dur.total, 250000);
    assert_int_equal(g->dur.min, 50000);
    assert_int_equal(g->dur.p50, 100000);
    assert_int_equal(g->dur.p95, 100000);
    assert_true(near(g->share, 250000.0 / 551000));
    assert_int_equal(g->configs, 2);
    assert_int_equal(g->config.grid[0], 10);
    assert_int_equal(g->config.block[0], 32);
    assert_int_equal(g->config_launches, 2);
    assert_int_equal(g->devices, 1);
    assert_int_equal(g->streams, 2);
    assert_int_equal(g->nscopes[GPUFL__ANA_TREE_SCOPES], 1);
    assert_string_equal(gpufl_trace_string(t, g->scopes[GPUFL__ANA_TREE_SCOPES][0].name), "step");
    assert_int_equal(g->scopes[GPUFL__ANA_TREE_SCOPES][0].node, 0);
    assert_int_equal(g->scopes[GPUFL__ANA_TREE_SCOPES][0].launches, 2);
    assert_int_equal(g->scopes[GPUFL__ANA_TREE_SCOPES][0].gpu_ns, 200000);
    assert_true(near(g->scopes[GPUFL__ANA_TREE_SCOPES][0].share, 0.8));
    assert_int_equal(g->unscoped_ns[GPUFL__ANA_TREE_SCOPES], 50000);
    assert_int_equal(g->nscopes[GPUFL__ANA_TREE_NVTX], 0);
    assert_int_equal(g->unscoped_ns[GPUFL__ANA_TREE_NVTX], 250000);
    assert_int_equal(g->nstacks, 2);
    assert_int_equal(g->distinct_stacks, 2);
    assert_int_equal(g->stacks[0].stack, 4);
    assert_int_equal(g->stacks[0].launches, 2);
    assert_int_equal(g->stacks[0].gpu_ns, 150000);
    assert_true(near(g->stacks[0].share, 2.0 / 3));
    assert_int_equal(g->stacks[1].stack, 5);
    assert_int_equal(h.kernels[1].no_stack_launches, 1);
    assert_int_equal(h.kernels[1].distinct_stacks, 1);
    /* add: stacks 8 and 9 tie on launches and time: by id */
    const gpufl__ana_hotspot *add = &h.kernels[2];
    assert_int_equal(add->nstacks, 2);
    assert_int_equal(add->stacks[0].stack, 8);
    assert_int_equal(add->stacks[1].stack, 9);
    assert_int_equal(add->no_stack_launches, 1);
    gpufl__ana_hotspots_free(&h);
    assert_null(h.kernels);
    /* the report's node indices are the scopes analysis' own */
    gpufl__ana_report r;
    assert_int_equal(gpufl__analyze_report(t, &o, &r), 0);
    uint32_t n = r.hotspots.kernels[0].scopes[GPUFL__ANA_TREE_SCOPES][0].node;
    assert_true(n < r.scopes.trees[GPUFL__ANA_TREE_SCOPES].n);
    assert_string_equal(gpufl_trace_string(t, r.scopes.trees[GPUFL__ANA_TREE_SCOPES].nodes[n].name), "step");
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
}

static const gpufl__ana_copy_row *row_of(const gpufl__ana_copies *c, uint32_t dev, uint8_t kind)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->rows[i].device == dev && c->rows[i].kind == kind)
            return &c->rows[i];
    fail_msg("no copy row %u/%u", dev, kind);
    return NULL;
}

static void copies(void **state)
{
    (void)state;
    af f = {.end_ns = 5000000};
    af_device(&f, 0, "NVIDIA H200", 150000000000ull);
    af_device(&f, 1, "Mystery GPU", 1000);
    af_copy(&f, 0, 7, 1100000, 1200000, "HtoD", "pinned", "device", 1000000, 0, 0);
    af_copy(&f, 0, 7, 1300000, 1400000, "HtoD", "pinned", "device", 3000000, 0, 0);
    af_copy(&f, 0, 7, 1500000, 1501000, "DtoH", "device", "pageable", 500, 0, 0);
    af_copy(&f, 0, 7, 2000000, 3000000, "DtoD", "device", "device", 2000000000, 0, 0);
    af_copy(&f, 0, 7, 3100000, 3200000, "PtoP", "device", "device", 1000, 0, 0);
    af_copy(&f, 1, 9, 3300000, 3400000, "DtoD", "device", "device", 1000, 0, 0);
    af_memset(&f, 0, 7, 3500000, 3501000, 100);
    gpufl_trace *t = af_open(&f, dir, "copies");
    gpufl__ana_copies c;
    assert_int_equal(gpufl__analyze_copies(t, &c), 0);
    assert_int_equal(c.n, 5);
    assert_int_equal(c.rows[0].kind, 1); /* by device, then kind */
    assert_int_equal(c.rows[1].kind, 2);
    assert_int_equal(c.rows[2].kind, 3);
    assert_int_equal(c.rows[3].kind, 5);
    assert_int_equal(c.rows[4].device, 1);
    assert_int_equal(c.count, 6);
    assert_int_equal(c.memsets, 1);
    assert_int_equal(c.memset_bytes, 100);
    const gpufl__ana_copy_row *h2d = row_of(&c, 0, 1);
    assert_int_equal(h2d->count, 2);
    assert_int_equal(h2d->bytes, 4000000);
    assert_int_equal(h2d->ns, 200000);
    assert_true(near(h2d->gbps, 20.0));
    assert_int_equal(h2d->size.p50, 1000000);
    assert_int_equal(h2d->size.max, 3000000);
    assert_int_equal(h2d->pageable_count, 0);
    assert_int_equal(h2d->peak_source, GPUFL__ANA_PEAK_PCIE);
    assert_int_equal(h2d->pcie_gen, 5);
    assert_int_equal(h2d->pcie_width, 16);
    assert_true(near(h2d->peak_gbps, gpufl__ana_pcie_lane_gbps(5) * 16));
    assert_true(near(h2d->pct_of_peak, 20.0 / (3.938 * 16) * 100));
    const gpufl__ana_copy_row *d2h = row_of(&c, 0, 2);
    assert_int_equal(d2h->pageable_count, 1);
    assert_int_equal(d2h->pageable_bytes, 500);
    assert_true(near(d2h->gbps, 0.5));
    const gpufl__ana_copy_row *d2d = row_of(&c, 0, 3);
    assert_int_equal(d2d->peak_source, GPUFL__ANA_PEAK_HBM);
    assert_string_equal(d2d->peak_table, "H200");
    assert_true(near(d2d->peak_gbps, 4800));
    assert_true(near(d2d->pct_of_peak, 2000.0 / 4800 * 100));
    const gpufl__ana_copy_row *p2p = row_of(&c, 0, 5);
    assert_int_equal(p2p->peak_source, GPUFL__ANA_PEAK_UNKNOWN);
    assert_true(p2p->peak_gbps == 0 && p2p->pct_of_peak == 0);
    assert_int_equal(row_of(&c, 1, 3)->peak_source, GPUFL__ANA_PEAK_UNKNOWN);
    gpufl__ana_copies_free(&c);
    gpufl_trace_close(t);
}

static void peak_tables(void **state)
{
    (void)state;
    const char *row;
    assert_true(near(gpufl__ana_hbm_gbps("NVIDIA GH200 480GB", &row), 4000));
    assert_string_equal(row, "GH200");
    assert_true(near(gpufl__ana_hbm_gbps("NVIDIA A100-SXM4-80GB", &row), 2039));
    assert_true(near(gpufl__ana_hbm_gbps("NVIDIA A10", &row), 600));
    assert_true(gpufl__ana_hbm_gbps("NVIDIA RTX A4000", &row) == 0);
    assert_null(row);
    assert_true(gpufl__ana_hbm_gbps(NULL, &row) == 0);
    assert_true(gpufl__ana_pcie_lane_gbps(0) == 0 && gpufl__ana_pcie_lane_gbps(99) == 0);
    assert_true(near(gpufl__ana_pcie_lane_gbps(4), 1.969));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { return tu_rand(&rng); }

static void percentiles_and_sorts(void **state)
{
    (void)state;
    /* nearest rank, as analysis.h defines it */
    assert_int_equal(ana_rank(4, 50), 1);
    assert_int_equal(ana_rank(20, 95), 18);
    assert_int_equal(ana_rank(19, 95), 18);
    assert_int_equal(ana_rank(1, 50), 0);
    assert_int_equal(ana_rank(10, 0), 0);
    uint64_t v[] = {4, 1, 3, 2};
    gpufl__ana_dist d;
    assert_int_equal(gpufl__ana_dist_of(v, 4, false, &d), 0);
    assert_int_equal(d.p50, 2);
    assert_int_equal(d.p95, 4);
    assert_int_equal(d.total, 10);
    assert_true(d.mean == 2.5);
    uint64_t s[] = {(uint64_t)-5, 7, (uint64_t)-100, 0};
    assert_int_equal(gpufl__ana_dist_of(s, 4, true, &d), 0);
    assert_int_equal(d.min, -100);
    assert_int_equal(d.p50, -5);
    assert_int_equal(d.max, 7);
    /* the radix sort against qsort, small and large, with narrow and wide keys */
    size_t sizes[] = {0, 1, 63, 64, 1000, 200000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = k % 2 ? next() : next() % 5000;
        assert_int_equal(gpufl__ana_sort_u64(a, n, NULL), 0);
        qsort(b, n, sizeof *b, cmp_u64);
        assert_memory_equal(a, b, n * sizeof *a);
        free(a);
        free(b);
    }
}

/* The map against a plain array of what should be in it. */
static void hash_map(void **state)
{
    (void)state;
    enum { KEYS = 3000 };
    static int32_t ref[KEYS]; /* value + 1, 0 absent */
    memset(ref, 0, sizeof ref);
    ana_map m = {0};
    for (int step = 0; step < 40000; step++) {
        uint32_t k = (uint32_t)(next() % KEYS), v;
        switch (next() % 3) {
        case 0: {
            int rc = gpufl__ana_map_put(&m, k, k * 7u, (uint32_t)step, &v);
            assert_true(rc == (ref[k] ? 1 : 0));
            if (!ref[k])
                ref[k] = step + 1;
            assert_int_equal(v, (uint32_t)(ref[k] - 1));
            break;
        }
        case 1:
            gpufl__ana_map_del(&m, k, k * 7u);
            ref[k] = 0;
            break;
        default:
            assert_int_equal(gpufl__ana_map_get(&m, k, k * 7u, &v), ref[k] != 0);
            if (ref[k])
                assert_int_equal(v, (uint32_t)(ref[k] - 1));
        }
    }
    size_t live = 0;
    for (int k = 0; k < KEYS; k++) {
        uint32_t v;
        live += ref[k] != 0;
        assert_int_equal(gpufl__ana_map_get(&m, (uint64_t)k, (uint64_t)k * 7u, &v), ref[k] != 0);
        assert_false(gpufl__ana_map_get(&m, (uint64_t)k, 1, &v) && k * 7 != 1);
    }
    assert_int_equal(m.n, live);
    gpufl__ana_map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hotspots),    cmocka_unit_test(copies),
        cmocka_unit_test(peak_tables), cmocka_unit_test(percentiles_and_sorts),
        cmocka_unit_test(hash_map),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
