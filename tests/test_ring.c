/*
 * The SPSC event ring (src/ring/ring.h).
 *
 * Every event of a session crosses a ring, so a lost, duplicated, reordered
 * or torn event, or a drop counted against the wrong channel, corrupts the
 * trace silently. The ring is checked three ways: a seeded differential test
 * against a plain bounded array queue (single thread, every operation
 * compared), the capacity rounding and clamping of init, and a two-thread run
 * where a producer overflows the ring while the consumer drains it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ring/ring.h"

/* splitmix64: small, seedable, the same sequence on every machine */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t *state, uint64_t n) { return rng_next(state) % n; }

/* Several fields carry the sequence number so a torn or stale slot shows.
 * noinline: GCC otherwise warns about the NULL path it cannot see cmocka
 * assertions cut off. */
static __attribute__((noinline)) void fill_event(gfl_event *ev, uint64_t seq, unsigned channel)
{
    memset(ev, 0, sizeof *ev);
    ev->h.type = GFL_EV_KERNEL;
    ev->h.flags = (uint8_t)channel;
    ev->h.tid = (uint32_t)(seq * 7u + 3u);
    ev->h.ts = seq;
    ev->u.kernel.end_ts = ~seq;
    ev->u.kernel.correlation = (uint32_t)(seq ^ 0xa5a5a5a5u);
    ev->u.kernel.stack_id = (uint32_t)(seq >> 3);
}

static bool event_is(const gfl_event *ev, uint64_t seq, unsigned channel)
{
    return ev->h.type == GFL_EV_KERNEL && ev->h.flags == channel && ev->h.tid == (uint32_t)(seq * 7u + 3u) &&
           ev->h.ts == seq && ev->u.kernel.end_ts == ~seq &&
           ev->u.kernel.correlation == (uint32_t)(seq ^ 0xa5a5a5a5u) && ev->u.kernel.stack_id == (uint32_t)(seq >> 3);
}

/* The reference: a plain bounded FIFO of (seq, channel). */
typedef struct ref_queue {
    uint64_t *seq;
    unsigned *channel;
    size_t cap, head, count;
} ref_queue;

static void ref_init(ref_queue *q, size_t cap)
{
    q->seq = calloc(cap, sizeof *q->seq);
    q->channel = calloc(cap, sizeof *q->channel);
    assert_non_null(q->seq);
    assert_non_null(q->channel);
    q->cap = cap;
    q->head = q->count = 0;
}

static void ref_free(ref_queue *q)
{
    free(q->seq);
    free(q->channel);
}

static bool ref_push(ref_queue *q, uint64_t seq, unsigned channel)
{
    if (q->count == q->cap)
        return false;
    size_t i = (q->head + q->count) % q->cap;
    q->seq[i] = seq;
    q->channel[i] = channel;
    q->count++;
    return true;
}

static void ref_at(const ref_queue *q, size_t k, uint64_t *seq, unsigned *channel)
{
    size_t i = (q->head + k) % q->cap;
    *seq = q->seq[i];
    *channel = q->channel[i];
}

static void ref_pop(ref_queue *q, size_t n)
{
    q->head = (q->head + n) % q->cap;
    q->count -= n;
}

