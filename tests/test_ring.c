/*
 * The SPSC record ring (src/ring/ring.h) and the records it carries
 * (src/core/record.h).
 *
 * Every event of a session crosses a ring, so a lost, duplicated, reordered
 * or torn record, a drop counted against the wrong channel, or a record that
 * comes back as a different event corrupts the trace silently. Checked
 * four ways: a seeded differential test against a plain model of the ring's
 * byte accounting (single thread, records of every length, every operation
 * compared), the capacity rounding and clamping of init, a two-thread run
 * where a producer overflows the ring while the consumer drains it, and
 * scope records packed and expanded back, the wide form included.
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

#include "core/record.h"
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

/* The records the tests write: generic types of several lengths, stack
 * pieces of every length, and packed scope records (narrow and wide). */
enum { K_KERNEL, K_MEMCPY, K_NVTX, K_LOG, K_STACK, K_SCOPE_BEGIN, K_SCOPE_END, K_KINDS };

typedef struct rec_spec {
    unsigned kind, channel, frames;
    uint64_t seq, gap; /* scope: parent distance (wide when >= GFL_SCOPE_NEAR_LIMIT) */
} rec_spec;

static size_t spec_len(const rec_spec *r, gfl_event *ev);

/* The event a spec stands for; several fields carry the sequence number so
 * a torn or stale record shows. */
static void spec_event(const rec_spec *r, gfl_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->h.tid = (uint32_t)(r->seq * 7u + 3u);
    ev->h.ts = r->seq;
    ev->h.flags = (uint8_t)r->channel;
    switch (r->kind) {
    case K_KERNEL:
        ev->h.type = GFL_EV_KERNEL;
        ev->u.kernel.end_ts = ~r->seq;
        ev->u.kernel.correlation = (uint32_t)(r->seq ^ 0xa5a5a5a5u);
        ev->u.kernel.stack_id = (uint32_t)(r->seq >> 3);
        ev->u.kernel.graph_id = r->seq * 3; /* the payload's last field */
        break;
    case K_MEMCPY:
        ev->h.type = GFL_EV_MEMCPY;
        ev->u.memcpy.end_ts = ~r->seq;
        ev->u.memcpy.bytes = r->seq * 5;
        break;
    case K_NVTX:
        ev->h.type = GFL_EV_NVTX_RANGE;
        ev->u.nvtx.end_ts = ~r->seq;
        ev->u.nvtx.name = (uint32_t)r->seq;
        break;
    case K_LOG:
        ev->h.type = GFL_EV_LOG;
        ev->u.log.message = (uint32_t)r->seq;
        ev->u.log.level = 2;
        break;
    case K_STACK:
        ev->h.type = GFL_EV_STACK;
        ev->u.stack.id = (uint32_t)r->seq;
        ev->u.stack.count = (uint8_t)r->frames;
        for (unsigned i = 0; i < r->frames; i++)
            ev->u.stack.frames[i] = (gfl_stack_frame){(uint32_t)r->seq + i, i};
        break;
    default: { /* scopes: what expand must give back for producer 5, thread 99 */
        uint64_t seq = r->seq & GFL_SCOPE_SEQ_MASK;
        ev->h.type = r->kind == K_SCOPE_BEGIN ? GFL_EV_SCOPE_BEGIN : GFL_EV_SCOPE_END;
        ev->h.flags = r->kind == K_SCOPE_END ? GFL_F_SCOPE_IMPLICIT : 0;
        ev->h.tid = 99;
        ev->u.scope.id = (UINT64_C(5) << GFL_SCOPE_SEQ_BITS) | seq;
        ev->u.scope.parent_id = r->gap ? (UINT64_C(5) << GFL_SCOPE_SEQ_BITS) | (seq - r->gap) : 0;
        ev->u.scope.begin_ts = r->kind == K_SCOPE_END ? r->seq / 2 : r->seq;
        ev->u.scope.name = (uint32_t)r->channel + 10;
        ev->u.scope.depth = (uint16_t)(r->seq % 100);
    }
    }
}

