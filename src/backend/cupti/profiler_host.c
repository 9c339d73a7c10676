/*
 * CUPTI's host profiler API (see profiler_host.h). The host object is
 * created, given the metrics and asked for its config image once per
 * configuration; evaluation runs once per decoded range or sample, so it
 * allocates nothing.
 */
#include "backend/cupti/profiler_host.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CUptiResult fail(const gfl_cupti_api *api, CUptiResult rc, char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static CUptiResult fail(const gfl_cupti_api *api, CUptiResult rc, char *err, size_t err_len, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!api) /* a host that was never created */
        snprintf(err, err_len, "%s", what);
    else if (rc == GFL_CUPTI_MISSING)
        snprintf(err, err_len, "%s: %s lacks it (CUPTI 12.6 or later has the profiler API)", what,
                 api->path[0] ? api->path : "libcupti");
    else
        snprintf(err, err_len, "%s: %s", what, gfl_cupti_error(api, rc));
    return rc;
}

/* cuptiProfilerInitialize is process-wide and cheap to keep: done once,
 * its result kept for every later caller. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static CUptiResult init_rc = CUPTI_ERROR_NOT_INITIALIZED;

CUptiResult gfl_profiler_chip_name(const gfl_cupti_api *api, int device, char *chip, size_t chip_len, char *err,
                                   size_t err_len)
{
    if (!api->cuptiProfilerInitialize)
        return fail(api, GFL_CUPTI_MISSING, err, err_len, "cuptiProfilerInitialize");
    if (!api->cuptiDeviceGetChipName)
        return fail(api, GFL_CUPTI_MISSING, err, err_len, "cuptiDeviceGetChipName");
    pthread_mutex_lock(&init_lock);
    if (init_rc != CUPTI_SUCCESS) {
        CUpti_Profiler_Initialize_Params p = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        init_rc = api->cuptiProfilerInitialize(&p);
    }
    CUptiResult rc = init_rc;
    pthread_mutex_unlock(&init_lock);
    if (rc != CUPTI_SUCCESS)
        return fail(api, rc, err, err_len, "cuptiProfilerInitialize");
    if (device < 0)
        return fail(api, CUPTI_ERROR_INVALID_DEVICE, err, err_len, "device %d", device);
    CUpti_Device_GetChipName_Params p = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE,
                                         .deviceIndex = (size_t)device};
    rc = api->cuptiDeviceGetChipName(&p);
    if (rc != CUPTI_SUCCESS)
        return fail(api, rc, err, err_len, "cuptiDeviceGetChipName(device %d)", device);
    if (!p.pChipName || !p.pChipName[0])
        return fail(api, CUPTI_ERROR_UNKNOWN, err, err_len, "cuptiDeviceGetChipName(device %d) gave no name", device);
    snprintf(chip, chip_len, "%s", p.pChipName);
    return CUPTI_SUCCESS;
}

/* Which metric CUPTI refuses, asked of a throwaway host object one name at
 * a time (CUPTI's error does not say), or NULL. */
static const char *first_refused(const gfl_cupti_api *api, CUpti_ProfilerType type, const char *chip,
                                 const uint8_t *availability, char **metrics, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        CUpti_Profiler_Host_Initialize_Params init = {
            .structSize = sizeof init,
            .profilerType = type,
            .pChipName = chip,
            .pCounterAvailabilityImage = availability,
        };
        if (api->cuptiProfilerHostInitialize(&init) != CUPTI_SUCCESS)
            return NULL;
        CUpti_Profiler_Host_ConfigAddMetrics_Params add = {
            .structSize = sizeof add,
            .pHostObject = init.pHostObject,
            .ppMetricNames = (const char **)&metrics[i],
            .numMetrics = 1,
        };
        CUptiResult rc = api->cuptiProfilerHostConfigAddMetrics(&add);
        CUpti_Profiler_Host_Deinitialize_Params done = {.structSize = sizeof done, .pHostObject = init.pHostObject};
        (void)api->cuptiProfilerHostDeinitialize(&done);
        if (rc != CUPTI_SUCCESS)
            return metrics[i];
    }
    return NULL;
}

