/*
 * The fast paths of the analyses against the plain ones they replace:
 * percentiles by counting (gpufl__ana_dist_select, and ana_scan over streamed
 * values) against sorting (gpufl__ana_dist_of),
 * the galloping search (gpufl__ana_count_le) against a scan, the merged walk over
 * GPU work in runs (ta_ops) against a sort of all of it, the hotspots' dense
 * (kernel, node) tables against the hash map they fall back on, and the
 * two-thread report against each analysis run on its own.
 *
 * Why: these were made for speed at 10 M events and must not change a
 * single number. Percentiles by counting take different paths when the two
 * ranks share a bucket or not, when values repeat, when they span 64 bits,
 * for signed values; the hotspots take the map only past a size that small
 * sessions never reach, so this test builds one that does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ana_fixture.h"
#include "analyze/ana_select.h"
#include "analyze/ana_util.h"
#include "analyze/analysis.h"
#include "analyze/trace_access.h"
#include "event_gen.h"

TU_TEMP_DIR_FIXTURES(dir, "analyze-speed")

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next(void) { return tu_rand(&rng); }

/* A value of shape `kind` (see select_matches_sort). */
static uint64_t value(int kind, size_t i, size_t n)
{
    switch (kind) {
    case 0: return next();                                            /* all 64 bits */
    case 1: return next() % 5000;                                     /* narrow */
    case 2: return 2000 + (next() % 1000) * (next() % 3000);          /* long tail, many repeats */
    case 3: return 42;                                                /* all equal */
    case 4: return i < n / 2 ? 5 : 1ull << 40;                        /* two values far apart */
    case 5: return (uint64_t)((int64_t)(next() % 2000000) - 1000000); /* signed, both sides of 0 */
    case 6: return i % 3 ? (uint64_t)INT64_MIN + next() % 10 : (uint64_t)INT64_MAX - next() % 10; /* signed ends */
    case 7: return i % 20 ? next() % 100 : UINT64_MAX - next() % 100;  /* p95 just below a far cluster */
    default: return i % 10 ? next() % 100 : UINT64_MAX - next() % 100; /* p95 in the far cluster */
    }
}

static void select_matches_sort(void **state)
{
    (void)state;
    size_t sizes[] = {0, 1, 2, 3, 20, 21, 1000, 65536, 65537, 300000};
    for (int kind = 0; kind < 9; kind++) {
        bool is_signed = kind == 5 || kind == 6;
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
            assert_non_null(a);
            assert_non_null(b);
            for (size_t i = 0; i < n; i++)
                a[i] = b[i] = value(kind, i, n);
            gpufl__ana_dist want, got, scanned;
            /* streamed three times, in a different order each time */
            ana_scan sc;
            gpufl__ana_scan_open(&sc, is_signed);
            for (size_t i = 0; i < n; i++)
                ana_scan_add(&sc, a[i]);
            assert_int_equal(gpufl__ana_scan_count_begin(&sc), 0);
            for (size_t i = n; i-- > 0;)
                ana_scan_count(&sc, a[i]);
            assert_int_equal(gpufl__ana_scan_keep_begin(&sc), 0);
            for (size_t i = 0; i < n; i++)
                ana_scan_keep(&sc, a[(i * 7919) % n]); /* a permutation: no size is a multiple of 7919 */
            assert_int_equal(gpufl__ana_scan_finish(&sc, &scanned), 0);
            assert_int_equal(gpufl__ana_dist_of(a, n, is_signed, &want), 0);
            assert_int_equal(gpufl__ana_dist_select(b, n, is_signed, &got), 0);
            assert_memory_equal(&scanned, &want, sizeof want);
            assert_int_equal(got.n, want.n);
            assert_int_equal(got.total, want.total);
            assert_int_equal(got.min, want.min);
            assert_int_equal(got.max, want.max);
            assert_int_equal(got.p50, want.p50);
            assert_int_equal(got.p95, want.p95);
            assert_true(got.mean == want.mean);
            free(a);
            free(b);
        }
    }
}

/* A keep pass that sees fewer values than the count pass is an error, not
 * a wrong answer or a read past the kept values; one with more writes
 * nothing past them. */
