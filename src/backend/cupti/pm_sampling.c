/*
 * PM sampling on one device (see pm_sampling.h). CUPTI's order: the
 * profiler is initialised and the chip named (profiler_host.c), the
 * device's counter availability read, PM sampling enabled on the device;
 * configure builds the config image for the chip and hands it over with
 * the buffer size, interval and modes; decode moves samples from the
 * hardware buffer into a counter data image and evaluates each completed
 * one. The image is kept between decodes, because its last sample may be
 * incomplete and completes at the next decode; it starts over once full.
 */
#include "backend/cupti/pm_sampling.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cupti/cupti_api.h"
#include "backend/cupti/profiler_host.h"

#define MAX_DEVICES 64

typedef enum pm_state { PM_OFF, PM_ENABLED, PM_CONFIGURED, PM_STARTED } pm_state;

struct gpufl_pm_handle {
    int device;
    pm_state state;
    CUpti_PmSampling_Object *object;
    char chip[64];
    uint8_t *availability; /* the device's counter availability image */
    gfl_profiler_host host;
    uint8_t *image; /* counter data image for image_max samples */
    size_t image_size;
    uint32_t image_max;
    size_t consumed; /* samples of the image already returned */
    bool image_full;
    uint32_t image_limit; /* samples CUPTI decoded into at most (see decode); 0 none yet */
};

/* CUPTI is loaded once for every collector of the process. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gfl_cupti_api api;
static bool api_open;
static bool device_enabled[MAX_DEVICES]; /* under lock */

int gfl_pm_status_of(int rc)
{
    switch (rc) {
    case CUPTI_SUCCESS: return GPUFL_PM_OK;
    case CUPTI_ERROR_INVALID_DEVICE: return GPUFL_PM_E_INVALID_DEVICE;
    case CUPTI_ERROR_OUT_OF_MEMORY: return GPUFL_PM_E_OUT_OF_MEMORY;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES: return GPUFL_PM_E_INSUFFICIENT_PRIVILEGES;
    case GFL_CUPTI_MISSING: return GPUFL_PM_E_LIBRARY_NOT_LOADED;
    case CUPTI_ERROR_INVALID_PARAMETER:
    case CUPTI_ERROR_INVALID_METRIC_NAME:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
    case CUPTI_ERROR_NOT_SUPPORTED: return GPUFL_PM_E_INVALID_ARGUMENT;
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED: return GPUFL_PM_E_BUSY;
    default: return GPUFL_PM_E_INTERNAL;
    }
}

/* A CUPTI failure: its status, with the call named in err. */
static int cupti_fail(CUptiResult rc, char *err, size_t err_len, const char *call, int device)
{
    snprintf(err, err_len, "%s on device %d: %s", call, device, gfl_cupti_error(&api, rc));
    if (rc == CUPTI_ERROR_HARDWARE_BUSY)
        snprintf(err + strlen(err), err_len - strlen(err),
                 " (another profiler, such as ncu or DCGM's profiling module, holds the counters)");
    else if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        snprintf(err + strlen(err), err_len - strlen(err),
                 " (run as root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0)");
    return gfl_pm_status_of(rc);
}

static int state_fail(int status, char *err, size_t err_len, const char *fmt, int device)
{
    snprintf(err, err_len, fmt, device);
    return status;
}

static int open_handle(int device, gpufl_pm_handle **out, char *err, size_t err_len)
{
    *out = NULL;
    if (device < 0 || device >= MAX_DEVICES)
        return state_fail(GPUFL_PM_E_INVALID_DEVICE, err, err_len, "device %d: not a CUDA device ordinal", device);
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (!api_open) {
        if (gfl_cupti_open(&api, err, err_len) == 0)
            api_open = true;
        else
            rc = GPUFL_PM_E_LIBRARY_NOT_LOADED;
    }
    const char *missing = api_open ? gfl_cupti_pm_sampling_missing(&api) : NULL;
    if (missing) {
        snprintf(err, err_len, "%s lacks %s: PM sampling needs CUPTI 12.6 or later", api.path, missing);
        rc = GPUFL_PM_E_LIBRARY_NOT_LOADED;
    }
    pthread_mutex_unlock(&lock);
    if (rc)
        return rc;
    gpufl_pm_handle *h = calloc(1, sizeof *h);
    if (!h)
        return state_fail(GPUFL_PM_E_OUT_OF_MEMORY, err, err_len, "device %d: no memory for a collector", device);
    h->device = device;
    *out = h;
    return 0;
}

