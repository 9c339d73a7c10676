/*
 * The lines of an NDJSON log that are about the session rather than an
 * event: session_start (first line of every file part), session_end (last
 * line of a channel) and log_stopped (docs/FORMAT.md). Written by the live
 * sink (collector thread) and by `gpufl convert`, which reproduces the
 * session_start and session_end of the trace it reads.
 */
#ifndef GPUFL_SINK_NDJSON_META_H
#define GPUFL_SINK_NDJSON_META_H

#include <stddef.h>
#include <stdint.h>

#include "core/session_meta.h"

/* Room enough for any of the lines below: strings are cut to
 * GFL_NDJSON_META_STR bytes (detail to 120) before escaping. */
#define GFL_NDJSON_META_BOUND 4096
#define GFL_NDJSON_META_STR 200

/* Each writes its line, '\n' included, at buf (GFL_NDJSON_META_BOUND bytes)
 * and returns its length. */
size_t gpufl__ndjson_session_start(char *buf, const gpufl__session_meta *s, const char *channel, unsigned part);
/* dropped: the channel's final losses by gfl_drop_reason (written as the
 * "dropped" object), or NULL to leave them out. */
size_t gpufl__ndjson_session_end(char *buf, const gpufl__session_meta *s, uint64_t end_ns, uint64_t end_wall_ns,
                                 uint64_t lines, uint64_t lost, const uint64_t *dropped);
size_t gpufl__ndjson_log_stopped(char *buf, uint64_t ts_ns, const char *reason, const char *detail);

#endif /* GPUFL_SINK_NDJSON_META_H */
