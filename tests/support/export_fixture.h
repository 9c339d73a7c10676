/*
 * A small hand-made session for the export tests (tests/test_export_*.c),
 * written as NDJSON logs so that every value is known. Times are µs after
 * the session start (1 s on the session clock); the session ends at 2000.
 *
 *   thread 101  scope "step" 100..900
 *                 scope "forward, \"fwd\"\n" 200..500          (comma, quotes, newline)
 *                   memcpy HtoD call 205..208, kernel calls 210..215 (gemm),
 *                   220..224 (softmax), 230..233 (relu)
 *                   NVTX "attention op" 300..400
 *               NVTX "cross" 450..600: overlaps "forward" without nesting
 *               NVTX mark "checkpoint" at 700
 *               scope "open" from 950, never ended
 *   thread 202  scope "loader\x01" 100..200                    (a control character)
 *   GPU 0 "NVIDIA H200"
 *     stream 7  memcpy HtoD 230..245 (4096 bytes, corr 10),
 *               kernel "gemm<float, 128>" 250..350 (corr 11, grid 132x1x1,
 *               block 256x1x1, 64 registers), kernel "softmax" 360..420 (corr 12)
 *               sync (stream) 400..430, from thread 101
 *     stream 8  memset 250..260 (no launching call known), kernel "relu"
 *               300..380 (corr 13)
 *     an allocation at 150 and its free at 1500
 *   samples     GPU 0 at 0, 500, 1000 (utilization, memory, temperature,
 *               power, clocks); host at 0, 1000 (CPU, RAM, RSS)
 *
 * Expected layout (timeline_walk.h): 16 tracks (process, 2 threads, GPU 0,
 * 2 streams, 1 sync track, 5 GPU counters, 3 host counters, and one
 * overflow lane "thread 101 #2" for "cross"); 16 slices and 1 instant;
 * 4 flows (the copy and the three kernels); 21 counter values.
 */
#ifndef GPUFL_TEST_EXPORT_FIXTURE_H
#define GPUFL_TEST_EXPORT_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"
#include "present/export/export.h"

#define FIX_START_NS 1000000000ull
#define FIX_US(us) (FIX_START_NS + (uint64_t)(us)*1000u)

#define FIX_TRACKS 16
#define FIX_THREAD_TRACKS 2
#define FIX_COUNTER_TRACKS 8
#define FIX_LANES 1
#define FIX_SLICES 16
#define FIX_INSTANTS 1
#define FIX_FLOWS 4
#define FIX_COUNTER_VALUES 21
#define FIX_KERNELS 3
#define FIX_APP "exporter \"one\", two"

/* Writes the session into <dir>/fixture (created) and returns that path
 * (malloc'd). Aborts the test on failure. */
char *tu_export_fixture(const char *dir);

/* An exporter of present/export/export.h (gpufl__export_perfetto and the rest). */
typedef int (*tu_exporter)(const gpufl_trace *t, const char *out, gpufl__export_result *r, char *err, size_t err_len);

/* Opens session, exports it into out with fn and closes it; fails the test,
 * with the reader's or exporter's message, on an error. */
void tu_export_session(const char *session, tu_exporter fn, const char *out, gpufl__export_result *r);

/* The real sample session recorded on an H200 (samples/train_sample). */
#define TU_TRAIN_SAMPLE GFL_SOURCE_DIR "/samples/train_sample"

#endif /* GPUFL_TEST_EXPORT_FIXTURE_H */
