/*
 * The NDJSON reader (src/read/json_scan.c, ndjson_parse.c, ndjson_source.c):
 * gpufl's own .log lines back into the events the recorder wrote.
 *
 * Why: `gpufl convert` promises that NDJSON -> .gflt -> NDJSON gives the
 * same lines, and every analysis reads sessions through this reader. So for
 * every event type, with optional fields absent and present, the line made
 * from the parsed event must be the line itself. And a reader meets files
 * that are cut short, written by newer versions, damaged or not ours:
 * checked that a torn last line (cut at every byte) is skipped and counted,
 * unknown types are counted and unknown fields ignored, damage is an error
 * naming the file and the line, session_start/session_end/log_stopped fill
 * the session facts, and a session directory's rotated parts are read
 * oldest first.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/intern.h"
#include "event_gen.h"
#include "format/gflt_layout.h"
#include "format/ndjson_format.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "read/json_scan.h"
#include "read/ndjson_parse.h"

static uint32_t names[6];

static int setup(void **state)
{
    (void)state;
    static const char *const text[6] = {"",
                                        "ampere_sgemm_128x64_nn",
                                        "nccl:all_reduce \"ring\" \\ step\t2 \xce\xbb",
                                        "ctl\x01\x1f",
                                        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                        "emoji \xf0\x9f\x98\x80"};
    for (int i = 0; i < 6; i++)
        names[i] = gpufl__intern(text[i]);
    return 0;
}

/* Enum fields hold values of their enums, as every writer's do (the NDJSON
 * writer names them, and a number outside the enum has no name); the CUDA
 * version is a version (the line says "13.0"). */
static void valid_enums(gfl_event *ev)
{
    switch (ev->h.type) {
    case GFL_EV_KERNEL: ev->u.kernel.limiter %= GFL_LIMIT_COUNT; break;
    case GFL_EV_MEMCPY:
        ev->u.memcpy.copy_kind %= GFL_COPY_KIND_COUNT;
        ev->u.memcpy.src_kind %= GFL_MEM_KIND_COUNT;
        ev->u.memcpy.dst_kind %= GFL_MEM_KIND_COUNT;
        break;
    case GFL_EV_MEMSET: ev->u.memset.mem_kind %= GFL_MEM_KIND_COUNT; break;
    case GFL_EV_SYNC: ev->u.sync.sync_kind %= GFL_SYNC_KIND_COUNT; break;
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE: ev->u.mem.mem_kind %= GFL_MEM_KIND_COUNT; break;
    case GFL_EV_DROPPED:
        ev->u.dropped.reason %= GFL_DROP_REASON_COUNT;
        ev->u.dropped.channel %= GFL_CHANNEL_COUNT;
        break;
    case GFL_EV_LOG: ev->u.log.level %= GFL_LOG_ERROR + 1; break;
    case GFL_EV_CRASH: ev->u.crash.action %= GFL_CRASH_ACTION_COUNT; break;
    case GFL_EV_TRIGGER: ev->u.trigger.outcome %= GFL_TRIGGER_OUTCOME_COUNT; break;
    case GFL_EV_DEVICE_INFO: /* a CUDA version, major * 1000 + minor * 10, or unknown */
        if (ev->u.info.cuda_driver_version > 0)
            ev->u.info.cuda_driver_version = 1000 + ev->u.info.cuda_driver_version % 100000 * 10;
        break;
    default: break;
    }
}

static char *line_of(const gfl_event *ev, const gpufl__string_lookup *names_of, size_t *n)
{
    char *line = malloc(gpufl__ndjson_bound(ev, names_of));
    assert_non_null(line);
    *n = gpufl__ndjson_format(ev, names_of, line);
    return line;
}

/* Every type, random fields, optional ones absent or present: the parsed
 * event gives back the same line, and parsing is idempotent. */
