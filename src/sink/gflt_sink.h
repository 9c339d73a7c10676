/*
 * The .gflt sink: a session's events into <session dir>/trace.gflt
 * (log_format gflt or both), through a gpufl__gflt_writer.
 *
 * Collector thread only. A chunk goes out when it holds 16384 events, and
 * at the latest about a second after its first event (the collector's
 * tick), so a crash loses at most that last second. trace.gflt does not
 * rotate (rotation serves `tail -F` and log shippers, which do not read
 * binary); it writes under the session's disk budget, shared with the NDJSON
 * logs, and when writing stops it records why in a stop chunk.
 */
#ifndef GPUFL_SINK_GFLT_SINK_H
#define GPUFL_SINK_GFLT_SINK_H

#include <stddef.h>

#include "collect/sink.h"
#include "sink/disk_budget.h"

/* Creates info->dir/trace.gflt. Returns 0 with *out set, or a negative
 * gpufl_err with a message in err and nothing left open. */
int gpufl__gflt_sink_open(gpufl__sink *out, const gpufl__session_info *info, gpufl__disk_budget *budget, char *err,
                          size_t err_len) __attribute__((warn_unused_result));

#endif /* GPUFL_SINK_GFLT_SINK_H */
