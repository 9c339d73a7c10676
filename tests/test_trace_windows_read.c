/*
 * The flight recorder's events read back (src/read): triggers, trace
 * windows (opening and closing joined into one row; one never closed ends
 * at the session's end, marked unended) and failed allocations, from a
 * hand-written NDJSON session (flight_fixture.h) and the same session
 * converted to .gflt, which must give the same tables.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "flight_fixture.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "session_file.h"

TU_TEMP_DIR_FIXTURES(dir, "trace-windows")

static const char *str(const gpufl_trace *t, uint32_t id) { return gpufl_trace_string(t, id); }

static void check_tables(const gpufl_trace *t)
{
    const gpufl_trace_windows *w = gpufl_trace_get_trace_windows(t);
    assert_int_equal(w->n, 2);
    assert_int_equal(w->index[0], 1);
    assert_int_equal(w->begin_ns[0], 2000000);
    assert_int_equal(w->end_ns[0], 4000000);
    assert_int_equal(w->unended[0], 0);
    assert_string_equal(str(t, w->reason[0]), "steps");
    assert_string_equal(str(t, w->detail[0]), "steps 100-101 of `step`");
    assert_int_equal(w->index[1], 2);
    assert_int_equal(w->begin_ns[1], 7000000);
    assert_int_equal(w->end_ns[1], 11000000); /* never closed: the session's end */
    assert_int_equal(w->unended[1], 1);
    assert_string_equal(str(t, w->reason[1]), "trigger");
    assert_int_equal(w->detail[1], 0);

    const gpufl_trace_triggers *g = gpufl_trace_get_triggers(t);
    assert_int_equal(g->n, 2);
    assert_int_equal(g->ts_ns[0], 6000000);
    assert_int_equal(g->tid[0], 7);
    assert_string_equal(str(t, g->kind[0]), "oom");
    assert_string_equal(str(t, g->detail[0]), "cudaMalloc of 4.0 GiB failed");
    assert_string_equal(str(t, g->dump[0]), "dump-0001");
    assert_int_equal(g->outcome[0], 0);
    assert_int_equal(g->ts_ns[1], 8000000);
    assert_int_equal(g->tid[1], 0);
    assert_string_equal(str(t, g->kind[1]), "dump");
    assert_int_equal(g->dump[1], 0);
    assert_int_equal(g->outcome[1], 1);
    assert_string_equal(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_TRIGGER_OUTCOME, g->outcome[1]), "storm");
    assert_null(gpufl_trace_enum_name(GPUFL_TRACE_ENUM_TRIGGER_OUTCOME, 3));

    const gpufl_trace_memory *m = gpufl_trace_get_memory(t);
    assert_int_equal(m->n, 5);
    for (size_t i = 0; i < m->n; i++) {
        assert_int_equal(m->failed[i], m->ts_ns[i] == 6000000);
        if (m->failed[i]) {
            assert_int_equal(m->bytes[i], 4294967296ull);
            assert_int_equal(m->address[i], 0);
            assert_int_equal(m->is_free[i], 0);
        }
    }
    assert_int_equal(gpufl_trace_event_count(t, 24), 2); /* GFL_EV_TRIGGER */
    assert_int_equal(gpufl_trace_event_count(t, 25), 3); /* GFL_EV_TRACE_WINDOW */
    assert_true(gpufl_trace_table_memory_bytes(t, GPUFL_TRACE_TABLE_TRIGGERS) > 0);
    assert_true(gpufl_trace_table_memory_bytes(t, GPUFL_TRACE_TABLE_TRACE_WINDOWS) > 0);
}

static void test_ndjson_and_gflt(void **state)
{
    (void)state;
    char path[4096], gflt[4200];
    ff_write(dir, "s", path);
    snprintf(gflt, sizeof gflt, "%s/s.gflt", dir);
    tu_copy_session(path, gflt, NULL, NULL);
    const char *paths[] = {path, gflt};
    for (int p = 0; p < 2; p++) {
        gpufl_trace *t = tu_trace_open(paths[p]);
        assert_int_equal(gpufl_trace_get_info(t)->source_format, p ? GPUFL_TRACE_GFLT : GPUFL_TRACE_NDJSON);
        check_tables(t);
        gpufl_trace_close(t);
    }
}

/* A closing event whose opening was not read (before the file, or lost)
 * still gives the whole window; one read after its closing does not undo it. */
static void test_close_before_open(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/system.log", dir);
    tu_write_file(path, FF_START "\"channel\":\"system\"}\n"
                                 "{\"type\":\"trace_window\",\"ts_ns\":3000000,\"end_ns\":3500000,\"index\":4,"
                                 "\"reason\":\"request\"}\n"
                                 "{\"type\":\"trace_window\",\"ts_ns\":3000000,\"index\":4,\"reason\":\"request\"}\n"
                                 "{\"type\":\"trace_window\",\"ts_ns\":5000000,\"end_ns\":6000000,\"index\":5,"
                                 "\"reason\":\"schedule\"}\n" FF_END);
    gpufl_trace *t = tu_trace_open(path);
    const gpufl_trace_windows *w = gpufl_trace_get_trace_windows(t);
    assert_int_equal(w->n, 2);
    assert_int_equal(w->begin_ns[0], 3000000);
    assert_int_equal(w->end_ns[0], 3500000);
    assert_int_equal(w->unended[0], 0);
    assert_int_equal(w->index[1], 5);
    assert_int_equal(w->end_ns[1], 6000000);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ndjson_and_gflt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_before_open, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
