/*
 * A fake CUDA driver for test_device_limits and test_pm_source: the two
 * functions src/backend/cupti/device_limits.c looks up, for 2 devices of
 * compute capability 9.0 with an H200's limits, and the primary-context
 * calls of driver_api.c. Built with the soname libcuda.so.1,
 * so that once a test has loaded it by path, dlopen("libcuda.so.1",
 * RTLD_NOLOAD) finds it as it finds the driver a CUDA program has loaded.
 *
 * The test steers and observes it through two exported variables:
 * fake_cuda_initialized (0: every call fails as before cuInit) and
 * fake_cuda_calls (calls made, counted atomically: tests call from threads).
 */
#include <cuda.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int fake_cuda_initialized = 1;
EXPORT unsigned long fake_cuda_calls;

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    __atomic_fetch_add(&fake_cuda_calls, 1, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&fake_cuda_initialized, __ATOMIC_RELAXED))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= 2)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device)
{
    __atomic_fetch_add(&fake_cuda_calls, 1, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&fake_cuda_initialized, __ATOMIC_RELAXED))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (device < 0 || device >= 2)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 232448; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *value = 1024; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* Primary contexts, for the plugin's own driver calls (driver_api.c): a
 * device's is active when the test's mask says the program made it;
 * retains are counted per device, and each thread has its own stack of
 * current contexts, as the driver keeps them. */
EXPORT unsigned fake_cuda_primary_active = 1; /* bit per device */
EXPORT int fake_cuda_retained[2];

static struct CUctx_st {
    int device;
} contexts[2] = {{0}, {1}};
static __thread CUcontext current[8];
static __thread int depth;

EXPORT CUresult cuDeviceGetCount(int *count)
{
    __atomic_fetch_add(&fake_cuda_calls, 1, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&fake_cuda_initialized, __ATOMIC_RELAXED))
        return CUDA_ERROR_NOT_INITIALIZED;
    *count = 2;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned *flags, int *active)
{
    if (dev < 0 || dev >= 2)
        return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = (__atomic_load_n(&fake_cuda_primary_active, __ATOMIC_RELAXED) >> dev) & 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    if (dev < 0 || dev >= 2)
        return CUDA_ERROR_INVALID_DEVICE;
    __atomic_fetch_add(&fake_cuda_retained[dev], 1, __ATOMIC_RELAXED);
    *ctx = &contexts[dev];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    if (dev < 0 || dev >= 2 || __atomic_load_n(&fake_cuda_retained[dev], __ATOMIC_RELAXED) == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    __atomic_fetch_sub(&fake_cuda_retained[dev], 1, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    if (!ctx || depth == 8)
        return CUDA_ERROR_INVALID_VALUE;
    current[depth++] = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *ctx)
{
    if (depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    *ctx = current[--depth];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = depth ? current[depth - 1] : NULL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void) { return depth ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
