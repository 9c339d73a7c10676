/*
 * A fake libcupti.so.13 for the tests of the CUPTI trace plugin
 * (src/backend/cupti/), so that the plugin runs through its real dlopen
 * path (GPUFL_CUPTI_LIBRARY) on machines without a GPU. It exports exactly
 * the functions the plugin binds (cupti_api.c), with CUPTI 13's own types
 * from the toolkit's headers, and a control API (fake_cupti.h) with which a
 * test plays the program's CUDA calls.
 *
 * What it models, after CUPTI's documentation:
 *   - one subscriber at a time: a second cuptiSubscribe gets
 *     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, and cuptiSubscribe_v2
 *     writes the first one's name ("CUPTI for <name>") into
 *     oldSubscriberName; unsubscribing forgets the enabled callbacks;
 *   - callback names for a handful of runtime and driver callback ids, with
 *     their real numbers and names (every other id of those domains is
 *     CUPTI_ERROR_INVALID_PARAMETER; names of other domains too, as in
 *     CUPTI); callbacks per (domain, id) enabled by cuptiEnableCallback or
 *     cuptiEnableDomain, and only enabled ones delivered;
 *   - activity kinds enabled and disabled one by one (those listed in
 *     record_size(); any other is CUPTI_ERROR_INVALID_KIND, and a test may
 *     make any kind fail with fake_cupti_refuse_kind);
 *   - the timestamp callback, from which every record timestamp comes
 *     (without one: CLOCK_REALTIME, a clock of CUPTI's own);
 *   - per-thread activity buffers as in CUDA 13: each thread that makes a
 *     call appends its records to its own buffer, asked of the client's
 *     request callback when it has none; a full buffer (by bytes, or by the
 *     client's maxNumRecords) goes back through the completion callback on
 *     that thread; records find no buffer when the request callback gives
 *     none, and are counted as dropped;
 *   - cuptiActivityFlushAll: every buffer of every thread goes back through
 *     the completion callback on the calling thread; records here complete
 *     at once, so a default flush returns every buffer holding records, a
 *     forced one every buffer, empty ones too;
 *   - cuptiActivityGetNextRecord walking records laid out back to back as
 *     CUPTI writes them, each as long as its kind's record in CUPTI 13
 *     (CUpti_ActivityKernel10, Memcpy6, MemcpyPtoP4, Memset4,
 *     Synchronization2, Memory4, ExternalCorrelation, API);
 *   - cuptiActivityGetNumDroppedRecords, reset by every call.
 *
 * What it does not model: devices, contexts and streams beyond the numbers
 * a test passes; records completing later than the call (here a kernel
 * ends before its launch call's records are written, so a default flush
 * never holds a buffer back); where real CUPTI puts device records (here
 * always the launching thread's buffer, right after the call's external
 * correlation and API records, which is the order the plugin's join
 * relies on); CUPTI's own threads (nothing is ever delivered except on a
 * thread that calls in); NVTX beyond the A (ASCII) push, pop, mark,
 * start, end and domain calls of the control API; the real
 * cuptiActivityPushExternalCorrelationId (fake_cupti_push_external_id
 * stands in); the deprecated per-context flush; activity attributes beyond
 * accepting the documented ones; anything the plugin does not bind.
 *
 * Threads: any thread may call anything. One mutex guards the subscriber,
 * the enabled sets and every thread's buffer; it is never held while a
 * client callback runs, so a callback may call back into CUPTI (the
 * plugin flushes from its context-destroy callback).
 */
#define CUPTI_LIB /* cupti*.h: the declarations below are exported */
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_cupti.h"

#include "fake_internal.h"

#define EXPORT __attribute__((visibility("default")))

#define MAX_CBID 1024 /* above every domain's CBID_SIZE */
#define MAX_EXTERNAL_DEPTH 16
#define MAX_DOMAINS 16
_Static_assert(CUPTI_DRIVER_TRACE_CBID_SIZE <= MAX_CBID && CUPTI_RUNTIME_TRACE_CBID_SIZE <= MAX_CBID &&
                   CUPTI_CBID_NVTX_SIZE <= MAX_CBID && CUPTI_CBID_RESOURCE_SIZE <= MAX_CBID,
               "every domain's ids fit");

/* ---- state ------------------------------------------------------------------ */

/* One thread's activity buffer. Entries are never freed: a thread that
 * exits leaves its records for the next flush, as in CUPTI. */
typedef struct thread_buffer {
    struct thread_buffer *next;
    uint8_t *data; /* NULL: none taken yet, or given back */
    size_t size;   /* bytes */
    size_t used;   /* bytes of records */
    size_t records;
    size_t max_records; /* 0: as many as fit */
} thread_buffer;

struct CUpti_Subscriber_st {
    int unused;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Guarded by lock. */
static struct {
    bool subscribed;
    char name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN]; /* "CUPTI for <name>", or "" */
    CUpti_CallbackFunc fn;
    void *userdata;
    uint8_t enabled[CUPTI_CB_DOMAIN_SIZE][MAX_CBID];
} sub;
static struct CUpti_Subscriber_st the_subscriber;

static struct {
    bool enabled[CUPTI_ACTIVITY_KIND_COUNT];
    CUptiResult refusal[CUPTI_ACTIVITY_KIND_COUNT];
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    CUpti_TimestampCallbackFunc timestamp;
    CUpti_ActivityThreadIdType tid_type;
    bool refuse_buffers;
    thread_buffer *threads;
    /* API records of single functions (cuptiActivityEnableRuntimeApi and
     * cuptiActivityEnableDriverApi), without the whole RUNTIME/DRIVER kind */
    uint8_t api_records[CUPTI_CB_DOMAIN_SIZE][MAX_CBID];
} act;

typedef struct interned {
    struct interned *next;
    char text[];
} interned;
static interned *names; /* kernel names: CUPTI's strings outlive the buffers */

static _Atomic uint32_t next_corr;
static _Atomic uint64_t next_nvtx_range;
static _Atomic uint64_t dropped; /* since the last cuptiActivityGetNumDroppedRecords */

static struct {
    _Atomic uint64_t subscribes, unsubscribes, subscribe_refusals, callbacks, buffers_requested, buffers_empty,
        buffers_completed, records, records_dropped, flushes, forced_flushes, timestamp_calls;
} count;

