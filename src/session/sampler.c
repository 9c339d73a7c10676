/*
 * The system sampler thread (see sampler.h). There is at most one per
 * process, so its state is static; the mutex guards start/stop/kick, never
 * the sampling itself.
 */
#include "session/sampler.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/device_info.h"
#include "core/os.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"
#include "session/system_window.h"

#define MAX_EVENTS_PER_SOURCE GFL_MAX_DEVICES /* one event per GPU */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static pthread_once_t wake_once = PTHREAD_ONCE_INIT;
static bool running, stop_requested, kicked;
static pthread_t thread;
static uint64_t period_ns;
static bool continuous;
static gpufl__metric_source sources[GFL_SAMPLER_MAX_SOURCES];
static size_t n_sources;
static gpufl__sampler_reader reader; /* reading NULL: none */

static bool have_membarrier;

/*
 * membarrier(PRIVATE_EXPEDITED) runs a full barrier on every thread of the
 * process. The sampler calls it once per sample, between taking the
 * sample's timestamp and re-checking that its window is still open, so that
 * a producer's "window closed" store made before the barrier is seen; the
 * producers themselves pay nothing (no fence on the scope path). Where the call is
 * unavailable (old kernels, seccomp), a sample can trail a scope's end by
 * the few ns of one ring write.
 */
static void setup_membarrier(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    have_membarrier = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0;
}

static void barrier_all_threads(void)
{
    if (!have_membarrier || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) != 0)
        atomic_thread_fence(memory_order_seq_cst);
}

static void init_wake(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &ca);
    pthread_condattr_destroy(&ca);
}

static bool any_scope_open(void)
{
    for (gpufl__producer *p = gpufl__producer_first(); p; p = p->next)
        if (atomic_load_explicit(&p->in_scope, memory_order_relaxed))
            return true;
    return false;
}

static bool window_open(void) { return continuous || gpufl__system_windows_open() > 0 || any_scope_open(); }

/* A reading for the reader alone: nothing is recorded. */
static void read_only(void)
{
    gfl_event events[GFL_SAMPLER_MAX_SOURCES * MAX_EVENTS_PER_SOURCE];
    size_t n = 0;
    uint64_t ts = gpufl__now_ns();
    for (size_t i = 0; i < n_sources; i++)
        n += sources[i].sample(sources[i].self, ts, events + n, MAX_EVENTS_PER_SOURCE);
    reader.reading(reader.ctx, events, n);
}

static void take_sample(gpufl__producer *self)
{
    gfl_event events[GFL_SAMPLER_MAX_SOURCES * MAX_EVENTS_PER_SOURCE];
    size_t n = 0;
    if (reader.reading && !reader.record) {
        read_only();
        return;
    }
    if (!window_open()) {
        if (reader.reading) {
            read_only(); /* sample() in place of idle(): rates restart from it the same way */
            return;
        }
        uint64_t ts = gpufl__now_ns();
        for (size_t i = 0; i < n_sources; i++)
            if (sources[i].idle)
                sources[i].idle(sources[i].self, ts);
        return;
    }
    /* full fence: the clock is read after the window was seen open */
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t ts = gpufl__now_ns();
    /* Still open after the barrier: then it closed, if at all, after ts, so
     * ts lies inside it. Checked before reading, not after: a reading can
     * take milliseconds (NVML), longer than a short window lasts. */
    barrier_all_threads();
    if (!window_open() || !self) {
        if (reader.reading)
            read_only();
        return;
    }
    for (size_t i = 0; i < n_sources; i++)
        n += sources[i].sample(sources[i].self, ts, events + n, MAX_EVENTS_PER_SOURCE);
    if (reader.reading)
        reader.reading(reader.ctx, events, n);
    uint32_t tid = gpufl__producer_tid(self);
    for (size_t i = 0; i < n; i++)                            /* sources leave the header's tid 0 */
        (void)gpufl__ring_push(&self->ring, &events[i], tid); /* a full ring counts it lost */
}

static void *sampler_main(void *arg)
{
    (void)arg;
    setup_membarrier();
    gpufl__producer *self = gpufl__producer_self();
    uint64_t next = gpufl__mono_ns();
    pthread_mutex_lock(&lock);
    while (!stop_requested) {
        uint64_t now = gpufl__mono_ns();
        if (now >= next || kicked) {
            kicked = false;
            pthread_mutex_unlock(&lock);
            take_sample(self);
            pthread_mutex_lock(&lock);
            next += period_ns;
            if (next <= now)
                next = now + period_ns; /* fell behind: skip, never burst */
            continue;
        }
        struct timespec until = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        (void)pthread_cond_timedwait(&wake, &lock, &until);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int gpufl__sampler_start(uint32_t period_ms, bool continuous_sampling, const gpufl__metric_source *src, size_t n,
                         const gpufl__sampler_reader *rd, char *err, size_t err_len)
{
    pthread_once(&wake_once, init_wake);
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (running || n > GFL_SAMPLER_MAX_SOURCES || period_ms == 0) {
        snprintf(err, err_len, "the sampler is already running or was misconfigured");
        rc = GPUFL_ESTATE;
        goto fail;
    }
    memcpy(sources, src, n * sizeof *src);
    n_sources = n;
    period_ns = (uint64_t)period_ms * 1000000ull;
    continuous = continuous_sampling;
    reader = rd ? *rd : (gpufl__sampler_reader){0};
    stop_requested = kicked = false;
    int perr = gpufl__thread_start(&thread, sampler_main, NULL, "gpufl-sample");
    if (perr != 0) {
        snprintf(err, err_len, "cannot start the sampler thread: %s", strerror(perr));
        n_sources = 0;
        rc = GPUFL_ENOMEM;
        goto fail;
    }
    running = true;
    pthread_mutex_unlock(&lock);
    return 0;
fail:
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < n; i++)
        src[i].close(src[i].self);
    return rc;
}

void gpufl__sampler_stop(void)
{
    pthread_once(&wake_once, init_wake);
    pthread_mutex_lock(&lock);
    if (!running) {
        pthread_mutex_unlock(&lock);
        return;
    }
    stop_requested = true;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    pthread_mutex_lock(&lock);
    running = false;
    for (size_t i = 0; i < n_sources; i++)
        sources[i].close(sources[i].self);
    n_sources = 0;
    reader = (gpufl__sampler_reader){0};
    pthread_mutex_unlock(&lock);
}

void gpufl__sampler_kick(void)
{
    pthread_once(&wake_once, init_wake);
    pthread_mutex_lock(&lock);
    if (running) {
        kicked = true;
        pthread_cond_signal(&wake);
    }
    pthread_mutex_unlock(&lock);
}

/* fork(): the child has no sampler thread, whatever the parent had. */
void gpufl__sampler_forget_after_fork(void)
{
    running = false;
    n_sources = 0;
    pthread_mutex_init(&lock, NULL);
}
