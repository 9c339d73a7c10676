/*
 * Another CUPTI client, as torch.profiler's is inside a program: a library
 * whose references to CUPTI are left for the loader to bind (not linked to
 * any libcupti), so that in test_cupti_guard the guard `gpufl run`
 * preloads gets them first, as it gets PyTorch's.
 */
#include <cupti.h>
#include <stdint.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

static CUpti_SubscriberHandle handle;

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)userdata, (void)domain, (void)cbid, (void)data;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 64 * 1024;
    *buffer = malloc(*size);
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx, (void)stream, (void)size, (void)valid;
    free(buffer);
}

/* The answers are kept in a volatile before they are returned, so that no
 * call here is a tail call: the guard names its caller by return address. */

/* cuptiSubscribe's answer, as a number. */
EXPORT int other_client_subscribe(void)
{
    volatile CUptiResult rc = cuptiSubscribe(&handle, on_callback, NULL);
    return (int)rc;
}

/* The same through cuptiSubscribe_v2, under the name "other". */
EXPORT int other_client_subscribe_v2(void)
{
    CUpti_SubscriberParams params = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE, .subscriberName = "other"};
    volatile CUptiResult rc = cuptiSubscribe_v2(&handle, on_callback, NULL, &params);
    return (int)rc;
}

EXPORT CUpti_SubscriberHandle other_client_handle(void) { return handle; }

/* Registers this client's own activity buffers. */
EXPORT int other_client_take_buffers(void)
{
    volatile CUptiResult rc = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    return (int)rc;
}
