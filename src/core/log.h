/*
 * Diagnostics of the library itself. A message goes to stderr (warnings and
 * errors always, everything with enable_debug_output), prefixed "gpufl: ",
 * and, while a session is open, into system.log as a "log" event (info and
 * up always, debug with enable_debug_output). Never to stdout. Any thread; formatting happens here, so never call it on a hot path.
 */
#ifndef GPUFL_CORE_LOG_H
#define GPUFL_CORE_LOG_H

#include <stdbool.h>

#include "core/event.h"

void gpufl__log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether debug lines reach stderr. */
void gpufl__log_set_debug(bool on);

/* Where messages are also recorded as events while a session is open
 * (the session installs one that writes into the rings, which sit above
 * this file); NULL while none is. */
typedef void gpufl__log_recorder(int level, const char *msg);
void gpufl__log_set_recorder(gpufl__log_recorder *fn);

/* Sets this thread's gpufl_last_error() message. */
void gpufl__set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gpufl__clear_error(void);

#endif /* GPUFL_CORE_LOG_H */
