/*
 * The PM sampling table a device plugin exports beside its plugin entry
 * (libgpufl_cupti.so's gpufl_pm_entry), for include/gpufl/pm_sampling.h:
 * libgpufl keeps no CUDA, so the public functions forward here. Plain C;
 * carries its size and ABI and only grows at the end.
 *
 * Each function returns 0 or a negative gpufl_pm_status with the reason in
 * err. A handle is used by one thread at a time (the caller's collector).
 */
#ifndef GPUFL_CORE_PM_API_H
#define GPUFL_CORE_PM_API_H

#include <stddef.h>
#include <stdint.h>

#include "gpufl/pm_sampling.h"

#define GPUFL_PM_ABI 1
#define GPUFL_PM_ENTRY "gpufl_pm_entry"

typedef struct gpufl_pm_handle gpufl_pm_handle;

/* gpufl_pm_config_init()'s defaults, for both sides of the table. */
static inline void gpufl__pm_config_defaults(gpufl_pm_config *c)
{
    *c = (gpufl_pm_config){
        .size = sizeof *c,
        .hardware_buffer_size = GPUFL_PM_DEFAULT_HARDWARE_BUFFER_SIZE,
        .sampling_interval = GPUFL_PM_DEFAULT_SAMPLING_INTERVAL,
        .trigger_mode = GPUFL_PM_TRIGGER_GPU_TIME_INTERVAL,
        .append_mode = GPUFL_PM_APPEND_KEEP_OLDEST,
    };
}

typedef struct gpufl_pm_ops {
    uint32_t size;
    uint32_t abi;
    /* Loads CUPTI and checks it has the PM sampling API; touches no GPU. */
    int (*open)(int device, gpufl_pm_handle **out, char *err, size_t err_len);
    /* Stops and disables what is on, then frees h. */
    void (*close)(gpufl_pm_handle *h);
    int (*enable)(gpufl_pm_handle *h, char *err, size_t err_len);
    int (*configure)(gpufl_pm_handle *h, const gpufl_pm_config *cfg, char *err, size_t err_len);
    int (*start)(gpufl_pm_handle *h, char *err, size_t err_len);
    int (*stop)(gpufl_pm_handle *h, char *err, size_t err_len);
    int (*decode)(gpufl_pm_handle *h, uint32_t max_samples, gpufl_pm_counter_data **out, char *err, size_t err_len);
    void (*free_data)(gpufl_pm_counter_data *data);
    int (*disable)(gpufl_pm_handle *h, char *err, size_t err_len);
} gpufl_pm_ops;

typedef const gpufl_pm_ops *(*gpufl_pm_entry_fn)(void);

#endif /* GPUFL_CORE_PM_API_H */
