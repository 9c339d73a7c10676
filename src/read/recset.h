/*
 * A set of fixed-size records, each kept once and numbered in the order of
 * first insertion: the trace's tables of distinct launch configurations,
 * streams and callers, which rows of device work refer to by number.
 *
 * Records are compared as bytes, so callers zero them (padding included)
 * before filling them in. Open addressing over the record numbers; grows
 * at half full. Built for a few thousand records looked up once per row of
 * a ten-million-row trace: one hash of at most 48 bytes and one compare.
 *
 * One owner thread while it grows; read-only use from any thread after.
 */
#ifndef GPUFL_READ_RECSET_H
#define GPUFL_READ_RECSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct gpufl__recset {
    uint8_t *recs; /* n records of `size` bytes, in order of first insertion */
    uint32_t n, cap;
    uint32_t size;   /* bytes per record, a multiple of 4, at most 64 */
    uint32_t *slots; /* record number + 1; 0 = empty */
    uint32_t mask;   /* slots - 1; 0 with no slots yet */
} gpufl__recset;

void gpufl__recset_init(gpufl__recset *s, uint32_t size);
void gpufl__recset_free(gpufl__recset *s);

/* The number of the record equal to rec, adding it if new. Returns 0, or
 * GPUFL_ENOMEM with the set unchanged. */
int gpufl__recset_put(gpufl__recset *s, const void *rec, uint32_t *index) __attribute__((warn_unused_result));

/* Adds rec as the next record without looking for an equal one: for a
 * caller that knows it is new (the merge, which finds duplicates itself).
 * Only for a set that has never been looked up (else it is a put). 0 or
 * GPUFL_ENOMEM. */
int gpufl__recset_append(gpufl__recset *s, const void *rec) __attribute__((warn_unused_result));

/* The hash the set uses, for callers that find duplicates themselves. */
uint32_t gpufl__recset_hash(const void *rec, uint32_t size);

static inline const void *gpufl__recset_at(const gpufl__recset *s, uint32_t i) { return s->recs + (size_t)i * s->size; }

size_t gpufl__recset_memory(const gpufl__recset *s);

#endif /* GPUFL_READ_RECSET_H */
