/*
 * The range profiler engine (see range_profiler.h). The profiled thread's
 * scopes (and NVTX ranges, on request) form one stack here; every change
 * of its top pops CUPTI's open range and pushes one for the new top, so
 * ranges follow the innermost scope. Ranges are named by their slot in
 * the pass ("7") and matched back by that name when decoded.
 */
#include "backend/cupti/range_profiler.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cupti/driver_api.h"
#include "backend/cupti/profiler_host.h"

#define MAX_METRICS 32
#define MAX_DEPTH 64

const char *const gfl_rp_default_metrics[] = {
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sector_hit_rate.pct",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
};
const size_t gfl_rp_n_default_metrics = sizeof gfl_rp_default_metrics / sizeof *gfl_rp_default_metrics;

typedef struct frame {
    uint64_t scope; /* 0: an NVTX range */
    uint32_t name;
} frame;

typedef struct range {
    uint64_t scope;
    uint32_t name;
    uint64_t begin, end; /* session clock */
} range;

static struct {
    pthread_mutex_t lock;
    gfl_rp_config cfg;
    bool running; /* between start and stop */
    bool broken;  /* failed once: nothing more until stop */
    bool enabled; /* the CUPTI object exists */
    bool started; /* between cuptiRangeProfilerStart and Stop */
    bool range_open;
    gfl_profiler_host host; /* the metrics' config */
    char *names;            /* the option's text, split in place */
    const char *metrics[MAX_METRICS];
    uint32_t metric_ids[MAX_METRICS];
    size_t n_metrics;
    size_t time_metric; /* index of gpu__time_duration.sum, n_metrics if absent */
    CUcontext ctx;      /* the context profiled, NULL until known */
    uint32_t device;
    bool ctx_gone;
    bool pending;       /* prepare() to be tried again once a context exists */
    const char *option; /* range_profiler_metrics, "default" when empty */
    CUpti_RangeProfiler_Object *obj;
    uint8_t *image;
    size_t image_size;
    uint32_t generation; /* which start a thread's role belongs to */
    frame stack[MAX_DEPTH];
    unsigned depth, lost_depth; /* frames beyond MAX_DEPTH are counted, not kept */
    range ranges[GFL_RP_RANGES_PER_PASS];
    size_t n_ranges;
    uint32_t number; /* ranges numbered in the session */
    uint64_t measured, dropped, other_threads, empty, lost_events;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool prepared(void);

/* 0: not decided for this start; 1: the profiled thread; 2: another. */
static __thread uint32_t my_generation;
static __thread int my_role;

static void say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int level, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    R.cfg.host->log(level, msg);
}

/* CUPTI's refusal in words a user can act on, or NULL. */
static const char *cause(CUptiResult rc)
{
    const char *counters = gfl_cupti_counters_refused(rc);
    if (counters)
        return counters;
    switch (rc) {
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE: return "this GPU or driver does not support the range profiler";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED: return "the range profiler is not supported on this virtual GPU";
    default: return NULL;
    }
}

static void describe(char *err, size_t err_len, const char *call, CUptiResult rc)
{
    const char *why = cause(rc);
    snprintf(err, err_len, "range profiler: %s: %s%s%s", call, gfl_cupti_error(R.cfg.api, rc), why ? "; " : "",
             why ? why : "");
}

/* Lets go of the CUPTI object (after a failure or at the end). */
static void disable(void)
{
    const gfl_cupti_api *api = R.cfg.api;
    if (R.started) {
        CUpti_RangeProfiler_Stop_Params p = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE,
                                             .pRangeProfilerObject = R.obj};
        (void)api->cuptiRangeProfilerStop(&p);
        R.started = false;
    }
    if (R.enabled) {
        CUpti_RangeProfiler_Disable_Params p = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE,
                                                .pRangeProfilerObject = R.obj};
        (void)api->cuptiRangeProfilerDisable(&p);
        R.enabled = false;
        R.obj = NULL;
    }
    R.range_open = false;
    free(R.image);
    R.image = NULL;
    R.image_size = 0;
}

/* The profiler cannot go on: say why once, drop what it held. */
static void fail(const char *call, CUptiResult rc)
{
    char err[640];
    describe(err, sizeof err, call, rc);
    R.broken = true;
    disable();
    R.n_ranges = 0;
    R.cfg.failed(err);
}

