/*
 * A job's ranks for the commands that read a job (`gpufl merge`, `gpufl
 * report` and `gpufl export` of a job directory): its sessions found
 * (read/job_find.h), each opened, digested (analyze/ana_job.h) and closed
 * in turn, so that memory holds one session at a time, then ordered by
 * rank.
 */
#ifndef GPUFL_CLI_JOB_LOAD_H
#define GPUFL_CLI_JOB_LOAD_H

#include <stddef.h>

#include "analyze/ana_job.h"

typedef struct gpufl__job {
    gpufl__job_rank *ranks;
    size_t n;
} gpufl__job;

/* 0, or GFL_EXIT_FAIL having said why on stderr as "gpufl CMD: ...": a
 * session that cannot be read (named), two sessions of one rank, sessions
 * of different jobs (named, unless mixed_ok). */
int gpufl__job_load(const char *cmd, const char *const *paths, size_t n, int mixed_ok, gpufl__job *out);
void gpufl__job_free(gpufl__job *j);

#endif /* GPUFL_CLI_JOB_LOAD_H */
