/*
 * Running the jobs of a trace load on several threads: decoding the chunks
 * of a .gflt file or the line ranges of NDJSON logs, then merging their
 * rows. A parallel for: up to n threads (the caller's among them) take
 * jobs 0, 1, 2, ... in order until none is left, and the call returns when
 * every job is done. Threads are started per call and joined before it
 * returns: a load makes two or three calls, each of tens of milliseconds
 * or more, so a pool kept between calls would save nothing.
 *
 * Called from one thread at a time per job set; fn runs on every worker.
 */
#ifndef GPUFL_READ_WORK_POOL_H
#define GPUFL_READ_WORK_POOL_H

#include <stddef.h>

#define GPUFL__MAX_READ_THREADS 64

/* Runs fn(ctx, job, worker) for every job in [0, njobs), on at most
 * nthreads threads; worker (< nthreads) numbers the thread, for per-thread
 * scratch. A thread that cannot be started leaves its share to the others
 * (with none, the caller runs every job). Everything fn wrote is visible to
 * the caller when this returns. */
void gpufl__parallel_for(unsigned nthreads, size_t njobs, void (*fn)(void *ctx, size_t job, unsigned worker),
                         void *ctx);

/* Threads to read with: the CPUs this process may run on, at most
 * GPUFL__MAX_READ_THREADS. */
unsigned gpufl__read_threads(void);

#endif /* GPUFL_READ_WORK_POOL_H */
