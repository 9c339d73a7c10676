/*
 * NVML devices: their static description (once per session) and samples
 * of their state (every sampling period). Sampler thread or CLI.
 *
 * A sample costs one NVML call per metric, ~15 per device; the PCIe
 * throughput comes from NVML's byte counters, differenced between samples,
 * rather than from nvmlDeviceGetPcieThroughput, which blocks for 20 ms.
 */
#ifndef GPUFL_BACKEND_NVML_NVML_DEVICE_H
#define GPUFL_BACKEND_NVML_NVML_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/nvml/nvml_api.h"
#include "core/device_info.h"
#include "core/event.h"

/* Describes every device. Returns 0, or GPUFL_EIO with a message in err
 * when NVML cannot count or open the devices. */
int gpufl__nvml_describe(const gpufl__nvml_api *api, gpufl__device_list *out, char *err,
                         size_t err_len) __attribute__((warn_unused_result));

/* Per-device state kept between samples: the handle (looked up once) and
 * the counters that rates are computed from. Start zeroed. */
typedef struct gpufl__nvml_rates {
    gfl_nvml_device dev;
    bool have_pcie;
    uint64_t pcie_tx_bytes, pcie_rx_bytes, pcie_ns;
} gpufl__nvml_rates;

/* Samples device `index` at ts (ns) for process pid into out; fields NVML
 * cannot give have their GFL_DEV_* bit clear. */
void gpufl__nvml_sample(const gpufl__nvml_api *api, unsigned index, gpufl__nvml_rates *rates,
                        uint64_t ts, int pid, gfl_device_metrics_payload *out);

/* Streaming multiprocessors from CUDA cores, for drivers without
 * nvmlDeviceGetAttributes: cores per SM by compute capability (0 unknown). */
unsigned gpufl__cores_per_sm(int cc_major, int cc_minor);

#endif /* GPUFL_BACKEND_NVML_NVML_DEVICE_H */