static __thread thread_buffer *my_buffer;
static __thread struct {
    uint64_t ids[MAX_EXTERNAL_DEPTH];
    unsigned depth;
} my_external[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
static __thread int my_nvtx_depth;

static void bump(_Atomic uint64_t *c, uint64_t n) { atomic_fetch_add_explicit(c, n, memory_order_relaxed); }

/* ---- callback names ------------------------------------------------------------ */

typedef struct api_name {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    const char *name;
} api_name;

// clang-format off
#define RT(n) {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##n, #n}
#define DRV(n) {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##n, #n}
// clang-format on
static const api_name api_names[] = {
    RT(cudaGetLastError_v3020),
    RT(cudaSetDevice_v3020),
    RT(cudaGetDevice_v3020),
    RT(cudaMalloc_v3020),
    RT(cudaFree_v3020),
    RT(cudaMemcpy_v3020),
    RT(cudaMemcpyAsync_v3020),
    RT(cudaMemsetAsync_v3020),
    RT(cudaStreamSynchronize_v3020),
    RT(cudaEventSynchronize_v3020),
    RT(cudaStreamWaitEvent_v3020),
    RT(cudaMemcpyPeerAsync_v4000),
    RT(cudaDeviceSynchronize_v3020),
    RT(cudaLaunchKernel_v7000),
    RT(cudaLaunchKernel_ptsz_v7000),
    RT(cudaGraphLaunch_v10000),
    RT(cudaMallocAsync_v11020),
    RT(cudaFreeAsync_v11020),
    DRV(cuInit),
    DRV(cuDeviceGet),
    DRV(cuCtxSynchronize),
    DRV(cuMemAlloc_v2),
    DRV(cuMemcpyHtoD_v2),
    DRV(cuLaunchKernel),
    DRV(cuGraphLaunch),
};

static const char *name_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    for (size_t i = 0; i < sizeof api_names / sizeof *api_names; i++)
        if (api_names[i].domain == domain && api_names[i].cbid == cbid)
            return api_names[i].name;
    return NULL;
}

/* The ids a domain has, for argument checks. */
static uint32_t domain_size(CUpti_CallbackDomain domain)
{
    switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    default: return 0;
    }
}

/* ---- activity records ------------------------------------------------------------ */

/* Bytes of one record of kind, as CUPTI 13 lays them out; 0 for kinds the
 * fake does not write. */
static size_t record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    default: return 0;
    }
}

static bool kind_on(CUpti_ActivityKind kind)
{
    pthread_mutex_lock(&lock);
    bool on = act.enabled[kind];
    pthread_mutex_unlock(&lock);
    return on;
}

