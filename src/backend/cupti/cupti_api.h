/*
 * The slice of CUPTI the trace plugin uses, reached through a table of
 * function pointers filled by dlopen(): the plugin builds wherever the CUDA
 * toolkit's headers are, and a machine without libcupti (or with profiling
 * restricted) gets a clear reason instead of a loader error.
 *
 * Which libcupti: GPUFL_CUPTI_LIBRARY when set; else a copy the program has
 * already loaded (two CUPTIs in one process fight over the driver's tool
 * interface); else libcupti.so.13 through the plugin's RUNPATH (the
 * toolkit's lib directory at build time), then the usual toolkit paths.
 */
#ifndef GPUFL_BACKEND_CUPTI_CUPTI_API_H
#define GPUFL_BACKEND_CUPTI_CUPTI_API_H

#include <stddef.h>

#include <cupti.h>
#include <cupti_pcsampling.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

#include "backend/cupti/profiler_host_abi.h"

#define GFL_CUPTI_FN(name) __typeof__(&name) name

typedef struct gfl_cupti_api {
    void *lib;
    char path[4096]; /* the library actually loaded */
    GFL_CUPTI_FN(cuptiGetResultString);
    GFL_CUPTI_FN(cuptiGetVersion);
    GFL_CUPTI_FN(cuptiActivityRegisterCallbacks);
    GFL_CUPTI_FN(cuptiActivityRegisterTimestampCallback); /* optional */
    GFL_CUPTI_FN(cuptiActivityEnable);
    GFL_CUPTI_FN(cuptiActivityDisable);
    GFL_CUPTI_FN(cuptiActivityFlushAll);
    GFL_CUPTI_FN(cuptiActivityGetNextRecord);
    GFL_CUPTI_FN(cuptiActivityGetNumDroppedRecords);
    GFL_CUPTI_FN(cuptiActivitySetAttribute);
    GFL_CUPTI_FN(cuptiActivityEnableRuntimeApi); /* optional: API records of chosen calls */
    GFL_CUPTI_FN(cuptiActivityEnableDriverApi);  /* optional */
    GFL_CUPTI_FN(cuptiSetThreadIdType);          /* optional */
    GFL_CUPTI_FN(cuptiSubscribe);
    GFL_CUPTI_FN(cuptiSubscribe_v2); /* optional: names the other subscriber */
    GFL_CUPTI_FN(cuptiUnsubscribe);
    GFL_CUPTI_FN(cuptiEnableCallback);
    GFL_CUPTI_FN(cuptiEnableDomain);
    GFL_CUPTI_FN(cuptiGetCallbackName);
    GFL_CUPTI_FN(cuptiFinalize); /* optional: detach between trace windows */
    /* optional, PC sampling (pc_sampling.h) and source lines (cubin_store.h) */
    GFL_CUPTI_FN(cuptiGetDeviceId);
    GFL_CUPTI_FN(cuptiPCSamplingGetNumStallReasons);
    GFL_CUPTI_FN(cuptiPCSamplingGetStallReasons);
    GFL_CUPTI_FN(cuptiPCSamplingSetConfigurationAttribute);
    GFL_CUPTI_FN(cuptiPCSamplingGetConfigurationAttribute);
    GFL_CUPTI_FN(cuptiPCSamplingEnable);
    GFL_CUPTI_FN(cuptiPCSamplingDisable);
    GFL_CUPTI_FN(cuptiPCSamplingGetData);
    GFL_CUPTI_FN(cuptiGetCubinCrc);
    GFL_CUPTI_FN(cuptiGetSassToSourceCorrelation);
    /* Optional, all of them: the profiler API (PM sampling, range
     * profiling). A CUPTI older than 12.6 lacks them, and only the engines
     * that need them say so (gfl_cupti_profiler_missing). */
    GFL_CUPTI_FN(cuptiGetTimestamp);
    GFL_CUPTI_FN(cuptiProfilerInitialize);
    GFL_CUPTI_FN(cuptiProfilerDeInitialize);
    GFL_CUPTI_FN(cuptiDeviceGetChipName);
    GFL_CUPTI_FN(cuptiProfilerHostInitialize);
    GFL_CUPTI_FN(cuptiProfilerHostDeinitialize);
    GFL_CUPTI_FN(cuptiProfilerHostConfigAddMetrics);
    GFL_CUPTI_FN(cuptiProfilerHostGetConfigImageSize);
    GFL_CUPTI_FN(cuptiProfilerHostGetConfigImage);
    GFL_CUPTI_FN(cuptiProfilerHostGetNumOfPasses);
    GFL_CUPTI_FN(cuptiProfilerHostEvaluateToGpuValues);
    gfl_cupti_single_pass_set_fn cuptiProfilerHostGetMetricsInSinglePassSet; /* CUPTI 13.1 and later */
    GFL_CUPTI_FN(cuptiPmSamplingGetCounterAvailability);
    GFL_CUPTI_FN(cuptiPmSamplingEnable);
    GFL_CUPTI_FN(cuptiPmSamplingDisable);
    GFL_CUPTI_FN(cuptiPmSamplingSetConfig);
    GFL_CUPTI_FN(cuptiPmSamplingStart);
    GFL_CUPTI_FN(cuptiPmSamplingStop);
    GFL_CUPTI_FN(cuptiPmSamplingDecodeData);
    GFL_CUPTI_FN(cuptiPmSamplingGetCounterDataSize);
    GFL_CUPTI_FN(cuptiPmSamplingCounterDataImageInitialize);
    GFL_CUPTI_FN(cuptiPmSamplingGetCounterDataInfo);
    GFL_CUPTI_FN(cuptiPmSamplingCounterDataGetSampleInfo);
    /* the range profiler (range_profiler.h) */
    GFL_CUPTI_FN(cuptiRangeProfilerEnable);
    GFL_CUPTI_FN(cuptiRangeProfilerDisable);
    GFL_CUPTI_FN(cuptiRangeProfilerSetConfig);
    GFL_CUPTI_FN(cuptiRangeProfilerStart);
    GFL_CUPTI_FN(cuptiRangeProfilerStop);
    GFL_CUPTI_FN(cuptiRangeProfilerPushRange);
    GFL_CUPTI_FN(cuptiRangeProfilerPopRange);
    GFL_CUPTI_FN(cuptiRangeProfilerDecodeData);
    GFL_CUPTI_FN(cuptiRangeProfilerGetCounterDataSize);
    GFL_CUPTI_FN(cuptiRangeProfilerCounterDataImageInitialize);
    GFL_CUPTI_FN(cuptiRangeProfilerGetCounterDataInfo);
    GFL_CUPTI_FN(cuptiRangeProfilerCounterDataGetRangeInfo);
    /* optional, the SASS metrics engine (sass_metrics.c): absent from a
     * CUPTI older than 12.5, which then cannot record it */
    GFL_CUPTI_FN(cuptiSassMetricsGetNumOfMetrics);
    GFL_CUPTI_FN(cuptiSassMetricsGetMetrics);
    GFL_CUPTI_FN(cuptiSassMetricsGetProperties);
    GFL_CUPTI_FN(cuptiSassMetricsSetConfig);
    GFL_CUPTI_FN(cuptiSassMetricsUnsetConfig);
    GFL_CUPTI_FN(cuptiSassMetricsEnable);
    GFL_CUPTI_FN(cuptiSassMetricsDisable);
    GFL_CUPTI_FN(cuptiSassMetricsGetDataProperties);
    GFL_CUPTI_FN(cuptiSassMetricsFlushData);
} gfl_cupti_api;

/* Loads libcupti and binds every required function. Returns 0, or -1 with
 * the reason in err. */
int gfl_cupti_open(gfl_cupti_api *api, char *err, size_t err_len);

/* The first function of the host profiler API (chip name, config images,
 * evaluation) that api lacks, or NULL when it has them all. */
const char *gfl_cupti_profiler_host_missing(const gfl_cupti_api *api);

/* Likewise for PM sampling (the host profiler API included). */
const char *gfl_cupti_pm_sampling_missing(const gfl_cupti_api *api);

/* Likewise for the range profiler (the host profiler API included). */
const char *gfl_cupti_range_profiler_missing(const gfl_cupti_api *api);

/* CUPTI's text for rc ("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", ...). */
const char *gfl_cupti_error(const gfl_cupti_api *api, CUptiResult rc);

/* Why the GPU's performance counters were refused, in words a user can act
 * on, when rc says so (no permission, another tool holds them); NULL for
 * any other rc. Every engine above Trace says it the same way. */
const char *gfl_cupti_counters_refused(CUptiResult rc);

#endif /* GPUFL_BACKEND_CUPTI_CUPTI_API_H */