static void free_config(gpufl_pm_handle *h)
{
    gfl_profiler_host_destroy(&h->host);
    free(h->image);
    h->image = NULL;
    h->image_size = 0;
    h->image_max = 0;
    h->consumed = 0;
    h->image_full = false;
    h->image_limit = 0;
}

static int enable(gpufl_pm_handle *h, char *err, size_t err_len)
{
    if (h->state != PM_OFF)
        return state_fail(GPUFL_PM_E_ALREADY_ENABLED, err, err_len,
                          "device %d: this collector already enabled PM sampling", h->device);
    pthread_mutex_lock(&lock);
    bool taken = device_enabled[h->device];
    device_enabled[h->device] = true;
    pthread_mutex_unlock(&lock);
    if (taken)
        return state_fail(GPUFL_PM_E_ALREADY_ENABLED, err, err_len,
                          "device %d: another collector of this process has PM sampling enabled on it", h->device);
    CUptiResult rc = gfl_profiler_chip_name(&api, h->device, h->chip, sizeof h->chip, err, err_len);
    if (rc != CUPTI_SUCCESS)
        goto fail_status;
    CUpti_PmSampling_GetCounterAvailability_Params avail = {
        .structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE,
        .deviceIndex = (size_t)h->device,
    };
    rc = api.cuptiPmSamplingGetCounterAvailability(&avail);
    if (rc != CUPTI_SUCCESS)
        goto fail_call;
    free(h->availability);
    h->availability = malloc(avail.counterAvailabilityImageSize ? avail.counterAvailabilityImageSize : 1);
    if (!h->availability) {
        rc = CUPTI_ERROR_OUT_OF_MEMORY;
        goto fail_call;
    }
    avail.pCounterAvailabilityImage = h->availability;
    rc = api.cuptiPmSamplingGetCounterAvailability(&avail);
    if (rc != CUPTI_SUCCESS)
        goto fail_call;
    CUpti_PmSampling_Enable_Params en = {.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE,
                                         .deviceIndex = (size_t)h->device};
    rc = api.cuptiPmSamplingEnable(&en);
    if (rc != CUPTI_SUCCESS) {
        int status = cupti_fail(rc, err, err_len, "cuptiPmSamplingEnable", h->device);
        free(h->availability);
        h->availability = NULL;
        pthread_mutex_lock(&lock);
        device_enabled[h->device] = false;
        pthread_mutex_unlock(&lock);
        return status;
    }
    h->object = en.pPmSamplingObject;
    h->state = PM_ENABLED;
    return 0;
fail_call:
    (void)cupti_fail(rc, err, err_len, "cuptiPmSamplingGetCounterAvailability", h->device);
fail_status:
    free(h->availability);
    h->availability = NULL;
    pthread_mutex_lock(&lock);
    device_enabled[h->device] = false;
    pthread_mutex_unlock(&lock);
    return gfl_pm_status_of(rc);
}

/* cfg's fields that the caller's struct has, the rest defaulted. */
static gpufl_pm_config effective(const gpufl_pm_config *cfg)
{
    gpufl_pm_config c;
    gpufl__pm_config_defaults(&c);
    size_t n = cfg->size < sizeof c ? cfg->size : sizeof c;
    if (n > sizeof c.size)
        memcpy((char *)&c + sizeof c.size, (const char *)cfg + sizeof c.size, n - sizeof c.size);
    return c;
}