/* One seeded run of `ops` random operations on a ring of `requested` events. */
static void differential_run(uint32_t requested, uint64_t expect_cap, uint64_t seed, unsigned ops)
{
    gpufl__ring ring;
    assert_int_equal(gpufl__ring_init(&ring, requested), 0);
    assert_int_equal(gpufl__ring_capacity(&ring), expect_cap);
    const size_t cap = (size_t)expect_cap;

    ref_queue ref;
    ref_init(&ref, cap);
    uint64_t expect_dropped[GFL_CHANNEL_COUNT] = {0};
    uint64_t next_seq = 1, rng = seed;
    uint64_t pushes_ok = 0, drops = 0, popped = 0, discards = 0;
    unsigned push_per_mille = 500;
    const gfl_event *slots_begin = NULL;

    for (unsigned op = 0; op < ops; op++) {
        /* phases of mostly-push and mostly-pop, so the ring is often full
         * (drops), often empty, and wraps many times */
        if (op % 997 == 0) {
            static const unsigned phases[] = {150, 400, 500, 600, 900, 990};
            push_per_mille = phases[rng_below(&rng, sizeof phases / sizeof phases[0])];
        }
        uint64_t dice = rng_below(&rng, 1000);
        if (dice == 999 && rng_below(&rng, 8) == 0) {
            /* rare: a new session adopts the ring and forgets its content */
            gpufl__ring_discard(&ring);
            ref_pop(&ref, ref.count);
            discards++;
            size_t n = 99;
            assert_null(gpufl__ring_peek(&ring, cap, &n));
            assert_int_equal(n, 0);
        } else if (dice < push_per_mille) {
            unsigned channel = (unsigned)rng_below(&rng, GFL_CHANNEL_COUNT);
            gfl_event *ev = gpufl__ring_reserve(&ring, channel);
            if (ref.count == ref.cap) {
                assert_null(ev);
                expect_dropped[channel]++;
                drops++;
            } else {
                assert_non_null(ev);
                fill_event(ev, next_seq, channel);
                gpufl__ring_commit(&ring);
                assert_true(ref_push(&ref, next_seq, channel));
                next_seq++;
                pushes_ok++;
            }
            for (unsigned c = 0; c < GFL_CHANNEL_COUNT; c++)
                assert_int_equal(gpufl__ring_dropped(&ring, c), expect_dropped[c]);
        } else {
            size_t max = (size_t)rng_below(&rng, cap + cap / 2 + 2); /* 0 included */
            size_t n = 12345;
            const gfl_event *span = gpufl__ring_peek(&ring, max, &n);
            assert_true(n <= max);
            assert_true(n <= ref.count);
            if (ref.count > 0 && max > 0)
                assert_true(n > 0); /* a non-empty ring always makes progress */
            if (n == 0) {
                assert_null(span);
                continue;
            }
            assert_non_null(span);
            /* the span lies inside the slot array: never across its end */
            if (!slots_begin)
                slots_begin = ring.slots;
            assert_ptr_equal(ring.slots, slots_begin);
            assert_true(span >= ring.slots);
            assert_true(span + n <= ring.slots + cap);
            for (size_t k = 0; k < n; k++) {
                uint64_t seq;
                unsigned channel;
                ref_at(&ref, k, &seq, &channel);
                if (!event_is(&span[k], seq, channel))
                    fail_msg("seed %llu op %u: event %zu of the span is seq %llu, expected %llu",
                             (unsigned long long)seed, op, k, (unsigned long long)span[k].h.ts,
                             (unsigned long long)seq);
            }
            size_t take = (size_t)rng_below(&rng, n + 1); /* 0..n */
            gpufl__ring_release(&ring, take);
            ref_pop(&ref, take);
            popped += take;
        }
    }

    /* drain: what is left comes out in order, then the ring is empty */
    for (;;) {
        size_t n;
        const gfl_event *span = gpufl__ring_peek(&ring, SIZE_MAX, &n);
        if (!n)
            break;
        assert_true(span + n <= ring.slots + cap);
        for (size_t k = 0; k < n; k++) {
            uint64_t seq;
            unsigned channel;
            ref_at(&ref, k, &seq, &channel);
            assert_true(event_is(&span[k], seq, channel));
        }
        gpufl__ring_release(&ring, n);
        ref_pop(&ref, n);
        popped += n;
    }
    assert_int_equal(ref.count, 0);

    /* the run exercised what it is meant to: fills, drops, wraps */
    assert_true(drops > 0);
    assert_true(pushes_ok > 4 * cap);
    assert_true(popped > 0);
    assert_true(discards > 0);

    ref_free(&ref);
    gpufl__ring_destroy(&ring);
}

