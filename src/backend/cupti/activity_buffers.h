/*
 * Activity buffers: CUPTI asks for one whenever a thread's buffer fills (in
 * CUDA 13 every thread that makes CUDA calls has its own, and requests come
 * concurrently), and hands it back full. We allocate per request, up to a
 * bound; past it CUPTI gets no buffer and drops records, which it counts
 * and we report. Completed buffers queue, in the order CUPTI returned them,
 * for the plugin's worker thread: nothing is parsed on CUPTI's thread or the
 * program's.
 */
#ifndef GPUFL_BACKEND_CUPTI_ACTIVITY_BUFFERS_H
#define GPUFL_BACKEND_CUPTI_ACTIVITY_BUFFERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#define GFL_ACTIVITY_BUFFER_BYTES (2u << 20)
#define GFL_ACTIVITY_BUFFERS_MAX 128 /* 256 MiB outstanding at most */

typedef struct gfl_activity_buffer {
    struct gfl_activity_buffer *next;
    uint8_t *data;
    size_t valid; /* bytes of records */
    CUcontext context;
    uint32_t stream;
} gfl_activity_buffer;

void gfl_buffers_reset(void);

/* The callbacks given to cuptiActivityRegisterCallbacks. */
void CUPTIAPI gfl_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI gfl_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);

/* The worker: waits up to timeout_ns for completed buffers and takes them
 * all, oldest first (NULL on timeout or when woken). */
gfl_activity_buffer *gfl_buffers_take(uint64_t timeout_ns);
/* Wakes a waiting gfl_buffers_take. */
void gfl_buffers_wake(void);
/* Gives a processed buffer's memory back. */
void gfl_buffer_free(gfl_activity_buffer *b);

/* Requests refused because the bound was reached. */
uint64_t gfl_buffers_refused(void);
/* Most bytes outstanding at once. */
uint64_t gfl_buffers_peak_bytes(void);

#endif /* GPUFL_BACKEND_CUPTI_ACTIVITY_BUFFERS_H */
