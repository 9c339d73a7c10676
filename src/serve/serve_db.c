/*
 * The server's statements (serve_db.h). Rows of a batch go in by COPY into
 * a temporary table of the connection, then one INSERT ... SELECT ... ON
 * CONFLICT DO NOTHING against events' key (workspace, session, channel,
 * seq): a place stored before, by this batch's first sending or by any
 * other, is left as it was, and the INSERT's row count is what was new.
 * Everything of a batch is one transaction, so a batch is stored whole or
 * not at all.
 */
#include "serve/serve_db.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "gpufl/gpufl.h"
#include "serve/serve_pg.h"

struct gpufl__serve_db {
    char *conninfo;
    PGconn *conn; /* NULL until connected */
};

static const struct {
    const char *name, *sql;
    int nparams;
} statements[] = {
    {"key", "SELECT workspace_id FROM api_keys WHERE key_sha256 = $1 AND revoked_at IS NULL", 1},
    {"session_put",
     "INSERT INTO sessions (workspace_id, session_id, host, app, job, status, start_ns, start_wall_ns, end_wall_ns, "
     "meta) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb) ON CONFLICT (workspace_id, session_id) DO UPDATE "
     "SET host = EXCLUDED.host, app = EXCLUDED.app, job = EXCLUDED.job, status = EXCLUDED.status, start_ns = "
     "EXCLUDED.start_ns, start_wall_ns = EXCLUDED.start_wall_ns, end_wall_ns = EXCLUDED.end_wall_ns, meta = "
     "EXCLUDED.meta, updated_at = now() RETURNING (xmax = 0)",
     10},
    {"session_lock", "SELECT 1 FROM sessions WHERE workspace_id = $1 AND session_id = $2 FOR KEY SHARE", 2},
    {"ingest",
     "INSERT INTO events (workspace_id, session_id, channel, seq, type, ts_ns, dur_ns, name, device, stream, raw) "
     "SELECT $1, $2, $3, seq, type, ts_ns, dur_ns, name, device, stream, raw FROM ingest_rows "
     "ON CONFLICT DO NOTHING",
     3},
    {"stored",
     "SELECT channel, count(*) FROM events WHERE workspace_id = $1 AND session_id = $2 AND "
     "((channel = 0 AND seq < $3) OR (channel = 1 AND seq < $4) OR (channel = 2 AND seq < $5)) GROUP BY channel",
     5},
};

gpufl__serve_db *gpufl__serve_db_new(const char *conninfo)
{
    gpufl__serve_db *db = calloc(1, sizeof *db);
    if (db && !(db->conninfo = strdup(conninfo))) {
        free(db);
        db = NULL;
    }
    return db;
}

void gpufl__serve_db_free(gpufl__serve_db *db)
{
    if (!db)
        return;
    PQfinish(db->conn);
    free(db->conninfo);
    free(db);
}

static void drop(gpufl__serve_db *db)
{
    PQfinish(db->conn);
    db->conn = NULL;
}

static int connect_db(gpufl__serve_db *db, char *why, size_t why_len)
{
    drop(db);
    PGconn *c = gpufl__serve_pg_connect(db->conninfo, why, why_len);
    if (!c)
        return GPUFL_EIO;
    if (gpufl__serve_pg_exec(c,
                             "CREATE TEMP TABLE ingest_rows (seq bigint, type text, ts_ns bigint, dur_ns bigint, "
                             "name text, device integer, stream bigint, raw text) ON COMMIT DELETE ROWS",
                             why, why_len) != 0) {
        PQfinish(c);
        return GPUFL_EIO;
    }
    for (size_t i = 0; i < sizeof statements / sizeof statements[0]; i++) {
        PGresult *r = PQprepare(c, statements[i].name, statements[i].sql, statements[i].nparams, NULL);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            /* the schema is missing or older: say so rather than only the SQL error */
            gpufl__serve_pg_why(c, r, "preparing the server's statements (is the schema migrated?)", why, why_len);
            PQclear(r);
            PQfinish(c);
            return GPUFL_EIO;
        }
        PQclear(r);
    }
    db->conn = c;
    return 0;
}