static int configure(gpufl_pm_handle *h, const gpufl_pm_config *cfg_in, char *err, size_t err_len)
{
    if (h->state == PM_OFF)
        return state_fail(GPUFL_PM_E_NOT_ENABLED, err, err_len, "device %d: enable() before configure()", h->device);
    if (h->state == PM_STARTED)
        return state_fail(GPUFL_PM_E_ALREADY_STARTED, err, err_len,
                          "device %d: sampling is running; stop() before configuring again", h->device);
    if (!cfg_in || cfg_in->size < offsetof(gpufl_pm_config, hardware_buffer_size))
        return state_fail(GPUFL_PM_E_INVALID_ARGUMENT, err, err_len,
                          "device %d: configure() needs a gpufl_pm_config set by gpufl_pm_config_init()", h->device);
    gpufl_pm_config cfg = effective(cfg_in);
    const char *set =
        cfg.single_pass_metric_set_name && cfg.single_pass_metric_set_name[0] ? cfg.single_pass_metric_set_name : NULL;
    if ((cfg.num_metrics == 0 || !cfg.metrics) && !set)
        return state_fail(GPUFL_PM_E_INVALID_ARGUMENT, err, err_len,
                          "device %d: no metrics (give metric names or a single-pass metric set)", h->device);
    if ((unsigned)cfg.trigger_mode > GPUFL_PM_TRIGGER_GPU_TIME_INTERVAL ||
        (unsigned)cfg.append_mode > GPUFL_PM_APPEND_KEEP_LATEST)
        return state_fail(GPUFL_PM_E_INVALID_ARGUMENT, err, err_len,
                          "device %d: trigger_mode or append_mode is not one of gpufl_pm_sampling.h's", h->device);
    if (cfg.sampling_interval == 0 || cfg.hardware_buffer_size == 0)
        return state_fail(GPUFL_PM_E_INVALID_ARGUMENT, err, err_len,
                          "device %d: sampling_interval and hardware_buffer_size must be above 0", h->device);
    char **set_names = NULL;
    size_t n_set = 0;
    if (set) {
        CUptiResult rc = gfl_profiler_single_pass_set(&api, h->chip, set, &set_names, &n_set, err, err_len);
        if (rc != CUPTI_SUCCESS)
            return gfl_pm_status_of(rc);
    }
    size_t n = (cfg.metrics ? cfg.num_metrics : 0) + n_set;
    const char **names = calloc(n, sizeof *names);
    if (!names) {
        free(set_names);
        return state_fail(GPUFL_PM_E_OUT_OF_MEMORY, err, err_len, "device %d: no memory for the metric list",
                          h->device);
    }
    for (size_t i = 0; cfg.metrics && i < cfg.num_metrics; i++)
        names[i] = cfg.metrics[i];
    for (size_t i = 0; i < n_set; i++)
        names[n - n_set + i] = set_names[i];
    free_config(h);
    h->state = PM_ENABLED;
    CUptiResult rc = gfl_profiler_host_create(&h->host, &api, CUPTI_PROFILER_TYPE_PM_SAMPLING, h->chip, h->availability,
                                              names, n, err, err_len);
    free(names);
    free(set_names);
    if (rc != CUPTI_SUCCESS)
        return gfl_pm_status_of(rc);
    if (h->host.passes > 1) {
        snprintf(err, err_len,
                 "device %d: these %zu metrics need %zu passes on %s; PM sampling reads only what one pass "
                 "counts: ask for fewer",
                 h->device, h->host.n_metrics, h->host.passes, h->chip);
        free_config(h);
        return GPUFL_PM_E_INVALID_ARGUMENT;
    }
    CUpti_PmSampling_SetConfig_Params sc = {
        .structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE,
        .pPmSamplingObject = h->object,
        .configSize = h->host.config_size,
        .pConfig = h->host.config,
        .hardwareBufferSize = (size_t)cfg.hardware_buffer_size,
        .samplingInterval = cfg.sampling_interval,
        .triggerMode = (CUpti_PmSampling_TriggerMode)cfg.trigger_mode,
        .hwBufferAppendMode = (CUpti_PmSampling_HardwareBuffer_AppendMode)cfg.append_mode,
    };
    rc = api.cuptiPmSamplingSetConfig(&sc);
    if (rc != CUPTI_SUCCESS) {
        free_config(h);
        return cupti_fail(rc, err, err_len, "cuptiPmSamplingSetConfig", h->device);
    }
    h->state = PM_CONFIGURED;
    return 0;
}