uint64_t fake__timestamp(void)
{
    pthread_mutex_lock(&lock);
    CUpti_TimestampCallbackFunc fn = act.timestamp;
    pthread_mutex_unlock(&lock);
    if (fn) {
        bump(&count.timestamp_calls, 1);
        return fn();
    }
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint32_t thread_id(void)
{
    pthread_mutex_lock(&lock);
    CUpti_ActivityThreadIdType type = act.tid_type;
    pthread_mutex_unlock(&lock);
    if (type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return (uint32_t)syscall(SYS_gettid);
    return (uint32_t)(uintptr_t)pthread_self();
}

static const char *intern_name(const char *s)
{
    if (!s)
        return NULL;
    pthread_mutex_lock(&lock);
    for (interned *n = names; n; n = n->next)
        if (!strcmp(n->text, s)) {
            pthread_mutex_unlock(&lock);
            return n->text;
        }
    interned *n = malloc(sizeof *n + strlen(s) + 1);
    if (!n)
        abort();
    strcpy(n->text, s);
    n->next = names;
    names = n;
    pthread_mutex_unlock(&lock);
    return n->text;
}

/* The calling thread's entry, registered on first use. */
static thread_buffer *self(void)
{
    if (my_buffer)
        return my_buffer;
    thread_buffer *t = calloc(1, sizeof *t);
    if (!t)
        abort();
    pthread_mutex_lock(&lock);
    t->next = act.threads;
    act.threads = t;
    pthread_mutex_unlock(&lock);
    return my_buffer = t;
}

/* A buffer taken off its thread, to be given back. */
typedef struct detached {
    uint8_t *data;
    size_t size, used;
} detached;

/* Under lock. */
static detached detach(thread_buffer *t)
{
    detached d = {t->data, t->size, t->used};
    t->data = NULL;
    t->size = t->used = t->records = t->max_records = 0;
    return d;
}

/* Outside lock: the client may call back into CUPTI. */
static void give_back(const detached *d)
{
    pthread_mutex_lock(&lock);
    CUpti_BuffersCallbackCompleteFunc complete = act.complete;
    pthread_mutex_unlock(&lock);
    if (!d->data || !complete)
        return;
    bump(&count.buffers_completed, 1);
    /* context and stream are always NULL and 0 since CUDA 6 */
    complete(NULL, 0, d->data, d->size, d->used);
}

/* Asks the client for a buffer for the calling thread. Returns false when
 * it gives none big enough for a record of n bytes. */
static bool take_buffer(thread_buffer *t, size_t n)
{
    pthread_mutex_lock(&lock);
    CUpti_BuffersCallbackRequestFunc request = act.request;
    bool refuse = act.refuse_buffers;
    pthread_mutex_unlock(&lock);
    if (!request)
        return false;
    uint8_t *data = NULL;
    size_t size = 0, max_records = 0;
    bump(&count.buffers_requested, 1);
    request(&data, &size, &max_records);
    if (data && (refuse || size < n)) {
        /* unusable: CUPTI hands it straight back, empty */
        detached d = {data, size, 0};
        give_back(&d);
        data = NULL;
    }
    if (!data) {
        bump(&count.buffers_empty, 1);
        return false;
    }
    pthread_mutex_lock(&lock);
    t->data = data;
    t->size = size;
    t->used = t->records = 0;
    t->max_records = max_records;
    pthread_mutex_unlock(&lock);
    return true;
}

/* Appends one record to the calling thread's buffer: a full buffer goes
 * back first, and a record with no buffer to go to is dropped. */
static void write_record(const void *record, size_t n)
{
    thread_buffer *t = self();
    for (int attempt = 0; attempt < 2; attempt++) {
        pthread_mutex_lock(&lock);
        if (t->data && t->used + n <= t->size && (!t->max_records || t->records < t->max_records)) {
            memcpy(t->data + t->used, record, n);
            t->used += n;
            t->records++;
            pthread_mutex_unlock(&lock);
            bump(&count.records, 1);
            return;
        }
        detached full = {NULL, 0, 0};
        if (t->data)
            full = detach(t);
        pthread_mutex_unlock(&lock);
        give_back(&full);
        if (!take_buffer(t, n))
            break;
    }
    bump(&count.records_dropped, 1);
    atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
}

/* ---- simulated calls --------------------------------------------------------------- */

typedef struct call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    char function[64]; /* the API function's name: no version suffix */
    const char *symbol;
    uint64_t correlation_data;
    CUpti_CallbackData data;
    uint64_t start, end; /* the call, for the API record */
} call;

/* Delivers one callback if the subscriber enabled it (fake_internal.h). */
void fake__deliver(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    pthread_mutex_lock(&lock);
    CUpti_CallbackFunc fn = sub.subscribed && cbid < MAX_CBID && sub.enabled[domain][cbid] ? sub.fn : NULL;
    void *userdata = sub.userdata;
    pthread_mutex_unlock(&lock);
    if (!fn)
        return;
    bump(&count.callbacks, 1);
    fn(userdata, domain, cbid, data);
}

static void call_enter_in(call *c, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char *symbol,
                          CUcontext context)
{
    memset(c, 0, sizeof *c);
    c->domain = domain;
    c->cbid = cbid;
    c->symbol = symbol;
    const char *name = name_of(domain, cbid);
    snprintf(c->function, sizeof c->function, "%s", name ? name : "?");
    char *version = strstr(c->function, "_v");
    if (version && version[2] >= '0' && version[2] <= '9')
        *version = '\0';
    uint32_t corr;
    while ((corr = atomic_fetch_add_explicit(&next_corr, 1, memory_order_relaxed) + 1) == 0)
        ; /* 0 is "no call" */
    c->data.callbackSite = CUPTI_API_ENTER;
    c->data.functionName = c->function;
    c->data.symbolName = symbol;
    c->data.context = context;
    c->data.contextUid = context ? FAKE_CUPTI_CONTEXT : 0;
    c->data.correlationData = &c->correlation_data;
    c->data.correlationId = corr;
    c->start = fake__timestamp();
    fake__deliver(domain, cbid, &c->data);
}

static void call_enter(call *c, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char *symbol)
{
    call_enter_in(c, domain, cbid, symbol, (CUcontext)(uintptr_t)0x1000);
}

/* The exit callback, then the call's external correlation and API records. */
static void call_exit(call *c)
{
    c->data.callbackSite = CUPTI_API_EXIT;
    fake__deliver(c->domain, c->cbid, &c->data);
    c->end = fake__timestamp();
    CUpti_ActivityKind api_kind =
        c->domain == CUPTI_CB_DOMAIN_DRIVER_API ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
    pthread_mutex_lock(&lock);
    bool this_api = c->cbid < MAX_CBID && act.api_records[c->domain][c->cbid];
    pthread_mutex_unlock(&lock);
    if (!kind_on(api_kind) && !this_api)
        return;
    if (kind_on(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
        /* one record per kind with an id pushed, before the API record */
        for (unsigned k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
            if (!my_external[k].depth)
                continue;
            CUpti_ActivityExternalCorrelation e;
            memset(&e, 0, sizeof e);
            e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            e.externalKind = (CUpti_ExternalCorrelationKind)k;
            e.externalId = my_external[k].ids[my_external[k].depth - 1];
            e.correlationId = c->data.correlationId;
            write_record(&e, sizeof e);
        }
    }
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = api_kind;
    a.cbid = c->cbid;
    a.start = c->start;
    a.end = c->end;
    a.processId = (uint32_t)getpid();
    a.threadId = thread_id();
    a.correlationId = c->data.correlationId;
    write_record(&a, sizeof a);
}

static void kernel_record(const fake_cupti_kernel *k, uint32_t corr, uint32_t graph_id, uint64_t start, uint64_t end)
{
    CUpti_ActivityKind kind = kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                              : kind_on(CUPTI_ACTIVITY_KIND_KERNEL)          ? CUPTI_ACTIVITY_KIND_KERNEL
                                                                             : CUPTI_ACTIVITY_KIND_INVALID;
    if (kind == CUPTI_ACTIVITY_KIND_INVALID)
        return;
    CUpti_ActivityKernel10 r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.registersPerThread = k->registers;
    r.start = start;
    r.end = end;
    r.completed = end;
    r.queued = start;
    r.submitted = start;
    r.deviceId = k->device;
    r.contextId = FAKE_CUPTI_CONTEXT;
    r.streamId = k->stream;
    r.gridX = (int32_t)k->grid[0];
    r.gridY = (int32_t)k->grid[1];
    r.gridZ = (int32_t)k->grid[2];
    r.blockX = (int32_t)k->block[0];
    r.blockY = (int32_t)k->block[1];
    r.blockZ = (int32_t)k->block[2];
    r.staticSharedMemory = k->static_smem;
    r.dynamicSharedMemory = k->dynamic_smem;
    r.localMemoryPerThread = k->local_mem;
    r.localMemoryTotal = k->local_mem * 1024;
    r.correlationId = corr;
    r.gridId = (int64_t)corr;
    r.name = intern_name(k->name);
    r.sharedMemoryExecuted = 228 * 1024;
    r.graphId = graph_id;
    r.clusterX = r.clusterY = r.clusterZ = 1;
    write_record(&r, sizeof r);
}

static uint64_t duration(const fake_cupti_kernel *k)
{
    return k->duration_ns ? k->duration_ns : FAKE_CUPTI_DURATION_NS;
}

/* ---- SASS metrics -------------------------------------------------------------- */

#define SASS_METRICS 6
#define SASS_MAX_INSTS 64
static const char *const sass_metric_names[SASS_METRICS] = {
    "smsp__sass_inst_executed",      "smsp__sass_thread_inst_executed",
    "smsp__sass_sectors_mem_global", "smsp__sass_sectors_mem_global_ideal",
    "smsp__sass_branch_targets",     "smsp__sass_branch_targets_threads_divergent"};

#define SASS_MAX_FUNCTIONS 4

typedef struct sass_record {
    unsigned function; /* index into sass.functions */
    uint32_t pc_offset;
    uint64_t v[SASS_METRICS]; /* unflushed counts, by metric index */
} sass_record;

/* A kernel's program. Every function shares one functionIndex in the
 * records, as the kernels of one module did on an H100. */
typedef struct sass_function {
    char name[256];
    uint32_t crc;
    fake_cupti_sass_inst program[SASS_MAX_INSTS];
    unsigned n_program;
} sass_function;

static struct {
    bool removed[SASS_METRICS];
    bool configured, enabled, lazy;
    uint64_t config_ids[SASS_METRICS];
    unsigned n_config;
    sass_function functions[SASS_MAX_FUNCTIONS];
    unsigned n_functions;
    sass_record records[SASS_MAX_FUNCTIONS * SASS_MAX_INSTS]; /* patched instructions */
    unsigned n_records;
    uint64_t flushes, dropped, set_configs;
} sass;

EXPORT void fake_cupti_sass_program(const char *function, uint32_t crc, const fake_cupti_sass_inst *insts, unsigned n)
{
    pthread_mutex_lock(&lock);
    unsigned f = 0;
    while (f < sass.n_functions && strcmp(sass.functions[f].name, function ? function : ""))
        f++;
    if (f == sass.n_functions && f < SASS_MAX_FUNCTIONS)
        sass.n_functions++;
    if (f < SASS_MAX_FUNCTIONS) {
        sass_function *fn = &sass.functions[f];
        snprintf(fn->name, sizeof fn->name, "%s", function ? function : "");
        fn->crc = crc;
        fn->n_program = n < SASS_MAX_INSTS ? n : SASS_MAX_INSTS;
        memcpy(fn->program, insts, fn->n_program * sizeof *insts);
    }
    pthread_mutex_unlock(&lock);
}

EXPORT void fake_cupti_sass_remove_metric(const char *name)
{
    pthread_mutex_lock(&lock);
    for (unsigned m = 0; m < SASS_METRICS; m++)
        if (!strcmp(name, sass_metric_names[m]))
            sass.removed[m] = true;
    pthread_mutex_unlock(&lock);
}

EXPORT void fake_cupti_sass_reset(void)
{
    pthread_mutex_lock(&lock);
    memset(&sass, 0, sizeof sass);
    pthread_mutex_unlock(&lock);
}

EXPORT void fake_cupti_sass_get_state(fake_cupti_sass_state *out)
{
    pthread_mutex_lock(&lock);
    *out = (fake_cupti_sass_state){.configured = sass.configured,
                                   .enabled = sass.enabled,
                                   .lazy = sass.lazy,
                                   .n_metrics = sass.n_config,
                                   .flushes = sass.flushes,
                                   .dropped = sass.dropped,
                                   .set_configs = sass.set_configs};
    pthread_mutex_unlock(&lock);
}

/* The kernel runs inside its launch call here, so its counts are there
 * by the call's exit callback, as they are after a synchronize. */
static void sass_execute(const char *function)
{
    bool concurrent = kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    pthread_mutex_lock(&lock);
    unsigned f = 0;
    while (function && f < sass.n_functions && strcmp(function, sass.functions[f].name))
        f++;
    if (sass.enabled && function && f < sass.n_functions) {
        const sass_function *fn = &sass.functions[f];
        for (unsigned i = 0; i < fn->n_program; i++) {
            const fake_cupti_sass_inst *p = &fn->program[i];
            unsigned r;
            for (r = 0;
                 r < sass.n_records && (sass.records[r].function != f || sass.records[r].pc_offset != p->pc_offset);
                 r++)
                ;
            if (r == sass.n_records) { /* patched at its first execution */
                sass.records[r] = (sass_record){.function = f, .pc_offset = p->pc_offset};
                sass.n_records++;
            }
            uint64_t add[SASS_METRICS] = {p->inst,          p->thread_inst, p->sectors,
                                          p->sectors_ideal, p->branch,      p->divergent};
            /* as on an H100: under concurrent kernel tracing the patched
             * instructions are there, their counts stay 0 */
            for (unsigned m = 0; m < SASS_METRICS && !concurrent; m++)
                sass.records[r].v[m] += add[m];
        }
    }
    pthread_mutex_unlock(&lock);
}

EXPORT uint32_t fake_cupti_launch_kernel(const fake_cupti_kernel *k)
{
    call c, nested;
    if (k->driver_api)
        call_enter(&c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, k->name);
    else if (k->unbound_thread)
        call_enter_in(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, k->name, NULL);
    else
        call_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, k->name);
    if (k->unbound_thread && !k->driver_api)
        call_enter(&nested, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, k->name);
    sass_execute(k->name);
    uint64_t start = fake__timestamp();
    if (k->unbound_thread && !k->driver_api)
        call_exit(&nested);
    call_exit(&c);
    kernel_record(k, c.data.correlationId, 0, start, start + duration(k));
    fake__rp_kernel(duration(k));
    return c.data.correlationId;
}

EXPORT uint32_t fake_cupti_bad_record(fake_cupti_bad bad)
{
    static const fake_cupti_kernel k = {.name = "teardown_kernel", .grid = {1, 1, 1}, .block = {32, 1, 1}};
    call c;
    call_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, k.name);
    uint64_t now = fake__timestamp();
    call_exit(&c);
    uint64_t start = now, end = now + 1000;
    switch (bad) {
    case FAKE_CUPTI_BAD_ZERO_START: start = 0; break;
    case FAKE_CUPTI_BAD_END_BEFORE_START: end = now - 1000; break;
    case FAKE_CUPTI_BAD_FUTURE:
        start = now + 3600ull * 1000000000ull;
        end = start + 1000;
        break;
    case FAKE_CUPTI_BAD_BEFORE_SESSION:
        start = 1;
        end = 2;
        break;
    }
    kernel_record(&k, c.data.correlationId, 0, start, end);
    return c.data.correlationId;
}

