/*
 * The uploader (src/upload, docs/UPLOAD.md) against a test server
 * (support/upload_server.c) that stores each place of each channel and
 * counts how often it was sent.
 *
 * Why: an upload must deliver every event of a session exactly as the
 * readers read it, each place once, and survive what networks do (a
 * connection cut in a body, an answer lost, a server away for a while, a
 * batch too large, a database that forgot the session) without sending
 * an event twice where the cursor says it arrived; a refused key stops
 * everything and never appears in a message. Sessions are recorded for
 * real with the synthetic device plugin, as compact (device work only in
 * trace.gflt) and as NDJSON; what the server stores is compared line by
 * line with the session's own logs, and for trace.gflt with its events
 * formatted by the NDJSON writer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/ndjson_format.h"
#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "test_util.h"
#include "upload_server.h"

#define KEY "test-key-5f3a9c0d7e"
#define SCRIPT "kernels=400,copies=40,memsets=10,syncs=10,allocs=10,metrics=5,devices=1,streams=2,threads=1,pace=1"

static const char *const channels[] = {"device", "scope", "system"};

typedef struct fx {
    char *logs;
    char *dir; /* the one session */
    upload_server *srv;
} fx;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Records one session with device work in `format`. */
static char *record(const char *logs, gpufl_log_format format)
{
    tu_setenv("GPUFL_SYNTHETIC", SCRIPT);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "up";
    o.log_path = logs;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_SYNTHETIC_PLUGIN;
    o.log_format = format;
    o.ring_events = 1u << 18;
    o.system_sample_rate_ms = 5;
    o.continuous_system_sampling = true;
    assert_true(gpufl_init(&o));
    for (int i = 0; i < 30; i++) {
        gpufl_scope s = gpufl_scope_begin(i % 2 ? "odd \"step\"" : "even");
        sleep_ms(1);
        gpufl_scope_end(s);
    }
    gpufl_shutdown();
    char *dir = strdup(gpufl_session_dir());
    assert_true(dir[0] != 0);
    return dir;
}

/* A session recorded in `format` and a test server, into *state. */
static int setup_as(void **state, gpufl_log_format format)
{
    fx *f = calloc(1, sizeof *f);
    f->logs = tu_mkdtemp("upload");
    f->dir = record(f->logs, format);
    f->srv = us_start(KEY);
    *state = f;
    return 0;
}

static int setup_compact(void **state) { return setup_as(state, GPUFL_LOG_COMPACT); }

static int setup_ndjson(void **state) { return setup_as(state, GPUFL_LOG_NDJSON); }

static int teardown(void **state)
{
    fx *f = *state;
    us_stop(f->srv);
    tu_rm_rf(f->logs);
    free(f->logs);
    free(f->dir);
    free(f);
    unsetenv("GPUFL_DISABLED");
    return 0;
}

static gpufl_upload_options opts_for(const fx *f)
{
    gpufl_upload_options o;
    gpufl_upload_options_init(&o);
    o.log_path = f->dir;
    o.backend_url = us_url(f->srv);
    o.api_key = KEY;
    o.retry_delay_ms = 10;
    o.total_timeout_ms = 60000;
    return o;
}

static const char *session_id(const fx *f)
{
    const char *s = strrchr(f->dir, '/');
    return s + 1;
}

/* The event lines of a channel as the session's reader gives them, each
 * formatted by the NDJSON writer: what the server must hold. */
typedef struct lines {
    char **l;
    size_t n;
} lines;

static void lines_free(lines *ls)
{
    for (size_t i = 0; i < ls->n; i++)
        free(ls->l[i]);
    free(ls->l);
    memset(ls, 0, sizeof *ls);
}

static void push(lines *ls, const char *text, size_t n)
{
    ls->l = realloc(ls->l, (ls->n + 1) * sizeof *ls->l);
    ls->l[ls->n++] = strndup(text, n);
}

static void expected_from_source(const char *path, lines out[3])
{
    gpufl__event_source *src;
    char err[1024];
    assert_int_equal(gpufl__source_open(path, &src, err, sizeof err), 0);
    const gfl_event *ev;
    char *buf = NULL;
    while (gpufl__source_next(src, &ev) == 1) {
        buf = realloc(buf, gpufl__ndjson_bound(ev, &src->strings));
        size_t n = gpufl__ndjson_format(ev, &src->strings, buf);
        push(&out[gpufl__event_route(ev)], buf, n - 1); /* without the '\n' */
    }
    free(buf);
    gpufl__source_close(src);
}

