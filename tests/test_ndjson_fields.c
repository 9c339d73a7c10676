/*
 * The NDJSON field table (src/format/ndjson_fields.h) against what is
 * written. Event lines are written from the table itself, so for them this
 * checks that every row is written when its `when` holds, in the table's
 * order, and read back: a line of every type with every field set, parsed
 * by the reader and formatted again, gives the same bytes. Session lines
 * are written by hand (sink/ndjson_meta.c, from the live session rather
 * than the reader's struct): their keys must be the table's, in order, or
 * this fails.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "core/session_meta.h"
#include "format/ndjson_fields.h"
#include "format/ndjson_format.h"
#include "read/json_scan.h"
#include "read/ndjson_parse.h"
#include "read/strtab.h"
#include "sink/ndjson_meta.h"

#define MAX_KEYS 64

typedef struct keys {
    const char *k[MAX_KEYS];
    int n;
} keys;

/* The keys of line (newline included) in order, "type" first. */
static void line_keys(const char *line, size_t len, char out[MAX_KEYS][48], int *n)
{
    gpufl__jfield f[GFL_JSON_MAX_FIELDS];
    const char *why;
    size_t at;
    *n = gpufl__json_fields(line, len - 1, f, GFL_JSON_MAX_FIELDS, &why, &at);
    assert_true(*n > 0 && *n <= MAX_KEYS);
    for (int i = 0; i < *n; i++)
        snprintf(out[i], 48, "%.*s", (int)f[i].key_len, f[i].key);
}

static void assert_keys(const char *line, size_t len, const keys *want)
{
    char got[MAX_KEYS][48];
    int n;
    line_keys(line, len, got, &n);
    assert_string_equal(got[0], "type");
    for (int i = 1; i < n && i - 1 < want->n; i++)
        if (strcmp(got[i], want->k[i - 1]) != 0)
            fail_msg("%.*s: key %d is \"%s\", the table says \"%s\"", (int)len - 1, line, i, got[i], want->k[i - 1]);
    if (n - 1 != want->n)
        fail_msg("%.*s: %d keys after \"type\", the table has %d", (int)len - 1, line, n - 1, want->n);
}

/* ---- session lines: written by hand, held to the table ------------------- */

#define ALL_KEYS(key, m, kind, arg, when) w.k[w.n++] = #key;

static gpufl__session_meta meta(void)
{
    gpufl__session_meta s;
    memset(&s, 0, sizeof s);
    s.session_id = "s1";
    s.app_name = "app";
    s.host = "host";
    s.gpufl_version = "1.0";
    s.pid = 42;
    s.start_ns = 1;
    s.start_wall_ns = 2;
    s.format_version = 3;
    return s;
}

static void test_session_start_keys(void **state)
{
    (void)state;
    char buf[GFL_NDJSON_META_BOUND];
    gpufl__session_meta s = meta();
    size_t n = gpufl__ndjson_session_start(buf, &s, "device", 2);
    keys w = {0};
    GFL_NDJSON_SESSION_START(ALL_KEYS)
    assert_keys(buf, n, &w);
}

static void test_session_end_keys(void **state)
{
    (void)state;
    char buf[GFL_NDJSON_META_BOUND];
    gpufl__session_meta s = meta();
    uint64_t dropped[GFL_DROP_REASON_COUNT] = {0};
    size_t n = gpufl__ndjson_session_end(buf, &s, 5, 6, 7, 8, dropped);
    keys w = {0};
    GFL_NDJSON_SESSION_END(ALL_KEYS)
    assert_keys(buf, n, &w);
    /* without the final counts, "dropped" (the last row) is left out */
    n = gpufl__ndjson_session_end(buf, &s, 5, 6, 7, 8, NULL);
    assert_string_equal(w.k[w.n - 1], "dropped");
    w.n--;
    assert_keys(buf, n, &w);
}

static void test_log_stopped_keys(void **state)
{
    (void)state;
    char buf[GFL_NDJSON_META_BOUND];
    size_t n = gpufl__ndjson_log_stopped(buf, 9, "disk_full", "no space");
    keys w = {0};
    GFL_NDJSON_LOG_STOPPED(ALL_KEYS)
    assert_keys(buf, n, &w);
}

/* ---- event lines: written from the table, read back ---------------------- */

static const char *fixed_text(const void *ctx, uint32_t id, uint32_t *len)
{
    (void)ctx;
    static char text[16][16];
    snprintf(text[id % 16], sizeof text[0], "s%u", id);
    *len = (uint32_t)strlen(text[id % 16]);
    return text[id % 16];
}
static const gpufl__string_lookup numbered = {fixed_text, NULL};

/* Every field set, enum values and bit sets kept in range, so that every
 * `when` that can hold does. */
