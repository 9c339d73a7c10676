/*
 * A bounded single-producer single-consumer ring of records (core/record.h):
 * each event takes the bytes its type needs (a scope begin 24, a kernel
 * 128), not a fixed slot.
 *
 * One producer thread reserves room for a record, writes it in place and
 * commits; one consumer (the collector) reads committed records one by one
 * and releases what it read in batches. When the ring is full the producer
 * drops the new record and counts it by channel: it never waits, allocates
 * or calls the kernel.
 *
 * Records are contiguous: one that does not fit before the end of the ring
 * starts again at its beginning, and the producer marks the space it skips
 * with a GFL_EV_NONE byte (no record starts with one), which the consumer
 * steps over. Positions are byte counts that only grow; the ring's bytes
 * are a power of two, so a position's offset is a mask away.
 *
 * Each index has one writer and its own cache line: the producer owns head,
 * the consumer owns tail, and each keeps a private copy of the other's index
 * so the shared line is read only when the ring looks full (producer) or
 * empty (consumer).
 *
 * Rates: built for tens of millions of events per second per producer; a
 * reserve+commit pair is a handful of instructions.
 */
#ifndef GPUFL_RING_RING_H
#define GPUFL_RING_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/record.h"

/* Capacity is asked for in units of GFL_RING_UNIT bytes, a scope record's
 * size: the ring_events option counts scope events (kernels take four). */
#define GFL_RING_UNIT 32u
#define GFL_RING_MIN_EVENTS 16u
#define GFL_RING_MAX_EVENTS (1u << 24)
_Static_assert(GFL_RING_MIN_EVENTS *GFL_RING_UNIT >= 2 * GFL_RECORD_MAX,
               "the smallest ring holds a record after a wrap");

typedef struct gpufl__ring {
    /* Producer's line. head: bytes committed; published with release so the
     * consumer that acquires it sees the records' contents. */
    _Alignas(64) _Atomic uint64_t head;
    uint64_t next;                               /* head once the reserved record is committed */
    uint64_t tail_seen;                          /* producer's copy of tail */
    _Atomic uint64_t dropped[GFL_CHANNEL_COUNT]; /* full-ring drops by channel */

    /* Consumer's line. tail: bytes released; published with release so the
     * producer that acquires it may overwrite them. */
    _Alignas(64) _Atomic uint64_t tail;
    uint64_t read;      /* consumer: past the records read, not yet released */
    uint64_t head_seen; /* consumer's copy of head */

    /* Read-only after init. */
    _Alignas(64) uint8_t *bytes;
    uint64_t mask; /* bytes - 1 */
    size_t map_bytes;
} gpufl__ring;

/*
 * Allocates room for at least `events` units of GFL_RING_UNIT bytes (the
 * count rounded up to a power of two and clamped to GFL_RING_MIN_EVENTS..
 * GFL_RING_MAX_EVENTS). Pages are mapped lazily, so untouched capacity costs
 * no resident memory.
 * Returns 0, or GPUFL_ENOMEM with the ring left empty and safe to destroy.
 */
int gpufl__ring_init(gpufl__ring *ring, uint32_t events) __attribute__((warn_unused_result));
/* The bytes gpufl__ring_init maps for `events`. */
size_t gpufl__ring_bytes_for(uint32_t events);
void gpufl__ring_destroy(gpufl__ring *ring);

/* Bytes. */
static inline uint64_t gpufl__ring_capacity(const gpufl__ring *ring) { return ring->mask + 1; }

/* Where a record of len bytes would end if reserved now (a wrap's skipped
 * bytes included), and whether it fits. Producer only. */
static inline bool gpufl__ring_fits(gpufl__ring *ring, uint64_t head, size_t len, uint64_t *end)
{
    uint64_t room = ring->mask + 1 - (head & ring->mask); /* contiguous bytes left */
    *end = head + (room < len ? room : 0) + len;
    if (__builtin_expect(*end - ring->tail_seen > ring->mask + 1, 0)) {
        /* acquire: pairs with the consumer's release of tail, so the consumer
         * is done reading the bytes we are about to overwrite */
        ring->tail_seen = atomic_load_explicit(&ring->tail, memory_order_acquire);
        return *end - ring->tail_seen <= ring->mask + 1;
    }
    return true;
}