static void test_every_type_roundtrip(void **state)
{
    (void)state;
    gpufl__strtab t;
    assert_int_equal(gpufl__strtab_init(&t), 0);
    gpufl__string_lookup back = gpufl__strtab_lookup(&t);
    uint64_t rng = 2024;
    for (unsigned type = 1; type < GFL_EV_TYPE_COUNT; type++)
        for (int i = 0; i < 300 && tu_event_type_built(type); i++) {
            gfl_event ev, parsed, again;
            tu_random_event(&rng, (uint8_t)type, i % 3 == 0 ? 1.0 : i % 3 == 1 ? 0.0 : 0.5, names, 6, &ev);
            valid_enums(&ev);
            size_t n1, n2;
            char *l1 = line_of(&ev, &gpufl__intern_lookup, &n1);
            tu_ndjson_roundtrip(&ev, &gpufl__intern_lookup, &t, &parsed);
            char *l2 = line_of(&parsed, &back, &n2);
            if (n1 != n2 || memcmp(l1, l2, n1) != 0)
                fail_msg("%s: the line does not come back\n  %.*s  %.*s", gpufl__event_type_name((uint8_t)type),
                         (int)n1, l1, (int)n2, l2);
            tu_ndjson_roundtrip(&parsed, &back, &t, &again);
            const char *diff = tu_event_diff(&parsed, &back, &again, &back);
            if (diff)
                fail_msg("not idempotent: %s", diff);
            free(l1);
            free(l2);
        }
    gpufl__strtab_free(&t);
}

/* Fields a line leaves out come back as they were: 0, validity bit clear,
 * -1 for an unknown compute capability. */
static void test_absent_fields(void **state)
{
    (void)state;
    gpufl__strtab t;
    assert_int_equal(gpufl__strtab_init(&t), 0);
    gfl_event ev, back;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_DEVICE_INFO;
    ev.h.ts = 5;
    ev.u.info.cc_major = ev.u.info.cc_minor = -1;
    ev.u.info.name = names[1];
    tu_ndjson_roundtrip(&ev, &gpufl__intern_lookup, &t, &back);
    assert_int_equal(back.u.info.cc_major, -1);
    assert_int_equal(back.u.info.cc_minor, -1);
    assert_int_equal(back.u.info.cuda_driver_version, 0);
    ev.u.info.cc_major = 9;
    ev.u.info.cc_minor = 0;
    ev.u.info.cuda_driver_version = 13000;
    tu_ndjson_roundtrip(&ev, &gpufl__intern_lookup, &t, &back);
    assert_int_equal(back.u.info.cc_major, 9);
    assert_int_equal(back.u.info.cc_minor, 0);
    assert_int_equal(back.u.info.cuda_driver_version, 13000);

    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_DEVICE_METRICS;
    ev.u.dev.valid = GFL_DEV_TEMP | GFL_DEV_MEM;
    ev.u.dev.temp_c = -12;
    ev.u.dev.mem_used_bytes = 1;
    tu_ndjson_roundtrip(&ev, &gpufl__intern_lookup, &t, &back);
    assert_int_equal(back.u.dev.valid, GFL_DEV_TEMP | GFL_DEV_MEM);
    assert_int_equal(back.u.dev.temp_c, -12);

    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_KERNEL;
    ev.h.ts = 10;
    ev.u.kernel.end_ts = 20;
    ev.u.kernel.name = ev.u.kernel.mangled_name = names[1]; /* mangled as the name: left out */
    ev.u.kernel.occupancy_x10000 = 625;                     /* 0.0625 */
    tu_ndjson_roundtrip(&ev, &gpufl__intern_lookup, &t, &back);
    assert_int_equal(back.u.kernel.mangled_name, 0);
    assert_int_equal(back.u.kernel.occupancy_x10000, 625);
    assert_string_equal(gpufl__strtab_str(&t, back.u.kernel.name, NULL), "ampere_sgemm_128x64_nn");

    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_NVTX_RANGE;
    ev.h.flags = GFL_F_NVTX_START_END; /* start/end ranges have no depth: the flag comes back */
    ev.u.nvtx.name = names[2];
    tu_ndjson_roundtrip(&ev, &gpufl__intern_lookup, &t, &back);
    assert_int_equal(back.h.flags, GFL_F_NVTX_START_END);
    ev.h.flags = 0;
    ev.u.nvtx.depth = 3;
    tu_ndjson_roundtrip(&ev, &gpufl__intern_lookup, &t, &back);
    assert_int_equal(back.h.flags, 0);
    assert_int_equal(back.u.nvtx.depth, 3);
    gpufl__strtab_free(&t);
}

/* ---- files ---------------------------------------------------------------- */

/* Reads text as one log ("mem.log"); returns the events or the error. */
static long read_text(const char *text, size_t n, gpufl__event_source **keep, char *err, size_t err_len)
{
    return tu_read_events(text, n, "mem.log", NULL, 0, NULL, keep, err, err_len);
}

