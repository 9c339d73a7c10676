/*
 * gfl_device_drain (see device_drain.h).
 *
 * The calling thread's stream-capture mode is set to relaxed around the
 * synchronizations: another thread capturing a CUDA graph in global mode
 * would otherwise see our context synchronize as a prohibited call and
 * have its capture invalidated. Called at most once per trace window.
 */
#include "backend/cupti/device_drain.h"

#include "backend/cupti/driver_api.h"

static void drain_primary(const gfl_driver_api *D, CUdevice dev)
{
    unsigned flags = 0;
    int active = 0;
    CUcontext ctx = NULL, popped = NULL;
    /* an inactive primary context has no work, and retaining it would
     * create one the program never asked for */
    if (D->cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active)
        return;
    if (D->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS)
        return;
    if (D->cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {
        (void)D->cuCtxSynchronize();
        (void)D->cuCtxPopCurrent(&popped);
    }
    (void)D->cuDevicePrimaryCtxRelease(dev);
}

void gfl_device_drain(void)
{
    const gfl_driver_api *D = gfl_driver();
    if (!D)
        return;
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (D->cuThreadExchangeStreamCaptureMode)
        (void)D->cuThreadExchangeStreamCaptureMode(&mode);
    CUcontext current = NULL;
    if (D->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current)
        (void)D->cuCtxSynchronize(); /* a context of the program's own (cuCtxCreate) */
    int n = 0;
    if (D->cuDeviceGetCount(&n) == CUDA_SUCCESS)
        for (int i = 0; i < n; i++) {
            CUdevice dev;
            if (D->cuDeviceGet(&dev, i) == CUDA_SUCCESS)
                drain_primary(D, dev);
        }
    if (D->cuThreadExchangeStreamCaptureMode)
        (void)D->cuThreadExchangeStreamCaptureMode(&mode);
}
