/*
 * The SASS metrics engine (see sass_metrics.h).
 *
 * Sizes: a context table of GFL_SASS_MAX_CONTEXTS (a process has one
 * primary context per device, a few more at most); read buffers that grow
 * to the largest flush seen (one entry per instrumented instruction of
 * the context: thousands for a PyTorch program) and are kept until stop;
 * source lines remembered per (cubin, pc) in a table of at most
 * LINE_CACHE_SLOTS.
 */
#include "backend/cupti/sass_metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cupti/cubin_store.h"
#include "backend/cupti/demangle.h"
#include "backend/cupti/driver_api.h"

#define GFL_SASS_MAX_CONTEXTS 64
#define GFL_SASS_MAX_DEVICES 64
#define N_METRICS 7
#define LINE_CACHE_SLOTS 65536 /* power of two */

enum { M_INST, M_THREAD_INST, M_SECTORS, M_SECTORS_IDEAL, M_BRANCH, M_DIVERGENT, M_BYTES };

static const char *const metric_names[N_METRICS] = {GFL_SASS_METRIC_NAMES};

_Atomic bool gfl_sass_metrics_on;

typedef struct context_state {
    CUcontext ctx;
    uint32_t device;
    bool enabled; /* false: could not be enabled, left alone */
    bool read;    /* its counts were flushed (under lock) */
} context_state;

typedef struct device_state {
    bool configured;
    bool failed;
    uint64_t ids[N_METRICS]; /* CUPTI's metric ids; 0 = the chip lacks it */
    uint16_t valid;          /* GFL_SASS_V_* the chip offers */
    unsigned n_config;
    unsigned config[N_METRICS]; /* metric index of each configured id, in configuration order */
} device_state;

typedef struct line_entry {
    uint64_t key; /* crc << 32 | pc, +1; 0 = empty */
    uint32_t file, line;
} line_entry;

