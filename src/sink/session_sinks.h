/*
 * The sinks of a live session, as its log_format option asks: the NDJSON
 * logs, trace.gflt, both, none (session.json only), or compact (trace.gflt
 * with every event, and NDJSON scope.log and system.log beside it), all
 * writing under the one disk budget the session owns. Called by gpufl_init (session/session.c) before the collector
 * starts; the sinks then belong to the collector thread.
 */
#ifndef GPUFL_SINK_SESSION_SINKS_H
#define GPUFL_SINK_SESSION_SINKS_H

#include <stddef.h>

#include "collect/collector.h"
#include "core/session_meta.h"
#include "sink/disk_budget.h"

/* Initialises budget from the session's options and opens the sinks into
 * cfg->sinks (cfg->nsinks set; 0 for log_format none). budget must outlive them (they are closed
 * by the collector). Returns 0, or a negative gpufl_err with a message in
 * err and no sink left open. */
int gpufl__session_sinks_open(gpufl__collector_config *cfg, const gpufl__session_info *info, gpufl__disk_budget *budget,
                              char *err, size_t err_len) __attribute__((warn_unused_result));

/* What the writers say about a live session: identity from info, this
 * library's version and NDJSON schema version, not ended yet. */
void gpufl__session_meta_of(const gpufl__session_info *info, gpufl__session_meta *out);

#endif /* GPUFL_SINK_SESSION_SINKS_H */
