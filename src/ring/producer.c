/*
 * Producer registration, adoption and thread-exit handling (see producer.h).
 * Everything here is a slow path: it runs once per thread, not per event.
 */
#include "ring/producer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread gpufl__producer *gpufl__tls_producer __attribute__((tls_model("initial-exec")));
/* Set once the thread-exit destructor ran: a late push must not re-attach. */
static __thread int tls_exited __attribute__((tls_model("initial-exec")));

void (*gpufl__producer_exit_hook)(gpufl__producer *p);

static _Atomic(gpufl__producer *) registry_head;
static _Atomic uint32_t registry_count;
static _Atomic uint32_t ring_events = 8192;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void on_thread_exit(void *arg)
{
    gpufl__producer *p = arg;
    if (gpufl__producer_exit_hook)
        gpufl__producer_exit_hook(p);
    p->depth = 0;
    atomic_store_explicit(&p->in_scope, 0, memory_order_relaxed);
    gpufl__tls_producer = NULL;
    tls_exited = 1;
    /* release: the collector sees our last head and loss counters */
    atomic_store_explicit(&p->state, GFL_PRODUCER_ORPHANED, memory_order_release);
}

static void make_exit_key(void) { (void)pthread_key_create(&exit_key, on_thread_exit); }

void gpufl__producer_set_ring_events(uint32_t events)
{
    atomic_store_explicit(&ring_events, events, memory_order_relaxed);
}

gpufl__producer *gpufl__producer_first(void)
{
    /* acquire: pairs with the release CAS that published the node */
    return atomic_load_explicit(&registry_head, memory_order_acquire);
}

uint32_t gpufl__producer_count(void) { return atomic_load_explicit(&registry_count, memory_order_relaxed); }

/* A free producer whose ring is of the size ring_events asks for now: a
 * thread that starts recording in a session with another ring_events than
 * the one that made the free producers gets a ring of its own size (those
 * stay free for a session of their size). */
static gpufl__producer *adopt_free(void)
{
    size_t want = gpufl__ring_bytes_for(atomic_load_explicit(&ring_events, memory_order_relaxed));
    for (gpufl__producer *p = gpufl__producer_first(); p; p = p->next) {
        if (p->ring.map_bytes != want)
            continue;
        int expected = GFL_PRODUCER_FREE;
        /* acquire on success: pairs with the collector's release */
        if (atomic_load_explicit(&p->state, memory_order_relaxed) == GFL_PRODUCER_FREE &&
            atomic_compare_exchange_strong_explicit(&p->state, &expected, GFL_PRODUCER_OWNED, memory_order_acquire,
                                                    memory_order_relaxed))
            return p;
    }
    return NULL;
}

static gpufl__producer *create_producer(void)
{
    gpufl__producer *p = aligned_alloc(64, (sizeof *p + 63) & ~(size_t)63);
    if (!p)
        return NULL;
    memset(p, 0, sizeof *p);
    if (gpufl__ring_init(&p->ring, atomic_load_explicit(&ring_events, memory_order_relaxed)) != 0) {
        free(p);
        return NULL;
    }
    p->index = atomic_fetch_add_explicit(&registry_count, 1, memory_order_relaxed) + 1;
    gpufl__producer *head = atomic_load_explicit(&registry_head, memory_order_relaxed);
    do {
        p->next = head;
        /* release: the node's contents are visible to whoever loads the head */
    } while (
        !atomic_compare_exchange_weak_explicit(&registry_head, &head, p, memory_order_release, memory_order_relaxed));
    return p;
}

gpufl__producer *gpufl__producer_attach(void)
{
    if (tls_exited)
        return NULL;
    (void)pthread_once(&exit_key_once, make_exit_key);
    gpufl__producer *p = adopt_free();
    if (!p)
        p = create_producer();
    if (!p)
        return NULL;
    atomic_store_explicit(&p->tid, (uint32_t)syscall(SYS_gettid), memory_order_relaxed);
    p->depth = 0;
    atomic_store_explicit(&p->in_scope, 0, memory_order_relaxed);
    if (pthread_setspecific(exit_key, p) != 0) {
        /* Without the destructor the producer could never be handed on;
         * give it back now and record nothing from this thread. */
        atomic_store_explicit(&p->state, GFL_PRODUCER_FREE, memory_order_release);
        return NULL;
    }
    gpufl__tls_producer = p;
    return p;
}
