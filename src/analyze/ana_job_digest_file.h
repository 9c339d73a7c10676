/*
 * A job directory's digests, kept (`JOB/job.digest`): `gpufl merge` writes
 * every rank's digest (analyze/ana_job.h) once, so that `gpufl report JOB`
 * and `gpufl export JOB` read a few MB instead of opening every session
 * again (64 ranks of 1 M events: half a minute on two CPUs). Each rank's
 * entry carries a fingerprint of its session's files (names, sizes,
 * modification times): a rank whose session changed, a file of another
 * version, or one that is damaged (CRC-32C over the whole) is not used,
 * and the sessions are read instead.
 *
 * Layout (little-endian, this machine's struct layouts, which the header
 * names by size): "GFLJOBD1", u32 version, u32 sizeof(gpufl__job_coll),
 * u32 sizeof(gpufl__job_kernel_time), u32 sizeof(gpufl__job_step), u32
 * ranks, then per rank its fields and arrays, then u32 CRC-32C of all
 * that precedes it.
 */
#ifndef GPUFL_ANALYZE_ANA_JOB_DIGEST_FILE_H
#define GPUFL_ANALYZE_ANA_JOB_DIGEST_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/ana_job.h"

/* Writes the ranks' digests to job_dir/job.digest; each rank's path must
 * be job_dir/<name>, its session there. 0, or -1 with a message in err. */
int gpufl__job_digest_write(const char *job_dir, const gpufl__job_rank *ranks, size_t n, char *err, size_t err_len);

/* Reads job_dir/job.digest into *ranks (n of them, calloc'd; free each
 * with gpufl__job_rank_free). False, *ranks NULL, when there is none, or
 * it is damaged, of another version or out of date (why in err). */
bool gpufl__job_digest_read(const char *job_dir, gpufl__job_rank **ranks, size_t *n, char *err, size_t err_len);

#endif /* GPUFL_ANALYZE_ANA_JOB_DIGEST_FILE_H */
