/*
 * Live readings without a recording, for the CLI (`gpufl devices`,
 * `gpufl monitor`): the GPUs NVML describes when there is a driver, host
 * metrics always, sampled on demand; nothing is written to disk. The
 * vendor handles stay behind `backend`, so a caller sees plain device
 * descriptions and event payloads and never a backend header.
 *
 * One thread owns a gpufl__live; a reading costs a few NVML calls per GPU
 * (milliseconds), made at the caller's pace (`monitor`: every 100 ms or
 * slower).
 */
#ifndef GPUFL_SESSION_LIVE_H
#define GPUFL_SESSION_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/device_info.h"
#include "core/event.h"

struct gpufl__live_backend;

typedef struct gpufl__live {
    bool have_nvml;
    char nvml_error[512];   /* why there is no NVML, when there is none */
    char nvml_library[256]; /* the libnvidia-ml that was loaded, when there is one */
    gpufl__device_list devices;
    struct gpufl__live_backend *backend; /* NVML and /proc handles (live.c) */
} gpufl__live;

typedef struct gpufl__live_sample {
    uint64_t ts_ns; /* CLOCK_MONOTONIC */
    uint64_t wall_ns;
    gfl_device_metrics_payload gpu[GFL_MAX_DEVICES]; /* devices.devices[i]'s */
    gfl_host_metrics_payload host;
} gpufl__live_sample;

/* Opens what there is. Fails (GPUFL_ENOMEM, or GPUFL_EIO when NVML loaded
 * but could not list its devices) only when even that is impossible, with
 * *live closed and err saying why; no driver is not a failure: have_nvml
 * is false and nvml_error says why. */
int gpufl__live_open(gpufl__live *live, char *err, size_t err_len) __attribute__((warn_unused_result));
/* One reading of every device and of the host; a metric a device does not
 * report has its validity bit clear. */
void gpufl__live_sample_now(gpufl__live *live, gpufl__live_sample *out);
/* The same, in which PCIe throughput (a rate of counters NVML reads at most
 * every 250 ms) has a value: two readings that far apart, so it sleeps. */
void gpufl__live_sample_settled(gpufl__live *live, gpufl__live_sample *out);
void gpufl__live_close(gpufl__live *live);

/* A process holding memory on a GPU, with its name when /proc shows it. */
typedef struct gpufl__live_process {
    uint32_t pid;
    uint64_t used_bytes;
    char name[64]; /* /proc/<pid>/comm; "" when not visible (another PID namespace, gone) */
} gpufl__live_process;

/* The processes holding memory on devices.devices[i], at most cap, into
 * out; how many (0: none, or NVML cannot list them). */
unsigned gpufl__live_processes(gpufl__live *live, uint32_t i, gpufl__live_process *out, unsigned cap);

#endif /* GPUFL_SESSION_LIVE_H */
