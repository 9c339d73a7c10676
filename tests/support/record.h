/*
 * A recorded session for the tests that read sessions back (gpufl convert,
 * gpufl info): the real library with the synthetic device plugin, scopes
 * from the calling thread, host sampling. Tests only; call from the test's
 * main thread, one session at a time.
 */
#ifndef GPUFL_TEST_RECORD_H
#define GPUFL_TEST_RECORD_H

#include <stdint.h>

#include "gpufl/gpufl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records a session under log_path in `format` (rotating the logs at
 * rotate_bytes when not 0) and returns its directory (malloc'd). The
 * synthetic plugin pushes 2000 kernels, copies, memsets, syncs,
 * allocations and metrics on 2 devices; the main thread opens 60 scopes. */
char *tu_record_synthetic(const char *log_path, const char *app, gpufl_log_format format, uint64_t rotate_bytes);

#ifdef __cplusplus
}
#endif

#endif /* GPUFL_TEST_RECORD_H */
