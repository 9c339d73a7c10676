/*
 * The fake libcupti's PC sampling API and source correlation, doing what
 * the real ones do as far as the plugin can tell: per context, enable ->
 * configure -> collect (cuptiPCSamplingGetData hands over what was
 * sampled since, in pieces of at most collectNumPcs PCs) -> disable (what
 * is left goes into the configured buffer). A test makes contexts and
 * modules (their resource callbacks) and samples with the control
 * functions of fake_cupti.h.
 *
 * Stall reasons, as a Hopper GPU names them (indexes are CUPTI's own
 * numbering on such a GPU): long_scoreboard, its _not_issued twin,
 * selected and wait. A fake cubin is the text "fake-cubin file=F line=L":
 * PC offset p of any function in it is at line L + p / 16 of F.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <cupti_pcsampling.h>

#include "fake_cupti.h"
#include "fake_internal.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_CONTEXTS 8
#define MAX_PCS 4096
#define NREASONS 4
#define FAKE_DEFAULT_PERIOD 12 /* what the fake "chooses" when not told */

static const uint32_t reason_index[NREASONS] = {3, 4, 7, 9};
static const char *const reason_name[NREASONS] = {
    "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
    "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
    "smsp__pcsamp_warps_issue_stalled_selected",
    "smsp__pcsamp_warps_issue_stalled_wait",
};

typedef struct pending_pc {
    char function[64];
    uint64_t crc, pc;
    uint32_t reason, samples;
} pending_pc;

typedef struct fctx {
    CUcontext ctx;
    uint32_t device;
    bool enabled, configured;
    bool full; /* the hardware buffer filled: nothing more is sampled until disabled */
    uint32_t enables;
    uint32_t period;
    size_t nselected;
    bool selected_not_issued; /* a _not_issued reason was selected */
    CUpti_PCSamplingData *at_disable;
    pending_pc pcs[MAX_PCS];
    size_t npcs;
} fctx;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fctx contexts[MAX_CONTEXTS];
static CUptiResult refuse_rc = CUPTI_SUCCESS;
static uint64_t get_data_calls;

static CUcontext handle(uint32_t context) { return (CUcontext)(uintptr_t)(0x1000 * context); }

static fctx *find(CUcontext ctx, bool create)
{
    for (int i = 0; i < MAX_CONTEXTS; i++)
        if (contexts[i].ctx == ctx)
            return &contexts[i];
    if (!create)
        return NULL;
    for (int i = 0; i < MAX_CONTEXTS; i++)
        if (!contexts[i].ctx) {
            memset(&contexts[i], 0, sizeof contexts[i]);
            contexts[i].ctx = ctx;
            return &contexts[i];
        }
    return NULL;
}

/* ---- control --------------------------------------------------------------------- */

EXPORT void fake_cupti_create_context(uint32_t context, uint32_t device)
{
    pthread_mutex_lock(&lock);
    fctx *c = find(handle(context), true);
    if (c)
        c->device = device;
    pthread_mutex_unlock(&lock);
    CUpti_ResourceData d;
    memset(&d, 0, sizeof d);
    d.context = handle(context);
    fake__deliver(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &d);
}

EXPORT void fake_cupti_load_module(uint32_t context, const char *cubin)
{
    CUpti_ModuleResourceData m = {.moduleId = 1, .cubinSize = strlen(cubin) + 1, .pCubin = cubin};
    CUpti_ResourceData d;
    memset(&d, 0, sizeof d);
    d.context = handle(context);
    d.resourceDescriptor = &m;
    fake__deliver(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED, &d);
}

EXPORT void fake_cupti_unload_module(uint32_t context)
{
    CUpti_ModuleResourceData m = {.moduleId = 1};
    CUpti_ResourceData d;
    memset(&d, 0, sizeof d);
    d.context = handle(context);
    d.resourceDescriptor = &m;
    fake__deliver(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, &d);
}

