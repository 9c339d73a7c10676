/*
 * What the fake libcupti's files share (fake_cupti.c, fake_pc_sampling.c):
 * not part of its control API (fake_cupti.h).
 */
#ifndef GPUFL_TESTS_FAKE_INTERNAL_H
#define GPUFL_TESTS_FAKE_INTERNAL_H

#include <cupti.h>

/* Delivers one callback to the subscriber, if it enabled it. */
void fake__deliver(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data);

/* A kernel of duration_ns ran (fake_range_profiler.c counts it into the
 * open range). */
void fake__rp_kernel(uint64_t duration_ns);

/* Now in the activity records' clock: the client's timestamp callback
 * when it registered one, else CLOCK_REALTIME. */
uint64_t fake__timestamp(void);

#endif /* GPUFL_TESTS_FAKE_INTERNAL_H */
