/*
 * NVML devices: their static description (once per session) and samples
 * of their state (every sampling period). Sampler thread or CLI.
 *
 * Most NVML calls cost well under 5 µs, but a few are slow, measured on an
 * H200 with driver 580 (bench/RESULTS.md): total energy 2.3 ms (by function
 * or field), the PCIe byte counters 0.16 ms, and even a fan-speed query that
 * answers NOT_SUPPORTED 0.08 ms. So energy is read at most once a second and
 * the PCIe counters at most every 250 ms (samples in between leave those
 * fields out), and a metric the driver does not support is not asked again.
 * PCIe throughput comes from the byte counters, differenced, rather than from
 * nvmlDeviceGetPcieThroughput, which blocks for 20 ms.
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
int gpufl__nvml_describe(const gpufl__nvml_api *api, gpufl__device_list *out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#define GFL_NVML_ENERGY_PERIOD_NS 1000000000ull
#define GFL_NVML_PCIE_PERIOD_NS 250000000ull

/* Per-device state kept between samples: the handle (looked up once), what
 * the driver does not support, when the slow readings are next due, and the
 * counters that rates are computed from. Start zeroed. */
typedef struct gpufl__nvml_state {
    gfl_nvml_device dev;
    uint32_t unsupported; /* GFL_DEV_* bits: not asked again */
    uint64_t energy_due_ns, pcie_due_ns;
    bool have_pcie;
    uint64_t pcie_tx_bytes, pcie_rx_bytes, pcie_ns;
} gpufl__nvml_state;

/* Samples device `index` at ts (ns) for process pid into out; fields NVML
 * cannot give have their GFL_DEV_* bit clear. */
void gpufl__nvml_sample(const gpufl__nvml_api *api, unsigned index, gpufl__nvml_state *st, uint64_t ts, int pid,
                        gfl_device_metrics_payload *out);

/* A process using a device's memory. */
typedef struct gpufl__gpu_process {
    uint32_t pid;        /* as NVML sees it: the host's PID namespace */
    uint64_t used_bytes; /* device memory it holds (summed over MIG instances) */
} gpufl__gpu_process;

/* The compute processes holding memory on device `index`, at most cap, one
 * entry per pid, into out. Returns how many; 0 when there are none or NVML
 * cannot list them (no such function, no permission). */
unsigned gpufl__nvml_processes(const gpufl__nvml_api *api, unsigned index, gpufl__nvml_state *st,
                               gpufl__gpu_process *out, unsigned cap);

/* Streaming multiprocessors from CUDA cores, for drivers without
 * nvmlDeviceGetAttributes: cores per SM by compute capability (0 unknown). */
unsigned gpufl__cores_per_sm(int cc_major, int cc_minor);

#endif /* GPUFL_BACKEND_NVML_NVML_DEVICE_H */