CUptiResult gfl_profiler_host_create(gfl_profiler_host *h, const gfl_cupti_api *api, CUpti_ProfilerType type,
                                     const char *chip, const uint8_t *availability, const char *const *metrics,
                                     size_t n, char *err, size_t err_len)
{
    memset(h, 0, sizeof *h);
    const char *missing = gfl_cupti_profiler_host_missing(api);
    if (missing)
        return fail(api, GFL_CUPTI_MISSING, err, err_len, "%s", missing);
    if (n == 0 || !metrics)
        return fail(api, CUPTI_ERROR_INVALID_PARAMETER, err, err_len, "no metrics asked for");
    h->api = api;
    snprintf(h->chip, sizeof h->chip, "%s", chip);
    CUptiResult rc = CUPTI_ERROR_OUT_OF_MEMORY;
    h->metrics = calloc(n, sizeof *h->metrics);
    if (!h->metrics)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        if (!metrics[i] || !metrics[i][0]) {
            rc = fail(api, CUPTI_ERROR_INVALID_METRIC_NAME, err, err_len, "metric %zu has no name", i);
            goto out;
        }
        h->metrics[i] = strdup(metrics[i]);
        if (!h->metrics[i])
            goto oom;
        h->n_metrics = i + 1;
    }
    CUpti_Profiler_Host_Initialize_Params init = {
        .structSize = sizeof init,
        .profilerType = type,
        .pChipName = h->chip,
        .pCounterAvailabilityImage = availability,
    };
    rc = api->cuptiProfilerHostInitialize(&init);
    if (rc != CUPTI_SUCCESS) {
        fail(api, rc, err, err_len, "cuptiProfilerHostInitialize(chip %s)", h->chip);
        goto out;
    }
    h->object = init.pHostObject;
    /* All in one call: the host API schedules each call's metrics as a
     * pass of their own (on an H100, two calls of one metric each need two
     * passes, which PM sampling refuses). */
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {
        .structSize = sizeof add,
        .pHostObject = h->object,
        .ppMetricNames = (const char **)h->metrics,
        .numMetrics = n,
    };
    rc = api->cuptiProfilerHostConfigAddMetrics(&add);
    if (rc != CUPTI_SUCCESS) {
        const char *bad = first_refused(api, type, h->chip, availability, h->metrics, n);
        if (bad)
            fail(api, rc, err, err_len, "metric %s on %s", bad, h->chip);
        else
            fail(api, rc, err, err_len, "the %zu metrics together on %s", n, h->chip);
        goto out;
    }
    CUpti_Profiler_Host_GetConfigImageSize_Params size = {.structSize = sizeof size, .pHostObject = h->object};
    rc = api->cuptiProfilerHostGetConfigImageSize(&size);
    if (rc != CUPTI_SUCCESS) {
        fail(api, rc, err, err_len, "cuptiProfilerHostGetConfigImageSize");
        goto out;
    }
    h->config = malloc(size.configImageSize ? size.configImageSize : 1);
    if (!h->config)
        goto oom;
    h->config_size = size.configImageSize;
    CUpti_Profiler_Host_GetConfigImage_Params image = {
        .structSize = sizeof image,
        .pHostObject = h->object,
        .configImageSize = h->config_size,
        .pConfigImage = h->config,
    };
    rc = api->cuptiProfilerHostGetConfigImage(&image);
    if (rc != CUPTI_SUCCESS) {
        fail(api, rc, err, err_len, "cuptiProfilerHostGetConfigImage");
        goto out;
    }
    CUpti_Profiler_Host_GetNumOfPasses_Params passes = {
        .structSize = sizeof passes,
        .configImageSize = h->config_size,
        .pConfigImage = h->config,
    };
    rc = api->cuptiProfilerHostGetNumOfPasses(&passes);
    if (rc != CUPTI_SUCCESS) {
        fail(api, rc, err, err_len, "cuptiProfilerHostGetNumOfPasses");
        goto out;
    }
    h->passes = passes.numOfPasses;
    return CUPTI_SUCCESS;
oom:
    rc = fail(api, CUPTI_ERROR_OUT_OF_MEMORY, err, err_len, "the config of %zu metrics", n);
