/*
 * Whether a session is recording, and its generation (bumped by every
 * gpufl_init, so a thread can tell its scope stack belongs to an earlier
 * session): the lifecycle state that producers' fast paths read. The
 * session (session/session.c) is the only writer; it lives here, at the
 * bottom, so that the producers below the session can read it.
 */
#ifndef GPUFL_CORE_RECORDING_H
#define GPUFL_CORE_RECORDING_H

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

#endif /* GPUFL_CORE_RECORDING_H */
