/*
 * The session lifecycle's one entry for other parts of the library; the
 * recording state producers read is core/recording.h.
 */
#ifndef GPUFL_SESSION_SESSION_H
#define GPUFL_SESSION_SESSION_H

#include "core/recording.h"

/* Has the running session's collector write out everything recorded so
 * far (gpufl_generate_report reads the files); nothing without a session.
 * Takes the lifecycle lock: not for producer paths. */
void gpufl__session_flush(void);

/* When the latest session started (CLOCK_MONOTONIC ns; 0 before any): an
 * event stamped earlier is dropped as stale. Any thread. */
uint64_t gpufl__session_start_ns(void);

/* A trigger of kind (detail: NULL none) that dumps the flight window, and
 * its wait (session/dumps.h), under the lifecycle lock so that
 * gpufl_shutdown() waits for it; api names the caller in messages.
 * Returns 0, or as gpufl_dump(). */
int gpufl__session_dump(const char *api, const char *kind, const char *detail);

#endif /* GPUFL_SESSION_SESSION_H */