#define START                                                                                                          \
    "{\"type\":\"session_start\",\"ts_ns\":100,\"wall_ns\":1790000000000000000,\"session_id\":\"s-1\","                \
    "\"app_name\":\"trainer\",\"pid\":77,\"host\":\"node\",\"channel\":\"scope\",\"part\":0,"                          \
    "\"format_version\":1,\"gpufl_version\":\"0.1.0\"}\n"
#define SCOPE "{\"type\":\"scope_begin\",\"ts_ns\":200,\"tid\":5,\"id\":1,\"parent\":0,\"depth\":0,\"name\":\"step\"}\n"
#define END                                                                                                            \
    "{\"type\":\"session_end\",\"ts_ns\":900,\"wall_ns\":1790000000000000800,\"session_id\":\"s-1\","                  \
    "\"app_name\":\"trainer\",\"lines\":3,\"lost\":4}\n"
#define STOPPED "{\"type\":\"log_stopped\",\"ts_ns\":800,\"reason\":\"disk_cap\",\"detail\":\"cap \\\"1\\\"\"}\n"

static void test_session_lines(void **state)
{
    (void)state;
    static const char text[] = START SCOPE SCOPE STOPPED END;
    char err[1024];
    gpufl__event_source *s;
    assert_int_equal(read_text(text, sizeof text - 1, &s, err, sizeof err), 2);
    const gpufl__session_meta *m = &s->meta;
    assert_string_equal(m->session_id, "s-1");
    assert_string_equal(m->app_name, "trainer");
    assert_string_equal(m->host, "node");
    assert_string_equal(m->gpufl_version, "0.1.0");
    assert_int_equal(m->pid, 77);
    assert_int_equal(m->start_ns, 100);
    assert_true(m->start_wall_ns == 1790000000000000000ull);
    assert_true(m->ended);
    assert_int_equal(m->end_ns, 900);
    assert_int_equal(m->lost[GFL_CHANNEL_SCOPE], 4);
    assert_int_equal(m->stop_reason, 1);
    assert_int_equal(m->stopped_at_ns, 800);
    assert_string_equal(m->stop_detail, "cap \"1\"");
    assert_int_equal(s->format_version, 1);
    gpufl__source_close(s);
}

/* A newer writer: lines of unknown types are counted, fields we do not know
 * (of any JSON shape) ignored, enum names we do not know read as 0. */
static void test_newer_writer(void **state)
{
    (void)state;
    static const char text[] =
        START "{\"type\":\"gpu_sparkle\",\"ts_ns\":300,\"x\":[1,{\"a\":[2,\"]\"]}]}\n"
              "{\"type\":\"scope_begin\",\"ts_ns\":200,\"new\":{\"nested\":{\"deep\":[1,2,3]}},\"tid\":5,"
              "\"id\":1,\"parent\":0,\"depth\":0,\"name\":\"step\",\"f\":1.5e3,\"n\":null,\"b\":false}\n"
              "{\"type\":\"memcpy\",\"start_ns\":1,\"end_ns\":2,\"kind\":\"HtoX\",\"src_kind\":\"quantum\"}\n"
              "{\"type\":\"another_new_one\"}\n";
    char err[1024];
    gpufl__event_source *s;
    assert_int_equal(read_text(text, sizeof text - 1, &s, err, sizeof err), 2);
    assert_int_equal(s->skipped_records, 2);
    gpufl__source_close(s);
}

/* Damage in the middle of a file: an error with the file, the line and
 * what is wrong. */