int gpufl__serve_db_ready(gpufl__serve_db *db, bool check, char *why, size_t why_len)
{
    if (db->conn && PQstatus(db->conn) != CONNECTION_OK)
        drop(db);
    if (!db->conn)
        return connect_db(db, why, why_len);
    if (check && gpufl__serve_pg_exec(db->conn, "SELECT 1", why, why_len) != 0) {
        drop(db);
        return connect_db(db, why, why_len);
    }
    return 0;
}

/* The error of a failed statement: GPUFL_ECORRUPT for data the database
 * refuses (SQLSTATE class 22: bad text, bad JSON), GPUFL_EIO otherwise. */
static int failed(gpufl__serve_db *db, PGresult *r, const char *what, char *why, size_t why_len)
{
    gpufl__serve_pg_why(db->conn, r, what, why, why_len);
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    PQclear(r);
    return state && !strncmp(state, "22", 2) ? GPUFL_ECORRUPT : GPUFL_EIO;
}

static PGresult *run(gpufl__serve_db *db, const char *name, int n, const char *const *values, const int *lengths,
                     const int *formats)
{
    return PQexecPrepared(db->conn, name, n, values, lengths, formats, 0);
}

int gpufl__serve_db_key_workspace(gpufl__serve_db *db, const uint8_t sha[32], int64_t *workspace, char *why,
                                  size_t why_len)
{
    const char *v[1] = {(const char *)sha};
    int len[1] = {32}, fmt[1] = {1};
    PGresult *r = run(db, "key", 1, v, len, fmt);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return failed(db, r, "looking up the key", why, why_len);
    int rc = PQntuples(r) ? 0 : GPUFL_ENOTFOUND;
    if (rc == 0)
        *workspace = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return rc;
}

int gpufl__serve_db_session_put(gpufl__serve_db *db, int64_t workspace, const gpufl__serve_session *s, bool *created,
                                char *why, size_t why_len)
{
    char ws[24], start[24], wall[24], end[24];
    snprintf(ws, sizeof ws, "%" PRId64, workspace);
    snprintf(start, sizeof start, "%" PRId64, s->start_ns);
    snprintf(wall, sizeof wall, "%" PRId64, s->start_wall_ns);
    snprintf(end, sizeof end, "%" PRId64, s->end_wall_ns);
    const char *v[10] = {ws,
                         s->session_id,
                         s->host,
                         s->app,
                         s->job,
                         s->status,
                         s->has_start ? start : NULL,
                         s->has_start ? wall : NULL,
                         s->has_end ? end : NULL,
                         s->json};
    PGresult *r = run(db, "session_put", 10, v, NULL, NULL);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return failed(db, r, "storing the session", why, why_len);
    *created = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    return 0;
}

static void rollback(gpufl__serve_db *db)
{
    char ignored[256];
    if (PQstatus(db->conn) == CONNECTION_OK)
        if (gpufl__serve_pg_exec(db->conn, "ROLLBACK", ignored, sizeof ignored) != 0)
            ignored[0] = '\0'; /* the connection is gone: nothing to roll back */
}

/* COPY of b's rows into ingest_rows. */
static int copy_rows(gpufl__serve_db *db, const gpufl__serve_batch *b, char *why, size_t why_len)
{
    PGresult *r = PQexec(db->conn, "COPY ingest_rows FROM STDIN");
    if (PQresultStatus(r) != PGRES_COPY_IN)
        return failed(db, r, "storing the batch", why, why_len);
    PQclear(r);
    const size_t piece = 1u << 20;
    for (size_t at = 0; at < b->copy.len; at += piece) {
        size_t n = b->copy.len - at < piece ? b->copy.len - at : piece;
        if (PQputCopyData(db->conn, (const char *)b->copy.p + at, (int)n) != 1)
            return failed(db, NULL, "storing the batch", why, why_len);
    }
    if (PQputCopyEnd(db->conn, NULL) != 1)
        return failed(db, NULL, "storing the batch", why, why_len);
    r = PQgetResult(db->conn);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : failed(db, r, "storing the batch", why, why_len);
    if (rc == 0)
        PQclear(r);
    while ((r = PQgetResult(db->conn)))
        PQclear(r);
    return rc;
}