/* Fresh counter data for a pass, and the config that goes with it. */
static CUptiResult arm(const char **call)
{
    const gfl_cupti_api *api = R.cfg.api;
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
        .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE,
        .pRangeProfilerObject = R.obj,
        .counterDataSize = R.image_size,
        .pCounterData = R.image,
    };
    CUptiResult rc = api->cuptiRangeProfilerCounterDataImageInitialize(&init);
    if (rc != CUPTI_SUCCESS) {
        *call = "cuptiRangeProfilerCounterDataImageInitialize";
        return rc;
    }
    CUpti_RangeProfiler_SetConfig_Params set = {
        .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE,
        .pRangeProfilerObject = R.obj,
        .configSize = R.host.config_size,
        .pConfig = R.host.config,
        .counterDataImageSize = R.image_size,
        .pCounterDataImage = R.image,
        .range = CUPTI_UserRange,
        .replayMode = CUPTI_UserReplay,
        .maxRangesPerPass = GFL_RP_RANGES_PER_PASS,
        .numNestingLevels = 1,
        .minNestingLevel = 1,
        .passIndex = 0,
        .targetNestingLevel = 1,
    };
    rc = api->cuptiRangeProfilerSetConfig(&set);
    if (rc != CUPTI_SUCCESS) {
        *call = "cuptiRangeProfilerSetConfig";
        return rc;
    }
    CUpti_RangeProfiler_Start_Params start = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE,
                                              .pRangeProfilerObject = R.obj};
    rc = api->cuptiRangeProfilerStart(&start);
    if (rc != CUPTI_SUCCESS) {
        *call = "cuptiRangeProfilerStart";
        return rc;
    }
    R.started = true;
    return CUPTI_SUCCESS;
}

/* Enables the profiler on R.ctx, from the profiled thread. false: failed
 * (and said so). */
static bool enable(void)
{
    const gfl_cupti_api *api = R.cfg.api;
    CUpti_RangeProfiler_Enable_Params en = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, .ctx = R.ctx};
    CUptiResult rc = api->cuptiRangeProfilerEnable(&en);
    if (rc != CUPTI_SUCCESS) {
        fail("cuptiRangeProfilerEnable", rc);
        return false;
    }
    R.obj = en.pRangeProfilerObject;
    R.enabled = true;
    CUpti_RangeProfiler_GetCounterDataSize_Params size = {
        .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE,
        .pRangeProfilerObject = R.obj,
        .pMetricNames = R.metrics,
        .numMetrics = R.n_metrics,
        .maxNumOfRanges = GFL_RP_RANGES_PER_PASS,
        .maxNumRangeTreeNodes = GFL_RP_RANGES_PER_PASS,
    };
    rc = api->cuptiRangeProfilerGetCounterDataSize(&size);
    if (rc != CUPTI_SUCCESS) {
        fail("cuptiRangeProfilerGetCounterDataSize", rc);
        return false;
    }
    R.image = calloc(1, size.counterDataSize ? size.counterDataSize : 1);
    if (!R.image) {
        fail("the counter data image", CUPTI_ERROR_OUT_OF_MEMORY);
        return false;
    }
    R.image_size = size.counterDataSize;
    const char *call = NULL;
    rc = arm(&call);
    if (rc != CUPTI_SUCCESS) {
        fail(call, rc);
        return false;
    }
    say(GFL_LOG_DEBUG, "range profiler: profiling device %u, %zu metrics, %u ranges a pass", R.device, R.n_metrics,
        GFL_RP_RANGES_PER_PASS);
    return true;
}

static uint64_t fixed4(double v)
{
    return !(v > 0) ? 0 : v < 1e15 ? (uint64_t)(v * 10000.0 + 0.5) : 10000000000000000000ull;
}