static void test_damaged_lines(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "not json",
        "{\"type\":\"scope_begin\",\"ts_ns\":1",
        "{\"type\":\"scope_begin\" \"ts_ns\":1}",
        "{\"ts_ns\":1}",
        "{\"type\":7}",
        "{\"type\":\"scope_begin\"}",
        "{\"type\":\"scope_begin\",\"ts_ns\":-1}",
        "{\"type\":\"scope_begin\",\"ts_ns\":18446744073709551616}",
        "{\"type\":\"scope_begin\",\"ts_ns\":1,\"depth\":65536}",
        "{\"type\":\"scope_begin\",\"ts_ns\":1,\"name\":5}",
        "{\"type\":\"scope_begin\",\"ts_ns\":1,\"name\":\"\\x\"}",
        "{\"type\":\"scope_begin\",\"ts_ns\":1,\"name\":\"\\u12\"}",
        "{\"type\":\"kernel\",\"start_ns\":1,\"grid\":[1,2]}",
        "{\"type\":\"kernel\",\"start_ns\":1,\"block\":[1,2,70000]}",
        "{\"type\":\"kernel\",\"start_ns\":1,\"occupancy\":\"0.5\"}",
        "{\"type\":\"mem_alloc\",\"ts_ns\":1,\"address\":\"12\"}",
        "{\"type\":\"device_info\",\"ts_ns\":1,\"compute_capability\":\"nine\"}",
        "{\"type\":\"scope_begin\",\"ts_ns\":1} trailing",
        "[1,2]",
    };
    char err[1024];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, START SCOPE "%s\n" SCOPE, bad[i]);
        long n = read_text(text, strlen(text), NULL, err, sizeof err);
        if (n != GPUFL_ECORRUPT)
            fail_msg("%s read as %ld", bad[i], n);
        if (!strstr(err, "mem.log:3: "))
            fail_msg("%s: the error does not say file and line: %s", bad[i], err);
    }
}

/* A torn last line, cut at every byte: the events before it, the cut
 * counted as skipped. Blank lines are no events. */
static void test_torn_last_line(void **state)
{
    (void)state;
    static const char text[] =
        START SCOPE "\n   \n" SCOPE
                    "{\"type\":\"kernel\",\"start_ns\":300,\"end_ns\":400,\"dur_ns\":100,\"device\":0,\"context\":1,"
                    "\"stream\":7,\"corr\":9,\"name\":\"k\",\"grid\":[1,1,1],\"block\":[32,1,1],\"regs\":8}\n";
    size_t full = sizeof text - 1, last = full - 1;
    while (text[last - 1] != '\n')
        last--;
    char err[1024];
    for (size_t cut = last; cut < full; cut++) {
        gpufl__event_source *s;
        long n = read_text(text, cut, &s, err, sizeof err);
        if (n < 0)
            fail_msg("cut at %zu: %s", cut, err);
        assert_int_equal(n, 2);
        assert_int_equal(s->skipped_bytes, cut - last);
        gpufl__source_close(s);
    }
    assert_int_equal(read_text(text, full, NULL, err, sizeof err), 3);
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tu_write_file(path, text);
}

/* A session directory: every channel, rotated parts oldest first (by number,
 * not by name: 10 after 9), session.json and strangers ignored. */
static void test_directory(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("ndjson-dir");
    char line[256];
    for (int part = 1; part <= 11; part++) {
        char name[64], text[600];
        snprintf(name, sizeof name, "scope.%d.log", part);
        snprintf(line, sizeof line,
                 "{\"type\":\"scope_begin\",\"ts_ns\":%d,\"tid\":1,\"id\":%d,\"parent\":0,"
                 "\"depth\":0,\"name\":\"p\"}\n",
                 part, part);
        snprintf(text, sizeof text, "%s%s", START, line);
        put(dir, name, text);
    }
    put(dir, "scope.log",
        START "{\"type\":\"scope_begin\",\"ts_ns\":12,\"tid\":1,\"id\":12,\"parent\":0,"
              "\"depth\":0,\"name\":\"p\"}\n" END);
    put(dir, "device.log",
        "{\"type\":\"session_start\",\"ts_ns\":100,\"channel\":\"device\"}\n"
        "{\"type\":\"session_end\",\"ts_ns\":950,\"lines\":1,\"lost\":2}\n");
    put(dir, "session.json", "{\"not\": \"a log\"}");
    put(dir, "scope.x.log", "garbage");
    put(dir, "notes.txt", "garbage");
    char err[1024];
    gpufl__event_source *s;
    assert_int_equal(gpufl__source_open(dir, &s, err, sizeof err), 0);
    const gfl_event *ev;
    uint64_t expect = 1;
    int rc;
    while ((rc = gpufl__source_next(s, &ev)) == 1)
        assert_int_equal(ev->u.scope.id, expect++);
    assert_int_equal(rc, 0);
    assert_int_equal(expect, 13);
    assert_true(s->meta.ended);
    assert_int_equal(s->meta.end_ns, 950);
    assert_int_equal(s->meta.lost[GFL_CHANNEL_DEVICE], 2);
    assert_int_equal(s->meta.lost[GFL_CHANNEL_SCOPE], 4);
    gpufl__source_close(s);
    /* damage in a part names that part */
    put(dir, "scope.3.log", START "{oops}\n");
    assert_int_equal(gpufl__source_open(dir, &s, err, sizeof err), 0);
    while ((rc = gpufl__source_next(s, &ev)) == 1)
        ;
    assert_int_equal(rc, GPUFL_ECORRUPT);
    assert_non_null(strstr(s->err, "scope.3.log:2: "));
    gpufl__source_close(s);
    /* a directory with no logs is not a session */
    char *empty = tu_mkdtemp("ndjson-empty");
    assert_int_equal(gpufl__source_open(empty, &s, err, sizeof err), GPUFL_ENOTFOUND);
    assert_non_null(strstr(err, "not a gpufl session"));
    assert_int_equal(gpufl__source_open("/nonexistent/gpufl", &s, err, sizeof err), GPUFL_ENOTFOUND);
    tu_rm_rf(empty);
    free(empty);
    tu_rm_rf(dir);
    free(dir);
}

