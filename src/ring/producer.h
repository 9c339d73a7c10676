/*
 * Per-thread producers: each thread that records gets its own ring (and its
 * scope stack) the first time it pushes, registered in a process-wide list
 * that the collector walks.
 *
 * Producers are never freed while the process lives. That is what makes the
 * fast path safe without locks: a thread that passed the "recording?" check
 * just before gpufl_shutdown() still writes into valid memory. When a thread
 * exits its producer is marked orphaned; once the collector has drained it
 * and reported its losses under that thread's id it becomes free, and the
 * next thread to attach adopts it. Memory is bounded by the largest number
 * of threads that recorded at once (plus those exiting between two
 * collector passes).
 *
 * Threads: attach/self from any thread (each for itself); first/next from
 * any thread (the list only grows, links never change once published).
 */
#ifndef GPUFL_RING_PRODUCER_H
#define GPUFL_RING_PRODUCER_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/recording.h"
#include "ring/ring.h"

#define GFL_SCOPE_MAX_DEPTH 128

typedef struct gpufl__scope_frame {
    uint64_t id;
    uint64_t begin_ts;
    uint32_t name;
} gpufl__scope_frame;

/* OWNED (a live thread) -> ORPHANED (it exited) -> FREE (the collector
 * drained it) -> OWNED (adopted by a new thread). */
enum { GFL_PRODUCER_OWNED = 0, GFL_PRODUCER_ORPHANED = 1, GFL_PRODUCER_FREE = 2 };

typedef struct gpufl__producer {
    gpufl__ring ring;

    /* OS thread id of the owner; written on attach, read by the collector
     * for "dropped" events (relaxed: a stale id there is harmless). */
    _Atomic uint32_t tid;

    /* Owner thread only. */
    uint32_t scope_gen; /* session generation the stack belongs to */
    uint32_t depth;     /* open scopes */
    uint64_t scope_seq; /* last scope sequence number handed out */
    gpufl__scope_frame stack[GFL_SCOPE_MAX_DEPTH];

    /* Written by the owner, read by the sampler: 1 while depth > 0. */
    _Atomic uint32_t in_scope;
    /* Release on each transition, acquire on reading it: the collector sees
     * every push of an orphaned owner, the adopter every write of the
     * collector and the previous owner. */
    _Atomic int state;
    /* Losses the producer found itself (a full ring is counted by the ring),
     * by gfl_drop_reason and channel; single writer, read by the collector. */
    _Atomic uint64_t lost[GFL_DROP_REASON_COUNT][GFL_CHANNEL_COUNT];
    uint32_t index; /* 1-based, stable for the process */
    struct gpufl__producer *next;

    /* Collector only. */
    uint64_t reported[GFL_DROP_REASON_COUNT][GFL_CHANNEL_COUNT]; /* losses already reported */
    uint64_t base[GFL_DROP_REASON_COUNT][GFL_CHANNEL_COUNT];     /* losses before the session */
    uint32_t collector_gen;                                      /* session generation the collector last synced */
} gpufl__producer;

extern __thread gpufl__producer *gpufl__tls_producer __attribute__((tls_model("initial-exec")));

/* Slow path of gpufl__producer_self(): creates or adopts this thread's
 * producer. Returns NULL when out of memory or when the thread is exiting. */
gpufl__producer *gpufl__producer_attach(void);

static inline uint32_t gpufl__producer_tid(gpufl__producer *p)
{
    return atomic_load_explicit(&p->tid, memory_order_relaxed);
}

static inline gpufl__producer *gpufl__producer_self(void)
{
    gpufl__producer *p = gpufl__tls_producer;
    if (__builtin_expect(p != NULL, 1))
        return p;
    return gpufl__producer_attach();
}

/* The calling thread's innermost open gpufl scope, 0 = none (or its scopes
 * belong to an earlier session). What a launch or an allocation records as
 * its scope. */
static inline uint64_t gpufl__producer_innermost_scope(void)
{
    gpufl__producer *p = gpufl__tls_producer;
    if (!p || !p->depth || p->scope_gen != gpufl__session_generation())
        return 0;
    return p->stack[p->depth - 1].id;
}

/* Owner thread: counts n events lost for `reason` on `channel`. */
static inline void gpufl__producer_count_lost(gpufl__producer *p, unsigned reason, unsigned channel, uint64_t n)
{
    /* single writer: a relaxed load+store is an exact increment */
    uint64_t v = atomic_load_explicit(&p->lost[reason][channel], memory_order_relaxed);
    atomic_store_explicit(&p->lost[reason][channel], v + n, memory_order_relaxed);
}

/* Collector: everything this producer lost for `reason` on `channel`. */
static inline uint64_t gpufl__producer_lost(gpufl__producer *p, unsigned reason, unsigned channel)
{
    if (reason == GFL_DROP_RING_FULL)
        return gpufl__ring_dropped(&p->ring, channel);
    return atomic_load_explicit(&p->lost[reason][channel], memory_order_relaxed);
}

/* Capacity, in events, of the rings of threads that attach from now on:
 * a free producer with a ring of another size is not adopted. */
void gpufl__producer_set_ring_events(uint32_t events);

/* Called on the exiting thread, before its producer is orphaned, so that
 * scopes it left open can be closed. Set by the scope module. */
extern void (*gpufl__producer_exit_hook)(gpufl__producer *p);

/* The registry, newest first; NULL-terminated through ->next. */
gpufl__producer *gpufl__producer_first(void);

/* Collector: marks a drained orphan free for adoption. */
static inline void gpufl__producer_release_orphan(gpufl__producer *p)
{
    atomic_store_explicit(&p->state, GFL_PRODUCER_FREE, memory_order_release);
}

/* Number of producers ever created (for tests and diagnostics). */
uint32_t gpufl__producer_count(void);

#endif /* GPUFL_RING_PRODUCER_H */