static size_t spec_len(const rec_spec *r, gfl_event *ev)
{
    spec_event(r, ev);
    if (r->kind == K_SCOPE_BEGIN || r->kind == K_SCOPE_END)
        return gpufl__scope_record_len(ev->h.type, r->seq, r->gap ? r->seq - r->gap : 0);
    return gpufl__record_len_of(ev);
}

/* Writes the spec's record into rec (room for spec_len bytes). */
static __attribute__((noinline)) void spec_write(const rec_spec *r, void *rec)
{
    gfl_event ev;
    size_t len = spec_len(r, &ev);
    if (r->kind == K_SCOPE_BEGIN || r->kind == K_SCOPE_END)
        gpufl__scope_record_put(rec, ev.h.type, ev.h.flags, ev.u.scope.depth, ev.u.scope.name, ev.h.ts,
                                ev.u.scope.begin_ts, r->seq, r->gap ? r->seq - r->gap : 0);
    else
        memcpy(rec, &ev, len);
}

static bool record_is(const void *rec, const rec_spec *r)
{
    gfl_event want, got;
    size_t len = spec_len(r, &want);
    if (gpufl__record_len(rec) != len)
        return false;
    gpufl__record_expand(rec, 5, 99, &got);
    return memcmp(&want, &got, sizeof want) == 0;
}

static rec_spec random_spec(uint64_t *rng, uint64_t seq)
{
    rec_spec r = {(unsigned)rng_below(rng, K_KINDS), (unsigned)rng_below(rng, GFL_CHANNEL_COUNT), 0, seq, 0};
    if (r.kind == K_STACK)
        r.frames = (unsigned)rng_below(rng, GFL_STACK_FRAMES_PER_EVENT + 1);
    if (r.kind == K_SCOPE_BEGIN || r.kind == K_SCOPE_END) {
        r.seq = seq + GFL_SCOPE_NEAR_LIMIT * 2; /* room for distant parents */
        uint64_t d = rng_below(rng, 4);
        r.gap = d == 0 ? 0 : d == 1 ? 1 : d == 2 ? GFL_SCOPE_NEAR_LIMIT - 1 : GFL_SCOPE_NEAR_LIMIT + seq;
    }
    return r;
}

/* ---- the model: a FIFO of records and the ring's byte accounting -------- */

typedef struct model {
    rec_spec *q;
    uint64_t *end;                       /* each record's end position */
    size_t cap_recs, first, count, read; /* read: records read, not released */
    uint64_t head, tail, size;
} model;

static void model_init(model *m, uint64_t size)
{
    memset(m, 0, sizeof *m);
    m->size = size;
    m->cap_recs = (size_t)(size / GFL_RECORD_ALIGN) + 1;
    m->q = calloc(m->cap_recs, sizeof *m->q);
    m->end = calloc(m->cap_recs, sizeof *m->end);
    assert_non_null(m->q);
    assert_non_null(m->end);
}

/* Whether a record of len bytes fits: one that does not fit before the end
 * of the ring starts at its beginning, the skipped bytes counted as used. */
static bool model_push(model *m, const rec_spec *r, size_t len)
{
    uint64_t room = m->size - m->head % m->size;
    uint64_t end = m->head + (room < len ? room : 0) + len;
    if (end - m->tail > m->size)
        return false;
    size_t i = (m->first + m->count++) % m->cap_recs;
    m->q[i] = *r;
    m->end[i] = m->head = end;
    return true;
}

static const rec_spec *model_at(const model *m, size_t k) { return &m->q[(m->first + k) % m->cap_recs]; }

static void model_release(model *m)
{
    if (m->read)
        m->tail = m->end[(m->first + m->read - 1) % m->cap_recs];
    m->first = (m->first + m->read) % m->cap_recs;
    m->count -= m->read;
    m->read = 0;
}

