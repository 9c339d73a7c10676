/*
 * A synthetic Trace-engine session for the reader and format benchmarks:
 * training steps (nested scopes, NVTX op ranges, kernels on several streams
 * with their launch attribution, copies, memsets, syncs, allocations, device
 * and host metrics), emitted in the order a collector sees them: program
 * thread events as they happen, device activity in buffer-sized batches.
 *
 * Kernel names, launch configurations and duration distributions come from
 * a data file (bench/data/kernel_mix.json), so a mix taken from a real trace
 * can replace the made-up one without touching code. Deterministic for a
 * given seed. Names are interned in the process-wide table.
 */
#ifndef GPUFL_BENCH_TRACE_GEN_H
#define GPUFL_BENCH_TRACE_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

typedef struct trace_gen trace_gen;

/* Reads the mix from mix_path. Returns 0, or -1 with a message in err. */
int trace_gen_open(const char *mix_path, uint64_t seed, trace_gen **out, char *err, size_t err_len);

/* The next event of the session. */
void trace_gen_next(trace_gen *g, gfl_event *ev);

void trace_gen_close(trace_gen *g);

#endif /* GPUFL_BENCH_TRACE_GEN_H */
