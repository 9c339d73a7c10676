/*
 * One session as one process of a Perfetto or Chrome export: the context
 * the per-session writers of export_perfetto.c and export_chrome.c take,
 * so that a one-session export and a job export (export_job.h) are the same
 * code. A one-session export fills it with gpufl__export_proc_single() (the
 * session's pid, no shift, uuids and flows from 1), which gives the very
 * bytes the exports wrote before jobs existed; gpufl__export_ranks() fills
 * one per rank of a job, each in its own namespace of track uuids, flow ids
 * and Perfetto sequence.
 *
 * Single-threaded.
 */
#ifndef GPUFL_PRESENT_EXPORT_EXPORT_PROC_H
#define GPUFL_PRESENT_EXPORT_EXPORT_PROC_H

#include <stddef.h>
#include <stdint.h>

#include "present/export/export_job.h"
#include "present/export/export_out.h"
#include "read/rows.h"

typedef struct gpufl__export_proc {
    uint32_t pid;       /* of the session's events */
    const char *label;  /* the process's name; NULL: the timeline's (the app's name) */
    int32_t sort_index; /* the process's place in the UI */
    int64_t shift_ns;   /* added to every time (gpufl__export_time) */
    uint8_t job;        /* one of several sessions in the file: the sort index is written
                            and (Chrome) GPUs are threads of the process */
    uint8_t clock;      /* Perfetto: this session's first packet carries the clock snapshot */
    uint32_t sequence;  /* Perfetto: trusted_packet_sequence_id of its packets */
    uint64_t uuid_base; /* Perfetto: a track's uuid is uuid_base + its id + 1 */
    uint64_t flow_base; /* added to the timeline's flow ids */
    /* set by the writer: */
    uint64_t uuid_end; /* the highest uuid written (uuid_base when none) */
    uint64_t clamped;  /* times that the shift took out of range, written clamped */
} gpufl__export_proc;

/* The one process of a one-session export of x. */
void gpufl__export_proc_single(gpufl__export_proc *p, const gpufl__rows *x);

/* t on the export's time line: t + p->shift_ns, clamped to 0 .. 2^64 - 1
 * (and counted in p->clamped) when it falls outside. */
static inline uint64_t gpufl__export_time(gpufl__export_proc *p, uint64_t t)
{
    if (p->shift_ns >= 0) {
        uint64_t s = (uint64_t)p->shift_ns;
        if (t > UINT64_MAX - s) {
            p->clamped++;
            return UINT64_MAX;
        }
        return t + s;
    }
    uint64_t s = (uint64_t)0 - (uint64_t)p->shift_ns;
    if (t < s) {
        p->clamped++;
        return 0;
    }
    return t - s;
}

/* Writes the session x into o as process p, adding to *r (timeline counts,
 * packets or events, clamped). Returns 0, GPUFL_ENOMEM, or GPUFL_EIO when o
 * failed (o->err says why); o stays open either way. */
typedef int (*gpufl__export_session_fn)(void *ctx, gpufl__xout *o, const gpufl__rows *x, gpufl__export_proc *p,
                                        gpufl__export_result *r);

/* The job loop: checks ranks (GPUFL_EINVAL: none, a NULL path or label, a
 * pid used twice), then for each rank opens its session, gives it to fn
 * with its process (sequence, uuids and flows after the previous rank's)
 * and closes it before opening the next. Returns 0, or the first error
 * with a message in err: the reader's, naming the rank's path; fn's or o's
 * (GPUFL_ENOMEM or GPUFL_EIO), naming o's file. o stays open; the caller
 * aborts or finishes it. */
int gpufl__export_ranks(gpufl__xout *o, const gpufl__export_rank *ranks, size_t n, gpufl__export_session_fn fn,
                        void *ctx, gpufl__export_result *r, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_EXPORT_EXPORT_PROC_H */
