/*
 * The NDJSON sink: device.log, scope.log and system.log of one session
 * (or some of them: log_format compact has no device.log), each a
 * gpufl__logfile. They share the session's disk budget with each
 * other and with the .gflt sink. Collector thread only.
 */
#ifndef GPUFL_SINK_NDJSON_SINK_H
#define GPUFL_SINK_NDJSON_SINK_H

#include <stddef.h>

#include "collect/sink.h"
#include "sink/disk_budget.h"

/* A channel's bit in the channels a sink writes. */
#define GFL_NDJSON_CHANNEL(ch) (1u << (ch))
#define GFL_NDJSON_ALL_CHANNELS ((1u << GFL_CHANNEL_COUNT) - 1u)

/* Creates the logs of the channels given (GFL_NDJSON_CHANNEL bits;
 * GFL_NDJSON_ALL_CHANNELS: all three) in info->dir, writing under budget
 * (which must outlive the sink). Events of the other channels are passed
 * over, not counted as lost; the sink's status names those channels as
 * missing. Returns 0 with *out set, or a negative gpufl_err with a message
 * in err and nothing left open. */
int gpufl__ndjson_sink_open(gpufl__sink *out, const gpufl__session_info *info, gpufl__disk_budget *budget,
                            unsigned channels, char *err, size_t err_len) __attribute__((warn_unused_result));

#endif /* GPUFL_SINK_NDJSON_SINK_H */
