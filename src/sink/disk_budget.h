/*
 * The session's disk budget, shared by all of its log files: a cap on the
 * bytes written and a floor of free space on the file system. Once either is
 * reached, or a write fails, writing stops for the whole session with the
 * reason recorded, and the program runs on.
 *
 * Collector thread only (no locking). statvfs() is called at most once a
 * second or per 16 MiB written, not per write.
 */
#ifndef GPUFL_SINK_DISK_BUDGET_H
#define GPUFL_SINK_DISK_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/stop_reason.h"

/* Room kept under the cap for the closing records (each log's
 * "log_stopped" and "session_end" line with the final loss counts, the
 * .gflt stop and end chunks), so a capped session still ends with a
 * readable explanation and totals that add up. */
#define GFL_BUDGET_RESERVE 16384u

/* A cap is a count; a full disk is not. Disk space for the same closing
 * records and the last rewrites of session.json is held by a file of this
 * size (RESERVE_FILE in the session directory) from the start, and given
 * back to the file system the moment writing stops or the session ends,
 * so that a full disk still gets the stop reason into every file. */
#define GFL_DISK_RESERVE_BYTES (64u << 10)
#define GFL_DISK_RESERVE_FILE ".gpufl-reserve"

typedef struct gpufl__disk_budget {
    char dir[4096];
    uint64_t cap_bytes;
    uint64_t floor_bytes;
    uint64_t written;
    uint64_t next_check_bytes;
    uint64_t next_check_ns;
    gpufl__stop_reason stopped;
    uint64_t stopped_at_ns;
    char detail[256];  /* human-readable cause, e.g. "4294967296-byte cap reached" */
    bool reserve_held; /* GFL_DISK_RESERVE_FILE exists and holds its bytes */
} gpufl__disk_budget;

void gpufl__disk_budget_init(gpufl__disk_budget *b, const char *dir, uint64_t cap_bytes, uint64_t floor_bytes);

/* Creates the reserve file in the session directory. When the disk cannot
 * hold it the session goes on without (nothing is left behind). */
void gpufl__disk_budget_keep_reserve(gpufl__disk_budget *b);

/* Gives the reserve's space back (deletes the file); once, and called by
 * the budget itself when writing stops. The sinks call it before their
 * closing records. */
void gpufl__disk_budget_release(gpufl__disk_budget *b);

/* May n more bytes be written now? Checks the cap and, when due, the free
 * space. Returns false (and records why) when writing must stop. */
bool gpufl__disk_budget_allow(gpufl__disk_budget *b, size_t n, uint64_t now_ns);

/* Records a failed write; keeps the first reason. */
void gpufl__disk_budget_fail(gpufl__disk_budget *b, const char *what, int err, uint64_t now_ns);

#endif /* GPUFL_SINK_DISK_BUDGET_H */
