/*
 * Writing a .gflt file: the file header, a meta chunk, then strings and
 * events chunks as events arrive, and at the end a stop chunk (if writing
 * stopped), an end chunk, the index and the trailer (docs/FORMAT.md).
 *
 * Events are buffered into chunks of up to `chunk_events`; a chunk goes out
 * when it is full or when the owner flushes (the live sink does so every
 * second), in one write, so the file always ends on a chunk boundary or
 * inside the chunk being written. Bytes go through an output callback: the
 * live sink's checks the session's disk budget; `gpufl convert`'s writes a
 * plain file.
 *
 * One owner thread (the collector, or `gpufl convert`). Memory: the buffered
 * events (128 bytes each), the encoder's columns and the encoded chunk,
 * about 4 MB at the default 16384 events.
 */
#ifndef GPUFL_SINK_GFLT_WRITER_H
#define GPUFL_SINK_GFLT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bytebuf.h"
#include "core/event.h"
#include "core/session_meta.h"
#include "core/string_lookup.h"
#include "sink/gflt_encode.h"

#define GFLT_DEFAULT_CHUNK_EVENTS 16384
#define GFLT_DEFAULT_ZSTD_LEVEL 3

typedef struct gpufl__gflt_out {
    /* Appends n bytes (one whole chunk, or the file header). `final`: a
     * closing chunk (stop, end), which may use the reserve a disk budget
     * keeps for them. Returns 0, or a negative gpufl_err when nothing (or
     * only a part that the callback cut off again) was written. */
    int (*write)(void *ctx, const void *data, size_t n, bool final);
    void *ctx;
} gpufl__gflt_out;

typedef struct gpufl__gflt_index_entry {
    uint64_t offset;
    uint8_t type;            /* GFLT_CHUNK_STRINGS or GFLT_CHUNK_EVENTS */
    uint32_t count;          /* strings or events */
    uint64_t min_ts, max_ts; /* events: earliest start, latest start or end */
} gpufl__gflt_index_entry;

typedef struct gpufl__gflt_writer {
    gpufl__gflt_out out;
    const gpufl__string_lookup *names;
    gpufl__gflt_encoder enc;
    gfl_event *events;
    size_t n, chunk_events;
    int zstd_level; /* 0: store payloads uncompressed */
    void *zstd;     /* ZSTD_CCtx */
    gpufl__bytebuf raw, chunk;
    uint64_t offset; /* bytes in the file */
    gpufl__gflt_index_entry *index;
    size_t nindex, index_cap;
    bool stopped;      /* a write failed: nothing more is written */
    bool stop_written; /* the stop chunk is in the file */
    uint64_t events_written;
    uint64_t lost[GFL_CHANNEL_COUNT]; /* events refused or lost with a failed chunk */
} gpufl__gflt_writer;

/* Starts a file: header and meta chunk. chunk_events 0 and zstd_level < 0
 * pick the defaults (chunks hold at most GFLT_MAX_CHUNK_EVENTS); zstd_level
 * 0 stores chunks uncompressed. Returns 0, or a negative gpufl_err (the
 * output failed, or out of memory) with nothing left to free. */
int gpufl__gflt_writer_open(gpufl__gflt_writer *w, gpufl__gflt_out out, const gpufl__string_lookup *names,
                            const gpufl__session_meta *meta, size_t chunk_events, int zstd_level)
    __attribute__((warn_unused_result));

/* Buffers one event; writes a chunk when the buffer is full. Returns 0, or
 * GPUFL_EIO when writing has stopped (the event is counted lost) and
 * GPUFL_EINVAL for an event type .gflt has no layout for. */
int gpufl__gflt_writer_add(gpufl__gflt_writer *w, const gfl_event *ev);

/* Writes the buffered events as a chunk (nothing when none). Returns 0, or
 * GPUFL_EIO when writing has stopped (they are counted lost). */
int gpufl__gflt_writer_flush(gpufl__gflt_writer *w);

/* Events buffered and not yet written. */
static inline size_t gpufl__gflt_writer_pending(const gpufl__gflt_writer *w) { return w->n; }

/* Writes a chunk framed elsewhere (by another writer with the same string
 * ids: the flight window's) as it is, and indexes it with e's type, count
 * and times. Returns 0, or a negative gpufl_err (writing has stopped). */
int gpufl__gflt_writer_put_chunk(gpufl__gflt_writer *w, const void *chunk, size_t n, const gpufl__gflt_index_entry *e);

/* Forgets the index kept so far (a writer that never closes its file, the
 * flight window's, would otherwise grow it forever). */
static inline void gpufl__gflt_writer_forget_index(gpufl__gflt_writer *w) { w->nindex = 0; }

/* Stops writing for good and records why in a stop chunk (a final write).
 * Buffered events are counted lost. */
void gpufl__gflt_writer_stop(gpufl__gflt_writer *w, uint32_t reason, uint64_t ts_ns, const char *detail);

/* Flushes, then writes a stop chunk (when meta->stop_reason and none was
 * written: `gpufl convert` copying a session that stopped early), the end
 * chunk (when meta->ended) with meta's end time and losses, and, unless
 * writing stopped, the index and the trailer. Frees the writer. Returns 0, or GPUFL_EIO when any of it could
 * not be written (the file still reads back up to its last whole chunk). */
int gpufl__gflt_writer_close(gpufl__gflt_writer *w, const gpufl__session_meta *meta);

#endif /* GPUFL_SINK_GFLT_WRITER_H */
