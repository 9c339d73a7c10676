/*
 * The tables of distinct values of merged segments (see trace_merge.c,
 * step 2): the launch configurations, streams and callers of every segment,
 * numbered in the trace in the order of their first use in the session,
 * which is the numbering one insertion after another would give.
 *
 * All segments' records are copied, in session order, into one array (with
 * their string ids in the trace's numbering) and hashed, on every thread by
 * segment; then records are dealt to partitions by hash, and each thread
 * finds, for the records of its partition, the first record equal to each;
 * one pass in order then numbers the first ones and gives the others their
 * number. A ten-million-event session has about a million callers (one per
 * framework op), which one thread inserting them into a hash set took a
 * quarter of a second to number.
 *
 * Called on one thread; it starts and joins its workers.
 */
#ifndef GPUFL_READ_MERGE_DISTINCT_H
#define GPUFL_READ_MERGE_DISTINCT_H

#include <stddef.h>
#include <stdint.h>

#include "read/segment.h"

/* A segment's string ids in the trace's numbering. */
typedef struct gpufl__str_map {
    uint32_t *id; /* segment id -> the trace's; NULL: the ids are the trace's */
    uint32_t n;
} gpufl__str_map;

static inline uint32_t gpufl__str_map_get(const gpufl__str_map *m, uint32_t id)
{
    if (!m->id)
        return id;
    return id < m->n ? m->id[id] : 0;
}

/* The records of one table, all segments', in session order. */
typedef struct gpufl__distinct_recs {
    uint32_t size; /* bytes per record */
    size_t n;
    size_t *base;    /* per segment (and one past the last): the index of its first record */
    uint8_t *v;      /* the records (until numbered) */
    uint32_t *hash;  /* per record (until numbered) */
    uint32_t *first; /* per record: the index of the first record equal to it (until numbered) */
    uint32_t *row;   /* per record: the trace's row */
} gpufl__distinct_recs;

typedef struct gpufl__distinct {
    gpufl__distinct_recs recs[GFL_X_COUNT]; /* GFL_X_CONFIG, _STREAM, _CALLER */
    gpufl__segment *const *segs;
    size_t nsegs;
    const gpufl__str_map *str; /* per segment */
    unsigned nparts;
    int *part_rc;
} gpufl__distinct;

/* Numbers the records of segs[0..nsegs) (string ids through str[s]) into
 * t's sets (t->configs, streams, callers), on up to nthreads threads, and
 * frees each segment's sets once copied. Returns 0 with the rows in d (see
 * gpufl__distinct_rows), or GPUFL_ENOMEM. Either way d is freed with
 * gpufl__distinct_free. */
int gpufl__distinct_merge(gpufl__distinct *d, gpufl_trace *t, gpufl__segment *const *segs, size_t nsegs,
                          const gpufl__str_map *str, unsigned nthreads) __attribute__((warn_unused_result));

/* The trace's rows of segment s's records of table x (GFL_X_*), *n of them. */
static inline const uint32_t *gpufl__distinct_rows(const gpufl__distinct *d, unsigned x, size_t s, uint32_t *n)
{
    const gpufl__distinct_recs *R = &d->recs[x];
    *n = (uint32_t)(R->base[s + 1] - R->base[s]);
    return R->row + R->base[s];
}

void gpufl__distinct_free(gpufl__distinct *d);

#endif /* GPUFL_READ_MERGE_DISTINCT_H */