/* One seeded run of `ops` random operations on a ring of `units` units. */
static void differential_run(uint32_t units, uint64_t seed, unsigned ops)
{
    gpufl__ring ring;
    assert_int_equal(gpufl__ring_init(&ring, units), 0);
    const uint64_t size = gpufl__ring_capacity(&ring);
    assert_int_equal(size, (uint64_t)units * GFL_RING_UNIT);
    model m;
    model_init(&m, size);
    uint64_t expect_dropped[GFL_CHANNEL_COUNT] = {0};
    uint64_t next_seq = 1, rng = seed;
    uint64_t pushes_ok = 0, drops = 0, released = 0, discards = 0, wraps = 0;
    unsigned push_per_mille = 500;

    for (unsigned op = 0; op < ops; op++) {
        /* phases of mostly-push and mostly-read, so the ring is often full
         * (drops), often empty, and wraps many times */
        if (op % 997 == 0) {
            static const unsigned phases[] = {150, 400, 500, 600, 900, 990};
            push_per_mille = phases[rng_below(&rng, sizeof phases / sizeof phases[0])];
        }
        uint64_t dice = rng_below(&rng, 1000);
        if (dice == 999 && rng_below(&rng, 8) == 0) {
            /* rare: a new session adopts the ring and forgets its content */
            gpufl__ring_discard(&ring);
            m.tail = m.head;
            m.first = (m.first + m.count) % m.cap_recs;
            m.count = m.read = 0;
            discards++;
            assert_null(gpufl__ring_read(&ring));
            assert_true(gpufl__ring_empty(&ring));
        } else if (dice < push_per_mille) {
            rec_spec r = random_spec(&rng, next_seq);
            gfl_event scratch;
            size_t len = spec_len(&r, &scratch);
            uint64_t before = m.head;
            bool room = gpufl__ring_has_room(&ring, len);
            void *rec = gpufl__ring_reserve(&ring, len, r.channel);
            bool fits = model_push(&m, &r, len);
            assert_int_equal(room, fits);
            if (!fits) {
                assert_null(rec);
                expect_dropped[r.channel]++;
                drops++;
            } else {
                assert_non_null(rec);
                /* inside the ring, never across its end */
                assert_true((uint8_t *)rec >= ring.bytes && (uint8_t *)rec + len <= ring.bytes + size);
                wraps += m.head - before != len;
                spec_write(&r, rec);
                gpufl__ring_commit(&ring);
                next_seq++;
                pushes_ok++;
            }
            for (unsigned c = 0; c < GFL_CHANNEL_COUNT; c++)
                assert_int_equal(gpufl__ring_dropped(&ring, c), expect_dropped[c]);
        } else {
            size_t want = (size_t)rng_below(&rng, m.count + 3); /* 0 included, and past the end */
            for (size_t k = 0; k < want; k++) {
                const void *rec = gpufl__ring_read(&ring);
                if (m.read == m.count) {
                    assert_null(rec);
                    break;
                }
                assert_non_null(rec);
                const rec_spec *r = model_at(&m, m.read);
                if (!record_is(rec, r))
                    fail_msg("seed %llu op %u: record %zu is not seq %llu (kind %u)", (unsigned long long)seed, op,
                             m.read, (unsigned long long)r->seq, r->kind);
                m.read++;
            }
            assert_int_equal(gpufl__ring_empty(&ring), m.read == m.count);
            if (rng_below(&rng, 3)) {
                released += m.read;
                gpufl__ring_release(&ring);
                model_release(&m);
            }
        }
    }

    /* drain: what is left comes out in order, then the ring is empty */
    const void *rec;
    while ((rec = gpufl__ring_read(&ring)) != NULL) {
        assert_true(m.read < m.count);
        assert_true(record_is(rec, model_at(&m, m.read)));
        m.read++;
    }
    assert_int_equal(m.read, m.count);
    gpufl__ring_release(&ring);
    model_release(&m);
    assert_int_equal(atomic_load(&ring.tail), atomic_load(&ring.head));

    /* the run exercised what it is meant to: fills, drops, wraps */
    assert_true(drops > 0);
    assert_true(wraps > 4);
    assert_true(pushes_ok * GFL_RECORD_ALIGN > 4 * size);
    assert_true(released > 0);
    assert_true(discards > 0);

    free(m.q);
    free(m.end);
    gpufl__ring_destroy(&ring);
}

