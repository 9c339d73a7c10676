/*
 * `gpufl summary` for a session that did not end cleanly (killed, crashed,
 * or still running): its summary made from the events it recorded, read
 * back like every other command reads them, instead of session.json's last
 * checkpoint, which may say nothing (a program killed before the first one,
 * two seconds in) or miss everything after it.
 */
#ifndef GPUFL_CLI_SUMMARY_RECORDED_H
#define GPUFL_CLI_SUMMARY_RECORDED_H

#include <stddef.h>

#include "collect/summary.h"

/* Replaces the figures of s (loaded from path's session.json) with those
 * of the session's recorded events: event counts, losses, why writing
 * stopped, duration to the session's last recorded time, scopes (those
 * that never ended counted to that time and in `unended`), kernels,
 * copies, host and GPU samples, bytes written; sets s->from_events. What
 * only session.json knows (identity, device names) stays. path is the
 * session directory or its session.json. Returns 0, or a negative
 * gpufl_err with a message naming the session and the problem in err (s
 * then holds what it held, possibly with its tables emptied: free it). */
int gpufl__summary_from_recorded(const char *path, gpufl__summary *s, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_CLI_SUMMARY_RECORDED_H */
