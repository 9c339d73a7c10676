/*
 * `gpufl replay-check`'s parts shared by its two files: the options as
 * parsed (cmd_replay_check.c) and one pair of sessions checked and
 * written, which a job's ranks (replay_check_job.c) repeat rank by rank.
 *
 * Exit codes, like diff(1): 0 the same work, 1 different, 2 bad usage or
 * input that could not be read.
 */
#ifndef GPUFL_CLI_REPLAY_CHECK_H
#define GPUFL_CLI_REPLAY_CHECK_H

#include <jansson.h>
#include <stdbool.h>

#include "analyze/ana_replay.h"

#define RC_EXIT_SAME 0
#define RC_EXIT_DIFFERENT 1
#define RC_EXIT_TROUBLE 2

typedef struct gpufl__rc_args {
    gpufl__replay_options opt;
    const char *selection; /* what is compared, in words */
    bool json;
    bool only_differences;
} gpufl__rc_args;

/* Opens a and b, checks them and, for text, writes the result on stdout;
 * for JSON, *json gets the document (a new reference) instead. Returns
 * RC_EXIT_SAME, RC_EXIT_DIFFERENT, or RC_EXIT_TROUBLE after saying why on
 * stderr (the file that could not be read is named). */
int gpufl__rc_check_pair(const char *a, const char *b, const gpufl__rc_args *args, json_t **json);

/* Both paths as jobs (directories of sessions): rank by rank. Returns as
 * gpufl__rc_check_pair, the worst of the ranks. */
int gpufl__rc_check_jobs(const char *a, const char *b, const gpufl__rc_args *args);

/* Writes a JSON document on stdout; 0 or -1 (said on stderr). */
int gpufl__rc_print_json(json_t *j);

#endif /* GPUFL_CLI_REPLAY_CHECK_H */