/* Pushes the events of decoded range i of the image. */
static void emit(const range *g, const double *values)
{
    if (R.time_metric < R.n_metrics && !(values[R.time_metric] > 0)) {
        R.empty++; /* no GPU work in it: a scope boundary with nothing launched */
        return;
    }
    uint32_t number = ++R.number;
    R.measured++;
    for (size_t m = 0; m < R.n_metrics; m++) {
        gfl_event ev;
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_RANGE_METRIC;
        ev.h.device = (uint16_t)R.device;
        ev.h.ts = g->begin;
        ev.u.range_metric.end_ts = g->end > g->begin ? g->end : g->begin;
        ev.u.range_metric.scope_id = g->scope;
        ev.u.range_metric.name = g->name;
        ev.u.range_metric.metric = R.metric_ids[m];
        ev.u.range_metric.range = number;
        ev.u.range_metric.value_x10000 = fixed4(values[m]);
        if (R.cfg.host->push(&ev) != 0)
            R.lost_events++;
    }
}

/* Ends the pass: stops, decodes, evaluates every range into events. The
 * profiler is left stopped. false: failed (and said so). */
static bool decode_pass(void)
{
    const gfl_cupti_api *api = R.cfg.api;
    CUpti_RangeProfiler_Stop_Params stop = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE,
                                            .pRangeProfilerObject = R.obj};
    CUptiResult rc = api->cuptiRangeProfilerStop(&stop);
    R.started = false;
    if (rc != CUPTI_SUCCESS) {
        fail("cuptiRangeProfilerStop", rc);
        return false;
    }
    if (!stop.isAllPassSubmitted) { /* refused at start; CUPTI disagreeing is a failure, not a wrong figure */
        fail("cuptiRangeProfilerStop (the metrics need more than one pass)", CUPTI_ERROR_INVALID_OPERATION);
        return false;
    }
    CUpti_RangeProfiler_DecodeData_Params dec = {.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE,
                                                 .pRangeProfilerObject = R.obj};
    rc = api->cuptiRangeProfilerDecodeData(&dec);
    if (rc != CUPTI_SUCCESS) {
        fail("cuptiRangeProfilerDecodeData", rc);
        return false;
    }
    R.dropped += dec.numOfRangeDropped;
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
        .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE,
        .pCounterDataImage = R.image,
        .counterDataImageSize = R.image_size,
    };
    rc = api->cuptiRangeProfilerGetCounterDataInfo(&info);
    if (rc != CUPTI_SUCCESS) {
        fail("cuptiRangeProfilerGetCounterDataInfo", rc);
        return false;
    }
    double values[MAX_METRICS];
    for (size_t i = 0; i < info.numTotalRanges; i++) {
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params ri = {
            .structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE,
            .pCounterDataImage = R.image,
            .counterDataImageSize = R.image_size,
            .rangeIndex = i,
            .rangeDelimiter = "/",
        };
        if (api->cuptiRangeProfilerCounterDataGetRangeInfo(&ri) != CUPTI_SUCCESS || !ri.rangeName)
            continue;
        char *end = NULL;
        unsigned long slot = strtoul(ri.rangeName, &end, 10);
        if (end == ri.rangeName || *end || slot >= R.n_ranges)
            continue; /* not one of ours */
        char err[512];
        if (gfl_profiler_host_evaluate(&R.host, R.image, R.image_size, i, values, err, sizeof err) != CUPTI_SUCCESS) {
            say(GFL_LOG_WARN, "range profiler: range %lu: %s", slot, err);
            continue;
        }
        emit(&R.ranges[slot], values);
    }
    R.n_ranges = 0;
    return true;
}

/* Pops CUPTI's open range at now. */
static void close_range(uint64_t now)
{
    if (!R.range_open)
        return;
    CUpti_RangeProfiler_PopRange_Params pop = {.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE,
                                               .pRangeProfilerObject = R.obj};
    CUptiResult rc = R.cfg.api->cuptiRangeProfilerPopRange(&pop);
    R.range_open = false;
    R.ranges[R.n_ranges - 1].end = now;
    if (rc != CUPTI_SUCCESS)
        fail("cuptiRangeProfilerPopRange", rc);
}

