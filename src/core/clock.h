/*
 * The session timebase: nanoseconds of CLOCK_MONOTONIC.
 *
 * clock_gettime() costs ~21 ns on a KVM guest, which alone is most of a
 * scope's 50 ns budget (two timestamps per scope). Where the TSC is invariant
 * and the kernel itself keeps time with it, gpufl__now_ns() reads the TSC
 * (~10 ns) and converts it with parameters fitted to CLOCK_MONOTONIC; until the
 * first fit, and on machines without a trustworthy TSC, it calls
 * clock_gettime().
 *
 * The parameters live in two slots (a "latch"): the single calibrating thread
 * writes the slot readers are not using and then flips the index, so a
 * reader never waits for a writer. Each fit is continuous with the previous
 * one and its slope is slewed towards CLOCK_MONOTONIC by at most 1000 ppm, so
 * the converted clock never runs backwards and stays within a few µs.
 *
 * Threads: gpufl__now_ns() from any thread; gpufl__clock_calibrate() from one
 * thread at a time (the collector).
 */
#ifndef GPUFL_CORE_CLOCK_H
#define GPUFL_CORE_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define GFL_HAVE_TSC 1
#else
#define GFL_HAVE_TSC 0
#endif

typedef struct gpufl__clock_slot {
    _Atomic uint32_t seq;  /* bumped before and after each rewrite */
    _Atomic uint64_t tsc0; /* anchor, TSC ticks */
    _Atomic uint64_t ns0;  /* anchor, ns */
    _Atomic uint64_t mult; /* ns per tick, 32.32 fixed point */
} gpufl__clock_slot;

typedef struct gpufl__clock_state {
    _Atomic uint32_t active; /* 0: use clock_gettime; 1 or 2: slot index + 1 */
    gpufl__clock_slot slot[2];
} gpufl__clock_state;

extern gpufl__clock_state gpufl__clock;

static inline uint64_t gpufl__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t gpufl__now_ns(void)
{
#if GFL_HAVE_TSC
    for (int attempt = 0; attempt < 4; attempt++) {
        /* acquire: pairs with the release store of the index, so the slot's
         * fields written before the flip are visible. */
        uint32_t active = atomic_load_explicit(&gpufl__clock.active, memory_order_acquire);
        if (active == 0)
            break;
        const gpufl__clock_slot *s = &gpufl__clock.slot[active - 1];
        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        uint64_t tsc0 = atomic_load_explicit(&s->tsc0, memory_order_relaxed);
        uint64_t ns0 = atomic_load_explicit(&s->ns0, memory_order_relaxed);
        uint64_t mult = atomic_load_explicit(&s->mult, memory_order_relaxed);
        uint64_t tsc = __rdtsc();
        /* The slot is rewritten only after two flips; a changed seq means this
         * thread slept through them and must read the fresh slot. */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq || (seq & 1))
            continue;
        __int128 delta = (__int128)(int64_t)(tsc - tsc0) * (__int128)mult;
        return ns0 + (uint64_t)(int64_t)(delta >> 32);
    }
#endif
    return gpufl__mono_ns();
}

/* Wall-clock time, ns since the Unix epoch. */
uint64_t gpufl__wall_ns(void);

/* Decides whether the TSC can be trusted and takes the first anchor. Safe to
 * call again (each session does); never fails: the fallback is clock_gettime. */
void gpufl__clock_init(void);

/* Refits the TSC conversion. Call every few ms at first, then about once a
 * second, from one thread. Cheap (~100 ns). */
void gpufl__clock_calibrate(void);

/* "tsc" or "clock_gettime": what gpufl__now_ns() is using now. */
const char *gpufl__clock_source(void);

#endif /* GPUFL_CORE_CLOCK_H */