EXPORT uint32_t fake_cupti_graph_launch(uint32_t graph_id, const fake_cupti_kernel *kernels, unsigned n)
{
    call c;
    call_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, NULL);
    uint64_t start = fake__timestamp();
    call_exit(&c);
    for (unsigned i = 0; i < n; i++) {
        kernel_record(&kernels[i], c.data.correlationId, graph_id, start, start + duration(&kernels[i]));
        start += duration(&kernels[i]);
    }
    return c.data.correlationId;
}

static void copy_record(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind, uint64_t bytes, uint32_t stream,
                        uint32_t corr, uint64_t start)
{
    if (!kind_on(CUPTI_ACTIVITY_KIND_MEMCPY))
        return;
    CUpti_ActivityMemcpy6 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    r.copyKind = copy_kind;
    r.srcKind = src_kind;
    r.dstKind = dst_kind;
    r.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    r.bytes = bytes;
    r.start = start;
    r.end = start + FAKE_CUPTI_DURATION_NS;
    r.deviceId = 0;
    r.contextId = FAKE_CUPTI_CONTEXT;
    r.streamId = stream;
    r.correlationId = corr;
    r.copyCount = 1;
    write_record(&r, sizeof r);
}

EXPORT uint32_t fake_cupti_memcpy(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind, uint64_t bytes,
                                  uint32_t stream)
{
    call c;
    call_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, NULL);
    uint64_t start = fake__timestamp();
    call_exit(&c);
    copy_record(copy_kind, src_kind, dst_kind, bytes, stream, c.data.correlationId, start);
    return c.data.correlationId;
}

