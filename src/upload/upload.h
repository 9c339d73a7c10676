/*
 * The uploader's state across the sessions of one gpufl_upload_logs()
 * call, shared by its files: upload.c (options, the sessions, the
 * result), upload_session.c (one session: announce, batches, complete),
 * upload_send.c (one request: retries, backoff, the answers the contract
 * names). The `gpufl upload` command calls gpufl__upload_paths for its
 * several paths.
 *
 * One thread: the caller's.
 */
#ifndef GPUFL_UPLOAD_UPLOAD_H
#define GPUFL_UPLOAD_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bytebuf.h"
#include "gpufl/gpufl.h"
#include "upload/upload_http.h"

typedef struct gpufl__upload {
    gpufl_upload_options o; /* every field set (defaults and environment applied) */
    char server[4200];      /* backend_url + api_path, no trailing '/': the cursor's key */
    char *auth_header;      /* "Authorization: Bearer <key>"; wiped and freed at the end */
    gpufl__http *http;
    uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0 = none */
    gpufl_upload_result res;
    gpufl__bytebuf gz; /* the body being sent, gzip */
    bool stop_all;     /* the key was refused: nothing more is sent */
    char err[1024];    /* the first error, for gpufl_last_error() */
    int rc;            /* and its code */
} gpufl__upload;

/* A warning: counted, kept among the first, handed to on_warning. */
void gpufl__upload_warn(gpufl__upload *u, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The upload's first error (later ones become warnings). */
void gpufl__upload_fail(gpufl__upload *u, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

uint64_t gpufl__upload_now_ns(void);

/* ---- one request (upload_send.c) ------------------------------------------- */

typedef struct gpufl__upload_req {
    const char *path; /* after the server address: "/sessions", "/events/stream", ... */
    const char *content_type;
    const char *const *headers; /* more "Name: value" lines */
    size_t nheaders;
    const void *body; /* not compressed yet */
    size_t len;
    const char *what; /* for messages: "session X, device events 100-199" */
    bool plain;       /* sent as is: docs/UPLOAD.md allows gzip only on sessions and events/stream */
} gpufl__upload_req;

/* Sends req (gzip unless plain, the key), retrying a 5xx, a cut connection or a
 * timeout with backoff (retry_delay_ms doubled, at most 30 s, max_retries
 * times, within the deadline). Returns 0 with the final answer in *ans
 * (any status but a 5xx); GPUFL_EIO when the retries or the time ran out
 * (the message in err); GPUFL_ENOMEM. */
int gpufl__upload_post(gpufl__upload *u, const gpufl__upload_req *req, gpufl__http_answer *ans, char *err,
                       size_t err_len) __attribute__((warn_unused_result));

/* The text of an error answer for a message: its "error" member, else the
 * first bytes of the body, printable characters only. */
void gpufl__upload_answer_text(const gpufl__http_answer *ans, char *out, size_t len);

/* ---- one session (upload_session.c) ---------------------------------------- */

/* Uploads the session in dir. Returns 0, or a negative gpufl_err after
 * gpufl__upload_fail (the session is counted failed; u->stop_all set when
 * nothing more can be sent). */
int gpufl__upload_session(gpufl__upload *u, const char *dir) __attribute__((warn_unused_result));

/* ---- the whole upload (upload.c) ------------------------------------------- */

/* gpufl_upload_logs() over several paths (each as log_path would be; opts'
 * log_path is ignored). Same returns. */
int gpufl__upload_paths(const gpufl_upload_options *opts, const char *const *paths, size_t npaths,
                        gpufl_upload_result *result) __attribute__((warn_unused_result));

#endif /* GPUFL_UPLOAD_UPLOAD_H */
