/*
 * The fake libcupti's profiler target and host API: cuptiProfilerInitialize,
 * cuptiDeviceGetChipName and the cuptiProfilerHost* calls, with the checks
 * the real ones make (initialised first, known chip, known metric names,
 * buffers of the size they asked for). Config images and counter data are
 * the fake's own layouts (fake_profiler.h); values come from the samples
 * fake_pm_sampling.c decoded into them.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUPTI_LIB /* cupti*.h: the declarations below are exported */
#include <cupti.h>

#include "backend/cupti/profiler_host_abi.h"
#include "fake_cupti.h"
#include "fake_profiler.h"

#include <cupti_profiler_target.h>
#include <cupti_target.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_HOST_METRICS 64

static const struct {
    const char *name;
    double full;
    unsigned passes;
} metrics[] = {
    {FAKE_CUPTI_SM_ACTIVE, 100.0, 1},
    {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", 100.0, 1},
    {FAKE_CUPTI_DRAM_READ, FAKE_CUPTI_DRAM_READ_PEAK, 1},
    {"dram__bytes_write.sum.per_second", 3.35e12, 1},
    {"pcie__read_bytes.sum.per_second", 64e9, 1},
    {"pcie__write_bytes.sum.per_second", 64e9, 1},
    {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed", 100.0, 1},
    {"multipass__l1tex_hit_rate.pct", 100.0, 2},
};

static atomic_int devices = 1;
static atomic_int initialized;
static atomic_int hosts_alive;

double fake_metric_full(const char *name)
{
    for (size_t i = 0; name && i < sizeof metrics / sizeof *metrics; i++)
        if (strcmp(metrics[i].name, name) == 0)
            return metrics[i].full;
    return -1;
}

unsigned fake_metric_passes(const char *name)
{
    for (size_t i = 0; name && i < sizeof metrics / sizeof *metrics; i++)
        if (strcmp(metrics[i].name, name) == 0)
            return metrics[i].passes;
    return 1;
}

int fake_profiler_device_count(void) { return atomic_load(&devices); }
int fake_profiler_initialized(void) { return atomic_load(&initialized); }

EXPORT void fake_cupti_profiler_devices(int n) { atomic_store(&devices, n); }
EXPORT int fake_cupti_profiler_hosts_alive(void) { return atomic_load(&hosts_alive); }

/* ---- profiler target ------------------------------------------------------------- */

EXPORT CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p)
{
    if (!p || p->structSize == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store(&initialized, 1);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params *p)
{
    if (!p || p->structSize == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store(&initialized, 0);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
    if (!p || p->structSize == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!atomic_load(&initialized))
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (p->deviceIndex >= (size_t)atomic_load(&devices))
        return CUPTI_ERROR_INVALID_DEVICE;
    p->pChipName = FAKE_CUPTI_CHIP;
    return CUPTI_SUCCESS;
}

/* ---- host ------------------------------------------------------------------------ */

struct CUpti_Profiler_Host_Object {
    CUpti_ProfilerType type;
    uint32_t n;
    uint32_t calls; /* ConfigAddMetrics calls: each schedules its own pass, as CUPTI's do */
    char names[MAX_HOST_METRICS][FAKE_NAME_LEN];
};

EXPORT CUptiResult CUPTIAPI cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
    if (!p || p->structSize == 0 || !p->pChipName)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->profilerType != CUPTI_PROFILER_TYPE_RANGE_PROFILER && p->profilerType != CUPTI_PROFILER_TYPE_PM_SAMPLING)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (strcmp(p->pChipName, FAKE_CUPTI_CHIP) != 0)
        return CUPTI_ERROR_INVALID_CHIP_NAME;
    CUpti_Profiler_Host_Object *o = calloc(1, sizeof *o);
    if (!o)
        return CUPTI_ERROR_OUT_OF_MEMORY;
    o->type = p->profilerType;
    p->pHostObject = o;
    atomic_fetch_add(&hosts_alive, 1);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
    if (!p || !p->pHostObject)
        return CUPTI_ERROR_INVALID_PARAMETER;
    free(p->pHostObject);
    atomic_fetch_sub(&hosts_alive, 1);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
    if (!p || !p->pHostObject || !p->ppMetricNames)
        return CUPTI_ERROR_INVALID_PARAMETER;
    CUpti_Profiler_Host_Object *o = p->pHostObject;
    /* CUPTI 13's answer to a name the chip lacks */
    for (size_t i = 0; i < p->numMetrics; i++)
        if (fake_metric_full(p->ppMetricNames[i]) < 0)
            return CUPTI_ERROR_INVALID_PARAMETER;
    if (o->n + p->numMetrics > MAX_HOST_METRICS)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    for (size_t i = 0; i < p->numMetrics; i++)
        snprintf(o->names[o->n++], FAKE_NAME_LEN, "%s", p->ppMetricNames[i]);
    o->calls++;
    return CUPTI_SUCCESS;
}

static size_t config_size(const CUpti_Profiler_Host_Object *o)
{
    return sizeof(fake_config_image) + (size_t)o->n * FAKE_NAME_LEN;
}

EXPORT CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
    if (!p || !p->pHostObject)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->pHostObject->n == 0)
        return CUPTI_ERROR_INVALID_OPERATION;
    p->configImageSize = config_size(p->pHostObject);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
    if (!p || !p->pHostObject || !p->pConfigImage)
        return CUPTI_ERROR_INVALID_PARAMETER;
    const CUpti_Profiler_Host_Object *o = p->pHostObject;
    if (o->n == 0)
        return CUPTI_ERROR_INVALID_OPERATION;
    if (p->configImageSize < config_size(o))
        return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
    /* More than 8 metrics do not fit the counters of one pass. */
    unsigned passes = o->n > 8 ? 2 : 1;
    if (o->calls > passes)
        passes = o->calls;
    for (uint32_t i = 0; i < o->n; i++)
        if (fake_metric_passes(o->names[i]) > passes)
            passes = fake_metric_passes(o->names[i]);
    fake_config_image head = {FAKE_CONFIG_MAGIC, o->n, passes, (uint32_t)o->type};
    memcpy(p->pConfigImage, &head, sizeof head);
    memcpy(p->pConfigImage + sizeof head, o->names, (size_t)o->n * FAKE_NAME_LEN);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
    if (!p || !p->pConfigImage || p->configImageSize < sizeof(fake_config_image))
        return CUPTI_ERROR_INVALID_PARAMETER;
    fake_config_image head;
    memcpy(&head, p->pConfigImage, sizeof head);
    if (head.magic != FAKE_CONFIG_MAGIC)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->numOfPasses = head.passes;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
    if (!p || !p->pHostObject || !p->pCounterDataImage || !p->ppMetricNames || !p->pMetricValues)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->counterDataImageSize < sizeof(fake_counter_data))
        return CUPTI_ERROR_INVALID_PARAMETER;
    fake_counter_data head;
    memcpy(&head, p->pCounterDataImage, sizeof head);
    if (head.magic != FAKE_DATA_MAGIC || p->counterDataImageSize < fake_data_size(head.n, head.max_samples))
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (p->rangeIndex >= head.populated)
        return CUPTI_ERROR_INVALID_PARAMETER;
    const char *names = (const char *)p->pCounterDataImage + sizeof head;
    const uint8_t *sample = (const uint8_t *)names + (size_t)head.n * FAKE_NAME_LEN +
                            p->rangeIndex * fake_sample_size(head.n) + sizeof(fake_sample_head);
    double out[MAX_HOST_METRICS];
    if (p->numMetrics > MAX_HOST_METRICS)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; i++) {
        size_t j = 0;
        while (j < head.n && strncmp(names + j * FAKE_NAME_LEN, p->ppMetricNames[i], FAKE_NAME_LEN) != 0)
            j++;
        if (j == head.n)
            return CUPTI_ERROR_INVALID_METRIC_NAME;
        memcpy(&out[i], sample + j * sizeof(double), sizeof(double));
    }
    memcpy(p->pMetricValues, out, p->numMetrics * sizeof(double));
    return CUPTI_SUCCESS;
}
