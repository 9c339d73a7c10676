/*
 * The system sampler: one thread that takes a sample from every metric
 * source (host now, NVML next) each period, while sampling is wanted:
 * always with continuous_system_sampling, otherwise only while some thread
 * is inside a scope or a gpufl_system_start() window is open. Outside those
 * windows it reads nothing but CPU counters (to keep rates exact) and writes
 * no event.
 *
 * A sample's timestamp is taken after the window was seen open, and the
 * sample is read only if the window is still open after that, so sample
 * timestamps fall inside the windows that asked for them; the values are
 * read from that moment on (NVML takes a few milliseconds).
 */
#ifndef GPUFL_SESSION_SAMPLER_H
#define GPUFL_SESSION_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/metric_source.h"

#define GFL_SAMPLER_MAX_SOURCES 4

/* Starts the sampler thread; it owns the sources from here (closing them on
 * failure too). Returns 0 or a negative gpufl_err with a message in err. */
int gpufl__sampler_start(uint32_t period_ms, bool continuous, const gpufl__metric_source *sources, size_t n, char *err,
                         size_t err_len) __attribute__((warn_unused_result));

/* Stops and joins the thread, closes the sources. Harmless if not running. */
void gpufl__sampler_stop(void);

/* Asks for a sample now (a window just opened). Any thread. */
void gpufl__sampler_kick(void);

#endif /* GPUFL_SESSION_SAMPLER_H */
