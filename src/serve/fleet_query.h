/*
 * `gpufl fleet`: questions asked of the sessions `gpufl serve` stored,
 * answered by SQL over its schema (docs/SERVE.md), printed as a table or
 * JSON. Times are UTC. A session's events are placed in time by its
 * start: wall time of an event = start_wall_ns + (ts_ns - start_ns), as
 * docs/FORMAT.md defines it.
 *
 * Threads: the caller's, with its own connection. Sizes: the database does
 * the grouping; what comes back is a row per session, or per (bucket,
 * name).
 */
#ifndef GPUFL_SERVE_FLEET_QUERY_H
#define GPUFL_SERVE_FLEET_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libpq-fe.h>

/* Which sessions a query looks at; NULL or !has_*: any. Times are the
 * sessions' starts, ns since the Unix epoch, from <= start < to. */
typedef struct gpufl__fleet_filter {
    const char *workspace; /* required */
    const char *host, *app, *job;
    bool has_from, has_to;
    int64_t from_ns, to_ns;
} gpufl__fleet_filter;

/* Whether the workspace exists and the schema is this build's; 0, or
 * GPUFL_ENOTFOUND / GPUFL_ESTATE / GPUFL_EIO with why. */
int gpufl__fleet_check(PGconn *conn, const char *workspace, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* The sessions f selects, oldest first: id, host, app, job, status, start,
 * end, events stored. 0 or GPUFL_EIO. */
int gpufl__fleet_sessions(PGconn *conn, const gpufl__fleet_filter *f, bool json, FILE *out, char *why, size_t why_len)
    __attribute__((warn_unused_result));

enum { GPUFL__FLEET_KERNELS = 0, GPUFL__FLEET_SCOPES = 1 };

/* Time per kernel (what GPUFL__FLEET_KERNELS) or scope name over time, in
 * buckets of a day or an hour, of the sessions f selects: per bucket, the
 * top names by time (all when top is 0) with their count, time, mean and
 * sessions. 0 or GPUFL_EIO. */
int gpufl__fleet_series(PGconn *conn, const gpufl__fleet_filter *f, int what, bool by_hour, unsigned top, bool json,
                        FILE *out, char *why, size_t why_len) __attribute__((warn_unused_result));

#endif /* GPUFL_SERVE_FLEET_QUERY_H */
