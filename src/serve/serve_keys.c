/* API keys (serve_keys.h). */
#include "serve/serve_keys.h"

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "serve/serve_pg.h"

void gpufl__serve_key_hash(const char *key, size_t n, uint8_t sha[32])
{
    unsigned len = 32;
    if (EVP_Digest(key, n, sha, &len, EVP_sha256(), NULL) != 1)
        memset(sha, 0, 32); /* matches no stored key (theirs are real digests) */
}

static int exec_params(PGconn *conn, const char *sql, int n, const char *const *v, PGresult **out, const char *what,
                       char *why, size_t why_len)
{
    PGresult *r = PQexecParams(conn, sql, n, NULL, v, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        gpufl__serve_pg_why(conn, r, what, why, why_len);
        PQclear(r);
        return GPUFL_EIO;
    }
    *out = r;
    return 0;
}

int gpufl__serve_key_add(PGconn *conn, const char *workspace, FILE *out, char *why, size_t why_len)
{
    unsigned char raw[24];
    if (RAND_bytes(raw, sizeof raw) != 1) {
        snprintf(why, why_len, "no random bytes for the key (OpenSSL's RAND_bytes failed)");
        return GPUFL_EUNSUPPORTED;
    }
    char key[GPUFL__SERVE_KEY_LEN + 1] = "gfl_";
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(key + 4 + 2 * i, 3, "%02x", raw[i]);
    uint8_t sha[32];
    gpufl__serve_key_hash(key, GPUFL__SERVE_KEY_LEN, sha);
    char hex[65], prefix[GPUFL__SERVE_KEY_PREFIX + 1];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", sha[i]);
    memcpy(prefix, key, GPUFL__SERVE_KEY_PREFIX);
    prefix[GPUFL__SERVE_KEY_PREFIX] = '\0';
    const char *v[3] = {workspace, hex, prefix};
    PGresult *r;
    if (exec_params(conn,
                    "WITH w AS (INSERT INTO workspaces (name) VALUES ($1) ON CONFLICT (name) DO UPDATE SET name = "
                    "EXCLUDED.name RETURNING id) INSERT INTO api_keys (workspace_id, key_sha256, prefix) "
                    "SELECT id, decode($2, 'hex'), $3 FROM w RETURNING id",
                    3, v, &r, "storing the key", why, why_len) != 0)
        return GPUFL_EIO;
    fprintf(out, "%s\n", key);
    fprintf(stderr,
            "gpufl serve key add: key %s (id %s) of workspace '%s': shown this once, only its SHA-256 is kept\n",
            prefix, PQgetvalue(r, 0, 0), workspace);
    PQclear(r);
    return 0;
}

int gpufl__serve_key_list(PGconn *conn, const char *workspace, bool json, FILE *out, char *why, size_t why_len)
{
    const char *v[1] = {workspace};
    PGresult *r;
    if (exec_params(conn,
                    "SELECT k.id, w.name, k.prefix, to_char(k.created_at, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), "
                    "coalesce(to_char(k.revoked_at, 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '') FROM api_keys k "
                    "JOIN workspaces w ON w.id = k.workspace_id WHERE $1::text IS NULL OR w.name = $1 ORDER BY k.id",
                    1, v, &r, "listing the keys", why, why_len) != 0)
        return GPUFL_EIO;
    if (json) {
        json_t *a = json_array();
        for (int i = 0; a && i < PQntuples(r); i++)
            json_array_append_new(
                a, json_pack("{s:I,s:s,s:s,s:s,s:s?}", "id", (json_int_t)strtoll(PQgetvalue(r, i, 0), NULL, 10),
                             "workspace", PQgetvalue(r, i, 1), "prefix", PQgetvalue(r, i, 2), "created",
                             PQgetvalue(r, i, 3), "revoked", PQgetvalue(r, i, 4)[0] ? PQgetvalue(r, i, 4) : NULL));
        if (a)
            json_dumpf(a, out, JSON_INDENT(2));
        fputc('\n', out);
        json_decref(a);
    } else {
        fprintf(out, "%-6s %-20s %-14s %-21s %s\n", "ID", "WORKSPACE", "KEY", "CREATED", "REVOKED");
        for (int i = 0; i < PQntuples(r); i++)
            fprintf(out, "%-6s %-20s %-14s %-21s %s\n", PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2),
                    PQgetvalue(r, i, 3), PQgetvalue(r, i, 4)[0] ? PQgetvalue(r, i, 4) : "-");
    }
    PQclear(r);
    return 0;
}

int gpufl__serve_key_revoke(PGconn *conn, const char *which, FILE *out, char *why, size_t why_len)
{
    bool by_id = which[0] && strspn(which, "0123456789") == strlen(which);
    const char *v[1] = {which};
    PGresult *r;
    /* a prefix names a key only when it names one */
    if (exec_params(conn,
                    by_id ? "SELECT id, revoked_at IS NOT NULL FROM api_keys WHERE id = $1::bigint"
                          : "SELECT id, revoked_at IS NOT NULL FROM api_keys WHERE prefix LIKE "
                            "replace(replace($1, '_', '\\_'), '%', '\\%') || '%'",
                    1, v, &r, "finding the key", why, why_len) != 0)
        return GPUFL_EIO;
    int n = PQntuples(r);
    if (n != 1) {
        if (n)
            snprintf(why, why_len, "'%s' names %d keys: give its id (gpufl serve key list)", which, n);
        else
            snprintf(why, why_len, "no key '%s' (gpufl serve key list shows ids and prefixes)", which);
        PQclear(r);
        return n ? GPUFL_EINVAL : GPUFL_ENOTFOUND;
    }
    char id[24];
    snprintf(id, sizeof id, "%s", PQgetvalue(r, 0, 0));
    bool revoked = PQgetvalue(r, 0, 1)[0] == 't';
    PQclear(r);
    if (revoked) {
        snprintf(why, why_len, "key %s is already revoked", id);
        return GPUFL_ENOTFOUND;
    }
    const char *idv[1] = {id};
    if (exec_params(conn, "UPDATE api_keys SET revoked_at = now() WHERE id = $1::bigint", 1, idv, &r,
                    "revoking the key", why, why_len) != 0)
        return GPUFL_EIO;
    PQclear(r);
    fprintf(out, "revoked key %s\n", id);
    return 0;
}
