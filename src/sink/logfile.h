/*
 * One NDJSON log file of a session (device.log, scope.log, system.log):
 * a buffer of whole lines written with write(2), rotation by size, and the
 * session's disk budget.
 *
 * The file only ever holds whole lines: the buffer is cut at line ends, and
 * a write that fails part-way is truncated back to the last whole line, so a
 * reader never finds a torn line except at the very end of a file whose
 * writer was killed mid-write (see docs/FORMAT.md).
 *
 * Rotation renames base.log to base.N.log (N = 1, 2, ...) and starts a new
 * base.log whose first line is the header line again, so every file
 * describes itself and `tail -F base.log` keeps following.
 *
 * Collector thread only.
 */
#ifndef GPUFL_SINK_LOGFILE_H
#define GPUFL_SINK_LOGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink/disk_budget.h"

/* A file is written once this much is buffered. Each write() has a cost
 * of its own on top of the copy (ext4 updates the inode's times and opens a
 * journal handle per call): 1 MiB calls took 15-25 % less CPU per event
 * than 128 KiB ones (the sink on bench_writer's events, 2026-11-26), and
 * larger ones no less. But a busy log's buffer is resident memory, and
 * the recorder's whole footprint is held to 2 MiB (bench_memory): 256 KiB
 * calls kept 95 % of the 1 MiB calls' speed (6.9 against 7.3 M events/s)
 * at 1.89 MiB against 2.64. Past it the buffer has room for one more line
 * of ordinary size; a larger line grows the buffer.
 *
 * A variable, read when a file opens, so that tests of what a failing
 * disk leaves behind can make small sessions that span many writes. */
#define GFL_LOGFILE_WRITE_BYTES (256u << 10)
#define GFL_LOGFILE_LINE_ROOM (128u << 10)
extern size_t gpufl__logfile_write_bytes;

struct gpufl__logfile;
/* Formats the header line (with '\n') of a new file part into buf (which
 * has room for `cap` bytes); returns its length. */
typedef size_t (*gpufl__logfile_header_fn)(void *ctx, const struct gpufl__logfile *f, char *buf, size_t cap);

typedef struct gpufl__logfile {
    char dir[4096];
    char base[64];
    char path[4160];
    int fd;
    unsigned part;        /* files rotated away so far */
    uint64_t file_bytes;  /* bytes in the current file */
    uint64_t bytes_total; /* bytes written to every part of this log */
    char *buf;
    size_t len, cap;
    size_t write_at;        /* write once len reaches it (gpufl__logfile_write_bytes) */
    uint64_t pending_lines; /* lines in buf */
    uint64_t lines_written;
    uint64_t lines_lost; /* accepted into buf but never written */
    uint64_t rotate_bytes;
    bool durable;    /* fdatasync after each write */
    bool stop_noted; /* the log_stopped line was written */
    gpufl__disk_budget *budget;
    gpufl__logfile_header_fn header;
    void *header_ctx;
} gpufl__logfile;

/* Creates dir/base.log and writes its header line. Returns 0, or
 * GPUFL_EIO / GPUFL_ENOMEM with errno set and nothing left open. */
int gpufl__logfile_open(gpufl__logfile *f, const char *dir, const char *base, uint64_t rotate_bytes, bool durable,
                        gpufl__disk_budget *budget, gpufl__logfile_header_fn header, void *header_ctx)
    __attribute__((warn_unused_result));

/* Writes the buffer. Returns 0, or GPUFL_EIO when writing has stopped (the
 * buffered lines are counted as lost). */
int gpufl__logfile_flush(gpufl__logfile *f, uint64_t now_ns);

/* gpufl__logfile_reserve when the line does not fit or writing stopped. */
char *gpufl__logfile_reserve_slow(gpufl__logfile *f, size_t n, uint64_t now_ns);

/* Room for one line of at most n bytes, or NULL when writing has stopped
 * (the caller counts the event as lost). Inline, with commit: both run
 * once per event. */
static inline char *gpufl__logfile_reserve(gpufl__logfile *f, size_t n, uint64_t now_ns)
{
    if (__builtin_expect(!f->budget->stopped && n <= f->cap - f->len, 1))
        return f->buf + f->len;
    return gpufl__logfile_reserve_slow(f, n, now_ns);
}

/* Adds the n-byte line written at the reserved place. May write, rotate. */
static inline void gpufl__logfile_commit(gpufl__logfile *f, size_t n, uint64_t now_ns)
{
    f->len += n;
    f->pending_lines++;
    if (f->file_bytes + f->len >= f->rotate_bytes || f->len >= f->write_at)
        (void)gpufl__logfile_flush(f, now_ns);
}

/* Writes line straight to the file, outside the budget: for the closing
 * lines, which the budget keeps a reserve for. Failures are ignored. */
void gpufl__logfile_write_final(gpufl__logfile *f, const char *line, size_t n);

/* If writing stopped, adds the one "log_stopped" line that says why. */
void gpufl__logfile_note_stop(gpufl__logfile *f);

void gpufl__logfile_close(gpufl__logfile *f);

#endif /* GPUFL_SINK_LOGFILE_H */
