/*
 * System metric windows: gpufl_system_start(name) ... gpufl_system_stop(name),
 * counted per name. The sampler samples while any window is open (or a
 * scope is, or sampling is continuous). Any thread; takes a mutex, so it is
 * for phase boundaries, not inner loops.
 */
#ifndef GPUFL_SESSION_SYSTEM_WINDOW_H
#define GPUFL_SESSION_SYSTEM_WINDOW_H

#include <stdint.h>

/* Windows open now, all names together. */
uint32_t gpufl__system_windows_open(void);

/* Closes every window (a new session starts with none). */
void gpufl__system_windows_reset(void);

#endif /* GPUFL_SESSION_SYSTEM_WINDOW_H */
