/*
 * A session summary: a self-contained snapshot (names as text, not ids) of
 * the collector's aggregates plus the session's identity. The collector
 * makes one for each session.json checkpoint and at the end; the CLI reads
 * it back from session.json; renderers print it.
 */
#ifndef GPUFL_COLLECT_SUMMARY_H
#define GPUFL_COLLECT_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/sink.h"
#include "collect/stats.h"
#include "core/session_info.h"
#include "core/string_lookup.h"

#define GFL_SUMMARY_MAX_NAMES 200

typedef struct gpufl__summary_name {
    char *name;
    uint64_t count, total_ns, min_ns, max_ns;
    uint64_t unended; /* scopes that never ended, counted until the session's last
                         recorded time (only in a summary made from the recorded events) */
} gpufl__summary_name;

typedef struct gpufl__summary {
    char *session_id, *app_name, *host, *dir;
    char *status; /* "running" (a checkpoint), "crashed" (a checkpoint after a fatal
                     signal was recorded) or "ended" */
    int pid;
    uint64_t start_ns, start_wall_ns;
    uint64_t end_ns; /* the end, or the time of the checkpoint */
    uint64_t events[GFL_EV_TYPE_COUNT];
    uint64_t dropped[GFL_DROP_REASON_COUNT]; /* summed over channels */
    uint64_t bytes_written;
    char *stop_reason, *stop_detail; /* NULL while logs are being written */
    uint64_t intern_overflows;
    gpufl__host_stats host_stats;
    gpufl__device_stats dev[GFL_STATS_MAX_DEVICES];
    char *dev_name[GFL_STATS_MAX_DEVICES]; /* "NVIDIA H200"; NULL when unknown */
    uint32_t ndev;
    gpufl__copy_stats copies[GFL_COPY_KIND_COUNT];
    uint64_t kernel_total_ns;
    gpufl__summary_name *scopes; /* by total time, longest first */
    uint32_t nscopes;
    gpufl__summary_name *kernels;
    uint32_t nkernels;
    /* The fatal signal recorded (collect/crash.h), when crashed. */
    bool crashed;
    uint32_t crash_tid;
    uint64_t crash_ts;
    gfl_crash_payload crash;
    /* Which profiling engine the session asked for and which one recorded,
     * the device plugin and why they differ; NULL when not known (engine
     * NULL: not decided yet, or a session of an older gpufl). */
    char *engine_requested, *engine, *engine_plugin, *engine_reason;
    /* Made from the session's recorded events (cli/summary_recorded.h) rather
     * than session.json's checkpoint: it did not end cleanly. */
    bool from_events;
} gpufl__summary;

/* Builds a summary. Returns 0, or GPUFL_ENOMEM with *out empty. */
int gpufl__summary_build(gpufl__summary *out, const gpufl__stats *st, const gpufl__session_info *info,
                         const gpufl__sink_status *sinks, uint64_t end_ns, bool ended)
    __attribute__((warn_unused_result));

/* Replaces out's scope and kernel tables with those of st, the longest
 * GFL_SUMMARY_MAX_NAMES of each, their names (ids of st) as text through
 * `names`. Returns 0, or GPUFL_ENOMEM with the tables partly filled (free
 * out with gpufl__summary_free). */
int gpufl__summary_set_names(gpufl__summary *out, const gpufl__stats *st, const gpufl__string_lookup *names)
    __attribute__((warn_unused_result));

void gpufl__summary_free(gpufl__summary *s);

uint64_t gpufl__summary_dropped_total(const gpufl__summary *s);

#endif /* GPUFL_COLLECT_SUMMARY_H */
