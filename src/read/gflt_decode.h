/*
 * Decoding a .gflt events chunk payload back into gfl_event records, by the
 * same layout tables the encoder used (src/format/gflt_layout.h). Every
 * length, string id and value is checked against what the chunk and the
 * field can hold: damaged input is an error, never a read out of bounds.
 * Events of a type this build has no layout for (a newer writer) are
 * skipped over and counted.
 *
 * One owner thread; working memory is reused from chunk to chunk.
 */
#ifndef GPUFL_READ_GFLT_DECODE_H
#define GPUFL_READ_GFLT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/idmap.h"

typedef struct gpufl__gflt_decoder {
    gfl_event *evs; /* the decoded events of the last chunk */
    size_t n, cap;
    uint32_t *order; /* event indices grouped by type */
    size_t order_cap;
    uint8_t *hit;     /* per event of a type: PRED bit */
    uint8_t *present; /* per field and event of a type: OPT bits */
    size_t hit_cap;
    gpufl__idmap keys, streams;
} gpufl__gflt_decoder;

void gpufl__gflt_decoder_free(gpufl__gflt_decoder *d);

/* Decodes payload[0..len) into d->evs[0..d->n). String ids must be below
 * nstrings. Returns 0 (with *skipped = events of unknown types left out),
 * GPUFL_ECORRUPT with *why, or GPUFL_ENOMEM. */
int gpufl__gflt_decode_events(gpufl__gflt_decoder *d, const uint8_t *payload, size_t len, uint32_t nstrings,
                              uint64_t *skipped, const char **why) __attribute__((warn_unused_result));

#endif /* GPUFL_READ_GFLT_DECODE_H */
