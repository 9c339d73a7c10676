/*
 * The PC sampling engine (see pc_sampling.h).
 *
 * Per context: the stall reasons CUPTI offers, of which those without
 * the "_not_issued" suffix are selected (the suffixed ones count a subset
 * of the same samples again: the warps of that state that were not
 * issuing, which the report's per-reason shares do not need), and two
 * sample buffers: the one CUPTI fills at disable and the one collections
 * read into.
 *
 * The hardware buffer is 256 MiB of device memory per context instead of
 * CUPTI's 512 MiB default: a recorder that stays on must not take half a
 * GiB from the program. CUPTI's own threads drain it every 20 ms (its
 * default, 100 ms, let a memory-bound kernel on an H100, every warp
 * stalled and sampled, fill 128 MiB between two drains). Once full, the
 * hardware stops sampling for good (measured: no sample of any later
 * kernel): the context's sampling is then restarted with the period one
 * step longer (half the samples a second), which the log says.
 */
#include "backend/cupti/pc_sampling.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cupti/cubin_store.h"
#include "backend/cupti/driver_api.h"
#include "backend/cupti/pcs_claim.h"

#define MAX_CONTEXTS 64
#define COLLECT_PCS 2048   /* PCs one GetData returns at most */
#define COLLECT_ROUNDS 256 /* GetData calls per collection at most */
#define HARDWARE_BUFFER_BYTES (256ull << 20)
#define WORKER_SLEEP_MS 20
#define DRAIN_MAX_MS 1000
#define DRAIN_PAUSE_MS 50
#define LONGEST_PERIOD 31
#define SCRATCH_BUFFER_BYTES (4ull << 20) /* ~20 000 PCs with a few reasons each */
#define LINE_CACHE_SIZE (1u << 15)        /* PCs whose source line is remembered */
#define LINE_CACHE_PROBES 16
#define REASON_PREFIX "smsp__pcsamp_warps_issue_stalled_"

typedef struct reason_id {
    uint32_t index; /* CUPTI's */
    uint32_t id;    /* interned short name */
} reason_id;

typedef struct pcs_context {
    CUcontext ctx;
    uint32_t device;
    uint32_t period;   /* the exponent in use; 0: CUPTI's, not known */
    uint32_t restarts; /* after the hardware buffer filled */
    bool dead;         /* a restart or a collection failed: no more sampling here */
    uint64_t since;    /* the previous collection */
    reason_id *reasons;
    size_t nreasons;
    uint32_t *selected; /* indexes of the selected reasons */
    size_t nselected;
    CUpti_PCSamplingData at_disable; /* CUPTI fills it when sampling is disabled */
    CUpti_PCSamplingData collected;
} pcs_context;

typedef struct line_entry {
    uint64_t crc, pc;
    uint32_t function; /* interned; 0 = empty slot */
    uint32_t file;     /* interned, 0 = no line info */
    uint32_t line;
} line_entry;

static struct {
    pthread_mutex_t lock;
    bool running;
    gfl_pcs_config cfg;
    pcs_context contexts[MAX_CONTEXTS];
    size_t ncontexts;
    line_entry *lines;
    /* for the stop line */
    uint64_t samples, dropped, non_user, pcs, events, lost_events;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int level, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    S.cfg.host->log(level, msg);
}

/* "long_scoreboard" for CUPTI's "smsp__pcsamp_warps_issue_stalled_long_scoreboard":
 * the short name reports use. */
