/*
 * NDJSON log files: buffering, rotation, budget (see logfile.h).
 */
#include "sink/logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/os.h"
#include "gpufl/gpufl.h"
#include "sink/ndjson_meta.h"

#define HEADER_ROOM GFL_NDJSON_META_BOUND

size_t gpufl__logfile_write_bytes = GFL_LOGFILE_WRITE_BYTES;

static int open_current(gpufl__logfile *f)
{
    f->fd = gpufl__os->open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    f->file_bytes = 0;
    return f->fd < 0 ? -1 : 0;
}

static void add_header(gpufl__logfile *f, uint64_t now_ns)
{
    char *p = gpufl__logfile_reserve(f, HEADER_ROOM, now_ns);
    if (p)
        gpufl__logfile_commit(f, f->header(f->header_ctx, f, p, HEADER_ROOM), now_ns);
}

int gpufl__logfile_open(gpufl__logfile *f, const char *dir, const char *base, uint64_t rotate_bytes, bool durable,
                        gpufl__disk_budget *budget, gpufl__logfile_header_fn header, void *header_ctx)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    snprintf(f->dir, sizeof f->dir, "%s", dir);
    snprintf(f->base, sizeof f->base, "%s", base);
    snprintf(f->path, sizeof f->path, "%s/%s.log", dir, base);
    f->rotate_bytes = rotate_bytes;
    f->durable = durable;
    f->budget = budget;
    f->header = header;
    f->header_ctx = header_ctx;
    f->write_at = gpufl__logfile_write_bytes ? gpufl__logfile_write_bytes : GFL_LOGFILE_WRITE_BYTES;
    f->cap = f->write_at + GFL_LOGFILE_LINE_ROOM;
    f->buf = malloc(f->cap);
    if (!f->buf)
        return GPUFL_ENOMEM;
    if (open_current(f) != 0) {
        int saved = errno;
        free(f->buf);
        f->buf = NULL;
        errno = saved;
        return GPUFL_EIO;
    }
    add_header(f, 0);
    return 0;
}

/* Writing stopped before this part was ever written: it still says what it
 * is. Its header, the buffer's first line, goes out like the closing lines
 * (outside the budget, whose reserve has room for it); the rest of the
 * buffer is never written now. */
static void write_unwritten_header(gpufl__logfile *f)
{
    if (f->file_bytes != 0 || f->pending_lines == 0)
        return;
    const char *nl = memchr(f->buf, '\n', f->len);
    if (!nl)
        return;
    gpufl__logfile_write_final(f, f->buf, (size_t)(nl - f->buf) + 1);
    if (f->file_bytes) {
        f->lines_written++;
        f->pending_lines--;
    }
}

static void lose_pending(gpufl__logfile *f)
{
    write_unwritten_header(f);
    f->lines_lost += f->pending_lines;
    f->pending_lines = 0;
    f->len = 0;
}

static void rotate(gpufl__logfile *f, uint64_t now_ns)
{
    char rotated[4200];
    snprintf(rotated, sizeof rotated, "%s/%s.%u.log", f->dir, f->base, f->part + 1);
    gpufl__os->close(f->fd);
    f->fd = -1;
    if (gpufl__os->rename(f->path, rotated) != 0) {
        gpufl__disk_budget_fail(f->budget, "rotating a log file (rename)", errno, now_ns);
        return;
    }
    f->part++;
    if (open_current(f) != 0) {
        gpufl__disk_budget_fail(f->budget, "rotating a log file (open)", errno, now_ns);
        return;
    }
    add_header(f, now_ns);
}

int gpufl__logfile_flush(gpufl__logfile *f, uint64_t now_ns)
{
    if (f->len == 0)
        return f->budget->stopped ? GPUFL_EIO : 0;
    if (f->fd < 0 || !gpufl__disk_budget_allow(f->budget, f->len, now_ns)) {
        lose_pending(f);
        gpufl__logfile_note_stop(f);
        return GPUFL_EIO;
    }
    size_t done = gpufl__write_all(f->fd, f->buf, f->len);
    bool wrote = done > 0;
    if (done == f->len && f->durable && gpufl__os->fdatasync(f->fd) != 0)
        done = 0; /* not durable: treat as failed, the file is cut back below */
    if (done != f->len) {
        int err = errno ? errno : EIO;
        /* Keep the file line-complete, and never keep lines that are also
         * counted lost: drop whatever this batch wrote (a torn tail, or
         * whole lines that fdatasync could not make durable). */
        if (wrote)
            (void)gpufl__os->ftruncate(f->fd, (off_t)f->file_bytes);
        gpufl__disk_budget_fail(f->budget, "writing a log file", err, now_ns);
        lose_pending(f);
        gpufl__logfile_note_stop(f);
        return GPUFL_EIO;
    }
    f->file_bytes += f->len;
    f->bytes_total += f->len;
    f->budget->written += f->len;
    f->lines_written += f->pending_lines;
    f->pending_lines = 0;
    f->len = 0;
    if (f->file_bytes >= f->rotate_bytes)
        rotate(f, now_ns);
    return 0;
}

char *gpufl__logfile_reserve_slow(gpufl__logfile *f, size_t n, uint64_t now_ns)
{
    if (f->budget->stopped) {
        gpufl__logfile_note_stop(f);
        return NULL;
    }
    if (f->len + n > f->cap) {
        if (gpufl__logfile_flush(f, now_ns) != 0)
            return NULL;
        if (n > f->cap) {
            char *bigger = realloc(f->buf, n);
            if (!bigger)
                return NULL;
            f->buf = bigger;
            f->cap = n;
        }
    }
    return f->buf + f->len;
}

void gpufl__logfile_write_final(gpufl__logfile *f, const char *line, size_t n)
{
    if (f->fd < 0)
        return;
    if (gpufl__write_all(f->fd, line, n) == n) {
        f->file_bytes += n;
        f->bytes_total += n;
        f->budget->written += n;
        if (f->durable)
            (void)gpufl__os->fdatasync(f->fd);
    } else {
        (void)gpufl__os->ftruncate(f->fd, (off_t)f->file_bytes);
    }
}

void gpufl__logfile_note_stop(gpufl__logfile *f)
{
    const gpufl__disk_budget *b = f->budget;
    if (!b->stopped || f->stop_noted)
        return;
    f->stop_noted = true;
    write_unwritten_header(f);
    char line[GFL_NDJSON_META_BOUND];
    size_t n = gpufl__ndjson_log_stopped(line, b->stopped_at_ns, gpufl__stop_reason_name(b->stopped), b->detail);
    gpufl__logfile_write_final(f, line, n);
}

void gpufl__logfile_close(gpufl__logfile *f)
{
    if (f->fd >= 0) {
        if (f->durable)
            (void)gpufl__os->fdatasync(f->fd);
        gpufl__os->close(f->fd);
    }
    f->fd = -1;
    free(f->buf);
    f->buf = NULL;
}
