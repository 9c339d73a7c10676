/*
 * API callbacks (see api_hooks.h).
 */
#include "backend/cupti/api_hooks.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/cupti/nvtx_ranges.h"
#include "backend/cupti/sass_metrics.h"
#include "backend/cupti/stack_capture.h"

static gfl_api_hooks_config cfg;
static _Atomic bool active;
/* Bumped per session: a nesting count left open when hooks were disabled
 * mid-call must not outlive its session. */
static _Atomic uint32_t generation;
static uint8_t runtime_class[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t driver_class[CUPTI_DRIVER_TRACE_CBID_SIZE];

/* ---- classification ------------------------------------------------------ */

static bool starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* The name without CUPTI's version suffix ("_v7000", "_v2"), the
 * per-thread-stream variants ("_ptsz", "_ptds") or the leading underscores
 * of the runtime's internal entry points ("__cudaLaunchKernel", which
 * CUDA 13's <<<>>> may go through). */
static void base_name(const char *name, char *out, size_t len)
{
    while (*name == '_')
        name++;
    snprintf(out, len, "%s", name);
    for (;;) {
        char *us = strrchr(out, '_');
        if (!us)
            return;
        bool version = us[1] == 'v' && us[2] >= '0' && us[2] <= '9';
        if (!version && strcmp(us, "_ptsz") != 0 && strcmp(us, "_ptds") != 0)
            return;
        *us = '\0';
    }
}

gfl_api_class gfl_api_classify(const char *name)
{
    static const char *const syncs[] = {
        "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
        "cudaEventSynchronize",  "cudaStreamWaitEvent",   "cuCtxSynchronize",
        "cuStreamSynchronize",   "cuEventSynchronize",    "cuStreamWaitEvent",
    };
    static const char *const allocs[] = {
        "cudaMalloc", "cudaFree",       "cudaHostAlloc", "cuMemAlloc",
        "cuMemFree",  "cuMemHostAlloc", "cuMemCreate",   "cuMemRelease",
    };
    char base[128];
    if (!name)
        return GFL_API_OTHER;
    base_name(name, base, sizeof base);
    if (!strcmp(base, "cudaGraphLaunch") || !strcmp(base, "cuGraphLaunch"))
        return GFL_API_GRAPH_LAUNCH;
    if (starts(base, "cudaLaunch") || starts(base, "cuLaunch"))
        return GFL_API_LAUNCH;
    if (starts(base, "cudaMemcpy") || starts(base, "cuMemcpy"))
        return GFL_API_COPY;
    if (starts(base, "cudaMemset") || starts(base, "cuMemset"))
        return GFL_API_MEMSET;
    for (size_t i = 0; i < sizeof syncs / sizeof *syncs; i++)
        if (!strcmp(base, syncs[i]))
            return GFL_API_SYNC;
    for (size_t i = 0; i < sizeof allocs / sizeof *allocs; i++)
        if (starts(base, allocs[i]))
            return GFL_API_ALLOC;
    return GFL_API_OTHER;
}

static bool wanted(gfl_api_class c)
{
    switch (c) {
    case GFL_API_LAUNCH:
    case GFL_API_GRAPH_LAUNCH:
    case GFL_API_COPY:
    case GFL_API_MEMSET: return true;
    case GFL_API_SYNC: return cfg.syncs;
    case GFL_API_ALLOC: return cfg.allocations || cfg.out_of_memory;
    default: return false;
    }
}

/* API records (for external correlation ids) only where the call's own
 * records are kept: an allocation watched only for running out of memory
 * has none. */
static bool records_wanted(gfl_api_class c) { return c == GFL_API_ALLOC ? cfg.allocations : wanted(c); }

static int enable_domain(const gfl_cupti_api *api, CUpti_SubscriberHandle sub, CUpti_CallbackDomain domain,
                         uint8_t *classes, uint32_t n, char *err, size_t err_len)
{
    int enabled = 0;
    for (uint32_t cbid = 1; cbid < n; cbid++) {
        const char *name = NULL;
        if (api->cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
            continue;
        gfl_api_class c = gfl_api_classify(name);
        classes[cbid] = (uint8_t)c;
        if (!wanted(c))
            continue;
        CUptiResult rc = api->cuptiEnableCallback(1, sub, domain, cbid);
        if (rc != CUPTI_SUCCESS) {
            snprintf(err, err_len, "cuptiEnableCallback(%s): %s", name, gfl_cupti_error(api, rc));
            return -1;
        }
        enabled++;
    }
    return enabled;
}

int gfl_api_hooks_enable(const gfl_cupti_api *api, CUpti_SubscriberHandle sub, const gfl_api_hooks_config *c, char *err,
                         size_t err_len)
{
    cfg = *c;
    memset(runtime_class, 0, sizeof runtime_class);
    memset(driver_class, 0, sizeof driver_class);
    int a = enable_domain(api, sub, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_class, CUPTI_RUNTIME_TRACE_CBID_SIZE, err,
                          err_len);
    if (a < 0)
        return -1;
    int b =
        enable_domain(api, sub, CUPTI_CB_DOMAIN_DRIVER_API, driver_class, CUPTI_DRIVER_TRACE_CBID_SIZE, err, err_len);
    if (b < 0)
        return -1;
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    atomic_store_explicit(&active, true, memory_order_release);
    return a + b;
}

void gfl_api_hooks_disable(void) { atomic_store_explicit(&active, false, memory_order_release); }

int gfl_api_hooks_api_records(const gfl_cupti_api *api, uint8_t enable)
{
    if (!api->cuptiActivityEnableRuntimeApi || !api->cuptiActivityEnableDriverApi)
        return -1;
    int changed = 0;
    for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; cbid++)
        if (records_wanted((gfl_api_class)runtime_class[cbid]) &&
            api->cuptiActivityEnableRuntimeApi(cbid, enable) == CUPTI_SUCCESS)
            changed++;
    for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++)
        if (records_wanted((gfl_api_class)driver_class[cbid]) &&
            api->cuptiActivityEnableDriverApi(cbid, enable) == CUPTI_SUCCESS)
            changed++;
    return changed;
}