static void test_differential_against_model(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {16, 64, 1024};
    static const uint64_t seeds[] = {1, 42, 0xdeadbeef, 20240601};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
            differential_run(sizes[s], seeds[i], 200000);
}

/* Records of one length fill the ring exactly; the next is dropped on its
 * channel only, and fits once one is released. */
static void fill_exactly(gpufl__ring *ring, uint64_t size)
{
    const uint64_t n = size / GFL_SCOPE_END_RECORD;
    for (uint64_t i = 1; i <= n; i++) {
        rec_spec r = {K_SCOPE_END, GFL_CHANNEL_SCOPE, 0, i, 0};
        void *rec = gpufl__ring_reserve(ring, GFL_SCOPE_END_RECORD, GFL_CHANNEL_SCOPE);
        assert_non_null(rec);
        spec_write(&r, rec);
        gpufl__ring_commit(ring);
    }
    assert_null(gpufl__ring_reserve(ring, GFL_SCOPE_END_RECORD, GFL_CHANNEL_SYSTEM));
    assert_null(gpufl__ring_reserve(ring, GFL_RECORD_ALIGN, GFL_CHANNEL_SYSTEM));
    assert_int_equal(gpufl__ring_dropped(ring, GFL_CHANNEL_SYSTEM), 2);
    assert_int_equal(gpufl__ring_dropped(ring, GFL_CHANNEL_SCOPE), 0);
    assert_int_equal(gpufl__ring_dropped(ring, GFL_CHANNEL_DEVICE), 0);
    rec_spec first = {K_SCOPE_END, GFL_CHANNEL_SCOPE, 0, 1, 0};
    assert_true(record_is(gpufl__ring_read(ring), &first));
    gpufl__ring_release(ring);
    /* one record freed: one more fits (at the start: a wrap), not two */
    assert_non_null(gpufl__ring_reserve(ring, GFL_SCOPE_END_RECORD, GFL_CHANNEL_DEVICE));
    gpufl__ring_commit(ring);
    assert_null(gpufl__ring_reserve(ring, GFL_RECORD_ALIGN, GFL_CHANNEL_DEVICE));
    assert_int_equal(gpufl__ring_dropped(ring, GFL_CHANNEL_DEVICE), 1);
}

static void test_capacity_rounding_and_clamping(void **state)
{
    (void)state;
    static const struct {
        uint32_t requested;
        uint64_t units;
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
        uint64_t want = cases[i].units * GFL_RING_UNIT;
        if (gpufl__ring_capacity(&ring) != want)
            fail_msg("init(%u): capacity %llu bytes, expected %llu", cases[i].requested,
                     (unsigned long long)gpufl__ring_capacity(&ring), (unsigned long long)want);
        /* a fresh ring is empty with no drops */
        assert_null(gpufl__ring_read(&ring));
        assert_true(gpufl__ring_empty(&ring));
        for (unsigned c = 0; c < GFL_CHANNEL_COUNT; c++)
            assert_int_equal(gpufl__ring_dropped(&ring, c), 0);
        if (want <= 64 * 1024)
            fill_exactly(&ring, want);
        gpufl__ring_destroy(&ring);
        assert_null(ring.bytes);
    }
}

/* ---- scope records -------------------------------------------------------- */

