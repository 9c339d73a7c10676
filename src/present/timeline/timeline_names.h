/*
 * The names of the timeline's slices (timeline.h), the same in every
 * output: one of a fixed set ("memcpy HtoD", "sync stream", "graph
 * launch", ...), or a string of the trace (kernels, scopes, NVTX ranges),
 * which a launching call shows as "launch <kernel name>".
 */
#ifndef GPUFL_PRESENT_TIMELINE_TIMELINE_NAMES_H
#define GPUFL_PRESENT_TIMELINE_TIMELINE_NAMES_H

#include <stdint.h>

#include "present/timeline/timeline_walk.h"

#define GPUFL__XNAME_STRING UINT32_MAX
typedef struct gpufl__xname {
    uint32_t fixed;  /* index for gpufl__xname_fixed, or GPUFL__XNAME_STRING */
    uint32_t string; /* string id when not fixed */
    uint8_t launch;  /* prefix "launch " */
} gpufl__xname;

#define GPUFL__XNAME_LAUNCH "launch "
void gpufl__xname_of(const gpufl__rows *x, const gpufl__tl_slice *s, gpufl__xname *n);
const char *gpufl__xname_fixed(uint32_t fixed);
uint32_t gpufl__xname_fixed_count(void);

#endif /* GPUFL_PRESENT_TIMELINE_TIMELINE_NAMES_H */
