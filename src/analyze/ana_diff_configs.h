/*
 * For `gpufl diff` (ana_diff.c): the GPU time per launch of each launch
 * configuration of a trace (one row of its launch configuration table:
 * name, grid, block, registers, shared and local memory), and the change
 * of one configuration between two traces.
 *
 * Why: one kernel name often covers several shapes (a cuBLAS GEMM serves
 * every layer), and one configuration several amounts of work (the same
 * tile grid over a different K), so the launches of a kernel mix a few
 * tight clusters and their overall spread says nothing about run-to-run
 * noise. A training or serving loop launches the same sequence every step,
 * though: when both sessions launched a configuration equally often, its
 * i-th launches did the same work, and the ratios of their durations
 * measure the change with the noise of the clocks alone.
 *
 * Threads: any; it only reads the trace. Sizes: one pass over the kernels,
 * two arrays of their durations (16 bytes per launch), sorted per
 * configuration; a pairing sorts one array of ratios.
 */
#ifndef GPUFL_ANALYZE_ANA_DIFF_CONFIGS_H
#define GPUFL_ANALYZE_ANA_DIFF_CONFIGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"

typedef struct gpufl__diff_configs {
    size_t n;               /* rows of the launch configuration table */
    size_t *at;             /* n + 1: row c's launches are [at[c], at[c + 1]) of the arrays */
    uint64_t *dur;          /* durations, in start order within a row */
    uint64_t *sorted;       /* the same, ascending within a row */
    gpufl__ana_dist *dist;  /* per row */
} gpufl__diff_configs;

/* Fills out for t. Returns 0, or GPUFL_ENOMEM with *out zeroed. */
int gpufl__diff_configs_of(const gpufl_trace *t, gpufl__diff_configs *out)
    __attribute__((warn_unused_result));
void gpufl__diff_configs_free(gpufl__diff_configs *c);

/* The change of a configuration launched n >= 2 times in each session,
 * base[i] and cand[i] its i-th launches: the median of cand[i] / base[i]
 * less 1, in %, into *pct, and its noise, in %, into *noise_pct: twice the
 * standard error of that median, the ratios' spread taken from their
 * p5-p95 distance. Returns 0, or GPUFL_ENOMEM. */
int gpufl__diff_paired(const uint64_t *base, const uint64_t *cand, size_t n, double *pct,
                       double *noise_pct) __attribute__((warn_unused_result));

#endif /* GPUFL_ANALYZE_ANA_DIFF_CONFIGS_H */
