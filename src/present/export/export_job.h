/*
 * Perfetto and Chrome JSON exports of a job: the sessions of its ranks in
 * one trace file, each rank a process of its own (its pid, name and sort
 * index), every time moved onto the job's time line by the rank's shift.
 * The caller (the job model) finds the sessions and their shifts; this only
 * writes them.
 *
 * Memory is bounded by one rank, whatever the job: a rank's session is
 * opened, its timeline built and written, both freed, then the next (a job
 * can be 64 ranks of a million events each). The output buffer is written
 * out every megabyte (export_out.h).
 *
 * Times. A rank's times are its session clock plus shift_ns. A time that
 * falls before 0 (or past 2^64 - 1 ns) is written as 0 (2^64 - 1) and
 * counted in gpufl__export_result.clamped: the caller is expected to pick a
 * time line on which every rank's times are positive (a host's
 * CLOCK_MONOTONIC, or the wall clock), so a count above 0 says its shifts
 * are wrong, rather than being hidden by moving the whole job.
 *
 * Perfetto: each rank's packets are on a sequence of their own
 * (trusted_packet_sequence_id = its index + 1) that starts by clearing the
 * incremental state, with its own interned names; track uuids and flow ids
 * continue from the previous rank's, so none collide; the process
 * descriptor carries pid, label and legacy_sort_index (the sort index).
 * Only the first rank's sequence carries the clock snapshot (its start on
 * the time line and the wall clock then): snapshots of several hosts would
 * disagree by their clocks' error and make the monotonic clock go back.
 * Chrome: one pid per rank, named by process_name and ordered by
 * process_sort_index metadata; a rank's GPUs are threads of its process
 * ("GPU 0 stream 7"), not processes of their own as in a one-session
 * export; flow ids continue from rank to rank; otherData, after the
 * events, lists each rank's session (path, session id, host, start, shift).
 *
 * Single-threaded.
 */
#ifndef GPUFL_PRESENT_EXPORT_EXPORT_JOB_H
#define GPUFL_PRESENT_EXPORT_EXPORT_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "present/export/export.h"

/* One rank of a job export: the session to read, how it is shown, and where its times go. */
typedef struct gpufl__export_rank {
    const char *path; /* the rank's session (directory or file), opened with gpufl_trace_open */
    uint32_t pid; /* the process id used in the export; unique per rank (the lead passes rank + 1 or the real pid) */
    const char *label;  /* process name shown: "rank 1 (host-a, pid 4242)" */
    int32_t sort_index; /* process order in the UI: the rank */
    int64_t shift_ns;   /* added to every time of this session: puts it on the job's time line */
} gpufl__export_rank;

/* Each writes ranks[0 .. n) into path and returns 0 with *r filled (its
 * counts summed over the ranks), or a negative gpufl_err with a message in
 * err and no file left at path: GPUFL_EINVAL for no ranks, a NULL path or
 * label, or two ranks with one pid; the reader's error for a rank whose
 * session cannot be opened (the message names that path); GPUFL_ENOMEM or
 * GPUFL_EIO naming the output otherwise. */
int gpufl__export_perfetto_job(const gpufl__export_rank *ranks, size_t n, const char *path, gpufl__export_result *r,
                               char *err, size_t err_len) __attribute__((warn_unused_result));
int gpufl__export_chrome_job(const gpufl__export_rank *ranks, size_t n, const char *path, gpufl__export_result *r,
                             char *err, size_t err_len) __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_EXPORT_EXPORT_JOB_H */
