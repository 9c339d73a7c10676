/*
 * A session's directory: <log_path>/<app>-<yyyymmdd>-<hhmmss>-<pid>-<random>,
 * created exclusively so that two processes never share one.
 *
 * The random part is 64 bits: with 16, anyone who can write to log_path
 * could create the 65 536 names of a second and pid in advance and keep the
 * program from recording. A log_path that the file system cannot hold
 * (longer than PATH_MAX with the session directory and its files, or with
 * a component longer than NAME_MAX) is refused before anything is created.
 *
 * Called by gpufl_init() under the lifecycle lock.
 */
#ifndef GPUFL_SESSION_SESSION_DIR_H
#define GPUFL_SESSION_SESSION_DIR_H

#include <stddef.h>

#include "core/session_info.h"

/* Creates the directory of the session info describes (app, pid, start
 * time) under o->log_path, or under a directory named after the app when
 * log_path is empty, and sets info->id and info->dir (absolute). Under
 * `gpufl run` (GPUFL_RUN_REPORT set) a session whose job id is known
 * (info->job, core/job.h) goes one level down, into <log_path>/job-<id>,
 * so that the ranks of one job share a directory. Returns 0, or -1 with a
 * message in err; a refused log_path leaves nothing created. */
int gpufl__session_dir_make(gpufl__session_info *info, const gpufl_options *o, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_SESSION_SESSION_DIR_H */
