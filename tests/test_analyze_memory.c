/*
 * The memory analysis (src/analyze/ana_memory.c).
 *
 * Why: a replay of allocations and frees gives peaks and suspects; it
 * must match frees to live allocations by device and address, count a free
 * of memory allocated before recording as unmatched (not as negative
 * memory), treat an allocation at a live address as replacing it, find the
 * set live at the peak, and not call memory held by a caching allocator
 * (allocations and no frees: PyTorch) a leak without saying so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "ana_fixture.h"
#include "analyze/analysis.h"

TU_TEMP_DIR_FIXTURES(dir, "analyze-memory")

static void replay(void **state)
{
    (void)state;
    af f = {.end_ns = 3000000};
    af_mem(&f, false, 0, 1100000, 0x1000, 100, "device");  /* A */
    af_mem(&f, false, 0, 1200000, 0x2000, 300, "device");  /* B: peak 400 */
    af_mem(&f, true, 0, 1300000, 0x1000, 100, "device");   /* A freed */
    af_mem(&f, false, 0, 1400000, 0x3000, 50, "device");   /* C */
    af_mem(&f, true, 0, 1500000, 0x9000, 77, "device");    /* allocated before recording */
    af_mem(&f, false, 0, 1600000, 0x3000, 20, "device");   /* D replaces C */
    af_mem(&f, false, 0, 1700000, 0x5000, 1000, "pinned"); /* host space, never freed */
    af_mem(&f, false, 1, 1800000, 0x1000, 10, "device");   /* same address, other device */
    af_mem(&f, false, 1, 1810000, 0x1100, 20, "device");
    af_mem(&f, false, 1, 1820000, 0x1200, 30, "device");
    gpufl_trace *t = af_open(&f, dir, "mem");
    gpufl__ana_options o = {.max_allocations = 2};
    gpufl__ana_memory m;
    assert_int_equal(gpufl__analyze_memory(t, &o, &m), 0);
    assert_true(m.recorded);
    assert_int_equal(m.n, 3);
    const gpufl__ana_mem_row *d = &m.rows[0], *h = &m.rows[1], *d1 = &m.rows[2];
    assert_int_equal(d->device, 0);
    assert_int_equal(d->space, GPUFL__ANA_SPACE_DEVICE);
    assert_int_equal(d->allocs, 4);
    assert_int_equal(d->alloc_bytes, 470);
    assert_int_equal(d->frees, 1);
    assert_int_equal(d->free_bytes, 100);
    assert_int_equal(d->peak_bytes, 400);
    assert_int_equal(d->peak_ns, 1200000);
    assert_int_equal(d->live_at_peak, 2);
    assert_int_equal(d->nlive, 2);
    assert_int_equal(d->live[0].address, 0x2000); /* largest first */
    assert_int_equal(d->live[0].bytes, 300);
    assert_int_equal(d->live[0].tid, 9);
    assert_int_equal(d->live[1].address, 0x1000);
    assert_int_equal(d->end_bytes, 320);
    assert_int_equal(d->never_freed, 3); /* B, D live; C replaced */
    assert_int_equal(d->never_freed_bytes, 370);
    assert_int_equal(d->nleaks, 2); /* of 3: max_allocations */
    assert_int_equal(d->leaks[0].address, 0x2000);
    assert_int_equal(d->leaks[1].address, 0x3000);
    assert_int_equal(d->leaks[1].bytes, 50);
    assert_int_equal(d->unmatched_frees, 1);
    assert_int_equal(d->unmatched_free_bytes, 77);
    assert_int_equal(d->never_freed_why, GPUFL__ANA_NEVER_FREED_LEAKS);
    assert_int_equal(h->device, 0);
    assert_int_equal(h->space, GPUFL__ANA_SPACE_HOST);
    assert_int_equal(h->peak_bytes, 1000);
    assert_int_equal(h->never_freed_why, GPUFL__ANA_NEVER_FREED_NO_FREES);
    /* device 1: a caching allocator's pattern: allocations, no frees */
    assert_int_equal(d1->device, 1);
    assert_int_equal(d1->allocs, 3);
    assert_int_equal(d1->frees, 0);
    assert_int_equal(d1->unmatched_frees, 0);
    assert_int_equal(d1->peak_bytes, 60);
    assert_int_equal(d1->peak_ns, 1820000);
    assert_int_equal(d1->live_at_peak, 3);
    assert_int_equal(d1->end_bytes, 60);
    assert_int_equal(d1->never_freed, 3);
    assert_int_equal(d1->never_freed_why, GPUFL__ANA_NEVER_FREED_NO_FREES);
    gpufl__ana_memory_free(&m);
    assert_null(m.rows);
    gpufl_trace_close(t);
}

static void unended(void **state)
{
    (void)state;
    af f = {.end_ns = 0};
    af_mem(&f, false, 0, 1100000, 0x1000, 100, "device");
    af_mem(&f, false, 0, 1200000, 0x2000, 100, "device");
    af_mem(&f, true, 0, 1300000, 0x1000, 100, "device");
    gpufl_trace *t = af_open(&f, dir, "unended");
    gpufl__ana_memory m;
    assert_int_equal(gpufl__analyze_memory(t, NULL, &m), 0);
    assert_int_equal(m.n, 1);
    assert_int_equal(m.rows[0].never_freed, 1);
    assert_int_equal(m.rows[0].never_freed_why, GPUFL__ANA_NEVER_FREED_UNENDED);
    assert_int_equal(m.rows[0].peak_bytes, 200);
    gpufl__ana_memory_free(&m);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replay),
        cmocka_unit_test(unended),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
