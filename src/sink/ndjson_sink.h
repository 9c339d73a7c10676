/*
 * The NDJSON sink: device.log, scope.log and system.log of one session,
 * each a gpufl__logfile. They share the session's disk budget with each
 * other and with the .gflt sink. Collector thread only.
 */
#ifndef GPUFL_SINK_NDJSON_SINK_H
#define GPUFL_SINK_NDJSON_SINK_H

#include <stddef.h>

#include "collect/sink.h"
#include "sink/disk_budget.h"

/* Creates the three logs in info->dir, writing under budget (which must
 * outlive the sink). Returns 0 with *out set, or a negative gpufl_err with a
 * message in err and nothing left open. */
int gpufl__ndjson_sink_open(gpufl__sink *out, const gpufl__session_info *info, gpufl__disk_budget *budget, char *err,
                            size_t err_len) __attribute__((warn_unused_result));

#endif /* GPUFL_SINK_NDJSON_SINK_H */
