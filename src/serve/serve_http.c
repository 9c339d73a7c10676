/* HTTP/1.1 requests and answers (serve_http.h). */
#include "serve/serve_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpufl/gpufl.h"

const char *gpufl__serve_status_text(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

/* Where the head ends (the byte after "\r\n\r\n"), or 0. */
static size_t head_end(const uint8_t *p, size_t n)
{
    for (size_t i = 3; i < n; i++)
        if (p[i] == '\n' && p[i - 1] == '\r' && p[i - 2] == '\n' && p[i - 3] == '\r')
            return i + 1;
    return 0;
}

static void copy_value(char *dst, size_t dst_len, const char *v, size_t n)
{
    if (n >= dst_len)
        n = dst_len - 1; /* too long for any valid value: the handler refuses what it cannot read */
    memcpy(dst, v, n);
    dst[n] = '\0';
}

typedef struct head_facts {
    long long content_length; /* -1 none */
    bool chunked, expect_continue, close, http10, bad_length;
} head_facts;

static void header(gpufl__serve_request *r, head_facts *f, const char *name, size_t nn, const char *v, size_t vn)
{
#define IS(s) (nn == sizeof(s) - 1 && !strncasecmp(name, s, nn))
    if (IS("content-length")) {
        char num[32];
        copy_value(num, sizeof num, v, vn);
        char *end;
        long long n = strtoll(num, &end, 10);
        if (!num[0] || *end || n < 0 || (f->content_length >= 0 && f->content_length != n))
            f->bad_length = true;
        f->content_length = n;
    } else if (IS("transfer-encoding")) {
        f->chunked = true;
    } else if (IS("expect")) {
        f->expect_continue = vn == 12 && !strncasecmp(v, "100-continue", 12);
    } else if (IS("connection")) {
        if (vn == 5 && !strncasecmp(v, "close", 5))
            f->close = true;
        else if (vn == 10 && !strncasecmp(v, "keep-alive", 10))
            f->http10 = false;
    } else if (IS("authorization")) {
        copy_value(r->authorization, sizeof r->authorization, v, vn);
    } else if (IS("content-type")) {
        copy_value(r->content_type, sizeof r->content_type, v, vn);
    } else if (IS("content-encoding")) {
        copy_value(r->content_encoding, sizeof r->content_encoding, v, vn);
    } else if (IS("x-gpuflight-session-id")) {
        copy_value(r->session_id, sizeof r->session_id, v, vn);
    } else if (IS("x-gpuflight-hostname")) {
        copy_value(r->hostname, sizeof r->hostname, v, vn);
    } else if (IS("x-gpufl-channel")) {
        copy_value(r->channel, sizeof r->channel, v, vn);
    } else if (IS("x-gpufl-first-seq")) {
        copy_value(r->first_seq, sizeof r->first_seq, v, vn);
    }
#undef IS
}

/* Parses the head p[0..n) ("\r\n\r\n" included) into r and f; 0 or 400/505. */
static int parse_head(const char *p, size_t n, gpufl__serve_request *r, head_facts *f)
{
    const char *end = p + n, *eol = memchr(p, '\r', n);
    const char *sp1 = memchr(p, ' ', (size_t)(eol - p));
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
    if (!sp1 || !sp2 || sp1 == p || (size_t)(sp1 - p) >= sizeof r->method || sp2 == sp1 + 1)
        return 400;
    memcpy(r->method, p, (size_t)(sp1 - p));
    r->method[sp1 - p] = '\0';
    const char *target = sp1 + 1, *q = memchr(target, '?', (size_t)(sp2 - target));
    size_t tn = (size_t)((q ? q : sp2) - target);
    if (tn >= sizeof r->path)
        return 400;
    memcpy(r->path, target, tn);
    r->path[tn] = '\0';
    size_t vn = (size_t)(eol - sp2 - 1);
    if (vn == 8 && !memcmp(sp2 + 1, "HTTP/1.0", 8))
        f->http10 = true;
    else if (vn != 8 || memcmp(sp2 + 1, "HTTP/1.1", 8) != 0)
        return vn >= 5 && !memcmp(sp2 + 1, "HTTP/", 5) ? 505 : 400;
    for (const char *line = eol + 2; line < end - 2;) {
        const char *le = memchr(line, '\r', (size_t)(end - line));
        if (!le || le[1] != '\n')
            return 400;
        const char *colon = memchr(line, ':', (size_t)(le - line));
        if (!colon || colon == line)
            return 400;
        const char *v = colon + 1, *ve = le;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        header(r, f, line, (size_t)(colon - line), v, (size_t)(ve - v));
        line = le + 2;
    }
    return f->bad_length ? 400 : 0;
}

int gpufl__serve_read_request(gpufl__serve_conn *c, gpufl__serve_request *req, uint64_t deadline_ns)
{
    memset(req, 0, sizeof *req);
    gpufl__serve_conn_compact(c);
    size_t end;
    while (!(end = head_end(c->buf, c->len))) {
        if (c->len >= GPUFL__SERVE_MAX_HEAD)
            return 431;
        long r = gpufl__serve_conn_fill(c, GPUFL__SERVE_MAX_HEAD, deadline_ns);
        if (r == 0)
            return c->len == 0 ? 1 : GPUFL_EIO;
        if (r < 0)
            return GPUFL_EIO;
    }
    head_facts f = {.content_length = -1};
    int st = parse_head((const char *)c->buf, end, req, &f);
    if (st)
        return st;
    req->keep_alive = !f.close && !f.http10;
    if (f.chunked)
        return 411;
    bool has_body = strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0;
    if (f.content_length < 0) {
        if (has_body)
            return 411;
        f.content_length = 0;
    }
    if (f.content_length > (long long)GPUFL__SERVE_MAX_BODY)
        return 413;
    size_t need = end + (size_t)f.content_length;
    if (f.expect_continue && c->len < need) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (gpufl__serve_conn_write(c, cont, sizeof cont - 1, deadline_ns) != 0)
            return GPUFL_EIO;
    }
    while (c->len < need) {
        long r = gpufl__serve_conn_fill(c, need, deadline_ns);
        if (r <= 0)
            return GPUFL_EIO; /* cut mid-body, or too slow: nothing of it is used */
    }
    req->body = c->buf + end;
    req->body_len = (size_t)f.content_length;
    c->off = need;
    return 0;
}

