/*
 * Writing events that were read from a file back out as NDJSON logs, as
 * `gpufl convert` does: a session directory's device.log, scope.log and
 * system.log, each with the session_start line of the trace read, its
 * events in the order read, and its log_stopped and session_end lines.
 *
 * Unlike the live sink there is no rotation and no disk budget: a failed
 * write is an error for the caller to report. One owner thread.
 */
#ifndef GPUFL_SINK_NDJSON_EXPORT_H
#define GPUFL_SINK_NDJSON_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/event.h"
#include "core/session_meta.h"
#include "core/string_lookup.h"
#include "format/json_names.h"

typedef struct gpufl__ndjson_export {
    FILE *files[GFL_CHANNEL_COUNT];
    const gpufl__string_lookup *names;
    gpufl__jnames jnames; /* names' JSON text, made once each */
    uint64_t lines[GFL_CHANNEL_COUNT];
    char *buf;
    size_t cap;
    char dir[4096];
} gpufl__ndjson_export;

/* Creates dir (which must not exist, or be empty) and its three logs, each
 * starting with meta's session_start. Returns 0, or a negative gpufl_err
 * with a message in err and nothing left open. */
int gpufl__ndjson_export_open(gpufl__ndjson_export *e, const char *dir, const gpufl__session_meta *meta,
                              const gpufl__string_lookup *names, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Appends ev's line to the log of its channel. 0, GPUFL_ENOMEM or GPUFL_EIO. */
int gpufl__ndjson_export_event(gpufl__ndjson_export *e, const gfl_event *ev) __attribute__((warn_unused_result));

/* Ends every log as meta says (log_stopped when writing had stopped,
 * session_end when the session ended) and closes them. Returns 0, or
 * GPUFL_EIO with a message in err. */
int gpufl__ndjson_export_close(gpufl__ndjson_export *e, const gpufl__session_meta *meta, char *err, size_t err_len);

#endif /* GPUFL_SINK_NDJSON_EXPORT_H */
