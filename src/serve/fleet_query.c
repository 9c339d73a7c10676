/* `gpufl fleet sessions|kernels|scopes` (fleet_query.h). */
#include "serve/fleet_query.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "present/report/summary_text.h"
#include "serve/serve_migrate.h"
#include "serve/serve_pg.h"

#define NS 1000000000ll

int gpufl__fleet_check(PGconn *conn, const char *workspace, char *why, size_t why_len)
{
    int version;
    if (gpufl__serve_schema_version(conn, &version, why, why_len) != 0)
        return GPUFL_EIO;
    if (version != gpufl__serve_schema_latest()) {
        snprintf(why, why_len,
                 version ? "the database's schema is at version %d, this gpufl's at %d: run gpufl serve --migrate "
                           "with the newer of the two"
                         : "the database has no gpufl schema (version %d; this gpufl's is %d): run gpufl serve "
                           "--migrate",
                 version, gpufl__serve_schema_latest());
        return GPUFL_ESTATE;
    }
    const char *v[1] = {workspace};
    PGresult *r = PQexecParams(conn, "SELECT 1 FROM workspaces WHERE name = $1", 1, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        gpufl__serve_pg_why(conn, r, "finding the workspace", why, why_len);
        PQclear(r);
        return GPUFL_EIO;
    }
    int n = PQntuples(r);
    PQclear(r);
    if (!n) {
        snprintf(why, why_len, "no workspace '%s' in this database (gpufl serve key add WORKSPACE makes one)",
                 workspace);
        return GPUFL_ENOTFOUND;
    }
    return 0;
}

/* The filter's parameters $1..$7 in the order the WHERE below uses them. */
typedef struct params {
    char from[24], to[24];
    const char *v[7];
} params;

static void filter_params(const gpufl__fleet_filter *f, params *p)
{
    snprintf(p->from, sizeof p->from, "%" PRId64, f->from_ns);
    snprintf(p->to, sizeof p->to, "%" PRId64, f->to_ns);
    p->v[0] = f->workspace;
    p->v[1] = f->host;
    p->v[2] = f->app;
    p->v[3] = f->job;
    p->v[4] = f->has_from ? p->from : NULL;
    p->v[5] = f->has_to ? p->to : NULL;
    p->v[6] = NULL;
}

#define FILTER_SQL                                                                                                     \
    "s.workspace_id = (SELECT id FROM workspaces WHERE name = $1) AND ($2::text IS NULL OR s.host = $2) AND "          \
    "($3::text IS NULL OR s.app = $3) AND ($4::text IS NULL OR s.job = $4) AND ($5::bigint IS NULL OR "                \
    "s.start_wall_ns >= $5) AND ($6::bigint IS NULL OR s.start_wall_ns < $6)"

#define ISO(ns) "to_char(to_timestamp((" ns ") / 1e9), 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

static PGresult *query(PGconn *conn, const char *sql, int n, const char *const *v, const char *what, char *why,
                       size_t why_len)
{
    PGresult *r = PQexecParams(conn, sql, n, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        gpufl__serve_pg_why(conn, r, what, why, why_len);
        PQclear(r);
        return NULL;
    }
    return r;
}

static const char *or_dash(const char *s) { return s[0] ? s : "-"; }

int gpufl__fleet_sessions(PGconn *conn, const gpufl__fleet_filter *f, bool json, FILE *out, char *why, size_t why_len)
{
    params p;
    filter_params(f, &p);
    PGresult *r = query(
        conn,
        "SELECT s.session_id, s.host, s.app, s.job, s.status, coalesce(" ISO("s.start_wall_ns") ", ''), coalesce(" ISO(
            "s.end_wall_ns") ", ''), "
                             "(SELECT count(*) FROM events e "
                             "WHERE e.workspace_id = "
                             "s.workspace_id AND "
                             "e.session_id = s.session_id) "
                             "FROM sessions s WHERE " FILTER_SQL " ORDER BY s.start_wall_ns NULLS "
                             "FIRST, s.session_id",
        6, p.v, "listing the sessions", why, why_len);
    if (!r)
        return GPUFL_EIO;
    int n = PQntuples(r);
    if (json) {
        json_t *a = json_array();
        for (int i = 0; a && i < n; i++)
            json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s?,s:s?,s:I}", "session_id", PQgetvalue(r, i, 0),
                                               "host", PQgetvalue(r, i, 1), "app", PQgetvalue(r, i, 2), "job",
                                               PQgetvalue(r, i, 3), "status", PQgetvalue(r, i, 4), "start",
                                               PQgetvalue(r, i, 5)[0] ? PQgetvalue(r, i, 5) : NULL, "end",
                                               PQgetvalue(r, i, 6)[0] ? PQgetvalue(r, i, 6) : NULL, "events",
                                               (json_int_t)strtoll(PQgetvalue(r, i, 7), NULL, 10)));
        if (a)
            json_dumpf(a, out, JSON_INDENT(2));
        fputc('\n', out);
        json_decref(a);
    } else {
        fprintf(out, "%-44s %-12s %-14s %-10s %-8s %-20s %-20s %s\n", "SESSION", "HOST", "APP", "JOB", "STATUS",
                "START", "END", "EVENTS");
        for (int i = 0; i < n; i++)
            fprintf(out, "%-44s %-12s %-14s %-10s %-8s %-20s %-20s %s\n", PQgetvalue(r, i, 0),
                    or_dash(PQgetvalue(r, i, 1)), or_dash(PQgetvalue(r, i, 2)), or_dash(PQgetvalue(r, i, 3)),
                    or_dash(PQgetvalue(r, i, 4)), or_dash(PQgetvalue(r, i, 5)), or_dash(PQgetvalue(r, i, 6)),
                    PQgetvalue(r, i, 7));
        fprintf(out, "%d session%s\n", n, n == 1 ? "" : "s");
    }
    PQclear(r);
    return 0;
}

