/*
 * The flight window (flight_window_s, flight_window_bytes): the last
 * seconds of every channel, kept in memory as .gflt chunks (about 10 bytes
 * a kernel) instead of, or besides, the logs on disk, to be written out as
 * a dump when a trigger fires (collect/triggers.h, sink/window_dump.h).
 *
 * It is a sink: the collector hands it every event. Events are encoded
 * into chunks by a gflt_writer of its own (string ids given in order of
 * first use, as in a file), so a dump copies chunks as they are. Strings
 * chunks are kept for the whole session (a string is defined once, in the
 * chunk before its first use); events chunks are dropped oldest first once
 * they are older than the window or the bytes exceed the limit.
 *
 * What a dump needs from before the window is kept aside: the session's
 * definitions (device info, engine, stacks) and what is still live at the
 * dump (allocations and framework blocks not freed, scopes not ended, each
 * device's latest allocator state), each only when the chunk
 * that held it has been dropped. A snapshot takes references to the chunks
 * (they never change once made), so the dump is written on another thread
 * while the window goes on.
 *
 * Collector thread only, except snapshots, which any thread may write out
 * and free.
 */
#ifndef GPUFL_SINK_WINDOW_H
#define GPUFL_SINK_WINDOW_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/sink.h"
#include "core/session_info.h"

typedef struct gpufl__window gpufl__window;

/* One framed .gflt chunk, shared by the window and the snapshots that
 * hold it; freed by its last reference. */
typedef struct gpufl__window_chunk {
    atomic_uint refs;
    uint8_t type;            /* GFLT_CHUNK_STRINGS or GFLT_CHUNK_EVENTS */
    uint32_t count;          /* strings or events */
    uint64_t min_ts, max_ts; /* events: their time range */
    size_t n;
    uint8_t data[];
} gpufl__window_chunk;

/* The window at one moment: the chunks a dump writes, in file order
 * (strings, the events kept from before the window, the window's events). */
typedef struct gpufl__window_snapshot {
    gpufl__window_chunk **chunks;
    size_t n;
    uint64_t from_ns, to_ns; /* the events' time range, 0 when none */
    uint64_t events, bytes;  /* events in it, bytes of its chunks */
} gpufl__window_snapshot;

/* What the window holds now, for the memory benchmark and the tests. */
typedef struct gpufl__window_stats {
    uint64_t bytes;          /* all it holds: chunks, buffers, what it keeps aside */
    uint64_t chunk_bytes;    /* the events chunks alone */
    uint64_t chunks;         /* events chunks held */
    uint64_t events;         /* in those chunks */
    uint64_t dropped_chunks; /* events chunks dropped as too old or over the limit */
    uint64_t from_ns, to_ns; /* time range held */
} gpufl__window_stats;

/* Opens the window of the session described by info (flight_window_s and
 * flight_window_bytes from its options) as a sink for the collector; *win
 * stays valid until the sink is closed. Returns 0, or a negative gpufl_err
 * with a message in err. */
int gpufl__window_open(gpufl__sink *out, gpufl__window **win, const gpufl__session_info *info, char *err,
                       size_t err_len) __attribute__((warn_unused_result));

/* Encodes what is buffered and takes a snapshot of the window (collector
 * thread). Returns 0, or GPUFL_ENOMEM. */
int gpufl__window_snapshot_take(gpufl__window *w, gpufl__window_snapshot *out) __attribute__((warn_unused_result));

/* Lets go of a snapshot's chunks (any thread). */
void gpufl__window_snapshot_free(gpufl__window_snapshot *s);

void gpufl__window_stats_of(const gpufl__window *w, gpufl__window_stats *out);

#endif /* GPUFL_SINK_WINDOW_H */