/* A log's lines without the session lines (session_start, log_stopped,
 * session_end: not events, docs/UPLOAD.md). */
static void expected_from_log(const char *dir, const char *channel, lines *out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.log", dir, channel);
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    for (char *l = text; *l;) {
        char *e = strchr(l, '\n');
        assert_non_null(e);
        *e = 0;
        if (!strstr(l, "\"type\":\"session_start\"") && !strstr(l, "\"type\":\"log_stopped\"") &&
            !strstr(l, "\"type\":\"session_end\""))
            push(out, l, (size_t)(e - l));
        l = e + 1;
    }
    free(text);
}

/* The server holds exactly `want` for the channel, each place sent
 * `times` times (0: any number, at least once); returns the sends. */
static size_t check_channel(fx *f, const char *channel, const lines *want, int times)
{
    assert_int_equal(us_places(f->srv, session_id(f), channel), want->n);
    size_t sends = 0;
    for (size_t i = 0; i < want->n; i++) {
        int sent;
        const char *got = us_line(f->srv, session_id(f), channel, i, &sent);
        if (!got || strcmp(got, want->l[i]) != 0)
            fail_msg("%s place %zu: got %s, want %s", channel, i, got ? got : "(nothing)", want->l[i]);
        if (times)
            assert_int_equal(sent, times);
        assert_true(sent >= 1);
        sends += (size_t)sent;
    }
    return sends;
}

static void check_all_ndjson(fx *f, int times)
{
    for (int c = 0; c < 3; c++) {
        lines l = {0};
        expected_from_log(f->dir, channels[c], &l);
        assert_true(l.n > 0);
        check_channel(f, channels[c], &l, times);
        lines_free(&l);
    }
}

static json_t *cursor_json(const fx *f)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.gpufl-upload-cursor.json", f->dir);
    json_error_t e;
    return json_load_file(path, 0, &e);
}

/* ---- the happy paths ------------------------------------------------------- */

static void test_ndjson_session_arrives_whole(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    o.batch_events = 300;
    gpufl_upload_result r = {.struct_size = sizeof r};
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    assert_int_equal(r.sessions_processed, 1);
    assert_int_equal(r.sessions_failed, 0);
    check_all_ndjson(f, 1);
    size_t total = 0;
    for (int c = 0; c < 3; c++)
        total += us_places(f->srv, session_id(f), channels[c]);
    assert_int_equal(r.events_uploaded, total);
    assert_int_equal(r.events_duplicate, 0);
    assert_true(r.bytes_uploaded > 0);
    /* every request: the key as a bearer token, gzip; batches in place order */
    size_t n = us_nrequests(f->srv), batches = 0;
    uint64_t next[3] = {0};
    for (size_t i = 0; i < n; i++) {
        char v[512];
        assert_string_equal(us_header(f->srv, i, "Authorization", v, sizeof v), "Bearer " KEY);
        const us_request *q = us_request_at(f->srv, i);
        /* gzip where the contract allows it; session-complete as plain JSON */
        assert_string_equal(us_header(f->srv, i, "Content-Encoding", v, sizeof v),
                            strcmp(q->path, "/api/v1/events/session-complete") ? "gzip" : "");
        assert_int_equal(q->status, 200);
        if (!strcmp(q->path, "/api/v1/events/stream")) {
            batches++;
            us_header(f->srv, i, "X-Gpufl-Channel", v, sizeof v);
            int c = !strcmp(v, "device") ? 0 : !strcmp(v, "scope") ? 1 : 2;
            assert_int_equal(strtoull(us_header(f->srv, i, "X-Gpufl-First-Seq", v, sizeof v), NULL, 10), next[c]);
            size_t nl = 0;
            for (size_t k = 0; k < q->body_len; k++)
                nl += q->body[k] == '\n';
            assert_true(nl <= 300);
            next[c] += nl;
            assert_string_equal(us_header(f->srv, i, "X-GpuFlight-Session-Id", v, sizeof v), session_id(f));
        }
    }
    assert_true(batches >= 3);
    assert_string_equal(us_request_at(f->srv, 0)->path, "/api/v1/sessions");
    assert_string_equal(us_request_at(f->srv, n - 1)->path, "/api/v1/events/session-complete");
    /* the cursor: every place, this server, complete */
    json_t *c = cursor_json(f);
    assert_non_null(c);
    assert_true(json_is_true(json_object_get(c, "complete")));
    char server[128];
    snprintf(server, sizeof server, "%s/api/v1", us_url(f->srv));
    assert_string_equal(json_string_value(json_object_get(c, "server")), server);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(c, "events"), "device")), next[0]);
    char *text = json_dumps(c, 0);
    assert_null(strstr(text, KEY));
    free(text);
    json_decref(c);
    /* again: nothing new, nothing sent */
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    assert_int_equal(r.events_uploaded, 0);
    assert_int_equal(us_nrequests(f->srv), n);
    /* force: everything again, stored once, counted as duplicates */
    o.force = true;
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_int_equal(r.events_duplicate, total);
    check_all_ndjson(f, 2);
}

