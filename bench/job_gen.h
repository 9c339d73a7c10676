/*
 * A synthetic distributed job for bench_job: the sessions of RANKS ranks,
 * each trace_gen.c's session (the same bulk on every rank, as data
 * parallel ranks run the same program) with, per rank:
 *
 *  - NCCL collectives on their own stream, a few % of the kernels: at each
 *    step's backward pass a fixed sequence (a ReduceScatter, AllReduces,
 *    an AllGather), the same on every rank so that they match. A
 *    collective ends at one instant on every rank (the last arrival plus
 *    its duration); arrivals differ by a few us, and one rank arrives
 *    milliseconds late at one collective in JOB_GEN_LATE_EVERY;
 *  - clock events (GFL_EV_CLOCK) at the start, every 10 s and at the end;
 *  - a session.json beside its trace.gflt with a `job` object (torchrun:
 *    rank, local_rank, world_size, id, host). The first half of the ranks
 *    are on one host, the rest on another, whose CLOCK_MONOTONIC started
 *    an hour later and whose CLOCK_REALTIME is 180 us off (within the NTP
 *    error its clock events carry).
 *
 * Failures print "bench_job: <what>" and exit: benchmark set-up.
 */
#ifndef GPUFL_BENCH_JOB_GEN_H
#define GPUFL_BENCH_JOB_GEN_H

#include <stdint.h>

#define JOB_GEN_LATE_EVERY 97 /* the late rank is late at one collective in this many */

typedef struct job_gen_stats {
    uint64_t events, kernels, nccl_kernels, clocks;
    uint64_t gflt_bytes;
} job_gen_stats;

/* The late rank of a job of `ranks`. */
int job_gen_late_rank(int ranks);

/* Writes rank `rank` of a job of `ranks` as the session directory dir
 * (created): dir/trace.gflt with `events` events, and dir/session.json. */
void job_gen_rank(const char *dir, int rank, int ranks, uint64_t events, job_gen_stats *st);

#endif /* GPUFL_BENCH_JOB_GEN_H */
