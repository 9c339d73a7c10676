/*
 * `gpufl replay-check` as text: one line per lane (a stream, a device's
 * allocations), and under each lane that differs its first divergence
 * like a diff (' ' both runs, '-' only A, '+' only B, with each op's index
 * in its lane and when it ran), what the rest of the lane did and the ops
 * whose counts differ; a verdict last, for CI logs.
 *
 * Threads: any; nothing shared.
 */
#ifndef GPUFL_PRESENT_DIFF_REPLAY_TEXT_H
#define GPUFL_PRESENT_DIFF_REPLAY_TEXT_H

#include <stdio.h>

#include "analyze/ana_replay.h"

typedef struct gpufl__replay_text_opts {
    const char *a, *b;     /* labels (the paths given) */
    const char *selection; /* what was compared, in words ("whole sessions") */
    uint32_t window;       /* the re-sync window the check ran with */
    bool only_differences; /* leave out the lanes that are the same */
} gpufl__replay_text_opts;

/* 0, or -1 when writing to out failed. */
int gpufl__replay_text(const gpufl__replay *r, const gpufl__replay_text_opts *o, FILE *out);

/* The lane's title: "device 0, stream 7 in A, 14 in B". */
void gpufl__replay_lane_title(const gpufl__rp_lane *l, char *buf, size_t len);

#endif /* GPUFL_PRESENT_DIFF_REPLAY_TEXT_H */
