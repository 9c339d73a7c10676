/*
 * The parallel loaders behind gpufl_trace_open() (trace_load.c picks one):
 * each reads its format on up to nthreads threads into segments
 * (segment.h) and merges them (trace_merge.c), with the same trace as a
 * reading on one thread. Called on one thread; they start and join their
 * own workers (work_pool.h).
 */
#ifndef GPUFL_READ_LOADERS_H
#define GPUFL_READ_LOADERS_H

#include <stddef.h>

#include "gpufl/trace.h"
#include "read/input.h"

/* Loads the .gflt file in (taken over: closed whatever happens). Returns 0
 * with *out set, or a negative gpufl_err with a message in err that names
 * the file and the offset of the damage. */
int gpufl__gflt_load(gpufl__input *in, unsigned nthreads, gpufl_trace **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Loads NDJSON logs: the files paths[0..npaths), in order, or with npaths
 * 0 the one log in memory `mem`; what names them in messages. Returns 0
 * with *out set, or a negative gpufl_err with a message in err that names
 * the file and the line. */
int gpufl__ndjson_load(const char *const *paths, size_t npaths, const gpufl__input *mem, const char *what,
                       unsigned nthreads, gpufl_trace **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_READ_LOADERS_H */