static const char *short_reason(const char *name)
{
    size_t n = strlen(REASON_PREFIX);
    return strncmp(name, REASON_PREFIX, n) == 0 && name[n] ? name + n : name;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* CUPTI's refusal in words a user can act on. */
static const char *cause(CUptiResult rc)
{
    const char *counters = gfl_cupti_counters_refused(rc);
    if (counters)
        return counters;
    switch (rc) {
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
        return "this GPU or driver does not support PC sampling (it needs compute capability 7.0 or later)";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED: return "PC sampling is not supported on this virtual GPU";
    default: return NULL;
    }
}

static void refused(const char *call, CUptiResult rc, char *err, size_t err_len)
{
    const char *why = cause(rc);
    snprintf(err, err_len, "PC sampling: %s: %s%s%s", call, gfl_cupti_error(S.cfg.api, rc), why ? "; " : "",
             why ? why : "");
}

/* ---- buffers ---------------------------------------------------------------- */

static void free_buffer(CUpti_PCSamplingData *b)
{
    for (size_t i = 0; b->pPcData && i < b->collectNumPcs; i++)
        free(b->pPcData[i].stallReason);
    free(b->pPcData);
    memset(b, 0, sizeof *b);
}

static int alloc_buffer(CUpti_PCSamplingData *b, size_t reasons)
{
    memset(b, 0, sizeof *b);
    b->size = sizeof *b;
    b->collectNumPcs = COLLECT_PCS;
    b->pPcData = calloc(COLLECT_PCS, sizeof *b->pPcData);
    if (!b->pPcData)
        return -1;
    for (size_t i = 0; i < COLLECT_PCS; i++) {
        b->pPcData[i].size = sizeof b->pPcData[i];
        b->pPcData[i].stallReason = calloc(reasons, sizeof *b->pPcData[i].stallReason);
        if (!b->pPcData[i].stallReason) {
            free_buffer(b);
            return -1;
        }
    }
    return 0;
}

static void free_context(pcs_context *c)
{
    free_buffer(&c->at_disable);
    free_buffer(&c->collected);
    free(c->reasons);
    free(c->selected);
    memset(c, 0, sizeof *c);
}

/* ---- stall reasons ---------------------------------------------------------- */

static int read_reasons(pcs_context *c, char *err, size_t err_len)
{
    const gfl_cupti_api *api = S.cfg.api;
    size_t n = 0;
    CUpti_PCSamplingGetNumStallReasonsParams np = {
        .size = CUpti_PCSamplingGetNumStallReasonsParamsSize, .ctx = c->ctx, .numStallReasons = &n};
    CUptiResult rc = api->cuptiPCSamplingGetNumStallReasons(&np);
    if (rc != CUPTI_SUCCESS || n == 0) {
        refused("cuptiPCSamplingGetNumStallReasons", rc, err, err_len);
        return -1;
    }
    uint32_t *indexes = calloc(n, sizeof *indexes);
    char **names = calloc(n, sizeof *names);
    char *text = calloc(n, CUPTI_STALL_REASON_STRING_SIZE);
    c->reasons = calloc(n, sizeof *c->reasons);
    c->selected = calloc(n, sizeof *c->selected);
    int result = -1;
    if (!indexes || !names || !text || !c->reasons || !c->selected) {
        snprintf(err, err_len, "PC sampling: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        names[i] = text + i * CUPTI_STALL_REASON_STRING_SIZE;
    CUpti_PCSamplingGetStallReasonsParams rp = {
        .size = CUpti_PCSamplingGetStallReasonsParamsSize,
        .ctx = c->ctx,
        .numStallReasons = n,
        .stallReasonIndex = indexes,
        .stallReasons = names,
    };
    rc = api->cuptiPCSamplingGetStallReasons(&rp);
    if (rc != CUPTI_SUCCESS) {
        refused("cuptiPCSamplingGetStallReasons", rc, err, err_len);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        names[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = '\0';
        const char *s = short_reason(names[i]);
        c->reasons[c->nreasons++] = (reason_id){indexes[i], S.cfg.host->intern(s, strlen(s))};
        if (!ends_with(names[i], "_not_issued"))
            c->selected[c->nselected++] = indexes[i];
    }
    result = 0;
out:
    free(indexes);
    free(names);
    free(text);
    return result;
}

static uint32_t reason_of(const pcs_context *c, uint32_t index)
{
    for (size_t i = 0; i < c->nreasons; i++)
        if (c->reasons[i].index == index)
            return c->reasons[i].id;
    return 0;
}

/* ---- enabling ----------------------------------------------------------------- */

/* The exponent CUPTI chose, to lengthen it after an overflow; 0 when
 * it cannot be read. */
static uint32_t period_in_use(pcs_context *c)
{
    if (!S.cfg.api->cuptiPCSamplingGetConfigurationAttribute)
        return 0;
    CUpti_PCSamplingConfigurationInfo info;
    memset(&info, 0, sizeof info);
    info.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    CUpti_PCSamplingConfigurationInfoParams p = {
        .size = CUpti_PCSamplingConfigurationInfoParamsSize,
        .ctx = c->ctx,
        .numAttributes = 1,
        .pPCSamplingConfigurationInfo = &info,
    };
    if (S.cfg.api->cuptiPCSamplingGetConfigurationAttribute(&p) != CUPTI_SUCCESS || info.attributeStatus)
        return 0;
    return info.attributeData.samplingPeriodData.samplingPeriod;
}

static int configure(pcs_context *c, char *err, size_t err_len)
{
    CUpti_PCSamplingConfigurationInfo info[12];
    size_t n = 0;
    memset(info, 0, sizeof info);
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    info[n].attributeData.stallReasonData.stallReasonCount = c->nselected;
    info[n++].attributeData.stallReasonData.pStallReasonIndex = c->selected;
    if (c->period) {
        info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
        info[n++].attributeData.samplingPeriodData.samplingPeriod = c->period;
    }
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN;
    info[n++].attributeData.workerThreadPeriodicSleepSpanData.workerThreadPeriodicSleepSpan = WORKER_SLEEP_MS;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
    info[n++].attributeData.scratchBufferSizeData.scratchBufferSize = SCRATCH_BUFFER_BYTES;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
    info[n++].attributeData.hardwareBufferSizeData.hardwareBufferSize = HARDWARE_BUFFER_BYTES;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[n++].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    info[n++].attributeData.enableStartStopControlData.enableStartStopControl = 0;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    info[n++].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    info[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &c->at_disable;
    CUpti_PCSamplingConfigurationInfoParams p = {
        .size = CUpti_PCSamplingConfigurationInfoParamsSize,
        .ctx = c->ctx,
        .numAttributes = n,
        .pPCSamplingConfigurationInfo = info,
    };
    CUptiResult rc = S.cfg.api->cuptiPCSamplingSetConfigurationAttribute(&p);
    if (rc != CUPTI_SUCCESS) {
        for (size_t i = 0; i < n; i++)
            if (info[i].attributeStatus != CUPTI_SUCCESS) {
                char what[64];
                snprintf(what, sizeof what, "configuration attribute %d", (int)info[i].attributeType);
                refused(what, info[i].attributeStatus, err, err_len);
                return -1;
            }
        refused("cuptiPCSamplingSetConfigurationAttribute", rc, err, err_len);
        return -1;
    }
    if (!c->period)
        c->period = period_in_use(c);
    return 0;
}

static void disable(pcs_context *c)
{
    CUpti_PCSamplingDisableParams p = {.size = CUpti_PCSamplingDisableParamsSize, .ctx = c->ctx};
    CUptiResult rc = S.cfg.api->cuptiPCSamplingDisable(&p);
    if (rc != CUPTI_SUCCESS)
        say(GFL_LOG_DEBUG, "PC sampling: cuptiPCSamplingDisable on GPU %u: %s", c->device,
            gfl_cupti_error(S.cfg.api, rc));
}

/* The GPU of device ordinal `device` for this process alone (pcs_claim.h):
 * 0, or -1 with why in err. Named by its PCI bus id, which is the same in
 * every process; without the driver's answer it is not claimed. */
static int claim_gpu(uint32_t device, char *err, size_t err_len)
{
    const gfl_driver_api *d = gfl_driver();
    CUdevice dev;
    char bus[64];
    if (!d || !d->cuDeviceGetPCIBusId || d->cuDeviceGet(&dev, (int)device) != CUDA_SUCCESS ||
        d->cuDeviceGetPCIBusId(bus, (int)sizeof bus, dev) != CUDA_SUCCESS)
        return 0;
    char why[512];
    if (gpufl__pcs_claim(GFL_PCS_CLAIM_DIR, bus, why, sizeof why) != 0) {
        snprintf(err, err_len,
                 "PC sampling: %s, and the GPU samples for one process at a time (a second one gets no "
                 "samples from CUPTI, which then crashed in it at the end)",
                 why);
        return -1;
    }
    if (why[0])
        say(GFL_LOG_DEBUG, "PC sampling: %s", why);
    return 0;
}

/* Under the lock. */
static int enable_locked(CUcontext ctx, char *err, size_t err_len)
{
    for (size_t i = 0; i < S.ncontexts; i++)
        if (S.contexts[i].ctx == ctx)
            return 0;
    if (S.ncontexts == MAX_CONTEXTS) {
        snprintf(err, err_len, "PC sampling: more than %d CUDA contexts; this one is not sampled", MAX_CONTEXTS);
        return -1;
    }
    pcs_context *c = &S.contexts[S.ncontexts];
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->period = S.cfg.period;
    uint32_t device = 0;
    if (S.cfg.api->cuptiGetDeviceId && S.cfg.api->cuptiGetDeviceId(ctx, &device) == CUPTI_SUCCESS)
        c->device = device;
    if (claim_gpu(c->device, err, err_len) != 0) {
        free_context(c);
        return -1;
    }
    CUpti_PCSamplingEnableParams ep = {.size = CUpti_PCSamplingEnableParamsSize, .ctx = ctx};
    CUptiResult rc = S.cfg.api->cuptiPCSamplingEnable(&ep);
    if (rc != CUPTI_SUCCESS) {
        refused("cuptiPCSamplingEnable", rc, err, err_len);
        free_context(c);
        return -1;
    }
    if (read_reasons(c, err, err_len) != 0 || alloc_buffer(&c->at_disable, c->nreasons) != 0 ||
        alloc_buffer(&c->collected, c->nreasons) != 0) {
        if (!err[0])
            snprintf(err, err_len, "PC sampling: out of memory for the sample buffers");
        disable(c);
        free_context(c);
        return -1;
    }
    if (configure(c, err, err_len) != 0) {
        disable(c);
        free_context(c);
        return -1;
    }
    c->since = S.cfg.host->now_ns();
    S.ncontexts++;
    return 0;
}

int gfl_pcs_context_created(CUcontext ctx, char *err, size_t err_len)
{
    err[0] = '\0';
    pthread_mutex_lock(&S.lock);
    int rc = S.running ? enable_locked(ctx, err, err_len) : 0;
    pthread_mutex_unlock(&S.lock);
    return rc;
}

/* The primary contexts the program made before the engine started. */
static int enable_existing(bool *late, char *err, size_t err_len)
{
    const gfl_driver_api *d = gfl_driver();
    int n = 0;
    if (!d || d->cuDeviceGetCount(&n) != CUDA_SUCCESS)
        return 0; /* no CUDA yet: every context comes through the callback */
    for (int i = 0; i < n; i++) {
        CUdevice dev;
        unsigned flags = 0;
        int active = 0;
        CUcontext ctx = NULL;
        if (d->cuDeviceGet(&dev, i) != CUDA_SUCCESS ||
            d->cuDevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active ||
            d->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS)
            continue;
        *late = true;
        int rc = enable_locked(ctx, err, err_len);
        (void)d->cuDevicePrimaryCtxRelease(dev); /* the program holds it */
        if (rc != 0)
            return -1;
    }
    CUcontext current = NULL;
    if (d->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current) {
        *late = true;
        return enable_locked(current, err, err_len);
    }
    return 0;
}

int gfl_pcs_start(const gfl_pcs_config *cfg, bool *late, char *err, size_t err_len)
{
    const gfl_cupti_api *api = cfg->api;
    *late = false;
    err[0] = '\0';
    if (!api->cuptiPCSamplingEnable || !api->cuptiPCSamplingDisable || !api->cuptiPCSamplingGetData ||
        !api->cuptiPCSamplingSetConfigurationAttribute || !api->cuptiPCSamplingGetNumStallReasons ||
        !api->cuptiPCSamplingGetStallReasons) {
        snprintf(err, err_len, "PC sampling: %s lacks the PC sampling API (CUDA 11.3 or later has it)",
                 api->path[0] ? api->path : "libcupti");
        return -1;
    }
    pthread_mutex_lock(&S.lock);
    S.cfg = *cfg;
    S.ncontexts = 0;
    S.samples = S.dropped = S.non_user = S.pcs = S.events = S.lost_events = 0;
    free(S.lines);
    S.lines = cfg->source_lines ? calloc(LINE_CACHE_SIZE, sizeof *S.lines) : NULL;
    S.running = true;
    int rc = enable_existing(late, err, err_len);
    if (rc != 0) {
        for (size_t i = 0; i < S.ncontexts; i++) {
            disable(&S.contexts[i]);
            free_context(&S.contexts[i]);
        }
        S.ncontexts = 0;
        S.running = false;
        gpufl__pcs_release_claims();
    }
    pthread_mutex_unlock(&S.lock);
    return rc;
}

/* ---- turning samples into events -------------------------------------------- */

static uint64_t mix(uint64_t crc, uint64_t pc, uint32_t function)
{
    uint64_t h = crc ^ (pc * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)function << 32);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

/* The PC's source line: remembered, or looked up in its cubin once. */
static void source_line(const CUpti_PCSamplingPCData *pc, uint32_t function, uint32_t *file, uint32_t *line)
{
    *file = *line = 0;
    if (!S.lines || !pc->functionName)
        return;
    uint64_t h = mix(pc->cubinCrc, pc->pcOffset, function);
    line_entry *free_slot = NULL;
    for (unsigned k = 0; k < LINE_CACHE_PROBES; k++) {
        line_entry *e = &S.lines[(h + k) & (LINE_CACHE_SIZE - 1)];
        if (!e->function) {
            free_slot = e;
            break;
        }
        if (e->function == function && e->crc == pc->cubinCrc && e->pc == pc->pcOffset) {
            *file = e->file;
            *line = e->line;
            return;
        }
    }
    char path[1024];
    uint32_t n = 0;
    if (gfl_cubins_source_line(pc->cubinCrc, pc->functionName, pc->pcOffset, path, sizeof path, &n) == 0) {
        *file = S.cfg.host->intern(path, strlen(path));
        *line = n;
    }
    if (free_slot)
        *free_slot = (line_entry){pc->cubinCrc, pc->pcOffset, function, *file, *line};
}

static void push(const gfl_event *ev, bool wait)
{
    int rc = wait ? S.cfg.host->push_wait(ev) : S.cfg.host->push(ev);
    if (rc == 0)
        S.events++;
    else
        S.lost_events++;
}

static void emit_pc(const pcs_context *c, const CUpti_PCSamplingPCData *pc, uint64_t now, bool wait)
{
    const char *fn = pc->functionName ? pc->functionName : "";
    uint32_t function = S.cfg.host->intern(fn, strlen(fn));
    gfl_event ev = {.h = {.type = GFL_EV_PC_SAMPLE, .device = (uint16_t)c->device, .ts = now}};
    ev.u.pc.cubin_crc = pc->cubinCrc;
    ev.u.pc.pc_offset = pc->pcOffset;
    ev.u.pc.since_ts = c->since;
    ev.u.pc.function = function;
    source_line(pc, function, &ev.u.pc.source_file, &ev.u.pc.line);
    for (size_t i = 0; i < pc->stallReasonCount; i++) {
        const CUpti_PCSamplingStallReason *r = &pc->stallReason[i];
        if (!r->samples)
            continue;
        ev.u.pc.stalls[ev.u.pc.count++] = (gfl_stall_count){reason_of(c, r->pcSamplingStallReasonIndex), r->samples};
        if (ev.u.pc.count == GFL_PC_STALLS_PER_EVENT) {
            push(&ev, wait);
            ev.u.pc.count = 0;
            memset(ev.u.pc.stalls, 0, sizeof ev.u.pc.stalls);
        }
    }
    if (ev.u.pc.count)
        push(&ev, wait);
}

/* Under the lock: disables sampling on c and pushes what CUPTI put in the
 * configured buffer then. */
static void disable_and_drain(pcs_context *c, bool wait)
{
    c->at_disable.totalNumPcs = 0;
    c->at_disable.totalSamples = c->at_disable.droppedSamples = 0;
    disable(c);
    uint64_t now = S.cfg.host->now_ns();
    S.samples += c->at_disable.totalSamples;
    S.dropped += c->at_disable.droppedSamples;
    for (size_t i = 0; i < c->at_disable.totalNumPcs && i < c->at_disable.collectNumPcs; i++)
        emit_pc(c, &c->at_disable.pPcData[i], now, wait);
}

/* Under the lock: the hardware buffer filled and the GPU stopped
 * sampling; starts again, sampling half as often. */
static void restart_locked(pcs_context *c, bool wait)
{
    disable_and_drain(c, wait);
    uint32_t was = c->period;
    if (c->period && c->period < LONGEST_PERIOD)
        c->period++;
    c->restarts++;
    char err[512] = "";
    CUpti_PCSamplingEnableParams ep = {.size = CUpti_PCSamplingEnableParamsSize, .ctx = c->ctx};
    CUptiResult rc = S.cfg.api->cuptiPCSamplingEnable(&ep);
    if (rc != CUPTI_SUCCESS)
        refused("cuptiPCSamplingEnable", rc, err, sizeof err);
    if (rc != CUPTI_SUCCESS || configure(c, err, sizeof err) != 0) {
        if (rc == CUPTI_SUCCESS)
            disable(c);
        c->dead = true;
        say(GFL_LOG_WARN,
            "PC sampling stopped on GPU %u: its hardware buffer filled and sampling could not start "
            "again (%s)",
            c->device, err);
        return;
    }
    /* the first time and then at each power of two: a storm is one line a doubling */
    if ((c->restarts & (c->restarts - 1)) == 0)
        say(GFL_LOG_WARN,
            "PC sampling on GPU %u: the hardware buffer filled between two collections, which stops the GPU's "
            "sampling; restarted (%u time%s so far) with a period of 2^%u cycles (was 2^%u); set "
            "pc_sampling_period higher to sample less from the start",
            c->device, c->restarts, c->restarts == 1 ? "" : "s", c->period, was);
}

/* Under the lock: everything CUPTI has of c, in as many calls as it
 * takes. Returns the PCs collected. */
static size_t collect_locked(pcs_context *c, bool wait)
{
    if (c->dead)
        return 0;
    size_t pcs = 0;
    uint64_t now = S.cfg.host->now_ns();
    bool full = false;
    for (int round = 0; round < COLLECT_ROUNDS; round++) {
        CUpti_PCSamplingData *b = &c->collected;
        b->totalNumPcs = b->remainingNumPcs = 0;
        b->totalSamples = b->droppedSamples = b->nonUsrKernelsTotalSamples = 0;
        b->hardwareBufferFull = 0;
        CUpti_PCSamplingGetDataParams p = {
            .size = CUpti_PCSamplingGetDataParamsSize, .ctx = c->ctx, .pcSamplingData = b};
        CUptiResult rc = S.cfg.api->cuptiPCSamplingGetData(&p);
        if (rc == CUPTI_ERROR_OUT_OF_MEMORY || b->hardwareBufferFull)
            full = true;
        if (rc != CUPTI_SUCCESS && !full) {
            /* said, not swallowed: a context whose samples cannot be
             * read records none, and is left alone from here on */
            char err[512];
            refused("cuptiPCSamplingGetData", rc, err, sizeof err);
            say(GFL_LOG_WARN, "%s on GPU %u; its samples from here on are lost", err, c->device);
            c->dead = true;
            return pcs;
        }
        if (rc != CUPTI_SUCCESS)
            break;
        S.samples += b->totalSamples;
        S.dropped += b->droppedSamples;
        S.non_user += b->nonUsrKernelsTotalSamples;
        S.pcs += b->totalNumPcs;
        for (size_t i = 0; i < b->totalNumPcs && i < b->collectNumPcs; i++)
            emit_pc(c, &b->pPcData[i], now, wait);
        pcs += b->totalNumPcs;
        if (!b->remainingNumPcs)
            break;
    }
    c->since = now;
    if (full)
        restart_locked(c, wait);
    return pcs;
}

/* Under the lock, at the end: CUPTI decodes the hardware buffer on its
 * own threads and falls behind a flood of samples (measured on an H100:
 * after a memory-bound kernel sampled at CUPTI's default period, the
 * kernels of the program's last second had no sample when it ended at
 * once), so c is collected until two collections DRAIN_PAUSE_MS apart
 * find nothing, for at most DRAIN_MAX_MS. The lock is held: a context
 * created or destroyed meanwhile waits. */
static void drain_locked(pcs_context *c, bool wait)
{
    uint64_t until = S.cfg.host->now_ns() + DRAIN_MAX_MS * 1000000ull;
    for (int empty = 0; empty < 2;) {
        empty = collect_locked(c, wait) ? 0 : empty + 1;
        if (S.cfg.host->now_ns() >= until) {
            if (empty < 2)
                say(GFL_LOG_WARN,
                    "PC sampling: CUPTI was still decoding samples of GPU %u after %d ms; the "
                    "rest are lost (a higher pc_sampling_period samples less)",
                    c->device, DRAIN_MAX_MS);
            return;
        }
        struct timespec pause = {0, DRAIN_PAUSE_MS * 1000000L};
        nanosleep(&pause, NULL);
    }
}

void gfl_pcs_collect_all(bool wait)
{
    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; S.running && i < S.ncontexts; i++)
        collect_locked(&S.contexts[i], wait);
    pthread_mutex_unlock(&S.lock);
}

static pcs_context *find(CUcontext ctx)
{
    for (size_t i = 0; i < S.ncontexts; i++)
        if (S.contexts[i].ctx == ctx)
            return &S.contexts[i];
    return NULL;
}

void gfl_pcs_collect_context(CUcontext ctx, bool wait)
{
    pthread_mutex_lock(&S.lock);
    pcs_context *c = S.running ? find(ctx) : NULL;
    if (c)
        collect_locked(c, wait);
    pthread_mutex_unlock(&S.lock);
}

/* Under the lock: the last samples (those CUPTI put in the configured
 * buffer when disabling), then forgets c. */
static void finish_locked(pcs_context *c, bool wait)
{
    drain_locked(c, wait);
    if (!c->dead)
        disable_and_drain(c, wait);
    free_context(c);
}

void gfl_pcs_context_destroying(CUcontext ctx)
{
    pthread_mutex_lock(&S.lock);
    pcs_context *c = S.running ? find(ctx) : NULL;
    if (c) {
        finish_locked(c, false);
        *c = S.contexts[--S.ncontexts];
        memset(&S.contexts[S.ncontexts], 0, sizeof S.contexts[S.ncontexts]);
    }
    pthread_mutex_unlock(&S.lock);
}

void gfl_pcs_stop(bool disable_too)
{
    pthread_mutex_lock(&S.lock);
    if (!S.running) {
        pthread_mutex_unlock(&S.lock);
        return;
    }
    for (size_t i = 0; i < S.ncontexts; i++) {
        if (disable_too) {
            finish_locked(&S.contexts[i], true);
        } else {
            drain_locked(&S.contexts[i], true);
            free_context(&S.contexts[i]);
        }
    }
    S.ncontexts = 0;
    S.running = false;
    gpufl__pcs_release_claims();
    free(S.lines);
    S.lines = NULL;
    say(S.dropped || S.lost_events ? GFL_LOG_WARN : GFL_LOG_DEBUG,
        "PC sampling: %llu samples (%llu in kernels without PC records, %llu dropped by the hardware) at %llu "
        "PCs into %llu events (%llu lost)",
        (unsigned long long)S.samples, (unsigned long long)S.non_user, (unsigned long long)S.dropped,
        (unsigned long long)S.pcs, (unsigned long long)S.events, (unsigned long long)S.lost_events);
    pthread_mutex_unlock(&S.lock);
}
