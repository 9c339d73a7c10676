/*
 * The .gflt source as the parallel trace loader (gflt_load.c) uses it: it
 * reads the file's chunks in order on one thread as the event source does,
 * taking in the session facts and the strings, but lists the events chunks
 * instead of reading them, so that other threads can read and decode them
 * (gflt_chunks.h, gpufl__gflt_chunk_payload). Listing is cheap: one 20-byte
 * header per chunk of 16384 events.
 *
 * One owner thread.
 */
#ifndef GPUFL_READ_GFLT_SOURCE_H
#define GPUFL_READ_GFLT_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "format/gflt_format.h"
#include "read/event_source.h"
#include "read/strtab.h"

struct gpufl__input;

typedef struct gpufl__gflt_events_chunk {
    uint64_t offset;                 /* of the chunk in the file */
    gpufl__gflt_chunk_header header; /* checked */
    uint32_t nstrings;               /* its string ids are below */
} gpufl__gflt_events_chunk;

/* Opens in as gpufl__gflt_source_open() does (file header, meta chunk), for
 * gpufl__gflt_source_scan() rather than next(). Takes over in. */
int gpufl__gflt_source_open_scan(struct gpufl__input *in, gpufl__event_source **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Reads every chunk after the meta chunk but the events chunks' payloads.
 * Returns 0 at the end (a torn tail counted in skipped_bytes), or a
 * negative gpufl_err with the message in s->err (naming the file and the
 * offset). Either way *chunks (malloc'd, or NULL) lists the *n events
 * chunks before the end or the damage, in file order: damage found later
 * in one of them comes first in the file. */
int gpufl__gflt_source_scan(gpufl__event_source *s, gpufl__gflt_events_chunk **chunks, size_t *n)
    __attribute__((warn_unused_result));

/* The file being read (for pread from other threads until close). */
struct gpufl__input *gpufl__gflt_source_input(gpufl__event_source *s);

/* Hands the source's string table (the file's strings, ids as in the file)
 * to the caller, leaving the source an empty one. */
void gpufl__gflt_source_take_strings(gpufl__event_source *s, gpufl__strtab *out);

#endif /* GPUFL_READ_GFLT_SOURCE_H */