EXPORT int fake_cupti_pc_sample(uint32_t context, const char *function, uint64_t crc, uint64_t pc, uint32_t reason,
                                uint32_t samples)
{
    pthread_mutex_lock(&lock);
    fctx *c = find(handle(context), false);
    int rc = -1;
    if (c && c->enabled && !c->full && c->npcs < MAX_PCS) {
        pending_pc *p = &c->pcs[c->npcs++];
        snprintf(p->function, sizeof p->function, "%s", function);
        p->crc = crc;
        p->pc = pc;
        p->reason = reason;
        p->samples = samples;
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT void fake_cupti_refuse_pc_sampling(CUptiResult rc) { refuse_rc = rc; }

EXPORT void fake_cupti_fill_pc_buffer(uint32_t context)
{
    pthread_mutex_lock(&lock);
    fctx *c = find(handle(context), false);
    if (c && c->enabled)
        c->full = true;
    pthread_mutex_unlock(&lock);
}

EXPORT bool fake_cupti_pc_sampling_state(uint32_t context, fake_cupti_pcs_state *out)
{
    pthread_mutex_lock(&lock);
    fctx *c = find(handle(context), false);
    if (c)
        *out = (fake_cupti_pcs_state){c->enabled, c->configured,  c->period, c->nselected, c->selected_not_issued,
                                      c->npcs,    get_data_calls, c->enables};
    pthread_mutex_unlock(&lock);
    return c != NULL;
}

/* ---- the API ------------------------------------------------------------------------ */

EXPORT CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext ctx, uint32_t *device)
{
    pthread_mutex_lock(&lock);
    fctx *c = find(ctx, false);
    if (c)
        *device = c->device;
    pthread_mutex_unlock(&lock);
    return c ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_CONTEXT;
}

EXPORT CUptiResult CUPTIAPI cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *p)
{
    if (!p || p->size < CUpti_PCSamplingEnableParamsSize)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (refuse_rc != CUPTI_SUCCESS)
        return refuse_rc;
    pthread_mutex_lock(&lock);
    fctx *c = find(p->ctx, false);
    CUptiResult rc = !c ? CUPTI_ERROR_INVALID_CONTEXT : c->enabled ? CUPTI_ERROR_INVALID_OPERATION : CUPTI_SUCCESS;
    if (rc == CUPTI_SUCCESS) {
        c->enabled = true;
        c->enables++;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiPCSamplingGetNumStallReasons(CUpti_PCSamplingGetNumStallReasonsParams *p)
{
    if (!p || !p->numStallReasons)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *p->numStallReasons = NREASONS;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams *p)
{
    if (!p || p->numStallReasons < NREASONS || !p->stallReasonIndex || !p->stallReasons)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (int i = 0; i < NREASONS; i++) {
        p->stallReasonIndex[i] = reason_index[i];
        snprintf(p->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE, "%s", reason_name[i]);
    }
    return CUPTI_SUCCESS;
}

/* One attribute written (set) or read, as CUPTI checks it. Under the lock. */
static void set_attribute(fctx *c, CUpti_PCSamplingConfigurationInfo *a)
{
    switch (a->attributeType) {
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD: {
        uint32_t v = a->attributeData.samplingPeriodData.samplingPeriod;
        if (v < 5 || v > 31)
            a->attributeStatus = CUPTI_ERROR_INVALID_PARAMETER;
        c->period = v;
        break;
    }
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON:
        c->nselected = a->attributeData.stallReasonData.stallReasonCount;
        for (size_t k = 0; k < c->nselected; k++)
            if (a->attributeData.stallReasonData.pStallReasonIndex[k] == reason_index[1])
                c->selected_not_issued = true;
        break;
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE:
        if (a->attributeData.collectionModeData.collectionMode != CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS &&
            a->attributeData.collectionModeData.collectionMode != CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED)
            a->attributeStatus = CUPTI_ERROR_INVALID_PARAMETER;
        break;
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER:
        c->at_disable = a->attributeData.samplingDataBufferData.samplingDataBuffer;
        break;
    default: break;
    }
}

static void get_attribute(const fctx *c, CUpti_PCSamplingConfigurationInfo *a)
{
    if (a->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD)
        a->attributeData.samplingPeriodData.samplingPeriod = c->period ? c->period : FAKE_DEFAULT_PERIOD;
}

/* cuptiPCSamplingSetConfigurationAttribute (set) and ...Get...: on an
 * enabled context, each attribute's status, the first failure returned. */
static CUptiResult attributes(CUpti_PCSamplingConfigurationInfoParams *p, bool set)
{
    if (!p || !p->pPCSamplingConfigurationInfo)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    fctx *c = find(p->ctx, false);
    CUptiResult rc = c && c->enabled ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_OPERATION;
    for (size_t i = 0; rc == CUPTI_SUCCESS && i < p->numAttributes; i++) {
        CUpti_PCSamplingConfigurationInfo *a = &p->pPCSamplingConfigurationInfo[i];
        a->attributeStatus = CUPTI_SUCCESS;
        if (set)
            set_attribute(c, a);
        else
            get_attribute(c, a);
        if (a->attributeStatus != CUPTI_SUCCESS)
            rc = a->attributeStatus;
    }
    if (set && rc == CUPTI_SUCCESS)
        c->configured = true;
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiPCSamplingSetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams *p)
{
    return attributes(p, true);
}

EXPORT CUptiResult CUPTIAPI cuptiPCSamplingGetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams *p)
{
    return attributes(p, false);
}

/* Moves up to b->collectNumPcs pending PCs of c into b. Under the lock. */
static void hand_over(fctx *c, CUpti_PCSamplingData *b)
{
    size_t n = c->npcs < b->collectNumPcs ? c->npcs : b->collectNumPcs;
    b->totalNumPcs = n;
    b->totalSamples = 0;
    for (size_t i = 0; i < n; i++) {
        CUpti_PCSamplingPCData *d = &b->pPcData[i];
        d->cubinCrc = c->pcs[i].crc;
        d->pcOffset = c->pcs[i].pc;
        d->functionIndex = 0;
        d->functionName = c->pcs[i].function; /* CUPTI's own memory, valid until the next call */
        d->stallReasonCount = 1;
        d->stallReason[0].pcSamplingStallReasonIndex = c->pcs[i].reason;
        d->stallReason[0].samples = c->pcs[i].samples;
        d->correlationId = 0;
        b->totalSamples += c->pcs[i].samples;
    }
    /* the names handed over must outlive the move: keep them in a static copy */
    static pending_pc out[MAX_PCS];
    memcpy(out, c->pcs, n * sizeof *out);
    for (size_t i = 0; i < n; i++)
        b->pPcData[i].functionName = out[i].function;
    memmove(c->pcs, c->pcs + n, (c->npcs - n) * sizeof *c->pcs);
    c->npcs -= n;
    b->remainingNumPcs = c->npcs;
}

EXPORT CUptiResult CUPTIAPI cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *p)
{
    if (!p || !p->pcSamplingData)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    fctx *c = find(p->ctx, false);
    CUptiResult rc = c && c->enabled && c->configured ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_OPERATION;
    if (rc == CUPTI_SUCCESS) {
        get_data_calls++;
        hand_over(c, p->pcSamplingData);
        if (c->full) { /* as CUPTI: no PC data, the flag, and out of memory */
            CUpti_PCSamplingData *b = p->pcSamplingData;
            b->totalNumPcs = 0;
            b->hardwareBufferFull = 1;
            rc = CUPTI_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUptiResult CUPTIAPI cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *p)
{
    if (!p)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    fctx *c = find(p->ctx, false);
    CUptiResult rc = c && c->enabled ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_OPERATION;
    if (rc == CUPTI_SUCCESS) {
        if (c->at_disable)
            hand_over(c, c->at_disable);
        c->enabled = c->configured = c->full = false;
        c->npcs = 0;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ---- cubins -------------------------------------------------------------------------- */

EXPORT CUptiResult CUPTIAPI cuptiGetCubinCrc(CUpti_GetCubinCrcParams *p)
{
    if (!p || !p->cubin || !p->cubinSize)
        return CUPTI_ERROR_INVALID_PARAMETER;
    uint64_t h = 1469598103934665603ull; /* FNV-1a: any stable hash will do */
    for (size_t i = 0; i < p->cubinSize; i++)
        h = (h ^ ((const uint8_t *)p->cubin)[i]) * 1099511628211ull;
    p->cubinCrc = h;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiGetSassToSourceCorrelation(CUpti_GetSassToSourceCorrelationParams *p)
{
    if (!p || !p->cubin || !p->functionName || !p->cubinSize)
        return CUPTI_ERROR_INVALID_PARAMETER;
    char file[256];
    unsigned line0;
    if (sscanf(p->cubin, "fake-cubin file=%255s line=%u", file, &line0) != 2)
        return CUPTI_ERROR_INVALID_MODULE;
    const char *slash = strrchr(file, '/');
    p->fileName = strdup(slash ? slash + 1 : file);
    p->dirName = slash ? strndup(file, (size_t)(slash - file)) : strdup("");
    p->lineNumber = line0 + (uint32_t)(p->pcOffset / 16);
    return p->fileName && p->dirName ? CUPTI_SUCCESS : CUPTI_ERROR_OUT_OF_MEMORY;
}
