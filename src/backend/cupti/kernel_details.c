/*
 * Kernel names and occupancy (see kernel_details.h).
 */
#include "backend/cupti/kernel_details.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cupti/demangle.h"
#include "backend/cupti/device_limits.h"
#include "backend/cupti/occupancy.h"
#include "gpufl/gpufl.h"

typedef struct device_slot {
    bool asked, known;
    gfl_sm_limits limits;
} device_slot;

struct gfl_kernel_details {
    const gpufl_plugin_host *host;
    gfl_name_cache names;
    device_slot devices[GFL_DEVICE_LIMITS_MAX_DEVICES];
};

gfl_kernel_details *gfl_kernel_details_new(const gpufl_plugin_host *host)
{
    gfl_kernel_details *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->host = host;
    gpufl__name_cache_init(&d->names, host->intern, GFL_NAME_CACHE_MAX_ENTRIES);
    return d;
}

void gfl_kernel_details_free(gfl_kernel_details *d)
{
    if (!d)
        return;
    gpufl__name_cache_free(&d->names);
    free(d);
}

/* The device's limits, asked of the driver the first time its kernels
 * appear (the worker may call the driver: it is not inside a callback). */
static const gfl_sm_limits *limits_of(gfl_kernel_details *d, uint32_t device)
{
    if (device >= GFL_DEVICE_LIMITS_MAX_DEVICES)
        return NULL;
    device_slot *s = &d->devices[device];
    if (!s->asked) {
        int rc = gfl_device_limits_get((int)device, &s->limits);
        /* a driver not initialised yet may answer later: ask again then */
        s->asked = rc != GPUFL_ESTATE;
        s->known = rc == 0;
        if (s->asked && !s->known)
            d->host->log(GFL_LOG_WARN, "the CUDA driver did not give this device's limits: kernels "
                                       "are recorded without theoretical occupancy");
    }
    return s->known ? &s->limits : NULL;
}

void gfl_kernel_details_fill(gfl_kernel_details *d, const CUpti_ActivityKernel10 *k, gfl_kernel_payload *p)
{
    if (k->name) {
        uint32_t mangled = d->host->intern(k->name, strlen(k->name));
        uint32_t readable = gpufl__name_cache_demangled(&d->names, mangled, k->name);
        p->name = readable;
        p->mangled_name = readable != mangled ? mangled : 0;
    }
    const gfl_sm_limits *sm = limits_of(d, k->deviceId);
    if (!sm)
        return;
    gfl_kernel_resources res = {
        .threads_per_block = (uint32_t)k->blockX * (uint32_t)k->blockY * (uint32_t)k->blockZ,
        .regs_per_thread = k->registersPerThread,
        .static_smem = (uint32_t)k->staticSharedMemory,
        .dynamic_smem = (uint32_t)k->dynamicSharedMemory,
        .smem_carveout = k->sharedMemoryExecuted,
    };
    gfl_occupancy occ;
    if (gpufl__occupancy_compute(sm, &res, &occ) == 0) {
        p->occupancy_x10000 = occ.occupancy_x10000;
        p->limiter = occ.limiter;
    }
}