static void test_compact_session_device_work_from_trace(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    gpufl_upload_result r = {.struct_size = sizeof r};
    char dev[4200];
    snprintf(dev, sizeof dev, "%s/device.log", f->dir);
    assert_false(tu_exists(dev)); /* compact: device work is only in trace.gflt */
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    lines want[3] = {0};
    char gflt[4200];
    snprintf(gflt, sizeof gflt, "%s/trace.gflt", f->dir);
    expected_from_source(gflt, want);
    assert_true(want[0].n >= 400 + 40 + 10);
    check_channel(f, "device", &want[0], 1);
    size_t kernels = 0;
    for (size_t i = 0; i < want[0].n; i++)
        kernels += strstr(want[0].l[i], "\"type\":\"kernel\"") != NULL;
    assert_int_equal(kernels, 400);
    /* the scope and system channels: the same lines as their logs */
    for (int c = 1; c < 3; c++) {
        lines l = {0};
        expected_from_log(f->dir, channels[c], &l);
        check_channel(f, channels[c], &l, 1);
        lines_free(&l);
        lines_free(&want[c]);
    }
    lines_free(&want[0]);
}

/* ---- failures on the way --------------------------------------------------- */

static size_t count_path(fx *f, const char *path)
{
    size_t n = 0;
    for (size_t i = 0; i < us_nrequests(f->srv); i++)
        n += !strcmp(us_request_at(f->srv, i)->path, path);
    return n;
}

static size_t all_places(fx *f, size_t *sends)
{
    size_t places = 0;
    *sends = 0;
    for (int c = 0; c < 3; c++) {
        lines l = {0};
        expected_from_log(f->dir, channels[c], &l);
        *sends += check_channel(f, channels[c], &l, 0);
        places += l.n;
        lines_free(&l);
    }
    return places;
}

static void test_cut_body_and_lost_answer(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    o.batch_events = 100;
    us_script(f->srv, "/events/stream", 1, US_CUT_BODY, 0);
    us_script(f->srv, "/events/stream", 3, US_STORE_AND_CUT, 0);
    gpufl_upload_result r = {.struct_size = sizeof r};
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    /* the cut body was not stored and was sent again; the batch whose
     * answer was lost was stored, sent again, and stored once */
    assert_int_equal(r.events_duplicate, 100);
    size_t sends, places = all_places(f, &sends);
    assert_int_equal(sends, places + 100);
    assert_int_equal(r.warning_count, 2); /* one retry each */
    assert_non_null(strstr(r.warnings[0], "trying again"));
}

