/*
 * Formatting of events as NDJSON lines (docs/FORMAT.md): the live writer on
 * the collector thread, and `gpufl convert` for events read from a file.
 * Names are resolved through `names` (the intern table for a live session,
 * the reader's table for converted events); any thread that may call it.
 */
#ifndef GPUFL_FORMAT_NDJSON_FORMAT_H
#define GPUFL_FORMAT_NDJSON_FORMAT_H

#include <stddef.h>

#include "core/event.h"
#include "core/string_lookup.h"

/* Bytes that are enough for the line of ev. */
size_t gpufl__ndjson_bound(const gfl_event *ev, const gpufl__string_lookup *names);

/* Writes the line of ev, '\n' included, at buf (which has
 * gpufl__ndjson_bound(ev) bytes) and returns its length. */
size_t gpufl__ndjson_format(const gfl_event *ev, const gpufl__string_lookup *names, char *buf);

#endif /* GPUFL_FORMAT_NDJSON_FORMAT_H */
