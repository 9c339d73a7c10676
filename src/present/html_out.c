/*
 * The HTML report's output file and escapes (see html_out.h). Written
 * through stdio with a 1 MiB buffer: the page is a few megabytes at most
 * (the data it embeds is capped), so nothing here needs to be faster.
 */
#include "present/html_out.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpufl/gpufl.h"

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
    size_t n = strlen(path);
    o->path = strdup(path);
    o->tmp = malloc(n + sizeof ".tmp.XXXXXX");
    if (!o->path || !o->tmp) {
        snprintf(err, err_len, "cannot write %s: out of memory", path);
        release(o);
        return GPUFL_ENOMEM;
    }
    memcpy(o->tmp, path, n);
    memcpy(o->tmp + n, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        release(o);
        return GPUFL_EIO;
    }
    /* mkstemp makes 0600; a report is an ordinary file, readable as the
     * umask allows (a failure only leaves it private) */
    mode_t mask = umask(022);
    umask(mask);
    (void)!fchmod(fd, 0666 & ~mask);
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

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when the
 * bytes there are not one (a stray continuation byte, a truncated or
 * overlong sequence, a surrogate, a code point above U+10FFFF). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

void gpufl__hout_text(gpufl__hout *o, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    while (*p) {
        const char *rep = NULL;
        size_t n = 1;
        switch (*p) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n') {
                rep = REPLACEMENT; /* control characters are not allowed in HTML text */
            } else if (*p >= 0x80) {
                n = utf8_len(p);
                if (n == 0) {
                    rep = REPLACEMENT;
                    n = 1;
                }
            }
        }
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

void gpufl__hout_json_str(gpufl__hout *o, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    put(o, "\"", 1);
    while (*p) {
        char esc[8];
        const char *rep = NULL;
        size_t n = 1;
        if (*p == '"') {
            rep = "\\\"";
        } else if (*p == '\\') {
            rep = "\\\\";
        } else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') {
            /* <, > and &: so that "</script>" and "<!--" cannot appear */
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            rep = esc;
        } else if (*p >= 0x80) {
            n = utf8_len(p);
            if (n == 0) {
                rep = "\\ufffd";
                n = 1;
            } else if (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
                /* U+2028, U+2029: valid JSON, but line breaks to older JS parsers */
                rep = p[2] == 0xa8 ? "\\u2028" : "\\u2029";
            }
        }
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
