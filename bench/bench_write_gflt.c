/*
 * Writes the synthetic session of the reader benchmarks (trace_gen.c on
 * bench/data/kernel_mix.json, as bench_report and bench_analyze read it)
 * to one .gflt file and keeps it, for benchmarks outside C:
 * bench/bench_python_load.py opens it with the Python analyzer and with
 * gpufl_trace_open() alone.
 *
 *   bench_write_gflt PATH [EVENTS]     10 M events by default
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_session.h"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bench_write_gflt PATH [EVENTS]\n");
        return 2;
    }
    uint64_t events = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000ull;
    bench_write_session(argv[1], events, "bench_python-20261126-000000-1-0000000000000000", "bench_write_gflt");
    return 0;
}
