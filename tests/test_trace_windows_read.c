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

#include "analyze/analysis.h"
#include "flight_fixture.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "present/report/report_json.h"
#include "present/report/report_text.h"
#include "report_schema.h"
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

static char *report_text(const gpufl_trace *t, gpufl__ana_report *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(gpufl__analyze_report(t, NULL, r), 0);
    assert_int_equal(gpufl__report_text(t, r, NULL, f), 0);
    fclose(f);
    return text;
}

/* The OOM comes first, right under the header, with what led to it; the
 * triggers and windows have sections of their own; the failed allocation
 * allocated nothing. */
static void test_report_text(void **state)
{
    (void)state;
    char path[4096];
    ff_write(dir, "s", path);
    gpufl_trace *t = tu_trace_open(path);
    gpufl__ana_report r;
    char *text = report_text(t, &r);
    const char *oom = strstr(text, "Last events before the OOM\n");
    assert_non_null(oom);
    assert_true(oom < strstr(text, "Summary\n"));
    assert_true(strstr(text, "devices ") < oom);
    assert_non_null(strstr(oom, "out of memory at 5.00 ms into the session on thread 7, GPU 0; the last 8 events"));
    assert_non_null(strstr(oom, "FAILED alloc GPU 0  tid 7         4.00 GiB\n  failed allocation: 4.00 GiB"));
    assert_non_null(strstr(oom, "live then on GPU 0: 2 allocations, 10.0 MiB\n      8.00 MiB at 0x7f0000000000"));
    assert_non_null(strstr(text, "  memory    3 allocations, 1 free\n"));
    assert_non_null(
        strstr(text, "Triggers\n--------\n       5.00 ms  oom          dumped     dumps/dump-0001 (tid 7)"));
    assert_non_null(strstr(text, "device activity recorded in 2 windows, 6.00 ms of 10.00 ms (60.0 %)"));
    assert_non_null(strstr(text, "  #2         6.00 ms .. 10.00 ms        4.00 ms  trigger  unended"));

    /* the analysis: the failed allocation is neither live nor a leak */
    assert_int_equal(r.flight.incident, GPUFL__ANA_INCIDENT_OOM);
    assert_int_equal(r.flight.live_count, 2);
    assert_int_equal(r.flight.live_bytes, 10u << 20);
    assert_int_equal(r.memory.n, 1);
    assert_int_equal(r.memory.rows[0].allocs, 3);
    assert_int_equal(r.memory.rows[0].never_freed_bytes, 10u << 20);
    free(text);
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
}

static json_t *report_json(const gpufl_trace *t, gpufl__ana_report *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(gpufl__analyze_report(t, NULL, r), 0);
    assert_int_equal(gpufl__report_json(t, r, f), 0);
    fclose(f);
    json_error_t e;
    json_t *doc = json_loads(text, 0, &e);
    assert_non_null(doc);
    free(text);
    char why[512];
    if (report_schema_check(doc, why, sizeof why) != 0)
        fail_msg("%s", why);
    return doc;
}

static json_int_t jint(json_t *o, const char *key) { return json_integer_value(json_object_get(o, key)); }
static const char *jtext(json_t *o, const char *key) { return json_string_value(json_object_get(o, key)); }

/* The JSON report says what the text report says: the same triggers,
 * windows and OOM figures. */
static void test_report_json(void **state)
{
    (void)state;
    char path[4096];
    ff_write(dir, "s", path);
    gpufl_trace *t = tu_trace_open(path);
    gpufl__ana_report r;
    json_t *doc = report_json(t, &r);
    json_t *g = json_object_get(doc, "triggers");
    assert_int_equal(json_array_size(g), 2);
    assert_int_equal(jint(json_array_get(g, 0), "ts_ns"), 6000000);
    assert_int_equal(jint(json_array_get(g, 0), "tid"), 7);
    assert_string_equal(jtext(json_array_get(g, 0), "kind"), "oom");
    assert_string_equal(jtext(json_array_get(g, 0), "outcome"), "dumped");
    assert_string_equal(jtext(json_array_get(g, 0), "dump"), "dump-0001");
    assert_string_equal(jtext(json_array_get(g, 1), "outcome"), "storm");
    assert_true(json_is_null(json_object_get(json_array_get(g, 1), "dump")));
    json_t *w = json_object_get(doc, "trace_windows");
    assert_int_equal(json_array_size(w), 2);
    assert_int_equal(jint(json_array_get(w, 0), "begin_ns"), 2000000);
    assert_int_equal(jint(json_array_get(w, 0), "dur_ns"), 2000000);
    assert_string_equal(jtext(json_array_get(w, 0), "detail"), "steps 100-101 of `step`");
    assert_int_equal(jint(json_array_get(w, 1), "end_ns"), 11000000);
    assert_true(json_is_true(json_object_get(json_array_get(w, 1), "unended")));
    json_t *sum = json_object_get(doc, "summary");
    assert_int_equal(jint(sum, "traced_ns"), 6000000);
    assert_int_equal(jint(sum, "allocations"), 3);
    assert_int_equal(jint(sum, "failed_allocations"), 1);
    json_t *in = json_object_get(doc, "incident");
    assert_string_equal(jtext(in, "kind"), "oom");
    assert_int_equal(jint(in, "ts_ns"), 6000000);
    assert_int_equal(jint(in, "tid"), 7);
    assert_int_equal(jint(in, "device"), 0);
    json_t *last = json_object_get(in, "last");
    assert_int_equal(json_array_size(last), r.flight.nlast);
    assert_string_equal(jtext(json_array_get(last, json_array_size(last) - 1), "what"), "failed_alloc");
    assert_int_equal(jint(json_object_get(in, "failed_allocation"), "bytes"), 4294967296ll);
    assert_int_equal(jint(in, "live_count"), 2);
    assert_int_equal(jint(in, "live_bytes"), 10 << 20);
    json_t *big = json_object_get(in, "largest");
    assert_int_equal(json_array_size(big), 2);
    assert_string_equal(jtext(json_array_get(big, 0), "address"), "0x7f0000000000");
    json_decref(doc);
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
}

/* A session without flight events reports no such sections. */
static void test_report_without_flight_events(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/device.log", dir);
    tu_write_file(path, FF_START "\"channel\":\"device\"}\n" FF_END);
    gpufl_trace *t = tu_trace_open(path);
    gpufl__ana_report r;
    char *text = report_text(t, &r);
    assert_null(strstr(text, "Last events before"));
    assert_null(strstr(text, "Triggers"));
    assert_null(strstr(text, "Trace windows"));
    free(text);
    gpufl__ana_report_free(&r);
    json_t *doc = report_json(t, &r); /* empty, never missing (docs/REPORT.md) */
    assert_int_equal(json_array_size(json_object_get(doc, "triggers")), 0);
    assert_int_equal(json_array_size(json_object_get(doc, "trace_windows")), 0);
    assert_true(json_is_null(json_object_get(doc, "incident")));
    json_decref(doc);
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ndjson_and_gflt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_before_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_without_flight_events, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
