/*
 * The system sampler: one thread that takes a sample from every metric
 * source (host metrics and NVML) each period, while sampling is wanted:
 * always with continuous_system_sampling, otherwise only while some thread
 * is inside a scope or a gpufl_system_start() window is open. Outside those
 * windows it reads nothing but CPU counters (to keep rates exact) and writes
 * no event.
 *
 * A sample's timestamp is taken after the window was seen open, and the
 * sample is read only if the window is still open after that, so sample
 * timestamps fall inside the windows that asked for them; the values are
 * read from that moment on (NVML takes a few milliseconds).
 *
 * With a reader (the metrics endpoint) every period is read, window or
 * not, and handed to it; only the samples inside windows are recorded.
 */
#ifndef GPUFL_SESSION_SAMPLER_H
#define GPUFL_SESSION_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/metric_source.h"

#define GFL_SAMPLER_MAX_SOURCES 4

/* Who else gets every reading (the metrics endpoint, metrics_listen):
 * called on the sampler thread with each period's events, taken whether a
 * window is open or not (record false: never recorded at all, the sampler
 * runs only for it). */
typedef struct gpufl__sampler_reader {
    void (*reading)(void *ctx, const gfl_event *events, size_t n);
    void *ctx;
    bool record;
} gpufl__sampler_reader;

/* Starts the sampler thread; it owns the sources from here (closing them on
 * failure too). reader: NULL, or one that outlives the sampler. Returns 0
 * or a negative gpufl_err with a message in err. */
int gpufl__sampler_start(uint32_t period_ms, bool continuous, const gpufl__metric_source *sources, size_t n,
                         const gpufl__sampler_reader *reader, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Stops and joins the thread, closes the sources. Harmless if not running. */
void gpufl__sampler_stop(void);

/* Asks for a sample now (a window just opened). Any thread. */
void gpufl__sampler_kick(void);

#endif /* GPUFL_SESSION_SAMPLER_H */
