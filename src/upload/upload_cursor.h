/*
 * The upload cursor of a session (docs/UPLOAD.md "Resuming"):
 * <session dir>/.gpufl-upload-cursor.json holds, for one server, how many
 * places of each channel it acknowledged, so that an upload started again
 * sends each channel from there on. Rewritten whole (a temporary file,
 * then rename) after every acknowledged batch, so a reader sees the old
 * cursor or the new one, never a mix.
 *
 * It is not fsync'd: a cursor lost to a power cut only makes the next
 * upload send acknowledged batches again, which the server counts as
 * duplicates and stores once; a sync per batch would cost more than that.
 *
 * One thread per session directory.
 */
#ifndef GPUFL_UPLOAD_UPLOAD_CURSOR_H
#define GPUFL_UPLOAD_UPLOAD_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

#define GPUFL__CURSOR_FILE ".gpufl-upload-cursor.json"

typedef struct gpufl__upload_cursor {
    uint64_t acked[GFL_CHANNEL_COUNT]; /* places acknowledged, per channel */
    bool complete;                     /* the server held every place of an ended session */
} gpufl__upload_cursor;

/* The cursor of dir for server (backend_url + api_path) and session_id.
 * No cursor, or one for another server or session: zeros, and true. A
 * cursor that cannot be read or is damaged: zeros, false, and why says what
 * is wrong with which file (for a warning: the upload starts over). */
bool gpufl__cursor_load(const char *dir, const char *server, const char *session_id, gpufl__upload_cursor *c, char *why,
                        size_t why_len);

/* Replaces dir's cursor. Returns 0, or GPUFL_EIO with the file and the
 * reason in err (the old cursor, if any, is left). */
int gpufl__cursor_save(const char *dir, const char *server, const char *session_id, const gpufl__upload_cursor *c,
                       char *err, size_t err_len) __attribute__((warn_unused_result));

#endif /* GPUFL_UPLOAD_UPLOAD_CURSOR_H */
