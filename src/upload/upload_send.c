/*
 * One request of the upload with its retries (upload.h, docs/UPLOAD.md
 * "Retries"): a 5xx, a cut connection and a timeout are the server or its
 * database being away for a while, so they are tried again after 0.5 s,
 * 1 s, 2 s, ... (retry_delay_ms doubled, at most 30 s apart); every other
 * answer goes back to the caller, who knows what it means for its request.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "upload/upload.h"
#include "upload/upload_gzip.h"

#define MAX_DELAY_MS 30000u

uint64_t gpufl__upload_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Milliseconds left before the deadline (UINT32_MAX: no deadline; 0:
 * passed). */
static uint32_t left_ms(const gpufl__upload *u)
{
    if (!u->deadline_ns)
        return UINT32_MAX;
    uint64_t now = gpufl__upload_now_ns();
    if (now >= u->deadline_ns)
        return 0;
    uint64_t ms = (u->deadline_ns - now) / 1000000u;
    return ms ? (ms > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)ms) : 1;
}

static void sleep_ms(uint32_t ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

void gpufl__upload_answer_text(const gpufl__http_answer *ans, char *out, size_t len)
{
    json_t *j = json_loadb(ans->body, ans->len, 0, NULL);
    const char *e = json_string_value(json_object_get(j, "error"));
    const char *src = e ? e : ans->body;
    size_t n = 0;
    for (; *src && n + 1 < len && n < 200; src++)
        out[n++] = isprint((unsigned char)*src) ? *src : ' ';
    out[n] = 0;
    if (!n)
        snprintf(out, len, "no body");
    json_decref(j);
}

int gpufl__upload_post(gpufl__upload *u, const gpufl__upload_req *req, gpufl__http_answer *ans, char *err,
                       size_t err_len)
{
    int rc = req->plain ? 0 : gpufl__gzip(req->body, req->len, &u->gz);
    if (rc != 0) {
        snprintf(err, err_len, "%s: %s", req->what,
                 rc == GPUFL_EUNSUPPORTED ? "this gpufl was built without zlib's header (zlib.h): install "
                                            "zlib1g-dev and build again to upload"
                                          : "out of memory compressing the request");
        return rc;
    }
    char url[4400], ctype[128];
    snprintf(url, sizeof url, "%s%s", u->server, req->path);
    snprintf(ctype, sizeof ctype, "Content-Type: %s", req->content_type);
    const char *hdrs[16];
    size_t nh = 0;
    hdrs[nh++] = u->auth_header;
    hdrs[nh++] = ctype;
    if (!req->plain)
        hdrs[nh++] = "Content-Encoding: gzip";
    const void *body = req->plain ? req->body : u->gz.p;
    size_t len = req->plain ? req->len : u->gz.len;
    for (size_t i = 0; i < req->nheaders && nh < sizeof hdrs / sizeof hdrs[0]; i++)
        hdrs[nh++] = req->headers[i];
    uint32_t delay = u->o.retry_delay_ms;
    for (uint32_t attempt = 0;; attempt++) {
        uint32_t left = left_ms(u);
        if (left == 0) {
            snprintf(err, err_len, "%s: total_timeout_ms (%u ms) reached", req->what, u->o.total_timeout_ms);
            return GPUFL_EIO;
        }
        gpufl__http_request hr = {.url = url,
                                  .headers = hdrs,
                                  .nheaders = nh,
                                  .body = body,
                                  .len = len,
                                  .timeout_ms = left == UINT32_MAX ? 0 : left};
        char why[1024];
        rc = gpufl__http_post(u->http, &hr, ans, why, sizeof why);
        if (rc == GPUFL_EUNSUPPORTED || rc == GPUFL_ENOMEM) {
            snprintf(err, err_len, "%s: %s", req->what, why);
            return rc;
        }
        if (rc == 0)
            u->res.bytes_uploaded += len; /* the server read it: it answered */
        if (rc == 0 && ans->status < 500)
            return 0;
        if (rc == 0) {
            char text[256];
            gpufl__upload_answer_text(ans, text, sizeof text);
            snprintf(why, sizeof why, "%s answered %ld: %s", url, ans->status, text);
        }
        if (attempt >= u->o.max_retries) {
            snprintf(err, err_len, "%s: %s (gave up after %u tries)", req->what, why, attempt + 1);
            return GPUFL_EIO;
        }
        gpufl__upload_warn(u, "%s: %s; trying again in %u ms", req->what, why, delay);
        left = left_ms(u);
        sleep_ms(delay < left ? delay : left);
        delay = delay > MAX_DELAY_MS / 2 ? MAX_DELAY_MS : delay * 2;
    }
}
