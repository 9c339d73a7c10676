/*
 * The sessions of a job, as readers that take a job find them (issue 16):
 * each path given is a session (its directory, or a .gflt or log file),
 * or a job directory: one whose subdirectories are sessions, as `gpufl
 * run` leaves a launcher's ranks under <log_path>/job-<id>/ and `gpufl
 * merge` writes its output. A job directory's sessions are taken in name
 * order; the job analyses order them by rank.
 *
 * One thread.
 */
#ifndef GPUFL_READ_JOB_FIND_H
#define GPUFL_READ_JOB_FIND_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gpufl__job_paths {
    size_t n;
    char **path;
} gpufl__job_paths;

/* True for a directory that holds sessions rather than being one. */
bool gpufl__job_is_dir(const char *path);

/* Every session of the paths, in order. 0; GPUFL_ENOTFOUND (a path that
 * does not exist, a directory that is neither a session nor holds one)
 * or GPUFL_ENOMEM, with a message naming the path in err. */
int gpufl__job_find(const char *const *paths, size_t n, gpufl__job_paths *out, char *err, size_t err_len)
    __attribute__((warn_unused_result));
void gpufl__job_paths_free(gpufl__job_paths *p);

#endif /* GPUFL_READ_JOB_FIND_H */
