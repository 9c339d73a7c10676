/*
 * One upload batch (docs/UPLOAD.md, POST .../events/stream) turned into the
 * rows the database stores: each NDJSON line is read with the project's
 * NDJSON parser (read/ndjson_parse.h), so that the server accepts exactly
 * the lines gpufl's own readers accept, and the columns queries use (type,
 * start, duration, name, device, stream) are taken out of the parsed event
 * beside the line itself. The rows come out as the text of a PostgreSQL
 * COPY (tab-separated, backslash escapes), the fastest way into the
 * database.
 *
 * A line that is not a JSON object of a known event type is rejected:
 * counted, its first GPUFL__SERVE_MAX_ERRORS reasons kept, not stored.
 *
 * Threads: one batch per worker thread at a time. Sizes: a batch is at most
 * 64 MiB of lines (the contract's limit); the COPY text is about the lines'
 * size again plus ~100 bytes a line.
 */
#ifndef GPUFL_SERVE_SERVE_BATCH_H
#define GPUFL_SERVE_SERVE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytebuf.h"

#define GPUFL__SERVE_MAX_ERRORS 20

typedef struct gpufl__serve_line_error {
    uint64_t line; /* counted from 0 within the body */
    char reason[160];
} gpufl__serve_line_error;

typedef struct gpufl__serve_batch {
    gpufl__bytebuf copy; /* COPY rows: seq, type, ts_ns, dur_ns, name, device, stream, raw */
    uint64_t lines;      /* in the body */
    uint64_t rows;       /* in copy */
    uint64_t rejected;
    uint32_t nerrors;
    gpufl__serve_line_error errors[GPUFL__SERVE_MAX_ERRORS];
} gpufl__serve_batch;

/* Reads body[0..n) (NDJSON, one event a line; a last line without '\n'
 * counts) whose first line has place first_seq, into b (zeroed or freed
 * before). Returns 0, or GPUFL_ENOMEM (b partly filled: free it). */
int gpufl__serve_batch_build(gpufl__serve_batch *b, uint64_t first_seq, const char *body, size_t n)
    __attribute__((warn_unused_result));
void gpufl__serve_batch_free(gpufl__serve_batch *b);

/* Appends s[0..n) to out as a COPY text field: backslash, tab, newline and
 * CR escaped; a byte that is not part of valid UTF-8, or NUL, becomes '?'
 * (PostgreSQL refuses both in text). 0 or GPUFL_ENOMEM. */
int gpufl__serve_copy_text(gpufl__bytebuf *out, const char *s, size_t n) __attribute__((warn_unused_result));

#endif /* GPUFL_SERVE_SERVE_BATCH_H */
