/*
 * An export's output file (see export_out.h).
 */
#include "present/export/export_out.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/os.h"
#include "gpufl/gpufl.h"

int gpufl__xout_create_tmp(const char *path, char **path_copy, char **tmp, int *fd, char *err, size_t err_len)
{
    size_t n = strlen(path);
    char *p = strdup(path), *t = malloc(n + sizeof ".tmp.XXXXXX");
    if (!p || !t) {
        snprintf(err, err_len, "cannot write %s: out of memory", path);
        free(p);
        free(t);
        return GPUFL_ENOMEM;
    }
    memcpy(t, path, n);
    memcpy(t + n, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int f = mkostemp(t, O_CLOEXEC);
    if (f < 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        free(p);
        free(t);
        return GPUFL_EIO;
    }
    /* mkstemp makes 0600; an output is an ordinary file, readable as the
     * umask allows (a failure only leaves it private) */
    mode_t mask = umask(022);
    umask(mask);
    (void)!fchmod(f, 0666 & ~mask);
    *path_copy = p;
    *tmp = t;
    *fd = f;
    return 0;
}

int gpufl__xout_open(gpufl__xout *o, const char *path, char *err, size_t err_len)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    return gpufl__xout_create_tmp(path, &o->path, &o->tmp, &o->fd, err, err_len) == 0 ? 0 : -1;
}

uint8_t *gpufl__xout_grow(gpufl__xout *o, size_t n)
{
    if (o->err)
        return NULL;
    size_t cap = o->cap ? o->cap : GPUFL__XOUT_FLUSH + (GPUFL__XOUT_FLUSH >> 2);
    while (cap - o->len < n) {
        if (cap > SIZE_MAX / 2) {
            o->err = ENOMEM;
            return NULL;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(o->p, cap);
    if (!p) {
        o->err = ENOMEM;
        return NULL;
    }
    o->p = p;
    o->cap = cap;
    return o->p + o->len;
}

void gpufl__xout_u64(gpufl__xout *o, uint64_t v)
{
    char buf[24], *e = buf + sizeof buf, *s = e;
    do {
        *--s = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    gpufl__xout_write(o, s, (size_t)(e - s));
}

void gpufl__xout_i64(gpufl__xout *o, int64_t v)
{
    if (v < 0) {
        gpufl__xout_char(o, '-');
        gpufl__xout_u64(o, (uint64_t)0 - (uint64_t)v);
    } else {
        gpufl__xout_u64(o, (uint64_t)v);
    }
}

void gpufl__xout_us(gpufl__xout *o, uint64_t ns)
{
    gpufl__xout_u64(o, ns / 1000);
    unsigned frac = (unsigned)(ns % 1000);
    char buf[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10), (char)('0' + frac % 10)};
    gpufl__xout_write(o, buf, 4);
}

void gpufl__xout_double(gpufl__xout *o, double v)
{
    if (!isfinite(v)) {
        gpufl__xout_char(o, '0');
        return;
    }
    if (v == (double)(int64_t)v && fabs(v) < 9e15) {
        gpufl__xout_i64(o, (int64_t)v);
        return;
    }
    static const int precision[] = {6, 15, 17};
    char buf[40];
    for (int i = 0; i < 3; i++) {
        int n = snprintf(buf, sizeof buf, "%.*g", precision[i], v);
        if (strtod(buf, NULL) == v || i == 2) {
            gpufl__xout_write(o, buf, (size_t)n);
            return;
        }
    }
}

void gpufl__xout_flush(gpufl__xout *o)
{
    if (o->err || o->len == 0)
        return;
    errno = 0;
    if (gpufl__write_all(o->fd, o->p, o->len) != o->len) {
        o->err = errno ? errno : EIO;
        return;
    }
    o->bytes += o->len;
    o->len = 0;
}

static void release(gpufl__xout *o)
{
    free(o->p);
    free(o->path);
    free(o->tmp);
    o->p = NULL;
    o->path = o->tmp = NULL;
    o->len = o->cap = 0;
    o->fd = -1;
}

int gpufl__xout_close(gpufl__xout *o, char *err, size_t err_len)
{
    gpufl__xout_flush(o);
    if (close(o->fd) != 0 && !o->err)
        o->err = errno;
    o->fd = -1;
    free(o->p);
    o->p = NULL;
    o->len = o->cap = 0;
    if (o->err) {
        snprintf(err, err_len, "cannot write %s: %s", o->path, strerror(o->err));
        gpufl__xout_abort(o);
        return -1;
    }
    return 0;
}

int gpufl__xout_rename(gpufl__xout *o, char *err, size_t err_len)
{
    if (rename(o->tmp, o->path) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", o->path, strerror(errno));
        gpufl__xout_abort(o);
        return -1;
    }
    release(o);
    return 0;
}

int gpufl__xout_commit(gpufl__xout *o, char *err, size_t err_len)
{
    if (gpufl__xout_close(o, err, err_len) != 0)
        return -1;
    return gpufl__xout_rename(o, err, err_len);
}

int gpufl__xout_finish(gpufl__xout *o, int rc, uint64_t *bytes, char *err, size_t err_len)
{
    if (rc == GPUFL_ENOMEM || o->err == ENOMEM) {
        snprintf(err, err_len, "cannot write %s: out of memory", o->path);
        gpufl__xout_abort(o);
        return GPUFL_ENOMEM;
    }
    gpufl__xout_flush(o);
    *bytes = o->bytes;
    if (gpufl__xout_commit(o, err, err_len) != 0)
        return GPUFL_EIO;
    return 0;
}

void gpufl__xout_abort(gpufl__xout *o)
{
    if (o->fd >= 0)
        close(o->fd);
    if (o->tmp)
        unlink(o->tmp);
    release(o);
}
