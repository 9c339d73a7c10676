/*
 * Encoding of .gflt chunk payloads: events column by column (gflt_layout.h)
 * and the strings they use. The file framing (headers, checksums, zstd) is
 * gflt_writer.c's.
 *
 * The encoder hands out the file's string ids: the first time an event
 * refers to a string (by the id of wherever the events came from: the
 * intern table, or a reader's table), that string gets the next file id and
 * is queued for the next strings chunk, which the writer puts before the
 * events chunk that uses it.
 *
 * One owner thread (the collector, or `gpufl convert`). Built for chunks of
 * up to ~64 K events; all working memory is reused from chunk to chunk.
 */
#ifndef GPUFL_SINK_GFLT_ENCODE_H
#define GPUFL_SINK_GFLT_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytebuf.h"
#include "core/event.h"
#include "core/idmap.h"
#include "core/string_lookup.h"
#include "format/gflt_layout.h"

/* A column of a section being coded block by block: the OPT bitmap (all
 * rows) and the values, and a DELTA column's last value. */
typedef struct gpufl__gflt_colbuf {
    gpufl__bytebuf bits, vals;
    uint64_t prev;
} gpufl__gflt_colbuf;

typedef struct gpufl__gflt_encoder {
    gpufl__idmap file_ids; /* source string id -> file string id */
    uint32_t next_file_id; /* ids 1.. in order of first use; 0 is "" */
    uint32_t *pending;     /* source ids of strings not yet written */
    size_t npending, pending_cap;
    uint32_t *order; /* event indices grouped by type */
    size_t order_cap;
    uint8_t *hit; /* per event of a type: its PRED fields are as predicted */
    size_t hit_cap;
    uint64_t *vals, *refs; /* per event of a type: a column's values, a REF column's references */
    size_t vals_cap;
    gpufl__idmap keys, streams;
    gpufl__bytebuf col, sec;
    gpufl__gflt_colbuf cols[GFLT_MAX_FIELDS]; /* one per field of the section being coded */
} gpufl__gflt_encoder;

void gpufl__gflt_encoder_init(gpufl__gflt_encoder *e);
void gpufl__gflt_encoder_free(gpufl__gflt_encoder *e);

/* Appends the events chunk payload of evs[0..n) to out; strings first used
 * here are queued. Every event must have a type with a layout. Returns 0,
 * GPUFL_EINVAL (a type without a layout) or GPUFL_ENOMEM; on failure out
 * may hold a partial payload and must be discarded. */
int gpufl__gflt_encode_events(gpufl__gflt_encoder *e, const gfl_event *evs, size_t n, gpufl__bytebuf *out)
    __attribute__((warn_unused_result));

/* Whether strings are queued for a strings chunk. */
static inline int gpufl__gflt_strings_pending(const gpufl__gflt_encoder *e) { return e->npending > 0; }

/* Appends the strings chunk payload of the queued strings to out, texts
 * from names, and empties the queue. 0 or GPUFL_ENOMEM. */
int gpufl__gflt_encode_strings(gpufl__gflt_encoder *e, const gpufl__string_lookup *names, gpufl__bytebuf *out)
    __attribute__((warn_unused_result));

#endif /* GPUFL_SINK_GFLT_ENCODE_H */
