/*
 * The database schema, versioned: src/serve/migrations/NNNN_*.sql, built
 * into the program (cmake/gpufl_embed.cmake), applied in order, each in
 * one transaction with its row of schema_version, under a lock on that
 * table so that two servers starting together apply each once. A file is
 * never changed once released; a change is the next file. docs/SERVE.md
 * shows the tables.
 */
#ifndef GPUFL_SERVE_SERVE_MIGRATE_H
#define GPUFL_SERVE_SERVE_MIGRATE_H

#include <stddef.h>

#include <libpq-fe.h>

/* The schema version this build knows (the last migration's number). */
int gpufl__serve_schema_latest(void);

/* Applies the migrations conn lacks. 0 with *from and *to (equal when none
 * was needed); GPUFL_EIO with why (nothing of the failing one applied);
 * GPUFL_ESTATE when the database is newer than this build. */
int gpufl__serve_migrate(PGconn *conn, int *from, int *to, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* gpufl__serve_migrate on a connection of its own to conninfo, closed
 * again; GPUFL_EIO with why when it cannot connect. */
int gpufl__serve_migrate_db(const char *conninfo, int *from, int *to, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* The version conn's schema is at (0: none). 0 or GPUFL_EIO. */
int gpufl__serve_schema_version(PGconn *conn, int *version, char *why, size_t why_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_SERVE_SERVE_MIGRATE_H */