static struct {
    const gfl_cupti_api *api;
    const gpufl_plugin_host *host;
    bool sources;
    pthread_mutex_t lock;
    /* contexts: written under lock, read without it up to n_contexts
     * (release/acquire: a reader that sees the count sees the entry) */
    context_state contexts[GFL_SASS_MAX_CONTEXTS];
    _Atomic uint32_t n_contexts;
    device_state devices[GFL_SASS_MAX_DEVICES];
    /* the read buffers, grown under lock */
    CUpti_SassMetrics_Data *data;
    CUpti_SassMetrics_InstanceValue *values;
    uint32_t *order;
    size_t data_cap, values_cap, order_cap;
    bool logged_layout;
    gfl_name_cache names;
    char last_name[256]; /* the last function name CUPTI gave (a copy), and its id */
    uint32_t last_name_id;
    line_entry *lines;
    uint64_t events, contexts_read, dropped;
    void (*refused)(const char *why); /* the engine choice's, or NULL */
    char why[512];                    /* why a context cannot be measured; set once */
    bool refusal_told;
    bool warned_read;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Under lock: a context cannot be measured, for this reason (the first
 * one is kept; the caller tells it once the lock is released). */
static void refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void refuse(const char *fmt, ...)
{
    if (S.why[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(S.why, sizeof S.why, fmt, ap);
    va_end(ap);
}

static void sass_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sass_log(int level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    S.host->log(level, msg);
}

int gfl_sass_metrics_start(const gfl_cupti_api *api, const gpufl_plugin_host *host, void (*refused)(const char *why),
                           char *err, size_t err_len)
{
    const char *missing = !api->cuptiSassMetricsSetConfig           ? "cuptiSassMetricsSetConfig"
                          : !api->cuptiSassMetricsUnsetConfig       ? "cuptiSassMetricsUnsetConfig"
                          : !api->cuptiSassMetricsEnable            ? "cuptiSassMetricsEnable"
                          : !api->cuptiSassMetricsDisable           ? "cuptiSassMetricsDisable"
                          : !api->cuptiSassMetricsGetDataProperties ? "cuptiSassMetricsGetDataProperties"
                          : !api->cuptiSassMetricsFlushData         ? "cuptiSassMetricsFlushData"
                          : !api->cuptiSassMetricsGetProperties     ? "cuptiSassMetricsGetProperties"
                          : !api->cuptiDeviceGetChipName            ? "cuptiDeviceGetChipName"
                          : !api->cuptiGetDeviceId                  ? "cuptiGetDeviceId"
                                                                    : NULL;
    if (missing) {
        snprintf(err, err_len, "SASS metrics need CUPTI 12.5 or newer: %s lacks %s",
                 api->path[0] ? api->path : "libcupti", missing);
        return GPUFL_EUNSUPPORTED;
    }
    pthread_mutex_lock(&S.lock);
    S.api = api;
    S.host = host;
    /* Under deep the instructions get no source line: there
     * cuptiGetSassToSourceCorrelation crashed inside CUPTI (13.0.1, H100)
     * on ResNet-50's SASS records, in 6 of 6 runs at the end of the
     * session, whether PC sampling had stopped or not; alone it never did
     * (8 runs). PC samples keep their lines, which point at the same code. */
    S.sources = host->options->enable_source_collection && host->options->profiling_engine != GPUFL_ENGINE_DEEP;
    if (host->options->enable_source_collection && !S.sources)
        sass_log(GFL_LOG_INFO, "SASS metrics under deep: instructions carry no source line (CUPTI crashed looking "
                               "them up next to PC sampling); the PC samples carry theirs");
    atomic_store_explicit(&S.n_contexts, 0, memory_order_relaxed);
    memset(S.devices, 0, sizeof S.devices);
    gpufl__name_cache_init(&S.names, host->intern, 0);
    S.last_name[0] = '\0';
    S.last_name_id = 0;
    S.events = S.contexts_read = S.dropped = 0;
    S.refused = refused;
    S.why[0] = '\0';
    S.refusal_told = false;
    S.warned_read = false;
    S.logged_layout = false;
    pthread_mutex_unlock(&S.lock);
    /* The profiler interface underneath the SASS metrics API; a second
     * initialization (PC sampling, range profiler) is harmless. */
    if (api->cuptiProfilerInitialize) {
        CUpti_Profiler_Initialize_Params p = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        (void)api->cuptiProfilerInitialize(&p);
    }
    atomic_store_explicit(&gfl_sass_metrics_on, true, memory_order_release);
    return 0;
}

/* ---- configuring a device, enabling a context --------------------------------- */

/* The chip's SASS metrics whose names contain one of the words, into a
 * log line: what there is instead of a metric it lacks. */
static void log_offered(const char *chip)
{
    if (!S.api->cuptiSassMetricsGetNumOfMetrics || !S.api->cuptiSassMetricsGetMetrics)
        return;
    CUpti_SassMetrics_GetNumOfMetrics_Params np = {.structSize = CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE,
                                                   .pChipName = chip};
    if (S.api->cuptiSassMetricsGetNumOfMetrics(&np) != CUPTI_SUCCESS || !np.numOfMetrics)
        return;
    CUpti_SassMetrics_MetricDetails *list = calloc(np.numOfMetrics, sizeof *list);
    if (!list)
        return;
    CUpti_SassMetrics_GetMetrics_Params mp = {.structSize = CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE,
                                              .pChipName = chip,
                                              .numOfMetrics = np.numOfMetrics,
                                              .pMetricsList = list};
    if (S.api->cuptiSassMetricsGetMetrics(&mp) == CUPTI_SUCCESS) {
        char line[2048];
        size_t n = (size_t)snprintf(
            line, sizeof line, "SASS metrics of chip %s (%zu in all) on memory and branches:", chip, np.numOfMetrics);
        for (size_t i = 0; i < np.numOfMetrics && n < sizeof line; i++)
            if (list[i].pMetricName && (strstr(list[i].pMetricName, "global") || strstr(list[i].pMetricName, "branch")))
                n += (size_t)snprintf(line + n, sizeof line - n, " %s", list[i].pMetricName);
        sass_log(GFL_LOG_INFO, "%s", line);
    }
    free(list);
}

/* Metric ids for the device's chip, then the configuration. Under lock.
 * Returns 0, or -1 having logged why. */
static int configure_device(uint32_t device)
{
    device_state *d = &S.devices[device];
    if (d->configured)
        return 0;
    if (d->failed)
        return -1;
    d->failed = true; /* until it succeeds: one warning per device */
    CUpti_Device_GetChipName_Params chip = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE,
                                            .deviceIndex = device};
    CUptiResult rc = S.api->cuptiDeviceGetChipName(&chip);
    if (rc != CUPTI_SUCCESS || !chip.pChipName) {
        refuse("SASS metrics: no chip name for device %u (%s)", device, gfl_cupti_error(S.api, rc));
        return -1;
    }
    CUpti_SassMetrics_Config configs[N_METRICS];
    size_t n = 0;
    d->valid = 0;
    for (unsigned m = 0; m < N_METRICS; m++) {
        CUpti_SassMetrics_GetProperties_Params p = {.structSize = CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE,
                                                    .pChipName = chip.pChipName,
                                                    .pMetricName = metric_names[m]};
        rc = S.api->cuptiSassMetricsGetProperties(&p);
        d->ids[m] = rc == CUPTI_SUCCESS ? p.metric.metricId : 0;
        if (rc != CUPTI_SUCCESS) {
            if (m == M_INST) {
                refuse("SASS metrics: chip %s of device %u lacks %s (%s)", chip.pChipName, device, metric_names[m],
                       gfl_cupti_error(S.api, rc));
                return -1;
            }
            sass_log(GFL_LOG_INFO, "SASS metrics: chip %s lacks %s", chip.pChipName, metric_names[m]);
            if (m == M_SECTORS_IDEAL)
                log_offered(chip.pChipName);
            continue;
        }
        d->config[n] = m;
        configs[n++] = (CUpti_SassMetrics_Config){.metricId = p.metric.metricId,
                                                  .outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU};
    }
    /* a pair counts only as a pair: sectors against their ideal, branch
     * targets against the divergent ones. Chips without an ideal-sectors
     * metric (the H100's list has none) give the bytes the threads asked
     * for instead: the ideal is the 32-byte sectors those bytes fill. */
    d->valid = GFL_SASS_V_INST | (d->ids[M_THREAD_INST] ? GFL_SASS_V_THREAD_INST : 0) |
               (d->ids[M_SECTORS] && (d->ids[M_SECTORS_IDEAL] || d->ids[M_BYTES]) ? GFL_SASS_V_SECTORS : 0) |
               (d->ids[M_DIVERGENT] ? GFL_SASS_V_BRANCH : 0); /* the H100 lists no smsp__sass_branch_targets */
    CUpti_SassMetricsSetConfig_Params set = {.structSize = CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE,
                                             .numOfMetricConfig = n,
                                             .pConfigs = configs,
                                             .deviceIndex = device};
    rc = S.api->cuptiSassMetricsSetConfig(&set);
    if (rc != CUPTI_SUCCESS) {
        const char *why = gfl_cupti_counters_refused(rc);
        refuse("SASS metrics: cuptiSassMetricsSetConfig for device %u: %s%s%s", device, gfl_cupti_error(S.api, rc),
               why ? "; " : "", why ? why : "");
        return -1;
    }
    d->n_config = (unsigned)n;
    d->configured = true;
    d->failed = false;
    return 0;
}

static const context_state *find_context(CUcontext ctx)
{
    uint32_t n = atomic_load_explicit(&S.n_contexts, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (S.contexts[i].ctx == ctx)
            return &S.contexts[i];
    return NULL;
}

void gfl_sass_metrics_launch_enter(CUcontext ctx)
{
    if (!ctx || !atomic_load_explicit(&gfl_sass_metrics_on, memory_order_acquire))
        return; /* no context current yet: the driver call nested in the runtime's names it */
    if (find_context(ctx))
        return;
    pthread_mutex_lock(&S.lock);
    uint32_t n = atomic_load_explicit(&S.n_contexts, memory_order_relaxed);
    if (find_context(ctx) || n == GFL_SASS_MAX_CONTEXTS) {
        pthread_mutex_unlock(&S.lock);
        return;
    }
    context_state c = {.ctx = ctx};
    CUptiResult rc = S.api->cuptiGetDeviceId(ctx, &c.device);
    if (rc != CUPTI_SUCCESS || c.device >= GFL_SASS_MAX_DEVICES) {
        refuse("SASS metrics: the device of CUDA context %p is unknown (%s)", (void *)ctx, gfl_cupti_error(S.api, rc));
    } else if (configure_device(c.device) == 0) {
        CUpti_SassMetricsEnable_Params en = {
            .structSize = CUpti_SassMetricsEnable_Params_STRUCT_SIZE, .ctx = ctx, .enableLazyPatching = 1};
        rc = S.api->cuptiSassMetricsEnable(&en);
        c.enabled = rc == CUPTI_SUCCESS;
        if (!c.enabled)
            refuse("SASS metrics: cuptiSassMetricsEnable on device %u: %s", c.device, gfl_cupti_error(S.api, rc));
    }
    S.contexts[n] = c;
    atomic_store_explicit(&S.n_contexts, n + 1, memory_order_release);
    sass_log(GFL_LOG_DEBUG, "SASS metrics: context %p (device %u) %s", (void *)ctx, c.device,
             c.enabled ? "enabled" : "not measured");
    /* told outside the lock: the engine choice stops this engine */
    char why[sizeof S.why] = "";
    if (S.why[0] && !S.refusal_told) {
        S.refusal_told = true;
        memcpy(why, S.why, sizeof why);
    }
    pthread_mutex_unlock(&S.lock);
    if (why[0]) {
        if (S.refused)
            S.refused(why);
        else
            sass_log(GFL_LOG_WARN, "%s; its kernels are not measured", why);
    }
}

/* ---- reading a context's counts ------------------------------------------------ */

static bool grow(void **p, size_t *cap, size_t want, size_t size)
{
    if (want <= *cap)
        return true;
    size_t n = *cap ? *cap : 256;
    while (n < want)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

/* The function's demangled id. A read's records come sorted by
 * function, so most cost one compare with the previous record's name (a
 * copy: CUPTI allocates each record's name, and it is freed after use). */
static uint32_t function_id(const char *name)
{
    if (!name)
        return 0;
    if (S.last_name_id && !strcmp(name, S.last_name))
        return S.last_name_id;
    size_t len = strlen(name);
    uint32_t mangled = S.host->intern(name, len);
    S.last_name_id = gpufl__name_cache_demangled(&S.names, mangled, name);
    if (len < sizeof S.last_name)
        memcpy(S.last_name, name, len + 1);
    else
        S.last_name_id = 0; /* too long to keep: looked up again next time */
    return S.last_name_id;
}

/* Source file and line of an instruction, through the cubin (kept at
 * module load) and remembered per (cubin, pc). */
static void source_of(const CUpti_SassMetrics_Data *r, gfl_sass_metric_payload *p)
{
    if (!S.lines && !(S.lines = calloc(LINE_CACHE_SLOTS, sizeof *S.lines)))
        return;
    uint64_t key = ((uint64_t)r->cubinCrc << 32 | r->pcOffset) + 1;
    uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 48) & (LINE_CACHE_SLOTS - 1);
    for (unsigned probe = 0; probe < 8; probe++) {
        line_entry *e = &S.lines[(h + probe) & (LINE_CACHE_SLOTS - 1)];
        if (e->key == key) {
            p->file = e->file;
            p->line = e->line;
            return;
        }
        if (e->key == 0) {
            char file[1024];
            uint32_t line = 0;
            e->key = key;
            if (r->functionName &&
                gfl_cubins_source_line(r->cubinCrc, r->functionName, r->pcOffset, file, sizeof file, &line) == 0) {
                e->file = S.host->intern(file, strlen(file));
                e->line = line;
            }
            p->file = e->file;
            p->line = e->line;
            return;
        }
    }
    /* a crowded neighbourhood: looked up each time rather than evicting */
    char file[1024];
    uint32_t line = 0;
    if (r->functionName &&
        gfl_cubins_source_line(r->cubinCrc, r->functionName, r->pcOffset, file, sizeof file, &line) == 0) {
        p->file = S.host->intern(file, strlen(file));
        p->line = line;
    }
}

static const CUpti_SassMetrics_Data *sort_data; /* under S.lock */

/* Functions of one cubin are told apart by name as well as index: on an
 * H100 (CUDA 13) the records of three kernels of one module carried the
 * same functionIndex, and keyed by index alone they merged into one at
 * equal pc offsets. */
static int by_function_name(const CUpti_SassMetrics_Data *a, const CUpti_SassMetrics_Data *b)
{
    if (!a->functionName || !b->functionName)
        return (a->functionName != NULL) - (b->functionName != NULL);
    return strcmp(a->functionName, b->functionName);
}

static bool same_instruction(const CUpti_SassMetrics_Data *a, const CUpti_SassMetrics_Data *b)
{
    return a->cubinCrc == b->cubinCrc && a->functionIndex == b->functionIndex && a->pcOffset == b->pcOffset &&
           by_function_name(a, b) == 0;
}

static int by_instruction(const void *x, const void *y)
{
    const CUpti_SassMetrics_Data *a = &sort_data[*(const uint32_t *)x], *b = &sort_data[*(const uint32_t *)y];
    if (a->cubinCrc != b->cubinCrc)
        return a->cubinCrc < b->cubinCrc ? -1 : 1;
    if (a->functionIndex != b->functionIndex)
        return a->functionIndex < b->functionIndex ? -1 : 1;
    int by_name = by_function_name(a, b);
    if (by_name)
        return by_name;
    if (a->pcOffset != b->pcOffset)
        return a->pcOffset < b->pcOffset ? -1 : 1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static void read_failed(const char *what, CUptiResult rc)
{
    if (S.warned_read)
        return;
    S.warned_read = true;
    sass_log(GFL_LOG_WARN, "SASS metrics: %s: %s; the counts of a context are missing", what,
             gfl_cupti_error(S.api, rc));
}

/* The names CUPTI allocated for the records of a flush (its sample frees
 * them the same way). */
static void free_names(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((void *)S.data[i].functionName);
        S.data[i].functionName = NULL;
    }
}

/* Under lock: flushes the context's counts and pushes one event per
 * executed instruction; wait: through push_wait (stop's thread, not the
 * program's: a large program's instructions outnumber a ring). */
static void read_counts(const context_state *c, bool wait)
{
    CUpti_SassMetricsGetDataProperties_Params props = {
        .structSize = CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE, .ctx = c->ctx};
    CUptiResult rc = S.api->cuptiSassMetricsGetDataProperties(&props);
    if (rc != CUPTI_SUCCESS) {
        read_failed("cuptiSassMetricsGetDataProperties", rc);
        return;
    }
    size_t n = props.numOfPatchedInstructionRecords, per = props.numOfInstances * N_METRICS;
    if (n == 0 || per == 0)
        return;
    if (!grow((void **)&S.data, &S.data_cap, n, sizeof *S.data) ||
        !grow((void **)&S.order, &S.order_cap, n, sizeof *S.order) ||
        !grow((void **)&S.values, &S.values_cap, n * per, sizeof *S.values)) {
        read_failed("out of memory for the counts", CUPTI_ERROR_OUT_OF_MEMORY);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        memset(&S.data[i], 0, sizeof S.data[i]);
        S.data[i].structSize = sizeof S.data[i];
        S.data[i].pInstanceValues = S.values + i * per;
    }
    memset(S.values, 0, n * per * sizeof *S.values);
    CUpti_SassMetricsFlushData_Params flush = {.structSize = CUpti_SassMetricsFlushData_Params_STRUCT_SIZE,
                                               .ctx = c->ctx,
                                               .numOfPatchedInstructionRecords = n,
                                               .numOfInstances = props.numOfInstances,
                                               .pMetricsData = S.data};
    rc = S.api->cuptiSassMetricsFlushData(&flush);
    if (rc != CUPTI_SUCCESS) {
        read_failed("cuptiSassMetricsFlushData", rc);
        free_names(n);
        return;
    }
    S.contexts_read++;
    const device_state *d = &S.devices[c->device];
    uint64_t now = S.host->now_ns();
    if (!S.logged_layout) {
        /* once: what CUPTI handed over, for whoever checks the decoding */
        S.logged_layout = true;
        char line[512];
        size_t len = (size_t)snprintf(line, sizeof line, "SASS metrics: %zu records of %zu instances; first:", n,
                                      props.numOfInstances);
        for (size_t j = 0; j < per && len < sizeof line; j++)
            len += (size_t)snprintf(line + len, sizeof line - len, " %llu=%llu",
                                    (unsigned long long)S.data[0].pInstanceValues[j].metricId,
                                    (unsigned long long)S.data[0].pInstanceValues[j].value);
        sass_log(GFL_LOG_DEBUG, "%s", line);
    }
    /* A record is one instruction's values for one metric or for all of
     * them (CUPTI documents an array per record "of size equal to number
     * of instances per metric", with the metric id in each value): records
     * of one instruction are merged, by (cubin, function, pc), after
     * sorting; values are matched to metrics by id, and values whose id
     * is no configured one by their position in the configuration. */
    for (size_t i = 0; i < n; i++)
        S.order[i] = (uint32_t)i;
    sort_data = S.data;
    qsort(S.order, n, sizeof *S.order, by_instruction);
    for (size_t o = 0; o < n;) {
        const CUpti_SassMetrics_Data *r = &S.data[S.order[o]];
        uint64_t v[N_METRICS] = {0};
        size_t end = o;
        for (; end < n && same_instruction(&S.data[S.order[end]], r); end++) {
            const CUpti_SassMetrics_InstanceValue *iv = S.data[S.order[end]].pInstanceValues;
            for (size_t j = 0; j < per; j++) {
                unsigned m = N_METRICS;
                for (unsigned k = 0; k < N_METRICS; k++)
                    if (d->ids[k] && iv[j].metricId == d->ids[k])
                        m = k;
                if (m == N_METRICS && iv[j].value && d->n_config)
                    m = d->config[(j / props.numOfInstances) % d->n_config];
                if (m < N_METRICS)
                    v[m] += iv[j].value;
            }
        }
        o = end;
        if (v[M_INST] == 0) /* instrumented, never executed */
            continue;
        gfl_event ev;
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_SASS_METRIC;
        ev.h.device = (uint16_t)c->device;
        ev.h.ts = now;
        gfl_sass_metric_payload *p = &ev.u.sass;
        p->inst_executed = v[M_INST];
        p->thread_inst_executed = v[M_THREAD_INST];
        p->sectors = v[M_SECTORS];
        p->sectors_ideal = d->ids[M_SECTORS_IDEAL] ? v[M_SECTORS_IDEAL] : (v[M_BYTES] + 31) / 32;
        p->branch_targets = v[M_BRANCH];
        p->divergent_targets = v[M_DIVERGENT];
        p->function = function_id(r->functionName);
        p->pc_offset = r->pcOffset;
        p->cubin_crc = r->cubinCrc;
        p->function_index = r->functionIndex;
        p->valid = d->valid;
        if (S.sources)
            source_of(r, p);
        if ((wait ? S.host->push_wait(&ev) : S.host->push(&ev)) == 0)
            S.events++;
        else
            S.dropped++;
    }
    free_names(n);
}

/* Waits for the context's work: ctx is current on the launching thread;
 * elsewhere (stop) it is made current for the call. 0 when the launch's
 * counts are complete, else -1 having logged why. */
static int wait_for(CUcontext ctx, bool make_current)
{
    const gfl_driver_api *drv = gfl_driver();
    if (!drv) /* no driver loaded by the program: nothing of it runs to wait for */
        return 0;
    CUcontext popped = NULL;
    if (make_current && drv->cuCtxPushCurrent(ctx) != CUDA_SUCCESS)
        return -1;
    CUresult rc = drv->cuCtxSynchronize();
    if (make_current)
        (void)drv->cuCtxPopCurrent(&popped);
    if (rc != CUDA_SUCCESS) {
        read_failed("cuCtxSynchronize before reading the counts failed", CUPTI_ERROR_UNKNOWN);
        return -1;
    }
    return 0;
}

/* Under lock: reads what the context counted, once (see sass_metrics.h:
 * a flush ends the counting of the functions it reads). */
static void read_context(context_state *c, bool make_current, bool wait)
{
    if (!c->enabled || c->read)
        return;
    c->read = true;
    if (wait_for(c->ctx, make_current) == 0)
        read_counts(c, wait);
}

/* ---- stop ------------------------------------------------------------------------- */

static void stop(bool process_exiting, bool wait)
{
    if (!atomic_exchange_explicit(&gfl_sass_metrics_on, false, memory_order_acq_rel))
        return;
    pthread_mutex_lock(&S.lock);
    uint32_t n = atomic_load_explicit(&S.n_contexts, memory_order_relaxed);
    size_t lost = 0;
    /* read at exit too: the counts exist nowhere else. A context the
     * runtime already tore down was read as it was being destroyed. */
    for (uint32_t i = 0; i < n; i++)
        read_context(&S.contexts[i], true, wait);
    if (!process_exiting) {
        for (uint32_t i = 0; i < n; i++) {
            if (!S.contexts[i].enabled)
                continue;
            CUpti_SassMetricsDisable_Params dis = {.structSize = CUpti_SassMetricsDisable_Params_STRUCT_SIZE,
                                                   .ctx = S.contexts[i].ctx};
            if (S.api->cuptiSassMetricsDisable(&dis) == CUPTI_SUCCESS)
                lost += dis.numOfDroppedRecords;
        }
        for (uint32_t dev = 0; dev < GFL_SASS_MAX_DEVICES; dev++) {
            if (!S.devices[dev].configured)
                continue;
            CUpti_SassMetricsUnsetConfig_Params unset = {.structSize = CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE,
                                                         .deviceIndex = dev};
            (void)S.api->cuptiSassMetricsUnsetConfig(&unset);
        }
    }
    sass_log(GFL_LOG_DEBUG, "SASS metrics: %llu contexts read, %llu instruction records, %llu dropped%s",
             (unsigned long long)S.contexts_read, (unsigned long long)S.events, (unsigned long long)S.dropped,
             lost ? "; counts left unread at stop were discarded" : "");
    if (S.dropped)
        sass_log(GFL_LOG_WARN,
                 "SASS metrics: %llu instruction records were dropped (read on the program's thread as the "
                 "session stepped down, whose ring was full)",
                 (unsigned long long)S.dropped);
    atomic_store_explicit(&S.n_contexts, 0, memory_order_relaxed);
    memset(S.devices, 0, sizeof S.devices);
    free(S.data);
    free(S.values);
    free(S.lines);
    free(S.order);
    S.order = NULL;
    S.order_cap = 0;
    S.data = NULL;
    S.values = NULL;
    S.lines = NULL;
    S.data_cap = S.values_cap = 0;
    gpufl__name_cache_free(&S.names);
    S.last_name[0] = '\0';
    S.last_name_id = 0;
    pthread_mutex_unlock(&S.lock);
}

void gfl_sass_metrics_stop(bool process_exiting) { stop(process_exiting, true); }

void gfl_sass_metrics_stop_here(void) { stop(false, false); }

void gfl_sass_metrics_context_destroying(CUcontext ctx)
{
    if (!atomic_load_explicit(&gfl_sass_metrics_on, memory_order_acquire))
        return;
    const context_state *found = find_context(ctx);
    if (!found)
        return;
    pthread_mutex_lock(&S.lock);
    context_state *c = &S.contexts[found - S.contexts];
    /* The program's thread, but not its hot path: once a context, as the
     * program tears it down. The counts exist nowhere else and outnumber a
     * ring (ResNet-50 training gave 43 655 rows; a ring holds about 2 000),
     * so it waits for room as stop does. */
    uint64_t before = S.events;
    read_context(c, true, true);
    c->enabled = false; /* CUPTI lets go of it with the context */
    sass_log(GFL_LOG_DEBUG, "SASS metrics: context %p destroyed; %llu instruction records read", (void *)ctx,
             (unsigned long long)(S.events - before));
    pthread_mutex_unlock(&S.lock);
}
