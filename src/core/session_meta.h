/*
 * What a session says about itself, as a reader finds it in a file and a
 * writer puts it there: identity (the session_start line, the .gflt meta
 * chunk), how it ended (session_end, the end chunk) and whether writing
 * stopped early (log_stopped, the stop chunk). The live writers fill it from
 * gpufl__session_info; `gpufl convert` copies it from the file it reads.
 *
 * Plain data; the strings belong to whoever filled it.
 */
#ifndef GPUFL_CORE_SESSION_META_H
#define GPUFL_CORE_SESSION_META_H

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"

typedef struct gpufl__session_meta {
    const char *session_id, *app_name, *host, *gpufl_version; /* never NULL once filled */
    int64_t pid;
    uint64_t start_ns;       /* session timebase */
    uint64_t start_wall_ns;  /* Unix epoch ns at start_ns */
    uint32_t format_version; /* NDJSON schema version (docs/FORMAT.md) */
    bool ended;              /* a session_end / end chunk was found */
    uint64_t end_ns, end_wall_ns;
    uint64_t lost[GFL_CHANNEL_COUNT]; /* accepted but not written (writing had stopped) */
    uint32_t stop_reason;             /* gpufl__stop_reason; 0 = writing never stopped */
    uint64_t stopped_at_ns;
    const char *stop_detail; /* "" when it never stopped */
    /* Appended: the final losses of each channel by reason, as the recorder
     * counted them when the session ended (session_end's "dropped", the
     * end chunk's totals), disk_limit included. Readers take them over the
     * sum of the channel's "dropped" events, which stop reaching the file
     * once writing has stopped. */
    bool has_dropped[GFL_CHANNEL_COUNT];
    uint64_t dropped[GFL_CHANNEL_COUNT][GFL_DROP_REASON_COUNT];
} gpufl__session_meta;

#endif /* GPUFL_CORE_SESSION_META_H */
