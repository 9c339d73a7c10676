/*
 * Cost of one CPU stack capture (gpufl__stack_capture: unwind, hash, table
 * probe) on a stack already known, for stacks of 10, 30 and 60 frames
 * (recursion to the depth), against a plain unw_backtrace() of the same
 * depth into the same buffer size, in alternating batches of the same run:
 * the ratio is what the recorder adds to the unwinding itself. The first capture of each depth
 * (the definition, through a host whose push() does nothing) is not timed.
 * Then one thread per CPU (up to 8) captures at once (30 frames), to show
 * that threads do not slow one another (no cache line is shared per capture).
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cupti/stack_capture.h"
#include "bench_util.h"

#define BATCH 20000
#define BATCHES 15
#define RAW 96 /* the capture's own buffer: 64 frames + room for CUPTI's */
#define MAX_THREADS 8

static uint64_t now_ns(void) { return bench_now_ns(); }
static uint32_t intern(const char *s, size_t n)
{
    (void)s;
    (void)n;
    return 1;
}
static int push(const gfl_event *ev)
{
    (void)ev;
    return 0;
}
static const gpufl_plugin_host host = {
    .size = sizeof host, .abi = GPUFL_PLUGIN_ABI, .now_ns = now_ns, .intern = intern, .push = push};

typedef struct job {
    int frames;     /* wanted depth of the stack at the capture */
    int base;       /* frames below the recursion (main, libc, ...) */
    double base_ns; /* results: median ns per call */
    double capture_ns;
    uint32_t id;
} job;

static volatile uint32_t sink;

/* Batches of unw_backtrace() and of gpufl__stack_capture() alternate, so that
 * both see the same machine state. */
static __attribute__((noinline)) void measure(job *j)
{
    void *buf[RAW];
    double per_base[BATCHES], per_capture[BATCHES];
    j->id = gpufl__stack_capture(); /* the definition, not timed */
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < BATCH; i++)
            sink = (uint32_t)unw_backtrace(buf, RAW);
        uint64_t t1 = bench_now_ns();
        for (int i = 0; i < BATCH; i++)
            sink = gpufl__stack_capture();
        uint64_t t2 = bench_now_ns();
        per_base[b] = (double)(t1 - t0) / BATCH;
        per_capture[b] = (double)(t2 - t1) / BATCH;
    }
    j->base_ns = bench_median(per_base, BATCHES);
    j->capture_ns = bench_median(per_capture, BATCHES);
}

/* Recurses until the stack is j->frames deep at measure()'s calls. */
static __attribute__((noinline)) void descend(job *j, int left)
{
    if (left > 0)
        descend(j, left - 1);
    else
        measure(j);
    __asm__ volatile("" ::: "memory"); /* no tail call */
}

/* Frames below the caller: counted once, by unwinding from the same place. */
static __attribute__((noinline)) int frames_here(void)
{
    void *buf[RAW];
    return unw_backtrace(buf, RAW) - 1; /* without this function */
}

static void run(job *j)
{
    /* measure(), descend(j, 0) and run() are one frame each */
    descend(j, j->frames - j->base - 3);
}

static void *thread_main(void *arg)
{
    job *j = arg;
    j->base = frames_here();
    run(j);
    return NULL;
}

int main(void)
{
    char machine[512];
    bench_machine(machine, sizeof machine);
    if (gpufl__stack_init(&host, 1024) != 0) {
        fprintf(stderr, "bench_stack_capture: capture unsupported (no libunwind)\n");
        return 1;
    }
    int base = frames_here();
    printf("bench_stack_capture (%s)\n", machine);
    printf("  ns per call, median of %d batches of %d, stack known (steady state)\n", BATCHES, BATCH);
    printf("  %6s  %14s  %18s  %6s\n", "frames", "unw_backtrace", "gpufl__stack_capture", "ratio");
    static const int depths[] = {10, 30, 60};
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
        job j = {.frames = depths[d], .base = base};
        run(&j);
        if (!j.id) {
            fprintf(stderr, "bench_stack_capture: capture returned 0\n");
            return 1;
        }
        printf("  %6d  %14.1f  %18.1f  %6.2f\n", depths[d], j.base_ns, j.capture_ns, j.capture_ns / j.base_ns);
    }

    /* one thread per CPU (up to 8) at once, 30 frames each */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = cpus < 2 ? 2 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
    pthread_t t[MAX_THREADS];
    job jobs[MAX_THREADS];
    for (int i = 0; i < nthreads; i++) {
        jobs[i] = (job){.frames = 30};
        pthread_create(&t[i], NULL, thread_main, &jobs[i]);
    }
    double per_base[MAX_THREADS], per_capture[MAX_THREADS];
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        per_base[i] = jobs[i].base_ns;
        per_capture[i] = jobs[i].capture_ns;
    }
    double b = bench_median(per_base, (size_t)nthreads), c = bench_median(per_capture, (size_t)nthreads);
    printf("  %d threads at once (one per CPU), 30 frames, median of threads:\n", nthreads);
    printf("  %6d  %14.1f  %18.1f  %6.2f\n", 30, b, c, c / b);
    gfl_stack_stats s;
    gpufl__stack_stats_get(&s);
    printf("  captures %llu, failures %llu (must be 0)\n", (unsigned long long)s.captures,
           (unsigned long long)s.failures);
    gpufl__stack_shutdown();
    return s.failures == 0 ? 0 : 1;
}
