/*
 * The fake libcupti's range profiler (cupti_range_profiler.h), with the
 * checks the real one makes: the profiler initialised and a context given
 * before Enable, one object per context, the counter data image of the
 * size GetCounterDataSize gave and initialised before SetConfig, a config
 * of the range profiler's type, Start before Push, ranges at the
 * configured nesting levels only, maxRangesPerPass ranges a pass (the rest
 * dropped and counted), Stop saying whether every pass of the config was
 * submitted, Decode after Stop. Values: each kernel launched while a range
 * is open adds its duration to it (fake__rp_kernel), and the decoded
 * range's metric is the metric's full value x ns / 1e6. Range names are
 * kept beside the image (the fake's image layout is fake_profiler.h's).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUPTI_LIB /* cupti*.h: the declarations below are exported */
#include <cupti.h>
#include <cupti_range_profiler.h>

#include "backend/cupti/profiler_host_abi.h"
#include "fake_cupti.h"
#include "fake_internal.h"
#include "fake_profiler.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_RANGES 4096
#define MAX_METRICS 64

typedef struct fake_range {
    char name[64];
    double ns;
} fake_range;

struct CUpti_RangeProfiler_Object {
    CUcontext ctx;
    uint32_t n_metrics;
    char metrics[MAX_METRICS][FAKE_NAME_LEN];
    uint8_t *image;
    size_t image_size;
    bool configured, started, stopped_since_decode;
    uint32_t passes, pass, max_ranges, levels, min_level;
    uint32_t depth;
    int open; /* index into ranges of the range being recorded, -1 none */
    fake_range ranges[MAX_RANGES];
    uint32_t n_ranges;
    uint64_t dropped;
    /* decoded, for GetRangeInfo */
    char decoded[MAX_RANGES][64];
    uint32_t n_decoded;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_RangeProfiler_Object *obj; /* the fake has one context's */
static CUptiResult refuse_rc = CUPTI_SUCCESS;
static fake_cupti_rp_state state;

EXPORT void fake_cupti_rp_refuse(CUptiResult rc)
{
    pthread_mutex_lock(&lock);
    refuse_rc = rc;
    pthread_mutex_unlock(&lock);
}

EXPORT void fake_cupti_rp_state_get(fake_cupti_rp_state *out)
{
    pthread_mutex_lock(&lock);
    *out = state;
    out->enabled = obj != NULL;
    pthread_mutex_unlock(&lock);
}

void fake__rp_kernel(uint64_t duration_ns)
{
    pthread_mutex_lock(&lock);
    if (obj && obj->started && obj->open >= 0)
        obj->ranges[obj->open].ns += (double)duration_ns;
    pthread_mutex_unlock(&lock);
}

static bool ours(const CUpti_RangeProfiler_Object *o) { return o && o == obj; }

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p)
{
    if (!p || p->structSize == 0 || !p->ctx)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!fake_profiler_initialized())
        return CUPTI_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&lock);
    CUptiResult rc = refuse_rc;
    if (rc == CUPTI_SUCCESS && obj)
        rc = CUPTI_ERROR_INVALID_OPERATION; /* one per context; the fake has one */
    if (rc == CUPTI_SUCCESS) {
        obj = calloc(1, sizeof *obj);
        if (!obj)
            rc = CUPTI_ERROR_OUT_OF_MEMORY;
        else {
            obj->ctx = p->ctx;
            obj->open = -1;
            p->pRangeProfilerObject = obj;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *p)
{
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_PARAMETER;
    if (p && ours(p->pRangeProfilerObject)) {
        free(obj);
        obj = NULL;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *p)
{
    if (!p || !p->pMetricNames || p->numMetrics == 0 || p->numMetrics > MAX_METRICS || p->maxNumOfRanges == 0 ||
        p->maxNumOfRanges > MAX_RANGES || p->maxNumRangeTreeNodes < p->maxNumOfRanges)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_PARAMETER;
    if (ours(p->pRangeProfilerObject)) {
        rc = CUPTI_SUCCESS;
        for (size_t i = 0; i < p->numMetrics; i++)
            if (fake_metric_full(p->pMetricNames[i]) < 0)
                rc = CUPTI_ERROR_INVALID_METRIC_NAME;
        if (rc == CUPTI_SUCCESS) {
            obj->n_metrics = (uint32_t)p->numMetrics;
            for (size_t i = 0; i < p->numMetrics; i++)
                snprintf(obj->metrics[i], FAKE_NAME_LEN, "%s", p->pMetricNames[i]);
            obj->max_ranges = (uint32_t)p->maxNumOfRanges;
            p->counterDataSize = fake_data_size(obj->n_metrics, obj->max_ranges);
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI
cuptiRangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *p)
{
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_PARAMETER;
    if (p && ours(p->pRangeProfilerObject) && p->pCounterData && obj->n_metrics &&
        p->counterDataSize >= fake_data_size(obj->n_metrics, obj->max_ranges)) {
        fake_counter_data head = {FAKE_DATA_MAGIC, obj->n_metrics, obj->max_ranges, 0};
        memset(p->pCounterData, 0, p->counterDataSize);
        memcpy(p->pCounterData, &head, sizeof head);
        memcpy(p->pCounterData + sizeof head, obj->metrics, (size_t)obj->n_metrics * FAKE_NAME_LEN);
        obj->image = p->pCounterData;
        obj->image_size = p->counterDataSize;
        obj->n_decoded = 0;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *p)
{
    if (!p || !p->pConfig || p->configSize < sizeof(fake_config_image) || !p->pCounterDataImage)
        return CUPTI_ERROR_INVALID_PARAMETER;
    fake_config_image head;
    memcpy(&head, p->pConfig, sizeof head);
    if (head.magic != FAKE_CONFIG_MAGIC || head.profiler_type != CUPTI_PROFILER_TYPE_RANGE_PROFILER)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->range != CUPTI_UserRange && p->range != CUPTI_AutoRange)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->numNestingLevels == 0 || p->minNestingLevel == 0 || p->maxRangesPerPass == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_PARAMETER;
    if (ours(p->pRangeProfilerObject) && p->pCounterDataImage == obj->image && p->maxRangesPerPass <= obj->max_ranges &&
        !obj->started) {
        obj->configured = true;
        obj->passes = head.passes;
        obj->pass = (uint32_t)p->passIndex;
        obj->levels = p->numNestingLevels;
        obj->min_level = p->minNestingLevel;
        obj->n_ranges = 0;
        obj->depth = 0;
        obj->open = -1;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *p)
{
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (!p || !ours(p->pRangeProfilerObject))
        rc = CUPTI_ERROR_INVALID_PARAMETER;
    else if (obj->configured && !obj->started) {
        obj->started = true;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *p)
{
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (!p || !ours(p->pRangeProfilerObject))
        rc = CUPTI_ERROR_INVALID_PARAMETER;
    else if (obj->started) {
        obj->started = false;
        obj->open = -1;
        obj->pass++;
        state.passes++;
        p->passIndex = obj->pass;
        p->targetNestingLevel = obj->min_level;
        p->isAllPassSubmitted = obj->pass >= obj->passes;
        obj->stopped_since_decode = true;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params *p)
{
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (!p || !ours(p->pRangeProfilerObject) || !p->pRangeName)
        rc = CUPTI_ERROR_INVALID_PARAMETER;
    else if (obj->started) {
        obj->depth++;
        state.pushes++;
        if (obj->depth > state.max_depth)
            state.max_depth = obj->depth;
        if (obj->depth == obj->min_level) { /* the level profiled in this pass */
            if (obj->n_ranges < obj->max_ranges && obj->n_ranges < MAX_RANGES) {
                obj->open = (int)obj->n_ranges++;
                snprintf(obj->ranges[obj->open].name, sizeof obj->ranges[obj->open].name, "%s", p->pRangeName);
                obj->ranges[obj->open].ns = 0;
            } else {
                obj->dropped++;
            }
        }
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params *p)
{
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (!p || !ours(p->pRangeProfilerObject))
        rc = CUPTI_ERROR_INVALID_PARAMETER;
    else if (obj->started && obj->depth > 0) {
        if (obj->depth == obj->min_level)
            obj->open = -1;
        obj->depth--;
        state.pops++;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *p)
{
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (!p || !ours(p->pRangeProfilerObject))
        rc = CUPTI_ERROR_INVALID_PARAMETER;
    else if (!obj->started && obj->stopped_since_decode && obj->image) {
        fake_counter_data head;
        memcpy(&head, obj->image, sizeof head);
        uint8_t *samples = obj->image + sizeof head + (size_t)head.n * FAKE_NAME_LEN;
        for (uint32_t i = 0; i < obj->n_ranges && head.populated < head.max_samples; i++, head.populated++) {
            uint8_t *s = samples + (size_t)head.populated * fake_sample_size(head.n);
            fake_sample_head sh = {0, (uint64_t)obj->ranges[i].ns};
            memcpy(s, &sh, sizeof sh);
            for (uint32_t m = 0; m < head.n; m++) {
                double v = fake_metric_full(obj->metrics[m]) * obj->ranges[i].ns / 1e6;
                memcpy(s + sizeof sh + m * sizeof(double), &v, sizeof v);
            }
            memcpy(obj->decoded[head.populated], obj->ranges[i].name, sizeof obj->decoded[0]);
        }
        memcpy(obj->image, &head, sizeof head);
        obj->n_decoded = head.populated;
        obj->n_ranges = 0;
        p->numOfRangeDropped = obj->dropped;
        obj->dropped = 0;
        obj->stopped_since_decode = false;
        state.decodes++;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *p)
{
    if (!p || !p->pCounterDataImage || p->counterDataImageSize < sizeof(fake_counter_data))
        return CUPTI_ERROR_INVALID_PARAMETER;
    fake_counter_data head;
    memcpy(&head, p->pCounterDataImage, sizeof head);
    if (head.magic != FAKE_DATA_MAGIC)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->numTotalRanges = head.populated;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiRangeProfilerCounterDataGetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params *p)
{
    if (!p || !p->pCounterDataImage || !p->rangeDelimiter)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_PARAMETER;
    if (obj && p->pCounterDataImage == obj->image && p->rangeIndex < obj->n_decoded) {
        p->rangeName = obj->decoded[p->rangeIndex];
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
