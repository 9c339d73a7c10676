/*
 * The SM limits of a CUDA device (occupancy.h's gfl_sm_limits), asked of the
 * driver with cuDeviceGetAttribute. The plugin has no link-time dependency on
 * libcuda: the two driver functions are found with dlsym in the libcuda the
 * program already loaded (or loaded here when it has not). A limit the driver
 * does not report comes from the documented table for the device's compute
 * capability, and so do the allocation units, which no attribute reports.
 *
 * Threads: gfl_device_limits_get() is called by the plugin's worker once per
 * kernel record, so results are cached per device (ordinals below
 * GFL_DEVICE_LIMITS_MAX_DEVICES) and a hit is one acquire load and a copy. A
 * second thread is safe: it never waits, and asks the driver itself while
 * the first is still filling the entry. Never prints.
 */
#ifndef GPUFL_BACKEND_CUPTI_DEVICE_LIMITS_H
#define GPUFL_BACKEND_CUPTI_DEVICE_LIMITS_H

#include "backend/cupti/occupancy.h"

#define GFL_DEVICE_LIMITS_MAX_DEVICES 64

/* The driver calls used, with CUDA's types spelled as the C ABI passes them
 * (CUresult, CUdevice and CUdevice_attribute are all int), so that tests can
 * substitute fakes without cuda.h. Return 0 (CUDA_SUCCESS) or a CUresult. */
typedef struct gfl_cu_ops {
    int (*device_get)(int *device, int ordinal);
    int (*device_get_attribute)(int *value, int attribute, int device);
} gfl_cu_ops;

/*
 * Fills *out for device `ordinal` through ops. The compute capability must
 * come from the driver; any other attribute the driver lacks comes from
 * gpufl__sm_limits_for_cc().
 *
 * Returns 0, or (out unchanged) GPUFL_EINVAL for NULL arguments, a negative
 * ordinal or one the driver does not know; GPUFL_ESTATE when the driver is
 * not initialised (cuInit not yet called); GPUFL_EUNSUPPORTED when the
 * capability cannot be read, or it is not in the table and the driver lacks
 * a limit only the table could give.
 */
__attribute__((warn_unused_result)) int gfl_device_limits_query(const gfl_cu_ops *ops, int ordinal, gfl_sm_limits *out);

/*
 * gfl_device_limits_query() with the driver's own functions, cached per
 * device. The driver library is looked up once per process: the loaded
 * libcuda.so.1 first (RTLD_NOLOAD), else dlopen'd. Results are cached except
 * GPUFL_ESTATE, which a later call may not get.
 *
 * Returns as gfl_device_limits_query(), or GPUFL_ENOTFOUND when there is no
 * libcuda.so.1 or it lacks the two functions.
 */
__attribute__((warn_unused_result)) int gfl_device_limits_get(int ordinal, gfl_sm_limits *out);

#endif /* GPUFL_BACKEND_CUPTI_DEVICE_LIMITS_H */
