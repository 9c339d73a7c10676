/*
 * Schema migrations (serve_migrate.h). The pending ones are applied in one
 * transaction under an advisory lock: a server that starts while another
 * migrates waits, then finds nothing to do.
 */
#include "serve/serve_migrate.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpufl/gpufl.h"
#include "serve/serve_pg.h"

/* src/serve/migrations/, embedded at build time (CMakeLists.txt) */
extern const char gpufl__serve_sql_0001[];

static const struct {
    int version;
    const char *file;
    const char *sql;
} migrations[] = {
    {1, "0001_init.sql", gpufl__serve_sql_0001},
};
#define NMIGRATIONS (sizeof migrations / sizeof migrations[0])

/* Taken for the transaction: any number, the same in every gpufl serve. */
#define MIGRATE_LOCK "SELECT pg_advisory_xact_lock(71637001)"

int gpufl__serve_schema_latest(void) { return migrations[NMIGRATIONS - 1].version; }

static int read_version(PGconn *conn, int *version, char *why, size_t why_len)
{
    PGresult *r = PQexec(conn, "SELECT coalesce(max(version), 0) FROM schema_version");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        gpufl__serve_pg_why(conn, r, "reading the schema version", why, why_len);
        PQclear(r);
        return GPUFL_EIO;
    }
    *version = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return 0;
}

int gpufl__serve_schema_version(PGconn *conn, int *version, char *why, size_t why_len)
{
    PGresult *r = PQexec(conn, "SELECT to_regclass('schema_version') IS NOT NULL");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        gpufl__serve_pg_why(conn, r, "reading the schema version", why, why_len);
        PQclear(r);
        return GPUFL_EIO;
    }
    bool exists = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    *version = 0;
    return exists ? read_version(conn, version, why, why_len) : 0;
}

static int apply(PGconn *conn, int *from, int *to, char *why, size_t why_len)
{
    if (gpufl__serve_pg_exec(conn, MIGRATE_LOCK, why, why_len) != 0 ||
        gpufl__serve_pg_exec(conn,
                             "CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, "
                             "file text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
                             why, why_len) != 0 ||
        read_version(conn, from, why, why_len) != 0)
        return GPUFL_EIO;
    *to = *from;
    if (*from > gpufl__serve_schema_latest()) {
        snprintf(why, why_len,
                 "the database's schema is at version %d, newer than this gpufl knows (%d): use a newer gpufl", *from,
                 gpufl__serve_schema_latest());
        return GPUFL_ESTATE;
    }
    for (size_t i = 0; i < NMIGRATIONS; i++) {
        if (migrations[i].version <= *from)
            continue;
        char what[128];
        snprintf(what, sizeof what, "migration %s", migrations[i].file);
        PGresult *r = PQexec(conn, migrations[i].sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
            gpufl__serve_pg_why(conn, r, what, why, why_len);
            PQclear(r);
            return GPUFL_EIO;
        }
        PQclear(r);
        char v[16];
        snprintf(v, sizeof v, "%d", migrations[i].version);
        const char *params[2] = {v, migrations[i].file};
        r = PQexecParams(conn, "INSERT INTO schema_version (version, file) VALUES ($1, $2)", 2, NULL, params, NULL,
                         NULL, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            gpufl__serve_pg_why(conn, r, what, why, why_len);
            PQclear(r);
            return GPUFL_EIO;
        }
        PQclear(r);
        *to = migrations[i].version;
    }
    return 0;
}

int gpufl__serve_migrate(PGconn *conn, int *from, int *to, char *why, size_t why_len)
{
    *from = *to = 0;
    if (gpufl__serve_pg_exec(conn, "BEGIN", why, why_len) != 0)
        return GPUFL_EIO;
    int rc = apply(conn, from, to, why, why_len);
    char ignored[256];
    if (rc != 0) {
        if (gpufl__serve_pg_exec(conn, "ROLLBACK", ignored, sizeof ignored) != 0)
            ignored[0] = '\0'; /* the connection is gone: nothing to roll back */
        return rc;
    }
    return gpufl__serve_pg_exec(conn, "COMMIT", why, why_len);
}

int gpufl__serve_migrate_db(const char *conninfo, int *from, int *to, char *why, size_t why_len)
{
    PGconn *conn = gpufl__serve_pg_connect(conninfo, why, why_len);
    int rc = conn ? gpufl__serve_migrate(conn, from, to, why, why_len) : GPUFL_EIO;
    PQfinish(conn);
    return rc;
}
