/*
 * Live readings for the CLI (`gpufl devices`, `gpufl monitor`): NVML when
 * there is a driver, host metrics always, sampled on demand. Not a session:
 * nothing is recorded to disk.
 */
#ifndef GPUFL_CLI_LIVE_H
#define GPUFL_CLI_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/host/host_metrics.h"
#include "backend/nvml/nvml_api.h"
#include "backend/nvml/nvml_device.h"
#include "core/device_info.h"

typedef struct gpufl__live {
    bool have_nvml;
    char nvml_error[512]; /* why there is no NVML, when there is none */
    gpufl__nvml_api api;
    gpufl__device_list devices;
    gpufl__nvml_state state[GFL_MAX_DEVICES];
    gpufl__host_metrics *host;
} gpufl__live;

typedef struct gpufl__live_sample {
    uint64_t ts_ns; /* CLOCK_MONOTONIC */
    uint64_t wall_ns;
    gfl_device_metrics_payload gpu[GFL_MAX_DEVICES];
    gfl_host_metrics_payload host;
} gpufl__live_sample;

/* Opens what there is. Fails (GPUFL_ENOMEM, or GPUFL_EIO when NVML loaded
 * but could not list its devices) only when even that is impossible; no
 * driver is not a failure: have_nvml is false and nvml_error says why. */
int gpufl__live_open(gpufl__live *live, char *err, size_t err_len) __attribute__((warn_unused_result));
void gpufl__live_sample_now(gpufl__live *live, gpufl__live_sample *out);
void gpufl__live_close(gpufl__live *live);

/* "sw_power_cap,gpu_idle" from NVML clock-event bits ("none" when 0). */
void gpufl__throttle_text(uint64_t mask, char *buf, size_t len);

#endif /* GPUFL_CLI_LIVE_H */
