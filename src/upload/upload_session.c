/*
 * Uploading one session (upload.h, docs/UPLOAD.md): announce it with its
 * session.json, read its events once through the project's event source
 * (so a compact session's device work comes from trace.gflt, whichever
 * copy the readers choose), give each event its place in its channel
 * (gpufl__event_route: the log it is written to), format it with the
 * NDJSON writer and send it in batches from the cursor on; then tell the
 * server how many events each channel has.
 *
 * The three channels are batched side by side in one pass over the
 * session: each has its own batch, sent when full, because reading a
 * session is what costs (a .gflt decode) and three passes would triple it.
 * Memory: three batches of at most batch_bytes of text each.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/regular_file.h"
#include "format/json_names.h"
#include "format/ndjson_format.h"
#include "read/event_source.h"
#include "upload/upload.h"
#include "upload/upload_cursor.h"

#define SESSION_JSON_MAX (16u << 20)

/* One channel's batch: lines back to back, and where each ends. */
typedef struct batch {
    gpufl__bytebuf text;
    size_t *ends;
    size_t n, cap;
    uint64_t first; /* the place of line 0 */
} batch;

typedef struct sess {
    gpufl__upload *u;
    const char *dir;
    char id[256];
    char host_header[320]; /* "X-GpuFlight-Hostname: ..." or "" */
    char *json;            /* session.json as read */
    size_t json_len;
    gpufl__upload_cursor cur;
    bool cursor_ok; /* the cursor can be written (a warning once otherwise) */
    uint64_t places[GFL_CHANNEL_COUNT];
    batch b[GFL_CHANNEL_COUNT];
} sess;

static bool id_ok(const char *s)
{
    if (!*s || *s == '.' || strlen(s) > 200)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
              *s == '_' || *s == '-'))
            return false;
    return true;
}

/* session.json read whole (the announcement's body) and its id. */
static int read_session_json(sess *s)
{
    gpufl__upload *u = s->u;
    char path[PATH_MAX + 16], why[256];
    snprintf(path, sizeof path, "%s/session.json", s->dir);
    int fd = gpufl__open_regular(path, why, sizeof why);
    if (fd < 0) {
        gpufl__upload_fail(u, GPUFL_ENOTFOUND, "%s: %s (the session is announced with it)", path, why);
        return GPUFL_ENOTFOUND;
    }
    char *text = NULL;
    size_t len = 0;
    int read_rc = gpufl__read_fd_all(fd, SESSION_JSON_MAX, &text, &len), read_errno = errno;
    close(fd);
    if (read_rc != 0 || len > SESSION_JSON_MAX) {
        gpufl__upload_fail(u, GPUFL_EIO, "%s: %s", path,
                           read_rc != 0 ? strerror(read_errno) : "over 16 MiB: not a session.json");
        free(text);
        return GPUFL_EIO;
    }
    json_error_t jerr;
    json_t *j = json_loadb(text, len, 0, &jerr);
    const char *id = json_string_value(json_object_get(j, "session_id"));
    const char *host = json_string_value(json_object_get(j, "host"));
    int rc = 0;
    if (!j) {
        gpufl__upload_fail(u, GPUFL_ECORRUPT, "%s: not JSON (line %d: %s)", path, jerr.line, jerr.text);
        rc = GPUFL_ECORRUPT;
    } else if (!id || !id_ok(id)) {
        /* it goes into a header: only the characters FORMAT.md allows */
        gpufl__upload_fail(u, GPUFL_ECORRUPT, "%s: %s", path,
                           id ? "session_id holds characters a session id never has (letters, digits, '.', '_' "
                                "and '-' only)"
                              : "no session_id");
        rc = GPUFL_ECORRUPT;
    } else {
        snprintf(s->id, sizeof s->id, "%s", id);
        bool clean = host && *host && strlen(host) < 256;
        for (const char *c = host; clean && *c; c++)
            clean = (unsigned char)*c >= 0x20 && *c != 0x7f;
        if (clean)
            snprintf(s->host_header, sizeof s->host_header, "X-GpuFlight-Hostname: %s", host);
        s->json = text;
        s->json_len = len;
        text = NULL;
    }
    json_decref(j);
    free(text);
    return rc;
}

