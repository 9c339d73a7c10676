/*
 * The fake libcupti's PM sampling (cupti_pmsampling.h), with the real
 * calls' checks: the profiler initialised before enable, one PM sampler per
 * device, a PM config image before start, start before stop, counter data
 * initialised before decode. The GPU's side is fake_cupti_pm_samples(): a
 * test says how many samples the GPU took and at what load; they wait in
 * a hardware buffer of the configured size until a decode moves them into
 * the counter data image (fake_profiler.h's layout), where the host API
 * evaluates them.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CUPTI_LIB /* cupti*.h: the declarations below are exported */
#include <cupti.h>
#include <cupti_pmsampling.h>

#include "fake_cupti.h"
#include "fake_internal.h"
#include "fake_profiler.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 8
#define MAX_METRICS 64
#define RAW_SAMPLE_BYTES 64 /* a raw record's header in the hardware buffer; 8 more bytes a metric */
#define SYSCLK_GHZ 1.755    /* the sys clock when the interval counts cycles */

typedef struct pending {
    uint64_t start, end;
    double load;
} pending;

struct CUpti_PmSampling_Object {
    int device;
    bool configured, started;
    uint32_t n;
    char names[MAX_METRICS][FAKE_NAME_LEN];
    size_t capacity; /* raw samples the hardware buffer holds */
    uint64_t interval_ns;
    CUpti_PmSampling_HardwareBuffer_AppendMode append;
    pending *buffer; /* a ring of capacity */
    size_t head, count;
    bool overflow;
    uint64_t last_end;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_PmSampling_Object *enabled[MAX_DEVICES];
static CUptiResult refusal = CUPTI_SUCCESS;
static uint64_t image_limit; /* values (samples x metrics) a decode takes; 0 any */

static _Atomic bool in_activity_clock; /* atomic: read under lock too */

/* Whether PM timestamps follow the activity records' clock (the client's
 * timestamp callback), as CUPTI 13.0 did on an H100, instead of the GPU's
 * realtime-like timer. */
EXPORT void fake_cupti_pm_activity_clock(bool on) { in_activity_clock = on; }

EXPORT uint64_t fake_cupti_gpu_now(void)
{
    if (in_activity_clock)
        return fake__timestamp();
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

EXPORT void fake_cupti_pm_refuse(CUptiResult rc)
{
    pthread_mutex_lock(&lock);
    refusal = rc;
    pthread_mutex_unlock(&lock);
}

EXPORT void fake_cupti_pm_image_limit(uint64_t values)
{
    pthread_mutex_lock(&lock);
    image_limit = values;
    pthread_mutex_unlock(&lock);
}

EXPORT bool fake_cupti_pm_started(int device)
{
    pthread_mutex_lock(&lock);
    CUpti_PmSampling_Object *o = device >= 0 && device < MAX_DEVICES ? enabled[device] : NULL;
    bool started = o && o->started;
    pthread_mutex_unlock(&lock);
    return started;
}

EXPORT uint32_t fake_cupti_pm_samples(int device, uint32_t n, double load)
{
    uint32_t kept = 0;
    pthread_mutex_lock(&lock);
    CUpti_PmSampling_Object *o = device >= 0 && device < MAX_DEVICES ? enabled[device] : NULL;
    for (uint32_t i = 0; o && o->started && i < n; i++) {
        pending s = {o->last_end, o->last_end + o->interval_ns, load};
        o->last_end = s.end;
        if (o->count == o->capacity) {
            if (o->append == CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST) {
                o->overflow = true;
                continue;
            }
            o->head = (o->head + 1) % o->capacity; /* KEEP_LATEST: the oldest goes */
            o->count--;
        }
        o->buffer[(o->head + o->count) % o->capacity] = s;
        o->count++;
        kept++;
    }
    pthread_mutex_unlock(&lock);
    return kept;
}

EXPORT CUptiResult CUPTIAPI cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params *p)
{
    if (!p || p->structSize == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!fake_profiler_initialized())
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (p->deviceIndex >= (size_t)fake_profiler_device_count())
        return CUPTI_ERROR_INVALID_DEVICE;
    if (!p->pCounterAvailabilityImage) {
        p->counterAvailabilityImageSize = 32;
        return CUPTI_SUCCESS;
    }
    if (p->counterAvailabilityImageSize < 32)
        return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
    memset(p->pCounterAvailabilityImage, 0xA5, 32);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params *p)
{
    if (!p || p->structSize == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!fake_profiler_initialized())
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (p->deviceIndex >= (size_t)fake_profiler_device_count() || p->deviceIndex >= MAX_DEVICES)
        return CUPTI_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    CUptiResult rc = refusal;
    if (rc == CUPTI_SUCCESS && enabled[p->deviceIndex])
        rc = CUPTI_ERROR_INVALID_OPERATION;
    CUpti_PmSampling_Object *o = rc == CUPTI_SUCCESS ? calloc(1, sizeof *o) : NULL;
    if (rc == CUPTI_SUCCESS && !o)
        rc = CUPTI_ERROR_OUT_OF_MEMORY;
    if (o) {
        o->device = (int)p->deviceIndex;
        enabled[p->deviceIndex] = o;
        p->pPmSamplingObject = o;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* The object, if it is an enabled one; under lock. */
static CUpti_PmSampling_Object *live(CUpti_PmSampling_Object *o)
{
    for (int i = 0; o && i < MAX_DEVICES; i++)
        if (enabled[i] == o)
            return o;
    return NULL;
}

EXPORT CUptiResult CUPTIAPI cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params *p)
{
    if (!p)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUpti_PmSampling_Object *o = live(p->pPmSamplingObject);
    if (o) {
        enabled[o->device] = NULL;
        free(o->buffer);
        free(o);
    }
    pthread_mutex_unlock(&lock);
    return o ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult CUPTIAPI cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params *p)
{
    if (!p || !p->pConfig || p->configSize < sizeof(fake_config_image))
        return CUPTI_ERROR_INVALID_PARAMETER;
    fake_config_image head;
    memcpy(&head, p->pConfig, sizeof head);
    if (head.magic != FAKE_CONFIG_MAGIC || head.profiler_type != 1 /* CUPTI_PROFILER_TYPE_PM_SAMPLING */ ||
        head.n > MAX_METRICS || p->configSize < sizeof head + (size_t)head.n * FAKE_NAME_LEN)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->samplingInterval == 0 || p->triggerMode >= CUPTI_PM_SAMPLING_TRIGGER_MODE_COUNT)
        return CUPTI_ERROR_INVALID_PARAMETER;
    size_t capacity = p->hardwareBufferSize / (RAW_SAMPLE_BYTES + 8 * (size_t)head.n);
    if (capacity == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    /* The fake's buffer is allocated for real: cap it (a test never fills more). */
    if (capacity > (1u << 20))
        capacity = 1u << 20;
    pending *buffer = malloc(capacity * sizeof *buffer);
    if (!buffer)
        return CUPTI_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    CUpti_PmSampling_Object *o = live(p->pPmSamplingObject);
    CUptiResult rc = !o ? CUPTI_ERROR_INVALID_PARAMETER : o->started ? CUPTI_ERROR_INVALID_OPERATION : CUPTI_SUCCESS;
    if (rc == CUPTI_SUCCESS) {
        o->n = head.n;
        memcpy(o->names, p->pConfig + sizeof head, (size_t)head.n * FAKE_NAME_LEN);
        free(o->buffer);
        o->buffer = buffer;
        buffer = NULL;
        o->capacity = capacity;
        o->head = o->count = 0;
        o->overflow = false;
        o->append = p->hwBufferAppendMode;
        o->interval_ns = p->triggerMode == CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL
                             ? p->samplingInterval
                             : (uint64_t)((double)p->samplingInterval / SYSCLK_GHZ);
        if (o->interval_ns == 0)
            o->interval_ns = 1;
        o->configured = true;
    }
    pthread_mutex_unlock(&lock);
    free(buffer);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiPmSamplingStart(CUpti_PmSampling_Start_Params *p)
{
    if (!p)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUpti_PmSampling_Object *o = live(p->pPmSamplingObject);
    CUptiResult rc = !o                               ? CUPTI_ERROR_INVALID_PARAMETER
                     : (!o->configured || o->started) ? CUPTI_ERROR_INVALID_OPERATION
                                                      : CUPTI_SUCCESS;
    if (rc == CUPTI_SUCCESS) {
        o->started = true;
        o->last_end = fake_cupti_gpu_now();
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params *p)
{
    if (!p)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUpti_PmSampling_Object *o = live(p->pPmSamplingObject);
    CUptiResult rc = !o ? CUPTI_ERROR_INVALID_PARAMETER : !o->started ? CUPTI_ERROR_INVALID_OPERATION : CUPTI_SUCCESS;
    if (rc == CUPTI_SUCCESS)
        o->started = false;
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params *p)
{
    if (!p || !p->pMetricNames || p->numMetrics == 0 || p->numMetrics > MAX_METRICS || p->maxSamples == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUpti_PmSampling_Object *o = live(p->pPmSamplingObject);
    pthread_mutex_unlock(&lock);
    if (!o)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; i++)
        if (fake_metric_full(p->pMetricNames[i]) < 0)
            return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->counterDataSize = fake_data_size((uint32_t)p->numMetrics, p->maxSamples);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiPmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params *p)
{
    if (!p || !p->pCounterData)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUpti_PmSampling_Object *o = live(p->pPmSamplingObject);
    CUptiResult rc = !o               ? CUPTI_ERROR_INVALID_PARAMETER
                     : !o->configured ? CUPTI_ERROR_INVALID_OPERATION
                                      : CUPTI_SUCCESS;
    if (rc == CUPTI_SUCCESS) {
        size_t fixed = sizeof(fake_counter_data) + (size_t)o->n * FAKE_NAME_LEN;
        if (p->counterDataSize < fixed + fake_sample_size(o->n)) {
            rc = CUPTI_ERROR_INVALID_PARAMETER;
        } else {
            fake_counter_data head = {FAKE_DATA_MAGIC, o->n,
                                      (uint32_t)((p->counterDataSize - fixed) / fake_sample_size(o->n)), 0};
            memset(p->pCounterData, 0, p->counterDataSize);
            memcpy(p->pCounterData, &head, sizeof head);
            memcpy(p->pCounterData + sizeof head, o->names, (size_t)o->n * FAKE_NAME_LEN);
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static bool read_head(const uint8_t *image, size_t size, fake_counter_data *head)
{
    if (!image || size < sizeof *head)
        return false;
    memcpy(head, image, sizeof *head);
    return head->magic == FAKE_DATA_MAGIC && size >= fake_data_size(head->n, head->max_samples);
}

EXPORT CUptiResult CUPTIAPI cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params *p)
{
    fake_counter_data head;
    if (!p || !read_head(p->pCounterDataImage, p->counterDataImageSize, &head))
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUpti_PmSampling_Object *o = live(p->pPmSamplingObject);
    CUptiResult rc = !o                                                                 ? CUPTI_ERROR_INVALID_PARAMETER
                     : (!o->configured || head.n != o->n)                               ? CUPTI_ERROR_INVALID_OPERATION
                     : image_limit && (uint64_t)head.n * head.max_samples > image_limit ? CUPTI_ERROR_OUT_OF_MEMORY
                                                                                        : CUPTI_SUCCESS;
    if (rc == CUPTI_SUCCESS) {
        uint8_t *samples = p->pCounterDataImage + sizeof head + (size_t)head.n * FAKE_NAME_LEN;
        while (o->count && head.populated < head.max_samples) {
            pending s = o->buffer[o->head];
            o->head = (o->head + 1) % o->capacity;
            o->count--;
            uint8_t *at = samples + (size_t)head.populated * fake_sample_size(head.n);
            fake_sample_head sh = {s.start, s.end};
            memcpy(at, &sh, sizeof sh);
            for (uint32_t j = 0; j < head.n; j++) {
                double v = s.load * fake_metric_full(o->names[j]);
                memcpy(at + sizeof sh + j * sizeof(double), &v, sizeof v);
            }
            head.populated++;
        }
        memcpy(p->pCounterDataImage, &head, sizeof head);
        p->decodeStopReason = o->count ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL
                                       : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
        /* what did not fit is gone: on an H100 the decode after a full
         * image found the hardware buffer empty */
        o->head = (o->head + o->count) % o->capacity;
        o->count = 0;
        p->overflow = o->overflow;
        o->overflow = false;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params *p)
{
    fake_counter_data head;
    if (!p || !read_head(p->pCounterDataImage, p->counterDataImageSize, &head))
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->numTotalSamples = head.max_samples;
    p->numPopulatedSamples = head.populated;
    p->numCompletedSamples = head.populated;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params *p)
{
    fake_counter_data head;
    if (!p || !read_head(p->pCounterDataImage, p->counterDataImageSize, &head) || p->sampleIndex >= head.populated)
        return CUPTI_ERROR_INVALID_PARAMETER;
    fake_sample_head sh;
    memcpy(&sh,
           p->pCounterDataImage + sizeof head + (size_t)head.n * FAKE_NAME_LEN +
               p->sampleIndex * fake_sample_size(head.n),
           sizeof sh);
    p->startTimestamp = sh.start;
    p->endTimestamp = sh.end;
    return CUPTI_SUCCESS;
}
