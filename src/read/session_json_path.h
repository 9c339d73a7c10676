/*
 * The session.json that speaks for a path given to a reader: path itself
 * when it is one, else the one in path's directory (path being a session
 * directory, or a file in one: a log, trace.gflt). Shared by the readers
 * of a session's facts there (trace_job.c, session_origin.c). Any thread.
 */
#ifndef GPUFL_READ_SESSION_JSON_PATH_H
#define GPUFL_READ_SESSION_JSON_PATH_H

#include <stddef.h>

void gpufl__session_json_of(const char *path, char *out, size_t len);

#endif /* GPUFL_READ_SESSION_JSON_PATH_H */
