/*
 * For `gpufl diff` (ana_diff.c): the launches of each launch configuration
 * of a trace (one row of its launch configuration table: name, grid,
 * block, registers, shared and local memory), and the change of one
 * configuration between two traces, with its noise.
 *
 * Why: one kernel name often covers several shapes (a cuBLAS GEMM serves
 * every layer), and one configuration several amounts of work (the same
 * tile grid over a different K), so the durations of a configuration can
 * fall in a few tight clusters and their spread says nothing about
 * run-to-run noise. What does measure it is the same work timed in both
 * runs: launches are matched by their place in the program
 * (ana_diff_pairs.h), which needs neither equal launch counts nor equal
 * durations.
 *
 * How a configuration's change is estimated from its matched launches:
 *  - per group of pairs (one program point), the median of the ratios
 *    candidate / baseline of the pairs' durations;
 *  - the change: the groups' medians less 1, averaged with the weights of
 *    their baseline time, so that work that takes longer counts for more
 *    (a change of only the longest cluster is not outvoted by the short
 *    launches around it);
 *  - the spread of a ratio: sigma = 1.4826 MAD (for a normal distribution
 *    the median absolute deviation is 0.6745 sigma; unlike p95 - p50 it
 *    ignores the few launches that met a clock change or a preemption),
 *    the deviations taken from each group's own median, pooled over the
 *    configuration's groups of at least two pairs (with none, from the
 *    median of all its ratios): it is the dispersion of the same work
 *    between the two runs;
 *  - the noise: twice the standard error of that weighted mean, 2 * 1.2533
 *    sigma sqrt(sum w_g^2 / n_g) / sum w_g (1.2533 sigma / sqrt(n) is the
 *    standard error of a median of n).
 * With fewer than two pairs, the medians of the two sessions' launches are
 * compared instead, each session's sigma from the MAD of its durations:
 * 2 * 1.2533 sqrt(s_b^2 / n_b + s_c^2 / n_c).
 *
 * Threads: any; it only reads the traces. Sizes: one pass over the
 * kernels, 16 bytes per launch (duration and program point, bucketed by
 * configuration) and 4 while filling them; comparing a configuration is linear in its
 * launches (medians by selection, no sort), with scratch for the largest.
 */
#ifndef GPUFL_ANALYZE_ANA_DIFF_CONFIGS_H
#define GPUFL_ANALYZE_ANA_DIFF_CONFIGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/ana_diff_pairs.h"
#include "analyze/analysis.h"

typedef struct gpufl__diff_configs {
    size_t n;                   /* rows of the launch configuration table */
    size_t *at;                 /* n + 1: row c's launches are [at[c], at[c + 1]) of launch */
    gpufl__diff_launch *launch; /* in start order within a row; program points of this
                                   trace's rows */
    uint64_t *total;            /* per row: the sum of its durations, ns */
} gpufl__diff_configs;

/* Fills out for t. Returns 0, or GPUFL_ENOMEM with *out zeroed. */
int gpufl__diff_configs_of(const gpufl_trace *t, gpufl__diff_configs *out) __attribute__((warn_unused_result));
void gpufl__diff_configs_free(gpufl__diff_configs *c);

/* The change of one configuration, in % of the baseline. */
typedef struct gpufl__diff_config_change {
    double pct, noise_pct;
    uint64_t pairs; /* launches matched; 0: compared by medians */
} gpufl__diff_config_change;

/*
 * Renumbers the program points of c into the rows of b, so that the two
 * traces' points compare: c2b[r] is the row of b matching c's row r, or
 * UINT32_MAX; c's rows without a match become b_rows + r. Once, before
 * comparing.
 */
void gpufl__diff_configs_renumber(gpufl__diff_configs *c, const uint32_t *c2b, size_t b_rows);

/* Scratch for comparing configurations one after another (zero it first). */
typedef struct gpufl__diff_compare {
    gpufl__diff_pairs pairs;
    uint64_t *buf; /* values to select in */
    size_t cap;
} gpufl__diff_compare;

void gpufl__diff_compare_free(gpufl__diff_compare *x);

/*
 * The change of configuration rb of b, matched with rc of c (each launched
 * at least twice; c's points renumbered into b's rows), into *out.
 * Returns 0, or GPUFL_ENOMEM.
 */
int gpufl__diff_config_change_of(gpufl__diff_compare *x, const gpufl__diff_configs *b, uint32_t rb,
                                 const gpufl__diff_configs *c, uint32_t rc, gpufl__diff_config_change *out)
    __attribute__((warn_unused_result));

#endif /* GPUFL_ANALYZE_ANA_DIFF_CONFIGS_H */