static void scan_passes_must_agree(void **state)
{
    (void)state;
    for (int more = 0; more < 2; more++) {
        ana_scan sc;
        gpufl__ana_scan_open(&sc, false);
        for (uint64_t x = 0; x < 1000; x++)
            ana_scan_add(&sc, x * 1000);
        assert_int_equal(gpufl__ana_scan_count_begin(&sc), 0);
        for (uint64_t x = 0; x < 1000; x++)
            ana_scan_count(&sc, x * 1000);
        assert_int_equal(gpufl__ana_scan_keep_begin(&sc), 0);
        for (uint64_t x = 0; x < (more ? 1000 : 400); x++)
            ana_scan_keep(&sc, x * 1000);
        if (more)
            for (uint64_t x = 0; x < 1000; x++)
                ana_scan_keep(&sc, x * 1000);
        gpufl__ana_dist d;
        assert_int_equal(gpufl__ana_scan_finish(&sc, &d), more ? 0 : GPUFL_EINVAL);
        assert_int_equal(d.n, more ? 1000 : 0);
        if (more)
            assert_int_equal(d.p50, 499000);
        gpufl__ana_scan_close(&sc);
    }
}

static void count_le_matches_scan(void **state)
{
    (void)state;
    for (int round = 0; round < 200; round++) {
        size_t n = round < 5 ? (size_t)round : 1 + next() % 3000;
        uint64_t *v = malloc((n + 1) * sizeof *v);
        assert_non_null(v);
        uint64_t x = next() % 100;
        for (size_t i = 0; i < n; i++) {
            x += next() % 4; /* ascending, with repeats */
            v[i] = x;
        }
        size_t hint = 0;
        for (int q = 0; q < 300; q++) {
            uint64_t t = next() % (x + 10);
            size_t want = 0;
            while (want < n && v[want] <= t)
                want++;
            if (q % 4 == 0)
                hint = next() % (n + 5); /* any hint, even past the end */
            size_t got = gpufl__ana_count_le(v, n, hint, t);
            assert_int_equal(got, want);
            hint = got;
        }
        free(v);
    }
}

/* ---- the merged walk over GPU work ------------------------------------------- */

typedef struct op_key {
    uint64_t start;
    int table;
    size_t row;
} op_key;

static int by_start_table_row(const void *x, const void *y)
{
    const op_key *p = x, *q = y;
    if (p->start != q->start)
        return p->start < q->start ? -1 : 1;
    if (p->table != q->table)
        return p->table - q->table;
    return (p->row > q->row) - (p->row < q->row);
}

/* Kernels in runs, copies and memsets between them, many starting at the
 * same time as work of another table: ta_ops must give the order of a sort
 * by (start, table, row). */
static void ops_walk_matches_sort(void **state)
{
    (void)state;
    af f = {.end_ns = 90000000};
    for (int i = 0; i < 3000; i++) {
        uint64_t start = 2000000 + (next() % 400) * 1000; /* 400 distinct starts: ties */
        uint64_t r = next() % 10;
        if (r < 7)
            af_kernel(&f, (af_k){.start = start, .end = start + 500, .stream = 7});
        else if (r < 9)
            af_copy(&f, 0, 7, start, start + 700, "HtoD", "pinned", "device", 4096, 5, start - 100);
        else
            af_memset(&f, 0, 7, start, start + 300, 64);
    }
    gpufl_trace *t = af_open(&f, dir, "ops");
    ta a;
    gpufl__ta_open(&a, t);
    size_t n = a.k->n + a.cp->n + a.ms->n, m = 0;
    assert_int_equal(n, 3000);
    op_key *want = malloc(n * sizeof *want);
    assert_non_null(want);
    for (size_t i = 0; i < a.k->n; i++)
        want[m++] = (op_key){a.k->start_ns[i], TA_OP_KERNEL, i};
    for (size_t i = 0; i < a.cp->n; i++)
        want[m++] = (op_key){a.cp->start_ns[i], TA_OP_COPY, i};
    for (size_t i = 0; i < a.ms->n; i++)
        want[m++] = (op_key){a.ms->start_ns[i], TA_OP_MEMSET, i};
    qsort(want, n, sizeof *want, by_start_table_row);
    ta_ops it;
    ta_op op;
    ta_ops_begin(&it, &a);
    for (size_t i = 0; i < n; i++) {
        assert_true(ta_ops_next(&it, &op));
        assert_int_equal(op.table, want[i].table);
        assert_int_equal(op.row, want[i].row);
        assert_int_equal(op.start, want[i].start);
    }
    assert_false(ta_ops_next(&it, &op));
    free(want);
    gpufl_trace_close(t);
}

