/*
 * For `gpufl diff` (ana_diff_configs.c): which launch of one launch
 * configuration in the candidate did the same work as which launch in the
 * baseline.
 *
 * Why: the launches of one configuration do not all do the same work (one
 * GEMM tile grid serves layers of several sizes, so its durations fall in
 * a few clusters), and two sessions need not launch it equally often (a
 * launch added or removed, a step cut short, events lost), so launches
 * cannot be paired by their index. What stays put from run to run is where
 * in the program a launch happens, and that shows in its neighbours on its
 * stream: a launch's program point is the pair (configuration launched
 * just before it, configuration launched just after it) on its stream.
 *
 * Matching, in three rounds over the launches still unmatched:
 *   1. the same program point (both neighbours);
 *   2. the same previous configuration;
 *   3. the same next configuration.
 * Within a round the launches of one key are paired in start order, the
 * i-th of the baseline with the i-th of the candidate, as far as the
 * shorter list goes. A key's launches are the same call repeated (a
 * loop's steps), so a missing or extra launch only leaves the longer
 * list's tail unmatched; rounds 2 and 3 still pair a launch whose one
 * neighbour changed (a kernel added after a GEMM changes its program
 * point, not its work). Launches matched by none stay unpaired. Durations
 * play no part in the matching: pairing by duration would pair a slow
 * launch with a slow one and hide the very noise it has to measure.
 *
 * Each key of a round that paired launches is a group: launches at one
 * place in the program, whose ratios the caller summarises group by group.
 *
 * Threads: one per gpufl__diff_pairs. Sizes: linear in the launches given
 * (three passes, a hash map of their distinct keys, 24 bytes of scratch
 * per launch kept between calls, 8 bytes per pair).
 */
#ifndef GPUFL_ANALYZE_ANA_DIFF_PAIRS_H
#define GPUFL_ANALYZE_ANA_DIFF_PAIRS_H

#include <stddef.h>
#include <stdint.h>

/* A program point: (previous << 32) | next, configurations numbered alike
 * in both sessions; GPUFL__DIFF_NO_NEIGHBOUR where the stream had none. */
#define GPUFL__DIFF_NO_NEIGHBOUR UINT32_MAX
#define GPUFL__DIFF_POINT(prev, next) (((uint64_t)(prev) << 32) | (uint32_t)(next))

/* A launch to match: its duration and program point. */
typedef struct gpufl__diff_launch {
    uint64_t dur;   /* ns */
    uint64_t point; /* GPUFL__DIFF_POINT */
} gpufl__diff_launch;

/* A ratio of durations, candidate / baseline, in parts per 10^9. */
#define GPUFL__DIFF_RATIO_ONE 1000000000ull

typedef struct gpufl__diff_pairs {
    size_t n;        /* pairs */
    uint64_t *ratio; /* n: candidate / baseline duration of each pair (GPUFL__DIFF_RATIO_ONE
                             is no change; a 0 ns duration counts as 1 ns) */
    size_t ngroups;
    size_t *at;       /* ngroups + 1: group g's pairs are ratio[at[g] .. at[g + 1]) */
    uint64_t *weight; /* ngroups: the baseline's duration of the group's pairs, ns */
    /* scratch, kept between calls */
    uint32_t *scratch;
    size_t cap_scratch, cap_pairs, cap_groups;
} gpufl__diff_pairs;

/*
 * Matches nb baseline launches b (in start order) with nc candidate ones
 * c, replacing the pairs of a previous call. Returns 0, or GPUFL_ENOMEM
 * with no pairs in p.
 */
int gpufl__diff_pairs_match(gpufl__diff_pairs *p, const gpufl__diff_launch *b, size_t nb, const gpufl__diff_launch *c,
                            size_t nc) __attribute__((warn_unused_result));
void gpufl__diff_pairs_free(gpufl__diff_pairs *p);

#endif /* GPUFL_ANALYZE_ANA_DIFF_PAIRS_H */
