/*
 * What a session is: identity, place and start, fixed at gpufl_init() and
 * read (never written) by the collector, the sinks and session.json.
 */
#ifndef GPUFL_CORE_SESSION_INFO_H
#define GPUFL_CORE_SESSION_INFO_H

#include <stdint.h>

#include "core/device_info.h"
#include "core/event.h"
#include "core/job.h"
#include "core/options.h"

#define GFL_FORMAT_VERSION 1

typedef struct gpufl__session_info {
    char id[128];   /* unique, safe as a path component */
    char dir[4096]; /* <log_path>/<id> */
    char app_name[256];
    char host[256];
    int pid;
    uint64_t start_ns; /* session timebase (CLOCK_MONOTONIC) */
    uint64_t start_wall_ns;
    const gpufl__config *config;
    const gpufl__device_list *devices; /* NULL: no GPU backend */
    gpufl__job job;                    /* launcher NULL: not started by a launcher known here */
} gpufl__session_info;

typedef struct gpufl__session_end {
    uint64_t end_ns;
    uint64_t end_wall_ns;
    /* The collector's final loss counts, [channel][gfl_drop_reason], but
     * for what the sinks could not write: each sink adds its own disk_limit
     * losses before writing them. NULL when not known (a sink closed
     * before the collector ran). */
    const uint64_t (*dropped)[GFL_DROP_REASON_COUNT];
    /* The clock pair read at the end (core/clock_pair.h), whose session
     * and wall times end_ns and end_wall_ns are; the collector records
     * it last. NULL: none. */
    const gfl_event *clock;
} gpufl__session_end;

#endif /* GPUFL_CORE_SESSION_INFO_H */
