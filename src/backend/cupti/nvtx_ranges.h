/*
 * NVTX ranges and marks, seen through CUPTI's NVTX callbacks on the thread
 * that makes the NVTX call (which needs NVTX_INJECTION64_PATH to name
 * libcupti, or our injection library that forwards to it).
 *
 * Push/pop ranges nest per thread: a thread-local stack holds the open ones,
 * so that a launch can be attributed to its innermost range at the moment of
 * the call (gfl_nvtx_current), and the range is written when it is popped.
 * Start/end ranges may cross threads and live in a small shared table until
 * they end. Everything here runs on the program's threads: no locks, no
 * allocation after init (beyond the thread-local block the loader makes for
 * each new thread).
 */
#ifndef GPUFL_BACKEND_CUPTI_NVTX_RANGES_H
#define GPUFL_BACKEND_CUPTI_NVTX_RANGES_H

#include <stdint.h>

#include <cupti.h>

#include "core/plugin_api.h"

int gfl_nvtx_start(const gpufl_plugin_host *host);
void gfl_nvtx_stop(void);

/* The CUPTI_CB_DOMAIN_NVTX callback. */
void gfl_nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *data);

/* Name (string id) of the calling thread's innermost open push/pop range in
 * this session, 0 = none. */
uint32_t gfl_nvtx_current(void);

/* Ranges whose push was never matched by a pop on the same thread, and other
 * NVTX calls that could not be recorded (table full, ring full). */
uint64_t gfl_nvtx_unmatched(void);

#endif /* GPUFL_BACKEND_CUPTI_NVTX_RANGES_H */
