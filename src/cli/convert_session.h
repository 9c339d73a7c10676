/*
 * session.json for a session that `gpufl convert` wrote as a directory of
 * .log files, so that the commands that start from session.json (`gpufl
 * summary`) read a converted session like a recorded one.
 */
#ifndef GPUFL_CLI_CONVERT_SESSION_H
#define GPUFL_CLI_CONVERT_SESSION_H

#include <stddef.h>

#include "core/session_meta.h"

/* Writes <out_dir>/session.json for the session converted from `in` (whose
 * identity and end, as read, are in meta): the source's own session.json
 * (in's, or the one beside the file in, when it is of the same session)
 * with log_dir and converted_from set; else one rebuilt from the events
 * now in out_dir. Returns 0, or a negative gpufl_err with a message naming
 * the file and the problem in err; out_dir then has no session.json. */
int gpufl__convert_session_json(const char *in, const char *out_dir, const gpufl__session_meta *meta, char *err,
                                size_t err_len) __attribute__((warn_unused_result));

#endif /* GPUFL_CLI_CONVERT_SESSION_H */
