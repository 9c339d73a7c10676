/*
 * NVML as a source of the system sampler: one device_metrics event per GPU
 * per sample. Owns the loaded NVML; closing the source shuts NVML down.
 */
#ifndef GPUFL_BACKEND_NVML_NVML_SOURCE_H
#define GPUFL_BACKEND_NVML_NVML_SOURCE_H

#include <stddef.h>

#include "core/device_info.h"
#include "core/metric_source.h"

typedef struct gpufl__nvml_source gpufl__nvml_source;

/* Loads NVML and describes its devices into *devices. Returns 0, or
 * GPUFL_ENOTFOUND (no NVIDIA driver) / GPUFL_EIO / GPUFL_ENOMEM with the
 * reason in err and nothing left open. */
int gpufl__nvml_source_open(gpufl__nvml_source **out, gpufl__device_list *devices, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* The sampler's view of it; its close() frees the source. */
gpufl__metric_source gpufl__nvml_source_metric(gpufl__nvml_source *s);

void gpufl__nvml_source_close(gpufl__nvml_source *s);

#endif /* GPUFL_BACKEND_NVML_NVML_SOURCE_H */
