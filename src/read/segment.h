/*
 * The rows of one stretch of a session: what one thread makes of a run of
 * consecutive .gflt chunks or NDJSON lines while a trace loads. Every event
 * becomes a row of its table (trace_internal.h) at once; what repeats
 * (launch configurations, streams, callers) goes into the segment's own
 * tables of distinct values; times that do not fit their 32-bit columns
 * are kept exactly on the side. Events that must be seen in session order
 * (scope begins and ends, which join into one row; device descriptions)
 * are kept as they are. trace_merge.c then merges the segments of a
 * session, in order, into the trace.
 *
 * The string ids in a segment are those of `strings` (the table of the
 * NDJSON parser that read it), or the trace's own when it has none (.gflt:
 * the file's ids are kept). The merge takes in every string of a table, in
 * id order, so the trace's ids come out in the order of first appearance
 * in the session, however it was cut into segments.
 *
 * One owner thread per segment; rates: a few million events a second per
 * thread, a hash lookup or two per kernel.
 */
#ifndef GPUFL_READ_SEGMENT_H
#define GPUFL_READ_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "read/recset.h"
#include "read/strtab.h"
#include "read/trace_internal.h"

#define GFL_SEG_CONFIG_CACHE 256

typedef struct gpufl__segment {
    gpufl__rows rows[GFL_T_COUNT]; /* GFL_T_SCOPES and _TRACE_WINDOWS stay empty (see ordered) */
    gpufl__recset configs, streams, callers;
    gfl_event *ordered; /* scope begins and ends, trace windows' opening and closing,
                           device infos, the crash, in order */
    size_t nordered, ordered_cap;
    uint64_t counts[256];                    /* events, by type */
    uint64_t dropped[GFL_CHANNEL_COUNT][16]; /* events lost, by channel and drop reason */
    uint64_t last_ns;                        /* the latest time any of its events holds (a start or
                                      an end): where what never ended will end */
    const gpufl__strtab *strings;            /* whose ids these are; NULL: the trace's */
    /* the last lookups, which the next row usually repeats */
    uint32_t config_cache[GFL_SEG_CONFIG_CACHE]; /* by name: config row + 1 */
    uint32_t last_stream, last_caller;           /* row + 1 */
} gpufl__segment;

/* An empty segment; strings NULL when its ids are the trace's. */
void gpufl__segment_init(gpufl__segment *s, const gpufl__strtab *strings);
void gpufl__segment_free(gpufl__segment *s);

/* Adds ev. Returns 0, or GPUFL_ENOMEM (the segment is then only fit to
 * be freed). */
int gpufl__segment_add(gpufl__segment *s, const gfl_event *ev) __attribute__((warn_unused_result));

/* Sorts every table by time (stably), once every event is in. 0 or
 * GPUFL_ENOMEM. */
int gpufl__segment_finish(gpufl__segment *s) __attribute__((warn_unused_result));

/* Merges segs[0..nsegs) (finished, in session order) into t, an empty
 * trace whose string table is the one the segments without strings use,
 * on up to nthreads threads. Rows keep the order of the segments and of
 * the events in each where their times are equal. 0 or GPUFL_ENOMEM (t is
 * then only fit to be freed). */
int gpufl__trace_merge(gpufl_trace *t, gpufl__segment *const *segs, size_t nsegs, unsigned nthreads)
    __attribute__((warn_unused_result));

#endif /* GPUFL_READ_SEGMENT_H */