/* Producer: room for a record of len bytes (a multiple of GFL_RECORD_ALIGN,
 * at most GFL_RECORD_MAX), or NULL when the ring is full (the drop is
 * counted against `channel`). Follow a non-NULL return with commit(). */
static inline void *gpufl__ring_reserve(gpufl__ring *ring, size_t len, unsigned channel)
{
    /* relaxed: only this thread writes head */
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed), end;
    if (__builtin_expect(!gpufl__ring_fits(ring, head, len, &end), 0)) {
        /* single writer: a relaxed load+store is an exact increment */
        uint64_t n = atomic_load_explicit(&ring->dropped[channel], memory_order_relaxed);
        atomic_store_explicit(&ring->dropped[channel], n + 1, memory_order_relaxed);
        return NULL;
    }
    ring->next = end;
    uint64_t at = (end - len) & ring->mask;
    if (__builtin_expect(end - head != len, 0))
        ring->bytes[head & ring->mask] = GFL_EV_NONE; /* the wrap: skip to the start */
    return ring->bytes + at;
}

/* Producer: whether reserve(len) would find room now (it cannot lose it
 * before this producer's next reserve: only the consumer frees bytes). */
static inline bool gpufl__ring_has_room(gpufl__ring *ring, size_t len)
{
    uint64_t end;
    return gpufl__ring_fits(ring, atomic_load_explicit(&ring->head, memory_order_relaxed), len, &end);
}

static inline void gpufl__ring_commit(gpufl__ring *ring)
{
    /* release: the record's contents are visible before the new head */
    atomic_store_explicit(&ring->head, ring->next, memory_order_release);
}

/* Producer: ev as a record (core/record.h's generic layout; not a scope
 * begin or end), with `tid` as its thread where ev's header has none.
 * Returns 0, or -1 when the ring is full (counted) or ev's type has no
 * generic record. */
static inline int gpufl__ring_push(gpufl__ring *ring, const gfl_event *ev, uint32_t tid)
{
    size_t len = gpufl__record_len_of(ev);
    gfl_event_header *rec = len ? gpufl__ring_reserve(ring, len, gpufl__event_channel(ev->h.type)) : NULL;
    if (!rec)
        return -1;
    memcpy(rec, ev, len);
    if (!rec->tid)
        rec->tid = tid;
    gpufl__ring_commit(ring);
    return 0;
}

/* Consumer: the next committed record not yet read, or NULL when there is
 * none. What it returns stays valid until release(). */
static inline const void *gpufl__ring_read(gpufl__ring *ring)
{
    uint64_t read = ring->read;
    if (read == ring->head_seen) {
        /* acquire: pairs with the producer's release of head */
        ring->head_seen = atomic_load_explicit(&ring->head, memory_order_acquire);
        if (read == ring->head_seen)
            return NULL;
    }
    const uint8_t *rec = ring->bytes + (read & ring->mask);
    if (*rec == GFL_EV_NONE) {
        /* skipped space: the record committed with it starts the ring */
        read += ring->mask + 1 - (read & ring->mask);
        rec = ring->bytes;
    }
    ring->read = read + gpufl__record_len(rec);
    return rec;
}

/* Consumer: hands the bytes of every record read so far back. */
static inline void gpufl__ring_release(gpufl__ring *ring)
{
    /* release: our reads of the records happen before the producer reuses them */
    atomic_store_explicit(&ring->tail, ring->read, memory_order_release);
}

/* Consumer: whether every committed record has been read. */
static inline bool gpufl__ring_empty(gpufl__ring *ring)
{
    if (ring->read != ring->head_seen)
        return false;
    ring->head_seen = atomic_load_explicit(&ring->head, memory_order_acquire);
    return ring->read == ring->head_seen;
}

/* Consumer: drops counted so far on `channel` (monotonic). */
static inline uint64_t gpufl__ring_dropped(const gpufl__ring *ring, unsigned channel)
{
    return atomic_load_explicit(&ring->dropped[channel], memory_order_relaxed);
}

/* Consumer: forgets everything committed so far (used when a new session
 * adopts rings that still hold an old session's events). */
static inline void gpufl__ring_discard(gpufl__ring *ring)
{
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    ring->head_seen = ring->read = head;
    atomic_store_explicit(&ring->tail, head, memory_order_release);
}

#endif /* GPUFL_RING_RING_H */
