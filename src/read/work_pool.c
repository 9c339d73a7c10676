/*
 * The parallel for of the trace loaders (see work_pool.h).
 */
#include "read/work_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct pool {
    void (*fn)(void *ctx, size_t job, unsigned worker);
    void *ctx;
    size_t njobs;
    /* relaxed: a job number only has to be handed out once; what the jobs
     * write is published to the caller by pthread_join */
    atomic_size_t next;
} pool;

typedef struct worker_arg {
    pool *p;
    unsigned worker;
} worker_arg;

static void run_jobs(pool *p, unsigned worker)
{
    for (;;) {
        size_t job = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (job >= p->njobs)
            return;
        p->fn(p->ctx, job, worker);
    }
}

static void *thread_main(void *arg)
{
    worker_arg *a = arg;
    run_jobs(a->p, a->worker);
    return NULL;
}

void gpufl__parallel_for(unsigned nthreads, size_t njobs, void (*fn)(void *ctx, size_t job, unsigned worker), void *ctx)
{
    pool p = {fn, ctx, njobs, 0};
    if (nthreads > GPUFL__MAX_READ_THREADS)
        nthreads = GPUFL__MAX_READ_THREADS;
    if (nthreads > njobs)
        nthreads = (unsigned)njobs;
    pthread_t threads[GPUFL__MAX_READ_THREADS];
    worker_arg args[GPUFL__MAX_READ_THREADS];
    unsigned started = 0;
    for (unsigned w = 1; w < nthreads; w++) {
        args[started] = (worker_arg){&p, started + 1};
        if (pthread_create(&threads[started], NULL, thread_main, &args[started]) != 0)
            break;
        started++;
    }
    run_jobs(&p, 0);
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
}

unsigned gpufl__read_threads(void)
{
    long n = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (n <= 0)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n <= 0)
        n = 1;
    return n > GPUFL__MAX_READ_THREADS ? GPUFL__MAX_READ_THREADS : (unsigned)n;
}
