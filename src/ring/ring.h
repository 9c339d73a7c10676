/*
 * A bounded single-producer single-consumer ring of fixed-size events.
 *
 * One producer thread reserves a slot, fills it in place and commits; one
 * consumer (the collector) reads committed slots in batches and releases
 * them. When the ring is full the producer drops the new event and counts it
 * by channel: it never waits, allocates or calls the kernel.
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

#include "core/event.h"

#define GFL_RING_MIN_EVENTS 16u
#define GFL_RING_MAX_EVENTS (1u << 24)

typedef struct gpufl__ring {
    /* Producer's line. head: next slot to fill; published with release so the
     * consumer that acquires it sees the slot's contents. */
    _Alignas(64) _Atomic uint64_t head;
    uint64_t tail_seen;                          /* producer's copy of tail */
    _Atomic uint64_t dropped[GFL_CHANNEL_COUNT]; /* full-ring drops by channel */

    /* Consumer's line. tail: next slot to read; published with release so the
     * producer that acquires it may overwrite the freed slots. */
    _Alignas(64) _Atomic uint64_t tail;
    uint64_t head_seen; /* consumer's copy of head */

    /* Read-only after init. */
    _Alignas(64) gfl_event *slots;
    uint64_t mask;
    size_t map_bytes;
} gpufl__ring;

/*
 * Allocates room for at least `events` events (rounded up to a power of two
 * and clamped to GFL_RING_MIN_EVENTS..GFL_RING_MAX_EVENTS). Slots are mapped
 * lazily, so untouched capacity costs no resident memory.
 * Returns 0, or GPUFL_ENOMEM with the ring left empty and safe to destroy.
 */
int gpufl__ring_init(gpufl__ring *ring, uint32_t events) __attribute__((warn_unused_result));
void gpufl__ring_destroy(gpufl__ring *ring);

static inline uint64_t gpufl__ring_capacity(const gpufl__ring *ring) { return ring->mask + 1; }

/* Producer: a slot to fill, or NULL when the ring is full (the drop is
 * counted against `channel`). Follow a non-NULL return with commit(). */
static inline gfl_event *gpufl__ring_reserve(gpufl__ring *ring, unsigned channel)
{
    /* relaxed: only this thread writes head */
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (__builtin_expect(head - ring->tail_seen > ring->mask, 0)) {
        /* acquire: pairs with the consumer's release of tail, so the consumer
         * is done reading the slots we are about to overwrite */
        ring->tail_seen = atomic_load_explicit(&ring->tail, memory_order_acquire);
        if (head - ring->tail_seen > ring->mask) {
            /* single writer: a relaxed load+store is an exact increment */
            uint64_t n = atomic_load_explicit(&ring->dropped[channel], memory_order_relaxed);
            atomic_store_explicit(&ring->dropped[channel], n + 1, memory_order_relaxed);
            return NULL;
        }
    }
    return &ring->slots[head & ring->mask];
}

/* Producer: whether reserve() would find a slot now (it cannot lose one
 * before this producer's next reserve: only the consumer frees slots). */
static inline bool gpufl__ring_has_room(gpufl__ring *ring)
{
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    if (head - ring->tail_seen <= ring->mask)
        return true;
    ring->tail_seen = atomic_load_explicit(&ring->tail, memory_order_acquire);
    return head - ring->tail_seen <= ring->mask;
}

static inline void gpufl__ring_commit(gpufl__ring *ring)
{
    uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    /* release: the slot's contents are visible before the new head */
    atomic_store_explicit(&ring->head, head + 1, memory_order_release);
}

/* Consumer: up to the end of the ring or `max`, the committed events not yet
 * read; sets *n (0 when empty). Call release(n) when done with them. */
static inline const gfl_event *gpufl__ring_peek(gpufl__ring *ring, size_t max, size_t *n)
{
    uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    if (ring->head_seen == tail)
        /* acquire: pairs with the producer's release of head */
        ring->head_seen = atomic_load_explicit(&ring->head, memory_order_acquire);
    uint64_t avail = ring->head_seen - tail;
    uint64_t to_end = ring->mask + 1 - (tail & ring->mask);
    if (avail > to_end)
        avail = to_end;
    if (avail > max)
        avail = max;
    *n = (size_t)avail;
    return avail ? &ring->slots[tail & ring->mask] : NULL;
}

static inline void gpufl__ring_release(gpufl__ring *ring, size_t n)
{
    uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    /* release: our reads of the slots happen before the producer reuses them */
    atomic_store_explicit(&ring->tail, tail + n, memory_order_release);
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
    ring->head_seen = head;
    atomic_store_explicit(&ring->tail, head, memory_order_release);
}

#endif /* GPUFL_RING_RING_H */
