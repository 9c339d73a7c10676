/*
 * `gpufl diff` as text: the result (analyze/ana_diff.h) first, then the
 * session and its devices, the kernels, the scopes, and a legend that says
 * how changes are judged.
 *
 * The text depends only on the diff and the labels: the same two sessions
 * give the same bytes on every machine, so tests compare it with golden
 * text.
 *
 * Threads: any; nothing shared.
 */
#ifndef GPUFL_PRESENT_DIFF_DIFF_TEXT_H
#define GPUFL_PRESENT_DIFF_DIFF_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "analyze/ana_diff.h"

typedef struct gpufl__diff_text_opts {
    const char *baseline, *candidate; /* how to name the two sessions (paths as given) */
    bool all;                         /* also list kernels and scopes that did not change */
} gpufl__diff_text_opts;

/* Writes d to out. Returns 0, or GPUFL_EIO when writing failed. */
int gpufl__diff_text(const gpufl__diff *d, const gpufl__diff_text_opts *o, FILE *out)
    __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_DIFF_DIFF_TEXT_H */
