/*
 * The sessions of one distributed job read together (issue 16): what each
 * rank's session says that the job analyses need (its digest: small
 * enough to hold every rank's at once, so a job of many ranks is read one
 * session at a time), the ranks put on one time line, and what is found
 * across them: who arrives late at collectives, how much communication
 * overlaps computation, and how unevenly kernels take time across ranks.
 *
 * Times in a digest are the rank's session clock; shift_ns (from
 * gpufl__job_align) takes them to the job's time line, which is the
 * session clock of the first rank (the lowest rank number).
 */
#ifndef GPUFL_ANALYZE_ANA_JOB_H
#define GPUFL_ANALYZE_ANA_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"

#define GPUFL_JOB_UNKNOWN_ERROR UINT64_MAX

/* One NCCL kernel of a rank. */
typedef struct gpufl__job_coll {
    uint64_t start_ns, end_ns;   /* session clock */
    uint64_t gpu_idle_before_ns; /* the device had no kernel running for this long before it */
    uint64_t api_ns;             /* its launch call began (host), 0 unknown */
    uint32_t last_kernel;        /* digest string: the kernel that ran before that gap, 0 none */
    uint32_t stream;             /* the rank's NCCL streams numbered 0.. in order of first use */
    uint32_t step;               /* the step it ran in, from 1; 0 outside any step */
    uint8_t coll, algo, proto;   /* gpufl__nccl_* */
    uint8_t has_bytes;           /* bytes is known (gpufl__nccl_bytes_attach matched an nccl_coll event) */
    uint8_t api_coll;            /* the collective that event names, 0 none */
    uint32_t nranks;             /* ranks of its communicator, 0 unknown */
    uint64_t bytes;              /* count x datatype size, with has_bytes */
} gpufl__job_coll;

/* Time of one kernel name on a rank (NCCL's excluded). */
typedef struct gpufl__job_kernel_time {
    uint32_t name; /* digest string */
    uint64_t count, total_ns;
} gpufl__job_kernel_time;

/* A step: the repeated outermost scope (gpufl__job_rank_digest says which). */
typedef struct gpufl__job_step {
    uint64_t begin_ns, end_ns;
} gpufl__job_step;

typedef struct gpufl__job_rank {
    /* identity */
    char *path;   /* the session read */
    int64_t rank; /* -1: the session has no rank (then ranks are numbered by path order) */
    int64_t local_rank, world_size;
    char *host, *job_id, *launcher, *session_id;
    int32_t pid;
    /* clocks: session clock to CLOCK_MONOTONIC and to CLOCK_REALTIME (medians over the clock pairs) */
    uint64_t start_ns, end_ns, start_wall_ns;
    bool has_mono;
    int64_t mono_offset_ns, wall_offset_ns;
    uint64_t clock_uncertainty_ns; /* largest read uncertainty of the pairs used */
    uint64_t ntp_maxerror_ns;      /* GPUFL_JOB_UNKNOWN_ERROR: no NTP state */
    bool ntp_synchronised;
    /* work */
    uint64_t kernels, nccl_kernels;
    uint64_t busy_ns;                                  /* union of kernels over the rank's devices */
    uint64_t comm_ns, compute_ns, overlap_ns, span_ns; /* summed over devices (gpufl__nccl_overlap) */
    gpufl__job_coll *coll;
    size_t ncoll;
    uint64_t nccl_recorded;     /* nccl_coll events in the session (NCCL's profiler plugin) */
    uint32_t bytes_note;        /* digest string: why some collectives have no bytes (gpufl__nccl_ops.bytes_note) */
    gpufl__job_kernel_time *kt; /* one per kernel name, in the order of their first configuration */
    size_t nkt;
    gpufl__job_step *steps;
    size_t nsteps;
    uint32_t step_name; /* digest string, 0 no steps */
    char **str;         /* the digest's strings; str[0] = "" */
    size_t nstr;
    /* set by gpufl__job_align */
    int64_t shift_ns;         /* add to this rank's session times for the job's time line */
    uint64_t align_error_ns;  /* bound of the alignment's error, GPUFL_JOB_UNKNOWN_ERROR unknown */
    const char *align_method; /* static text */
    int64_t nccl_residual_ns; /* median (its collectives' ends - the first rank's), after the clocks */
    uint64_t nccl_spread_ns;  /* median absolute deviation of that */
    size_t nccl_matched;      /* collectives compared */
    bool nccl_applied;        /* the residual was taken off shift_ns (ranks on other hosts) */
} gpufl__job_rank;

