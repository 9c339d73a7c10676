/*
 * CUPTI's host profiler API, for the engines that read hardware counters
 * (PM sampling, range profiling): a list of metric names becomes a config
 * image for the device side, and a counter data image that the device side
 * filled becomes one double per metric and range (or sample). Nothing here
 * touches a GPU; the chip name says which counters exist.
 *
 * Threads: a gfl_profiler_host is used by one thread at a time (its owner's
 * lock). gfl_profiler_chip_name() may be called from any thread.
 *
 * Every function returns CUPTI_SUCCESS or the CUptiResult that failed, with
 * what failed and why in err, so that callers can map CUPTI's kinds
 * (insufficient privileges, invalid device, ...) to their own. A libcupti
 * that lacks a function gives GFL_CUPTI_MISSING, and err names it.
 */
#ifndef GPUFL_BACKEND_CUPTI_PROFILER_HOST_H
#define GPUFL_BACKEND_CUPTI_PROFILER_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "backend/cupti/cupti_api.h"

/* The libcupti loaded has no such function (older than the API). */
#define GFL_CUPTI_MISSING CUPTI_ERROR_API_NOT_IMPLEMENTED

typedef struct gfl_profiler_host {
    const gfl_cupti_api *api;
    CUpti_Profiler_Host_Object *object;
    char chip[64];
    char **metrics; /* copies of the names, n_metrics of them */
    size_t n_metrics;
    uint8_t *config; /* the config image, config_size bytes */
    size_t config_size;
    size_t passes; /* replay passes the config needs; PM sampling takes only 1 */
} gfl_profiler_host;

/* Initialises CUPTI's profiler for the process (once; later calls do
 * nothing) and writes device's chip name ("GH100") into chip. */
CUptiResult gfl_profiler_chip_name(const gfl_cupti_api *api, int device, char *chip, size_t chip_len, char *err,
                                   size_t err_len);

/* Builds the config image of n metrics for a profiler of kind type on
 * chip. availability is the device's counter availability image (NULL:
 * none, for chips CUPTI knows). On failure *h is left zeroed, nothing
 * held. */
CUptiResult gfl_profiler_host_create(gfl_profiler_host *h, const gfl_cupti_api *api, CUpti_ProfilerType type,
                                     const char *chip, const uint8_t *availability, const char *const *metrics,
                                     size_t n, char *err, size_t err_len);

/* Evaluates every metric of h for one range (range profiler) or sample (PM
 * sampling) of a counter data image into values[0..n_metrics). values is
 * unchanged on failure. */
CUptiResult gfl_profiler_host_evaluate(const gfl_profiler_host *h, const uint8_t *counter_data, size_t size,
                                       size_t index, double *values, char *err, size_t err_len);

/* Frees everything h holds; h is zeroed. Safe on a zeroed h. */
void gfl_profiler_host_destroy(gfl_profiler_host *h);

/* The metric names of one of the chip's single-pass metric sets, in
 * *names (an array of *n strings, freed with free() on the array alone).
 * GFL_CUPTI_MISSING with a CUPTI older than 13.1. */
CUptiResult gfl_profiler_single_pass_set(const gfl_cupti_api *api, const char *chip, const char *set, char ***names,
                                         size_t *n, char *err, size_t err_len);

#endif /* GPUFL_BACKEND_CUPTI_PROFILER_HOST_H */
