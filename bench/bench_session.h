/*
 * The synthetic session the trace, export, report and analysis benchmarks
 * share: trace_gen.c's events (kernel mix bench/data/kernel_mix.json) with
 * one set of session metadata, written as .gflt with the live sink's
 * settings. Failures print "<bench>: <what>" and exit: these are the
 * benchmarks' own set-up, not library code.
 */
#ifndef GPUFL_BENCH_SESSION_H
#define GPUFL_BENCH_SESSION_H

#include <stdint.h>

#include "core/session_meta.h"
#include "sink/gflt_writer.h"
#include "trace_gen.h"

/* The metadata of a session recorded by `bench` (its app name), not ended. */
void bench_session_meta(gpufl__session_meta *meta, const char *session_id, const char *bench);

/* Marks meta ended 1 us after the last event's timestamp. */
void bench_session_end(gpufl__session_meta *meta, uint64_t last_ts);

/* The event generator on the checked-in kernel mix, seed 1. */
trace_gen *bench_gen_open(const char *bench);

/* One .gflt file being written with the live sink's settings. */
typedef struct bench_gflt_file {
    int fd;
    gpufl__gflt_writer w;
} bench_gflt_file;

void bench_gflt_open(bench_gflt_file *f, const char *path, const gpufl__session_meta *meta);
void bench_gflt_close(bench_gflt_file *f, const gpufl__session_meta *meta);

/* Writes the first `events` events of the session to path as one ended
 * .gflt file; session_id and bench as for bench_session_meta(). */
void bench_write_session(const char *path, uint64_t events, const char *session_id, const char *bench);

#endif /* GPUFL_BENCH_SESSION_H */
