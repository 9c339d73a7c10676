/*
 * gpufl PM sampling: the GPU's performance monitor read at a fixed
 * interval (every 10 us by default) while the program runs, for metrics
 * such as SM activity, tensor-pipe activity and DRAM or PCIe throughput.
 * Unlike NVML's utilisation (was any kernel running in the last sample
 * period?) these are what the hardware counted, per interval.
 *
 * One collector per device, used in this order:
 *     gpufl_pm_collector_create(device, &c);
 *     gpufl_pm_enable(c);
 *     gpufl_pm_config_init(&cfg); cfg.metrics = names; cfg.num_metrics = n;
 *     gpufl_pm_configure(c, &cfg);
 *     gpufl_pm_start(c);  ...work...  gpufl_pm_decode(c, 0, &data) as often as wanted;
 *     gpufl_pm_stop(c); gpufl_pm_decode(c, 0, &data); gpufl_pm_counter_data_free(data);
 *     gpufl_pm_disable(c); gpufl_pm_collector_destroy(c);
 *
 * The CUPTI side lives in the device plugin (libgpufl_cupti.so, found
 * beside libgpufl or named by GPUFL_DEVICE_PLUGIN), so libgpufl itself
 * needs no CUDA: on a machine without it every call returns
 * GPUFL_PM_E_LIBRARY_NOT_LOADED and says why.
 *
 * Every function returns 0 or a negative gpufl_pm_status;
 * gpufl_pm_error_string() names the kind and gpufl_pm_last_error() says
 * what failed in words. A collector is for one thread at a time; two
 * collectors may be used from two threads. Needs the same permission as
 * any GPU profiling (root, or NVreg_RestrictProfilingToAdminUsers=0).
 */
#ifndef GPUFL_PM_SAMPLING_H
#define GPUFL_PM_SAMPLING_H

#include <stddef.h>
#include <stdint.h>

#include "gpufl/gpufl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What went wrong. Values are append-only. */
typedef enum gpufl_pm_status {
    GPUFL_PM_OK = 0,
    GPUFL_PM_E_INVALID_DEVICE = -1,          /* no such device */
    GPUFL_PM_E_OUT_OF_MEMORY = -2,           /* host or device memory */
    GPUFL_PM_E_ALREADY_ENABLED = -3,         /* this or another collector has PM sampling on the device */
    GPUFL_PM_E_NOT_ENABLED = -4,             /* enable() first */
    GPUFL_PM_E_NOT_CONFIGURED = -5,          /* configure() first */
    GPUFL_PM_E_ALREADY_STARTED = -6,         /* start() twice, or configure() while started */
    GPUFL_PM_E_ALREADY_STOPPED = -7,         /* stop() while not started */
    GPUFL_PM_E_INSUFFICIENT_PRIVILEGES = -8, /* profiling is restricted to admin users */
    GPUFL_PM_E_LIBRARY_NOT_LOADED = -9,      /* no device plugin, CUPTI or profiler API */
    GPUFL_PM_E_INVALID_ARGUMENT = -10,       /* an unknown metric, a bad mode or size */
    GPUFL_PM_E_BUSY = -11,                   /* another tool holds the counters (ncu, DCGM) */
    GPUFL_PM_E_INTERNAL = -12                /* CUPTI failed otherwise: see gpufl_pm_last_error() */
} gpufl_pm_status;

/* CUPTI_PM_SAMPLING_TRIGGER_MODE_*: what the interval counts. */
typedef enum gpufl_pm_trigger_mode {
    GPUFL_PM_TRIGGER_GPU_SYSCLK_INTERVAL = 0, /* system clock cycles */
    GPUFL_PM_TRIGGER_GPU_TIME_INTERVAL = 1    /* nanoseconds (Ampere GA10x and later) */
} gpufl_pm_trigger_mode;

/* What the hardware buffer does when decode() does not keep up. */
typedef enum gpufl_pm_append_mode {
    GPUFL_PM_APPEND_KEEP_OLDEST = 0, /* new samples are lost; the data says overflow */
    GPUFL_PM_APPEND_KEEP_LATEST = 1  /* the oldest are overwritten */
} gpufl_pm_append_mode;

