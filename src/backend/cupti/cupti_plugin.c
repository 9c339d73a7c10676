/*
 * libgpufl_cupti.so: the trace engine. The core dlopen()s it for engines
 * from Trace up and calls start/flush/stop through the plugin ABI
 * (core/plugin_api.h).
 *
 * Threads:
 *   - the program's threads run our API and NVTX callbacks (api_hooks.c,
 *     nvtx_ranges.c): a few stores into the launch table, no locks;
 *   - CUPTI's threads (and any thread that fills a buffer) run the buffer
 *     callbacks (activity_buffers.c): an allocation or a queue append;
 *   - one worker thread of ours asks CUPTI to flush every 100 ms, turns the
 *     completed buffers into events (activity_records.c) and pushes them to
 *     its own ring, waiting when the ring is full rather than dropping.
 *
 * Buffers are flushed forcibly when a context is being destroyed (device
 * reset, process exit), when the core asks (gpufl_shutdown, the destructor
 * at exit), and at stop. Nothing here may take a lock that a CUDA call on
 * another thread could be holding while it waits for us.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cupti/activity_buffers.h"
#include "backend/cupti/activity_records.h"
#include "backend/cupti/api_hooks.h"
#include "backend/cupti/cupti_guard.h"
#include "backend/cupti/cupti_api.h"
#include "backend/cupti/engines.h"
#include "backend/cupti/device_drain.h"
#include "backend/cupti/launch_table.h"
#include "backend/cupti/nvtx_ranges.h"
#include "backend/cupti/pm_source.h"
#include "backend/cupti/stack_capture.h"
#include "core/plugin_api.h"
#include "core/thread_signals.h"

#define FLUSH_PERIOD_NS 100000000ull
#define FLUSH_WAIT_S 10
#define STACKS_MAX 65536

static struct {
    const gpufl_plugin_host *host;
    gfl_cupti_api api;
    bool loaded;
    CUpti_SubscriberHandle sub;
    bool subscribed;
    gfl_launch_table launches;
    gfl_records *records;
    bool stacks;
    CUpti_ActivityKind enabled[12];
    size_t n_enabled;
    bool api_records_chosen; /* API records of the watched calls only */
    bool paused;             /* CUPTI let go by pause(), until resume() */
    bool resumed;            /* attaching again after a pause, not at start */
    /* GPUFL_CALLBACK_CYCLES=1: the API callback's own cost, logged at stop */
    bool timing;
    uint64_t timing_cycles0, timing_ns0;

    pthread_t worker;
    bool worker_running;
    _Atomic bool stopping;
    uint64_t cupti_dropped;

    /* flush handshake: requests and completions are counted */
    pthread_mutex_t lock;
    pthread_cond_t done;
    uint64_t requested, completed;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

static void plugin_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void plugin_log(int level, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    P.host->log(level, msg);
}

/* ---- the worker ------------------------------------------------------------ */

static void process(gfl_activity_buffer *b)
{
    while (b) {
        gfl_activity_buffer *next = b->next;
        gfl_records_process_buffer(P.records, b->data, b->valid, P.api.cuptiActivityGetNextRecord);
        size_t dropped = 0;
        if (P.api.cuptiActivityGetNumDroppedRecords(b->context, b->stream, &dropped) == CUPTI_SUCCESS && dropped) {
            P.cupti_dropped += dropped;
            P.host->count_lost(GFL_DROP_CUPTI, GFL_CHANNEL_DEVICE, dropped);
        }
        gfl_buffer_free(b);
        b = next;
    }
}

static uint64_t now_ns(void) { return P.host->now_ns(); }

/* A launch table as large as the engine needs (launch_table.h). One that
 * is too small for this session is replaced and kept, not freed: a callback
 * of the last session may still be reading it. Before callbacks are on. */