/* ---- hotspots: dense tables and the map ---------------------------------- */

enum { KERNELS = 1100, SCOPES = 1000, LAUNCHES = 3 };

/* Kernel j's l-th launch: its scope (ids 1..SCOPES) and duration. Two
 * launches of a kernel may share a scope; durations differ, so totals and
 * list orders have no ties. */
static unsigned launch_scope(unsigned j, unsigned l)
{
    return 1 + (l == 0 ? j * 7 % SCOPES : l == 1 ? (j * 7 + 1) % SCOPES : (j * 13 + 500) % SCOPES);
}

static uint64_t launch_dur(unsigned j, unsigned l) { return 1000 + j * 10 + l * 3; }

/* Kernels in 1000 scopes, so that listing all 1100 kernels makes a scope
 * table of 1.1 M cells, past the dense limit; also an NVTX range, syncs
 * and a copy for the report. */
static gpufl_trace *many_scopes(void)
{
    af f = {.end_ns = 400000000};
    for (unsigned s = 1; s <= SCOPES; s++) {
        char name[32];
        snprintf(name, sizeof name, "s%u", s);
        af_scope(&f, 5, s, 0, 0, name, AF_START + s * 1000, AF_START + s * 1000 + 500);
    }
    af_nvtx(&f, 5, 1, "opA", AF_START + 10, 390000000);
    uint64_t at = 2000000;
    for (unsigned l = 0; l < LAUNCHES; l++)
        for (unsigned j = 0; j < KERNELS; j++) {
            char name[32];
            snprintf(name, sizeof name, "k%u", j);
            uint64_t d = launch_dur(j, l);
            af_kernel(&f, (af_k){.start = at,
                                 .end = at + d,
                                 .name = name,
                                 .tid = 5,
                                 .stream = 7 + j % 3,
                                 .api_start = at - 5000 - j % 7 * 100,
                                 .api_end = at - 1000,
                                 .scope = launch_scope(j, l),
                                 .nvtx = j % 5 ? "opA" : NULL,
                                 .stack = j % 4 ? 1 + j % 3 : 0});
            at += d + (j % 11 ? 100 : 20000);
            if (j % 97 == 0)
                af_sync(&f, 0, 7, at - 15000, at - 12000, "stream", 5);
        }
    af_copy(&f, 0, 7, at, at + 5000, "HtoD", "pinned", "device", 1 << 20, 5, at - 3000);
    return af_open(&f, dir, "many");
}

/* What kernel j's launches gave each scope: the top 3 by gpu_ns, as names. */
static void expected_scopes(unsigned j, char names[3][32], uint64_t launches[3], uint64_t ns[3], unsigned *n)
{
    unsigned scope[LAUNCHES];
    uint64_t cnt[LAUNCHES] = {0}, sum[LAUNCHES] = {0};
    *n = 0;
    for (unsigned l = 0; l < LAUNCHES; l++) {
        unsigned s = launch_scope(j, l), k = 0;
        while (k < *n && scope[k] != s)
            k++;
        if (k == *n)
            scope[(*n)++] = s;
        cnt[k]++;
        sum[k] += launch_dur(j, l);
    }
    for (unsigned a = 0; a < *n; a++) /* by gpu_ns descending: few, so a selection sort */
        for (unsigned b = a + 1; b < *n; b++)
            if (sum[b] > sum[a]) {
                uint64_t t = sum[a];
                sum[a] = sum[b];
                sum[b] = t;
                t = cnt[a];
                cnt[a] = cnt[b];
                cnt[b] = t;
                unsigned u = scope[a];
                scope[a] = scope[b];
                scope[b] = u;
            }
    for (unsigned a = 0; a < *n; a++) {
        snprintf(names[a], 32, "s%u", scope[a]);
        launches[a] = cnt[a];
        ns[a] = sum[a];
    }
}

