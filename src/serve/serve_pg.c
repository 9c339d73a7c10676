/* PostgreSQL helpers (serve_pg.h). */
#include "serve/serve_pg.h"

#include <stdio.h>
#include <string.h>

#include "gpufl/gpufl.h"

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* NOTICEs (IF NOT EXISTS, ...) are not the user's business */
}

void gpufl__serve_pg_why(PGconn *conn, const PGresult *res, const char *what, char *why, size_t why_len)
{
    const char *m = res ? PQresultErrorMessage(res) : NULL;
    if (!m || !m[0])
        m = conn ? PQerrorMessage(conn) : "out of memory";
    if (!m[0])
        m = "unknown error";
    char line[512];
    snprintf(line, sizeof line, "%s", m);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = (p[1] ? ' ' : '\0');
    size_t n = strlen(line);
    while (n && line[n - 1] == ' ')
        line[--n] = '\0';
    snprintf(why, why_len, "%s: %s", what, line);
}

PGconn *gpufl__serve_pg_connect(const char *conninfo, char *why, size_t why_len)
{
    PGconn *c = PQconnectdb(conninfo);
    if (!c || PQstatus(c) != CONNECTION_OK) {
        gpufl__serve_pg_why(c, NULL, "cannot connect to the database", why, why_len);
        PQfinish(c);
        return NULL;
    }
    PQsetNoticeProcessor(c, quiet, NULL);
    if (gpufl__serve_pg_exec(c, "SET TIME ZONE 'UTC'", why, why_len) != 0) {
        PQfinish(c);
        return NULL;
    }
    return c;
}

int gpufl__serve_pg_exec(PGconn *conn, const char *sql, char *why, size_t why_len)
{
    PGresult *r = PQexec(conn, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        gpufl__serve_pg_why(conn, r, "database", why, why_len);
        PQclear(r);
        return GPUFL_EIO;
    }
    PQclear(r);
    return 0;
}
