/*
 * CUPTI activity records → gpufl events (see activity_records.h).
 */
#include "backend/cupti/activity_records.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cupti/kernel_details.h"

/* Device timestamps later than this past the worker's clock are garbage
 * (CUPTI's GPU-to-host conversion never runs ahead by seconds). */
#define FUTURE_SLACK_NS 60000000000ull
#define EXTERNAL_BITS 16

typedef struct external_slot {
    uint32_t corr;
    uint8_t kind;
    uint64_t id;
} external_slot;

struct gfl_records {
    const gpufl_plugin_host *host;
    gfl_launch_table *launches;
    gfl_kernel_details *details;
    /* Direct mapped by correlation id like the launch table; the worker is
     * the only reader and writer. */
    external_slot externals[1u << EXTERNAL_BITS];
    uint64_t now; /* the worker's clock, once per buffer */
    gfl_record_stats stats;
};

gfl_records *gfl_records_new(const gpufl_plugin_host *host, gfl_launch_table *launches)
{
    gfl_records *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->host = host;
    r->launches = launches;
    r->details = gfl_kernel_details_new(host);
    if (!r->details) {
        free(r);
        return NULL;
    }
    return r;
}

void gfl_records_free(gfl_records *r)
{
    if (!r)
        return;
    gfl_kernel_details_free(r->details);
    free(r);
}

const gfl_record_stats *gfl_records_stats(const gfl_records *r) { return &r->stats; }

/* ---- mapping CUPTI's enums ------------------------------------------------- */

static uint8_t copy_kind(uint8_t k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return GFL_COPY_HTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return GFL_COPY_DTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return GFL_COPY_DTOD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return GFL_COPY_HTOH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return GFL_COPY_PTOP;
    default: return GFL_COPY_UNKNOWN;
    }
}

/* CUPTI's memory kinds 0..7 are numbered as gfl_mem_kind. */
static uint8_t mem_kind(uint32_t k) { return k < GFL_MEM_KIND_COUNT ? (uint8_t)k : GFL_MEM_UNKNOWN; }
_Static_assert((int)CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC == (int)GFL_MEM_MANAGED_STATIC &&
                   (int)CUPTI_ACTIVITY_MEMORY_KIND_PINNED == (int)GFL_MEM_PINNED,
               "memory kinds share CUPTI's numbering");

static uint8_t sync_kind(uint32_t k) { return k < GFL_SYNC_KIND_COUNT ? (uint8_t)k : GFL_SYNC_UNKNOWN; }
_Static_assert((int)CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE == (int)GFL_SYNC_CONTEXT,
               "sync kinds share CUPTI's numbering");

/* ---- validation and attribution ------------------------------------------- */

/* 0: keep; otherwise the record is counted and not written. */
static bool rejected(gfl_records *r, uint64_t start, uint64_t end)
{
    if (start == 0 || end < start) {
        r->stats.malformed++;
        r->host->count_lost(GFL_DROP_BAD_EVENT, GFL_CHANNEL_DEVICE, 1);
        return true;
    }
    if (start < r->host->session_start_ns || end > r->now + FUTURE_SLACK_NS) {
        r->stats.out_of_session++;
        r->host->count_lost(GFL_DROP_OUT_OF_SESSION, GFL_CHANNEL_DEVICE, 1);
        return true;
    }
    return false;
}

typedef struct attribution {
    gfl_launch_info launch;
    uint64_t external_id;
    uint8_t external_kind;
} attribution;

static void attribute(gfl_records *r, uint32_t corr, attribution *a)
{
    memset(a, 0, sizeof *a);
    if (!gfl_launch_find(r->launches, corr, &a->launch)) {
        memset(&a->launch, 0, sizeof a->launch);
        /* id 0: work the driver did on its own (context setup), no call */
        if (corr)
            r->stats.unattributed++;
    }
    const external_slot *e = &r->externals[corr & ((1u << EXTERNAL_BITS) - 1)];
    if (corr && e->corr == corr) {
        a->external_id = e->id;
        a->external_kind = e->kind;
    }
}

static void push(gfl_records *r, const gfl_event *ev) { (void)r->host->push_wait(ev); }

static void header(gfl_event *ev, uint8_t type, uint32_t device, const attribution *a, uint64_t ts)
{
    memset(ev, 0, sizeof *ev);
    ev->h.type = type;
    ev->h.device = (uint16_t)device;
    ev->h.tid = a->launch.tid;
    ev->h.ts = ts;
}

/* ---- one record of each kind ------------------------------------------------ */

