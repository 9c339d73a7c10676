/*
 * Small PostgreSQL helpers every part of the serve layer shares: opening a
 * connection from a conninfo string without ever repeating it (it may hold
 * a password), and a database error as one line. Any thread; a connection
 * belongs to one thread at a time.
 */
#ifndef GPUFL_SERVE_SERVE_PG_H
#define GPUFL_SERVE_SERVE_PG_H

#include <stddef.h>

#include <libpq-fe.h>

/* Opens a connection (UTC, no notices on stderr). The connection, or NULL
 * with why ("cannot connect to the database: <libpq's reason>"). */
PGconn *gpufl__serve_pg_connect(const char *conninfo, char *why, size_t why_len);

/* why = "<what>: <the connection's or the result's error, one line>". */
void gpufl__serve_pg_why(PGconn *conn, const PGresult *res, const char *what, char *why, size_t why_len);

/* Runs sql (no parameters) expecting a command or rows; 0, or GPUFL_EIO
 * with why. */
int gpufl__serve_pg_exec(PGconn *conn, const char *sql, char *why, size_t why_len) __attribute__((warn_unused_result));

#endif /* GPUFL_SERVE_SERVE_PG_H */