static void fill(gfl_event *ev, uint8_t type, uint8_t salt)
{
    memset(ev, 0, sizeof *ev);
    uint8_t *b = (uint8_t *)&ev->u;
    for (size_t i = 0; i < sizeof ev->u; i++)
        b[i] = (uint8_t)(i * 7 + salt) | 1;
    ev->h.type = type;
    ev->h.ts = 1000;
    ev->h.tid = 7;
    ev->h.device = 1;
    ev->h.flags = 0;
    switch (type) {
    case GFL_EV_SCOPE_END: ev->h.flags = GFL_F_SCOPE_IMPLICIT; break;
    case GFL_EV_HOST_METRICS: ev->u.host.valid = ~0u; break;
    case GFL_EV_DEVICE_METRICS:
        ev->u.dev.valid = ~0u;
        ev->u.dev.throttle_reasons &= (1ull << GFL_THROTTLE_REASON_COUNT) - 1;
        break;
    case GFL_EV_KERNEL: ev->u.kernel.limiter %= GFL_LIMIT_COUNT; break;
    case GFL_EV_MEMCPY:
        ev->u.memcpy.copy_kind = GFL_COPY_PTOP;
        ev->u.memcpy.src_kind %= GFL_MEM_KIND_COUNT;
        ev->u.memcpy.dst_kind %= GFL_MEM_KIND_COUNT;
        break;
    case GFL_EV_MEMSET: ev->u.memset.mem_kind %= GFL_MEM_KIND_COUNT; break;
    case GFL_EV_SYNC: ev->u.sync.sync_kind %= GFL_SYNC_KIND_COUNT; break;
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE:
        ev->u.mem.mem_kind %= GFL_MEM_KIND_COUNT;
        ev->u.mem.is_async = 1;
        if (type == GFL_EV_MEM_ALLOC && salt % 2)
            ev->h.flags = GFL_F_MEM_FAILED;
        break;
    case GFL_EV_DROPPED:
        ev->u.dropped.reason %= GFL_DROP_REASON_COUNT;
        ev->u.dropped.channel %= GFL_CHANNEL_COUNT;
        break;
    case GFL_EV_LOG: ev->u.log.level = GFL_LOG_ERROR; break;
    case GFL_EV_DEVICE_INFO:
        ev->u.info.cc_major = 9;
        ev->u.info.cc_minor = 0;
        ev->u.info.cuda_driver_version = 13020;
        break;
    case GFL_EV_STACK:
    case GFL_EV_CRASH_STACK:
        ev->u.stack.count = 3;
        ev->u.stack.truncated = 1;
        for (unsigned i = 0; i < 3; i++)
            ev->u.stack.frames[i].module = i; /* frame 0 without a module: null */
        break;
    case GFL_EV_CRASH:
        ev->u.crash.signal = 11;
        ev->u.crash.code = 1;
        ev->u.crash.action %= GFL_CRASH_ACTION_COUNT;
        ev->u.crash.stack_truncated = 1;
        ev->h.flags = GFL_F_CRASH_NO_UNWIND;
        break;
    case GFL_EV_TRIGGER: ev->u.trigger.outcome %= GFL_TRIGGER_OUTCOME_COUNT; break;
    }
}

#define KEY_IF(key, member, kind, arg, when)                                                                           \
    if (GFL_NDJ_IF_##when(ev, ev->member, arg))                                                                        \
        w->k[w->n++] = #key;
#define TABLE_KEYS(type, fields, valid)                                                                                \
    case type: fields(KEY_IF) break;

/* The keys the table says ev's line has. */
static void table_keys(const gfl_event *ev, keys *w)
{
    w->n = 0;
    switch (ev->h.type) {
        GFL_NDJSON_EVENT_LINES(TABLE_KEYS)
    default: fail_msg("type %u is not in the table", ev->h.type);
    }
}

static void test_event_lines(void **state)
{
    (void)state;
    for (uint8_t type = 1; type < GFL_EV_TYPE_COUNT; type++) {
        for (uint8_t salt = 0; salt < 3 && strcmp(gpufl__event_type_name(type), "unknown"); salt++) {
            gfl_event ev;
            fill(&ev, type, salt);
            char *buf = malloc(gpufl__ndjson_bound(&ev, &numbered));
            assert_non_null(buf);
            size_t n = gpufl__ndjson_format(&ev, &numbered, buf);
            keys w;
            table_keys(&ev, &w);
            assert_keys(buf, n, &w);

            /* read back and written again: the same bytes */
            gpufl__strtab names;
            assert_int_equal(gpufl__strtab_init(&names), 0);
            gpufl__ndjson_parser p;
            gpufl__ndjson_parser_init(&p, &names);
            gfl_event back;
            gpufl__meta_line m;
            char why[256] = "";
            int rc = gpufl__ndjson_parse_line(&p, buf, n - 1, &back, &m, why, sizeof why);
            if (rc != GFL_LINE_EVENT)
                fail_msg("%.*s: %d %s", (int)n - 1, buf, rc, why);
            gpufl__string_lookup read_names = gpufl__strtab_lookup(&names);
            char *again = malloc(gpufl__ndjson_bound(&back, &read_names));
            assert_non_null(again);
            size_t n2 = gpufl__ndjson_format(&back, &read_names, again);
            if (n2 != n || memcmp(buf, again, n) != 0)
                fail_msg("written %.*s\nread back as %.*s", (int)n - 1, buf, (int)n2 - 1, again);
            free(again);
            gpufl__ndjson_parser_free(&p);
            gpufl__strtab_free(&names);
            free(buf);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_start_keys),
        cmocka_unit_test(test_session_end_keys),
        cmocka_unit_test(test_log_stopped_keys),
        cmocka_unit_test(test_event_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
