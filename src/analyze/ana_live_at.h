/*
 * The allocations live on a device at a moment, from the memory rows
 * replayed up to it (frees matched by address, a framework block apart
 * from the driver allocation at the same address).
 */
#ifndef GPUFL_ANALYZE_ANA_LIVE_AT_H
#define GPUFL_ANALYZE_ANA_LIVE_AT_H

#include <stdbool.h>
#include <stdint.h>

#include "read/rows.h"

/* *live_out: one flag per memory row, 1 for an allocation live on device
 * at at_ns (rows at at_ns included); host memory (pinned, pageable) left
 * out with device_memory_only. The caller frees it. 0 or GPUFL_ENOMEM. */
int gpufl__ana_live_at(const gpufl__rows *a, uint32_t device, uint64_t at_ns, bool device_memory_only,
                       uint8_t **live_out) __attribute__((warn_unused_result));

#endif /* GPUFL_ANALYZE_ANA_LIVE_AT_H */
