/*
 * The timeline view's only window onto the trace's columns
 * (include/gpufl/trace.h): every field the view reads goes through one of
 * these small functions, so a change of the trace's layout (durations kept
 * as 32-bit offsets, launch configurations or streams in tables of their
 * own) is a change of this file alone.
 *
 * Rows are named by a table (GPUFL__VT_*) and an index in it. The interval
 * tables (kernels, copies, memsets, scopes, NVTX) are sorted by start time;
 * device samples by their time. The tables are those the exporters read,
 * bound once by gpufl__xtrace_init() (export_rows.h). Read-only; any
 * thread.
 */
#ifndef GPUFL_PRESENT_VIEW_VIEW_COLUMNS_H
#define GPUFL_PRESENT_VIEW_VIEW_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"
#include "present/export/export_rows.h"

enum {
    GPUFL__VT_KERNEL = 0,
    GPUFL__VT_COPY = 1,
    GPUFL__VT_MEMSET = 2,
    GPUFL__VT_SCOPE = 3,
    GPUFL__VT_NVTX = 4,
    GPUFL__VT_SAMPLE = 5, /* device samples */
    GPUFL__VT_COUNT
};

static inline const gpufl_trace_transfers *gpufl__vsrc_transfers(const gpufl__xtrace *s, unsigned table)
{
    return table == GPUFL__VT_COPY ? s->copies : s->memsets;
}

static inline const gpufl_trace_scopes *gpufl__vsrc_scopes(const gpufl__xtrace *s, unsigned table)
{
    return table == GPUFL__VT_SCOPE ? s->scopes : s->nvtx;
}

static inline size_t gpufl__vsrc_count(const gpufl__xtrace *s, unsigned table)
{
    switch (table) {
    case GPUFL__VT_KERNEL: return s->kernels->n;
    case GPUFL__VT_COPY:
    case GPUFL__VT_MEMSET: return gpufl__vsrc_transfers(s, table)->n;
    case GPUFL__VT_SCOPE:
    case GPUFL__VT_NVTX: return gpufl__vsrc_scopes(s, table)->n;
    default: return s->dev->n;
    }
}

/* Start (interval tables) or time (samples), session timebase ns. */
static inline uint64_t gpufl__vsrc_start(const gpufl__xtrace *s, unsigned table, size_t i)
{
    switch (table) {
    case GPUFL__VT_KERNEL: return s->kernels->start_ns[i];
    case GPUFL__VT_COPY:
    case GPUFL__VT_MEMSET: return gpufl__vsrc_transfers(s, table)->start_ns[i];
    case GPUFL__VT_SCOPE:
    case GPUFL__VT_NVTX: return gpufl__vsrc_scopes(s, table)->begin_ns[i];
    default: return s->dev->ts_ns[i];
    }
}

/* End of an interval (for a scope or NVTX range that never ended, the
 * session's last recorded time). Samples: their time. */
static inline uint64_t gpufl__vsrc_end(const gpufl__xtrace *s, unsigned table, size_t i)
{
    switch (table) {
    case GPUFL__VT_KERNEL: return gpufl_trace_kernel_end(s->kernels, i);
    case GPUFL__VT_COPY:
    case GPUFL__VT_MEMSET: return gpufl_trace_transfer_end(gpufl__vsrc_transfers(s, table), i);
    case GPUFL__VT_SCOPE:
    case GPUFL__VT_NVTX: return gpufl__vsrc_scopes(s, table)->end_ns[i];
    default: return s->dev->ts_ns[i];
    }
}

/* Row of the streams table of kernels, copies and memsets. */
static inline uint32_t gpufl__vsrc_stream_row(const gpufl__xtrace *s, unsigned table, size_t i)
{
    if (table == GPUFL__VT_KERNEL)
        return s->kernels->stream_row[i];
    return gpufl__vsrc_transfers(s, table)->stream_row[i];
}

/* The streams table a row of kernels, copies or memsets refers to. */
static inline const gpufl_trace_streams *gpufl__vsrc_streams(const gpufl__xtrace *s, unsigned table)
{
    return table == GPUFL__VT_KERNEL ? s->kernels->streams : gpufl__vsrc_transfers(s, table)->streams;
}

/* Device of kernels, copies, memsets and samples. */
static inline uint32_t gpufl__vsrc_device(const gpufl__xtrace *s, unsigned table, size_t i)
{
    switch (table) {
    case GPUFL__VT_KERNEL:
    case GPUFL__VT_COPY:
    case GPUFL__VT_MEMSET: return gpufl__vsrc_streams(s, table)->device[gpufl__vsrc_stream_row(s, table, i)];
    case GPUFL__VT_SAMPLE: return s->dev->device[i];
    default: return 0;
    }
}

/* CUPTI stream id of kernels, copies and memsets. */
static inline uint32_t gpufl__vsrc_stream(const gpufl__xtrace *s, unsigned table, size_t i)
{
    return gpufl__vsrc_streams(s, table)->stream[gpufl__vsrc_stream_row(s, table, i)];
}

/* gfl_copy_kind of a copy; 0 for memsets. */
static inline unsigned gpufl__vsrc_copy_kind(const gpufl__xtrace *s, unsigned table, size_t i)
{
    return table == GPUFL__VT_COPY ? s->copies->kind[i] : 0;
}

/* String id of the name of a kernel, scope or NVTX range. */
static inline uint32_t gpufl__vsrc_name(const gpufl__xtrace *s, unsigned table, size_t i)
{
    if (table == GPUFL__VT_KERNEL)
        return s->kernels->configs->name[s->kernels->config_row[i]];
    return gpufl__vsrc_scopes(s, table)->name[i];
}

/* Thread, nesting depth and instant-ness of scopes and NVTX rows. */
static inline uint32_t gpufl__vsrc_tid(const gpufl__xtrace *s, unsigned table, size_t i)
{
    return gpufl__vsrc_scopes(s, table)->tid[i];
}

static inline unsigned gpufl__vsrc_depth(const gpufl__xtrace *s, unsigned table, size_t i)
{
    return gpufl__vsrc_scopes(s, table)->depth[i];
}

static inline bool gpufl__vsrc_instant(const gpufl__xtrace *s, unsigned table, size_t i)
{
    const gpufl_trace_scopes *sc = gpufl__vsrc_scopes(s, table);
    return sc->instant && sc->instant[i];
}

/* A scope or NVTX range that never ended (gpufl_trace_scopes.unended). */
static inline bool gpufl__vsrc_unended(const gpufl__xtrace *s, unsigned table, size_t i)
{
    const gpufl_trace_scopes *sc = gpufl__vsrc_scopes(s, table);
    return sc->unended && sc->unended[i];
}

/* A sample's GPU utilization, %, or -1 when the sample has none. */
static inline int gpufl__vsrc_gpu_util(const gpufl__xtrace *s, size_t i)
{
    return (s->dev->valid[i] & 1u) ? s->dev->gpu_util_pct[i] : -1;
}

#endif /* GPUFL_PRESENT_VIEW_VIEW_COLUMNS_H */
