/*
 * gpufl's table of known GPUs (ana_peaks.c): memory bandwidth and host
 * link by device name, for the copies analysis.
 */
#ifndef GPUFL_ANALYZE_ANA_PEAKS_H
#define GPUFL_ANALYZE_ANA_PEAKS_H

#include <stdint.h>

#include "analyze/analysis.h"

typedef struct ana_gpu_row {
    const char *match;             /* a substring of the NVML device name */
    double mem_gbps;               /* memory bandwidth, GB/s (1e9 bytes/s) */
    uint32_t pcie_gen, pcie_width; /* host link; 0 unknown */
} ana_gpu_row;

/* The first row whose match is in device_name, or NULL. */
const ana_gpu_row *gpufl__ana_gpu_lookup(const char *device_name);

#endif /* GPUFL_ANALYZE_ANA_PEAKS_H */