/* The digest of one rank's session; path is copied. 0, or GPUFL_ENOMEM. */
int gpufl__job_rank_digest(const gpufl_trace *t, const char *path, gpufl__job_rank *out)
    __attribute__((warn_unused_result));
void gpufl__job_rank_free(gpufl__job_rank *r);
/* Interns s in r's strings; returns its number, 0 on failure (""). */
uint32_t gpufl__job_str(gpufl__job_rank *r, const char *s);

/* The host time between the end of step - 1 and the start of step (from
 * 1) on rank r: what a straggler spent outside its steps before that one;
 * 0 for the first step or none. */
uint64_t gpufl__job_step_gap(const gpufl__job_rank *r, uint32_t step);

/* Puts the ranks (ordered by rank) on the first one's time line: sets
 * every rank's shift_ns, align_error_ns, align_method and nccl_*. */
void gpufl__job_align(gpufl__job_rank *ranks, size_t n);

/* A collective matched across ranks: the k-th of the s-th NCCL stream on
 * every rank. at[r] is rank r's index into its coll array. */
typedef struct gpufl__job_match {
    uint32_t stream, seq;
    size_t *at; /* n entries */
} gpufl__job_match;
typedef struct gpufl__job_matches {
    size_t n, nranks;
    gpufl__job_match *m;
    size_t *storage;
    char note[160]; /* why matching stopped early, "" when it did not */
} gpufl__job_matches;
int gpufl__job_match_collectives(const gpufl__job_rank *ranks, size_t n, gpufl__job_matches *out)
    __attribute__((warn_unused_result));
void gpufl__job_matches_free(gpufl__job_matches *m);

/* A rank that arrived late at a collective: every other rank waited. */
typedef struct gpufl__job_late {
    size_t match;     /* index into the matches */
    size_t rank;      /* index into ranks */
    uint64_t late_ns; /* after the next-latest rank */
    uint64_t wait_ns; /* after the earliest rank: what the earliest waited */
    /* its launch call after the next-latest rank's (host side: the delay its program made, before its GPU
     * queue added or absorbed any); 0 unknown or not later */
    uint64_t launch_late_ns;
    uint32_t step; /* the straggler's step, 0 none */
} gpufl__job_late;

typedef struct gpufl__job_rank_lateness {
    uint64_t times_late, total_late_ns, max_late_ns;
    uint64_t waited_ns; /* summed over matched collectives: this rank's arrival to the latest's */
} gpufl__job_rank_lateness;

typedef struct gpufl__job_stragglers {
    uint64_t threshold_ns;
    gpufl__job_late *late; /* late_ns >= threshold, largest first */
    size_t nlate;
    gpufl__job_rank_lateness *per_rank; /* nranks entries */
} gpufl__job_stragglers;
int gpufl__job_find_stragglers(const gpufl__job_rank *ranks, size_t n, const gpufl__job_matches *m,
                               uint64_t threshold_ns, gpufl__job_stragglers *out) __attribute__((warn_unused_result));
void gpufl__job_stragglers_free(gpufl__job_stragglers *s);

/* Load imbalance: one row per kernel name that ran on more than one rank
 * or on some and not others, largest (max - mean) first. */
typedef struct gpufl__job_imbalance_row {
    const char *name; /* points into a rank's digest strings */
    uint64_t mean_ns, max_ns, min_ns;
    size_t max_rank, min_rank; /* indices into ranks */
    size_t on_ranks;           /* ranks that ran it */
} gpufl__job_imbalance_row;
typedef struct gpufl__job_imbalance {
    gpufl__job_imbalance_row *row;
    size_t n;
} gpufl__job_imbalance;
int gpufl__job_find_imbalance(const gpufl__job_rank *ranks, size_t n, gpufl__job_imbalance *out)
    __attribute__((warn_unused_result));
void gpufl__job_imbalance_free(gpufl__job_imbalance *b);

/* Everything the job report shows. */
typedef struct gpufl__job_report {
    gpufl__job_rank *ranks; /* not owned */
    size_t nranks;
    gpufl__job_matches matches;
    gpufl__job_stragglers stragglers;
    gpufl__job_imbalance imbalance;
} gpufl__job_report;
#define GPUFL_JOB_STRAGGLER_NS 1000000ull /* 1 ms: later than this after the next-latest rank is reported */
int gpufl__job_report_build(gpufl__job_rank *ranks, size_t n, gpufl__job_report *out)
    __attribute__((warn_unused_result));
void gpufl__job_report_free(gpufl__job_report *r);

#endif /* GPUFL_ANALYZE_ANA_JOB_H */
