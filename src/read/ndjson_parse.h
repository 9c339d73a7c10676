/*
 * One NDJSON line of a gpufl log (docs/FORMAT.md) back into the gfl_event
 * the recorder wrote, or into the session facts of a session_start,
 * session_end or log_stopped line. It is the inverse of
 * src/format/ndjson_format.c: fields the writer leaves out (a metric the
 * driver did not report, an id that is 0) come back as 0 with their
 * validity bit clear, so formatting the event again gives the same line.
 *
 * Lines of a type this reader does not know (a newer writer) are reported
 * as such, not as errors; unknown fields of known types are ignored. A known
 * field with a value of the wrong shape, a number out of its range or a line
 * that is not one JSON object is an error.
 *
 * One owner thread per parser. Names are interned into the caller's table.
 */
#ifndef GPUFL_READ_NDJSON_PARSE_H
#define GPUFL_READ_NDJSON_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "read/strtab.h"

typedef enum gpufl__line_kind {
    GFL_LINE_UNKNOWN = 0, /* a type this reader does not know */
    GFL_LINE_EVENT = 1,
    GFL_LINE_SESSION_START = 2,
    GFL_LINE_SESSION_END = 3,
    GFL_LINE_LOG_STOPPED = 4,
} gpufl__line_kind;

/* The session facts of a session_start, session_end or log_stopped line;
 * strings are ids into the parser's table. */
typedef struct gpufl__meta_line {
    uint64_t ts_ns, wall_ns, part, format_version, lines, lost;
    int64_t pid;
    uint32_t session_id, app_name, host, channel, gpufl_version, reason, detail;
    uint64_t dropped[GFL_DROP_REASON_COUNT]; /* session_end: final losses by reason */
    bool has_dropped;                        /* ... when the line has them */
} gpufl__meta_line;

typedef struct gpufl__ndjson_parser {
    gpufl__strtab *names;
    char *scratch; /* unescaped strings */
    size_t scratch_cap;
} gpufl__ndjson_parser;

void gpufl__ndjson_parser_init(gpufl__ndjson_parser *p, gpufl__strtab *names);
void gpufl__ndjson_parser_free(gpufl__ndjson_parser *p);

/* Parses line[0..n) (without its newline). Returns a gpufl__line_kind with
 * *ev (events) or *meta (session lines) filled, or GPUFL_ECORRUPT /
 * GPUFL_ENOMEM with the problem, and its byte column, in why. */
int gpufl__ndjson_parse_line(gpufl__ndjson_parser *p, const char *line, size_t n, gfl_event *ev, gpufl__meta_line *meta,
                             char *why, size_t why_len) __attribute__((warn_unused_result));

/* A line of only spaces, tabs or CRs (a CRLF log's empty line): both
 * readers skip it rather than parse it. */
static inline bool gpufl__ndjson_blank_line(const char *line, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            return false;
    return true;
}

#endif /* GPUFL_READ_NDJSON_PARSE_H */