static void test_interrupted_upload_resumes_from_cursor(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    o.batch_events = 100;
    o.max_retries = 0;
    /* the fourth batch finds the server away and, without retries, the
     * upload stops there */
    us_script(f->srv, "/events/stream", 3, US_STATUS, 503);
    gpufl_upload_result r = {.struct_size = sizeof r};
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EIO);
    assert_false(r.success);
    assert_int_equal(r.sessions_failed, 1);
    assert_int_equal(r.events_uploaded, 300);
    assert_non_null(strstr(gpufl_last_error(), "503"));
    json_t *c = cursor_json(f);
    assert_non_null(c);
    json_t *ev = json_object_get(c, "events");
    assert_int_equal(json_integer_value(json_object_get(ev, "device")) +
                         json_integer_value(json_object_get(ev, "scope")) +
                         json_integer_value(json_object_get(ev, "system")),
                     300);
    assert_false(json_is_true(json_object_get(c, "complete")));
    json_decref(c);
    size_t before = us_nrequests(f->srv);
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    /* the second upload began where the cursor stood: every place sent once */
    size_t sends, places = all_places(f, &sends);
    assert_int_equal(sends, places);
    assert_int_equal(r.events_uploaded, places - 300);
    assert_int_equal(r.events_duplicate, 0);
    assert_string_equal(us_request_at(f->srv, before)->path, "/api/v1/sessions"); /* announced again */
}

static char warned[64][1024];
static size_t nwarned;
static void on_warning(const char *m, void *arg)
{
    (void)arg;
    if (nwarned < 64)
        snprintf(warned[nwarned++], sizeof warned[0], "%s", m);
}

static void test_refused_key_stops_everything(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    o.api_key = "wrong-key-" KEY;
    o.on_warning = on_warning;
    nwarned = 0;
    gpufl_upload_result r = {.struct_size = sizeof r};
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EIO);
    assert_false(r.success);
    assert_int_equal(r.events_uploaded, 0);
    assert_int_equal(us_nrequests(f->srv), 1); /* nothing after the 401 */
    assert_non_null(strstr(gpufl_last_error(), "401"));
    assert_non_null(strstr(gpufl_last_error(), "API key was refused"));
    assert_null(strstr(gpufl_last_error(), KEY));
    assert_true(nwarned >= 1);
    for (size_t i = 0; i < nwarned; i++)
        assert_null(strstr(warned[i], KEY));
    for (uint32_t i = 0; i < r.warning_count && i < GPUFL_UPLOAD_WARNINGS_KEPT; i++)
        assert_null(strstr(r.warnings[i], KEY));
    /* a 401 in the middle stops too, past the retries of nothing */
    us_script(f->srv, "/events/stream", 1, US_STATUS, 401);
    o.api_key = KEY;
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EIO);
    assert_int_equal(count_path(f, "/api/v1/events/session-complete"), 0);
}

static void test_too_large_halves_the_batch(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    o.batch_events = 64;
    us_max_lines(f->srv, 20);
    gpufl_upload_result r = {.struct_size = sizeof r};
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    size_t sends, places = all_places(f, &sends);
    assert_int_equal(sends, places);
    size_t n413 = 0, biggest_ok = 0;
    for (size_t i = 0; i < us_nrequests(f->srv); i++) {
        const us_request *q = us_request_at(f->srv, i);
        if (strcmp(q->path, "/api/v1/events/stream") != 0)
            continue;
        size_t nl = 0;
        for (size_t k = 0; k < q->body_len; k++)
            nl += q->body[k] == '\n';
        if (q->status == 413)
            n413++;
        else if (nl > biggest_ok)
            biggest_ok = nl;
    }
    assert_true(n413 >= 2); /* 64 -> 32 -> 16 */
    assert_true(biggest_ok >= 10 && biggest_ok <= 20);
}

static void test_5xx_retried_with_backoff(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    o.retry_delay_ms = 100;
    us_script(f->srv, "/events/stream", 0, US_STATUS, 503);
    us_script(f->srv, "/events/stream", 1, US_STATUS, 502);
    gpufl_upload_result r = {.struct_size = sizeof r};
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    uint64_t t[3];
    size_t k = 0;
    for (size_t i = 0; i < us_nrequests(f->srv) && k < 3; i++)
        if (!strcmp(us_request_at(f->srv, i)->path, "/api/v1/events/stream"))
            t[k++] = us_request_at(f->srv, i)->t_ns;
    assert_int_equal(k, 3);
    assert_true(t[1] - t[0] >= 100000000u); /* 0.1 s, then twice that */
    assert_true(t[2] - t[1] >= 200000000u);
    size_t sends, places = all_places(f, &sends);
    assert_int_equal(sends, places);
    /* and the retries end */
    o.max_retries = 2;
    o.force = true;
    for (size_t i = 0; i < 3; i++)
        us_script(f->srv, "/sessions", i, US_STATUS, 500);
    size_t before = us_nrequests(f->srv);
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EIO);
    assert_int_equal(us_nrequests(f->srv) - before, 3);
    assert_non_null(strstr(gpufl_last_error(), "gave up after 3 tries"));
}

