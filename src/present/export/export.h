/*
 * Exports of a loaded trace for other tools (`gpufl export`):
 *
 *   Perfetto   a .perfetto-trace (protobuf TracePackets) for ui.perfetto.dev
 *              and trace_processor: tracks, nested slices, counters, flows
 *              from each launch to its kernel (export_perfetto.c)
 *   Chrome     Trace Event Format JSON for chrome://tracing and Perfetto's
 *              legacy importer: the same layout as X, C, s/f and M events
 *              (export_chrome.c)
 *   CSV        one RFC 4180 file per table: kernels.csv, copies.csv, ...
 *              (export_csv.c)
 *
 * Perfetto and Chrome share the timeline of timeline_walk.h (its comment
 * has the track layout and the nesting rule); both also write the sessions
 * of a job's ranks into one file (export_job.h). Every output file is written
 * to a temporary and renamed when complete (export_out.h): a failure
 * leaves nothing under the name asked for. Single-threaded; the trace is
 * only read.
 */
#ifndef GPUFL_PRESENT_EXPORT_EXPORT_H
#define GPUFL_PRESENT_EXPORT_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"
#include "present/timeline/timeline_names.h"

typedef struct gpufl__export_result {
    gpufl__tl_stats timeline; /* Perfetto and Chrome */
    uint64_t bytes;           /* written, all files together */
    uint64_t packets;         /* Perfetto: TracePackets; Chrome: trace events */
    uint64_t files, rows;     /* CSV: files and data rows written */
    uint64_t clamped;         /* job exports (export_job.h): times their rank's shift took
                                 before 0 or past 2^64 - 1 ns, written as 0 or 2^64 - 1 */
} gpufl__export_result;

/* Each returns 0 with *r filled, or a negative gpufl_err with a message
 * naming the file in err (and no output file left behind). */
int gpufl__export_perfetto(const gpufl_trace *t, const char *path, gpufl__export_result *r, char *err, size_t err_len)
    __attribute__((warn_unused_result));
int gpufl__export_chrome(const gpufl_trace *t, const char *path, gpufl__export_result *r, char *err, size_t err_len)
    __attribute__((warn_unused_result));
/* dir is created when missing (mkdir -p); files of the same names in it
 * are replaced, all of them only once every one is written. */
int gpufl__export_csv(const gpufl_trace *t, const char *dir, gpufl__export_result *r, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_EXPORT_EXPORT_H */
