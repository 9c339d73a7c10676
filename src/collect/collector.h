/*
 * The collector: one thread per session that drains every producer's ring,
 * keeps the session's aggregates, reports losses as "dropped" events, feeds
 * the sinks and checkpoints session.json.
 *
 * It polls (producers never wake it, since that would be a system call on
 * their path): 1 ms while events flow, backing off to 10 ms when idle. At
 * the default ring of 8192 events a thread can burst at ~800 000 events/s
 * through the longest sleep without loss; sustained, the collector writes
 * several million events a second (bench/RESULTS.md).
 */
#ifndef GPUFL_COLLECT_COLLECTOR_H
#define GPUFL_COLLECT_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/metrics_agg.h"
#include "collect/sink.h"
#include "collect/summary.h"
#include "collect/triggers.h"
#include "core/session_info.h"

#define GFL_COLLECTOR_MAX_SINKS 4

typedef struct gpufl__collector gpufl__collector;

typedef struct gpufl__collector_config {
    const gpufl__session_info *info;
    gpufl__sink sinks[GFL_COLLECTOR_MAX_SINKS]; /* owned by the collector from start */
    size_t nsinks;
    bool durable; /* write out after every pass (flush_logs_always) */
    uint32_t session_gen;
    bool checkpoints; /* rewrite session.json every couple of seconds */
    /* Checked against every event and polled every pass (NULL: none);
     * the session owns it and frees it after the collector stops. */
    gpufl__triggers *triggers;
    /* Clock pairs (core/clock_pair.h): the one read at the session's
     * start, recorded first (NULL: none), and one more every
     * clock_period_ns (0: none between start and end). */
    const gfl_event *clock_start;
    uint64_t clock_period_ns;
    /* The metrics endpoint (metrics_listen; NULL: none). metrics is fed
     * every delivered event; publish is called on the collector thread
     * every GFL_COLLECTOR_PUBLISH_NS with the session's figures, and once
     * more at the end with the final ones (those of the final
     * session.json). The session owns both and frees them after the
     * collector stops. */
    gpufl__metrics_agg *metrics;
    void (*publish)(void *ctx, const gpufl__metrics_view *v);
    void *publish_ctx;
} gpufl__collector_config;

#define GFL_COLLECTOR_PUBLISH_NS 100000000ull /* as often as the sinks write out */

/* Starts the thread. Returns 0, or a negative gpufl_err with a message in
 * err; on failure the sinks are closed. */
int gpufl__collector_start(gpufl__collector **out, const gpufl__collector_config *cfg, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* Drains everything still queued, records end->clock (when not NULL),
 * closes the sinks, writes the final session.json, joins the thread and
 * frees the collector. If final is not
 * NULL it receives the final summary (free with gpufl__summary_free). */
void gpufl__collector_stop(gpufl__collector *c, const gpufl__session_end *end, gpufl__summary *final);

/* Drains what the rings hold now and has every sink write out what it
 * buffers, so that a reader of the session's files sees the session so far
 * (gpufl_generate_report on a running session); any thread, it waits for
 * the collector's current pass. Events recorded meanwhile may be left for
 * the next pass. */
void gpufl__collector_flush(gpufl__collector *c);

/* Drains what the rings hold now and rewrites session.json with it (when
 * the collector keeps checkpoints), so that a fact just recorded (which
 * engine runs) is in session.json at once, not at the next checkpoint;
 * any thread. A failed write is logged once, like a checkpoint's. */
void gpufl__collector_checkpoint(gpufl__collector *c);

/* A summary of the session so far; any thread. 0 or GPUFL_ENOMEM. */
int gpufl__collector_snapshot(gpufl__collector *c, gpufl__summary *out) __attribute__((warn_unused_result));

#endif /* GPUFL_COLLECT_COLLECTOR_H */
