/*
 * Events for the trace format tests: random events of every type, filled
 * through the .gflt layout tables (so every field the format carries gets a
 * value), field-by-field comparison with strings compared by text, and the
 * NDJSON form of an event (what survives a trip through a .log line).
 * Tests only; single-threaded.
 */
#ifndef GPUFL_TEST_EVENT_GEN_H
#define GPUFL_TEST_EVENT_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/string_lookup.h"
#include "read/strtab.h"

#ifdef __cplusplus
extern "C" {
#endif

uint64_t tu_rand(uint64_t *state);

/* Whether this build has event type `type`: core/event.h keeps numbers for
 * event types of other branches (27..29), which have no layout here. */
bool tu_event_type_built(unsigned type);

/* A random event of type: every field its .gflt layout lists gets a random
 * value of its width (small values often, so deltas and predictions get
 * exercised), strings one of names[0..nnames), and each optional (OPT)
 * field is 0 with probability `absent` (0 never, 1 always). */
void tu_random_event(uint64_t *rng, uint8_t type, double absent, const uint32_t *names, size_t nnames, gfl_event *ev);

/* NULL when a and b agree on every field the .gflt layout of their type
 * lists (strings by their text through la and lb), else a description of
 * the first difference (a static buffer). */
const char *tu_event_diff(const gfl_event *a, const gpufl__string_lookup *la, const gfl_event *b,
                          const gpufl__string_lookup *lb);

struct gpufl__event_source;

/* Reads every event of the file in data[0..n) (named name in messages),
 * checking the first nexpect against expect (strings through lookup) when
 * expect is given. Returns the events read, or the source's negative error
 * with its message in err. The source is left open in *keep when keep is
 * not NULL (the caller closes it), else closed. */
long tu_read_events(const void *data, size_t n, const char *name, const gfl_event *expect, size_t nexpect,
                    const gpufl__string_lookup *lookup, struct gpufl__event_source **keep, char *err, size_t err_len);

/* ev as it comes back from its NDJSON line: formatted with names, parsed
 * with strings interned into into (ids of into). Fails the test when the
 * line does not parse. */
void tu_ndjson_roundtrip(const gfl_event *ev, const gpufl__string_lookup *names, gpufl__strtab *into, gfl_event *out);

#ifdef __cplusplus
}
#endif

#endif /* GPUFL_TEST_EVENT_GEN_H */
