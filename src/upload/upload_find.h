/*
 * Which sessions an upload of a path sends. A path is a session directory
 * (that session), a job directory (a directory of sessions named job-<id>
 * as `gpufl run` leaves them, or holding job.json as `gpufl merge` writes
 * it: all its sessions, one run), or a directory of sessions and job
 * directories (a log_path: each session is a run, each job directory one
 * run). Of a log_path's runs: the one of session_id when given, all with
 * all_sessions, else the newest run (by session.json's start_wall_ns,
 * else the directory's modification time), so that the default uploads
 * what the last program recorded, every rank of it when it was a job.
 *
 * One thread.
 */
#ifndef GPUFL_UPLOAD_UPLOAD_FIND_H
#define GPUFL_UPLOAD_UPLOAD_FIND_H

#include <stdbool.h>
#include <stddef.h>

#include "read/job_find.h"

/* Appends the session directories of path to out (in name order within a
 * run). Returns 0; GPUFL_ENOTFOUND (path missing, not a directory, no
 * session under it, no session of that id) or GPUFL_ENOMEM, with a message
 * naming the path in err. */
int gpufl__upload_find(const char *path, const char *session_id, bool all, gpufl__job_paths *out, char *err,
                       size_t err_len) __attribute__((warn_unused_result));

#endif /* GPUFL_UPLOAD_UPLOAD_FIND_H */