static void test_differential_against_reference_queue(void **state)
{
    (void)state;
    static const struct {
        uint32_t requested;
        uint64_t cap;
    } sizes[] = {{16, 16}, {64, 64}, {1000, 1024}};
    static const uint64_t seeds[] = {1, 42, 0xdeadbeef, 20240601};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
            differential_run(sizes[s].requested, sizes[s].cap, seeds[i], 200000);
}

/* Exactly capacity events fit; the next is dropped on its channel only. */
static void fill_exactly(gpufl__ring *ring, uint64_t cap)
{
    for (uint64_t i = 0; i < cap; i++) {
        gfl_event *ev = gpufl__ring_reserve(ring, GFL_CHANNEL_SCOPE);
        assert_non_null(ev);
        fill_event(ev, i, GFL_CHANNEL_SCOPE);
        gpufl__ring_commit(ring);
    }
    assert_null(gpufl__ring_reserve(ring, GFL_CHANNEL_SYSTEM));
    assert_int_equal(gpufl__ring_dropped(ring, GFL_CHANNEL_SYSTEM), 1);
    assert_int_equal(gpufl__ring_dropped(ring, GFL_CHANNEL_SCOPE), 0);
    assert_int_equal(gpufl__ring_dropped(ring, GFL_CHANNEL_DEVICE), 0);
    size_t n;
    const gfl_event *span = gpufl__ring_peek(ring, SIZE_MAX, &n);
    assert_int_equal(n, cap);
    assert_true(event_is(&span[0], 0, GFL_CHANNEL_SCOPE));
    assert_true(event_is(&span[cap - 1], cap - 1, GFL_CHANNEL_SCOPE));
    gpufl__ring_release(ring, 1);
    /* one slot freed: one more event fits, the one after is dropped */
    gfl_event *ev = gpufl__ring_reserve(ring, GFL_CHANNEL_DEVICE);
    assert_non_null(ev);
    fill_event(ev, cap, GFL_CHANNEL_DEVICE);
    gpufl__ring_commit(ring);
    assert_null(gpufl__ring_reserve(ring, GFL_CHANNEL_DEVICE));
    assert_int_equal(gpufl__ring_dropped(ring, GFL_CHANNEL_DEVICE), 1);
}