static void same_hotspot(const gpufl__ana_hotspot *p, const gpufl__ana_hotspot *q)
{
    assert_int_equal(p->name, q->name);
    assert_memory_equal(&p->dur, &q->dur, sizeof p->dur);
    assert_true(p->share == q->share);
    assert_int_equal(p->config_launches, q->config_launches);
    assert_int_equal(p->streams, q->streams);
    for (int t = 0; t < GPUFL__ANA_TREE_COUNT; t++) {
        assert_int_equal(p->unscoped_ns[t], q->unscoped_ns[t]);
        assert_int_equal(p->nscopes[t], q->nscopes[t]);
        for (uint32_t i = 0; i < p->nscopes[t]; i++) {
            assert_int_equal(p->scopes[t][i].node, q->scopes[t][i].node);
            assert_int_equal(p->scopes[t][i].name, q->scopes[t][i].name);
            assert_int_equal(p->scopes[t][i].launches, q->scopes[t][i].launches);
            assert_int_equal(p->scopes[t][i].gpu_ns, q->scopes[t][i].gpu_ns);
            assert_true(p->scopes[t][i].share == q->scopes[t][i].share);
        }
    }
    assert_int_equal(p->nstacks, q->nstacks);
    assert_int_equal(p->distinct_stacks, q->distinct_stacks);
    assert_int_equal(p->no_stack_launches, q->no_stack_launches);
    for (uint32_t i = 0; i < p->nstacks; i++) {
        assert_int_equal(p->stacks[i].stack, q->stacks[i].stack);
        assert_int_equal(p->stacks[i].launches, q->stacks[i].launches);
        assert_int_equal(p->stacks[i].gpu_ns, q->stacks[i].gpu_ns);
    }
}

static void hotspots_dense_and_map_agree(void **state)
{
    (void)state;
    gpufl_trace *t = many_scopes();
    gpufl__ana_options all = {.top_kernels = KERNELS}, few = {.top_kernels = 20};
    gpufl__ana_hotspots map, dense;
    assert_int_equal(gpufl__analyze_hotspots(t, &all, &map), 0);   /* scope tree: the map */
    assert_int_equal(gpufl__analyze_hotspots(t, &few, &dense), 0); /* scope tree: dense */
    assert_int_equal(map.n, KERNELS);
    assert_int_equal(dense.n, 20);
    for (uint32_t r = 0; r < dense.n; r++)
        same_hotspot(&map.kernels[r], &dense.kernels[r]);
    /* and both against what the fixture put where: every kernel of the map's */
    gpufl__ana_scopes sc;
    assert_int_equal(gpufl__analyze_scopes(t, &sc), 0);
    const gpufl__ana_scope_tree *tree = &sc.trees[GPUFL__ANA_TREE_SCOPES];
    assert_int_equal(tree->n, SCOPES);
    for (uint32_t r = 0; r < map.n; r++) {
        const gpufl__ana_hotspot *h = &map.kernels[r];
        unsigned j = KERNELS - 1 - r; /* totals grow with j */
        char name[32], names[3][32];
        snprintf(name, sizeof name, "k%u", j);
        assert_string_equal(gpufl_trace_string(t, h->name), name);
        uint64_t launches[3], ns[3];
        unsigned n;
        expected_scopes(j, names, launches, ns, &n);
        assert_int_equal(h->nscopes[GPUFL__ANA_TREE_SCOPES], n);
        assert_int_equal(h->unscoped_ns[GPUFL__ANA_TREE_SCOPES], 0);
        for (unsigned i = 0; i < n; i++) {
            const gpufl__ana_hot_scope *s = &h->scopes[GPUFL__ANA_TREE_SCOPES][i];
            assert_string_equal(gpufl_trace_string(t, tree->nodes[s->node].name), names[i]);
            assert_int_equal(s->launches, launches[i]);
            assert_int_equal(s->gpu_ns, ns[i]);
        }
        /* NVTX: one range holds the launches that name it */
        assert_int_equal(h->nscopes[GPUFL__ANA_TREE_NVTX], j % 5 ? 1 : 0);
        assert_int_equal(h->unscoped_ns[GPUFL__ANA_TREE_NVTX], j % 5 ? 0 : (uint64_t)h->dur.total);
    }
    gpufl__ana_scopes_free(&sc);
    gpufl__ana_hotspots_free(&map);
    gpufl__ana_hotspots_free(&dense);
    gpufl_trace_close(t);
}