static int start(gpufl_pm_handle *h, char *err, size_t err_len)
{
    if (h->state == PM_OFF)
        return state_fail(GPUFL_PM_E_NOT_ENABLED, err, err_len, "device %d: enable() and configure() first", h->device);
    if (h->state == PM_ENABLED)
        return state_fail(GPUFL_PM_E_NOT_CONFIGURED, err, err_len, "device %d: configure() before start()", h->device);
    if (h->state == PM_STARTED)
        return state_fail(GPUFL_PM_E_ALREADY_STARTED, err, err_len, "device %d: sampling is already running",
                          h->device);
    CUpti_PmSampling_Start_Params p = {.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE,
                                       .pPmSamplingObject = h->object};
    CUptiResult rc = api.cuptiPmSamplingStart(&p);
    if (rc != CUPTI_SUCCESS)
        return cupti_fail(rc, err, err_len, "cuptiPmSamplingStart", h->device);
    h->state = PM_STARTED;
    return 0;
}

static int stop(gpufl_pm_handle *h, char *err, size_t err_len)
{
    if (h->state == PM_OFF)
        return state_fail(GPUFL_PM_E_NOT_ENABLED, err, err_len, "device %d: PM sampling is not enabled", h->device);
    if (h->state != PM_STARTED)
        return state_fail(GPUFL_PM_E_ALREADY_STOPPED, err, err_len, "device %d: sampling is not running", h->device);
    CUpti_PmSampling_Stop_Params p = {.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE,
                                      .pPmSamplingObject = h->object};
    CUptiResult rc = api.cuptiPmSamplingStop(&p);
    if (rc != CUPTI_SUCCESS)
        return cupti_fail(rc, err, err_len, "cuptiPmSamplingStop", h->device);
    h->state = PM_CONFIGURED;
    return 0;
}

/* A counter data image of max samples for the configured metrics. */
static int new_image(gpufl_pm_handle *h, uint32_t max, char *err, size_t err_len)
{
    CUpti_PmSampling_GetCounterDataSize_Params sz = {
        .structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE,
        .pPmSamplingObject = h->object,
        .pMetricNames = (const char **)h->host.metrics,
        .numMetrics = h->host.n_metrics,
        .maxSamples = max,
    };
    CUptiResult rc = api.cuptiPmSamplingGetCounterDataSize(&sz);
    if (rc != CUPTI_SUCCESS)
        return cupti_fail(rc, err, err_len, "cuptiPmSamplingGetCounterDataSize", h->device);
    uint8_t *image = malloc(sz.counterDataSize ? sz.counterDataSize : 1);
    if (!image)
        return state_fail(GPUFL_PM_E_OUT_OF_MEMORY, err, err_len, "device %d: no memory for the counter data",
                          h->device);
    free(h->image);
    h->image = image;
    h->image_size = sz.counterDataSize;
    h->image_max = max;
    h->image_full = true; /* initialised below, before the first decode into it */
    return 0;
}

static int reset_image(gpufl_pm_handle *h, char *err, size_t err_len)
{
    CUpti_PmSampling_CounterDataImage_Initialize_Params p = {
        .structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE,
        .pPmSamplingObject = h->object,
        .counterDataSize = h->image_size,
        .pCounterData = h->image,
    };
    CUptiResult rc = api.cuptiPmSamplingCounterDataImageInitialize(&p);
    if (rc != CUPTI_SUCCESS)
        return cupti_fail(rc, err, err_len, "cuptiPmSamplingCounterDataImageInitialize", h->device);
    h->consumed = 0;
    h->image_full = false;
    return 0;
}