static void test_capacity_rounding_and_clamping(void **state)
{
    (void)state;
    static const struct {
        uint32_t requested;
        uint64_t cap;
    } cases[] = {
        {0, GFL_RING_MIN_EVENTS},
        {1, GFL_RING_MIN_EVENTS},
        {5, GFL_RING_MIN_EVENTS},
        {15, 16},
        {16, 16},
        {17, 32},
        {1000, 1024},
        {1024, 1024},
        {1025, 2048},
        {GFL_RING_MAX_EVENTS, GFL_RING_MAX_EVENTS},
        {GFL_RING_MAX_EVENTS + 1, GFL_RING_MAX_EVENTS},
        {1u << 30, GFL_RING_MAX_EVENTS},
        {UINT32_MAX, GFL_RING_MAX_EVENTS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gpufl__ring ring;
        assert_int_equal(gpufl__ring_init(&ring, cases[i].requested), 0);
        if (gpufl__ring_capacity(&ring) != cases[i].cap)
            fail_msg("init(%u): capacity %llu, expected %llu", cases[i].requested,
                     (unsigned long long)gpufl__ring_capacity(&ring), (unsigned long long)cases[i].cap);
        /* a fresh ring is empty with no drops */
        size_t n = 7;
        assert_null(gpufl__ring_peek(&ring, SIZE_MAX, &n));
        assert_int_equal(n, 0);
        for (unsigned c = 0; c < GFL_CHANNEL_COUNT; c++)
            assert_int_equal(gpufl__ring_dropped(&ring, c), 0);
        if (cases[i].cap <= 4096)
            fill_exactly(&ring, cases[i].cap);
        gpufl__ring_destroy(&ring);
        assert_null(ring.slots);
    }
}

/* ---- two threads ------------------------------------------------------- */

#define THREAD_EVENTS 2000000ull

typedef struct two_thread {
    gpufl__ring ring;
    _Atomic bool producer_done;
    uint64_t producer_drops; /* NULL reserves seen by the producer */
    uint64_t producer_sum;   /* sum of committed sequence numbers */
    uint64_t received, consumer_sum, bad_order, bad_payload;
} two_thread;

static void *producer_main(void *arg)
{
    two_thread *t = arg;
    uint64_t drops = 0, sum = 0;
    for (uint64_t seq = 1; seq <= THREAD_EVENTS; seq++) {
        unsigned channel = (unsigned)(seq % GFL_CHANNEL_COUNT);
        gfl_event *ev = gpufl__ring_reserve(&t->ring, channel);
        if (!ev) {
            drops++;
            continue;
        }
        fill_event(ev, seq, channel);
        gpufl__ring_commit(&t->ring);
        sum += seq;
    }
    t->producer_drops = drops;
    t->producer_sum = sum;
    /* release: the consumer that sees done sees every commit before it */
    atomic_store_explicit(&t->producer_done, true, memory_order_release);
    return NULL;
}

static void *consumer_main(void *arg)
{
    two_thread *t = arg;
    uint64_t last = 0;
    unsigned batch = 1;
    for (;;) {
        bool done = atomic_load_explicit(&t->producer_done, memory_order_acquire);
        size_t n;
        /* varying batch sizes, as the collector's would */
        const gfl_event *span = gpufl__ring_peek(&t->ring, batch, &n);
        batch = batch * 5 % 97 + 1;
        if (n == 0) {
            if (done)
                break; /* done was seen before this empty peek: nothing is left */
            sched_yield();
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            uint64_t seq = span[k].h.ts;
            if (seq <= last)
                t->bad_order++;
            if (!event_is(&span[k], seq, (unsigned)(seq % GFL_CHANNEL_COUNT)))
                t->bad_payload++;
            last = seq;
            t->consumer_sum += seq;
        }
        t->received += n;
        gpufl__ring_release(&t->ring, n);
    }
    return NULL;
}

static void test_two_threads_overflowing_ring(void **state)
{
    (void)state;
    two_thread *t = calloc(1, sizeof *t);
    assert_non_null(t);
    assert_int_equal(gpufl__ring_init(&t->ring, 256), 0);
    pthread_t prod, cons;
    assert_int_equal(pthread_create(&cons, NULL, consumer_main, t), 0);
    assert_int_equal(pthread_create(&prod, NULL, producer_main, t), 0);
    assert_int_equal(pthread_join(prod, NULL), 0);
    assert_int_equal(pthread_join(cons, NULL), 0);

    uint64_t ring_drops = 0;
    for (unsigned c = 0; c < GFL_CHANNEL_COUNT; c++)
        ring_drops += gpufl__ring_dropped(&t->ring, c);
    assert_int_equal(t->bad_order, 0);
    assert_int_equal(t->bad_payload, 0);
    assert_int_equal(ring_drops, t->producer_drops);
    assert_int_equal(t->received + ring_drops, THREAD_EVENTS);
    /* exactly the committed events arrived, none twice, none invented */
    assert_int_equal(t->consumer_sum, t->producer_sum);
    assert_true(t->received > 0);
    size_t n;
    assert_null(gpufl__ring_peek(&t->ring, SIZE_MAX, &n));
    gpufl__ring_destroy(&t->ring);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential_against_reference_queue),
        cmocka_unit_test(test_capacity_rounding_and_clamping),
        cmocka_unit_test(test_two_threads_overflowing_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
