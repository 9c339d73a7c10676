/*
 * API keys per workspace (`gpufl serve key add|list|revoke`, and the
 * server's check of each request's bearer key). A key is 24 random bytes
 * from OpenSSL's generator, shown once as "gfl_" and 48 hex digits; the
 * database keeps only its SHA-256 and its first 12 characters (to tell keys
 * apart in a list), so a stolen database holds no usable key. A key's hash
 * is looked up, never compared byte by byte in C, so there is no timing to
 * learn from.
 */
#ifndef GPUFL_SERVE_SERVE_KEYS_H
#define GPUFL_SERVE_SERVE_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libpq-fe.h>

#define GPUFL__SERVE_KEY_LEN 52    /* "gfl_" + 48 hex digits */
#define GPUFL__SERVE_KEY_PREFIX 12 /* characters kept in clear */

/* SHA-256 of key[0..n). */
void gpufl__serve_key_hash(const char *key, size_t n, uint8_t sha[32]);

/* Makes a key for workspace (created when new) and writes it to out,
 * once, with a line of what it is for. 0; GPUFL_EIO (database, with why);
 * GPUFL_EUNSUPPORTED (no random bytes). */
int gpufl__serve_key_add(PGconn *conn, const char *workspace, FILE *out, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* Lists the keys (of workspace, or all when NULL): id, workspace, prefix,
 * created, revoked. 0 or GPUFL_EIO. */
int gpufl__serve_key_list(PGconn *conn, const char *workspace, bool json, FILE *out, char *why, size_t why_len)
    __attribute__((warn_unused_result));

/* Revokes the key whose id (digits) or prefix ("gfl_...") is which. 0;
 * GPUFL_ENOTFOUND (none, or already revoked: why says which); GPUFL_EINVAL
 * (a prefix shared by several keys); GPUFL_EIO. */
int gpufl__serve_key_revoke(PGconn *conn, const char *which, FILE *out, char *why, size_t why_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_SERVE_SERVE_KEYS_H */
