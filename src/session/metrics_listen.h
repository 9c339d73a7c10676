/*
 * The metrics endpoint inside a recorded program (option metrics_listen):
 * the HTTP server of `gpufl exporter` (metrics_http.h) answering with the
 * GPUs' last reading under dcgm-exporter's names (metrics_text.h) and
 * gpufl's own figures (metrics_recorder.h).
 *
 * Threads: gpufl_init and gpufl_shutdown start and stop it (under the
 * lifecycle lock); the sampler thread hands it each reading
 * (gpufl__metrics_listen_reader: the readings it takes anyway, no second
 * NVML loop); the collector thread hands it the session's figures every
 * GFL_COLLECTOR_PUBLISH_NS (gpufl__metrics_listen_collector). Each renders
 * its part on its own thread and swaps it in under the server's mutex, held
 * for a pointer swap; the server's thread answers from the last parts. No
 * producer is touched, and a stuck scraper holds only a server slot.
 */
#ifndef GPUFL_SESSION_METRICS_LISTEN_H
#define GPUFL_SESSION_METRICS_LISTEN_H

#include <stddef.h>

#include "collect/collector.h"
#include "core/device_info.h"
#include "session/sampler.h"

typedef struct gpufl__metrics_listen gpufl__metrics_listen;

/* Listens on addr (metrics_http.h's forms) for a session whose GPUs are
 * devices (NULL: none; kept, must outlive it) on host hostname. Returns 0
 * with *out set, or as gpufl__metrics_server_start with err naming the
 * address and why, and nothing started. */
int gpufl__metrics_listen_start(const char *addr, const gpufl__device_list *devices, const char *hostname,
                                gpufl__metrics_listen **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));
/* "127.0.0.1:9400": where it listens. */
const char *gpufl__metrics_listen_address(const gpufl__metrics_listen *m);
/* Points the collector's metrics hooks (cfg->metrics, publish) at m. */
void gpufl__metrics_listen_collector(gpufl__metrics_listen *m, gpufl__collector_config *cfg);
/* The sampler's reader for m; record: whether the sampler also records. */
gpufl__sampler_reader gpufl__metrics_listen_reader(gpufl__metrics_listen *m, bool record);
/* Stops the server (after the sampler and the collector have stopped) and
 * frees m. NULL is a no-op. */
void gpufl__metrics_listen_stop(gpufl__metrics_listen *m);

#endif /* GPUFL_SESSION_METRICS_LISTEN_H */