/* Packed and back, at the edges of the parent distance that packs. */
static void test_scope_records_round_trip(void **state)
{
    (void)state;
    static const uint64_t seqs[] = {1, 2, 1000, GFL_SCOPE_NEAR_LIMIT, GFL_SCOPE_NEAR_LIMIT + 5, GFL_SCOPE_SEQ_MASK};
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
        uint64_t s = seqs[i];
        uint64_t gaps[] = {0, 1, s - 1, GFL_SCOPE_NEAR_LIMIT - 1, GFL_SCOPE_NEAR_LIMIT};
        for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
            if (gaps[g] >= s)
                continue; /* a parent is an earlier scope */
            for (unsigned kind = K_SCOPE_BEGIN; kind <= K_SCOPE_END; kind++) {
                rec_spec r = {kind, GFL_CHANNEL_SCOPE, 0, s, gaps[g]};
                gfl_event ev;
                size_t len = spec_len(&r, &ev);
                size_t narrow = kind == K_SCOPE_BEGIN ? 24 : 32;
                assert_int_equal(len, gaps[g] >= GFL_SCOPE_NEAR_LIMIT ? narrow + 8 : narrow);
                uint8_t buf[64];
                memset(buf, 0xee, sizeof buf);
                spec_write(&r, buf);
                assert_int_equal(buf[len], 0xee); /* nothing written past its length */
                if (!record_is(buf, &r))
                    fail_msg("scope record seq %llu gap %llu kind %u changed on the way", (unsigned long long)s,
                             (unsigned long long)gaps[g], kind);
            }
        }
    }
    /* generic records of scope types do not exist: scopes are packed */
    gfl_event ev = {.h = {.type = GFL_EV_SCOPE_BEGIN, .ts = 1}};
    assert_int_equal(gpufl__record_len_of(&ev), 0);
    ev.h.type = GFL_EV_NONE;
    assert_int_equal(gpufl__record_len_of(&ev), 0);
    ev.h.type = GFL_EV_TYPE_COUNT;
    assert_int_equal(gpufl__record_len_of(&ev), 0);
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

/* Both threads derive a record's shape from its sequence number alone. */
static rec_spec spec_of(uint64_t seq)
{
    uint64_t rng = seq * 0x9e3779b97f4a7c15ull;
    return random_spec(&rng, seq);
}

static void *producer_main(void *arg)
{
    two_thread *t = arg;
    uint64_t drops = 0, sum = 0;
    for (uint64_t seq = 1; seq <= THREAD_EVENTS; seq++) {
        rec_spec r = spec_of(seq);
        gfl_event scratch;
        void *rec = gpufl__ring_reserve(&t->ring, spec_len(&r, &scratch), r.channel);
        if (!rec) {
            drops++;
            continue;
        }
        spec_write(&r, rec);
        gpufl__ring_commit(&t->ring);
        sum += seq;
    }
    t->producer_drops = drops;
    t->producer_sum = sum;
    /* release: the consumer that sees done sees every commit before it */
    atomic_store_explicit(&t->producer_done, true, memory_order_release);
    return NULL;
}

/* The sequence number of a record written by producer_main. */
static uint64_t seq_of(const void *rec)
{
    gfl_event ev;
    gpufl__record_expand(rec, 5, 99, &ev);
    if (ev.h.type == GFL_EV_SCOPE_BEGIN || ev.h.type == GFL_EV_SCOPE_END)
        return (ev.u.scope.id & GFL_SCOPE_SEQ_MASK) - GFL_SCOPE_NEAR_LIMIT * 2;
    return ev.h.ts;
}

static void *consumer_main(void *arg)
{
    two_thread *t = arg;
    uint64_t last = 0;
    unsigned batch = 1;
    for (;;) {
        bool done = atomic_load_explicit(&t->producer_done, memory_order_acquire);
        /* varying batch sizes, as the collector's would */
        unsigned n = 0;
        const void *rec;
        while (n < batch && (rec = gpufl__ring_read(&t->ring)) != NULL) {
            uint64_t seq = seq_of(rec);
            rec_spec r = spec_of(seq);
            if (seq <= last)
                t->bad_order++;
            if (!record_is(rec, &r))
                t->bad_payload++;
            last = seq;
            t->consumer_sum += seq;
            n++;
        }
        batch = batch * 5 % 97 + 1;
        if (n == 0) {
            if (done)
                break; /* done was seen before this empty read: nothing is left */
            sched_yield();
            continue;
        }
        t->received += n;
        gpufl__ring_release(&t->ring);
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
    /* exactly the committed records arrived, none twice, none invented */
    assert_int_equal(t->consumer_sum, t->producer_sum);
    assert_true(t->received > 0);
    assert_null(gpufl__ring_read(&t->ring));
    gpufl__ring_destroy(&t->ring);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential_against_model),
        cmocka_unit_test(test_capacity_rounding_and_clamping),
        cmocka_unit_test(test_scope_records_round_trip),
        cmocka_unit_test(test_two_threads_overflowing_ring),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