EXPORT uint32_t fake_cupti_memcpy_peer(uint32_t src_device, uint32_t dst_device, uint64_t bytes, uint32_t stream)
{
    call c;
    call_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000, NULL);
    uint64_t start = fake__timestamp();
    call_exit(&c);
    if (kind_on(CUPTI_ACTIVITY_KIND_MEMCPY2)) {
        CUpti_ActivityMemcpyPtoP4 r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
        r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
        r.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        r.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        r.bytes = bytes;
        r.start = start;
        r.end = start + FAKE_CUPTI_DURATION_NS;
        r.deviceId = src_device;
        r.contextId = FAKE_CUPTI_CONTEXT;
        r.streamId = stream;
        r.srcDeviceId = src_device;
        r.srcContextId = FAKE_CUPTI_CONTEXT;
        r.dstDeviceId = dst_device;
        r.dstContextId = FAKE_CUPTI_CONTEXT + 1;
        r.correlationId = c.data.correlationId;
        write_record(&r, sizeof r);
    }
    return c.data.correlationId;
}

EXPORT uint32_t fake_cupti_memset(uint64_t bytes, uint32_t value, uint32_t stream)
{
    call c;
    call_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, NULL);
    uint64_t start = fake__timestamp();
    call_exit(&c);
    if (kind_on(CUPTI_ACTIVITY_KIND_MEMSET)) {
        CUpti_ActivityMemset4 r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
        r.value = value;
        r.bytes = bytes;
        r.start = start;
        r.end = start + FAKE_CUPTI_DURATION_NS;
        r.deviceId = 0;
        r.contextId = FAKE_CUPTI_CONTEXT;
        r.streamId = stream;
        r.correlationId = c.data.correlationId;
        r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        write_record(&r, sizeof r);
    }
    return c.data.correlationId;
}

EXPORT uint32_t fake_cupti_sync(CUpti_ActivitySynchronizationType type, uint32_t stream, uint32_t event)
{
    CUpti_CallbackId cbid = type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
                                ? CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020
                            : type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE
                                ? CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020
                            : type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT
                                ? CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020
                                : CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020;
    call c;
    call_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, NULL);
    uint64_t start = fake__timestamp();
    uint64_t end = fake__timestamp();
    call_exit(&c);
    if (kind_on(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
        CUpti_ActivitySynchronization2 r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
        r.type = type;
        r.start = start;
        r.end = end;
        r.correlationId = c.data.correlationId;
        r.contextId = FAKE_CUPTI_CONTEXT;
        /* CUPTI writes all ones for "no stream" and "no event" */
        r.streamId = type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE ? UINT32_MAX : stream;
        r.cudaEventId = event ? event : UINT32_MAX;
        write_record(&r, sizeof r);
    }
    return c.data.correlationId;
}

static uint32_t memory_call(bool alloc, uint64_t address, uint64_t bytes, bool async, uint32_t stream)
{
    CUpti_CallbackId cbid =
        alloc ? (async ? CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020 : CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020)
              : (async ? CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020 : CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020);
    call c;
    call_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, NULL);
    uint64_t when = fake__timestamp();
    call_exit(&c);
    if (kind_on(CUPTI_ACTIVITY_KIND_MEMORY2)) {
        CUpti_ActivityMemory4 r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
        r.memoryOperationType =
            alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        r.correlationId = c.data.correlationId;
        r.address = address;
        r.bytes = bytes;
        r.timestamp = when;
        r.processId = (uint32_t)getpid();
        r.deviceId = 0;
        r.contextId = FAKE_CUPTI_CONTEXT;
        r.streamId = async ? stream : UINT32_MAX;
        r.isAsync = async;
        write_record(&r, sizeof r);
    }
    return c.data.correlationId;
}

EXPORT uint32_t fake_cupti_malloc(uint64_t address, uint64_t bytes, bool async, uint32_t stream)
{
    return memory_call(true, address, bytes, async, stream);
}

/* cudaMalloc(&p, bytes) returning cudaErrorMemoryAllocation: no record. */
EXPORT uint32_t fake_cupti_malloc_oom(uint64_t bytes)
{
    call c;
    void *result = NULL;
    cudaMalloc_v3020_params params = {.devPtr = &result, .size = (size_t)bytes};
    int rc = 2; /* cudaErrorMemoryAllocation */
    call_enter(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, NULL);
    c.data.functionParams = &params;
    c.data.functionReturnValue = &rc;
    call_exit(&c);
    return c.data.correlationId;
}