static void test_unknown_session_is_announced_again(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    o.batch_events = 200;
    us_script(f->srv, "/events/stream", 1, US_STATUS, 404);
    gpufl_upload_result r = {.struct_size = sizeof r};
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    assert_int_equal(count_path(f, "/api/v1/sessions"), 2);
    const char *seq[] = {"/api/v1/sessions", "/api/v1/events/stream", "/api/v1/events/stream", "/api/v1/sessions",
                         "/api/v1/events/stream"};
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(us_request_at(f->srv, i)->path, seq[i]);
    size_t sends, places = all_places(f, &sends);
    assert_int_equal(sends, places);
}

static void test_disabled_is_a_no_op(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    o.backend_url = "http://127.0.0.1:1"; /* nothing listens: a request would fail */
    tu_setenv("GPUFL_DISABLED", "1");
    gpufl_upload_result r = {.struct_size = sizeof r};
    r.events_uploaded = 99;
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    assert_int_equal(r.events_uploaded, 0);
    assert_int_equal(r.sessions_processed, 0);
    unsetenv("GPUFL_DISABLED");
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EIO); /* control: enabled, it tries */
    assert_false(r.success);
}

/* ---- bad options and bad sessions ------------------------------------------ */

static void test_bad_options(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    gpufl_upload_result r = {.struct_size = sizeof r};
    unsetenv("GPUFL_BACKEND_URL");
    unsetenv("GPUFL_API_KEY");
    o.backend_url = NULL;
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EINVAL);
    assert_non_null(strstr(gpufl_last_error(), "backend_url"));
    o.backend_url = "ftp://user:secret@host/";
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EINVAL);
    assert_non_null(strstr(gpufl_last_error(), "not http"));
    assert_null(strstr(gpufl_last_error(), "secret"));
    o.backend_url = us_url(f->srv);
    o.api_key = "";
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EINVAL);
    assert_non_null(strstr(gpufl_last_error(), "api_key"));
    o.api_key = KEY "\n";
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EINVAL);
    assert_null(strstr(gpufl_last_error(), KEY));
    /* the environment fills what is not given */
    tu_setenv("GPUFL_API_KEY", KEY);
    o.api_key = NULL;
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    unsetenv("GPUFL_API_KEY");
    assert_int_equal(us_nrequests(f->srv) > 0, 1);
    /* a struct_size of 0: not set up */
    o.struct_size = 0;
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_EINVAL);
    assert_int_equal(gpufl_upload_logs(NULL, &r), GPUFL_EINVAL); /* no backend_url anywhere */
}

static void write_at(const char *dir, const char *name, const char *text)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    tu_write_file(p, text);
}

static void test_damaged_sessions_are_named(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    gpufl_upload_result r = {.struct_size = sizeof r};
    char p[4200];
    /* session.json that is not JSON */
    char *bad = tu_mkdtemp_in(f->logs, "bad-json");
    write_at(bad, "session.json", "{\"session_id\": ");
    write_at(bad, "scope.log", "");
    o.log_path = bad;
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_ECORRUPT);
    snprintf(p, sizeof p, "%s/session.json", bad);
    assert_non_null(strstr(gpufl_last_error(), p));
    assert_int_equal(us_nrequests(f->srv), 0);
    /* a session id that would break a header */
    write_at(bad, "session.json", "{\"session_id\": \"x\\r\\nX-Evil: 1\"}");
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_ECORRUPT);
    assert_non_null(strstr(gpufl_last_error(), "session_id"));
    assert_int_equal(us_nrequests(f->srv), 0);
    /* a trace.gflt that is not one */
    char *gf = tu_mkdtemp_in(f->logs, "bad-gflt");
    write_at(gf, "session.json", "{\"session_id\": \"up-bad-gflt\"}");
    write_at(gf, "trace.gflt", "GFLT but not really a trace at all, just text long enough to look like a header");
    o.log_path = gf;
    assert_int_not_equal(gpufl_upload_logs(&o, &r), 0);
    assert_false(r.success);
    assert_non_null(strstr(gpufl_last_error(), "trace.gflt"));
    /* a FIFO where session.json should be: named, never waited on */
    char *fifo = tu_mkdtemp_in(f->logs, "fifo");
    snprintf(p, sizeof p, "%s/session.json", fifo);
    assert_int_equal(mkfifo(p, 0600), 0);
    write_at(fifo, "scope.log", "");
    o.log_path = fifo;
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_ENOTFOUND);
    assert_non_null(strstr(gpufl_last_error(), p));
    assert_non_null(strstr(gpufl_last_error(), "not a regular file"));
    free(fifo);
    /* a directory with no session, and a path that is not there */
    char *empty = tu_mkdtemp_in(f->logs, "empty");
    o.log_path = empty;
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_ENOTFOUND);
    assert_non_null(strstr(gpufl_last_error(), empty));
    o.log_path = "/nonexistent/gpufl-upload";
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_ENOTFOUND);
    assert_non_null(strstr(gpufl_last_error(), "/nonexistent/gpufl-upload"));
    free(bad);
    free(gf);
    free(empty);
}

