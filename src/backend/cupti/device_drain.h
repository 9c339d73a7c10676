/*
 * Waiting for the device work already queued, before the CUPTI plugin
 * lets go for a trace window's end: a kernel still running when the
 * activity kinds are disabled would have its record cut off (a forced
 * flush hands back incomplete records, which the core drops as broken),
 * so the window would lose the kernels its last step launched.
 *
 * Through the driver the program already loaded (dlopen RTLD_NOLOAD): no
 * link-time dependency, and nothing to do in a process that never used
 * CUDA. The thread that pauses (the trace windows' own, or the program's
 * thread at the end of a step) calls it, with our API hooks already off.
 */
#ifndef GPUFL_BACKEND_CUPTI_DEVICE_DRAIN_H
#define GPUFL_BACKEND_CUPTI_DEVICE_DRAIN_H

/* Synchronizes every active primary context and the calling thread's
 * current one. Never fails: a context that cannot be synchronized is
 * skipped (its last records may then be cut off). Blocks until the GPU
 * work queued before it has finished. */
void gfl_device_drain(void);

#endif /* GPUFL_BACKEND_CUPTI_DEVICE_DRAIN_H */
