/* The upload API (serve_api.h). */
#include "serve/serve_api.h"

#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpufl/gpufl.h"
#include "serve/serve_batch.h"
#include "serve/serve_gunzip.h"
#include "serve/serve_keys.h"

static const char no_memory[] = "{\"error\":\"out of memory\"}";

/* out gets status and the JSON of j (taken). */
static void answer_json(gpufl__serve_answer *out, int status, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    out->body.len = 0;
    if (!text || gpufl__bytebuf_append(&out->body, text, strlen(text)) != 0) {
        out->status = 503;
        out->body.len = 0;
        if (gpufl__bytebuf_append(&out->body, no_memory, sizeof no_memory - 1) != 0)
            out->body.len = 0;
    } else {
        out->status = status;
    }
    free(text);
}

static void answer_error(gpufl__serve_answer *out, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void answer_error(gpufl__serve_answer *out, int status, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    answer_json(out, status, json_pack("{s:s}", "error", msg));
}

/* The database at hand: connected (again) if it was not. false after
 * answering 503. */
static bool db_up(gpufl__serve_db *db, gpufl__serve_answer *out, gpufl__serve_counts *counts)
{
    char why[512];
    if (gpufl__serve_db_ready(db, false, why, sizeof why) == 0)
        return true;
    counts->unavailable++;
    answer_error(out, 503, "database unavailable: %s", why);
    return false;
}

/* After an operation failed with GPUFL_EIO: whether a new connection is up,
 * so that the caller tries once more. */
static bool retry(gpufl__serve_db *db)
{
    char why[512];
    return gpufl__serve_db_ready(db, true, why, sizeof why) == 0;
}

/* The key's workspace; false after answering 401 or 503. */
static bool authorized(gpufl__serve_db *db, const gpufl__serve_request *req, int64_t *workspace,
                       gpufl__serve_answer *out, gpufl__serve_counts *counts)
{
    const char *a = req->authorization;
    if (strncasecmp(a, "Bearer ", 7) != 0 || !a[7]) {
        counts->unauthorized++;
        answer_error(out, 401, "no API key: send Authorization: Bearer <key>");
        return false;
    }
    const char *key = a + 7;
    while (*key == ' ')
        key++;
    uint8_t sha[32];
    gpufl__serve_key_hash(key, strlen(key), sha);
    if (!db_up(db, out, counts))
        return false;
    char why[512];
    int rc = gpufl__serve_db_key_workspace(db, sha, workspace, why, sizeof why);
    if (rc == GPUFL_EIO && retry(db))
        rc = gpufl__serve_db_key_workspace(db, sha, workspace, why, sizeof why);
    if (rc == GPUFL_ENOTFOUND) {
        counts->unauthorized++;
        answer_error(out, 401, "the API key is not known to this server, or was revoked");
        return false;
    }
    if (rc != 0) {
        counts->unavailable++;
        answer_error(out, 503, "database unavailable: %s", why);
        return false;
    }
    return true;
}

/* The body as sent, or inflated into buf; NULL after answering 400/413. */
static const char *body_text(const gpufl__serve_request *req, gpufl__bytebuf *buf, size_t *n, gpufl__serve_answer *out)
{
    const char *enc = req->content_encoding;
    if (!enc[0] || !strcasecmp(enc, "identity")) {
        *n = req->body_len;
        return (const char *)req->body;
    }
    if (strcasecmp(enc, "gzip") != 0) {
        answer_error(out, 400, "Content-Encoding '%.64s' is not gzip or identity", enc);
        return NULL;
    }
    int rc = gpufl__serve_gunzip(req->body, req->body_len, GPUFL__SERVE_MAX_INFLATED, buf);
    if (rc == GPUFL_EUNSUPPORTED) {
        answer_error(out, 413, "the body inflates to more than %u MiB", GPUFL__SERVE_MAX_INFLATED >> 20);
        return NULL;
    }
    if (rc != 0) {
        answer_error(out, rc == GPUFL_ENOMEM ? 503 : 400, "%s",
                     rc == GPUFL_ENOMEM ? "out of memory" : "the body is not gzip, or is cut short");
        return NULL;
    }
    *n = buf->len;
    return (const char *)buf->p;
}

static bool media_type(const char *value, const char *want)
{
    size_t n = strlen(want);
    return !strncasecmp(value, want, n) && (value[n] == '\0' || value[n] == ';' || value[n] == ' ');
}

/* ---- GET health ------------------------------------------------------------- */

static void health(gpufl__serve_db *db, gpufl__serve_answer *out)
{
    char why[512];
    if (gpufl__serve_db_ready(db, true, why, sizeof why) == 0)
        answer_json(out, 200, json_pack("{s:s,s:s}", "status", "ok", "database", "ok"));
    else
        answer_json(out, 503, json_pack("{s:s,s:s}", "status", "unavailable", "database", why));
}

/* ---- POST sessions ---------------------------------------------------------- */

static const char *str_at(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static bool int_at(json_t *o, const char *key, int64_t *v)
{
    json_t *j = json_object_get(o, key);
    if (!json_is_integer(j))
        return false;
    *v = (int64_t)json_integer_value(j);
    return true;
}

static void sessions(gpufl__serve_db *db, int64_t ws, const gpufl__serve_request *req, gpufl__serve_answer *out,
                     gpufl__serve_counts *counts)
{
    gpufl__bytebuf buf = {0};
    size_t n;
    const char *text = body_text(req, &buf, &n, out);
    if (!text)
        goto done;
    json_error_t jerr;
    json_t *doc = json_loadb(text, n, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(doc)) {
        answer_error(out, 400, "the body is not a session.json object: %s", doc ? "not an object" : jerr.text);
        json_decref(doc);
        goto done;
    }
    gpufl__serve_session s = {.session_id = str_at(doc, "session_id"),
                              .host = str_at(doc, "host"),
                              .app = str_at(doc, "app_name"),
                              .job = str_at(json_object_get(doc, "job"), "id"),
                              .status = str_at(doc, "status")};
    if (!s.session_id[0] || strlen(s.session_id) > 255) {
        answer_error(out, 400, "session.json has no \"session_id\" (a string of 1 to 255 bytes)");
        json_decref(doc);
        goto done;
    }
    s.has_start = int_at(doc, "start_ns", &s.start_ns) && int_at(doc, "start_wall_ns", &s.start_wall_ns);
    s.has_end = int_at(doc, "end_wall_ns", &s.end_wall_ns);
    /* the document as jansson wrote it back: valid JSON whatever the
     * original's encoding quirks */
    char *canon = json_dumps(doc, JSON_COMPACT);
    s.json = canon;
    bool created = false;
    char why[512];
    int rc = canon ? gpufl__serve_db_session_put(db, ws, &s, &created, why, sizeof why) : GPUFL_ENOMEM;
    if (rc == GPUFL_EIO && retry(db))
        rc = gpufl__serve_db_session_put(db, ws, &s, &created, why, sizeof why);
    if (rc == 0)
        answer_json(out, 200, json_pack("{s:s,s:b}", "session_id", s.session_id, "created", created));
    else if (rc == GPUFL_ECORRUPT)
        answer_error(out, 400, "the database refused session.json: %s", why);
    else {
        counts->unavailable += rc == GPUFL_EIO;
        answer_error(out, 503, "%s", rc == GPUFL_EIO ? why : "out of memory");
    }
    free(canon);
    json_decref(doc);
done:
    gpufl__bytebuf_free(&buf);
}

/* ---- POST events/stream ------------------------------------------------------ */

static int channel_of(const char *name)
{
    static const char *const names[] = {"device", "scope", "system"}; /* gfl_channel's order */
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

static bool parse_seq(const char *s, uint64_t *v)
{
    size_t n = strlen(s);
    if (n == 0 || n > 18 || strspn(s, "0123456789") != n)
        return false; /* under 10^18: a bigint with room for the batch's lines */
    *v = strtoull(s, NULL, 10);
    return true;
}

static json_t *errors_json(const gpufl__serve_batch *b)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < b->nerrors; i++)
        json_array_append_new(
            a, json_pack("{s:I,s:s}", "line", (json_int_t)b->errors[i].line, "reason", b->errors[i].reason));
    return a;
}

static void events(gpufl__serve_db *db, int64_t ws, const gpufl__serve_request *req, gpufl__serve_answer *out,
                   gpufl__serve_counts *counts)
{
    int channel = channel_of(req->channel);
    uint64_t first_seq;
    if (!req->session_id[0] || strlen(req->session_id) > 255) {
        answer_error(out, 400, "X-GpuFlight-Session-Id is missing");
        return;
    }
    if (channel < 0) {
        answer_error(out, 400, "X-Gpufl-Channel is %s: want device, scope or system",
                     req->channel[0] ? "not one of them" : "missing");
        return;
    }
    if (!parse_seq(req->first_seq, &first_seq)) {
        answer_error(out, 400, "X-Gpufl-First-Seq is %s: want the place of the first line, from 0",
                     req->first_seq[0] ? "not a number" : "missing");
        return;
    }
    if (!media_type(req->content_type, "application/x-ndjson")) {
        answer_error(out, 400, "Content-Type is '%.64s': want application/x-ndjson", req->content_type);
        return;
    }
    gpufl__bytebuf buf = {0};
    gpufl__serve_batch b = {0};
    size_t n;
    const char *text = body_text(req, &buf, &n, out);
    if (!text)
        goto done;
    if (gpufl__serve_batch_build(&b, first_seq, text, n) != 0) {
        answer_error(out, 503, "out of memory");
        goto done;
    }
    uint64_t accepted = 0;
    char why[512];
    int rc = gpufl__serve_db_ingest(db, ws, req->session_id, channel, &b, &accepted, why, sizeof why);
    if (rc == GPUFL_EIO && retry(db))
        rc = gpufl__serve_db_ingest(db, ws, req->session_id, channel, &b, &accepted, why, sizeof why);
    if (rc == GPUFL_ENOTFOUND) {
        answer_error(out, 404, "%s", why);
    } else if (rc == GPUFL_ECORRUPT) {
        answer_error(out, 400, "the database refused the batch: %s", why);
    } else if (rc != 0) {
        counts->unavailable++;
        answer_error(out, 503, "database unavailable: %s", why);
    } else {
        uint64_t dup = b.rows - accepted;
        counts->batches++;
        counts->accepted += accepted;
        counts->duplicates += dup;
        counts->rejected += b.rejected;
        answer_json(out, 200,
                    json_pack("{s:I,s:I,s:I,s:o}", "accepted", (json_int_t)accepted, "duplicates", (json_int_t)dup,
                              "rejected", (json_int_t)b.rejected, "errors", errors_json(&b)));
    }
done:
    gpufl__serve_batch_free(&b);
    gpufl__bytebuf_free(&buf);
}

/* ---- POST events/session-complete --------------------------------------------- */

static void complete(gpufl__serve_db *db, int64_t ws, const gpufl__serve_request *req, gpufl__serve_answer *out,
                     gpufl__serve_counts *counts)
{
    gpufl__bytebuf buf = {0};
    size_t n;
    const char *text = body_text(req, &buf, &n, out);
    json_t *doc = NULL;
    if (!text)
        goto done;
    json_error_t jerr;
    doc = json_loadb(text, n, 0, &jerr);
    const char *sid = str_at(doc, "session_id");
    json_t *ev = json_object_get(doc, "events");
    static const char *const names[3] = {"device", "scope", "system"};
    uint64_t want[3] = {0}, stored[3];
    bool ok = json_is_object(doc) && sid[0] && strlen(sid) <= 255 && json_is_object(ev);
    for (int c = 0; ok && c < 3; c++) {
        json_t *v = json_object_get(ev, names[c]);
        if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
            ok = false;
        want[c] = v ? (uint64_t)json_integer_value(v) : 0;
    }
    if (!ok) {
        answer_error(out, 400, "want {\"session_id\":\"...\",\"events\":{\"device\":N,\"scope\":N,\"system\":N}} (%s)",
                     doc ? "a field is missing or not a count" : jerr.text);
        goto done;
    }
    char why[512];
    int rc = gpufl__serve_db_stored(db, ws, sid, want, stored, why, sizeof why);
    if (rc == GPUFL_EIO && retry(db))
        rc = gpufl__serve_db_stored(db, ws, sid, want, stored, why, sizeof why);
    if (rc == GPUFL_ENOTFOUND) {
        answer_error(out, 404, "%s", why);
    } else if (rc != 0) {
        counts->unavailable++;
        answer_error(out, 503, "database unavailable: %s", why);
    } else {
        bool all = stored[0] == want[0] && stored[1] == want[1] && stored[2] == want[2];
        answer_json(out, 200,
                    json_pack("{s:s,s:{s:I,s:I,s:I},s:b}", "session_id", sid, "stored", "device", (json_int_t)stored[0],
                              "scope", (json_int_t)stored[1], "system", (json_int_t)stored[2], "complete", all));
    }
done:
    json_decref(doc);
    gpufl__bytebuf_free(&buf);
}

/* ---- routing ----------------------------------------------------------------- */

void gpufl__serve_api_answer(const char *api_path, gpufl__serve_db *db, const gpufl__serve_request *req,
                             gpufl__serve_answer *out, gpufl__serve_counts *counts)
{
    counts->requests++;
    size_t pn = strlen(api_path);
    const char *rest = !strncmp(req->path, api_path, pn) ? req->path + pn : NULL;
    static const struct {
        const char *path, *method;
        void (*run)(gpufl__serve_db *, int64_t, const gpufl__serve_request *, gpufl__serve_answer *,
                    gpufl__serve_counts *);
    } routes[] = {{"/sessions", "POST", sessions},
                  {"/events/stream", "POST", events},
                  {"/events/session-complete", "POST", complete}};
    if (rest && !strcmp(rest, "/health")) {
        if (strcmp(req->method, "GET") != 0)
            answer_error(out, 405, "%s %s: only GET", req->method, req->path);
        else
            health(db, out);
        return;
    }
    for (size_t i = 0; rest && i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(rest, routes[i].path) != 0)
            continue;
        if (strcmp(req->method, routes[i].method) != 0) {
            answer_error(out, 405, "%.16s %.200s: only %s", req->method, req->path, routes[i].method);
            return;
        }
        int64_t ws;
        if (authorized(db, req, &ws, out, counts))
            routes[i].run(db, ws, req, out, counts);
        return;
    }
    answer_error(out, 404, "no such path: %.300s (the API is under %s)", req->path, api_path);
}
