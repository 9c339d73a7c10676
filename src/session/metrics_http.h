/*
 * The metrics endpoint's HTTP server: GET /metrics answers the texts last
 * published (metrics_text.h; in a recorded program metrics_recorder.h's
 * too), / a page linking to it; any other path 404, another method 405,
 * a request that is not HTTP 400, a request head over 8 KiB 431.
 *
 * Threads: the server is one thread of its own, polling every connection
 * without blocking, so a slow or stuck scraper holds one of its 32 slots
 * until its deadline (5 s to send the request and read the answer) and
 * never the sampler or another scraper. The sampler publishes a reading
 * with gpufl__metrics_server_publish (a copy under a mutex held only for
 * the memcpy); the server copies it out the same way to answer.
 */
#ifndef GPUFL_SESSION_METRICS_HTTP_H
#define GPUFL_SESSION_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "session/metrics_text.h"

typedef struct gpufl__metrics_server gpufl__metrics_server;

/* Listens on addr ("ADDR:PORT", ":PORT" = every address, "[::1]:PORT";
 * port 0 picks one) and starts the server thread; OpenMetrics is answered
 * to a scrape whose Accept header asks for it, or to every scrape when
 * openmetrics. Returns 0 with *out set; GPUFL_EINVAL (bad address),
 * GPUFL_EIO (cannot bind or listen: port taken, no such address) or
 * GPUFL_ENOMEM, with nothing started and err naming the address and why. */
int gpufl__metrics_server_start(const char *addr, bool openmetrics, gpufl__metrics_server **out, char *err,
                                size_t err_len) __attribute__((warn_unused_result));
/* "127.0.0.1:9400": the address it listens on (the port picked for 0). */
const char *gpufl__metrics_server_address(const gpufl__metrics_server *s);
/* Publishes the device text of one reading in both formats (without the
 * exporter's counters, which each answer appends). Returns 0, or
 * GPUFL_ENOMEM with the last reading still served. Any thread. */
int gpufl__metrics_server_publish(gpufl__metrics_server *s, const void *text, size_t text_len, const void *om,
                                  size_t om_len) __attribute__((warn_unused_result));
/* The answer is the parts' texts in order, then the exporter's counters:
 * the device reading (published by gpufl__metrics_server_publish, which
 * counts it as a sample) and, in a recorded program, gpufl's own figures
 * (the collector's). */
#define GPUFL__METRICS_PART_DEVICES 0
#define GPUFL__METRICS_PART_RECORDER 1
#define GPUFL__METRICS_PARTS 2
/* Replaces part's text in both formats. Returns 0, or GPUFL_ENOMEM with
 * the last one still served. Any thread. */
int gpufl__metrics_server_publish_part(gpufl__metrics_server *s, unsigned part, const void *text, size_t text_len,
                                       const void *om, size_t om_len) __attribute__((warn_unused_result));
/* The exporter's counters so far. Any thread. */
void gpufl__metrics_server_counters(gpufl__metrics_server *s, gpufl__metrics_counters *out);
/* Stops the thread, closes every connection, frees s. NULL is a no-op. */
void gpufl__metrics_server_stop(gpufl__metrics_server *s);

#endif /* GPUFL_SESSION_METRICS_HTTP_H */
