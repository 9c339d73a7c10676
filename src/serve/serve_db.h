/*
 * What `gpufl serve` asks of PostgreSQL, on one connection per worker
 * thread (never shared: libpq connections are not thread-safe, and a
 * connection per worker means no lock on the request path). The worker
 * prepares its statements once a connection; a connection the database
 * dropped (a restart, a network cut) is reopened at the next request, and
 * until that works every request is answered 503 by the caller.
 *
 * Errors: GPUFL_EIO means the database is away or refused (the caller
 * answers 503 and the uploader retries); the message is in `why`, never
 * with the connection string (it may hold a password).
 */
#ifndef GPUFL_SERVE_SERVE_DB_H
#define GPUFL_SERVE_SERVE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/serve_batch.h"

typedef struct gpufl__serve_db gpufl__serve_db;

/* A session as its session.json says (strings NUL-terminated, "" unknown). */
typedef struct gpufl__serve_session {
    const char *session_id, *host, *app, *job, *status;
    bool has_start, has_end;
    int64_t start_ns, start_wall_ns, end_wall_ns;
    const char *json; /* the document, for the meta column */
} gpufl__serve_session;

/* A handle that connects lazily: opening never fails for the database
 * being away. NULL only when out of memory. conninfo is copied. */
gpufl__serve_db *gpufl__serve_db_new(const char *conninfo);
void gpufl__serve_db_free(gpufl__serve_db *db);

/* Connects (again) when the connection is not up, and checks it with a
 * round trip when check. 0, or GPUFL_EIO with why. */
int gpufl__serve_db_ready(gpufl__serve_db *db, bool check, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* The workspace of the key whose SHA-256 is sha (not revoked). 0 with
 * *workspace; GPUFL_ENOTFOUND; GPUFL_EIO. */
int gpufl__serve_db_key_workspace(gpufl__serve_db *db, const uint8_t sha[32], int64_t *workspace, char *why,
                                  size_t why_len) __attribute__((warn_unused_result));

/* Stores s under workspace, or updates what it says. 0 with *created;
 * GPUFL_EIO. */
int gpufl__serve_db_session_put(gpufl__serve_db *db, int64_t workspace, const gpufl__serve_session *s, bool *created,
                                char *why, size_t why_len) __attribute__((warn_unused_result));

/* Stores the rows of b for (workspace, session_id, channel) in one
 * transaction, a place already stored left as it is. 0 with *accepted (rows
 * stored now); GPUFL_ENOTFOUND when the session was not announced (nothing
 * stored); GPUFL_EIO (nothing stored). */
int gpufl__serve_db_ingest(gpufl__serve_db *db, int64_t workspace, const char *session_id, int channel,
                           const gpufl__serve_batch *b, uint64_t *accepted, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* For each channel c < 3, how many places below want[c] are stored.
 * 0; GPUFL_ENOTFOUND (no such session); GPUFL_EIO. */
int gpufl__serve_db_stored(gpufl__serve_db *db, int64_t workspace, const char *session_id, const uint64_t want[3],
                           uint64_t stored[3], char *why, size_t why_len) __attribute__((warn_unused_result));

#endif /* GPUFL_SERVE_SERVE_DB_H */