/* The result block: the struct, then its arrays, then its strings. */
static gpufl_pm_counter_data *new_data(const gpufl_pm_handle *h, size_t n)
{
    size_t m = h->host.n_metrics;
    size_t text = strlen(h->chip) + 1;
    for (size_t i = 0; i < m; i++)
        text += strlen(h->host.metrics[i]) + 1;
    size_t bytes =
        sizeof(gpufl_pm_counter_data) + m * sizeof(char *) + 2 * n * sizeof(uint64_t) + n * m * sizeof(double) + text;
    uint8_t *block = calloc(1, bytes);
    if (!block)
        return NULL;
    gpufl_pm_counter_data *d = (gpufl_pm_counter_data *)block;
    const char **names = (const char **)(d + 1);
    uint64_t *start_ns = (uint64_t *)(names + m);
    uint64_t *end_ns = start_ns + n;
    double *values = (double *)(end_ns + n);
    char *s = (char *)(values + n * m);
    d->size = sizeof *d;
    d->num_metrics = (uint32_t)m;
    for (size_t i = 0; i < m; i++) {
        size_t len = strlen(h->host.metrics[i]) + 1;
        memcpy(s, h->host.metrics[i], len);
        names[i] = s;
        s += len;
    }
    memcpy(s, h->chip, strlen(h->chip) + 1);
    d->chip_name = s;
    d->metrics = names;
    d->start_ns = start_ns;
    d->end_ns = end_ns;
    d->values = values;
    d->num_samples = n;
    return d;
}

static int decode(gpufl_pm_handle *h, uint32_t max, gpufl_pm_counter_data **out, char *err, size_t err_len)
{
    *out = NULL;
    if (h->state == PM_OFF)
        return state_fail(GPUFL_PM_E_NOT_ENABLED, err, err_len, "device %d: PM sampling is not enabled", h->device);
    if (h->state == PM_ENABLED)
        return state_fail(GPUFL_PM_E_NOT_CONFIGURED, err, err_len, "device %d: configure() and start() first",
                          h->device);
    if (max == 0)
        max = GPUFL_PM_DEFAULT_MAX_SAMPLES;
    if (h->image_limit && max > h->image_limit)
        max = h->image_limit;
    int st;
    if (!h->image || h->image_max != max) {
        if ((st = new_image(h, max, err, err_len)) != 0)
            return st;
    }
    if (h->image_full && (st = reset_image(h, err, err_len)) != 0)
        return st;
    CUpti_PmSampling_DecodeData_Params dd;
    CUptiResult rc;
    for (;;) {
        dd = (CUpti_PmSampling_DecodeData_Params){
            .structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE,
            .pPmSamplingObject = h->object,
            .pCounterDataImage = h->image,
            .counterDataImageSize = h->image_size,
        };
        rc = api.cuptiPmSamplingDecodeData(&dd);
        /* On an H100 CUPTI refused to decode into images it had sized
         * itself once they were large (20000 samples of 6 metrics: out of
         * memory; 10000: an unknown error) and decoded 20000 of one metric.
         * An empty image that fails so is halved, down to 64 samples, and
         * the size that works is kept for this configuration. */
        bool too_big = rc == CUPTI_ERROR_OUT_OF_MEMORY || rc == CUPTI_ERROR_UNKNOWN;
        if (!too_big || h->consumed != 0 || h->image_max <= 64)
            break;
        h->image_limit = h->image_max / 2;
        if ((st = new_image(h, h->image_limit, err, err_len)) != 0 || (st = reset_image(h, err, err_len)) != 0)
            return st;
    }
    if (rc != CUPTI_SUCCESS)
        return cupti_fail(rc, err, err_len, "cuptiPmSamplingDecodeData", h->device);
    CUpti_PmSampling_GetCounterDataInfo_Params info = {
        .structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE,
        .pCounterDataImage = h->image,
        .counterDataImageSize = h->image_size,
    };
    rc = api.cuptiPmSamplingGetCounterDataInfo(&info);
    if (rc != CUPTI_SUCCESS)
        return cupti_fail(rc, err, err_len, "cuptiPmSamplingGetCounterDataInfo", h->device);
    size_t done = info.numCompletedSamples < h->consumed ? h->consumed : info.numCompletedSamples;
    gpufl_pm_counter_data *d = new_data(h, done - h->consumed);
    if (!d)
        return state_fail(GPUFL_PM_E_OUT_OF_MEMORY, err, err_len, "device %d: no memory for the decoded samples",
                          h->device);
    double *values = (double *)d->values;
    uint64_t *start_ns = (uint64_t *)d->start_ns, *end_ns = (uint64_t *)d->end_ns;
    for (size_t i = h->consumed, k = 0; i < done; i++, k++) {
        CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {
            .structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE,
            .pPmSamplingObject = h->object,
            .pCounterDataImage = h->image,
            .counterDataImageSize = h->image_size,
            .sampleIndex = i,
        };
        rc = api.cuptiPmSamplingCounterDataGetSampleInfo(&si);
        if (rc == CUPTI_SUCCESS)
            rc = gfl_profiler_host_evaluate(&h->host, h->image, h->image_size, i, values + k * d->num_metrics, err,
                                            err_len);
        else
            (void)cupti_fail(rc, err, err_len, "cuptiPmSamplingCounterDataGetSampleInfo", h->device);
        if (rc != CUPTI_SUCCESS) {
            free(d);
            return gfl_pm_status_of(rc);
        }
        start_ns[k] = si.startTimestamp;
        end_ns[k] = si.endTimestamp;
    }
    h->consumed = done;
    d->num_total_samples = info.numTotalSamples;
    d->num_populated_samples = info.numPopulatedSamples;
    d->num_completed_samples = info.numCompletedSamples;
    d->overflow = dd.overflow != 0;
    /* More unless CUPTI says it reached the end of the records: on an H100
     * a decode into a 20000-sample image gave 20000 samples of a 0.7 s run
     * at 10 us and did not say COUNTER_DATA_FULL. */
    d->more = dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS ||
              info.numPopulatedSamples >= info.numTotalSamples;
    /* Full: the next decode starts a fresh image (its samples are all
     * returned by now, the incomplete one included once it completed). */
    if (d->more || info.numPopulatedSamples >= info.numTotalSamples)
        h->image_full = true;
    *out = d;
    return 0;
}