/* Pushes a range for the stack's top at now, after decoding a full pass. */
static void open_range(uint64_t now)
{
    if (R.depth == 0 || R.depth > MAX_DEPTH || R.broken)
        return;
    if (R.n_ranges == GFL_RP_RANGES_PER_PASS) {
        const char *call = NULL;
        if (!decode_pass())
            return;
        CUptiResult rc = arm(&call);
        if (rc != CUPTI_SUCCESS) {
            fail(call, rc);
            return;
        }
    }
    char name[24];
    snprintf(name, sizeof name, "%zu", R.n_ranges);
    CUpti_RangeProfiler_PushRange_Params push = {.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE,
                                                 .pRangeProfilerObject = R.obj,
                                                 .pRangeName = name};
    CUptiResult rc = R.cfg.api->cuptiRangeProfilerPushRange(&push);
    if (rc != CUPTI_SUCCESS) {
        fail("cuptiRangeProfilerPushRange", rc);
        return;
    }
    const frame *top = &R.stack[R.depth - 1];
    R.ranges[R.n_ranges++] = (range){.scope = top->scope, .name = top->name, .begin = now};
    R.range_open = true;
}

/* The context the calling thread works on, as far as gpufl can tell. */
static CUcontext current_context(void)
{
    const gfl_driver_api *d = gfl_driver();
    CUcontext c = NULL;
    if (d && d->cuCtxGetCurrent(&c) != CUDA_SUCCESS)
        c = NULL;
    return c;
}

/* Whether the calling thread is the profiled one; the first thread to
 * open a scope once a context is known becomes it (and enables). Under
 * the lock. */
static bool profiled_thread(bool opening)
{
    if (my_generation == R.generation && my_role)
        return my_role == 1;
    if (!opening)
        return false; /* a thread decides at a begin, not at an end */
    if (R.enabled) {
        my_generation = R.generation;
        my_role = 2; /* another thread is profiled */
        return false;
    }
    /* The thread's own context when the driver says (a late start, or a
     * first context that another library made on another device), else
     * the first one created. */
    CUcontext mine = current_context();
    if (mine)
        R.ctx = mine;
    if (!R.ctx || !prepared())
        return false; /* no CUDA context yet: nothing to profile, decide later */
    my_generation = R.generation;
    my_role = 1;
    if (R.cfg.api->cuptiGetDeviceId && R.cfg.api->cuptiGetDeviceId(R.ctx, &R.device) != CUPTI_SUCCESS)
        R.device = 0;
    return enable();
}

static void change(bool begin, uint64_t scope, uint32_t name)
{
    pthread_mutex_lock(&R.lock);
    if (!R.running || R.broken || R.ctx_gone) {
        pthread_mutex_unlock(&R.lock);
        return;
    }
    if (!profiled_thread(begin)) {
        if (my_generation == R.generation && my_role == 2)
            R.other_threads++;
        pthread_mutex_unlock(&R.lock);
        return;
    }
    uint64_t now = R.cfg.host->now_ns();
    close_range(now);
    if (begin) {
        if (R.depth < MAX_DEPTH)
            R.stack[R.depth++] = (frame){.scope = scope, .name = name};
        else
            R.lost_depth++;
    } else if (R.lost_depth) {
        R.lost_depth--;
    } else if (scope) {
        /* a scope's end closes the scopes opened inside it too (scope.c) */
        unsigned d = R.depth;
        while (d > 0 && R.stack[d - 1].scope != scope)
            d--;
        if (d > 0)
            R.depth = d - 1;
    } else {
        /* an NVTX pop ends the innermost NVTX range, scopes inside it stay */
        unsigned d = R.depth;
        while (d > 0 && R.stack[d - 1].scope != 0)
            d--;
        if (d > 0) {
            memmove(&R.stack[d - 1], &R.stack[d], (R.depth - d) * sizeof *R.stack);
            R.depth--;
        }
    }
    open_range(now);
    pthread_mutex_unlock(&R.lock);
}

void gfl_rp_scope(bool begin, uint64_t scope_id, uint32_t name)
{
    if (scope_id)
        change(begin, scope_id, name);
}

void gfl_rp_nvtx(bool push, uint32_t name)
{
    if (R.cfg.nvtx)
        change(push, 0, name);
}

