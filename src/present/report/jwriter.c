/*
 * The report JSON writer (see jwriter.h).
 */
#include "present/report/jwriter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format/json_out.h"
#include "gpufl/gpufl.h"

void gpufl__jw_init(jw *w)
{
    memset(w, 0, sizeof *w);
    w->first[0] = true;
}

void gpufl__jw_free(jw *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

/* Room for `need` more bytes and a NUL; false after a failure. */
static bool reserve(jw *w, size_t need)
{
    if (w->failed)
        return false;
    if (w->n + need + 1 <= w->cap)
        return true;
    size_t cap = w->cap ? w->cap : 16384;
    while (cap < w->n + need + 1) {
        if (cap > SIZE_MAX / 2) {
            w->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *b = realloc(w->buf, cap);
    if (!b) {
        w->failed = true;
        return false;
    }
    w->buf = b;
    w->cap = cap;
    return true;
}

/* The separator, newline and indentation before a value, and its key.
 * Returns where the value goes, or NULL after a failure. extra: bytes the
 * value needs. */
static char *member(jw *w, const char *key, size_t extra)
{
    size_t klen = key ? strlen(key) : 0;
    if (!reserve(w, 2 + 2 * (size_t)w->depth + (key ? GFL_JSTR_BOUND(klen) + 2 : 0) + extra))
        return NULL;
    char *p = w->buf + w->n;
    if (w->depth > 0) {
        if (!w->first[w->depth])
            *p++ = ',';
        *p++ = '\n';
        for (int i = 0; i < w->depth; i++) {
            *p++ = ' ';
            *p++ = ' ';
        }
    }
    w->first[w->depth] = false;
    if (key) {
        p = gpufl__jput_str(p, key, klen);
        *p++ = ':';
        *p++ = ' ';
    }
    return p;
}

static void commit(jw *w, char *end) { w->n = (size_t)(end - w->buf); }

static void open_container(jw *w, const char *key, char bracket)
{
    char *p = member(w, key, 1);
    if (!p)
        return;
    *p++ = bracket;
    commit(w, p);
    if (w->depth + 1 >= JW_MAX_DEPTH) {
        w->failed = true;
        return;
    }
    w->first[++w->depth] = true;
}

static void close_container(jw *w, char bracket)
{
    if (!reserve(w, 2 + 2 * (size_t)w->depth))
        return;
    bool empty = w->first[w->depth];
    w->depth--;
    char *p = w->buf + w->n;
    if (!empty) {
        *p++ = '\n';
        for (int i = 0; i < w->depth; i++) {
            *p++ = ' ';
            *p++ = ' ';
        }
    }
    *p++ = bracket;
    commit(w, p);
}

void gpufl__jw_obj(jw *w, const char *key) { open_container(w, key, '{'); }
void gpufl__jw_obj_end(jw *w) { close_container(w, '}'); }
void gpufl__jw_arr(jw *w, const char *key) { open_container(w, key, '['); }
void gpufl__jw_arr_end(jw *w) { close_container(w, ']'); }

void gpufl__jw_u64(jw *w, const char *key, uint64_t v)
{
    char *p = member(w, key, 20);
    if (p)
        commit(w, gpufl__jput_u64(p, v));
}

void gpufl__jw_i64(jw *w, const char *key, int64_t v)
{
    char *p = member(w, key, 21);
    if (p)
        commit(w, gpufl__jput_i64(p, v));
}

void gpufl__jw_real(jw *w, const char *key, double v, unsigned decimals)
{
    if (decimals > 9)
        decimals = 9;
    double scale = 1.0;
    for (unsigned i = 0; i < decimals; i++)
        scale *= 10.0;
    double scaled = isfinite(v) ? fabs(v) * scale + 0.5 : 0.0;
    /* beyond 2^63 the value has no decimals worth writing: clamp */
    uint64_t u = scaled < 9.2e18 ? (uint64_t)scaled : (uint64_t)9.2e18;
    char *p = member(w, key, 22);
    if (!p)
        return;
    if (v < 0 && u)
        *p++ = '-';
    commit(w, gpufl__jput_fixed(p, u, decimals));
}

void gpufl__jw_bool(jw *w, const char *key, bool v)
{
    char *p = member(w, key, 5);
    if (p)
        commit(w, v ? GFL_JLIT(p, "true") : GFL_JLIT(p, "false"));
}

void gpufl__jw_null(jw *w, const char *key)
{
    char *p = member(w, key, 4);
    if (p)
        commit(w, GFL_JLIT(p, "null"));
}

void gpufl__jw_str(jw *w, const char *key, const char *s)
{
    if (!s) {
        gpufl__jw_null(w, key);
        return;
    }
    size_t n = strlen(s);
    char *p = member(w, key, GFL_JSTR_BOUND(n));
    if (p)
        commit(w, gpufl__jput_str(p, s, n));
}

int gpufl__jw_write(jw *w, FILE *out)
{
    int rc = gpufl__jw_finish(w);
    if (rc == 0 && (fwrite(w->buf, 1, w->n, out) != w->n || fflush(out) != 0))
        rc = GPUFL_EIO;
    gpufl__jw_free(w);
    return rc;
}

int gpufl__jw_finish(jw *w)
{
    if (w->depth != 0)
        return GPUFL_EINVAL; /* an unclosed container: a bug of the caller */
    if (!reserve(w, 1))
        return GPUFL_ENOMEM;
    w->buf[w->n++] = '\n';
    w->buf[w->n] = '\0';
    return 0;
}
