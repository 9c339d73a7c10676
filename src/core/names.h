/*
 * The one table of names for each enum the outputs print: copy kinds, sync
 * kinds, memory kinds, occupancy limiters. Each value has one row; each
 * column is what one family of outputs prints for it, so that where two
 * formats print different words (JSON "stream_wait_event", the HTML
 * timeline "stream wait event") both are here, side by side, and a new
 * value is added in one place.
 *
 * Columns:
 *   key    the on-disk and machine-readable word: NDJSON, the JSON report,
 *          CSV, the text report (docs/FORMAT.md)
 *   slice  the name of a timeline slice (Perfetto, Chrome JSON)
 *   label  words for people where they differ from both (the HTML report)
 *   call   the slice of the API call that started a copy
 *   view   `gpufl view`'s legend, with its glyph
 *
 * A value out of range reads as row 0 ("unknown"), as every output did.
 * Read-only tables; any thread.
 */
#ifndef GPUFL_CORE_NAMES_H
#define GPUFL_CORE_NAMES_H

#include <stdint.h>

#include "core/event.h"

typedef struct gpufl__copy_kind_names {
    const char *key;   /* "HtoD"; 0: "unknown" */
    const char *slice; /* "memcpy HtoD"; 0: "memcpy" (also the HTML timeline's) */
    const char *call;  /* "memcpy HtoD (call)" */
    const char *view;  /* "HtoD"; 0: "copy" */
    char glyph;        /* the view's cell for it */
} gpufl__copy_kind_names;

typedef struct gpufl__sync_kind_names {
    const char *key;   /* "stream_wait_event" */
    const char *slice; /* "sync stream_wait_event"; 0: "sync" */
    const char *label; /* "stream wait event" (the HTML timeline); 0: "sync" */
} gpufl__sync_kind_names;

typedef struct gpufl__mem_kind_names {
    const char *key; /* "pinned" */
} gpufl__mem_kind_names;

typedef struct gpufl__limiter_names {
    const char *key;   /* "shared_memory" */
    const char *label; /* "shared memory"; 0: "" (the HTML report) */
} gpufl__limiter_names;

typedef struct gpufl__drop_reason_names {
    const char *key;   /* "ring_full" (gpufl__drop_reason_name) */
    const char *label; /* "ring full" (the HTML report) */
} gpufl__drop_reason_names;

const gpufl__copy_kind_names *gpufl__copy_kind(uint8_t kind);
const gpufl__sync_kind_names *gpufl__sync_kind(uint8_t kind);
const gpufl__mem_kind_names *gpufl__mem_kind(uint8_t kind);
const gpufl__limiter_names *gpufl__limiter(uint8_t limiter);
/* NULL for a reason this build does not know (a newer writer's). */
const gpufl__drop_reason_names *gpufl__drop_reason(uint8_t reason);

/* The key (on-disk word) of value in one family of enums, or NULL when
 * value is not one this build knows: for readers, which must tell a newer
 * writer's value from "unknown". The numbering is trace.h's
 * GPUFL_TRACE_ENUM_*, which the NDJSON reader's enum tables follow too. */
enum {
    GPUFL__NAMES_COPY_KIND,
    GPUFL__NAMES_MEM_KIND,
    GPUFL__NAMES_SYNC_KIND,
    GPUFL__NAMES_LIMITER,
    GPUFL__NAMES_DROP_REASON,
    GPUFL__NAMES_EVENT_TYPE,
    GPUFL__NAMES_TRIGGER_OUTCOME
};
const char *gpufl__names_key(unsigned family, unsigned value);

#endif /* GPUFL_CORE_NAMES_H */
