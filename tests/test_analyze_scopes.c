/*
 * The scopes analysis (src/analyze/ana_scopes.c, ana_tree.c, ana_attr.c).
 *
 * Why: the scope tree is how a user finds where time went. Checked on
 * hand-made sessions with known answers: gpufl scopes on two threads merge
 * into one node per path, with nearest-rank percentiles of their wall
 * times, shares of the parent, a scope that never ended counted until the
 * session end, pre-order with siblings by total; GPU time given by the
 * recorded scope id, rolled up into ancestors, and work with no (or an
 * unknown) scope left unattributed. NVTX ranges nest by time on their
 * thread (ranges that begin together: the longer is the parent), and work
 * goes to the innermost range open at its call, or to the nearest
 * enclosing range of the name it recorded.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ana_fixture.h"
#include "analyze/analysis.h"

TU_TEMP_DIR_FIXTURES(dir, "analyze-scopes")

static const gpufl__ana_scope_node *node(const gpufl_trace *t, const gpufl__ana_scope_tree *tree, const char *path,
                                         uint32_t *index)
{
    char buf[256];
    for (uint32_t i = 0; i < tree->n; i++) {
        gpufl__ana_scope_path(t, tree, i, "/", buf, sizeof buf);
        if (strcmp(buf, path) == 0) {
            if (index)
                *index = i;
            return &tree->nodes[i];
        }
    }
    fail_msg("no node %s", path);
    return NULL;
}

static void gpufl_scopes_tree(void **state)
{
    (void)state;
    af f = {.end_ns = 2000000};
    af_scope(&f, 5, 1, 0, 0, "step", 1100000, 1500000);
    af_scope(&f, 5, 2, 1, 1, "fwd", 1110000, 1200000);
    af_scope(&f, 5, 3, 1, 1, "bwd", 1200000, 1450000);
    af_scope(&f, 6, 11, 0, 0, "step", 1200000, 1400000);
    af_scope(&f, 6, 12, 11, 1, "fwd", 1210000, 1260000);
    af_scope(&f, 6, 21, 0, 0, "tail", 1900000, 0); /* never ended */
    af_kernel(&f, (af_k){.stream = 7, .start = 1300000, .end = 1330000, .tid = 5, .scope = 2});
    af_kernel(&f, (af_k){.stream = 7, .start = 1330000, .end = 1350000, .tid = 6, .scope = 12});
    af_kernel(&f, (af_k){.stream = 7, .start = 1350000, .end = 1400000, .tid = 5, .scope = 3});
    af_kernel(&f, (af_k){.stream = 7, .start = 1400000, .end = 1405000, .tid = 5, .scope = 1});
    af_kernel(&f, (af_k){.stream = 7, .start = 1410000, .end = 1417000, .tid = 5});
    af_kernel(&f, (af_k){.stream = 7, .start = 1420000, .end = 1421000, .tid = 5, .scope = 999});
    af_copy(&f, 0, 7, 1430000, 1432000, "HtoD", "pinned", "device", 64, 5, 0);
    gpufl_trace *t = af_open(&f, dir, "scopes");
    gpufl__ana_scopes s;
    assert_int_equal(gpufl__analyze_scopes(t, &s), 0);
    const gpufl__ana_scope_tree *tr = &s.trees[GPUFL__ANA_TREE_SCOPES];
    assert_int_equal(tr->tree, GPUFL__ANA_TREE_SCOPES);
    assert_int_equal(tr->n, 4);
    assert_int_equal(tr->roots, 2);
    assert_int_equal(tr->instances, 6);
    char buf[64];
    /* pre-order, siblings by total wall time */
    const char *expect[] = {"step", "step/bwd", "step/fwd", "tail"};
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(gpufl__ana_scope_path(t, tr, i, "/", buf, sizeof buf), strlen(expect[i]));
        assert_string_equal(buf, expect[i]);
    }
    assert_int_equal(gpufl__ana_scope_path(t, tr, 1, " > ", buf, 6), strlen("step > bwd"));
    assert_string_equal(buf, "step ");
    uint32_t istep;
    const gpufl__ana_scope_node *step = node(t, tr, "step", &istep);
    assert_int_equal(step->parent, GPUFL__ANA_NONE);
    assert_int_equal(step->depth, 0);
    assert_int_equal(step->children, 2);
    assert_int_equal(step->count, 2);
    assert_int_equal(step->threads, 2);
    assert_int_equal(step->wall.n, 2);
    assert_int_equal(step->wall.total, 600000);
    assert_int_equal(step->wall.min, 200000);
    assert_int_equal(step->wall.max, 400000);
    assert_int_equal(step->wall.p50, 200000); /* nearest rank: ceil(0.5 * 2) = 1st */
    assert_int_equal(step->wall.p95, 400000);
    assert_true(step->wall.mean == 300000.0);
    assert_true(step->share_of_parent > 0.5999 && step->share_of_parent < 0.6001); /* of the wall */
    const gpufl__ana_scope_node *fwd = node(t, tr, "step/fwd", NULL);
    assert_int_equal(fwd->parent, istep);
    assert_int_equal(fwd->depth, 1);
    assert_int_equal(fwd->count, 2);
    assert_int_equal(fwd->wall.total, 140000);
    assert_true(fwd->share_of_parent > 140000.0 / 600000 - 1e-9 && fwd->share_of_parent < 140000.0 / 600000 + 1e-9);
    const gpufl__ana_scope_node *tail = node(t, tr, "tail", NULL);
    assert_int_equal(tail->unended, 1);
    assert_int_equal(tail->wall.total, 100000); /* until the session end */
    /* GPU time: by recorded scope, rolled up */
    assert_int_equal(fwd->gpu_self_ns, 50000);
    assert_int_equal(fwd->gpu_ns, 50000);
    assert_int_equal(fwd->gpu_ops, 2);
    assert_int_equal(node(t, tr, "step/bwd", NULL)->gpu_ns, 50000);
    assert_int_equal(step->gpu_self_ns, 5000);
    assert_int_equal(step->gpu_self_ops, 1);
    assert_int_equal(step->gpu_ns, 105000);
    assert_int_equal(step->gpu_ops, 4);
    assert_int_equal(tr->attributed_ns, 105000);
    assert_int_equal(tr->attributed_ops, 4);
    assert_int_equal(tr->unattributed_ns, 10000); /* no scope, an unknown one, the copy */
    assert_int_equal(tr->unattributed_ops, 3);
    gpufl__ana_scopes_free(&s);
    gpufl_trace_close(t);
}

