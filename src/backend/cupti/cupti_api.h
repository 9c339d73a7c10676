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
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

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
    /* optional, the SASS metrics engine (sass_metrics.c): absent from a
     * CUPTI older than 12.5, which then cannot record it */
    GFL_CUPTI_FN(cuptiGetDeviceId);
    GFL_CUPTI_FN(cuptiDeviceGetChipName);
    GFL_CUPTI_FN(cuptiProfilerInitialize);
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

/* CUPTI's text for rc ("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", ...). */
const char *gfl_cupti_error(const gfl_cupti_api *api, CUptiResult rc);

#endif /* GPUFL_BACKEND_CUPTI_CUPTI_API_H */