static int announce(sess *s)
{
    gpufl__upload *u = s->u;
    char what[400], err[1400];
    snprintf(what, sizeof what, "session %s: announcing it", s->id);
    gpufl__upload_req req = {
        .path = "/sessions", .content_type = "application/json", .body = s->json, .len = s->json_len, .what = what};
    gpufl__http_answer *ans = malloc(sizeof *ans);
    if (!ans) {
        gpufl__upload_fail(u, GPUFL_ENOMEM, "%s: out of memory", what);
        return GPUFL_ENOMEM;
    }
    int rc = gpufl__upload_post(u, &req, ans, err, sizeof err);
    char text[256];
    if (rc != 0) {
        gpufl__upload_fail(u, rc, "%s", err);
    } else if (ans->status != 200) {
        gpufl__upload_answer_text(ans, text, sizeof text);
        if (ans->status == 401)
            u->stop_all = true;
        rc = GPUFL_EIO;
        gpufl__upload_fail(u, rc, "%s: %s/sessions answered %ld%s: %s", what, u->server, ans->status,
                           ans->status == 401   ? " (the API key was refused: nothing more is sent)"
                           : ans->status == 404 ? " (no such address: is api_path right?)"
                                                : "",
                           text);
    }
    free(ans);
    return rc;
}

static void save_cursor(sess *s)
{
    char err[1200];
    if (s->cursor_ok && gpufl__cursor_save(s->dir, s->u->server, s->id, &s->cur, err, sizeof err) != 0) {
        gpufl__upload_warn(s->u, "%s: an interrupted upload of this session will start over", err);
        s->cursor_ok = false;
    }
}

/* The answer to a batch: {"accepted":A,"duplicates":D,"rejected":R,...}
 * with A + D + R lines. */
static int take_answer(sess *s, uint8_t ch, uint64_t first, size_t lines, const gpufl__http_answer *ans,
                       const char *what)
{
    gpufl__upload *u = s->u;
    json_t *j = json_loadb(ans->body, ans->len, 0, NULL);
    json_t *a = json_object_get(j, "accepted"), *d = json_object_get(j, "duplicates"),
           *r = json_object_get(j, "rejected");
    int rc = 0;
    if (!json_is_integer(a) || !json_is_integer(d) || !json_is_integer(r) || json_integer_value(a) < 0 ||
        json_integer_value(d) < 0 || json_integer_value(r) < 0 ||
        (uint64_t)(json_integer_value(a) + json_integer_value(d) + json_integer_value(r)) != lines) {
        gpufl__upload_fail(u, GPUFL_EIO,
                           "%s: the server's answer does not count the %zu lines sent (accepted + duplicates + "
                           "rejected, docs/UPLOAD.md): %.120s",
                           what, lines, ans->body);
        rc = GPUFL_EIO;
    } else {
        u->res.events_uploaded += (uint64_t)(json_integer_value(a) + json_integer_value(d));
        u->res.events_duplicate += (uint64_t)json_integer_value(d);
        u->res.events_rejected += (uint64_t)json_integer_value(r);
        if (json_integer_value(r) > 0) {
            json_t *errs = json_object_get(j, "errors"), *e;
            size_t i;
            gpufl__upload_warn(u, "%s: the server rejected %lld lines", what, (long long)json_integer_value(r));
            json_array_foreach(errs, i, e)
            {
                if (i >= 3)
                    break;
                json_t *line = json_object_get(e, "line");
                const char *why = json_string_value(json_object_get(e, "reason"));
                gpufl__upload_warn(u, "session %s, %s event %llu rejected: %.200s", s->id, gpufl__channel_name(ch),
                                   (unsigned long long)(first + (uint64_t)json_integer_value(line)),
                                   why ? why : "no reason given");
            }
        }
        s->cur.acked[ch] = first + lines;
        save_cursor(s);
    }
    json_decref(j);
    return rc;
}