int gpufl__fleet_series(PGconn *conn, const gpufl__fleet_filter *f, int what, bool by_hour, unsigned top, bool json,
                        FILE *out, char *why, size_t why_len)
{
    params p;
    filter_params(f, &p);
    p.v[6] = what == GPUFL__FLEET_KERNELS ? "kernel" : "scope_end";
    /* a bucket's names by time, ranked in SQL so that --top cuts each bucket */
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SELECT bucket, name, n, total, sessions, rank FROM (SELECT bucket, name, n, total, sessions, "
             "row_number() OVER (PARTITION BY bucket ORDER BY total DESC, name) AS rank FROM (SELECT "
             "to_char(date_trunc('%s', to_timestamp((s.start_wall_ns + (e.ts_ns - s.start_ns)) / 1e9)), '%s') AS "
             "bucket, e.name, count(*) AS n, sum(e.dur_ns) AS total, count(DISTINCT e.session_id) AS sessions FROM "
             "events e JOIN sessions s ON s.workspace_id = e.workspace_id AND s.session_id = e.session_id WHERE "
             "e.workspace_id = (SELECT id FROM workspaces WHERE name = $1) AND e.type = $7 AND "
             "s.start_wall_ns IS NOT NULL AND " FILTER_SQL " GROUP BY 1, 2) g) ranked ORDER BY bucket, rank",
             by_hour ? "hour" : "day", by_hour ? "YYYY-MM-DD\"T\"HH24\"Z\"" : "YYYY-MM-DD");
    PGresult *r = query(conn, sql, 7, p.v, "summing time per name", why, why_len);
    if (!r)
        return GPUFL_EIO;
    int n = PQntuples(r);
    const char *noun = what == GPUFL__FLEET_KERNELS ? "kernel" : "scope";
    json_t *a = json ? json_array() : NULL;
    if (!json && n)
        fprintf(out, "%-14s %12s %10s %12s %9s  %s\n", by_hour ? "HOUR" : "DAY", "TIME", "COUNT", "MEAN", "SESSIONS",
                what == GPUFL__FLEET_KERNELS ? "KERNEL" : "SCOPE");
    unsigned hidden = 0;
    for (int i = 0; i < n; i++) {
        uint64_t rank = strtoull(PQgetvalue(r, i, 5), NULL, 10);
        bool last_of_bucket = i + 1 == n || strcmp(PQgetvalue(r, i, 0), PQgetvalue(r, i + 1, 0)) != 0;
        uint64_t count = strtoull(PQgetvalue(r, i, 2), NULL, 10), total = strtoull(PQgetvalue(r, i, 3), NULL, 10);
        uint64_t sessions = strtoull(PQgetvalue(r, i, 4), NULL, 10);
        if (!top || rank <= top) {
            if (json) {
                json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:I,s:I,s:I}", "bucket", PQgetvalue(r, i, 0), noun,
                                                   PQgetvalue(r, i, 1), "unit", by_hour ? "hour" : "day", "count",
                                                   (json_int_t)count, "total_ns", (json_int_t)total, "sessions",
                                                   (json_int_t)sessions));
            } else {
                char t[32], m[32];
                gpufl__format_duration(total, t, sizeof t);
                gpufl__format_duration(count ? total / count : 0, m, sizeof m);
                fprintf(out, "%-14s %12s %10" PRIu64 " %12s %9" PRIu64 "  %s\n", PQgetvalue(r, i, 0), t, count, m,
                        sessions, PQgetvalue(r, i, 1));
            }
        } else {
            hidden++;
        }
        if (last_of_bucket && hidden && !json) {
            fprintf(out, "%-14s ... and %u more %s name%s (--top 0 lists all)\n", "", hidden, noun,
                    hidden == 1 ? "" : "s");
        }
        if (last_of_bucket)
            hidden = 0;
    }
    if (json) {
        if (a)
            json_dumpf(a, out, JSON_INDENT(2));
        fputc('\n', out);
        json_decref(a);
    } else if (n == 0) {
        fprintf(out, "no %s events in the sessions selected\n", noun);
    }
    PQclear(r);
    return 0;
}
