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

/* What the outputs print for the kind of a slice: a table the timeline
 * holds (GPUFL__TBL_KERNEL .. _NVTX) or GPUFL__TL_API, a launching call. */
typedef struct gpufl__tl_kind_names {
    const char *category; /* Chrome JSON "cat": "kernel", "memcpy", ... */
    int page;             /* the HTML page script's kind number ("nk"), a contract with
                             report.js; -1: the page draws none */
    int page_instant;     /* the same for an instant (an NVTX mark); -1 none */
} gpufl__tl_kind_names;

/* Never NULL: an unknown kind has category "" and no page kinds. */
const gpufl__tl_kind_names *gpufl__tl_src_names(unsigned src);

#define GPUFL__XNAME_LAUNCH "launch "
void gpufl__xname_of(const gpufl__rows *x, const gpufl__tl_slice *s, gpufl__xname *n);
const char *gpufl__xname_fixed(uint32_t fixed);
uint32_t gpufl__xname_fixed_count(void);

#endif /* GPUFL_PRESENT_TIMELINE_TIMELINE_NAMES_H */
