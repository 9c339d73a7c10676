/*
 * Loading CUPTI at run time (see cupti_api.h).
 */
#include "backend/cupti/cupti_api.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cupti/cupti_paths.h"

static const char *const sonames[] = {GFL_CUPTI_SONAMES};

static const char *const toolkit_paths[] = {GFL_CUPTI_TOOLKIT_PATHS};

static void *load(char *err, size_t err_len)
{
    const char *forced = getenv("GPUFL_CUPTI_LIBRARY");
    if (forced && forced[0]) {
        void *lib = dlopen(forced, RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            snprintf(err, err_len, "GPUFL_CUPTI_LIBRARY=%s cannot be loaded: %s", forced, dlerror());
        return lib;
    }
    for (size_t i = 0; i < sizeof sonames / sizeof *sonames; i++) {
        void *lib = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
        if (lib)
            return lib;
    }
    char first_error[512] = "";
    for (size_t i = 0; i < sizeof sonames / sizeof *sonames; i++) {
        void *lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (lib)
            return lib;
        if (!first_error[0])
            snprintf(first_error, sizeof first_error, "%s", dlerror());
    }
    for (size_t i = 0; i < sizeof toolkit_paths / sizeof *toolkit_paths; i++) {
        void *lib = dlopen(toolkit_paths[i], RTLD_NOW | RTLD_LOCAL);
        if (lib)
            return lib;
    }
    snprintf(err, err_len,
             "libcupti is not installed or not on the library path (%s); "
             "set GPUFL_CUPTI_LIBRARY to its path",
             first_error);
    return NULL;
}

#define BIND(name) (*(void **)&api->name = dlsym(api->lib, #name))

int gfl_cupti_open(gfl_cupti_api *api, char *err, size_t err_len)
{
    memset(api, 0, sizeof *api);
    api->lib = load(err, err_len);
    if (!api->lib)
        return -1;
    BIND(cuptiGetResultString);
    BIND(cuptiGetVersion);
    BIND(cuptiActivityRegisterCallbacks);
    BIND(cuptiActivityRegisterTimestampCallback);
    BIND(cuptiActivityEnable);
    BIND(cuptiActivityDisable);
    BIND(cuptiActivityFlushAll);
    BIND(cuptiActivityGetNextRecord);
    BIND(cuptiActivityGetNumDroppedRecords);
    BIND(cuptiActivitySetAttribute);
    BIND(cuptiActivityEnableRuntimeApi);
    BIND(cuptiActivityEnableDriverApi);
    BIND(cuptiSetThreadIdType);
    BIND(cuptiSubscribe);
    BIND(cuptiSubscribe_v2);
    BIND(cuptiUnsubscribe);
    BIND(cuptiEnableCallback);
    BIND(cuptiEnableDomain);
    BIND(cuptiGetCallbackName);
    BIND(cuptiFinalize);
    BIND(cuptiGetDeviceId);
    BIND(cuptiPCSamplingGetNumStallReasons);
    BIND(cuptiPCSamplingGetStallReasons);
    BIND(cuptiPCSamplingSetConfigurationAttribute);
    BIND(cuptiPCSamplingGetConfigurationAttribute);
    BIND(cuptiPCSamplingEnable);
    BIND(cuptiPCSamplingDisable);
    BIND(cuptiPCSamplingGetData);
    BIND(cuptiGetCubinCrc);
    BIND(cuptiGetSassToSourceCorrelation);
    BIND(cuptiGetTimestamp);
    BIND(cuptiProfilerInitialize);
    BIND(cuptiProfilerDeInitialize);
    BIND(cuptiDeviceGetChipName);
    BIND(cuptiProfilerHostInitialize);
    BIND(cuptiProfilerHostDeinitialize);
    BIND(cuptiProfilerHostConfigAddMetrics);
    BIND(cuptiProfilerHostGetConfigImageSize);
    BIND(cuptiProfilerHostGetConfigImage);
    BIND(cuptiProfilerHostGetNumOfPasses);
    BIND(cuptiProfilerHostEvaluateToGpuValues);
    BIND(cuptiProfilerHostGetMetricsInSinglePassSet);
    BIND(cuptiPmSamplingGetCounterAvailability);
    BIND(cuptiPmSamplingEnable);
    BIND(cuptiPmSamplingDisable);
    BIND(cuptiPmSamplingSetConfig);
    BIND(cuptiPmSamplingStart);
    BIND(cuptiPmSamplingStop);
    BIND(cuptiPmSamplingDecodeData);
    BIND(cuptiPmSamplingGetCounterDataSize);
    BIND(cuptiPmSamplingCounterDataImageInitialize);
    BIND(cuptiPmSamplingGetCounterDataInfo);
    BIND(cuptiPmSamplingCounterDataGetSampleInfo);
    BIND(cuptiRangeProfilerEnable);
    BIND(cuptiRangeProfilerDisable);
    BIND(cuptiRangeProfilerSetConfig);
    BIND(cuptiRangeProfilerStart);
    BIND(cuptiRangeProfilerStop);
    BIND(cuptiRangeProfilerPushRange);
    BIND(cuptiRangeProfilerPopRange);
    BIND(cuptiRangeProfilerDecodeData);
    BIND(cuptiRangeProfilerGetCounterDataSize);
    BIND(cuptiRangeProfilerCounterDataImageInitialize);
    BIND(cuptiRangeProfilerGetCounterDataInfo);
    BIND(cuptiRangeProfilerCounterDataGetRangeInfo);
    BIND(cuptiSassMetricsGetNumOfMetrics);
    BIND(cuptiSassMetricsGetMetrics);
    BIND(cuptiSassMetricsGetProperties);
    BIND(cuptiSassMetricsSetConfig);
    BIND(cuptiSassMetricsUnsetConfig);
    BIND(cuptiSassMetricsEnable);
    BIND(cuptiSassMetricsDisable);
    BIND(cuptiSassMetricsGetDataProperties);
    BIND(cuptiSassMetricsFlushData);
    Dl_info info;
    if (api->cuptiActivityEnable && dladdr((void *)api->cuptiActivityEnable, &info) && info.dli_fname)
        snprintf(api->path, sizeof api->path, "%s", info.dli_fname);
    /* A library without cuptiActivityEnable (GPUFL_CUPTI_LIBRARY naming the
     * wrong file) has no symbol to ask dladdr about: name it by its handle,
     * so that the error below says which file it was. */
    struct link_map *map = NULL;
    if (!api->path[0] && dlinfo(api->lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
        snprintf(api->path, sizeof api->path, "%s", map->l_name);
    const char *missing = !api->cuptiActivityRegisterCallbacks      ? "cuptiActivityRegisterCallbacks"
                          : !api->cuptiActivityEnable               ? "cuptiActivityEnable"
                          : !api->cuptiActivityDisable              ? "cuptiActivityDisable"
                          : !api->cuptiActivityFlushAll             ? "cuptiActivityFlushAll"
                          : !api->cuptiActivityGetNextRecord        ? "cuptiActivityGetNextRecord"
                          : !api->cuptiActivityGetNumDroppedRecords ? "cuptiActivityGetNumDroppedRecords"
                          : !api->cuptiActivitySetAttribute         ? "cuptiActivitySetAttribute"
                          : !api->cuptiSubscribe                    ? "cuptiSubscribe"
                          : !api->cuptiUnsubscribe                  ? "cuptiUnsubscribe"
                          : !api->cuptiEnableCallback               ? "cuptiEnableCallback"
                          : !api->cuptiEnableDomain                 ? "cuptiEnableDomain"
                          : !api->cuptiGetCallbackName              ? "cuptiGetCallbackName"
                          : !api->cuptiGetVersion                   ? "cuptiGetVersion"
                                                                    : NULL;
    if (missing) {
        snprintf(err, err_len, "%s lacks %s: too old a CUPTI", api->path[0] ? api->path : "libcupti", missing);
        dlclose(api->lib);
        memset(api, 0, sizeof *api);
        return -1;
    }
    return 0;
}

/* The optional functions an engine needs, by name and place in the table. */
typedef struct fn_field {
    const char *name;
    size_t offset;
} fn_field;

#define FIELD(name)                                                                                                    \
    {                                                                                                                  \
#name, offsetof(gfl_cupti_api, name)                                                                           \
    }
static const fn_field profiler_host_fns[] = {
    FIELD(cuptiProfilerInitialize),
    FIELD(cuptiDeviceGetChipName),
    FIELD(cuptiProfilerHostInitialize),
    FIELD(cuptiProfilerHostDeinitialize),
    FIELD(cuptiProfilerHostConfigAddMetrics),
    FIELD(cuptiProfilerHostGetConfigImageSize),
    FIELD(cuptiProfilerHostGetConfigImage),
    FIELD(cuptiProfilerHostGetNumOfPasses),
    FIELD(cuptiProfilerHostEvaluateToGpuValues),
};
static const fn_field pm_sampling_fns[] = {
    FIELD(cuptiPmSamplingGetCounterAvailability),
    FIELD(cuptiPmSamplingEnable),
    FIELD(cuptiPmSamplingDisable),
    FIELD(cuptiPmSamplingSetConfig),
    FIELD(cuptiPmSamplingStart),
    FIELD(cuptiPmSamplingStop),
    FIELD(cuptiPmSamplingDecodeData),
    FIELD(cuptiPmSamplingGetCounterDataSize),
    FIELD(cuptiPmSamplingCounterDataImageInitialize),
    FIELD(cuptiPmSamplingGetCounterDataInfo),
    FIELD(cuptiPmSamplingCounterDataGetSampleInfo),
};
static const fn_field range_profiler_fns[] = {
    FIELD(cuptiRangeProfilerEnable),
    FIELD(cuptiRangeProfilerDisable),
    FIELD(cuptiRangeProfilerSetConfig),
    FIELD(cuptiRangeProfilerStart),
    FIELD(cuptiRangeProfilerStop),
    FIELD(cuptiRangeProfilerPushRange),
    FIELD(cuptiRangeProfilerPopRange),
    FIELD(cuptiRangeProfilerDecodeData),
    FIELD(cuptiRangeProfilerGetCounterDataSize),
    FIELD(cuptiRangeProfilerCounterDataImageInitialize),
    FIELD(cuptiRangeProfilerGetCounterDataInfo),
    FIELD(cuptiRangeProfilerCounterDataGetRangeInfo),
};
#undef FIELD

static const char *first_missing(const gfl_cupti_api *api, const fn_field *fns, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *fn;
        memcpy(&fn, (const char *)api + fns[i].offset, sizeof fn);
        if (!fn)
            return fns[i].name;
    }
    return NULL;
}

const char *gfl_cupti_profiler_host_missing(const gfl_cupti_api *api)
{
    return first_missing(api, profiler_host_fns, sizeof profiler_host_fns / sizeof *profiler_host_fns);
}

const char *gfl_cupti_pm_sampling_missing(const gfl_cupti_api *api)
{
    const char *host = gfl_cupti_profiler_host_missing(api);
    return host ? host : first_missing(api, pm_sampling_fns, sizeof pm_sampling_fns / sizeof *pm_sampling_fns);
}

const char *gfl_cupti_range_profiler_missing(const gfl_cupti_api *api)
{
    const char *host = gfl_cupti_profiler_host_missing(api);
    return host ? host : first_missing(api, range_profiler_fns, sizeof range_profiler_fns / sizeof *range_profiler_fns);
}

const char *gfl_cupti_counters_refused(CUptiResult rc)
{
    switch (rc) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return "the driver lets only administrators use the GPU's performance counters "
               "(NVreg_RestrictProfilingToAdminUsers=1): run as root or change the driver setting";
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        return "another tool holds the GPU's performance counters (DCGM's profiling module, Nsight Compute "
               "or Nsight Systems): stop it (for DCGM, `dcgmi profile --pause`) or record as trace";
    default: return NULL;
    }
}

const char *gfl_cupti_error(const gfl_cupti_api *api, CUptiResult rc)
{
    static __thread char buf[48];
    const char *text = NULL;
    if (api->cuptiGetResultString && api->cuptiGetResultString(rc, &text) == CUPTI_SUCCESS && text)
        return text;
    snprintf(buf, sizeof buf, "CUPTI error %d", (int)rc);
    return buf;
}