/* ---- the callback ---------------------------------------------------------- */

/* What the callback keeps per thread, in one TLS block, so that reaching it
 * costs one __tls_get_addr() per call in this dlopen()ed library instead of
 * one per variable (the callback runs four times per launch: runtime and
 * driver, entry and exit). Not initial-exec: that model takes the static
 * TLS surplus glibc keeps for libraries loaded later, which a Python
 * process with PyTorch has already used up ("cannot allocate memory in
 * static TLS block" when loading the plugin).
 *   tid: gettid() once per thread; a fork child's threads get fresh ids.
 *   nesting: watched calls open on this thread: the runtime makes some of
 *     its work through public driver calls (cudaLaunchKernel calls
 *     cuLaunchKernel, cudaGraphLaunch cuGraphLaunch), and the nested call
 *     carries the same correlation id. Only the outermost one is noted, so
 *     its times are the ones the program saw. */
typedef struct per_thread {
    uint32_t tid, tid_generation;
    uint32_t nesting, nesting_generation;
} per_thread;
static __thread per_thread me;
static _Atomic uint32_t fork_generation;

static void forked_child(void) { atomic_fetch_add_explicit(&fork_generation, 1, memory_order_relaxed); }

static uint32_t thread_id(void)
{
    uint32_t gen = atomic_load_explicit(&fork_generation, memory_order_relaxed);
    if (!me.tid || me.tid_generation != gen) {
        me.tid = (uint32_t)syscall(SYS_gettid);
        me.tid_generation = gen;
    }
    return me.tid;
}

uint32_t gfl_api_thread_id(void) { return thread_id(); }

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void register_fork_handler(void) { (void)pthread_atfork(NULL, NULL, forked_child); }

static void emit_graph_launch(uint32_t corr, const gfl_launch_info *at_entry, uint64_t end)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_GRAPH_LAUNCH;
    ev.h.tid = at_entry->tid;
    ev.h.ts = at_entry->api_start;
    ev.u.graph.end_ts = end;
    ev.u.graph.scope_id = at_entry->scope;
    ev.u.graph.correlation = corr;
    ev.u.graph.stack_id = at_entry->stack;
    ev.u.graph.nvtx = at_entry->nvtx;
    (void)cfg.host->push(&ev);
}

uint64_t gfl_api_alloc_bytes(const char *name, const void *params)
{
    /* calls whose parameters begin (pointer to the result, size_t size) */
    static const char *const sized[] = {
        "cudaMalloc",
        "cudaMallocAsync",
        "cudaMallocManaged",
        "cudaMallocHost",
        "cudaHostAlloc",
        "cudaMallocFromPoolAsync",
        "cuMemAlloc",
        "cuMemAllocAsync",
        "cuMemAllocManaged",
        "cuMemCreate",
        "cuMemHostAlloc",
        "cuMemAllocHost",
        "cuMemAllocFromPoolAsync",
    };
    char base[128];
    if (!name || !params)
        return 0;
    base_name(name, base, sizeof base);
    for (size_t i = 0; i < sizeof sized / sizeof *sized; i++)
        if (!strcmp(base, sized[i])) {
            size_t bytes;
            memcpy(&bytes, (const char *)params + sizeof(void *), sizeof bytes);
            return bytes;
        }
    return 0;
}

/* An allocation call returned out of memory (cudaErrorMemoryAllocation and
 * CUDA_ERROR_OUT_OF_MEMORY are both 2): the failed allocation, attributed
 * like any call, goes to the plugin's handler. */
