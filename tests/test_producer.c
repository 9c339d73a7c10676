/*
 * The producer registry: a thread that starts recording adopts a free
 * producer only when its ring has the size ring_events asks for now, so
 * that the option holds for every thread that attaches after it is set
 * (a session with a smaller ring_events used to get the rings of an
 * earlier session's exited threads).
 *
 * Why: the SASS metrics tests size a thread's ring through ring_events
 * and count on it; so does whoever tunes ring_events.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>

#include "ring/producer.h"
#include "ring/ring.h"

static void *attach(void *arg)
{
    (void)arg;
    return gpufl__producer_attach();
}

/* Attaches on a thread of its own and exits: the producer is orphaned,
 * then released as the collector does once it is drained. */
static gpufl__producer *attach_and_exit(void)
{
    gpufl__producer *p = NULL;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, attach, NULL), 0);
    assert_int_equal(pthread_join(th, (void **)&p), 0);
    assert_non_null(p);
    assert_int_equal(atomic_load(&p->state), GFL_PRODUCER_ORPHANED);
    gpufl__producer_release_orphan(p);
    return p;
}

static void a_free_producer_is_adopted_only_with_a_ring_of_the_size_asked_for(void **state)
{
    (void)state;
    gpufl__producer_set_ring_events(64);
    gpufl__producer *small = attach_and_exit();
    assert_int_equal(small->ring.map_bytes, gpufl__ring_bytes_for(64));

    gpufl__producer_set_ring_events(1024);
    gpufl__producer *big = attach_and_exit(); /* not the free small one */
    assert_ptr_not_equal(big, small);
    assert_int_equal(big->ring.map_bytes, gpufl__ring_bytes_for(1024));

    gpufl__producer_set_ring_events(64);
    uint32_t created = gpufl__producer_count();
    assert_ptr_equal(attach_and_exit(), small); /* adopted again: its size */
    assert_int_equal(gpufl__producer_count(), created);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_free_producer_is_adopted_only_with_a_ring_of_the_size_asked_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
