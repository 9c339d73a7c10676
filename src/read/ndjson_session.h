/*
 * The session facts of NDJSON logs: what their session_start, session_end
 * and log_stopped lines say, taken in reading order (files in order, lines
 * in order), whoever read the lines: the NDJSON event source as it goes, or
 * the parallel loader after its threads have parsed their line ranges.
 *
 * One owner thread.
 */
#ifndef GPUFL_READ_NDJSON_SESSION_H
#define GPUFL_READ_NDJSON_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/session_meta.h"
#include "read/ndjson_parse.h"
#include "read/strtab.h"

typedef struct gpufl__ndjson_session {
    gpufl__session_meta meta; /* its strings are "" until a line gives them */
    bool have_start;
    uint8_t channel; /* of the file part being read, from its session_start */
    char *text[5];   /* session_id, app_name, host, gpufl_version, stop detail */
} gpufl__ndjson_session;

void gpufl__ndjson_session_init(gpufl__ndjson_session *s);
void gpufl__ndjson_session_free(gpufl__ndjson_session *s);

/* Takes in a session line of kind (GFL_LINE_SESSION_START, _END,
 * _LOG_STOPPED) whose string ids are those of names. 0 or GPUFL_ENOMEM. */
int gpufl__ndjson_session_line(gpufl__ndjson_session *s, int kind, const gpufl__meta_line *l,
                               const gpufl__strtab *names) __attribute__((warn_unused_result));

#endif /* GPUFL_READ_NDJSON_SESSION_H */