static void kernel(gfl_records *r, const CUpti_ActivityKernel10 *k)
{
    if (rejected(r, k->start, k->end))
        return;
    attribution a;
    attribute(r, k->correlationId, &a);
    gfl_event ev;
    header(&ev, GFL_EV_KERNEL, k->deviceId, &a, k->start);
    gfl_kernel_payload *p = &ev.u.kernel;
    p->end_ts = k->end;
    p->scope_id = a.launch.scope;
    p->external_id = a.external_id;
    p->external_kind = a.external_kind;
    p->api_start_ts = a.launch.api_start;
    p->api_end_ts = a.launch.api_end;
    p->context = k->contextId;
    p->stream = k->streamId;
    p->correlation = k->correlationId;
    p->grid[0] = (uint32_t)k->gridX;
    p->grid[1] = (uint32_t)k->gridY;
    p->grid[2] = (uint32_t)k->gridZ;
    p->block[0] = (uint16_t)k->blockX;
    p->block[1] = (uint16_t)k->blockY;
    p->block[2] = (uint16_t)k->blockZ;
    p->registers = k->registersPerThread;
    p->static_smem = (uint32_t)k->staticSharedMemory;
    p->dynamic_smem = (uint32_t)k->dynamicSharedMemory;
    p->local_mem = k->localMemoryPerThread;
    p->stack_id = a.launch.stack;
    p->graph_id = k->graphId;
    p->nvtx = a.launch.nvtx;
    gfl_kernel_details_fill(r->details, k, p);
    r->stats.kernels++;
    push(r, &ev);
}

/* What a copy record says, whichever record kind carried it. */
typedef struct copy_fields {
    uint64_t start, end, bytes;
    uint32_t device, dst_device, context, stream, correlation, graph_id;
    uint8_t copy_kind, src_kind, dst_kind;
} copy_fields;

static void copy_event(gfl_records *r, const copy_fields *c)
{
    if (rejected(r, c->start, c->end))
        return;
    attribution a;
    attribute(r, c->correlation, &a);
    gfl_event ev;
    header(&ev, GFL_EV_MEMCPY, c->device, &a, c->start);
    gfl_memcpy_payload *p = &ev.u.memcpy;
    p->end_ts = c->end;
    p->bytes = c->bytes;
    p->scope_id = a.launch.scope;
    p->external_id = a.external_id;
    p->api_start_ts = a.launch.api_start;
    p->api_end_ts = a.launch.api_end;
    p->context = c->context;
    p->stream = c->stream;
    p->correlation = c->correlation;
    p->stack_id = a.launch.stack;
    p->nvtx = a.launch.nvtx;
    p->graph_id = c->graph_id;
    p->copy_kind = c->copy_kind;
    p->src_kind = c->src_kind;
    p->dst_kind = c->dst_kind;
    p->dst_device = (uint16_t)c->dst_device;
    r->stats.copies++;
    push(r, &ev);
}

static void copy(gfl_records *r, const CUpti_ActivityMemcpy6 *m)
{
    copy_event(r, &(copy_fields){.start = m->start,
                                 .end = m->end,
                                 .bytes = m->bytes,
                                 .device = m->deviceId,
                                 .dst_device = m->deviceId,
                                 .context = m->contextId,
                                 .stream = m->streamId,
                                 .correlation = m->correlationId,
                                 .graph_id = m->graphId,
                                 .copy_kind = copy_kind(m->copyKind),
                                 .src_kind = mem_kind(m->srcKind),
                                 .dst_kind = mem_kind(m->dstKind)});
}

/* Peer copies (MEMCPY2) are recorded on the source device. */
static void peer_copy(gfl_records *r, const CUpti_ActivityMemcpyPtoP4 *m)
{
    copy_event(r, &(copy_fields){.start = m->start,
                                 .end = m->end,
                                 .bytes = m->bytes,
                                 .device = m->srcDeviceId,
                                 .dst_device = m->dstDeviceId,
                                 .context = m->contextId,
                                 .stream = m->streamId,
                                 .correlation = m->correlationId,
                                 .graph_id = m->graphId,
                                 .copy_kind = GFL_COPY_PTOP,
                                 .src_kind = mem_kind(m->srcKind),
                                 .dst_kind = mem_kind(m->dstKind)});
}