EXPORT uint32_t fake_cupti_free(uint64_t address, uint64_t bytes, bool async, uint32_t stream)
{
    return memory_call(false, address, bytes, async, stream);
}

/* ---- NVTX ------------------------------------------------------------------------- */

static void nvtx(CUpti_CallbackId cbid, const char *function, const void *params, const void *result)
{
    CUpti_NvtxData d = {.functionName = function, .functionParams = params, .functionReturnValue = result};
    fake__deliver(CUPTI_CB_DOMAIN_NVTX, cbid, &d);
}

EXPORT void fake_cupti_nvtx_push(const char *message)
{
    nvtxRangePushA_params p = {.message = message};
    int level = my_nvtx_depth++;
    nvtx(CUPTI_CBID_NVTX_nvtxRangePushA, "nvtxRangePushA", &p, &level);
}

EXPORT void fake_cupti_nvtx_pop(void)
{
    nvtxRangePop_params p = {0};
    int level = my_nvtx_depth > 0 ? --my_nvtx_depth : -1;
    nvtx(CUPTI_CBID_NVTX_nvtxRangePop, "nvtxRangePop", &p, &level);
}

EXPORT void fake_cupti_nvtx_mark(const char *message)
{
    nvtxMarkA_params p = {.message = message};
    nvtx(CUPTI_CBID_NVTX_nvtxMarkA, "nvtxMarkA", &p, NULL);
}

EXPORT uint64_t fake_cupti_nvtx_start(const char *message)
{
    nvtxRangeStartA_params p = {.message = message};
    nvtxRangeId_t id = atomic_fetch_add_explicit(&next_nvtx_range, 1, memory_order_relaxed) + 1;
    nvtx(CUPTI_CBID_NVTX_nvtxRangeStartA, "nvtxRangeStartA", &p, &id);
    return id;
}

EXPORT void fake_cupti_nvtx_end(uint64_t id)
{
    nvtxRangeEnd_params p = {.id = id};
    nvtx(CUPTI_CBID_NVTX_nvtxRangeEnd, "nvtxRangeEnd", &p, NULL);
}

static char domains[MAX_DOMAINS]; /* their addresses are the handles */
static _Atomic unsigned n_domains;

EXPORT void *fake_cupti_nvtx_domain_create(const char *name)
{
    unsigned i = atomic_fetch_add_explicit(&n_domains, 1, memory_order_relaxed);
    if (i >= MAX_DOMAINS)
        abort();
    nvtxDomainHandle_t handle = (nvtxDomainHandle_t)(void *)&domains[i];
    nvtxDomainCreateA_params p = {.name = name};
    nvtx(CUPTI_CBID_NVTX_nvtxDomainCreateA, "nvtxDomainCreateA", &p, &handle);
    return handle;
}

EXPORT void fake_cupti_nvtx_domain_push(void *domain, const char *message)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message;
    nvtxDomainRangePushEx_params p = {.domain = (nvtxDomainHandle_t)domain, .core = {.eventAttrib = &a}};
    int level = my_nvtx_depth++;
    nvtx(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, "nvtxDomainRangePushEx", &p, &level);
}

EXPORT void fake_cupti_nvtx_domain_pop(void *domain)
{
    nvtxDomainRangePop_params p = {.domain = (nvtxDomainHandle_t)domain};
    int level = my_nvtx_depth > 0 ? --my_nvtx_depth : -1;
    nvtx(CUPTI_CBID_NVTX_nvtxDomainRangePop, "nvtxDomainRangePop", &p, &level);
}

/* ---- other controls ------------------------------------------------------------ */

EXPORT void fake_cupti_push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    if ((unsigned)kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE || my_external[kind].depth >= MAX_EXTERNAL_DEPTH)
        abort();
    my_external[kind].ids[my_external[kind].depth++] = id;
}

EXPORT void fake_cupti_pop_external_id(CUpti_ExternalCorrelationKind kind)
{
    if ((unsigned)kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE && my_external[kind].depth)
        my_external[kind].depth--;
}

EXPORT void fake_cupti_drop(uint64_t n)
{
    bump(&count.records_dropped, n);
    atomic_fetch_add_explicit(&dropped, n, memory_order_relaxed);
}

EXPORT void fake_cupti_destroy_context(uint32_t context)
{
    CUpti_ResourceData d;
    memset(&d, 0, sizeof d);
    d.context = (CUcontext)(uintptr_t)(0x1000 * context);
    fake__deliver(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &d);
}

EXPORT void fake_cupti_refuse_kind(CUpti_ActivityKind kind, CUptiResult rc)
{
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
        abort();
    pthread_mutex_lock(&lock);
    act.refusal[kind] = rc;
    pthread_mutex_unlock(&lock);
}

EXPORT void fake_cupti_refuse_buffers(bool refuse)
{
    pthread_mutex_lock(&lock);
    act.refuse_buffers = refuse;
    pthread_mutex_unlock(&lock);
}

EXPORT void fake_cupti_get_counters(fake_cupti_counters *out)
{
#define GET(f) out->f = atomic_load_explicit(&count.f, memory_order_relaxed)
    GET(subscribes);
    GET(unsubscribes);
    GET(subscribe_refusals);
    GET(callbacks);
    GET(buffers_requested);
    GET(buffers_empty);
    GET(buffers_completed);
    GET(records);
    GET(records_dropped);
    GET(flushes);
    GET(forced_flushes);
    GET(timestamp_calls);
#undef GET
}

EXPORT uint64_t fake_cupti_pending_records(void)
{
    uint64_t n = 0;
    pthread_mutex_lock(&lock);
    for (thread_buffer *t = act.threads; t; t = t->next)
        n += t->records;
    pthread_mutex_unlock(&lock);
    return n;
}

EXPORT bool fake_cupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if ((unsigned)domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID)
        return false;
    pthread_mutex_lock(&lock);
    bool on = sub.subscribed && sub.enabled[domain][cbid];
    pthread_mutex_unlock(&lock);
    return on;
}

EXPORT bool fake_cupti_activity_enabled(CUpti_ActivityKind kind)
{
    return (unsigned)kind < CUPTI_ACTIVITY_KIND_COUNT && kind_on(kind);
}