static void free_data(gpufl_pm_counter_data *d) { free(d); }

static int disable(gpufl_pm_handle *h, char *err, size_t err_len)
{
    if (h->state == PM_OFF)
        return state_fail(GPUFL_PM_E_NOT_ENABLED, err, err_len, "device %d: PM sampling is not enabled", h->device);
    int st = 0;
    if (h->state == PM_STARTED)
        st = stop(h, err, err_len);
    CUpti_PmSampling_Disable_Params p = {.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE,
                                         .pPmSamplingObject = h->object};
    CUptiResult rc = api.cuptiPmSamplingDisable(&p);
    free_config(h);
    free(h->availability);
    h->availability = NULL;
    h->object = NULL;
    h->state = PM_OFF;
    pthread_mutex_lock(&lock);
    device_enabled[h->device] = false;
    pthread_mutex_unlock(&lock);
    if (rc != CUPTI_SUCCESS)
        return cupti_fail(rc, err, err_len, "cuptiPmSamplingDisable", h->device);
    return st;
}

static void close_handle(gpufl_pm_handle *h)
{
    if (!h)
        return;
    char err[256];
    if (h->state != PM_OFF)
        (void)disable(h, err, sizeof err);
    free(h);
}

static const gpufl_pm_ops ops = {
    .size = sizeof ops,
    .abi = GPUFL_PM_ABI,
    .open = open_handle,
    .close = close_handle,
    .enable = enable,
    .configure = configure,
    .start = start,
    .stop = stop,
    .decode = decode,
    .free_data = free_data,
    .disable = disable,
};

const gpufl_pm_ops *gfl_pm_sampling_ops(void) { return &ops; }

__attribute__((visibility("default"))) const gpufl_pm_ops *gpufl_pm_entry(void) { return &ops; }
