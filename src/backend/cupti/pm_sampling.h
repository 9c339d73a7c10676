/*
 * PM sampling on one device through CUPTI (cupti_pmsampling.h), the state
 * machine behind include/gpufl/pm_sampling.h: enable, configure, start,
 * stop, decode, disable, each checked against the state so that misuse
 * gets its own gpufl_pm_status instead of whatever CUPTI makes of it.
 * The plugin exports these as its gpufl_pm_entry table (core/pm_api.h);
 * the recorder source (pm_source.c) uses them directly.
 *
 * Threads: one thread at a time per handle. Handles of different devices
 * are independent; a second enabled handle on one device is refused
 * (GPUFL_PM_E_ALREADY_ENABLED): the device has one PM sampler.
 * Rates: decode() evaluates every metric of every new sample (a few us
 * each); at 10 us intervals that is one decode of ~10000 samples every
 * 100 ms.
 */
#ifndef GPUFL_BACKEND_CUPTI_PM_SAMPLING_H
#define GPUFL_BACKEND_CUPTI_PM_SAMPLING_H

#include "core/pm_api.h"

/* The table of the plugin's gpufl_pm_entry. */
const gpufl_pm_ops *gfl_pm_sampling_ops(void);

/* CUPTI's error as a gpufl_pm_status. */
int gfl_pm_status_of(int cupti_result);

#endif /* GPUFL_BACKEND_CUPTI_PM_SAMPLING_H */
