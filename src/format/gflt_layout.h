/*
 * How each event type is laid out in a .gflt events chunk: the columns, in
 * order, and how each is coded (docs/FORMAT.md lists the same tables). The
 * encoder (gflt_encode.c) and the decoder (src/read/gflt_decode.c) both walk
 * these tables, so they cannot disagree; a field appended to an event
 * payload is appended here and read back by newer readers, while older ones
 * skip the extra column.
 *
 * The codings exploit what traces look like: times grow (deltas), an
 * interval's start follows the previous interval on its stream (SPAN),
 * optional ids are mostly absent (OPT: a presence bitmap, then only the
 * values present) and a kernel is launched again and again with the same
 * configuration (PRED: one bit says "as the last launch of this name").
 */
#ifndef GPUFL_FORMAT_GFLT_LAYOUT_H
#define GPUFL_FORMAT_GFLT_LAYOUT_H

#include <stdint.h>

#include "core/event.h"
#include "core/uint_field.h"

typedef enum gpufl__gflt_codec {
    GFLT_VAR = 0,   /* varint of the value */
    GFLT_SVAR = 1,  /* zigzag varint of the value read as signed */
    GFLT_DELTA = 2, /* zigzag varint of value - previous value in the column */
    GFLT_REF = 3,   /* zigzag varint of value - the field at `aux` of the same event */
    GFLT_STR = 4,   /* varint string id of the file (ids are the file's, not the process's) */
    GFLT_SPAN = 5,  /* an interval: this field is the start, `aux` the end, `aux2` the stream;
                       two columns: zigzag(start - previous end on the same device and
                       stream, or - previous start in the column for a stream not seen
                       yet in the chunk), then zigzag(end - start) */
} gpufl__gflt_codec;

enum {
    GFLT_OPT = 1u << 0,  /* a presence bitmap (bit set: nonzero), then values of present rows */
    GFLT_PRED = 1u << 1, /* predicted from the last event with the same key (layout.key) */
};

typedef struct gpufl__gflt_field {
    uint8_t off;   /* byte offset in gfl_event */
    uint8_t size;  /* 1, 2, 4 or 8 */
    uint8_t codec; /* gpufl__gflt_codec */
    uint8_t flags; /* GFLT_OPT, GFLT_PRED */
    uint8_t aux, aux2;
} gpufl__gflt_field;

#define GFLT_MAX_FIELDS 64 /* per type; checked by tests/test_gflt_codec.c */

typedef struct gpufl__gflt_layout {
    const gpufl__gflt_field *fields;
    uint8_t nfields;
    uint8_t key; /* offset of the 4-byte key of the PRED fields (0: none) */
} gpufl__gflt_layout;

/* The layout of type, or NULL for a type this build does not know. */
const gpufl__gflt_layout *gpufl__gflt_layout_of(uint8_t type);

/* Reading and writing a field of an event as a 64-bit number (zero-extended;
 * SVAR fields are sign-extended by the codec). */
static inline uint64_t gpufl__gflt_get(const gfl_event *ev, const gpufl__gflt_field *f)
{
    return gpufl__uint_get((const uint8_t *)ev + f->off, f->size);
}

static inline void gpufl__gflt_put(gfl_event *ev, const gpufl__gflt_field *f, uint64_t v)
{
    gpufl__uint_put((uint8_t *)ev + f->off, f->size, v);
}

static inline uint64_t gpufl__gflt_get_at(const gfl_event *ev, uint8_t off, uint8_t size)
{
    gpufl__gflt_field f = {off, size, 0, 0, 0, 0};
    return gpufl__gflt_get(ev, &f);
}

#endif /* GPUFL_FORMAT_GFLT_LAYOUT_H */