/* Sends lines [a, b) of channel ch's batch; a 413 halves them. */
static int send_lines(sess *s, uint8_t ch, size_t a, size_t b, bool announced_again)
{
    gpufl__upload *u = s->u;
    batch *bt = &s->b[ch];
    size_t start = a ? bt->ends[a - 1] : 0;
    uint64_t first = bt->first + a;
    char hch[64], hseq[64], hid[300], what[400], err[1400];
    snprintf(hch, sizeof hch, "X-Gpufl-Channel: %s", gpufl__channel_name(ch));
    snprintf(hseq, sizeof hseq, "X-Gpufl-First-Seq: %llu", (unsigned long long)first);
    snprintf(hid, sizeof hid, "X-GpuFlight-Session-Id: %s", s->id);
    snprintf(what, sizeof what, "session %s, %s events %llu-%llu", s->id, gpufl__channel_name(ch),
             (unsigned long long)first, (unsigned long long)(first + (b - a) - 1));
    const char *hdrs[4] = {hid, hch, hseq, s->host_header};
    gpufl__upload_req req = {.path = "/events/stream",
                             .content_type = "application/x-ndjson",
                             .headers = hdrs,
                             .nheaders = s->host_header[0] ? 4 : 3,
                             .body = bt->text.p + start,
                             .len = bt->ends[b - 1] - start,
                             .what = what};
    gpufl__http_answer *ans = malloc(sizeof *ans);
    if (!ans) {
        gpufl__upload_fail(u, GPUFL_ENOMEM, "%s: out of memory", what);
        return GPUFL_ENOMEM;
    }
    int rc = gpufl__upload_post(u, &req, ans, err, sizeof err);
    long status = ans->status;
    char text[256];
    gpufl__upload_answer_text(ans, text, sizeof text);
    if (rc == 0 && status == 200) {
        rc = take_answer(s, ch, first, b - a, ans, what);
    } else if (rc == 0 && status == 413 && b - a > 1) {
        size_t mid = a + (b - a) / 2;
        gpufl__upload_warn(u, "%s: over the server's size limit (413): sending it in two halves", what);
        free(ans);
        rc = send_lines(s, ch, a, mid, announced_again);
        return rc ? rc : send_lines(s, ch, mid, b, announced_again);
    } else if (rc == 0 && status == 404 && !announced_again) {
        /* the server does not know the session (a new database, or the
         * announcement was lost): announce it and send the batch again */
        free(ans);
        rc = announce(s);
        return rc ? rc : send_lines(s, ch, a, b, true);
    } else if (rc == 0) {
        if (status == 401)
            u->stop_all = true;
        rc = GPUFL_EIO;
        gpufl__upload_fail(u, rc, "%s: %s/events/stream answered %ld%s: %s", what, u->server, status,
                           status == 401   ? " (the API key was refused: nothing more is sent)"
                           : status == 413 ? " (one event is over the server's size limit)"
                           : status == 400 ? " (the server refused the request; this session stops here)"
                                           : "",
                           text);
    } else {
        gpufl__upload_fail(u, rc, "%s", err);
    }
    free(ans);
    return rc;
}

static int flush(sess *s, uint8_t ch)
{
    batch *bt = &s->b[ch];
    int rc = bt->n ? send_lines(s, ch, 0, bt->n, false) : 0;
    bt->text.len = 0;
    bt->n = 0;
    return rc;
}

static int add_event(sess *s, gpufl__jnames *names, const gfl_event *ev)
{
    uint8_t ch = (uint8_t)gpufl__event_route(ev);
    uint64_t place = s->places[ch]++;
    if (place < s->cur.acked[ch])
        return 0; /* acknowledged by an earlier upload */
    batch *bt = &s->b[ch];
    if (!bt->n)
        bt->first = place;
    size_t bound = gpufl__ndjson_line_bound(ev, names);
    if (gpufl__bytebuf_reserve(&bt->text, bound) != 0)
        return GPUFL_ENOMEM;
    if (bt->n == bt->cap) {
        size_t cap = bt->cap ? bt->cap * 2 : 1024;
        size_t *e = realloc(bt->ends, cap * sizeof *e);
        if (!e)
            return GPUFL_ENOMEM;
        bt->ends = e;
        bt->cap = cap;
    }
    bt->text.len += gpufl__ndjson_line(ev, names, (char *)bt->text.p + bt->text.len);
    bt->ends[bt->n++] = bt->text.len;
    if (bt->n >= s->u->o.batch_events || bt->text.len >= s->u->o.batch_bytes)
        return flush(s, ch);
    return 0;
}

