/*
 * Formatting of events as NDJSON lines (docs/FORMAT.md). Collector thread.
 */
#ifndef GPUFL_SINK_NDJSON_FORMAT_H
#define GPUFL_SINK_NDJSON_FORMAT_H

#include <stddef.h>

#include "core/event.h"

/* Bytes that are enough for the line of ev. */
size_t gpufl__ndjson_bound(const gfl_event *ev);

/* Writes the line of ev, '\n' included, at buf (which has
 * gpufl__ndjson_bound(ev) bytes) and returns its length. */
size_t gpufl__ndjson_format(const gfl_event *ev, char *buf);

#endif /* GPUFL_SINK_NDJSON_FORMAT_H */
