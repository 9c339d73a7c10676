/*
 * Turning CUPTI activity records into gpufl events, on the plugin's worker
 * thread: kernels, copies (MEMCPY and peer MEMCPY2), memsets,
 * synchronization, memory allocation and release, and the external
 * correlation records that frameworks' ids arrive in.
 *
 * Each device record is joined, by correlation id, with what the launching
 * thread noted at the API call (launch_table.h) and with the external id
 * recorded for that call. In CUDA 13 a thread's records share its buffer,
 * in call order: an external correlation record comes before the device
 * records of its call, so a record-by-record pass joins them with no
 * waiting. Records that cannot be real (no start, ending before they
 * start, far outside the session) are dropped and counted, not written.
 */
#ifndef GPUFL_BACKEND_CUPTI_ACTIVITY_RECORDS_H
#define GPUFL_BACKEND_CUPTI_ACTIVITY_RECORDS_H

#include <stdint.h>

#include <cupti.h>

#include "backend/cupti/launch_table.h"
#include "core/plugin_api.h"

typedef struct gfl_record_stats {
    uint64_t kernels, copies, memsets, syncs, allocs, frees, externals, other;
    uint64_t unattributed;   /* device records whose launch entry was gone */
    uint64_t out_of_session; /* dropped: timestamps far outside the session */
    uint64_t malformed;      /* dropped: start 0 or end before start */
} gfl_record_stats;

typedef struct gfl_records gfl_records;

gfl_records *gfl_records_new(const gpufl_plugin_host *host, gfl_launch_table *launches);
void gfl_records_free(gfl_records *r);

/* Translates and pushes every record of one completed buffer. */
void gfl_records_process_buffer(gfl_records *r, uint8_t *data, size_t valid,
                                CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **));

const gfl_record_stats *gfl_records_stats(const gfl_records *r);

#endif /* GPUFL_BACKEND_CUPTI_ACTIVITY_RECORDS_H */
