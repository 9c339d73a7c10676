/*
 * The cost of one sampling round of the system sampler, measured outside a
 * session: NVML for every GPU, and the host backend. C, so that the CUDA
 * benchmark (C++) need not include the library's internal C headers.
 */
#ifndef GPUFL_BENCH_SAMPLING_ROUND_H
#define GPUFL_BENCH_SAMPLING_ROUND_H

#ifdef __cplusplus
extern "C" {
#endif

/* Medians over `rounds` rounds, µs. Returns 0, or -1 (message on stderr)
 * when NVML cannot be opened. */
int bench_sampling_round(int rounds, double *nvml_us, double *host_us);

/* Prints the median cost of each NVML call a sample makes, on GPU 0.
 * Returns 0, or -1 without NVML. */
int bench_nvml_call_costs(void);

#ifdef __cplusplus
}
#endif

#endif