/* 0 when the workspace has announced the session (and, in a transaction,
 * holds its row: FOR KEY SHARE); GPUFL_ENOTFOUND with why saying so (and `hint`) when it
 * has not; the database's error otherwise. */
static int session_known(gpufl__serve_db *db, const char *ws, const char *session_id, const char *hint, char *why,
                         size_t why_len)
{
    const char *key[2] = {ws, session_id};
    PGresult *r = run(db, "session_lock", 2, key, NULL, NULL);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return failed(db, r, "finding the session", why, why_len);
    bool exists = PQntuples(r) > 0;
    PQclear(r);
    if (!exists) {
        snprintf(why, why_len, "session '%s' was not announced%s", session_id, hint);
        return GPUFL_ENOTFOUND;
    }
    return 0;
}

static int ingest(gpufl__serve_db *db, const char *ws, const char *session_id, int channel, const gpufl__serve_batch *b,
                  uint64_t *accepted, char *why, size_t why_len)
{
    int rc = session_known(db, ws, session_id, " (POST .../sessions first)", why, why_len);
    if (rc != 0)
        return rc;
    *accepted = 0;
    if (b->rows == 0)
        return 0;
    rc = copy_rows(db, b, why, why_len);
    if (rc != 0)
        return rc;
    char ch[8];
    snprintf(ch, sizeof ch, "%d", channel);
    const char *v[3] = {ws, session_id, ch};
    PGresult *r = run(db, "ingest", 3, v, NULL, NULL);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return failed(db, r, "storing the batch", why, why_len);
    *accepted = strtoull(PQcmdTuples(r), NULL, 10);
    PQclear(r);
    return 0;
}

int gpufl__serve_db_ingest(gpufl__serve_db *db, int64_t workspace, const char *session_id, int channel,
                           const gpufl__serve_batch *b, uint64_t *accepted, char *why, size_t why_len)
{
    char ws[24];
    snprintf(ws, sizeof ws, "%" PRId64, workspace);
    if (gpufl__serve_pg_exec(db->conn, "BEGIN", why, why_len) != 0)
        return GPUFL_EIO;
    int rc = ingest(db, ws, session_id, channel, b, accepted, why, why_len);
    if (rc == 0)
        rc = gpufl__serve_pg_exec(db->conn, "COMMIT", why, why_len);
    else
        rollback(db);
    if (rc != 0)
        *accepted = 0;
    return rc;
}

int gpufl__serve_db_stored(gpufl__serve_db *db, int64_t workspace, const char *session_id, const uint64_t want[3],
                           uint64_t stored[3], char *why, size_t why_len)
{
    char ws[24], w[3][24];
    snprintf(ws, sizeof ws, "%" PRId64, workspace);
    for (int c = 0; c < 3; c++) {
        snprintf(w[c], sizeof w[c], "%" PRIu64, want[c] > INT64_MAX ? (uint64_t)INT64_MAX : want[c]);
        stored[c] = 0;
    }
    int rc = session_known(db, ws, session_id, "", why, why_len);
    if (rc != 0)
        return rc;
    const char *v[5] = {ws, session_id, w[0], w[1], w[2]};
    PGresult *r = run(db, "stored", 5, v, NULL, NULL);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return failed(db, r, "counting the session's events", why, why_len);
    for (int i = 0; i < PQntuples(r); i++) {
        int c = atoi(PQgetvalue(r, i, 0));
        if (c >= 0 && c < 3)
            stored[c] = strtoull(PQgetvalue(r, i, 1), NULL, 10);
    }
    PQclear(r);
    return 0;
}
