/*
 * An export's output file: written to a temporary beside its final name
 * and renamed over it only when complete, so a failed or interrupted export
 * never leaves a half-written file under the name asked for (a crash may
 * leave the temporary, `<name>.tmp.XXXXXX`). Not fsync'ed: an export can be
 * made again, and syncing hundreds of megabytes would double its time.
 *
 * The writers append into one growable buffer (gpufl__xout_room) and call
 * gpufl__xout_flush_some() between records; a Perfetto packet is built in
 * place (its lengths patched afterwards), so the buffer is only written out
 * between records. Single-threaded.
 */
#ifndef GPUFL_PRESENT_EXPORT_EXPORT_OUT_H
#define GPUFL_PRESENT_EXPORT_EXPORT_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GPUFL__XOUT_FLUSH (1u << 20) /* bytes buffered before a write() */

typedef struct gpufl__xout {
    uint8_t *p;
    size_t len, cap;
    int fd;
    int err;        /* errno of the first failure (ENOMEM included); 0 while all is well */
    uint64_t bytes; /* written to the file so far */
    char *path, *tmp;
} gpufl__xout;

/* Creates the temporary `<path>.tmp.XXXXXX` beside path, readable as the
 * umask allows: 0 with its descriptor in *fd and malloc'd copies of path
 * and of the temporary's name, or GPUFL_ENOMEM / GPUFL_EIO with a message
 * naming path in err (nothing created, nothing set). The HTML report's
 * output shares it. */
int gpufl__xout_create_tmp(const char *path, char **path_copy, char **tmp, int *fd, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Creates the temporary for path. Returns 0, or -1 with a message naming
 * path in err (nothing created). */
int gpufl__xout_open(gpufl__xout *o, const char *path, char *err, size_t err_len) __attribute__((warn_unused_result));

/* Room for n more bytes at o->p + o->len, or NULL (o->err = ENOMEM; every
 * later write is dropped and commit fails). */
uint8_t *gpufl__xout_grow(gpufl__xout *o, size_t n);
static inline uint8_t *gpufl__xout_room(gpufl__xout *o, size_t n)
{
    if (o->cap - o->len >= n)
        return o->p + o->len;
    return gpufl__xout_grow(o, n);
}

static inline void gpufl__xout_write(gpufl__xout *o, const void *data, size_t n)
{
    uint8_t *p = gpufl__xout_room(o, n);
    if (p) {
        memcpy(p, data, n);
        o->len += n;
    }
}

static inline void gpufl__xout_str(gpufl__xout *o, const char *s) { gpufl__xout_write(o, s, strlen(s)); }

static inline void gpufl__xout_char(gpufl__xout *o, char c)
{
    uint8_t *p = gpufl__xout_room(o, 1);
    if (p) {
        *p = (uint8_t)c;
        o->len++;
    }
}

/* Decimal digits of v. */
void gpufl__xout_u64(gpufl__xout *o, uint64_t v);
void gpufl__xout_i64(gpufl__xout *o, int64_t v);
/* ns as microseconds with three decimals ("1234.567"), exactly. */
void gpufl__xout_us(gpufl__xout *o, uint64_t ns);
/* A double as the shortest of %.6g-like text that reads back (%.17g at worst). */
void gpufl__xout_double(gpufl__xout *o, double v);

/* Writes the buffer out once it holds GPUFL__XOUT_FLUSH bytes or more. */
void gpufl__xout_flush(gpufl__xout *o);
static inline void gpufl__xout_flush_some(gpufl__xout *o)
{
    if (o->len >= GPUFL__XOUT_FLUSH)
        gpufl__xout_flush(o);
}

/* Writes what is buffered, closes, and renames the temporary to the final
 * name. Returns 0, or -1 with a message naming the file in err and the
 * temporary removed. Either way o is released. */
int gpufl__xout_commit(gpufl__xout *o, char *err, size_t err_len) __attribute__((warn_unused_result));

/* The end of a one-file export whose writer returned rc: when memory ran
 * out (rc GPUFL_ENOMEM, or the buffer could not grow) removes the
 * temporary and returns GPUFL_ENOMEM with "cannot write PATH: out of
 * memory" in err; otherwise sets *bytes to the file's size and commits:
 * 0, or GPUFL_EIO with commit's message. Either way o is released. */
int gpufl__xout_finish(gpufl__xout *o, int rc, uint64_t *bytes, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* commit in two steps, for outputs of several files that appear together:
 * close writes what is buffered and closes (on failure: -1, message, the
 * temporary removed, o released); rename then puts the complete temporary
 * under its name (on failure: -1, message, temporary removed); after
 * close, abort still removes the temporary. */
int gpufl__xout_close(gpufl__xout *o, char *err, size_t err_len) __attribute__((warn_unused_result));
int gpufl__xout_rename(gpufl__xout *o, char *err, size_t err_len) __attribute__((warn_unused_result));

/* Closes and removes the temporary; o is released. */
void gpufl__xout_abort(gpufl__xout *o);

#endif /* GPUFL_PRESENT_EXPORT_EXPORT_OUT_H */
