/*
 * Reading the chunks of a .gflt file in order: header checksum, payload
 * checksum, zstd, and for events chunks the column decoding
 * (gflt_decode.c). What to do with each chunk is gflt_source.c's.
 *
 * Large files are read ahead on one helper thread, which reads and decodes
 * up to two chunks beyond the one the caller is using: decoding then
 * overlaps with building the trace (each is about half of the work, on the
 * two cores of a small machine). Small files and memory are read on the
 * caller's thread. Either way the caller sees the same items in the same
 * order.
 *
 * Threads: one caller thread; the helper touches only the slots the queue
 * gives it, and the input, which the caller leaves alone until close.
 */
#ifndef GPUFL_READ_GFLT_CHUNKS_H
#define GPUFL_READ_GFLT_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>
#include <zstd.h>

#include "core/bytebuf.h"
#include "core/event.h"
#include "format/gflt_format.h"

struct gpufl__input;

typedef struct gpufl__gflt_item {
    uint8_t type;           /* the chunk type (GFLT_CHUNK_*) */
    uint64_t offset;        /* of the chunk in the file */
    const uint8_t *payload; /* decompressed payload (every chunk but events) */
    size_t len;
    const gfl_event *events; /* events chunks: the decoded events */
    size_t nevents;
    uint64_t skipped_events; /* events chunks: events of types this build does not know */
    /* Deferred events chunks (gpufl__gflt_chunks_open with defer_events):
     * neither payload nor events, only what it takes to read them later. */
    bool deferred;
    gpufl__gflt_chunk_header header; /* its checked header */
    uint32_t nstrings;               /* strings defined before it: its string ids are below */
} gpufl__gflt_item;

typedef struct gpufl__gflt_chunks gpufl__gflt_chunks;

/* Starts reading in at offset `first` (past the file header). The input
 * must stay open until close. With defer_events, events chunks are handed
 * out unread (item.deferred), for gpufl__gflt_chunk_payload on other
 * threads, and everything happens on the caller's thread. Returns 0 or
 * GPUFL_ENOMEM. */
int gpufl__gflt_chunks_open(gpufl__gflt_chunks **out, struct gpufl__input *in, uint64_t first, bool defer_events)
    __attribute__((warn_unused_result));

/* The payload of the chunk at offset, whose header h was checked, into raw:
 * read, checksummed and decompressed (stored: scratch for the compressed
 * bytes; *zstd: a context made on first use, for the caller to free).
 * Returns 0, or a negative gpufl_err with a message naming the file and
 * the offset in err. Any thread; in is only read (pread). */
int gpufl__gflt_chunk_payload(struct gpufl__input *in, uint64_t offset, const gpufl__gflt_chunk_header *h,
                              gpufl__bytebuf *raw, gpufl__bytebuf *stored, ZSTD_DCtx **zstd, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* The next chunk in *item (valid until the next call): returns 1; 0 at the
 * end, with *torn the bytes of a torn last chunk; or a negative gpufl_err
 * with a message naming the file and the chunk's offset in err. */
int gpufl__gflt_chunks_next(gpufl__gflt_chunks *c, const gpufl__gflt_item **item, uint64_t *torn, char *err,
                            size_t err_len);

void gpufl__gflt_chunks_close(gpufl__gflt_chunks *c);

#endif /* GPUFL_READ_GFLT_CHUNKS_H */
