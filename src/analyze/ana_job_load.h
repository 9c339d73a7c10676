/*
 * A job's ranks, for every reader of a job (`gpufl merge`, `gpufl report`
 * and `gpufl export` of a job directory, gpufl_job_report()): its sessions
 * found (read/job_find.h), each opened, digested (ana_job.h) and closed in
 * turn, so that memory holds one session at a time, then ordered by rank.
 * A job directory with an up-to-date job.digest (ana_job_digest_file.h) is
 * read from it instead.
 */
#ifndef GPUFL_ANALYZE_ANA_JOB_LOAD_H
#define GPUFL_ANALYZE_ANA_JOB_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/ana_job.h"

typedef struct gpufl__job {
    gpufl__job_rank *ranks;
    size_t n;
} gpufl__job;

/* What the loader has to say that is not an error (a job.digest it could
 * not use, and why): a command prints it, the library drops it. */
typedef void gpufl__job_note_fn(void *ctx, const char *msg);

/* 0; GPUFL_EINVAL with the reason in err for a session that cannot be read
 * (named), two sessions of one rank, sessions of different jobs (named,
 * unless mixed_ok); GPUFL_ENOMEM. note may be NULL. */
int gpufl__job_load(const char *const *paths, size_t n, bool mixed_ok, gpufl__job_note_fn *note, void *note_ctx,
                    gpufl__job *out, char *err, size_t err_len);
void gpufl__job_free(gpufl__job *j);

#endif /* GPUFL_ANALYZE_ANA_JOB_LOAD_H */
