/*
 * Activity buffers (see activity_buffers.h).
 *
 * The queue is a mutex-protected FIFO. The mutex is taken only by CUPTI's
 * completion callback (once per 2 MiB of records) and by the worker for a
 * few pointer moves, never while either calls into CUPTI, so it cannot
 * deadlock against CUPTI's own locks.
 */
#include "backend/cupti/activity_buffers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/* The bookkeeping lives in front of the records, so one allocation per
 * buffer; CUPTI wants the records 8-byte aligned. */
#define HEADER_BYTES 64
_Static_assert(sizeof(gfl_activity_buffer) <= HEADER_BYTES, "buffer header fits");

/* Processed buffers kept for reuse: CUPTI writes records into a buffer on
 * the program's thread, and a fresh 2 MiB allocation would make that thread
 * take a page fault every 4 KiB of records. */
#define SPARE_MAX 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static gfl_activity_buffer *head, *tail;
static gfl_activity_buffer *spare; /* under lock */
static unsigned n_spare;
static bool woken;
static _Atomic uint32_t outstanding;
static _Atomic uint32_t peak;
static _Atomic uint64_t refused;

void gfl_buffers_reset(void)
{
    atomic_store(&refused, 0);
    atomic_store(&peak, atomic_load(&outstanding));
}

void CUPTIAPI gfl_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0; /* fill the buffer */
    uint32_t n = atomic_fetch_add(&outstanding, 1) + 1;
    if (n > GFL_ACTIVITY_BUFFERS_MAX) {
        atomic_fetch_sub(&outstanding, 1);
        atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
        return;
    }
    pthread_mutex_lock(&lock);
    uint8_t *block = (uint8_t *)spare;
    if (spare) {
        spare = spare->next;
        n_spare--;
    }
    pthread_mutex_unlock(&lock);
    if (!block)
        block = aligned_alloc(HEADER_BYTES, HEADER_BYTES + GFL_ACTIVITY_BUFFER_BYTES);
    if (!block) {
        atomic_fetch_sub(&outstanding, 1);
        atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
        return;
    }
    uint32_t p = atomic_load_explicit(&peak, memory_order_relaxed);
    while (n > p && !atomic_compare_exchange_weak(&peak, &p, n))
        ;
    *buffer = block + HEADER_BYTES;
    *size = GFL_ACTIVITY_BUFFER_BYTES;
}

void CUPTIAPI gfl_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)size;
    if (!buffer)
        return;
    gfl_activity_buffer *b = (gfl_activity_buffer *)(buffer - HEADER_BYTES);
    b->next = NULL;
    b->data = buffer;
    b->valid = valid;
    b->context = ctx;
    b->stream = stream;
    pthread_mutex_lock(&lock);
    if (tail)
        tail->next = b;
    else
        head = b;
    tail = b;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
}

gfl_activity_buffer *gfl_buffers_take(uint64_t timeout_ns)
{
    pthread_mutex_lock(&lock);
    if (!head && !woken && timeout_ns) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)(timeout_ns / 1000000000u);
        until.tv_nsec += (long)(timeout_ns % 1000000000u);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!head && !woken)
            if (pthread_cond_timedwait(&ready, &lock, &until) != 0)
                break;
    }
    /* only a wait consumes a wake-up: one that came after the worker last
     * looked for flush requests must still cut its next wait short */
    if (timeout_ns)
        woken = false;
    gfl_activity_buffer *all = head;
    head = tail = NULL;
    pthread_mutex_unlock(&lock);
    return all;
}

void gfl_buffers_wake(void)
{
    pthread_mutex_lock(&lock);
    woken = true;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
}

void gfl_buffer_free(gfl_activity_buffer *b)
{
    pthread_mutex_lock(&lock);
    if (n_spare < SPARE_MAX) {
        b->next = spare;
        spare = b;
        n_spare++;
        b = NULL;
    }
    pthread_mutex_unlock(&lock);
    free(b);
    atomic_fetch_sub(&outstanding, 1);
}

uint64_t gfl_buffers_refused(void) { return atomic_load_explicit(&refused, memory_order_relaxed); }

uint64_t gfl_buffers_peak_bytes(void)
{
    return (uint64_t)atomic_load_explicit(&peak, memory_order_relaxed) * GFL_ACTIVITY_BUFFER_BYTES;
}