static void memset_record(gfl_records *r, const CUpti_ActivityMemset4 *m)
{
    if (rejected(r, m->start, m->end))
        return;
    attribution a;
    attribute(r, m->correlationId, &a);
    gfl_event ev;
    header(&ev, GFL_EV_MEMSET, m->deviceId, &a, m->start);
    gfl_memset_payload *p = &ev.u.memset;
    p->end_ts = m->end;
    p->bytes = m->bytes;
    p->scope_id = a.launch.scope;
    p->external_id = a.external_id;
    p->api_start_ts = a.launch.api_start;
    p->api_end_ts = a.launch.api_end;
    p->context = m->contextId;
    p->stream = m->streamId;
    p->correlation = m->correlationId;
    p->value = m->value;
    p->nvtx = a.launch.nvtx;
    p->graph_id = m->graphId;
    p->mem_kind = mem_kind(m->memoryKind);
    r->stats.memsets++;
    push(r, &ev);
}

static void sync_record(gfl_records *r, const CUpti_ActivitySynchronization2 *s)
{
    if (rejected(r, s->start, s->end))
        return;
    attribution a;
    attribute(r, s->correlationId, &a);
    gfl_event ev;
    header(&ev, GFL_EV_SYNC, 0, &a, s->start);
    gfl_sync_payload *p = &ev.u.sync;
    p->end_ts = s->end;
    p->scope_id = a.launch.scope;
    p->external_id = a.external_id;
    p->context = s->contextId;
    /* CUPTI reports "no stream" (context syncs) and "no event" as all ones */
    p->stream = s->streamId == UINT32_MAX ? 0 : s->streamId;
    p->correlation = s->correlationId;
    p->stack_id = a.launch.stack;
    p->nvtx = a.launch.nvtx;
    p->cuda_event = s->cudaEventId == UINT32_MAX ? 0 : s->cudaEventId;
    p->sync_kind = sync_kind(s->type);
    r->stats.syncs++;
    push(r, &ev);
}

static void memory_record(gfl_records *r, const CUpti_ActivityMemory4 *m)
{
    bool alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    if (!alloc && m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
        r->stats.other++;
        return;
    }
    if (rejected(r, m->timestamp, m->timestamp))
        return;
    attribution a;
    attribute(r, m->correlationId, &a);
    gfl_event ev;
    header(&ev, alloc ? GFL_EV_MEM_ALLOC : GFL_EV_MEM_FREE, m->deviceId, &a, m->timestamp);
    gfl_mem_payload *p = &ev.u.mem;
    p->address = m->address;
    p->bytes = m->bytes;
    p->scope_id = a.launch.scope;
    p->external_id = a.external_id;
    p->context = m->contextId;
    p->stream = m->streamId == UINT32_MAX ? 0 : m->streamId;
    p->correlation = m->correlationId;
    p->stack_id = a.launch.stack;
    p->nvtx = a.launch.nvtx;
    p->mem_kind = mem_kind(m->memoryKind);
    p->is_async = m->isAsync != 0;
    if (alloc)
        r->stats.allocs++;
    else
        r->stats.frees++;
    push(r, &ev);
}

static void external(gfl_records *r, const CUpti_ActivityExternalCorrelation *e)
{
    external_slot *s = &r->externals[e->correlationId & ((1u << EXTERNAL_BITS) - 1)];
    s->corr = e->correlationId;
    s->kind = (uint8_t)e->externalKind;
    s->id = e->externalId;
    r->stats.externals++;
}

void gfl_records_process_buffer(gfl_records *r, uint8_t *data, size_t valid,
                                CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **))
{
    r->now = r->host->now_ns();
    CUpti_Activity *rec = NULL;
    while (next(data, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL: kernel(r, (const CUpti_ActivityKernel10 *)rec); break;
        case CUPTI_ACTIVITY_KIND_MEMCPY: copy(r, (const CUpti_ActivityMemcpy6 *)rec); break;
        case CUPTI_ACTIVITY_KIND_MEMCPY2: peer_copy(r, (const CUpti_ActivityMemcpyPtoP4 *)rec); break;
        case CUPTI_ACTIVITY_KIND_MEMSET: memset_record(r, (const CUpti_ActivityMemset4 *)rec); break;
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: sync_record(r, (const CUpti_ActivitySynchronization2 *)rec); break;
        case CUPTI_ACTIVITY_KIND_MEMORY2: memory_record(r, (const CUpti_ActivityMemory4 *)rec); break;
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
            external(r, (const CUpti_ActivityExternalCorrelation *)rec);
            break;
        default:
            /* API records (RUNTIME, DRIVER) are enabled for the external ids
             * they anchor; their timing came from our own callbacks */
            r->stats.other++;
            break;
        }
    }
}