EXPORT bool fake_cupti_subscribed(void)
{
    pthread_mutex_lock(&lock);
    bool on = sub.subscribed;
    pthread_mutex_unlock(&lock);
    return on;
}

EXPORT bool fake_cupti_has_timestamp_callback(void)
{
    pthread_mutex_lock(&lock);
    bool on = act.timestamp != NULL;
    pthread_mutex_unlock(&lock);
    return on;
}

EXPORT CUpti_ActivityThreadIdType fake_cupti_thread_id_type(void)
{
    pthread_mutex_lock(&lock);
    CUpti_ActivityThreadIdType type = act.tid_type;
    pthread_mutex_unlock(&lock);
    return type;
}

/* ---- the CUPTI API the plugin binds ------------------------------------------------ */

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    static const struct {
        CUptiResult rc;
        const char *text;
    } texts[] = {
// clang-format off
#define TEXT(n) {n, #n}
        // clang-format on
        TEXT(CUPTI_SUCCESS),
        TEXT(CUPTI_ERROR_INVALID_PARAMETER),
        TEXT(CUPTI_ERROR_INVALID_OPERATION),
        TEXT(CUPTI_ERROR_OUT_OF_MEMORY),
        TEXT(CUPTI_ERROR_MAX_LIMIT_REACHED),
        TEXT(CUPTI_ERROR_NOT_COMPATIBLE),
        TEXT(CUPTI_ERROR_NOT_INITIALIZED),
        TEXT(CUPTI_ERROR_INVALID_KIND),
        TEXT(CUPTI_ERROR_NOT_SUPPORTED),
        TEXT(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES),
        TEXT(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
        TEXT(CUPTI_ERROR_INVALID_DEVICE),
        TEXT(CUPTI_ERROR_INVALID_METRIC_NAME),
        TEXT(CUPTI_ERROR_HARDWARE_BUSY),
        TEXT(CUPTI_ERROR_API_NOT_IMPLEMENTED),
        TEXT(CUPTI_ERROR_UNKNOWN),
#undef TEXT
    };
    if (!str)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        if (texts[i].rc == result) {
            *str = texts[i].text;
            return CUPTI_SUCCESS;
        }
    *str = NULL;
    return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
    if (!version)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                             const char *name, char *old_name, size_t old_size)
{
    if (!subscriber)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    if (sub.subscribed) {
        if (old_name && old_size)
            snprintf(old_name, old_size, "%s", sub.name);
        pthread_mutex_unlock(&lock);
        bump(&count.subscribe_refusals, 1);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    sub.subscribed = true;
    /* CUPTI prefixes the name and cuts it to CUPTI_SUBSCRIBER_NAME_MAX_LEN */
    if (name)
        snprintf(sub.name, sizeof sub.name, "CUPTI for %.*s", CUPTI_SUBSCRIBER_NAME_MAX_LEN, name);
    else
        sub.name[0] = '\0';
    sub.fn = callback;
    sub.userdata = userdata;
    memset(sub.enabled, 0, sizeof sub.enabled);
    pthread_mutex_unlock(&lock);
    bump(&count.subscribes, 1);
    *subscriber = &the_subscriber;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    return subscribe(subscriber, callback, userdata, NULL, NULL, 0);
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                                       CUpti_SubscriberParams *params)
{
    if (params && params->structSize < CUpti_SubscriberParams_STRUCT_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    return subscribe(subscriber, callback, userdata, params ? params->subscriberName : NULL,
                     params ? params->oldSubscriberName : NULL, params ? params->oldSubscriberSize : 0);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    pthread_mutex_lock(&lock);
    if (subscriber != &the_subscriber || !sub.subscribed) {
        pthread_mutex_unlock(&lock);
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    sub.subscribed = false;
    sub.fn = NULL;
    sub.userdata = NULL;
    sub.name[0] = '\0';
    memset(sub.enabled, 0, sizeof sub.enabled);
    pthread_mutex_unlock(&lock);
    bump(&count.unsubscribes, 1);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (cbid == 0 || cbid >= domain_size(domain))
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    if (subscriber != &the_subscriber || !sub.subscribed) {
        pthread_mutex_unlock(&lock);
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    sub.enabled[domain][cbid] = enable != 0;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain)
{
    uint32_t n = domain_size(domain);
    if (!n)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    if (subscriber != &the_subscriber || !sub.subscribed) {
        pthread_mutex_unlock(&lock);
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    for (uint32_t cbid = 1; cbid < n; cbid++)
        sub.enabled[domain][cbid] = enable != 0;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    if (!name)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *name = name_of(domain, cbid);
    return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    if ((unsigned)type >= CUPTI_ACTIVITY_THREAD_ID_TYPE_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    act.tid_type = type;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed)
{
    if (!requested || !completed)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    act.request = requested;
    act.complete = completed;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    if (!fn)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    act.timestamp = fn;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&lock);
    CUptiResult rc = act.refusal[kind]   ? act.refusal[kind]
                     : record_size(kind) ? CUPTI_SUCCESS
                                         : CUPTI_ERROR_INVALID_KIND;
    if (rc == CUPTI_SUCCESS)
        act.enabled[kind] = true;
    pthread_mutex_unlock(&lock);
    return rc;
}

static CUptiResult enable_api_records(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= MAX_CBID)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    act.api_records[domain][cbid] = enable != 0;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api_records(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, enable);
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api_records(CUPTI_CB_DOMAIN_DRIVER_API, cbid, enable);
}

/* Whether the API records of one function are on (for tests). */
EXPORT int fake_cupti_api_records_on(int domain, unsigned cbid)
{
    pthread_mutex_lock(&lock);
    int on = cbid < MAX_CBID && domain >= 0 && domain < CUPTI_CB_DOMAIN_SIZE && act.api_records[domain][cbid];
    pthread_mutex_unlock(&lock);
    return on;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&lock);
    act.enabled[kind] = false;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    bool forced = flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED;
    bump(forced ? &count.forced_flushes : &count.flushes, 1);
    pthread_mutex_lock(&lock);
    if (!act.complete) {
        pthread_mutex_unlock(&lock);
        return CUPTI_ERROR_INVALID_OPERATION;
    }
    size_t n = 0;
    for (thread_buffer *t = act.threads; t; t = t->next)
        n += t->data != NULL;
    detached *out = n ? calloc(n, sizeof *out) : NULL;
    if (n && !out)
        abort();
    size_t k = 0;
    for (thread_buffer *t = act.threads; t; t = t->next)
        if (t->data && (forced || t->used))
            out[k++] = detach(t);
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < k; i++)
        give_back(&out[i]);
    free(out);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    if (!buffer || !record)
        return CUPTI_ERROR_INVALID_PARAMETER;
    uint8_t *at = buffer;
    if (*record) {
        size_t size = record_size((*record)->kind);
        if (!size || (uint8_t *)*record < buffer)
            return CUPTI_ERROR_INVALID_KIND;
        at = (uint8_t *)*record + size;
    }
    if (at >= buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    CUpti_ActivityKind kind = ((const CUpti_Activity *)(void *)at)->kind;
    size_t size = record_size(kind);
    if (!size || at + size > buffer + valid)
        return CUPTI_ERROR_INVALID_KIND;
    *record = (CUpti_Activity *)(void *)at;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream, size_t *n)
{
    (void)context;
    (void)stream;
    if (!n)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *n = (size_t)atomic_exchange_explicit(&dropped, 0, memory_order_relaxed);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value)
{
    if (!size || !value || (unsigned)attr > CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED)
        return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSassMetricsGetProperties(CUpti_SassMetrics_GetProperties_Params *p)
{
    if (!p || p->structSize < CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE || !p->pChipName || !p->pMetricName ||
        strcmp(p->pChipName, "GH100"))
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_METRIC_NAME;
    for (unsigned m = 0; m < SASS_METRICS; m++)
        if (!sass.removed[m] && !strcmp(p->pMetricName, sass_metric_names[m])) {
            p->metric.metricId = 101 + m;
            p->metric.pMetricName = sass_metric_names[m];
            p->metric.pMetricDescription = "";
            rc = CUPTI_SUCCESS;
        }
    pthread_mutex_unlock(&lock);
    return rc;
}

CUptiResult CUPTIAPI cuptiSassMetricsGetNumOfMetrics(CUpti_SassMetrics_GetNumOfMetrics_Params *p)
{
    if (!p || p->structSize < CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->numOfMetrics = SASS_METRICS;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSassMetricsGetMetrics(CUpti_SassMetrics_GetMetrics_Params *p)
{
    if (!p || p->structSize < CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE || !p->pMetricsList)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (unsigned m = 0; m < SASS_METRICS && m < p->numOfMetrics; m++)
        p->pMetricsList[m] = (CUpti_SassMetrics_MetricDetails){101 + m, sass_metric_names[m], ""};
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSassMetricsSetConfig(CUpti_SassMetricsSetConfig_Params *p)
{
    if (!p || p->structSize < CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE || !p->pConfigs || !p->numOfMetricConfig ||
        p->numOfMetricConfig > SASS_METRICS || p->deviceIndex != 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (!sass.configured) {
        sass.configured = true;
        sass.n_config = (unsigned)p->numOfMetricConfig;
        for (unsigned i = 0; i < sass.n_config; i++)
            sass.config_ids[i] = p->pConfigs[i].metricId;
        sass.set_configs++;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

CUptiResult CUPTIAPI cuptiSassMetricsUnsetConfig(CUpti_SassMetricsUnsetConfig_Params *p)
{
    if (!p || p->structSize < CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = sass.configured ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_OPERATION;
    sass.configured = false;
    sass.n_records = 0;
    pthread_mutex_unlock(&lock);
    return rc;
}

CUptiResult CUPTIAPI cuptiSassMetricsEnable(CUpti_SassMetricsEnable_Params *p)
{
    if (!p || p->structSize < CUpti_SassMetricsEnable_Params_STRUCT_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (sass.configured && !sass.enabled) {
        sass.enabled = true;
        sass.lazy = p->enableLazyPatching != 0;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

CUptiResult CUPTIAPI cuptiSassMetricsDisable(CUpti_SassMetricsDisable_Params *p)
{
    if (!p || p->structSize < CUpti_SassMetricsDisable_Params_STRUCT_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (sass.enabled) {
        size_t dropped = 0;
        for (unsigned r = 0; r < sass.n_records; r++)
            for (unsigned m = 0; m < SASS_METRICS; m++)
                if (sass.records[r].v[m]) {
                    dropped++;
                    break;
                }
        p->numOfDroppedRecords = dropped;
        sass.dropped = dropped;
        sass.enabled = false;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

CUptiResult CUPTIAPI cuptiSassMetricsGetDataProperties(CUpti_SassMetricsGetDataProperties_Params *p)
{
    if (!p || p->structSize < CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (sass.enabled) {
        p->numOfPatchedInstructionRecords = sass.n_records;
        p->numOfInstances = 1;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

CUptiResult CUPTIAPI cuptiSassMetricsFlushData(CUpti_SassMetricsFlushData_Params *p)
{
    if (!p || p->structSize < CUpti_SassMetricsFlushData_Params_STRUCT_SIZE || !p->pMetricsData ||
        p->numOfInstances != 1)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    CUptiResult rc = CUPTI_ERROR_INVALID_OPERATION;
    if (sass.enabled && p->numOfPatchedInstructionRecords <= sass.n_records) {
        for (size_t r = 0; r < p->numOfPatchedInstructionRecords; r++) {
            CUpti_SassMetrics_Data *d = &p->pMetricsData[r];
            const sass_function *fn = &sass.functions[sass.records[r].function];
            d->cubinCrc = fn->crc;
            d->functionIndex = 7;
            d->functionName = strdup(fn->name); /* CUPTI allocates each; the caller frees it */
            d->pcOffset = sass.records[r].pc_offset;
            /* one instance of every configured metric, in configuration order */
            for (unsigned i = 0; i < sass.n_config; i++) {
                unsigned m = (unsigned)(sass.config_ids[i] - 101);
                d->pInstanceValues[i].metricId = sass.config_ids[i];
                d->pInstanceValues[i].value = m < SASS_METRICS ? sass.records[r].v[m] : 0;
            }
            memset(sass.records[r].v, 0, sizeof sass.records[r].v);
        }
        sass.flushes++;
        rc = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
