/*
 * What a session knows about its GPUs from the start: identity, capability
 * and limits. Filled by a vendor backend (NVML today), written into
 * session.json and as "device_info" events, read by the CLI. Plain data;
 * unknown numbers are 0 and unknown strings "".
 */
#ifndef GPUFL_CORE_DEVICE_INFO_H
#define GPUFL_CORE_DEVICE_INFO_H

#include <stdint.h>

#include "core/event.h"

#define GFL_MAX_DEVICES 64

typedef struct gpufl__device_desc {
    uint32_t index;
    char name[96];
    char uuid[96];
    char pci_bus_id[32];
    int cc_major, cc_minor; /* compute capability; -1 unknown */
    uint32_t sm_count;      /* streaming multiprocessors */
    uint64_t memory_total_bytes;
    uint32_t power_limit_mw; /* enforced */
    uint32_t max_sm_clock_mhz;
    uint32_t max_mem_clock_mhz;
    uint32_t pcie_max_gen;
    uint32_t pcie_max_width;
} gpufl__device_desc;

typedef struct gpufl__device_list {
    char vendor[16];         /* "nvidia" */
    char driver_version[80]; /* "580.159.04" */
    int cuda_driver_version; /* 13000 = CUDA 13.0; 0 unknown */
    uint32_t count;
    gpufl__device_desc devices[GFL_MAX_DEVICES];
} gpufl__device_list;

/* The "device_info" event of device d (names interned). */
void gpufl__device_info_event(const gpufl__device_list *list, const gpufl__device_desc *d, uint64_t ts, gfl_event *ev);

#endif /* GPUFL_CORE_DEVICE_INFO_H */
