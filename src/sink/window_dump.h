/*
 * Writing a snapshot of the flight window (sink/window.h) as a dump: a
 * session directory of its own, <session dir>/dumps/<name>/, holding
 * trace.gflt (the snapshot's chunks as they are, framed as a whole file
 * with its end chunk and index), a session.json that names the trigger and,
 * for an out-of-memory, the session's diagnosis of it (oom.json, through
 * gpufl__dump_addition). Every reader and report takes it like any session.
 *
 * A dump is written under a hidden name (.tmp-<name>) and renamed when
 * whole, so a process killed while writing leaves a readable dump or none;
 * hidden leftovers are removed by the next dump's pruning, which itself
 * hides a dump (.del-<name>) before emptying it. Pruning keeps at
 * most dump_max_count dumps and dump_max_bytes in all, oldest first (the
 * names begin with a sequence number); the newest is always kept.
 *
 * Any one thread at a time (the session's dump thread, or the collector
 * for a crash).
 */
#ifndef GPUFL_SINK_WINDOW_DUMP_H
#define GPUFL_SINK_WINDOW_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "collect/session_json.h"
#include "core/session_info.h"
#include "sink/window.h"

/* What the dump's writer adds of its own: the session's oom.json, which
 * reads the dump back through layers above this one. Called on the hidden
 * directory once trace.gflt is whole, before session.json and the rename,
 * so that a visible dump is whole. Returns the name of the file it added,
 * which session.json's dump object names as "oom" (NULL: none); its
 * failures are its own to report, and the dump is written without it. */
typedef struct gpufl__dump_addition {
    const char *(*add)(void *ctx, const char *dir, const gpufl__dump_note *note);
    void *ctx;
} gpufl__dump_addition;

/* Writes snap as the dump note->name of the session described by info,
 * with what extra adds (NULL: nothing). On success path (if not NULL)
 * receives the dump's directory. Returns 0, or a negative gpufl_err with a
 * message in err (nothing is left under the dump's name). */
int gpufl__window_dump_write(const gpufl__session_info *info, const gpufl__window_snapshot *snap,
                             const gpufl__dump_note *note, const gpufl__dump_addition *extra, char *path,
                             size_t path_len, char *err, size_t err_len) __attribute__((warn_unused_result));

/* Removes the oldest dumps of info's session beyond max_count and
 * max_bytes, and hidden leftovers of interrupted dumps. Returns how many
 * dumps it removed. */
unsigned gpufl__window_dumps_prune(const gpufl__session_info *info, uint32_t max_count, uint64_t max_bytes);

#endif /* GPUFL_SINK_WINDOW_DUMP_H */