/* An idle connection keeps at most this much buffer: 64 uploaders that
 * each sent an 8 MiB batch must not hold 512 MiB while they wait. */
#define IDLE_BUFFER (64u << 10)

void gpufl__serve_request_done(gpufl__serve_conn *c, const gpufl__serve_request *req)
{
    (void)req;
    gpufl__serve_conn_compact(c);
    if (c->cap > IDLE_BUFFER && c->len <= IDLE_BUFFER) {
        uint8_t *p = realloc(c->buf, IDLE_BUFFER);
        if (p) { /* else the larger buffer stays: still correct */
            c->buf = p;
            c->cap = IDLE_BUFFER;
        }
    }
}

int gpufl__serve_respond(gpufl__serve_conn *c, int status, const char *json, size_t json_len, bool keep_alive,
                         uint64_t deadline_ns)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\n%s\r\n",
                     status, gpufl__serve_status_text(status), json_len, keep_alive ? "" : "Connection: close\r\n");
    /* one write: a head and a body sent apart would wait for the peer's
     * delayed ACK (Nagle) */
    char *all = malloc((size_t)n + json_len);
    if (!all)
        return GPUFL_EIO;
    memcpy(all, head, (size_t)n);
    memcpy(all + n, json, json_len);
    int rc = gpufl__serve_conn_write(c, all, (size_t)n + json_len, deadline_ns);
    free(all);
    return rc;
}