static int launch_table_for(const gpufl_options *o)
{
    static gfl_launch_table retired;
    unsigned bits =
        gfl_engines_unflushed(o->profiling_engine) ? GFL_LAUNCH_TABLE_BITS_UNFLUSHED : GFL_LAUNCH_TABLE_BITS;
    if (P.launches.slots && P.launches.mask >= ((uint32_t)1 << bits) - 1)
        return 0;
    gfl_launch_table bigger;
    if (gfl_launch_table_init(&bigger, bits) != 0)
        return P.launches.slots ? 0 : -1; /* the smaller one still serves */
    if (P.launches.slots) {
        gfl_launch_table_free(&retired);
        retired = P.launches;
    }
    P.launches = bigger;
    return 0;
}

static void *worker_main(void *arg)
{
    (void)arg;
    /* the program's signals are for the program's threads; a fault here
     * (this thread calls into CUPTI) still reaches the crash handler */
    gpufl__block_program_signals(NULL);
    uint64_t next_flush = now_ns() + FLUSH_PERIOD_NS;
    while (!atomic_load_explicit(&P.stopping, memory_order_acquire)) {
        uint64_t now = now_ns();
        gfl_activity_buffer *b = gfl_buffers_take(next_flush > now ? next_flush - now : 0);
        if (now_ns() >= next_flush) {
            /* default flush: buffers whose records are all complete */
            if (gfl_engines_worker_may_flush())
                (void)P.api.cuptiActivityFlushAll(0);
            next_flush = now_ns() + FLUSH_PERIOD_NS;
        }
        pthread_mutex_lock(&P.lock);
        uint64_t serving = P.requested;
        pthread_mutex_unlock(&P.lock);
        /* everything queued before the request was made is taken now */
        gfl_activity_buffer *more = gfl_buffers_take(0);
        process(b);
        process(more);
        gfl_engines_collect();
        pthread_mutex_lock(&P.lock);
        if (serving > P.completed) {
            P.completed = serving;
            pthread_cond_broadcast(&P.done);
        }
        pthread_mutex_unlock(&P.lock);
    }
    return NULL;
}

/* Forced flush, then waits until the worker has pushed every buffer that
 * came back. Any thread but the worker. */
static void flush_and_wait(void)
{
    (void)P.api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (!P.worker_running)
        return;
    pthread_mutex_lock(&P.lock);
    uint64_t mine = ++P.requested;
    pthread_mutex_unlock(&P.lock);
    gfl_buffers_wake();
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += FLUSH_WAIT_S;
    pthread_mutex_lock(&P.lock);
    while (P.completed < mine)
        if (pthread_cond_timedwait(&P.done, &P.lock, &until) != 0)
            break; /* a stuck ring: give up waiting rather than hang the program */
    bool late = P.completed < mine;
    pthread_mutex_unlock(&P.lock);
    if (late)
        plugin_log(GFL_LOG_WARN, "CUPTI flush did not complete within %d s; later records may be missing",
                   FLUSH_WAIT_S);
}

/* ---- callbacks --------------------------------------------------------------- */

/*
 * Letting go of CUPTI entirely between trace windows. Unsubscribing and
 * disabling every activity kind still leaves CUPTI in the driver's launch
 * path: measured on an H100, 100 000 tiny PyTorch ops ran about 20 % slower
 * between windows than without gpufl. cuptiFinalize() takes it out, and
 * CUPTI's documented safe place to call it is the exit of an API callback,
 * where no other CUPTI call of that thread is under way: a pause asks for
 * it (every runtime and driver callback on) and the next CUDA call's exit
 * does it. A resume that comes first cancels it. GPUFL_CUPTI_FINALIZE=0
 * keeps CUPTI attached (for comparisons).
 */
static _Atomic bool finalize_pending;
static pthread_mutex_t finalize_lock = PTHREAD_MUTEX_INITIALIZER;
static void tell_guard(int holding);
static void unsubscribe(void);

/* Only in a session with trace windows: a pause that hands CUPTI to
 * another tool (gpufl_trace_pause) must end our subscription before it
 * returns, since the tool subscribes next, maybe before any CUDA call. */