out:
    gfl_profiler_host_destroy(h);
    return rc;
}

CUptiResult gfl_profiler_host_evaluate(const gfl_profiler_host *h, const uint8_t *counter_data, size_t size,
                                       size_t index, double *values, char *err, size_t err_len)
{
    if (!h->object)
        return fail(h->api, CUPTI_ERROR_NOT_INITIALIZED, err, err_len, "no metrics configured");
    CUpti_Profiler_Host_EvaluateToGpuValues_Params p = {
        .structSize = sizeof p,
        .pHostObject = h->object,
        .pCounterDataImage = counter_data,
        .counterDataImageSize = size,
        .rangeIndex = index,
        .ppMetricNames = (const char **)h->metrics,
        .numMetrics = h->n_metrics,
        .pMetricValues = values,
    };
    CUptiResult rc = h->api->cuptiProfilerHostEvaluateToGpuValues(&p);
    if (rc != CUPTI_SUCCESS)
        return fail(h->api, rc, err, err_len, "cuptiProfilerHostEvaluateToGpuValues(index %zu)", index);
    return CUPTI_SUCCESS;
}

void gfl_profiler_host_destroy(gfl_profiler_host *h)
{
    if (h->object && h->api && h->api->cuptiProfilerHostDeinitialize) {
        CUpti_Profiler_Host_Deinitialize_Params p = {.structSize = sizeof p, .pHostObject = h->object};
        (void)h->api->cuptiProfilerHostDeinitialize(&p);
    }
    for (size_t i = 0; h->metrics && i < h->n_metrics; i++)
        free(h->metrics[i]);
    free(h->metrics);
    free(h->config);
    memset(h, 0, sizeof *h);
}

CUptiResult gfl_profiler_single_pass_set(const gfl_cupti_api *api, const char *chip, const char *set, char ***names,
                                         size_t *n, char *err, size_t err_len)
{
    *names = NULL;
    *n = 0;
    if (!api->cuptiProfilerHostGetMetricsInSinglePassSet)
        return fail(api, GFL_CUPTI_MISSING, err, err_len, "cuptiProfilerHostGetMetricsInSinglePassSet");
    gfl_cupti_single_pass_set_params q = {.structSize = sizeof q, .pChipName = chip, .pSinglePassSetName = set};
    CUptiResult rc = api->cuptiProfilerHostGetMetricsInSinglePassSet(&q);
    if (rc != CUPTI_SUCCESS)
        return fail(api, rc, err, err_len, "single-pass metric set %s on %s", set, chip);
    size_t count = q.numOfMetricsInSinglePassSet, bytes = q.metricsBufferSize;
    if (count == 0)
        return fail(api, CUPTI_ERROR_INVALID_PARAMETER, err, err_len, "single-pass metric set %s on %s is empty", set,
                    chip);
    /* One block: the pointers, the offsets, then the names they point into. */
    size_t head = count * sizeof(char *) + count * sizeof(size_t);
    char *block = malloc(head + bytes + 1);
    if (!block)
        return fail(api, CUPTI_ERROR_OUT_OF_MEMORY, err, err_len, "single-pass metric set %s", set);
    size_t *offsets = (size_t *)(block + count * sizeof(char *));
    uint8_t *text = (uint8_t *)block + head;
    q.pMetricsIndicesBuffer = offsets;
    q.pMetricsBuffer = text;
    rc = api->cuptiProfilerHostGetMetricsInSinglePassSet(&q);
    if (rc != CUPTI_SUCCESS) {
        free(block);
        return fail(api, rc, err, err_len, "single-pass metric set %s on %s", set, chip);
    }
    text[bytes] = 0;
    char **list = (char **)block;
    for (size_t i = 0; i < count; i++) {
        if (offsets[i] >= bytes) {
            free(block);
            return fail(api, CUPTI_ERROR_UNKNOWN, err, err_len, "single-pass metric set %s: a name out of bounds", set);
        }
        list[i] = (char *)text + offsets[i];
    }
    *names = list;
    *n = count;
    return CUPTI_SUCCESS;
}
