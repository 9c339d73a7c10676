/*
 * Host metrics: process CPU (% of one CPU, from CLOCK_PROCESS_CPUTIME_ID,
 * since the previous sample), machine CPU (% of all CPUs, from /proc/stat,
 * over at least the last 250 ms since it only moves in 10 ms ticks), RAM
 * used and total (MemTotal - MemAvailable) and process RSS from /proc.
 *
 * The files stay open and are re-read with pread(), so a sample costs three
 * reads and no open(). Sampler thread only; a few µs per sample.
 */
#ifndef GPUFL_BACKEND_HOST_HOST_METRICS_H
#define GPUFL_BACKEND_HOST_HOST_METRICS_H

#include <stdint.h>

#include "core/event.h"
#include "core/metric_source.h"

typedef struct gpufl__host_metrics gpufl__host_metrics;

/* proc_root is "/proc" or, in tests, a directory holding the same files
 * (stat, meminfo, self/statm). Files that cannot be opened leave
 * their fields invalid. Returns 0 or GPUFL_ENOMEM. */
int gpufl__host_metrics_open(gpufl__host_metrics **out, const char *proc_root) __attribute__((warn_unused_result));

/* A sample at now_ns (CLOCK_MONOTONIC); unreadable fields have their
 * GFL_HOST_* bit clear. The first read only sets the CPU baseline; machine
 * CPU appears once a window of 250 ms exists. */
void gpufl__host_metrics_read(gpufl__host_metrics *h, uint64_t now_ns, gfl_host_metrics_payload *out);

void gpufl__host_metrics_close(gpufl__host_metrics *h);

/* Replaces the process CPU clock (tests); NULL restores the real one. */
void gpufl__host_metrics_set_cpu_clock(gpufl__host_metrics *h, int (*process_cpu_ns)(uint64_t *ns));

/* The same, as a sampler source; it owns h. */
gpufl__metric_source gpufl__host_metrics_source(gpufl__host_metrics *h);

#endif /* GPUFL_BACKEND_HOST_HOST_METRICS_H */