/* ---- which sessions -------------------------------------------------------- */

static void test_log_path_newest_and_all(void **state)
{
    fx *f = *state;
    /* a second, newer session beside the first */
    sleep_ms(1100);
    free(record(f->logs, GPUFL_LOG_NDJSON));
    gpufl_upload_options o = opts_for(f);
    o.log_path = f->logs;
    gpufl_upload_result r = {.struct_size = sizeof r};
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_int_equal(r.sessions_processed, 1);
    char id[256];
    us_header(f->srv, 1, "X-GpuFlight-Session-Id", id, sizeof id);
    assert_string_not_equal(id, session_id(f)); /* the newest is not the fixture's */
    o.all_sessions = true;
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_int_equal(r.sessions_processed, 2);
    o.all_sessions = false;
    o.session_id = session_id(f);
    o.force = true;
    size_t before = us_nrequests(f->srv);
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_int_equal(r.sessions_processed, 1);
    us_header(f->srv, before + 1, "X-GpuFlight-Session-Id", id, sizeof id);
    assert_string_equal(id, session_id(f));
    o.session_id = "no-such-session";
    assert_int_equal(gpufl_upload_logs(&o, &r), GPUFL_ENOTFOUND);
    assert_non_null(strstr(gpufl_last_error(), "no-such-session"));
}

/* ---- the cursor file -------------------------------------------------------- */

static void test_damaged_or_hostile_cursor(void **state)
{
    fx *f = *state;
    gpufl_upload_options o = opts_for(f);
    gpufl_upload_result r = {.struct_size = sizeof r};
    /* a damaged cursor: a warning naming it, and everything is sent */
    write_at(f->dir, ".gpufl-upload-cursor.json", "{\"format\":\"gpufl-upload-cursor\",\"events\":");
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    assert_int_equal(r.warning_count, 1);
    assert_non_null(strstr(r.warnings[0], ".gpufl-upload-cursor.json"));
    size_t sends, places = all_places(f, &sends);
    assert_int_equal(sends, places);
    assert_int_equal(r.events_uploaded, places);
    /* another server's cursor counts as none: everything again */
    json_t *c = cursor_json(f);
    json_object_set_new(c, "server", json_string("http://elsewhere/api/v1"));
    char p[4200];
    snprintf(p, sizeof p, "%s/.gpufl-upload-cursor.json", f->dir);
    assert_int_equal(json_dump_file(c, p, 0), 0);
    json_decref(c);
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_int_equal(r.events_duplicate, places);
    /* a link planted under the cursor's temporary name is not written
     * through: the upload goes on, warned that it cannot resume */
    char target[4200], tmp[4200];
    snprintf(target, sizeof target, "%s/victim", f->logs);
    tu_write_file(target, "untouched");
    snprintf(tmp, sizeof tmp, "%s/.gpufl-upload-cursor.json.tmp", f->dir);
    assert_int_equal(symlink(target, tmp), 0);
    o.force = true;
    assert_int_equal(gpufl_upload_logs(&o, &r), 0);
    assert_true(r.success);
    assert_true(r.warning_count >= 1);
    assert_non_null(strstr(r.warnings[0], "cannot write the upload cursor"));
    size_t len;
    char *text = tu_read_file(target, &len);
    assert_string_equal(text, "untouched");
    free(text);
}

