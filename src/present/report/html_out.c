/*
 * The HTML report's output file and escapes (see html_out.h). Written
 * through stdio with a 1 MiB buffer: the page is a few megabytes at most
 * (the data it embeds is capped), so nothing here needs to be faster.
 */
#include "present/report/html_out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/utf8.h"
#include "gpufl/gpufl.h"
#include "present/export/export_out.h"

#define HOUT_BUFFER (1u << 20)

static void release(gpufl__hout *o)
{
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

int gpufl__hout_open(gpufl__hout *o, const char *path, char *err, size_t err_len)
{
    memset(o, 0, sizeof *o);
    int fd;
    int rc = gpufl__xout_create_tmp(path, &o->path, &o->tmp, &fd, err, err_len);
    if (rc != 0)
        return rc;
    o->f = fdopen(fd, "w");
    if (!o->f) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        release(o);
        return GPUFL_ENOMEM;
    }
    setvbuf(o->f, NULL, _IOFBF, HOUT_BUFFER);
    return 0;
}

static void put(gpufl__hout *o, const char *s, size_t n)
{
    if (o->err || n == 0)
        return;
    if (fwrite(s, 1, n, o->f) != n)
        o->err = errno ? errno : EIO;
}

void gpufl__hout_raw(gpufl__hout *o, const char *s) { put(o, s, strlen(s)); }

void gpufl__hout_printf(gpufl__hout *o, const char *fmt, ...)
{
    if (o->err)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(o->f, fmt, ap) < 0)
        o->err = errno ? errno : EIO;
    va_end(ap);
}

void gpufl__hout_u64(gpufl__hout *o, uint64_t v) { gpufl__hout_printf(o, "%" PRIu64, v); }
void gpufl__hout_i64(gpufl__hout *o, int64_t v) { gpufl__hout_printf(o, "%" PRId64, v); }

/* The length of the valid UTF-8 sequence at the NUL-terminated s, 0 when
 * there is none: the check stops at the first byte that is not a
 * continuation, so it never reads past the terminating NUL. */
static size_t utf8_len(const unsigned char *s) { return gpufl__utf8_seq(s, 4); }

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* What an escape writes for the character at p: a replacement, or NULL to
 * copy it as it is; *n: the bytes it covers (1 unless a UTF-8 sequence).
 * esc: room for a replacement made up on the spot. */
typedef const char *escape_rule(const unsigned char *p, size_t *n, char esc[8]);

static const char *html_text_rule(const unsigned char *p, size_t *n, char esc[8])
{
    (void)esc;
    switch (*p) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return "&#39;";
    default:
        if (*p < 0x20 && *p != '\t' && *p != '\n')
            return REPLACEMENT; /* control characters are not allowed in HTML text */
        if (*p >= 0x80) {
            *n = utf8_len(p);
            if (*n == 0) {
                *n = 1;
                return REPLACEMENT;
            }
        }
        return NULL;
    }
}

static const char *json_str_rule(const unsigned char *p, size_t *n, char esc[8])
{
    if (*p == '"')
        return "\\\"";
    if (*p == '\\')
        return "\\\\";
    if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') {
        /* <, > and &: so that "</script>" and "<!--" cannot appear */
        snprintf(esc, 8, "\\u%04x", *p);
        return esc;
    }
    if (*p >= 0x80) {
        *n = utf8_len(p);
        if (*n == 0) {
            *n = 1;
            return "\\ufffd";
        }
        if (*n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
            /* U+2028, U+2029: valid JSON, but line breaks to older JS parsers */
            return p[2] == 0xa8 ? "\\u2028" : "\\u2029";
    }
    return NULL;
}

/* Writes s with the characters rule replaces replaced, the runs between
 * them in one write each. */
static void put_escaped(gpufl__hout *o, const char *s, escape_rule *rule)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    while (*p) {
        char esc[8];
        size_t n = 1;
        const char *rep = rule(p, &n, esc);
        if (rep) {
            put(o, (const char *)run, (size_t)(p - run));
            put(o, rep, strlen(rep));
            p += n;
            run = p;
        } else {
            p += n;
        }
    }
    put(o, (const char *)run, (size_t)(p - run));
}

void gpufl__hout_text(gpufl__hout *o, const char *s) { put_escaped(o, s, html_text_rule); }

void gpufl__hout_json_str(gpufl__hout *o, const char *s)
{
    put(o, "\"", 1);
    put_escaped(o, s, json_str_rule);
    put(o, "\"", 1);
}

int gpufl__hout_commit(gpufl__hout *o, char *err, size_t err_len)
{
    int e = o->err;
    if (fflush(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    if (!e && rename(o->tmp, o->path) != 0)
        e = errno ? errno : EIO;
    if (e) {
        snprintf(err, err_len, "cannot write %s: %s", o->path, strerror(e));
        unlink(o->tmp);
        release(o);
        return e == ENOMEM ? GPUFL_ENOMEM : GPUFL_EIO;
    }
    release(o);
    return 0;
}

void gpufl__hout_abort(gpufl__hout *o)
{
    if (o->f) {
        fclose(o->f);
        unlink(o->tmp);
    }
    release(o);
}

const char *gpufl__hfmt_ns(char *buf, size_t len, uint64_t ns)
{
    if (ns < 1000)
        snprintf(buf, len, "%" PRIu64 " ns", ns);
    else if (ns < 1000000)
        snprintf(buf, len, "%.2f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.3f s", (double)ns / 1e9);
    return buf;
}

const char *gpufl__hfmt_bytes(char *buf, size_t len, uint64_t bytes)
{
    static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", bytes);
        return buf;
    }
    double v = (double)bytes / 1024;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.2f %s", v, unit[u]);
    return buf;
}