static bool finalize_wanted(void)
{
    const gpufl_options *o = P.host->options;
    const char *e = getenv("GPUFL_CUPTI_FINALIZE");
    return P.api.cuptiFinalize && (o->trace_every_s || o->trace_every_steps) && !(e && !strcmp(e, "0"));
}

static void finalize_now(void)
{
    pthread_mutex_lock(&finalize_lock);
    if (atomic_exchange(&finalize_pending, false)) {
        (void)P.api.cuptiFinalize(); /* ends our subscription with everything else */
        P.subscribed = false;
        tell_guard(0);
    }
    pthread_mutex_unlock(&finalize_lock);
}

/* Instead of unsubscribing: every API callback on, the next exit finalizes. */
static void ask_finalize(void)
{
    atomic_store(&finalize_pending, true);
    (void)P.api.cuptiEnableDomain(1, P.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
    (void)P.api.cuptiEnableDomain(1, P.sub, CUPTI_CB_DOMAIN_DRIVER_API);
}

/* Before taking CUPTI again: a finalize asked for and not done is
 * cancelled, and the subscription it would have ended is ended here. */
static void cancel_finalize(void)
{
    pthread_mutex_lock(&finalize_lock);
    if (atomic_exchange(&finalize_pending, false))
        unsubscribe();
    pthread_mutex_unlock(&finalize_lock);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    if (atomic_load_explicit(&finalize_pending, memory_order_relaxed) &&
        (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) && data &&
        ((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_EXIT) {
        finalize_now();
        return;
    }
    switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
    case CUPTI_CB_DOMAIN_DRIVER_API: gfl_api_hooks_callback(domain, cbid, data); break;
    case CUPTI_CB_DOMAIN_NVTX: gfl_nvtx_callback(cbid, data); break;
    case CUPTI_CB_DOMAIN_RESOURCE:
        gfl_engines_resource(cbid, data);
        /* the context's records must leave CUPTI before the context goes;
         * the worker turns them into events later */
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
            (void)P.api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        break;
    default: break;
    }
}

/* ---- start and stop ----------------------------------------------------------- */

static void disable_all(void)
{
    for (size_t i = 0; i < P.n_enabled; i++)
        (void)P.api.cuptiActivityDisable(P.enabled[i]);
    P.n_enabled = 0;
    if (P.api_records_chosen)
        (void)gfl_api_hooks_api_records(&P.api, 0);
    P.api_records_chosen = false;
}

/* Tells the CUPTI guard, where `gpufl run` preloaded it, whether we hold
 * CUPTI: a client refused meanwhile is then one we shut out. */
static void tell_guard(int holding)
{
    gpufl_cupti_guard_hold_fn *hold = (gpufl_cupti_guard_hold_fn *)dlsym(RTLD_DEFAULT, GPUFL_CUPTI_GUARD_HOLD);
    if (hold)
        hold(holding);
}

static void unsubscribe(void)
{
    gfl_api_hooks_disable();
    if (P.subscribed) {
        tell_guard(0);
        (void)P.api.cuptiUnsubscribe(P.sub);
        P.subscribed = false;
    }
}

/* Without a CUDA driver CUPTI says no more than CUPTI_ERROR_UNKNOWN (CUPTI
 * 13 on a machine with the toolkit but no libcuda): name the cause when
 * that is it. Only on the failure path, where loading libcuda costs
 * nothing that matters. */
static const char *driver_hint(void)
{
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver)
        return "; there is no CUDA driver here (libcuda.so.1 cannot be loaded)";
    dlclose(driver);
    return "";
}

/* CUpti_SubscriberParams as CUPTI 13.2 grew it: a client may ask to share
 * CUPTI with others (torch.profiler inside a traced program then gets its
 * records too). The toolkit headers we build against may predate it. */
typedef struct subscriber_params_13_2 {
    size_t structSize;
    const char *subscriberName;
    char *oldSubscriberName;
    size_t oldSubscriberSize;
    uint8_t allowMultipleSubscribers;
} subscriber_params_13_2;

static int subscribe(char *err, size_t err_len)
{
    CUptiResult rc;
    char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
    if (P.api.cuptiSubscribe_v2) {
        subscriber_params_13_2 params = {
            .structSize = offsetof(subscriber_params_13_2, allowMultipleSubscribers) + sizeof(uint8_t),
            .subscriberName = "gpufl",
            .oldSubscriberName = other,
            .oldSubscriberSize = sizeof other,
            .allowMultipleSubscribers = 1,
        };
        rc = P.api.cuptiSubscribe_v2(&P.sub, on_callback, NULL, (CUpti_SubscriberParams *)&params);
        if (rc == CUPTI_ERROR_INVALID_PARAMETER) { /* a CUPTI that knows only the shorter struct */
            params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
            rc = P.api.cuptiSubscribe_v2(&P.sub, on_callback, NULL, (CUpti_SubscriberParams *)&params);
        }
    } else {
        rc = P.api.cuptiSubscribe(&P.sub, on_callback, NULL);
    }
    if (rc == CUPTI_SUCCESS) {
        P.subscribed = true;
        tell_guard(1);
        return 0;
    }
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf(err, err_len,
                 "another CUPTI client%s%s%s is attached to this process "
                 "(a profiler such as Nsight Systems or torch.profiler)",
                 other[0] ? " (" : "", other, other[0] ? ")" : "");
    else
        snprintf(err, err_len, "cuptiSubscribe: %s%s", gfl_cupti_error(&P.api, rc), driver_hint());
    return -1;
}

static int enable(CUpti_ActivityKind kind, const char *what, bool required, char *err, size_t err_len)
{
    CUptiResult rc = P.api.cuptiActivityEnable(kind);
    if (rc == CUPTI_SUCCESS) {
        P.enabled[P.n_enabled++] = kind;
        return 0;
    }
    if (required) {
        snprintf(err, err_len, "cannot enable %s tracing: %s", what, gfl_cupti_error(&P.api, rc));
        return -1;
    }
    plugin_log(GFL_LOG_WARN, "%s are not recorded: CUPTI cannot trace them here (%s)", what,
               gfl_cupti_error(&P.api, rc));
    return 0;
}

static int enable_activities(const gpufl_options *o, char *err, size_t err_len)
{
    CUpti_ActivityKind kernels =
        gfl_engines_serial_kernels() ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    if (enable(kernels, "kernel", true, err, err_len) ||
        enable(CUPTI_ACTIVITY_KIND_MEMCPY, "memory copies", false, err, err_len) ||
        enable(CUPTI_ACTIVITY_KIND_MEMCPY2, "peer-to-peer copies", false, err, err_len) ||
        enable(CUPTI_ACTIVITY_KIND_MEMSET, "memsets", false, err, err_len))
        return -1;
    if (o->enable_synchronization)
        (void)enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronizations", false, err, err_len);
    if (o->enable_memory_tracking)
        (void)enable(CUPTI_ACTIVITY_KIND_MEMORY2, "allocations", false, err, err_len);
    if (o->enable_external_correlation) {
        /* external ids come attached to API records: those of the calls we
         * watch, runtime and driver alike, so that launches through the
         * driver API (cuLaunchKernel) get them too */
        (void)enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "external correlation ids", false, err, err_len);
        P.api_records_chosen = gfl_api_hooks_api_records(&P.api, 1) >= 0;
        if (!P.api_records_chosen) {
            (void)enable(CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API records", false, err, err_len);
            (void)enable(CUPTI_ACTIVITY_KIND_DRIVER, "driver API records", false, err, err_len);
        }
    }
    return 0;
}

/* A CUDA allocation failed for lack of memory, on the program's thread:
 * what CUPTI holds goes out first (the allocations live at that moment), then
 * the failed one, then the trigger, so that the dump holds all of them. A
 * rare path: the forced flush costs the failing call a few milliseconds. */
static void on_out_of_memory(const gfl_event *failed, const char *detail)
{
    flush_and_wait();
    (void)P.host->push(failed);
    if (P.host->size >= offsetof(gpufl_plugin_host, trigger) + sizeof P.host->trigger && P.host->trigger)
        P.host->trigger("oom", detail);
}

static int enable_callbacks(const gpufl_options *o, char *err, size_t err_len)
{
    gfl_api_hooks_config cfg = {
        .host = P.host,
        .table = &P.launches,
        .syncs = o->enable_synchronization,
        .allocations = o->enable_memory_tracking,
        .graph_events = o->enable_cuda_graphs_tracking,
        .stacks = P.stacks,
        .out_of_memory = o->dump_on_oom ? on_out_of_memory : NULL,
    };
    if (gfl_api_hooks_enable(&P.api, P.sub, &cfg, err, err_len) < 0)
        return -1;
    CUptiResult rc = P.api.cuptiEnableDomain(1, P.sub, CUPTI_CB_DOMAIN_NVTX);
    if (rc != CUPTI_SUCCESS)
        plugin_log(GFL_LOG_WARN, "NVTX ranges are not recorded: %s", gfl_cupti_error(&P.api, rc));
    rc = P.api.cuptiEnableCallback(1, P.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (rc != CUPTI_SUCCESS)
        plugin_log(GFL_LOG_WARN, "records of a destroyed CUDA context may be lost: %s", gfl_cupti_error(&P.api, rc));
    return gfl_engines_callbacks(&P.api, P.sub, err, err_len);
}

/* NVTX reads NVTX_INJECTION64_PATH at the program's first NVTX call; when
 * that has not happened yet, pointing it at the CUPTI we loaded makes NVTX
 * ranges reach our callbacks. gpufl run sets it before the program starts. */
static void offer_nvtx_injection(void)
{
    if (!getenv("NVTX_INJECTION64_PATH") && P.api.path[0])
        (void)setenv("NVTX_INJECTION64_PATH", P.api.path, 0);
}

static void stop_worker(void)
{
    if (!P.worker_running)
        return;
    atomic_store_explicit(&P.stopping, true, memory_order_release);
    gfl_buffers_wake();
    pthread_join(P.worker, NULL);
    P.worker_running = false;
}

static void cleanup_failed_start(void)
{
    /* Buffers are ours to flush only if we got as far as subscribing (our
     * buffer callbacks are registered after that). When another CUPTI
     * client holds the process, a forced flush here would hand that
     * client's buffers back to it early, incomplete records and all. */
    bool ours = P.subscribed;
    gfl_engines_stop(true);
    stop_worker();
    disable_all();
    unsubscribe();
    if (ours)
        (void)P.api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    /* nothing is being recorded: drop what came back */
    for (gfl_activity_buffer *b = gfl_buffers_take(0); b;) {
        gfl_activity_buffer *next = b->next;
        gfl_buffer_free(b);
        b = next;
    }
    if (P.stacks)
        gpufl__stack_shutdown();
    gfl_records_free(P.records);
    P.records = NULL;
}

/* Set by our exit handler, which runs before the core's (registered after
 * it) ends the session from exit(). */
static _Atomic bool process_exiting;
static void note_exit(void) { atomic_store(&process_exiting, true); }
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static void register_exit_note(void) { (void)atexit(note_exit); }

/* Takes CUPTI: subscribes, registers our clock and buffers, enables the
 * callbacks and activity kinds, starts the worker. At start and at each
 * resume (another client may have registered its own buffer callbacks, or
 * finalized CUPTI, meanwhile). Returns 0, or -1 with the reason in err and
 * whatever it did left for the caller to undo. */
static int attach(const gpufl_options *o, char *err, size_t err_len)
{
    const gpufl_plugin_host *host = P.host;
    if (subscribe(err, err_len) != 0)
        return -1;
    if (P.api.cuptiSetThreadIdType)
        (void)P.api.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    /* device timestamps converted into the session's own clock, so that
     * kernels line up with scopes and host samples */
    CUptiResult rc = P.api.cuptiActivityRegisterTimestampCallback
                         ? P.api.cuptiActivityRegisterTimestampCallback(host->now_ns)
                         : CUPTI_ERROR_NOT_SUPPORTED;
    if (rc != CUPTI_SUCCESS)
        plugin_log(GFL_LOG_WARN, "CUPTI keeps its own clock (%s): device times may be offset from host times",
                   gfl_cupti_error(&P.api, rc));
    rc = P.api.cuptiActivityRegisterCallbacks(gfl_buffer_requested, gfl_buffer_completed);
    if (rc != CUPTI_SUCCESS) {
        snprintf(err, err_len, "cuptiActivityRegisterCallbacks: %s", gfl_cupti_error(&P.api, rc));
        return -1;
    }
    if (enable_callbacks(o, err, err_len) != 0 || enable_activities(o, err, err_len) != 0)
        return -1;
    if (pthread_create(&P.worker, NULL, worker_main, NULL) != 0) {
        snprintf(err, err_len, "cannot start the CUPTI worker thread");
        return -1;
    }
    pthread_setname_np(P.worker, "gpufl-cupti"); /* named in gdb, top and /proc */
    P.worker_running = true;
    gfl_engines_start(P.resumed);
    return 0;
}

static int plugin_start(const gpufl_plugin_host *host, char *err, size_t err_len)
{
    P.host = host;
    pthread_once(&exit_once, register_exit_note);
    const gpufl_options *o = host->options;
    if (host->size < offsetof(gpufl_plugin_host, push_wait) + sizeof host->push_wait || !host->push_wait) {
        snprintf(err, err_len, "the gpufl library is older than this plugin");
        return -1;
    }
    if (!P.loaded) {
        if (gfl_cupti_open(&P.api, err, err_len) != 0)
            return -1;
        P.loaded = true;
    }
    if (launch_table_for(o) != 0) {
        snprintf(err, err_len, "out of memory for the launch table");
        return -1;
    }
    P.records = gfl_records_new(host, &P.launches);
    if (!P.records) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    P.stacks = o->enable_stack_trace;
    if (P.stacks && gpufl__stack_init(host, STACKS_MAX) != 0) {
        plugin_log(GFL_LOG_WARN, "enable_stack_trace: call stacks cannot be captured here; recording without");
        P.stacks = false;
    }
    P.cupti_dropped = 0;
    P.requested = P.completed = 0;
    atomic_store(&P.stopping, false);
    gfl_buffers_reset();
    gfl_nvtx_start(host);
    offer_nvtx_injection();
    P.resumed = false;
    gfl_engines_init(host, &P.api);
    const char *timing = getenv("GPUFL_CALLBACK_CYCLES");
    P.timing = timing && !strcmp(timing, "1");
    P.timing_cycles0 = gfl_cycles_now();
    P.timing_ns0 = now_ns();
    gfl_api_hooks_time(P.timing);
    gfl_pm_source_start(host); /* pm_sampling_metrics: sampled whether or not tracing is paused */

    /* Trace windows with none open yet: CUPTI is taken at the first. */
    if (host->size >= offsetof(gpufl_plugin_host, start_paused) + sizeof host->start_paused && host->start_paused) {
        P.paused = true;
        plugin_log(GFL_LOG_DEBUG, "CUPTI from %s: loaded, taken at the first trace window", P.api.path);
        return 0;
    }
    if (attach(o, err, err_len) != 0)
        goto fail;
    uint32_t version = 0;
    (void)P.api.cuptiGetVersion(&version);
    plugin_log(GFL_LOG_DEBUG, "CUPTI %u from %s: tracing kernels, copies, memsets%s%s%s%s", version, P.api.path,
               o->enable_synchronization ? ", syncs" : "", o->enable_memory_tracking ? ", allocations" : "",
               o->enable_cuda_graphs_tracking ? ", graph launches" : "", P.stacks ? ", call stacks" : "");
    return 0;
fail:
    gfl_pm_source_stop(false);
    cleanup_failed_start();
    return -1;
}

static void plugin_flush(void)
{
    if (P.worker_running)
        flush_and_wait();
}

/* The API callback's cycles per call, and the time stamp counter's rate
 * measured against the session clock over the session, to give them in ns. */
static void report_callback_cost(void)
{
    uint64_t calls, cycles;
    gfl_api_hooks_timed(&calls, &cycles);
    double ghz = (double)(gfl_cycles_now() - P.timing_cycles0) / (double)(now_ns() - P.timing_ns0);
    plugin_log(GFL_LOG_INFO, "API callbacks: %llu calls, %.1f cycles (%.1f ns) each, TSC %.3f GHz",
               (unsigned long long)calls, calls ? (double)cycles / (double)calls : 0.0,
               calls && ghz > 0 ? (double)cycles / (double)calls / ghz : 0.0, ghz);
}

/* What the guard saw of other CUPTI clients while we held CUPTI: their
 * tools recorded nothing, and one that took the activity buffers over took
 * ours with them. */
static void report_other_clients(void)
{
    gpufl_cupti_guard_seen_fn *seen_fn = (gpufl_cupti_guard_seen_fn *)dlsym(RTLD_DEFAULT, GPUFL_CUPTI_GUARD_SEEN);
    if (!seen_fn)
        return;
    gpufl_cupti_guard_counts seen;
    seen_fn(&seen);
    const char *who = seen.first_client[0] ? seen.first_client : "unknown";
    if (seen.refused)
        plugin_log(GFL_LOG_WARN,
                   "another CUPTI client (%s) was refused %u time%s because gpufl held CUPTI: that tool "
                   "recorded no GPU activity; gpufl_trace_pause() and gpufl_trace_resume() hand CUPTI over",
                   who, seen.refused, seen.refused == 1 ? "" : "s");
    if (seen.took_buffers)
        plugin_log(GFL_LOG_WARN,
                   "another CUPTI client (%s) registered its own activity buffers %u time%s while gpufl held "
                   "CUPTI: device records from then on went to it and are missing here",
                   who, seen.took_buffers, seen.took_buffers == 1 ? "" : "s");
}

static void report(void)
{
    if (P.timing)
        report_callback_cost();
    report_other_clients();
    const gfl_record_stats *s = gfl_records_stats(P.records);
    plugin_log(GFL_LOG_DEBUG,
               "CUPTI records: %llu kernels, %llu copies, %llu memsets, %llu syncs, %llu allocations, "
               "%llu frees, %llu external ids",
               (unsigned long long)s->kernels, (unsigned long long)s->copies, (unsigned long long)s->memsets,
               (unsigned long long)s->syncs, (unsigned long long)s->allocs, (unsigned long long)s->frees,
               (unsigned long long)s->externals);
    if (s->unattributed)
        plugin_log(GFL_LOG_WARN,
                   "%llu device records arrived after their launch details were overwritten; "
                   "they carry no thread, scope or API times",
                   (unsigned long long)s->unattributed);
    if (P.cupti_dropped || gfl_buffers_refused())
        plugin_log(GFL_LOG_WARN, "CUPTI dropped %llu records (%llu buffer requests refused at the %u MiB cap)",
                   (unsigned long long)P.cupti_dropped, (unsigned long long)gfl_buffers_refused(),
                   (unsigned)(GFL_ACTIVITY_BUFFERS_MAX * (GFL_ACTIVITY_BUFFER_BYTES >> 20)));
    if (gfl_nvtx_unmatched())
        plugin_log(GFL_LOG_DEBUG, "%llu NVTX calls could not be paired or stored",
                   (unsigned long long)gfl_nvtx_unmatched());
}

/* Everything recorded so far pushed, then CUPTI let go: our callbacks and
 * activity kinds off, our subscription ended, the worker (whose periodic
 * flush would hand the next client's buffers back early) stopped. */
static void detach(bool drain, bool finalize)
{
    /* no new launch details; records of work already launched still come */
    gfl_api_hooks_disable();
    /* work still running would lose its records when the kinds go off; the
     * drain's own synchronize may show as a sync of the pausing thread */
    if (drain)
        gfl_device_drain();
    gfl_engines_stop(true);
    flush_and_wait();
    disable_all();
    flush_and_wait(); /* what completed while disabling */
    if (finalize && P.subscribed)
        ask_finalize();
    else
        unsubscribe();
    stop_worker();
    process(gfl_buffers_take(0)); /* stragglers delivered during the join */
}

static int plugin_pause(char *err, size_t err_len)
{
    if (!P.worker_running) {
        snprintf(err, err_len, "the CUPTI plugin is not tracing");
        return GPUFL_ESTATE;
    }
    detach(true, finalize_wanted());
    P.paused = true;
    plugin_log(GFL_LOG_DEBUG, "CUPTI let go: %llu kernels recorded so far",
               (unsigned long long)gfl_records_stats(P.records)->kernels);
    return 0;
}

static int plugin_resume(char *err, size_t err_len)
{
    if (!P.paused) {
        snprintf(err, err_len, "the CUPTI plugin is not paused");
        return GPUFL_ESTATE;
    }
    P.requested = P.completed = 0;
    atomic_store(&P.stopping, false);
    cancel_finalize();
    P.resumed = true;
    if (attach(P.host->options, err, err_len) != 0) {
        /* typically the other tool still subscribed: undo, stay paused */
        stop_worker();
        disable_all();
        unsubscribe();
        return GPUFL_EUNSUPPORTED;
    }
    P.paused = false;
    return 0;
}

static void plugin_stop(void)
{
    gfl_pm_source_stop(atomic_load(&process_exiting));
    if (!P.worker_running && !P.paused)
        return;
    if (P.worker_running) {
        /* At exit the CUDA runtime may already have torn itself down (a
         * statically linked cudart registers its teardown when the program
         * first calls CUDA, so it runs before our handler): its contexts'
         * records were flushed as they were destroyed, a flush still works,
         * but disabling or unsubscribing then crashes inside CUPTI. The
         * process is ending: leave CUPTI as it is. */
        if (!atomic_load(&process_exiting)) {
            detach(false, false); /* a GPU that never finishes must not hang the program's exit */
        } else {
            gfl_api_hooks_disable();
            gfl_engines_stop(false);
            flush_and_wait();
            stop_worker();
            process(gfl_buffers_take(0)); /* stragglers delivered during the join */
        }
    }
    if (!atomic_load(&process_exiting))
        cancel_finalize(); /* paused with a finalize still to come: unsubscribe now */
    P.paused = false;
    size_t dropped = 0;
    if (P.api.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped) {
        P.cupti_dropped += dropped;
        P.host->count_lost(GFL_DROP_CUPTI, GFL_CHANNEL_DEVICE, dropped);
    }
    report();
    gfl_engines_end();
    gfl_nvtx_stop();
    if (P.stacks)
        gpufl__stack_shutdown();
    gfl_records_free(P.records);
    P.records = NULL;
}

static void plugin_scope(int begin, uint64_t scope_id, uint32_t name) { gfl_engines_scope(begin != 0, scope_id, name); }

static const gpufl_plugin plugin = {
    .size = sizeof plugin,
    .abi = GPUFL_PLUGIN_ABI,
    .name = "cupti",
    .start = plugin_start,
    .flush = plugin_flush,
    .stop = plugin_stop,
    .pause = plugin_pause,
    .resume = plugin_resume,
    .scope = plugin_scope,
};

__attribute__((visibility("default"))) const gpufl_plugin *gpufl_plugin_entry(void) { return &plugin; }
