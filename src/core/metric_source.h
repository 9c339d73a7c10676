/*
 * A source of periodic metric samples for the system sampler: the host
 * backend (/proc) and NVML. Called only from the sampler thread.
 */
#ifndef GPUFL_CORE_METRIC_SOURCE_H
#define GPUFL_CORE_METRIC_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

typedef struct gpufl__metric_source {
    const char *name;
    void *self;
    /* Fills up to max events with a sample taken at ts; returns how many. */
    size_t (*sample)(void *self, uint64_t ts, gfl_event *out, size_t max);
    /* Called instead of sample() while no window is open, so that rates
     * (CPU %) of the next sample cover only the time since; may be NULL. */
    void (*idle)(void *self, uint64_t ts);
    void (*close)(void *self);
} gpufl__metric_source;

#endif /* GPUFL_CORE_METRIC_SOURCE_H */
