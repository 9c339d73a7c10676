/*
 * SM limits from the CUDA driver (see device_limits.h). cuda.h is included
 * for the attribute numbers and the functions' types only; nothing links
 * against libcuda.
 */
#include "backend/cupti/device_limits.h"

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "gpufl/gpufl.h"

/* ---- asking the driver ---------------------------------------------------- */

static int map_cu_error(int rc)
{
    switch (rc) {
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED: return GPUFL_ESTATE;
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NO_DEVICE: return GPUFL_EINVAL;
    default: return GPUFL_EUNSUPPORTED;
    }
}

/* The table row for major.minor, else the nearest earlier capability's row
 * (7.0 at the oldest), for the allocation units no attribute reports; *exact
 * says which. Returns false when there is none. */
static bool table_limits(int major, int minor, gfl_sm_limits *out, bool *exact)
{
    *exact = gpufl__sm_limits_for_cc(major, minor, out) == 0;
    if (*exact)
        return true;
    for (int ma = major; ma >= 7; ma--)
        for (int mi = ma == major ? minor : 9; mi >= 0; mi--)
            if (gpufl__sm_limits_for_cc(ma, mi, out) == 0)
                return true;
    return false;
}

/* The limits a device's attributes give. The capability-specific ones must
 * be reported when the table does not know the capability exactly. */
static const struct {
    int attribute;
    size_t offset;
    bool zero_ok; /* 0 is a real value (reserved shared memory before Ampere) */
} attributes[] = {
    {CU_DEVICE_ATTRIBUTE_WARP_SIZE, offsetof(gfl_sm_limits, warp_size), false},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(gfl_sm_limits, max_threads_per_block), false},
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, offsetof(gfl_sm_limits, max_threads_per_sm), false},
    {CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, offsetof(gfl_sm_limits, max_blocks_per_sm), false},
    {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, offsetof(gfl_sm_limits, regs_per_sm), false},
    {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, offsetof(gfl_sm_limits, regs_per_block), false},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, offsetof(gfl_sm_limits, smem_per_sm), false},
    {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, offsetof(gfl_sm_limits, smem_per_block_optin), false},
    {CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, offsetof(gfl_sm_limits, smem_reserved_per_block), true},
};

int gfl_device_limits_query(const gfl_cu_ops *ops, int ordinal, gfl_sm_limits *out)
{
    if (!ops || !ops->device_get || !ops->device_get_attribute || !out || ordinal < 0)
        return GPUFL_EINVAL;
    int dev = 0, major = 0, minor = 0;
    int rc = ops->device_get(&dev, ordinal);
    if (rc == CUDA_SUCCESS)
        rc = ops->device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (rc == CUDA_SUCCESS)
        rc = ops->device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    if (rc != CUDA_SUCCESS)
        return map_cu_error(rc);

    gfl_sm_limits l;
    bool exact = false;
    if (major > UINT8_MAX || minor < 0 || minor > UINT8_MAX || !table_limits(major, minor, &l, &exact))
        return GPUFL_EUNSUPPORTED;
    for (size_t i = 0; i < sizeof attributes / sizeof attributes[0]; i++) {
        int value = 0;
        rc = ops->device_get_attribute(&value, attributes[i].attribute, dev);
        if (rc == CUDA_ERROR_NOT_INITIALIZED || rc == CUDA_ERROR_DEINITIALIZED)
            return GPUFL_ESTATE;
        bool present = rc == CUDA_SUCCESS && (value > 0 || (value == 0 && attributes[i].zero_ok));
        if (present)
            *(uint32_t *)((char *)&l + attributes[i].offset) = (uint32_t)value;
        else if (!exact)
            return GPUFL_EUNSUPPORTED; /* a guess from another capability's row would mislead */
    }
    l.cc_major = (uint8_t)major;
    l.cc_minor = (uint8_t)minor;
    *out = l;
    return 0;
}

/* ---- the driver's own functions ---------------------------------------- */

static CUresult (*cu_device_get)(CUdevice *device, int ordinal);
static CUresult (*cu_device_get_attribute)(int *value, CUdevice_attribute attribute, CUdevice dev);
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

/* Once per process; pthread_once publishes the pointers to later callers.
 * The library is never closed: the pointers live as long as the process. */
static void load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;
    void *get = dlsym(lib, "cuDeviceGet");
    void *get_attribute = dlsym(lib, "cuDeviceGetAttribute");
    if (!get || !get_attribute) {
        dlclose(lib);
        return;
    }
    *(void **)&cu_device_get = get;
    *(void **)&cu_device_get_attribute = get_attribute;
}

/* Adapters from gfl_cu_ops' int-typed calls to the driver's own types. */
static int driver_device_get(int *device, int ordinal)
{
    CUdevice dev = 0;
    CUresult rc = cu_device_get(&dev, ordinal);
    *device = (int)dev;
    return (int)rc;
}

static int driver_device_get_attribute(int *value, int attribute, int device)
{
    return (int)cu_device_get_attribute(value, (CUdevice_attribute)attribute, (CUdevice)device);
}

static const gfl_cu_ops driver_ops = {driver_device_get, driver_device_get_attribute};

/* ---- the per-device cache -------------------------------------------------- */

enum { ENTRY_EMPTY = 0, ENTRY_FILLING = 1, ENTRY_READY = 2 };

/* rc and limits are written only by the thread that moved state from EMPTY
 * to FILLING, and read only after state reads READY. */
static struct {
    _Atomic int state;
    int rc;
    gfl_sm_limits limits;
} cache[GFL_DEVICE_LIMITS_MAX_DEVICES];

int gfl_device_limits_get(int ordinal, gfl_sm_limits *out)
{
    if (!out || ordinal < 0)
        return GPUFL_EINVAL;
    pthread_once(&driver_once, load_driver);
    if (!cu_device_get)
        return GPUFL_ENOTFOUND;
    if (ordinal >= GFL_DEVICE_LIMITS_MAX_DEVICES)
        return gfl_device_limits_query(&driver_ops, ordinal, out);

    /* acquire: pairs with the release below, so rc and limits are complete. */
    if (atomic_load_explicit(&cache[ordinal].state, memory_order_acquire) == ENTRY_READY) {
        if (cache[ordinal].rc == 0)
            *out = cache[ordinal].limits;
        return cache[ordinal].rc;
    }
    /* relaxed: winning the claim publishes nothing; the fields it guards
     * are read only after the release store of READY. A thread that loses
     * asks the driver itself rather than wait for the winner. */
    int expected = ENTRY_EMPTY;
    if (!atomic_compare_exchange_strong_explicit(&cache[ordinal].state, &expected, ENTRY_FILLING, memory_order_relaxed,
                                                 memory_order_relaxed))
        return gfl_device_limits_query(&driver_ops, ordinal, out);

    gfl_sm_limits l;
    int rc = gfl_device_limits_query(&driver_ops, ordinal, &l);
    if (rc == GPUFL_ESTATE) {
        /* The driver may be initialised later: leave the entry to retry. */
        atomic_store_explicit(&cache[ordinal].state, ENTRY_EMPTY, memory_order_relaxed);
        return rc;
    }
    cache[ordinal].rc = rc;
    if (rc == 0)
        cache[ordinal].limits = l;
    atomic_store_explicit(&cache[ordinal].state, ENTRY_READY, memory_order_release);
    if (rc == 0)
        *out = l;
    return rc;
}