/* Splits the option into R.metrics (n, up to MAX_METRICS). */
static int parse(const char *option, char *err, size_t err_len)
{
    R.n_metrics = 0;
    if (strcmp(option, "default") == 0) {
        for (size_t i = 0; i < gfl_rp_n_default_metrics; i++)
            R.metrics[R.n_metrics++] = gfl_rp_default_metrics[i];
        return 0;
    }
    R.names = strdup(option);
    if (!R.names) {
        snprintf(err, err_len, "range profiler: out of memory");
        return -1;
    }
    for (char *save = NULL, *tok = strtok_r(R.names, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        if (R.n_metrics == MAX_METRICS) {
            snprintf(err, err_len, "range_profiler_metrics: more than %d metrics", MAX_METRICS);
            return -1;
        }
        R.metrics[R.n_metrics++] = tok;
    }
    if (!R.n_metrics) {
        snprintf(err, err_len, "range_profiler_metrics names no metric");
        return -1;
    }
    return 0;
}

/* The default list: each metric kept if the ones kept so far and it still
 * need one pass and the chip has it. */
static int config_default(const char *chip, char *err, size_t err_len)
{
    const char *kept[MAX_METRICS];
    size_t n = 0;
    char left_out[512] = "";
    for (size_t i = 0; i < R.n_metrics; i++) {
        kept[n] = R.metrics[i];
        gfl_profiler_host h;
        char why[512];
        CUptiResult rc = gfl_profiler_host_create(&h, R.cfg.api, CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, NULL, kept,
                                                  n + 1, why, sizeof why);
        bool fits = rc == CUPTI_SUCCESS && h.passes == 1;
        gfl_profiler_host_destroy(&h);
        if (rc == GFL_CUPTI_MISSING) {
            snprintf(err, err_len, "range profiler: %s", why);
            return -1;
        }
        if (fits) {
            n++;
        } else {
            size_t used = strlen(left_out);
            snprintf(left_out + used, sizeof left_out - used, "%s%s (%s)", used ? ", " : "", R.metrics[i],
                     rc == CUPTI_SUCCESS ? "a second pass" : "not on this chip");
        }
    }
    if (left_out[0])
        say(GFL_LOG_INFO, "range profiler: default metrics left out on %s: %s", chip, left_out);
    if (!n) {
        snprintf(err, err_len, "range profiler: no default metric can be collected on %s", chip);
        return -1;
    }
    memcpy(R.metrics, kept, n * sizeof *kept);
    R.n_metrics = n;
    CUptiResult rc = gfl_profiler_host_create(&R.host, R.cfg.api, CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, NULL,
                                              R.metrics, R.n_metrics, err, err_len);
    return rc == CUPTI_SUCCESS ? 0 : -1;
}

/* Which chip device 0 is, and the metrics' config for it: 0; -1 with the
 * reason in err; 1 when CUPTI's profiler cannot be initialised yet (inside
 * the driver's own initialisation, where `gpufl run` starts gpufl: the
 * caller tries again once a context exists). Under the lock. */
static int prepare(char *err, size_t err_len)
{
    char chip[64], why[512];
    CUptiResult rc = gfl_profiler_chip_name(R.cfg.api, 0, chip, sizeof chip, why, sizeof why);
    if (rc != CUPTI_SUCCESS) {
        const char *c = cause(rc);
        snprintf(err, err_len, "range profiler: %s%s%s", why, c ? "; " : "", c ? c : "");
        return c || rc == GFL_CUPTI_MISSING ? -1 : 1;
    }
    if (strcmp(R.option, "default") == 0) {
        if (config_default(chip, err, err_len) != 0)
            return -1;
    } else {
        rc = gfl_profiler_host_create(&R.host, R.cfg.api, CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, NULL, R.metrics,
                                      R.n_metrics, why, sizeof why);
        if (rc != CUPTI_SUCCESS) {
            snprintf(err, err_len, "range_profiler_metrics: %s", why);
            return -1;
        }
        if (R.host.passes != 1) {
            snprintf(err, err_len,
                     "range_profiler_metrics: the %zu metrics need %zu passes on %s, and a program that is being "
                     "recorded cannot replay its work: choose metrics that fit one pass",
                     R.n_metrics, R.host.passes, chip);
            gfl_profiler_host_destroy(&R.host);
            return -1;
        }
    }
    R.time_metric = R.n_metrics;
    for (size_t i = 0; i < R.n_metrics; i++) {
        R.metric_ids[i] = R.cfg.host->intern(R.metrics[i], strlen(R.metrics[i]));
        if (strcmp(R.metrics[i], "gpu__time_duration.sum") == 0)
            R.time_metric = i;
    }
    R.pending = false;
    return 0;
}

/* A deferred prepare(), once a context exists: false when it failed (and
 * said so). Under the lock. */
static bool prepared(void)
{
    if (!R.pending)
        return true;
    char err[640];
    if (prepare(err, sizeof err) == 0)
        return true;
    R.broken = true;
    R.pending = false;
    R.cfg.failed(err);
    return false;
}

int gfl_rp_start(const gfl_rp_config *cfg, bool late, char *err, size_t err_len)
{
    pthread_mutex_lock(&R.lock);
    R.cfg = *cfg;
    R.broken = R.enabled = R.started = R.range_open = R.ctx_gone = R.pending = false;
    R.ctx = NULL;
    R.obj = NULL;
    R.depth = R.lost_depth = 0;
    R.n_ranges = 0;
    R.number = 0;
    R.measured = R.dropped = R.other_threads = R.empty = R.lost_events = 0;
    R.generation++;
    int result = -1;
    const char *missing = gfl_cupti_range_profiler_missing(cfg->api);
    if (missing) {
        snprintf(err, err_len, "range profiler: %s lacks %s (CUPTI 12.6 or later has the range profiler)",
                 cfg->api->path[0] ? cfg->api->path : "libcupti", missing);
        goto out;
    }
    R.option = cfg->metrics && cfg->metrics[0] ? cfg->metrics : "default";
    if (parse(R.option, err, err_len) != 0)
        goto out;
    int rc = prepare(err, err_len);
    if (rc < 0)
        goto out;
    if (rc > 0) {
        say(GFL_LOG_DEBUG, "%s: trying again when the program has a CUDA context", err);
        R.pending = true;
    }
    R.running = true;
    result = 0;
    if (late)
        say(GFL_LOG_INFO, "range profiler: started after the program's first CUDA context; profiling that "
                          "context from the first scope on");
out:
    if (result != 0) {
        free(R.names);
        R.names = NULL;
    }
    pthread_mutex_unlock(&R.lock);
    return result;
}

void gfl_rp_context_created(CUcontext ctx)
{
    pthread_mutex_lock(&R.lock);
    if (R.running && !R.ctx && prepared())
        R.ctx = ctx;
    pthread_mutex_unlock(&R.lock);
}

/* Decodes the last pass and lets go; R.ctx must still exist. */
static void finish(void)
{
    if (R.enabled && !R.broken) {
        close_range(R.cfg.host->now_ns());
        if (!R.broken && R.started)
            (void)decode_pass();
    }
    disable();
}

void gfl_rp_context_destroying(CUcontext ctx)
{
    pthread_mutex_lock(&R.lock);
    if (R.running && R.ctx == ctx && !R.ctx_gone) {
        finish();
        R.ctx_gone = true;
    }
    pthread_mutex_unlock(&R.lock);
}

void gfl_rp_stop(void)
{
    pthread_mutex_lock(&R.lock);
    if (!R.running) {
        pthread_mutex_unlock(&R.lock);
        return;
    }
    if (!R.ctx_gone) {
        /* CUPTI works on the context of the calling thread's: lend it ours */
        const gfl_driver_api *d = R.enabled ? gfl_driver() : NULL;
        bool pushed = d && current_context() != R.ctx && d->cuCtxPushCurrent(R.ctx) == CUDA_SUCCESS;
        finish();
        if (pushed) {
            CUcontext popped;
            (void)d->cuCtxPopCurrent(&popped);
        }
    }
    R.running = false;
    if (R.measured || R.other_threads || R.dropped)
        say(GFL_LOG_DEBUG,
            "range profiler: %llu ranges measured (%llu without GPU work left out), %llu dropped by CUPTI, "
            "%llu events lost; %llu scope events of other threads not profiled",
            (unsigned long long)R.measured, (unsigned long long)R.empty, (unsigned long long)R.dropped,
            (unsigned long long)R.lost_events, (unsigned long long)R.other_threads);
    gfl_profiler_host_destroy(&R.host);
    free(R.names);
    R.names = NULL;
    pthread_mutex_unlock(&R.lock);
}

void gfl_rp_stats(uint64_t *ranges, uint64_t *dropped, uint64_t *other_threads)
{
    pthread_mutex_lock(&R.lock);
    *ranges = R.measured;
    *dropped = R.dropped;
    *other_threads = R.other_threads;
    pthread_mutex_unlock(&R.lock);
}