/* ---- the scanner ---------------------------------------------------------- */

static void test_scanner_values(void **state)
{
    (void)state;
    char out[64];
    static const char esc[] = "a\\\"b\\\\c\\/\\n\\t\\u00e9";
    assert_int_equal(gpufl__json_unescape(esc, sizeof esc - 1, out), 10);
    assert_memory_equal(out, "a\"b\\c/\n\t\xc3\xa9", 10);
    assert_int_equal(gpufl__json_unescape("\\ud83d\\ude00", 12, out), 4); /* a surrogate pair */
    assert_memory_equal(out, "\xf0\x9f\x98\x80", 4);
    assert_int_equal(gpufl__json_unescape("\\ud83d", 6, out), 3); /* a lone one: U+FFFD */
    assert_memory_equal(out, "\xef\xbf\xbd", 3);
    assert_int_equal(gpufl__json_unescape("\\q", 2, out), -1);
    assert_int_equal(gpufl__json_unescape("\\", 1, out), -1);
    uint64_t v;
    assert_int_equal(gpufl__json_fixed("12.34", 5, 2, &v), 0);
    assert_int_equal(v, 1234);
    assert_int_equal(gpufl__json_fixed("0.0005", 6, 4, &v), 0);
    assert_int_equal(v, 5);
    assert_int_equal(gpufl__json_fixed("1", 1, 4, &v), 0);
    assert_int_equal(v, 10000);
    assert_int_equal(gpufl__json_fixed("0.33335", 7, 4, &v), 0); /* rounds */
    assert_int_equal(v, 3334);
    assert_int_equal(gpufl__json_fixed("1e3", 3, 2, &v), -1);
    assert_int_equal(gpufl__json_fixed("1.", 2, 2, &v), -1);
    assert_int_equal(gpufl__json_u64("18446744073709551615", 20, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(gpufl__json_u64("18446744073709551616", 20, &v), -1);
    assert_int_equal(gpufl__json_u64("01", 2, &v), -1);
    int64_t i;
    assert_int_equal(gpufl__json_i64("-9223372036854775808", 20, &i), 0);
    assert_true(i == INT64_MIN);
    assert_int_equal(gpufl__json_hex("0x7f00ab", 8, &v), 0);
    assert_int_equal(v, 0x7f00ab);
    assert_int_equal(gpufl__json_hex("0x", 2, &v), -1);
    gpufl__jfield f[4];
    const char *why;
    size_t at;
    assert_int_equal(gpufl__json_fields("{}", 2, f, 4, &why, &at), 0);
    static const char spaced[] = " { \"a\" : 1 , \"b\":[ ] } ";
    assert_int_equal(gpufl__json_fields(spaced, sizeof spaced - 1, f, 4, &why, &at), 2);
    assert_int_equal(gpufl__json_fields("{\"a\":1,\"b\":2,\"c\":3}", 19, f, 2, &why, &at), -1);
    assert_string_equal(why, "too many fields");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_roundtrip),
        cmocka_unit_test(test_absent_fields),
        cmocka_unit_test(test_session_lines),
        cmocka_unit_test(test_newer_writer),
        cmocka_unit_test(test_damaged_lines),
        cmocka_unit_test(test_torn_last_line),
        cmocka_unit_test(test_directory),
        cmocka_unit_test(test_scanner_values),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
