/*
 * gfl_device_drain (see device_drain.h).
 *
 * The calling thread's stream-capture mode is set to relaxed around the
 * synchronizations: another thread capturing a CUDA graph in global mode
 * would otherwise see our context synchronize as a prohibited call and
 * have its capture invalidated. Called at most once per trace window.
 */
#include "backend/cupti/device_drain.h"

#include <dlfcn.h>
#include <stddef.h>

#include <cuda.h>

#define DRIVER_FN(name) __typeof__(&name) name

static struct {
    DRIVER_FN(cuDeviceGetCount);
    DRIVER_FN(cuDeviceGet);
    DRIVER_FN(cuDevicePrimaryCtxGetState);
    DRIVER_FN(cuDevicePrimaryCtxRetain);
    DRIVER_FN(cuDevicePrimaryCtxRelease); /* _v2 through cuda.h */
    DRIVER_FN(cuCtxPushCurrent);          /* _v2 */
    DRIVER_FN(cuCtxPopCurrent);           /* _v2 */
    DRIVER_FN(cuCtxGetCurrent);
    DRIVER_FN(cuCtxSynchronize);
    DRIVER_FN(cuThreadExchangeStreamCaptureMode); /* optional */
} D;

/* The driver's functions, once the program has loaded it; false before. */
static int bind(void)
{
    if (D.cuCtxSynchronize)
        return 1;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        return 0;
#define BIND(field, symbol) D.field = (__typeof__(D.field))dlsym(lib, symbol)
    BIND(cuDeviceGetCount, "cuDeviceGetCount");
    BIND(cuDeviceGet, "cuDeviceGet");
    BIND(cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState");
    BIND(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    BIND(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    BIND(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    BIND(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    BIND(cuCtxGetCurrent, "cuCtxGetCurrent");
    BIND(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode");
    BIND(cuCtxSynchronize, "cuCtxSynchronize"); /* last: it says all are bound */
#undef BIND
    if (!D.cuDeviceGetCount || !D.cuDeviceGet || !D.cuDevicePrimaryCtxGetState || !D.cuDevicePrimaryCtxRetain ||
        !D.cuDevicePrimaryCtxRelease || !D.cuCtxPushCurrent || !D.cuCtxPopCurrent || !D.cuCtxGetCurrent) {
        D.cuCtxSynchronize = NULL;
        return 0;
    }
    return D.cuCtxSynchronize != NULL;
}

static void drain_primary(CUdevice dev)
{
    unsigned flags = 0;
    int active = 0;
    CUcontext ctx = NULL, popped = NULL;
    /* an inactive primary context has no work, and retaining it would
     * create one the program never asked for */
    if (D.cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active)
        return;
    if (D.cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS)
        return;
    if (D.cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {
        (void)D.cuCtxSynchronize();
        (void)D.cuCtxPopCurrent(&popped);
    }
    (void)D.cuDevicePrimaryCtxRelease(dev);
}

void gfl_device_drain(void)
{
    if (!bind())
        return;
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (D.cuThreadExchangeStreamCaptureMode)
        (void)D.cuThreadExchangeStreamCaptureMode(&mode);
    CUcontext current = NULL;
    if (D.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current)
        (void)D.cuCtxSynchronize(); /* a context of the program's own (cuCtxCreate) */
    int n = 0;
    if (D.cuDeviceGetCount(&n) == CUDA_SUCCESS)
        for (int i = 0; i < n; i++) {
            CUdevice dev;
            if (D.cuDeviceGet(&dev, i) == CUDA_SUCCESS)
                drain_primary(dev);
        }
    if (D.cuThreadExchangeStreamCaptureMode)
        (void)D.cuThreadExchangeStreamCaptureMode(&mode);
}