/* POST .../events/session-complete; whether the server holds it all. */
static int complete(sess *s, bool *whole)
{
    gpufl__upload *u = s->u;
    char body[600], what[400], err[1400];
    snprintf(body, sizeof body, "{\"session_id\":\"%s\",\"events\":{\"device\":%llu,\"scope\":%llu,\"system\":%llu}}",
             s->id, (unsigned long long)s->places[GFL_CHANNEL_DEVICE], (unsigned long long)s->places[GFL_CHANNEL_SCOPE],
             (unsigned long long)s->places[GFL_CHANNEL_SYSTEM]);
    snprintf(what, sizeof what, "session %s: completing it", s->id);
    gpufl__upload_req req = {.path = "/events/session-complete",
                             .content_type = "application/json",
                             .body = body,
                             .len = strlen(body),
                             .what = what,
                             .plain = true};
    gpufl__http_answer *ans = malloc(sizeof *ans);
    if (!ans) {
        gpufl__upload_fail(u, GPUFL_ENOMEM, "%s: out of memory", what);
        return GPUFL_ENOMEM;
    }
    int rc = gpufl__upload_post(u, &req, ans, err, sizeof err);
    if (rc != 0) {
        gpufl__upload_fail(u, rc, "%s", err);
    } else if (ans->status != 200) {
        char text[256];
        gpufl__upload_answer_text(ans, text, sizeof text);
        if (ans->status == 401)
            u->stop_all = true;
        rc = GPUFL_EIO;
        gpufl__upload_fail(u, rc, "%s: %s/events/session-complete answered %ld: %s", what, u->server, ans->status,
                           text);
    } else {
        json_t *j = json_loadb(ans->body, ans->len, 0, NULL);
        *whole = json_is_true(json_object_get(j, "complete"));
        json_decref(j);
        if (!*whole) {
            rc = GPUFL_EIO;
            gpufl__upload_fail(u, rc,
                               "%s: the server does not hold every event sent (its answer: %.200s); upload it "
                               "again with force",
                               what, ans->body);
        }
    }
    free(ans);
    return rc;
}

static int upload_events(sess *s)
{
    gpufl__upload *u = s->u;
    gpufl__event_source *src = NULL;
    char err[1024];
    int rc = gpufl__source_open(s->dir, &src, err, sizeof err);
    if (rc != 0) {
        gpufl__upload_fail(u, rc, "session %s: %s", s->id, err);
        return rc;
    }
    gpufl__jnames names;
    gpufl__jnames_init(&names, &src->strings);
    const gfl_event *ev;
    int got;
    while (rc == 0 && (got = gpufl__source_next(src, &ev)) == 1)
        if ((rc = add_event(s, &names, ev)) == GPUFL_ENOMEM)
            gpufl__upload_fail(u, rc, "session %s: out of memory batching its events", s->id);
    if (rc == 0 && got < 0) {
        rc = got;
        gpufl__upload_fail(u, rc, "session %s: %s", s->id, src->err);
    }
    for (uint8_t ch = 0; rc == 0 && ch < GFL_CHANNEL_COUNT; ch++)
        rc = flush(s, ch);
    bool ended = src->meta.ended;
    gpufl__jnames_free(&names);
    gpufl__source_close(src);
    bool whole = false;
    if (rc == 0)
        rc = complete(s, &whole);
    if (rc == 0 && whole && ended) {
        s->cur.complete = true; /* nothing can be added to an ended session: the next upload skips it */
        save_cursor(s);
    }
    return rc;
}

int gpufl__upload_session(gpufl__upload *u, const char *dir)
{
    sess *s = calloc(1, sizeof *s);
    if (!s) {
        gpufl__upload_fail(u, GPUFL_ENOMEM, "%s: out of memory", dir);
        return GPUFL_ENOMEM;
    }
    s->u = u;
    s->dir = dir;
    s->cursor_ok = true;
    int rc = read_session_json(s);
    if (rc == 0 && !u->o.force) {
        char why[1200];
        if (!gpufl__cursor_load(dir, u->server, s->id, &s->cur, why, sizeof why))
            gpufl__upload_warn(u, "%s", why);
    }
    if (rc == 0 && !s->cur.complete) {
        rc = announce(s);
        if (rc == 0)
            rc = upload_events(s);
    }
    for (uint8_t ch = 0; ch < GFL_CHANNEL_COUNT; ch++) {
        gpufl__bytebuf_free(&s->b[ch].text);
        free(s->b[ch].ends);
    }
    free(s->json);
    free(s);
    return rc;
}
