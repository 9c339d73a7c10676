/*
 * The framework's layer of memory (gpufl_record_allocator,
 * gpufl_record_block; session/framework_memory.c), recorded and read back.
 *
 * Why: a framework's figures are the only record of what its tensors hold;
 * they must come back from both formats exactly as given: every allocator
 * state, blocks flagged apart from the driver's allocations, each block's
 * Python stack defined once and read back as source frames, and a block
 * allocated before the session stamped at the session's start instead of
 * dropped as stale. Misuse is refused with the documented code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/event.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "read/stack_table.h"
#include "test_util.h"

static char *log_path;

static void start(gpufl_log_format format)
{
    log_path = tu_mkdtemp("fwmem");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "fwmem";
    o.log_path = log_path;
    o.system_sample_rate_ms = 0;
    o.log_format = format;
    assert_true(gpufl_init(&o));
}

static int cleanup(void **state)
{
    (void)state;
    tu_end_session(&log_path);
    return 0;
}

static const gpufl_source_frame leak_stack[] = {
    {"/work/train.py", "step", 42},
    {"/work/train.py", "main", 97},
};

/* Records two states, two blocks (one freed) and reads them back. */
static void record_and_read(gpufl_log_format format)
{
    start(format);
    gpufl_allocator_state st = {.struct_size = sizeof st,
                                .device = 0,
                                .framework = "pytorch",
                                .reason = "step",
                                .allocated_bytes = 3u << 20,
                                .reserved_bytes = 20u << 20,
                                .active_bytes = 4u << 20,
                                .inactive_split_bytes = 1u << 20,
                                .peak_allocated_bytes = 5u << 20,
                                .alloc_retries = 2};
    assert_int_equal(gpufl_record_allocator(&st), 0);
    gpufl_scope s = gpufl_scope_begin("step");
    /* allocated before the session: stamped at its start */
    assert_int_equal(gpufl_record_block(0, 0x7f0000000000ull, 1u << 20, 0, 7, 1, leak_stack, 2), 0);
    assert_int_equal(gpufl_record_block(0, 0x7f0000200000ull, 2u << 20, 0, 7, 0, leak_stack, 2), 0);
    assert_int_equal(gpufl_record_block(0, 0x7f0000200000ull, 2u << 20, 1, 7, 0, NULL, 0), 0);
    st.reason = "oom";
    st.requested_bytes = 1ull << 33;
    st.device_free_bytes = 123456;
    st.ooms = 1;
    assert_int_equal(gpufl_record_allocator(&st), 0);
    gpufl_scope_end(s);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", gpufl_session_dir());
    gpufl_shutdown();

    gpufl_trace *t;
    char err[512];
    assert_int_equal(gpufl_trace_open(dir, &t, err, sizeof err), 0);
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    const gpufl_trace_allocator *a = gpufl_trace_get_allocator(t);
    assert_int_equal(a->n, 2);
    assert_string_equal(gpufl_trace_string(t, a->framework[0]), "pytorch");
    assert_string_equal(gpufl_trace_string(t, a->reason[0]), "step");
    assert_string_equal(gpufl_trace_string(t, a->reason[1]), "oom");
    assert_int_equal(a->allocated[0], 3u << 20);
    assert_int_equal(a->reserved[0], 20u << 20);
    assert_int_equal(a->active[0], 4u << 20);
    assert_int_equal(a->inactive_split[0], 1u << 20);
    assert_int_equal(a->peak_allocated[0], 5u << 20);
    assert_int_equal(a->largest_free[0], 0);
    assert_int_equal(a->alloc_retries[0], 2);
    assert_int_equal(a->requested[1], 1ull << 33);
    assert_int_equal(a->device_free[1], 123456);
    assert_int_equal(a->ooms[1], 1);
    /* the second state was recorded inside the scope */
    const gpufl_trace_callers *c = a->callers;
    assert_int_equal(c->scope[a->caller_row[0]], 0);
    assert_true(c->scope[a->caller_row[1]] != 0);

    const gpufl_trace_memory *m = gpufl_trace_get_memory(t);
    assert_int_equal(m->n, 3);
    for (size_t i = 0; i < m->n; i++)
        assert_int_equal(m->framework[i], 1);
    assert_int_equal(m->ts_ns[0], info->start_ns);
    assert_int_equal(m->is_free[2], 1);
    assert_int_equal(m->bytes[1], 2u << 20);
    uint32_t stack0 = c->stack[m->caller_row[0]], stack1 = c->stack[m->caller_row[1]];
    assert_true(stack0 > GFL_SOURCE_STACK_BASE);
    assert_int_equal(stack0, stack1); /* one definition for one stack */
    gpufl_trace_close(t);

    gpufl__stack_table tab;
    assert_int_equal(gpufl__stack_table_load(dir, &tab, err, sizeof err), 0);
    const gpufl__stack_rec *r = gpufl__stack_table_find(&tab, stack0);
    assert_non_null(r);
    assert_true(r->source);
    assert_int_equal(r->total, 2);
    assert_int_equal(r->missing, 0);
    assert_int_equal(r->uses, 2);
    assert_true(r->frames[0].source);
    assert_string_equal(r->frames[0].module, "step (/work/train.py:42)");
    assert_int_equal(r->frames[0].offset, 42);
    assert_string_equal(r->frames[1].module, "main (/work/train.py:97)");
    gpufl__stack_table_free(&tab);
    assert_null(gpufl__stack_table_find(NULL, stack0)); /* a report made without the stacks */
}

static void test_gflt(void **state)
{
    (void)state;
    record_and_read(GPUFL_LOG_GFLT);
}

static void test_ndjson(void **state)
{
    (void)state;
    record_and_read(GPUFL_LOG_NDJSON);
}

static void test_misuse(void **state)
{
    (void)state;
    gpufl_allocator_state st = {.struct_size = sizeof st};
    assert_int_equal(gpufl_record_allocator(&st), GPUFL_ESTATE);
    assert_int_equal(gpufl_record_block(0, 0x1000, 1, 0, 0, 0, NULL, 0), GPUFL_ESTATE);
    assert_int_equal(gpufl_record_allocator(NULL), GPUFL_EINVAL);
    st.struct_size = 8;
    assert_int_equal(gpufl_record_allocator(&st), GPUFL_EINVAL);
    assert_int_equal(gpufl_record_block(0, 0, 1, 0, 0, 0, NULL, 0), GPUFL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_gflt, cleanup),
        cmocka_unit_test_teardown(test_ndjson, cleanup),
        cmocka_unit_test(test_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
