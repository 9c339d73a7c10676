/*
 * Formatting of events as NDJSON lines (docs/FORMAT.md): the live writer on
 * the collector thread, and `gpufl convert` for events read from a file.
 * Names are resolved through `names` (the intern table for a live session,
 * the reader's table for converted events), whose owner thread formats.
 */
#ifndef GPUFL_FORMAT_NDJSON_FORMAT_H
#define GPUFL_FORMAT_NDJSON_FORMAT_H

#include <stddef.h>

#include "core/event.h"
#include "core/string_lookup.h"
#include "format/json_names.h"

/* Bytes that are enough for the line of ev; makes the text of its names
 * (format/json_names.h), so that the line that follows copies them. */
size_t gpufl__ndjson_line_bound(const gfl_event *ev, gpufl__jnames *names);

/* Writes the line of ev, '\n' included, at buf (which has
 * gpufl__ndjson_line_bound(ev) bytes) and returns its length. */
size_t gpufl__ndjson_line(const gfl_event *ev, gpufl__jnames *names, char *buf);

/* The same for a caller that formats a line now and then: names are
 * escaped every time, nothing is kept. */
size_t gpufl__ndjson_bound(const gfl_event *ev, const gpufl__string_lookup *names);
size_t gpufl__ndjson_format(const gfl_event *ev, const gpufl__string_lookup *names, char *buf);

#endif /* GPUFL_FORMAT_NDJSON_FORMAT_H */
