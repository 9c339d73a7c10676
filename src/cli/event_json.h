/*
 * Readings as JSON objects keyed like their NDJSON lines (docs/FORMAT.md),
 * for `gpufl devices --json`: built from format/ndjson_fields.h, the table
 * the log writer is built from, so the two spell every field alike without
 * formatting a line and parsing it back. The CLI's thread.
 */
#ifndef GPUFL_CLI_EVENT_JSON_H
#define GPUFL_CLI_EVENT_JSON_H

#include <jansson.h>

#include "core/event.h"
#include "core/string_lookup.h"

/* The fields of ev's line, "type" left out, as a new object: for
 * device_info, device_metrics and host_metrics events (the only ones the
 * CLI shows live); NULL for other types or when out of memory. */
json_t *gpufl__event_json(const gfl_event *ev, const gpufl__string_lookup *names);

#endif /* GPUFL_CLI_EVENT_JSON_H */
