/*
 * HTTP/1.1 as `gpufl serve` speaks it: one request read whole from a
 * connection (head, then a body of Content-Length bytes), and one answer
 * written, keeping the connection open unless either side said close.
 * Only what the upload API needs: no chunked bodies (411 asks for a
 * length), no pipelining beyond reading the next request after the last
 * answer. "Expect: 100-continue" (curl sends it for large bodies) is
 * answered before the body is read.
 *
 * Limits: a head of at most 16 KiB (431), a body of at most
 * GPUFL__SERVE_MAX_BODY bytes as sent (413, the contract's 8 MiB; the
 * connection is closed, its body unread).
 *
 * Threads: one worker per connection at a time.
 */
#ifndef GPUFL_SERVE_SERVE_HTTP_H
#define GPUFL_SERVE_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/serve_conn.h"

#define GPUFL__SERVE_MAX_HEAD (16u << 10)
#define GPUFL__SERVE_MAX_BODY (8u << 20)      /* compressed, as sent (docs/UPLOAD.md) */
#define GPUFL__SERVE_MAX_INFLATED (64u << 20) /* decompressed */

typedef struct gpufl__serve_request {
    char method[16];
    char path[1024]; /* without the query string */
    /* the headers the API reads ("" when absent) */
    char authorization[512], content_type[128], content_encoding[64];
    char session_id[256], hostname[256], channel[32], first_seq[32];
    bool keep_alive;
    const uint8_t *body; /* in the connection's buffer, valid until the next read */
    size_t body_len;
} gpufl__serve_request;

/* Reads one request from c. Returns 0 with *req; 1 when the peer closed
 * the connection before a new request began (the normal end of a
 * keep-alive connection); GPUFL_EIO when the connection broke or the
 * deadline passed mid-request (nothing to answer); or an HTTP status (400,
 * 411, 413, 431, 505) to answer before closing. */
int gpufl__serve_read_request(gpufl__serve_conn *c, gpufl__serve_request *req, uint64_t deadline_ns)
    __attribute__((warn_unused_result));

/* Marks the request's bytes consumed (after its answer). */
void gpufl__serve_request_done(gpufl__serve_conn *c, const gpufl__serve_request *req);

/* Writes an answer: status, a JSON body, "Connection: close" unless
 * keep_alive. 0 or GPUFL_EIO. */
int gpufl__serve_respond(gpufl__serve_conn *c, int status, const char *json, size_t json_len, bool keep_alive,
                         uint64_t deadline_ns) __attribute__((warn_unused_result));

/* "OK", "Not Found", ... for the statuses the server sends. */
const char *gpufl__serve_status_text(int status);

#endif /* GPUFL_SERVE_SERVE_HTTP_H */
