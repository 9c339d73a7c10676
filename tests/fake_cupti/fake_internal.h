/*
 * What the fake libcupti's files share (fake_cupti.c, fake_pc_sampling.c):
 * not part of its control API (fake_cupti.h).
 */
#ifndef GPUFL_TESTS_FAKE_INTERNAL_H
#define GPUFL_TESTS_FAKE_INTERNAL_H

#include <cupti.h>

/* Delivers one callback to the subscriber, if it enabled it. */
void fake__deliver(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data);

#endif /* GPUFL_TESTS_FAKE_INTERNAL_H */