/* ---- the report's two threads ----------------------------------------------- */

static void same_dist(const gpufl__ana_dist *p, const gpufl__ana_dist *q)
{
    assert_int_equal(p->n, q->n);
    assert_int_equal(p->total, q->total);
    assert_int_equal(p->min, q->min);
    assert_int_equal(p->max, q->max);
    assert_int_equal(p->p50, q->p50);
    assert_int_equal(p->p95, q->p95);
}

static void report_matches_each_analysis(void **state)
{
    (void)state;
    gpufl_trace *t = many_scopes();
    for (int round = 0; round < 3; round++) {
        gpufl__ana_report r;
        assert_int_equal(gpufl__analyze_report(t, NULL, &r), 0);
        gpufl__ana_summary s;
        gpufl__ana_idle idle;
        gpufl__ana_launches l;
        gpufl__ana_copies c;
        gpufl__ana_hotspots h;
        assert_int_equal(gpufl__analyze_summary(t, &s), 0);
        assert_int_equal(gpufl__analyze_idle(t, &idle), 0);
        assert_int_equal(gpufl__analyze_launches(t, &l), 0);
        assert_int_equal(gpufl__analyze_copies(t, &c), 0);
        assert_int_equal(gpufl__analyze_hotspots(t, &r.options, &h), 0);
        assert_int_equal(r.summary.kernels, s.kernels);
        assert_int_equal(r.summary.kernel_ns, s.kernel_ns);
        assert_int_equal(r.summary.syncs, s.syncs);
        assert_int_equal(r.summary.ndevices, s.ndevices);
        for (uint32_t i = 0; i < s.ndevices; i++)
            assert_int_equal(r.summary.devices[i].busy_ns, s.devices[i].busy_ns);
        assert_int_equal(r.idle.n, idle.n);
        assert_true(idle.n >= 4); /* the device and its three streams */
        for (uint32_t i = 0; i < idle.n; i++) {
            const gpufl__ana_idle_row *p = &r.idle.rows[i], *q = &idle.rows[i];
            assert_int_equal(p->stream, q->stream);
            assert_int_equal(p->gaps, q->gaps);
            assert_int_equal(p->host_ns, q->host_ns);
            assert_int_equal(p->sync_ns, q->sync_ns);
            assert_int_equal(p->other_ns, q->other_ns);
        }
        assert_int_equal(r.launches.with_api, KERNELS * LAUNCHES);
        same_dist(&r.launches.latency, &l.latency);
        same_dist(&r.launches.queue, &l.queue);
        same_dist(&r.launches.call, &l.call);
        assert_int_equal(r.copies.count, c.count);
        assert_int_equal(r.hotspots.n, h.n);
        for (uint32_t i = 0; i < h.n; i++)
            same_hotspot(&r.hotspots.kernels[i], &h.kernels[i]);
        gpufl__ana_summary_free(&s);
        gpufl__ana_idle_free(&idle);
        gpufl__ana_launches_free(&l);
        gpufl__ana_copies_free(&c);
        gpufl__ana_hotspots_free(&h);
        gpufl__ana_report_free(&r);
    }
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(select_matches_sort),          cmocka_unit_test(scan_passes_must_agree),
        cmocka_unit_test(count_le_matches_scan),        cmocka_unit_test(ops_walk_matches_sort),
        cmocka_unit_test(hotspots_dense_and_map_agree), cmocka_unit_test(report_matches_each_analysis),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