static void nvtx_tree(void **state)
{
    (void)state;
    af f = {.end_ns = 2000000};
    af_nvtx(&f, 5, 3, "mm", 1160000, 1200000); /* written when they end: inner first */
    af_nvtx(&f, 5, 2, "fwd", 1150000, 1300000);
    af_nvtx(&f, 5, 4, "fwd", 1350000, 1450000);
    af_nvtx(&f, 5, 1, "iter", 1100000, 1600000);
    af_nvtx(&f, 6, 5, "iter", 1100000, 1500000);
    af_nvtx(&f, 7, 7, "inner", 1100000, 1200000); /* begins with its parent */
    af_nvtx(&f, 7, 8, "outer", 1100000, 1300000);
    af_mark(&f, 5, 6, "mark", 1170000);
    af_kernel(&f, (af_k){.stream = 7,
                         .start = 1500000,
                         .end = 1510000,
                         .tid = 5,
                         .api_start = 1170000,
                         .api_end = 1171000,
                         .nvtx = "mm"});
    af_kernel(&f, (af_k){.stream = 7,
                         .start = 1510000,
                         .end = 1530000,
                         .tid = 5,
                         .api_start = 1172000,
                         .api_end = 1173000,
                         .nvtx = "fwd"}); /* recorded fwd, innermost is mm */
    af_kernel(&f, (af_k){.stream = 7,
                         .start = 1530000,
                         .end = 1560000,
                         .tid = 5,
                         .api_start = 1320000,
                         .api_end = 1321000,
                         .nvtx = "iter"});
    af_kernel(&f, (af_k){.stream = 8,
                         .start = 1530000,
                         .end = 1570000,
                         .tid = 6,
                         .api_start = 1200000,
                         .api_end = 1201000,
                         .nvtx = "iter"});
    af_kernel(&f, (af_k){.stream = 7,
                         .start = 1750000,
                         .end = 1751000,
                         .tid = 5,
                         .api_start = 1700000,
                         .api_end = 1701000,
                         .nvtx = "iter"}); /* no range open then */
    af_kernel(&f, (af_k){.stream = 7, .start = 1760000, .end = 1762000, .tid = 5, .nvtx = "iter"}); /* no call time */
    af_kernel(&f, (af_k){.stream = 7,
                         .start = 1770000,
                         .end = 1774000,
                         .tid = 5,
                         .api_start = 1170000,
                         .api_end = 1171000,
                         .nvtx = "other"}); /* a name not open */
    af_kernel(&f, (af_k){.stream = 7,
                         .start = 1780000,
                         .end = 1788000,
                         .tid = 7,
                         .api_start = 1150000,
                         .api_end = 1151000,
                         .nvtx = "inner"});
    gpufl_trace *t = af_open(&f, dir, "nvtx");
    gpufl__ana_scopes s;
    assert_int_equal(gpufl__analyze_scopes(t, &s), 0);
    const gpufl__ana_scope_tree *tr = &s.trees[GPUFL__ANA_TREE_NVTX];
    assert_int_equal(s.nvtx_marks, 1);
    assert_int_equal(tr->instances, 7);
    assert_int_equal(tr->n, 5);
    assert_int_equal(tr->roots, 2);
    char buf[64];
    gpufl__ana_scope_path(t, tr, 0, "/", buf, sizeof buf);
    assert_string_equal(buf, "iter");
    const gpufl__ana_scope_node *iter = node(t, tr, "iter", NULL);
    const gpufl__ana_scope_node *fwd = node(t, tr, "iter/fwd", NULL);
    const gpufl__ana_scope_node *mm = node(t, tr, "iter/fwd/mm", NULL);
    const gpufl__ana_scope_node *inner = node(t, tr, "outer/inner", NULL);
    assert_int_equal(iter->tree, GPUFL__ANA_TREE_NVTX);
    assert_int_equal(iter->count, 2);
    assert_int_equal(iter->threads, 2);
    assert_int_equal(iter->wall.total, 900000);
    assert_int_equal(fwd->count, 2);
    assert_int_equal(fwd->wall.total, 250000);
    assert_int_equal(fwd->wall.p50, 100000);
    assert_int_equal(mm->depth, 2);
    assert_int_equal(mm->gpu_self_ns, 10000);
    assert_int_equal(fwd->gpu_self_ns, 20000);
    assert_int_equal(fwd->gpu_ns, 30000);
    assert_int_equal(iter->gpu_self_ns, 70000);
    assert_int_equal(iter->gpu_ns, 100000);
    assert_int_equal(iter->gpu_ops, 4);
    assert_int_equal(inner->gpu_ns, 8000);
    assert_int_equal(tr->attributed_ns, 108000);
    assert_int_equal(tr->unattributed_ns, 7000);
    assert_int_equal(tr->unattributed_ops, 3);
    /* none of it had a gpufl scope */
    assert_int_equal(s.trees[GPUFL__ANA_TREE_SCOPES].n, 0);
    assert_int_equal(s.trees[GPUFL__ANA_TREE_SCOPES].unattributed_ops, 8);
    gpufl__ana_scopes_free(&s);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpufl_scopes_tree),
        cmocka_unit_test(nvtx_tree),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
