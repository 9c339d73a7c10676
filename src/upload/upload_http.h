/*
 * One HTTP POST at a time for the uploader, through libcurl loaded at run
 * time (dlopen "libcurl.so.4"), so libgpufl has no link dependency on it and
 * a program that never uploads never loads it. Built against curl/curl.h
 * when configure found it (GPUFL_HAVE_CURL); otherwise every open says the
 * build has no uploader.
 *
 * TLS is always verified (peer and host name); ca_file replaces libcurl's
 * default CA bundle. Redirects are not followed: a redirect would carry
 * the Authorization header to wherever it points. Messages name the URL and
 * what went wrong, never a header's value.
 *
 * One owner thread per client.
 */
#ifndef GPUFL_UPLOAD_UPLOAD_HTTP_H
#define GPUFL_UPLOAD_UPLOAD_HTTP_H

#include <stddef.h>
#include <stdint.h>

typedef struct gpufl__http gpufl__http;

typedef struct gpufl__http_config {
    const char *ca_file;         /* NULL: libcurl's default bundle */
    uint32_t connect_timeout_ms; /* 0: libcurl's */
    uint32_t read_timeout_ms;    /* a transfer that receives nothing this long fails; 0: no limit */
} gpufl__http_config;

typedef struct gpufl__http_request {
    const char *url;
    const char *const *headers; /* "Name: value" */
    size_t nheaders;
    const void *body;
    size_t len;
    uint32_t timeout_ms; /* the whole request; 0: no limit */
} gpufl__http_request;

/* The answer: status and the first bytes of the body, NUL-terminated. */
typedef struct gpufl__http_answer {
    long status;
    char body[16384];
    size_t len;
} gpufl__http_answer;

/* Loads libcurl (once per process) and makes a client. Returns 0;
 * GPUFL_EUNSUPPORTED ("libcurl.so.4 not found: install libcurl4", or a build
 * without curl.h) or GPUFL_ENOMEM, with the message in err. */
int gpufl__http_open(const gpufl__http_config *cfg, gpufl__http **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Sends req. Returns 0 with *ans filled (any status, 4xx and 5xx too), or
 * GPUFL_EIO when no answer came (refused, cut, timed out, TLS failed) with
 * a message naming the URL in err. */
int gpufl__http_post(gpufl__http *h, const gpufl__http_request *req, gpufl__http_answer *ans, char *err, size_t err_len)
    __attribute__((warn_unused_result));

void gpufl__http_close(gpufl__http *h);

#endif /* GPUFL_UPLOAD_UPLOAD_HTTP_H */
