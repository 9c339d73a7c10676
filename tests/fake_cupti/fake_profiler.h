/*
 * What the fake's host profiler (fake_profiler.c) and PM sampling
 * (fake_pm_sampling.c) share: the chip's metrics and the layouts of the
 * fake config and counter data images. Internal to the fake.
 */
#ifndef GPUFL_TESTS_FAKE_PROFILER_H
#define GPUFL_TESTS_FAKE_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#define FAKE_NAME_LEN 96
#define FAKE_CONFIG_MAGIC 0x46434b46u /* "FKCF" */
#define FAKE_DATA_MAGIC 0x44434b46u   /* "FKCD" */

/* A config image: this header, then n names of FAKE_NAME_LEN bytes. */
typedef struct fake_config_image {
    uint32_t magic;
    uint32_t n;
    uint32_t passes;
    uint32_t profiler_type;
} fake_config_image;

/* A counter data image: this header, n names, then max_samples samples of
 * fake_sample_head followed by n doubles. */
typedef struct fake_counter_data {
    uint32_t magic;
    uint32_t n;
    uint32_t max_samples;
    uint32_t populated;
} fake_counter_data;

typedef struct fake_sample_head {
    uint64_t start, end; /* GPU clock, ns */
} fake_sample_head;

/* A known metric's value at full load, or a negative number when the chip
 * has no such metric. */
double fake_metric_full(const char *name);
/* Replay passes one metric needs (1 or 2). */
unsigned fake_metric_passes(const char *name);
/* The cuptiDeviceGetChipName devices: 0..n-1. */
int fake_profiler_device_count(void);
/* Whether cuptiProfilerInitialize was called. */
int fake_profiler_initialized(void);

static inline size_t fake_sample_size(uint32_t n) { return sizeof(fake_sample_head) + n * sizeof(double); }
static inline size_t fake_data_size(uint32_t n, uint32_t max_samples)
{
    return sizeof(fake_counter_data) + (size_t)n * FAKE_NAME_LEN + (size_t)max_samples * fake_sample_size(n);
}

#endif /* GPUFL_TESTS_FAKE_PROFILER_H */
