/*
 * Small helpers shared by the benchmarks: timing, statistics, RSS, and a
 * one-line description of the machine for the results table.
 */
#ifndef GPUFL_BENCH_UTIL_H
#define GPUFL_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint64_t bench_now_ns(void);
/* Median of n values (sorts them). */
double bench_median(double *v, size_t n);
/* "median [min-max]" of v[0..n) (at most 64 values, left as they are)
 * divided by scale, with `decimals` digits, into buf; returns buf. */
const char *bench_spread(const double *v, size_t n, double scale, int decimals, char *buf, size_t len);
/* Resident set size of this process, bytes (/proc/self/statm). */
uint64_t bench_rss_bytes(void);
/* Peak RSS (VmHWM), bytes, since the last bench_peak_reset() or the start. */
void bench_peak_reset(void);
uint64_t bench_peak_rss_bytes(void);
/* "AMD EPYC, 2 CPUs, Linux 6.1.0" */
void bench_machine(char *buf, size_t len);
/* The type of the file system dir is on, from /proc/self/mounts ("ext4",
 * "tmpfs"; "unknown" when not found). */
void bench_fs_type(const char *dir, char *buf, size_t len);
/* A fresh temporary directory under $BENCH_DIR or /tmp (malloc'd); remove
 * it with tu_rm_rf() from tests/support/fs_util.h. */
char *bench_tmpdir(void);

#ifdef __cplusplus
}
#endif

#endif
