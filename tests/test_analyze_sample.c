/*
 * Every analysis on a real session: samples/train_sample/trace.gflt, a
 * PyTorch training run recorded on an H200 (NVTX ranges, 18 k kernels,
 * copies, syncs, 2007 allocations and no frees).
 *
 * Why: hand-made sessions test each rule; a real one tests that the rules
 * hold together on what CUPTI and PyTorch actually produce. Checked are
 * invariants, not figures: busy time within the wall time, idle causes
 * summing to the idle time, shares that add up, hotspots in order, every
 * kernel counted once, and the caching allocator's memory reported as held
 * (no frees), with its peak and live bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "analyze/analysis.h"
#include "gpufl/trace.h"
#include "session_file.h"

#ifndef GFL_SOURCE_DIR
#define GFL_SOURCE_DIR "."
#endif

static void invariants(void **state)
{
    (void)state;
    gpufl_trace *t = tu_trace_open(GFL_SOURCE_DIR "/samples/train_sample/trace.gflt");
    gpufl__ana_report r;
    assert_int_equal(gpufl__analyze_report(t, NULL, &r), 0);
    const gpufl__ana_summary *s = &r.summary;
    assert_true(s->ended);
    assert_true(s->wall_ns > 0);
    assert_int_equal(s->ndevices, 1);
    assert_true(s->kernels > 10000);
    assert_int_equal(s->allocations, 2007);
    assert_int_equal(s->frees, 0);
    for (uint32_t i = 0; i < s->ndevices; i++) {
        const gpufl__ana_device_summary *d = &s->devices[i];
        assert_true(d->busy_ns > 0);
        assert_true(d->busy_ns <= s->wall_ns);
        assert_true(d->busy_ns <= d->kernel_ns + d->copy_ns + d->memset_ns); /* a union, not a sum */
        assert_true(d->busy_pct > 0 && d->busy_pct <= 100);
        assert_true(d->util_peak_pct <= 100);
        assert_true(d->util_mean_pct <= d->util_peak_pct);
    }
    /* scopes: shares of siblings add up to at most 1; GPU time accounted once */
    for (int k = 0; k < GPUFL__ANA_TREE_COUNT; k++) {
        const gpufl__ana_scope_tree *tr = &r.scopes.trees[k];
        assert_int_equal(tr->attributed_ops + tr->unattributed_ops, s->kernels + s->copies + s->memsets);
        for (uint32_t i = 0; i < tr->n; i++) {
            const gpufl__ana_scope_node *n = &tr->nodes[i];
            assert_true(n->wall.min <= n->wall.p50 && n->wall.p50 <= n->wall.p95 && n->wall.p95 <= n->wall.max);
            assert_true(n->gpu_self_ns <= n->gpu_ns);
            if (n->parent == GPUFL__ANA_NONE)
                continue;
            assert_true(n->parent < i); /* pre-order */
            double kids = 0;
            const gpufl__ana_scope_node *p = &tr->nodes[n->parent];
            for (uint32_t j = n->parent + 1; j < tr->n && tr->nodes[j].depth > p->depth; j++)
                if (tr->nodes[j].parent == n->parent)
                    kids += tr->nodes[j].share_of_parent;
            assert_true(kids <= 1.0 + 1e-9);
        }
    }
    const gpufl__ana_scope_tree *nv = &r.scopes.trees[GPUFL__ANA_TREE_NVTX];
    assert_true(nv->n > 0);
    assert_true(nv->attributed_ns > 0);
    /* hotspots in order, shares that add up */
    const gpufl__ana_hotspots *h = &r.hotspots;
    assert_true(h->n > 0 && h->n <= 20);
    assert_int_equal(h->launches, s->kernels);
    assert_int_equal(h->total_ns, s->kernel_ns);
    double shares = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        const gpufl__ana_hotspot *k = &h->kernels[i];
        if (i > 0)
            assert_true(h->kernels[i - 1].dur.total >= k->dur.total);
        assert_true(k->dur.min <= k->dur.p50 && k->dur.p50 <= k->dur.p95 && k->dur.p95 <= k->dur.max);
        assert_true(k->config_launches <= k->dur.n);
        shares += k->share;
    }
    assert_true(shares <= 1.0 + 1e-9);
    /* idle: causes add up; busy + idle fill the span of work */
    assert_true(r.idle.n >= 2);
    for (uint32_t i = 0; i < r.idle.n; i++) {
        const gpufl__ana_idle_row *d = &r.idle.rows[i];
        assert_int_equal(d->host_ns + d->sync_ns + d->other_ns, d->idle_ns);
        assert_int_equal(d->busy_ns + d->idle_ns, d->last_ns - d->first_ns);
    }
    assert_int_equal(r.idle.rows[0].stream, GPUFL__ANA_ALL_STREAMS);
    assert_int_equal(r.idle.rows[0].busy_ns, s->devices[0].busy_ns);
    /* copies: achieved bandwidth below the peaks it is compared with */
    for (uint32_t i = 0; i < r.copies.n; i++)
        if (r.copies.rows[i].peak_gbps > 0)
            assert_true(r.copies.rows[i].pct_of_peak > 0 && r.copies.rows[i].pct_of_peak < 100);
    assert_true(r.launches.with_api > 0 && r.launches.with_api <= r.launches.kernels);
    /* the caching allocator: memory held, peak = live at the end, no leak verdict */
    assert_true(r.memory.recorded);
    uint64_t allocs = 0;
    for (uint32_t i = 0; i < r.memory.n; i++) {
        const gpufl__ana_mem_row *m = &r.memory.rows[i];
        allocs += m->allocs;
        assert_int_equal(m->never_freed_why, GPUFL__ANA_NEVER_FREED_NO_FREES);
        assert_int_equal(m->peak_bytes, m->end_bytes);
        assert_int_equal(m->end_bytes, m->alloc_bytes);
        assert_true(m->nlive <= 20 && m->nlive > 0);
        for (uint32_t j = 1; j < m->nlive; j++)
            assert_true(m->live[j - 1].bytes >= m->live[j].bytes);
    }
    assert_int_equal(allocs, 2007);
    assert_int_equal(r.memory.rows[0].space, GPUFL__ANA_SPACE_DEVICE);
    assert_true(r.memory.rows[0].peak_bytes > 1000000000ull); /* 1.7 GB held by the allocator */
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
