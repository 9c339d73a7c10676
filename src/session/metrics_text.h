/*
 * The metrics endpoint's text: one live reading of the GPUs as the
 * Prometheus text exposition format (0.0.4) or OpenMetrics 1.0, under
 * dcgm-exporter's metric names, units and labels (gpu, UUID, pci_bus_id,
 * device, modelName, Hostname), so dashboards built for dcgm-exporter read
 * it unchanged; then the exporter's own gpufl_ counters.
 *
 * Called by the thread that samples (`gpufl exporter`'s main loop, a
 * recording's sampler with metrics_listen), once a reading (every 100 ms
 * or slower); a render of 8 GPUs is a few
 * microseconds of snprintf (bench/bench_exporter.c). A metric NVML did not
 * report (its validity bit clear) is left out, never written as 0.
 */
#ifndef GPUFL_SESSION_METRICS_TEXT_H
#define GPUFL_SESSION_METRICS_TEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/bytebuf.h"
#include "session/live.h"

/* The exporter's own figures, written as gpufl_exporter_* counters. */
typedef struct gpufl__metrics_counters {
    uint64_t scrapes;      /* GET /metrics answered */
    uint64_t bad_requests; /* answered 400, 404, 405 or 431 */
    uint64_t rejected;     /* connections closed at once: every slot busy */
    uint64_t timeouts;     /* connections closed for sending too slowly */
    uint64_t samples;      /* readings published */
} gpufl__metrics_counters;

/* Appends the device metrics of one reading (gpu[i] of devices->devices[i],
 * host name hostname) to out, in OpenMetrics when openmetrics (without the
 * final "# EOF": gpufl__metrics_finish writes it). Returns 0, or
 * GPUFL_ENOMEM with out holding a prefix. */
int gpufl__metrics_render_devices(const gpufl__device_list *devices, const gfl_device_metrics_payload *gpu,
                                  const char *hostname, bool openmetrics, gpufl__bytebuf *out)
    __attribute__((warn_unused_result));
/* NVML's energy counter is read at most once a second and its PCIe
 * counters every 250 ms (backend/nvml/nvml_device.h), so readings in
 * between lack them; a scrape then would lose the series and Prometheus
 * mark it stale. gpufl__metrics_hold keeps the last value of each in held
 * (zeroed before the first call) and puts it into s where s lacks it, for
 * devices 0..n-1. */
void gpufl__metrics_hold(gfl_device_metrics_payload *held, gpufl__live_sample *s, uint32_t n);
/* Appends the exporter's counters and, in OpenMetrics, "# EOF". Returns 0
 * or GPUFL_ENOMEM. */
int gpufl__metrics_finish(const gpufl__metrics_counters *c, bool openmetrics, gpufl__bytebuf *out)
    __attribute__((warn_unused_result));
/* Appends printf's text to out. Returns 0, GPUFL_ENOMEM or GPUFL_EINVAL
 * (a format error), out unchanged then. */
int gpufl__metrics_appendf(gpufl__bytebuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)))
__attribute__((warn_unused_result));
/* Appends text as a label value: backslash, double quote and newline
 * escaped as the exposition format says, a byte that is not UTF-8 as U+FFFD. Returns 0 or GPUFL_ENOMEM. */
int gpufl__metrics_label_value(gpufl__bytebuf *out, const char *text) __attribute__((warn_unused_result));

#endif /* GPUFL_SESSION_METRICS_TEXT_H */
