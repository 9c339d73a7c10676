/*
 * What a kernel record needs beyond copying fields: its demangled name
 * (demangled once per distinct kernel per session) and its theoretical
 * occupancy with the limiting resource, from the device's limits (asked of
 * the driver once per device) and the launch's resources. Worker thread
 * only.
 */
#ifndef GPUFL_BACKEND_CUPTI_KERNEL_DETAILS_H
#define GPUFL_BACKEND_CUPTI_KERNEL_DETAILS_H

#include <cupti.h>

#include "core/plugin_api.h"

typedef struct gfl_kernel_details gfl_kernel_details;

gfl_kernel_details *gfl_kernel_details_new(const gpufl_plugin_host *host);
void gfl_kernel_details_free(gfl_kernel_details *d);

/* Sets name, mangled_name, occupancy_x10000 and limiter of p from k. */
void gfl_kernel_details_fill(gfl_kernel_details *d, const CUpti_ActivityKernel10 *k, gfl_kernel_payload *p);

#endif /* GPUFL_BACKEND_CUPTI_KERNEL_DETAILS_H */
