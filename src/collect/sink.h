/*
 * Where the collector sends events: the NDJSON logs and the .gflt trace
 * (sink/). Every sink implements the same few functions; the collector
 * calls them from its own thread only.
 */
#ifndef GPUFL_COLLECT_SINK_H
#define GPUFL_COLLECT_SINK_H

#include <stdint.h>

#include "core/event.h"
#include "core/session_info.h"

/* every file of a session: the NDJSON logs, a channel each, and trace.gflt */
#define GFL_SINK_MAX_FILES (GFL_CHANNEL_COUNT + 1)

typedef struct gpufl__sink_status {
    uint64_t bytes_written;
    uint64_t lost[GFL_CHANNEL_COUNT]; /* events accepted but never stored */
    unsigned missing;                 /* channels (bit 1 << channel) this copy does not hold by design:
                                         log_format compact's NDJSON logs have no device channel */
    const char *stop_reason;          /* NULL while writing */
    const char *stop_detail;
    /* bytes_written by file ("scope.log", every part of it; "trace.gflt"),
     * nfiles of them: the metrics endpoint's gpufl_bytes_written_total */
    struct {
        const char *name;
        uint64_t bytes;
    } files[GFL_SINK_MAX_FILES];
    unsigned nfiles;
} gpufl__sink_status;

typedef struct gpufl__sink {
    const char *name;
    void *self;
    /* Stores one event. Returns 0, or GPUFL_EIO when the sink has stopped
     * writing (the sink counts the loss in its status). */
    int (*event)(void *self, const gfl_event *ev, uint64_t now_ns);
    /* Periodic: write buffers out (durable when the session asks). */
    void (*tick)(void *self, uint64_t now_ns);
    void (*status)(void *self, gpufl__sink_status *out);
    /* Writes the end of the session and frees the sink. */
    void (*close)(void *self, const gpufl__session_end *end);
    /* Optional (NULL: tick does it): writes out everything buffered, now;
     * called once the last event is in, before the final summary. For a
     * sink whose tick holds events back (the .gflt one fills chunks). */
    void (*flush)(void *self, uint64_t now_ns);
} gpufl__sink;

#endif /* GPUFL_COLLECT_SINK_H */