static void out_of_memory(const CUpti_CallbackData *d, uint64_t end)
{
    gfl_launch_info at_entry = {0};
    (void)gfl_launch_find(cfg.table, d->correlationId, &at_entry);
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_MEM_ALLOC;
    ev.h.flags = GFL_F_MEM_FAILED;
    ev.h.tid = at_entry.tid ? at_entry.tid : thread_id();
    ev.h.ts = at_entry.api_start ? at_entry.api_start : end;
    ev.u.mem.bytes = gfl_api_alloc_bytes(d->functionName, d->functionParams);
    ev.u.mem.mem_kind = d->functionName && strstr(d->functionName, "Host")      ? GFL_MEM_PINNED
                        : d->functionName && strstr(d->functionName, "Managed") ? GFL_MEM_MANAGED
                                                                                : GFL_MEM_DEVICE;
    ev.u.mem.is_async = d->functionName && strstr(d->functionName, "Async") != NULL;
    ev.u.mem.context = d->contextUid;
    ev.u.mem.correlation = d->correlationId;
    ev.u.mem.scope_id = at_entry.scope;
    ev.u.mem.nvtx = at_entry.nvtx;
    char detail[256];
    snprintf(detail, sizeof detail, "%s of %llu bytes failed: out of memory", d->functionName ? d->functionName : "?",
             (unsigned long long)ev.u.mem.bytes);
    cfg.out_of_memory(&ev, detail);
}

static bool returned_out_of_memory(const CUpti_CallbackData *d)
{
    int rc;
    if (!d->functionReturnValue)
        return false;
    memcpy(&rc, d->functionReturnValue, sizeof rc);
    return rc == 2; /* cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY */
}

static void callback_body(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *d)
{
    if (!atomic_load_explicit(&active, memory_order_acquire) || !d || !d->correlationId)
        return;
    gfl_api_class c = GFL_API_OTHER;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
        c = (gfl_api_class)runtime_class[cbid];
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
        c = (gfl_api_class)driver_class[cbid];
    if (c == GFL_API_OTHER)
        return;
    uint32_t gen = atomic_load_explicit(&generation, memory_order_relaxed);
    per_thread *t = &me;
    if (t->nesting_generation != gen) {
        t->nesting_generation = gen;
        t->nesting = 0;
    }
    if (d->callbackSite == CUPTI_API_ENTER) {
        /* SASS metrics enable a context at its first launch, before the
         * kernel runs, at whichever level of the call first names the
         * context: a runtime launch on a thread with no context current
         * yet enters with context NULL (PyTorch's autograd thread at its
         * first launch, on an H100), and the driver launch nested in it
         * names the context the runtime has just made current. */
        if ((c == GFL_API_LAUNCH || c == GFL_API_GRAPH_LAUNCH) && d->context &&
            atomic_load_explicit(&gfl_sass_metrics_on, memory_order_relaxed))
            gfl_sass_metrics_launch_enter(d->context);
        if (t->nesting++)
            return;
        gfl_launch_info info = {
            .tid = thread_id(),
            .nvtx = gfl_nvtx_current(),
            .scope = cfg.host->current_scope(),
            .api_start = cfg.host->now_ns(),
        };
        if (cfg.stacks && c != GFL_API_ALLOC)
            info.stack = gpufl__stack_capture();
        gfl_launch_enter(cfg.table, d->correlationId, &info);
        return;
    }
    if (t->nesting == 0 || --t->nesting) /* an exit without its entry (enabled mid-call), or nested */
        return;
    uint64_t end = cfg.host->now_ns();
    gfl_launch_exit(cfg.table, d->correlationId, end);
    if (c == GFL_API_ALLOC && cfg.out_of_memory && returned_out_of_memory(d))
        out_of_memory(d, end);
    if (c == GFL_API_GRAPH_LAUNCH && cfg.graph_events) {
        gfl_launch_info at_entry;
        if (gfl_launch_find(cfg.table, d->correlationId, &at_entry))
            emit_graph_launch(d->correlationId, &at_entry, end);
    }
}

/* ---- what the callback costs (GPUFL_CALLBACK_CYCLES=1) ------------------------ */

/* The time stamp counter read around the callback: a measurement of our own
 * share of a launch's cost on the program's thread, for the launch
 * benchmarks. Off by default, when it costs one predictable branch. Relaxed
 * counters: summed once at stop, after every callback has returned. */
static bool timing;
static _Atomic uint64_t timed_calls, timed_cycles;

void gfl_api_hooks_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *d)
{
    if (!timing) {
        callback_body(domain, cbid, d);
        return;
    }
    uint64_t t0 = gfl_cycles_now();
    callback_body(domain, cbid, d);
    atomic_fetch_add_explicit(&timed_cycles, gfl_cycles_now() - t0, memory_order_relaxed);
    atomic_fetch_add_explicit(&timed_calls, 1, memory_order_relaxed);
}

void gfl_api_hooks_time(bool on)
{
    timing = on;
    atomic_store_explicit(&timed_calls, 0, memory_order_relaxed);
    atomic_store_explicit(&timed_cycles, 0, memory_order_relaxed);
}

void gfl_api_hooks_timed(uint64_t *calls, uint64_t *cycles)
{
    *calls = atomic_load_explicit(&timed_calls, memory_order_relaxed);
    *cycles = atomic_load_explicit(&timed_cycles, memory_order_relaxed);
}

/* Called once when the plugin loads. */
__attribute__((constructor)) static void api_hooks_load(void) { pthread_once(&fork_once, register_fork_handler); }
