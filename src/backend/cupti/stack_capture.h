/*
 * CPU call stacks at launches, copies and syncs (option enable_stack_trace).
 *
 * The CUPTI plugin's API-enter callback calls gpufl__stack_capture() on the
 * program's own thread at every launch, copy and sync, so capture is a hot
 * path: up to about a million calls a second across threads, each within
 * ~1 µs for a typical 10-40 frame stack, with no lock, no allocation and no
 * system call once a stack has been seen. A training loop has a few hundred
 * to a few thousand distinct stacks; each is defined once per session by
 * GFL_EV_STACK events (module + offset per frame) and referenced by id from
 * then on. Symbols are resolved when reading (src/read/symbolize.h), never
 * here.
 *
 * No CUDA or CUPTI header is needed: the module is built as a static library
 * (gpufl_stack) that the plugin and the tests link.
 *
 * Threads: gpufl__stack_capture() and gpufl__stack_stats_get() from any thread, at
 * any time, concurrently. gpufl__stack_init() and gpufl__stack_shutdown() from the
 * plugin's start() and stop(), never two at once.
 */
#ifndef GPUFL_BACKEND_CUPTI_STACK_CAPTURE_H
#define GPUFL_BACKEND_CUPTI_STACK_CAPTURE_H

#include <stdint.h>

#include "core/plugin_api.h"

#define GFL_STACK_MAX_FRAMES 64               /* kept per stack; deeper ones are marked truncated */
#define GFL_STACK_MAX_STACKS ((1u << 24) - 1) /* ids are 24 bits inside the table */

/* Prepares capture for one session: a table of room for max_stacks distinct
 * stacks (1..GFL_STACK_MAX_STACKS; about 32 bytes each) and the host whose
 * push() and intern() define them. Stack ids start again at 1.
 * Returns 0; GPUFL_EINVAL for a bad argument or a host without push, intern
 * or now_ns; GPUFL_ENOMEM; GPUFL_EUNSUPPORTED when built without libunwind.
 * On failure capture stays off (gpufl__stack_capture() returns 0). */
__attribute__((warn_unused_result)) int gpufl__stack_init(const gpufl_plugin_host *host, uint32_t max_stacks);

/* The id of the calling thread's current stack, from the caller of this
 * function outwards, leaving out the innermost frames that are inside
 * gpufl, CUPTI or the CUDA driver. The first capture of a stack defines it
 * (GFL_EV_STACK events through host->push); a definition that does not fit
 * in the ring is finished by a later capture of the same stack.
 * Returns 0 when not initialised, when nothing could be unwound, or when the
 * stack is new and the table already holds max_stacks stacks (counted). */
uint32_t gpufl__stack_capture(void);

/* Stops capture (gpufl__stack_capture() returns 0 from now on) and logs the
 * counters through host->log. The table is kept until the next init frees
 * it, so a capture still running on another thread never touches freed
 * memory. */
void gpufl__stack_shutdown(void);

/* Counters of the current (or last) session. */
typedef struct gfl_stack_stats {
    uint64_t captures;       /* calls of gpufl__stack_capture() while initialised */
    uint64_t failures;       /* of which returned 0 (table_full included) */
    uint64_t table_full;     /* of the failures: a new stack, but max_stacks were already known */
    uint64_t unique;         /* distinct stacks given an id */
    uint64_t defined;        /* of which whose definition was pushed whole */
    uint64_t define_retries; /* definitions cut short by a full ring, left for a later capture */
} gfl_stack_stats;

void gpufl__stack_stats_get(gfl_stack_stats *out);

#endif /* GPUFL_BACKEND_CUPTI_STACK_CAPTURE_H */
