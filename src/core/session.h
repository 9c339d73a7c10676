/*
 * Session lifecycle state that the producers' fast paths read: whether a
 * session is recording, and its generation (bumped by every gpufl_init, so a
 * thread can tell its scope stack belongs to an earlier session).
 */
#ifndef GPUFL_CORE_SESSION_H
#define GPUFL_CORE_SESSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

extern _Atomic bool gpufl__recording_flag;
extern _Atomic uint32_t gpufl__session_gen;

static inline bool gpufl__is_recording(void)
{
    /* acquire: pairs with the release in gpufl_init, so a producer that sees
     * true also sees the new generation and ring settings */
    return atomic_load_explicit(&gpufl__recording_flag, memory_order_acquire);
}

static inline uint32_t gpufl__session_generation(void)
{
    return atomic_load_explicit(&gpufl__session_gen, memory_order_relaxed);
}

/* Has the running session's collector write out everything recorded so
 * far (gpufl_generate_report reads the files); nothing without a session.
 * Takes the lifecycle lock: not for producer paths. */
void gpufl__session_flush(void);

#endif /* GPUFL_CORE_SESSION_H */
