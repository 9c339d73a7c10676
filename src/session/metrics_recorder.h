/*
 * The metrics endpoint's text of gpufl's own figures in a recorded program
 * (metrics_listen): scope durations as a histogram and kernel time by
 * scope (collect/metrics_agg.h), events recorded and dropped, bytes
 * written by file (the collector's stats and sinks), triggers.
 *
 * Called on the collector thread with each published view
 * (GFL_COLLECTOR_PUBLISH_NS); a render is a few lines a scope name, at
 * most 256 of them (bench/bench_metrics_listen.c).
 */
#ifndef GPUFL_SESSION_METRICS_RECORDER_H
#define GPUFL_SESSION_METRICS_RECORDER_H

#include <stdbool.h>

#include "collect/metrics_agg.h"
#include "core/bytebuf.h"

/* Appends v's figures to out, in OpenMetrics when openmetrics (without
 * "# EOF"). Returns 0, or GPUFL_ENOMEM with out holding a prefix. */
int gpufl__metrics_render_recorder(const gpufl__metrics_view *v, bool openmetrics, gpufl__bytebuf *out)
    __attribute__((warn_unused_result));

#endif /* GPUFL_SESSION_METRICS_RECORDER_H */
