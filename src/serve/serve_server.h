/*
 * `gpufl serve`: the upload API's server (docs/UPLOAD.md) over PostgreSQL.
 *
 * Threads: the caller's thread accepts connections and waits (epoll) for
 * idle keep-alive connections to send their next request; a fixed pool of
 * workers (8 by default) takes a connection with a request coming, reads
 * that request whole, answers it and gives the connection back. So 64
 * uploaders on keep-alive connections share 8 workers and 8 database
 * connections, and a connection that waits costs no thread. Each worker
 * has its own database connection (serve_db.h).
 *
 * Deadlines: a request must arrive whole within 60 s of its first byte and
 * its answer be taken within 30 s; an idle keep-alive connection is closed
 * after 60 s; a TLS handshake has 10 s. At most 1024 connections; past
 * that a new one is closed at once.
 *
 * Built for uploads of batches of up to 8 MiB (gzip), tens of thousands of
 * events a second on a small machine (bench/RESULTS.md).
 */
#ifndef GPUFL_SERVE_SERVE_SERVER_H
#define GPUFL_SERVE_SERVE_SERVER_H

#include <signal.h>
#include <stdio.h>

typedef struct gpufl__serve_config {
    const char *listen;             /* "ADDR:PORT", ":PORT", "[::1]:PORT"; port 0 picks one */
    const char *conninfo;           /* libpq connection string */
    const char *tls_cert, *tls_key; /* PEM files; both or neither */
    const char *api_path;           /* "/api/v1" */
    unsigned workers;               /* 1 to 256 */
} gpufl__serve_config;

/* Migrates the schema, listens, and serves until *stop becomes non-zero
 * (a signal handler sets it). Says on log where it listens, then why it
 * stopped and what it stored. Returns 0 after a stop; GPUFL_EIO (cannot
 * listen, database unreachable at start, bad TLS files) with the reason on
 * log. */
int gpufl__serve_run(const gpufl__serve_config *cfg, volatile sig_atomic_t *stop, FILE *log)
    __attribute__((warn_unused_result));

#endif /* GPUFL_SERVE_SERVE_SERVER_H */