#define GPUFL_PM_DEFAULT_HARDWARE_BUFFER_SIZE (512ull << 20) /* bytes */
#define GPUFL_PM_DEFAULT_SAMPLING_INTERVAL 10000ull          /* ns in GPU_TIME_INTERVAL mode */
#define GPUFL_PM_DEFAULT_MAX_SAMPLES 10000u

/* configure()'s arguments. Set with gpufl_pm_config_init(), then change
 * what differs. The struct only grows at the end (size says how much the
 * caller knows). */
typedef struct gpufl_pm_config {
    uint32_t size;
    const char *const *metrics; /* CUPTI metric names ("sm__cycles_active.avg") */
    size_t num_metrics;
    uint64_t hardware_buffer_size;           /* bytes, default 512 MiB */
    uint64_t sampling_interval;              /* per trigger_mode: ns or cycles; default 10000 */
    gpufl_pm_trigger_mode trigger_mode;      /* default GPU_TIME_INTERVAL */
    gpufl_pm_append_mode append_mode;        /* default KEEP_OLDEST */
    const char *single_pass_metric_set_name; /* NULL, or a set whose metrics are added (CUPTI 13.1+) */
} gpufl_pm_config;

/* Decoded samples. Everything it points to belongs to it. */
typedef struct gpufl_pm_counter_data {
    uint32_t size;
    uint32_t num_metrics;
    const char *const *metrics;     /* the configured metrics, the set's included, in value order */
    const char *chip_name;          /* "GH100" */
    uint64_t num_total_samples;     /* the counter data image's room */
    uint64_t num_populated_samples; /* samples in it so far */
    uint64_t num_completed_samples; /* of those, complete */
    uint64_t num_samples;           /* samples in this data (completed since the last decode) */
    const uint64_t *start_ns;       /* num_samples start times, GPU clock (ns) */
    const uint64_t *end_ns;         /* num_samples end times */
    const double *values;           /* num_samples rows of num_metrics values */
    uint32_t overflow;              /* the hardware buffer filled up and samples were lost */
    uint32_t more;                  /* the image filled before the buffer emptied: decode again */
} gpufl_pm_counter_data;

typedef struct gpufl_pm_collector gpufl_pm_collector;

GPUFL_API void gpufl_pm_config_init(gpufl_pm_config *cfg);

/* A collector for device (CUDA ordinal). Loads the device plugin and CUPTI;
 * touches no GPU. *out is NULL on failure. */
GPUFL_API int gpufl_pm_collector_create(int device, gpufl_pm_collector **out);
/* Stops and disables what is still on, then frees c. NULL is fine. */
GPUFL_API void gpufl_pm_collector_destroy(gpufl_pm_collector *c);

GPUFL_API int gpufl_pm_enable(gpufl_pm_collector *c);
GPUFL_API int gpufl_pm_configure(gpufl_pm_collector *c, const gpufl_pm_config *cfg);
GPUFL_API int gpufl_pm_start(gpufl_pm_collector *c);
GPUFL_API int gpufl_pm_stop(gpufl_pm_collector *c);
/* Decodes what the GPU sampled since the last decode, at most max_samples
 * (0: GPUFL_PM_DEFAULT_MAX_SAMPLES) into *out, freed with
 * gpufl_pm_counter_data_free(). Between start() and disable(). */
GPUFL_API int gpufl_pm_decode(gpufl_pm_collector *c, uint32_t max_samples, gpufl_pm_counter_data **out);
GPUFL_API void gpufl_pm_counter_data_free(gpufl_pm_counter_data *data);
GPUFL_API int gpufl_pm_disable(gpufl_pm_collector *c);

/* The device c samples. */
GPUFL_API int gpufl_pm_collector_device(const gpufl_pm_collector *c);
/* "GPUFL_PM_E_NOT_CONFIGURED: configure() first", or "unknown" */
GPUFL_API const char *gpufl_pm_error_string(int status);
/* What the last failed call on c said, in words; "" when none failed. */
GPUFL_API const char *gpufl_pm_last_error(const gpufl_pm_collector *c);

#ifdef __cplusplus
}
#endif

#endif /* GPUFL_PM_SAMPLING_H */
