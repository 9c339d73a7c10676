/*
 * The upload API's requests (docs/UPLOAD.md) answered: routing under the
 * API path, the bearer key checked against the database, each request's
 * headers and body checked, and the database asked through serve_db.h.
 * The answer is a status and a JSON body; the caller writes it.
 *
 * A request that fails because the database went away is tried once more
 * on a new connection (every request is idempotent: a batch's places are
 * stored once), then answered 503 so that the uploader retries later.
 *
 * Threads: a worker's own database handle; nothing else shared.
 */
#ifndef GPUFL_SERVE_SERVE_API_H
#define GPUFL_SERVE_SERVE_API_H

#include <stdint.h>

#include "core/bytebuf.h"
#include "serve/serve_db.h"
#include "serve/serve_http.h"

typedef struct gpufl__serve_answer {
    int status;
    gpufl__bytebuf body; /* JSON, owned */
} gpufl__serve_answer;

/* What a worker counts, for the log line at the end. */
typedef struct gpufl__serve_counts {
    uint64_t requests, batches, accepted, duplicates, rejected, unauthorized, unavailable;
} gpufl__serve_counts;

/* Answers req (whose path starts with api_path, "/api/v1") into out (a
 * zeroed answer; free its body after). Never fails: out of memory is a 503
 * with a fixed body. */
void gpufl__serve_api_answer(const char *api_path, gpufl__serve_db *db, const gpufl__serve_request *req,
                             gpufl__serve_answer *out, gpufl__serve_counts *counts);

#endif /* GPUFL_SERVE_SERVE_API_H */
