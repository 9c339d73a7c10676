/*
 * CUPTI's host profiler API (cupti_profiler_host.h), declared here because
 * the toolkit's header includes the C++ header <string> and cannot be read
 * by a C compiler. The layouts are the documented ones of CUDA 13: each
 * params struct starts with its size, CUPTI reads only what that size
 * covers, and fields only ever grow at the end, as with every profiler API
 * struct. The fake libcupti of the tests includes this file too.
 */
#ifndef GPUFL_BACKEND_CUPTI_PROFILER_HOST_ABI_H
#define GPUFL_BACKEND_CUPTI_PROFILER_HOST_ABI_H

#include <stddef.h>
#include <stdint.h>

#include <cupti_result.h>

#ifndef _CUPTI_PROFILER_HOST_H_

#ifndef CUPTI_PROFILER_STRUCT_SIZE
#define CUPTI_PROFILER_STRUCT_SIZE(type_, lastfield_) (offsetof(type_, lastfield_) + sizeof(((type_ *)0)->lastfield_))
#endif

typedef enum CUpti_ProfilerType {
    CUPTI_PROFILER_TYPE_RANGE_PROFILER,
    CUPTI_PROFILER_TYPE_PM_SAMPLING,
    CUPTI_PROFILER_TYPE_PROFILER_INVALID
} CUpti_ProfilerType;

typedef struct CUpti_Profiler_Host_Object CUpti_Profiler_Host_Object;

typedef struct CUpti_Profiler_Host_Initialize_Params {
    size_t structSize;
    void *pPriv;
    CUpti_ProfilerType profilerType;
    const char *pChipName;
    const uint8_t *pCounterAvailabilityImage;
    CUpti_Profiler_Host_Object *pHostObject; /* out */
} CUpti_Profiler_Host_Initialize_Params;

typedef struct CUpti_Profiler_Host_Deinitialize_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
} CUpti_Profiler_Host_Deinitialize_Params;

typedef struct CUpti_Profiler_Host_ConfigAddMetrics_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
    const char **ppMetricNames;
    size_t numMetrics;
} CUpti_Profiler_Host_ConfigAddMetrics_Params;

typedef struct CUpti_Profiler_Host_GetConfigImageSize_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
    size_t configImageSize; /* out */
} CUpti_Profiler_Host_GetConfigImageSize_Params;

typedef struct CUpti_Profiler_Host_GetConfigImage_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
    size_t configImageSize;
    uint8_t *pConfigImage; /* out */
} CUpti_Profiler_Host_GetConfigImage_Params;

typedef struct CUpti_Profiler_Host_GetNumOfPasses_Params {
    size_t structSize;
    void *pPriv;
    size_t configImageSize;
    uint8_t *pConfigImage;
    size_t numOfPasses; /* out */
} CUpti_Profiler_Host_GetNumOfPasses_Params;

typedef struct CUpti_Profiler_Host_EvaluateToGpuValues_Params {
    size_t structSize;
    void *pPriv;
    CUpti_Profiler_Host_Object *pHostObject;
    const uint8_t *pCounterDataImage;
    size_t counterDataImageSize;
    size_t rangeIndex;
    const char **ppMetricNames;
    size_t numMetrics;
    double *pMetricValues; /* out, numMetrics of them */
} CUpti_Profiler_Host_EvaluateToGpuValues_Params;

CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *pParams);
CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *pParams);
CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *pParams);
CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *pParams);
CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *pParams);
CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *pParams);
CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *pParams);

#endif /* _CUPTI_PROFILER_HOST_H_ */

/* Newer than CUDA 13.0's header (documented from CUPTI 13.1 on): the
 * metrics of one of the chip's single-pass metric sets. Called twice: with
 * both buffers NULL it says how many metrics and how many bytes of names;
 * then it fills pMetricsBuffer with the names, NUL-terminated, at the
 * offsets it writes to pMetricsIndicesBuffer. */
typedef struct gfl_cupti_single_pass_set_params {
    size_t structSize;
    void *pPriv;
    const char *pChipName;
    const char *pSinglePassSetName;
    size_t numOfMetricsInSinglePassSet; /* in/out */
    size_t metricsBufferSize;           /* in/out */
    size_t *pMetricsIndicesBuffer;
    uint8_t *pMetricsBuffer;
} gfl_cupti_single_pass_set_params;

typedef CUptiResult (*gfl_cupti_single_pass_set_fn)(gfl_cupti_single_pass_set_params *pParams);

#endif /* GPUFL_BACKEND_CUPTI_PROFILER_HOST_ABI_H */
