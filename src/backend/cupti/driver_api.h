/*
 * The few CUDA driver functions the CUPTI plugin calls itself, through the
 * driver the program already loaded (dlopen RTLD_NOLOAD): no link-time
 * dependency, and nothing to do in a process that has not used CUDA yet.
 * Used to drain the device before a trace window ends (device_drain.h) and
 * to find the contexts that exist when a profiling engine starts late
 * (pc_sampling.h).
 */
#ifndef GPUFL_BACKEND_CUPTI_DRIVER_API_H
#define GPUFL_BACKEND_CUPTI_DRIVER_API_H

#include <cuda.h>

#define GFL_DRIVER_FN(name) __typeof__(&name) name

typedef struct gfl_driver_api {
    GFL_DRIVER_FN(cuDeviceGetCount);
    GFL_DRIVER_FN(cuDeviceGet);
    GFL_DRIVER_FN(cuDevicePrimaryCtxGetState);
    GFL_DRIVER_FN(cuDevicePrimaryCtxRetain);
    GFL_DRIVER_FN(cuDevicePrimaryCtxRelease); /* _v2 through cuda.h */
    GFL_DRIVER_FN(cuCtxPushCurrent);          /* _v2 */
    GFL_DRIVER_FN(cuCtxPopCurrent);           /* _v2 */
    GFL_DRIVER_FN(cuCtxGetCurrent);
    GFL_DRIVER_FN(cuCtxSynchronize);
    GFL_DRIVER_FN(cuThreadExchangeStreamCaptureMode); /* optional */
    GFL_DRIVER_FN(cuDeviceGetPCIBusId);               /* optional */
} gfl_driver_api;

/* The driver's functions once the program has loaded libcuda, else NULL
 * (also when one that is required is missing). Any thread. */
const gfl_driver_api *gfl_driver(void);

#endif /* GPUFL_BACKEND_CUPTI_DRIVER_API_H */
