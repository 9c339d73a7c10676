/*
 * gfl_driver (see driver_api.h).
 */
#include "backend/cupti/driver_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static gfl_driver_api D;
static const gfl_driver_api *bound;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const gfl_driver_api *bind(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        return NULL;
#define BIND(field, symbol) D.field = (__typeof__(D.field))dlsym(lib, symbol)
    BIND(cuDeviceGetCount, "cuDeviceGetCount");
    BIND(cuDeviceGet, "cuDeviceGet");
    BIND(cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState");
    BIND(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    BIND(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    BIND(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    BIND(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    BIND(cuCtxGetCurrent, "cuCtxGetCurrent");
    BIND(cuCtxSynchronize, "cuCtxSynchronize");
    BIND(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode");
    BIND(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId");
#undef BIND
    /* the handle stays open: the program holds the library anyway */
    if (!D.cuDeviceGetCount || !D.cuDeviceGet || !D.cuDevicePrimaryCtxGetState || !D.cuDevicePrimaryCtxRetain ||
        !D.cuDevicePrimaryCtxRelease || !D.cuCtxPushCurrent || !D.cuCtxPopCurrent || !D.cuCtxGetCurrent ||
        !D.cuCtxSynchronize)
        return NULL;
    return &D;
}

const gfl_driver_api *gfl_driver(void)
{
    pthread_mutex_lock(&lock);
    if (!bound)
        bound = bind();
    const gfl_driver_api *d = bound;
    pthread_mutex_unlock(&lock);
    return d;
}