/* ---- the command ------------------------------------------------------------ */

static void test_cli_upload(void **state)
{
    fx *f = *state;
    char keyfile[4200];
    snprintf(keyfile, sizeof keyfile, "%s/key", f->logs);
    tu_write_file(keyfile, KEY "\n");
    const char *argv[] = {GFL_CLI, "upload", "--backend-url", us_url(f->srv), "--api-key-file", keyfile, f->dir, NULL};
    char *out, *err;
    assert_int_equal(tu_run(argv, &out, &err), 0);
    size_t total = 0;
    for (int c = 0; c < 3; c++)
        total += us_places(f->srv, session_id(f), channels[c]);
    char want[128];
    snprintf(want, sizeof want, "gpufl upload: 1 session sent, %zu events uploaded, 0 duplicates, 0 rejected, ", total);
    if (strncmp(out, want, strlen(want)) != 0)
        fail_msg("stdout: %s\nstderr: %s", out, err);
    assert_true(strchr(out, '\n') == out + strlen(out) - 1); /* one line */
    free(out);
    free(err);
    /* a refused key: exit 1, the reason on stderr, the key nowhere */
    tu_write_file(keyfile, "not-the-" KEY "\n");
    const char *force[] = {GFL_CLI, "upload", "--backend-url", us_url(f->srv), "--api-key-file", keyfile, "--force",
                           f->dir,  NULL};
    assert_int_equal(tu_run(force, &out, &err), 1);
    assert_non_null(strstr(err, "401"));
    assert_null(strstr(err, KEY));
    assert_null(strstr(out, KEY));
    assert_non_null(strstr(out, "0 events uploaded"));
    free(out);
    free(err);
    /* the key from the environment */
    tu_setenv("GPUFL_API_KEY", KEY);
    assert_int_equal(tu_run(force, &out, &err), 1); /* the file wins over the environment */
    free(out);
    free(err);
    const char *env[] = {GFL_CLI, "upload", "--backend-url", us_url(f->srv), "--force", f->dir, NULL};
    assert_int_equal(tu_run(env, &out, &err), 0);
    snprintf(want, sizeof want, "%zu duplicates", total);
    assert_non_null(strstr(out, want));
    free(out);
    free(err);
    unsetenv("GPUFL_API_KEY");
    /* usage: 2, with the reason */
    const char *literal[] = {GFL_CLI, "upload", "--api-key", KEY, f->dir, NULL};
    assert_int_equal(tu_run(literal, &out, &err), 2);
    assert_non_null(strstr(err, "visible"));
    free(out);
    free(err);
}

int main(void)
{
    /* the test server is on 127.0.0.1: never through a proxy the environment names */
    tu_setenv("NO_PROXY", "127.0.0.1");
    tu_setenv("no_proxy", "127.0.0.1");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ndjson_session_arrives_whole, setup_ndjson, teardown),
        cmocka_unit_test_setup_teardown(test_compact_session_device_work_from_trace, setup_compact, teardown),
        cmocka_unit_test_setup_teardown(test_cut_body_and_lost_answer, setup_ndjson, teardown),
        cmocka_unit_test_setup_teardown(test_interrupted_upload_resumes_from_cursor, setup_ndjson, teardown),
        cmocka_unit_test_setup_teardown(test_refused_key_stops_everything, setup_compact, teardown),
        cmocka_unit_test_setup_teardown(test_too_large_halves_the_batch, setup_ndjson, teardown),
        cmocka_unit_test_setup_teardown(test_5xx_retried_with_backoff, setup_ndjson, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_session_is_announced_again, setup_ndjson, teardown),
        cmocka_unit_test_setup_teardown(test_disabled_is_a_no_op, setup_compact, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup_compact, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_sessions_are_named, setup_compact, teardown),
        cmocka_unit_test_setup_teardown(test_log_path_newest_and_all, setup_compact, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_or_hostile_cursor, setup_ndjson, teardown),
        cmocka_unit_test_setup_teardown(test_cli_upload, setup_compact, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
