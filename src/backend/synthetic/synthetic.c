/*
 * The synthetic device backend: a plugin (libgpufl_synthetic.so) that feeds
 * scripted GPU events (kernels, copies, memsets, syncs, allocations, device
 * metrics) through exactly the path the CUPTI plugin uses: dlopen, the
 * plugin ABI, host->push() from the plugin's own threads, into per-thread
 * rings. It lets the whole device pipeline be tested on a machine without a
 * GPU.
 *
 * The script comes from GPUFL_SYNTHETIC, e.g.
 *     kernels=1000,copies=200,memsets=20,syncs=20,allocs=20,metrics=10,
 *     devices=1,streams=4,threads=2,bad=0,pace=0
 * Every field of event i is a simple function of i (see kernel_of() and
 * friends), so tests can check each line exactly. `bad` adds events that end
 * before they start, which the core must reject and count. `pace` makes the
 * generators pause every 256 events so that small rings never overflow.
 * `fail=1` makes start() fail, as a plugin that cannot start its vendor
 * library, so that the core falling back to Monitor is tested.
 * `held=N` plays another tool that keeps the tracing interface after a
 * pause: the first N resumes are refused, as CUPTI refuses a second client.
 * `rate=N` adds a stream of N kernels a second (name "rate_kernel", start
 * = the time it was made, correlation ids 1, 2, 3, ... in order) from a
 * thread of its own, made only while not paused, until stop: with trace
 * windows, every one of them must fall inside a window, none lost or
 * repeated. Like CUPTI's buffers they are held back and pushed every 20
 * ms; pause() and stop() push what is held before they return.
 * `stop_ms=N` makes stop() take N ms before the rate stream ends, as a
 * real plugin's stop takes its time flushing while the program still
 * launches.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/plugin_api.h"

#define MAX_THREADS 16

typedef struct script {
    unsigned kernels, copies, memsets, syncs, allocs, metrics, devices, streams, threads, bad, held, rate, stop_ms;
    bool pace;
    bool fail; /* start() fails, as a plugin whose vendor library cannot start */
} script;

static const gpufl_plugin_host *host;
static script cfg;
static pthread_t threads[MAX_THREADS];
static unsigned n_threads;

/* Kernel names as real traces have them, plus one that exercises escaping. */
static const char *const kernel_names[] = {
    "ampere_sgemm_128x64_nn",
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"),
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
    "nccl:all_reduce \"ring\" \\ step\t2 \xce\xbb",
};
#define N_KERNEL_NAMES (sizeof kernel_names / sizeof kernel_names[0])

static void parse_script(const char *text)
{
    cfg = (script){.kernels = 1000,
                   .copies = 200,
                   .memsets = 20,
                   .syncs = 20,
                   .allocs = 20,
                   .metrics = 10,
                   .devices = 1,
                   .streams = 4,
                   .threads = 2};
    if (!text)
        return;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = '\0';
        unsigned v = (unsigned)strtoul(eq + 1, NULL, 10);
        if (!strcmp(kv, "kernels"))
            cfg.kernels = v;
        else if (!strcmp(kv, "copies"))
            cfg.copies = v;
        else if (!strcmp(kv, "memsets"))
            cfg.memsets = v;
        else if (!strcmp(kv, "syncs"))
            cfg.syncs = v;
        else if (!strcmp(kv, "allocs"))
            cfg.allocs = v;
        else if (!strcmp(kv, "metrics"))
            cfg.metrics = v;
        else if (!strcmp(kv, "devices"))
            cfg.devices = v ? v : 1;
        else if (!strcmp(kv, "streams"))
            cfg.streams = v ? v : 1;
        else if (!strcmp(kv, "threads"))
            cfg.threads = v ? (v > MAX_THREADS ? MAX_THREADS : v) : 1;
        else if (!strcmp(kv, "bad"))
            cfg.bad = v;
        else if (!strcmp(kv, "held"))
            cfg.held = v;
        else if (!strcmp(kv, "rate"))
            cfg.rate = v > 1000000 ? 1000000 : v;
        else if (!strcmp(kv, "stop_ms"))
            cfg.stop_ms = v > 10000 ? 10000 : v;
        else if (!strcmp(kv, "pace"))
            cfg.pace = v != 0;
        else if (!strcmp(kv, "fail"))
            cfg.fail = v != 0;
    }
}

static void pause_if_pacing(unsigned i)
{
    if (cfg.pace && i % 256 == 255) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

static void push(gfl_event *ev, unsigned i)
{
    host->push(ev);
    pause_if_pacing(i);
}

/* Event i of each kind. Times: each event sits in its own 10 µs slot after
 * the base time, so per-stream order follows i. */
static void kernel_of(unsigned i, uint64_t base, gfl_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->h.type = GFL_EV_KERNEL;
    ev->h.device = (uint16_t)(i % cfg.devices);
    ev->h.ts = base + (uint64_t)i * 10000;
    gfl_kernel_payload *k = &ev->u.kernel;
    k->end_ts = ev->h.ts + 1000 + (i % 7) * 500;
    const char *name = kernel_names[i % N_KERNEL_NAMES];
    k->name = host->intern(name, strlen(name));
    k->context = 1;
    k->stream = 1 + i % cfg.streams;
    k->correlation = i + 1;
    k->grid[0] = 1 + i % 7;
    k->grid[1] = 1 + i % 3;
    k->grid[2] = 1;
    k->block[0] = (uint16_t)(32 * (1 + i % 8));
    k->block[1] = 1;
    k->block[2] = 1;
    k->registers = (uint16_t)(16 + (i % 5) * 8);
    k->static_smem = (i % 4) * 1024;
    k->dynamic_smem = (i % 2) * 2048;
    k->occupancy_x10000 = (uint16_t)(2500 * (1 + i % 4));
    k->limiter = (uint8_t)(1 + i % 4);
    k->external_id = i % 3 ? 0 : 1000 + i;
}

static void copy_of(unsigned i, uint64_t base, gfl_event *ev)
{
    static const uint8_t kinds[] = {GFL_COPY_HTOD, GFL_COPY_DTOH, GFL_COPY_DTOD};
    static const uint8_t src[] = {GFL_MEM_PINNED, GFL_MEM_DEVICE, GFL_MEM_DEVICE};
    static const uint8_t dst[] = {GFL_MEM_DEVICE, GFL_MEM_PAGEABLE, GFL_MEM_DEVICE};
    memset(ev, 0, sizeof *ev);
    ev->h.type = GFL_EV_MEMCPY;
    ev->h.device = (uint16_t)(i % cfg.devices);
    ev->h.ts = base + (uint64_t)i * 10000 + 5000;
    gfl_memcpy_payload *m = &ev->u.memcpy;
    m->end_ts = ev->h.ts + 2000;
    m->bytes = 4096ull << (i % 8);
    m->context = 1;
    m->stream = 1 + i % cfg.streams;
    m->correlation = 1000000 + i;
    m->copy_kind = kinds[i % 3];
    m->src_kind = src[i % 3];
    m->dst_kind = dst[i % 3];
}

static void generate_device_events(unsigned part, uint64_t base)
{
    gfl_event ev;
    for (unsigned i = part; i < cfg.kernels; i += cfg.threads) {
        kernel_of(i, base, &ev);
        push(&ev, i);
    }
    for (unsigned i = part; i < cfg.copies; i += cfg.threads) {
        copy_of(i, base, &ev);
        push(&ev, i);
    }
    for (unsigned i = part; i < cfg.memsets; i += cfg.threads) {
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_MEMSET;
        ev.h.ts = base + (uint64_t)i * 10000 + 7000;
        ev.u.memset = (gfl_memset_payload){.end_ts = ev.h.ts + 300,
                                           .bytes = 1024ull * (i + 1),
                                           .context = 1,
                                           .stream = 1,
                                           .correlation = 2000000 + i,
                                           .value = i % 256,
                                           .mem_kind = GFL_MEM_DEVICE};
        push(&ev, i);
    }
    for (unsigned i = part; i < cfg.syncs; i += cfg.threads) {
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_SYNC;
        ev.h.ts = base + (uint64_t)i * 10000 + 8000;
        ev.u.sync = (gfl_sync_payload){.end_ts = ev.h.ts + 900,
                                       .context = 1,
                                       .stream = 1 + i % cfg.streams,
                                       .correlation = 3000000 + i,
                                       .sync_kind = (uint8_t)(1 + i % (GFL_SYNC_KIND_COUNT - 1))};
        push(&ev, i);
    }
    for (unsigned i = part; i < cfg.allocs; i += cfg.threads) {
        memset(&ev, 0, sizeof ev);
        ev.h.type = GFL_EV_MEM_ALLOC;
        ev.h.ts = base + (uint64_t)i * 10000 + 9000;
        ev.u.mem = (gfl_mem_payload){.address = 0x7f0000000000ull + (uint64_t)i * 0x100000,
                                     .bytes = 1ull << (20 + i % 4),
                                     .context = 1,
                                     .stream = 1,
                                     .correlation = 4000000 + i,
                                     .mem_kind = GFL_MEM_DEVICE};
        push(&ev, i);
        ev.h.type = GFL_EV_MEM_FREE;
        ev.h.ts += 500;
        push(&ev, i);
    }
    for (unsigned i = part; i < cfg.bad; i += cfg.threads) {
        kernel_of(i, base, &ev);
        ev.u.kernel.end_ts = ev.h.ts - 1; /* ends before it starts */
        push(&ev, i);
    }
}

static void generate_metrics(uint64_t base)
{
    gfl_event ev;
    for (unsigned s = 0; s < cfg.metrics; s++)
        for (unsigned d = 0; d < cfg.devices; d++) {
            memset(&ev, 0, sizeof ev);
            ev.h.type = GFL_EV_DEVICE_METRICS;
            ev.h.device = (uint16_t)d;
            ev.h.ts = base + (uint64_t)s * 1000000;
            gfl_device_metrics_payload *m = &ev.u.dev;
            m->valid = GFL_DEV_GPU_UTIL | GFL_DEV_MEM_UTIL | GFL_DEV_MEM | GFL_DEV_TEMP | GFL_DEV_POWER |
                       GFL_DEV_POWER_LIMIT | GFL_DEV_ENERGY | GFL_DEV_CLOCKS | GFL_DEV_THROTTLE | GFL_DEV_PCIE |
                       GFL_DEV_ECC | GFL_DEV_PROC_MEM;
            m->gpu_util_pct = (uint8_t)(s * 10 % 101);
            m->mem_util_pct = (uint8_t)(s * 5 % 101);
            m->mem_total_bytes = 141ull << 30;
            m->mem_used_bytes = (1ull << 30) * (s + 1);
            m->proc_mem_bytes = (1ull << 29) * (s + 1);
            m->temp_c = (int16_t)(40 + s);
            m->power_mw = 100000 + s * 1000;
            m->power_limit_mw = 700000;
            m->energy_mj = 5000000 + (uint64_t)s * 100000;
            m->sm_clock_mhz = 1980;
            m->mem_clock_mhz = 2619;
            m->gfx_clock_mhz = 1980;
            m->throttle_reasons = s % 2 ? 0x4 : 0x1; /* sw_power_cap / gpu_idle */
            m->pcie_rx_kbps = 1000 * s;
            m->pcie_tx_kbps = 2000 * s;
            host->push(&ev);
        }
}

static void *generator(void *arg)
{
    unsigned part = (unsigned)(uintptr_t)arg;
    uint64_t base = host->session_start_ns + 1000000; /* 1 ms into the session */
    generate_device_events(part, base);
    if (part == 0)
        generate_metrics(base);
    return NULL;
}

/* ---- the rate stream ----------------------------------------------------- */

#define RATE_HOLD 256            /* kernels held back at most */
#define RATE_PUSH_NS 20000000ull /* pushed every 20 ms, as CUPTI's worker flushes */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool running, paused, stopping;
    pthread_t thread;
    uint64_t made; /* correlation id of the last kernel made */
    gfl_event held[RATE_HOLD];
    unsigned n_held;
    uint64_t pushed_ns;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* Pushes what is held; R.lock held. push_wait: none may be lost. */
static void rate_push_held(void)
{
    int (*put)(const gfl_event *) = host->push_wait ? host->push_wait : host->push;
    for (unsigned i = 0; i < R.n_held; i++)
        (void)put(&R.held[i]);
    R.n_held = 0;
    R.pushed_ns = host->now_ns();
}

static void rate_make(void)
{
    gfl_event *ev = &R.held[R.n_held++];
    memset(ev, 0, sizeof *ev);
    ev->h.type = GFL_EV_KERNEL;
    ev->h.ts = host->now_ns();
    gfl_kernel_payload *k = &ev->u.kernel;
    k->end_ts = ev->h.ts + 1000;
    k->name = host->intern("rate_kernel", 11);
    k->context = 1;
    k->stream = 1;
    k->correlation = ++R.made;
    k->grid[0] = k->grid[1] = k->grid[2] = 1;
    k->block[0] = 32;
    k->block[1] = k->block[2] = 1;
}

static void *rate_main(void *arg)
{
    (void)arg;
    uint64_t period = 1000000000ull / cfg.rate;
    pthread_mutex_lock(&R.lock);
    while (!R.stopping) {
        if (R.paused) {
            pthread_cond_wait(&R.wake, &R.lock);
            continue;
        }
        /* made under the lock: a pause that returned made none after it */
        rate_make();
        if (R.n_held == RATE_HOLD || host->now_ns() - R.pushed_ns >= RATE_PUSH_NS)
            rate_push_held();
        pthread_mutex_unlock(&R.lock);
        struct timespec ts = {(time_t)(period / 1000000000ull), (long)(period % 1000000000ull)};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&R.lock);
    }
    rate_push_held();
    pthread_mutex_unlock(&R.lock);
    return NULL;
}

static void rate_start(bool paused)
{
    R.made = 0;
    R.n_held = 0;
    R.paused = paused;
    R.stopping = false;
    R.pushed_ns = host->now_ns();
    R.running = pthread_create(&R.thread, NULL, rate_main, NULL) == 0;
}

static void rate_stop(void)
{
    if (!R.running)
        return;
    pthread_mutex_lock(&R.lock);
    R.stopping = true;
    pthread_cond_signal(&R.wake);
    pthread_mutex_unlock(&R.lock);
    pthread_join(R.thread, NULL);
    R.running = false;
}

static void rate_pause(bool paused)
{
    if (!R.running)
        return;
    pthread_mutex_lock(&R.lock);
    R.paused = paused;
    if (paused)
        rate_push_held(); /* everything made so far is out before pause returns */
    pthread_cond_signal(&R.wake);
    pthread_mutex_unlock(&R.lock);
}

/* ---- the plugin --------------------------------------------------------------- */

static int synthetic_start(const gpufl_plugin_host *h, char *err, size_t err_len)
{
    host = h;
    parse_script(getenv("GPUFL_SYNTHETIC"));
    if (cfg.fail) {
        snprintf(err, err_len, "the script says fail=1: no device can be traced");
        return GPUFL_EUNSUPPORTED;
    }
    /* it makes device activity, never samples or counters: a session that
     * asks for more must say that it records as trace */
    if (h->options->profiling_engine > GPUFL_ENGINE_TRACE &&
        h->size >= offsetof(gpufl_plugin_host, engine_ran) + sizeof h->engine_ran && h->engine_ran)
        h->engine_ran(GPUFL_ENGINE_TRACE, "the synthetic plugin records no PC samples, SASS metrics or counters; "
                                          "recording as trace");
    bool start_paused =
        h->size >= offsetof(gpufl_plugin_host, start_paused) + sizeof h->start_paused && h->start_paused;
    if (cfg.rate)
        rate_start(start_paused);
    for (n_threads = 0; n_threads < cfg.threads; n_threads++)
        if (pthread_create(&threads[n_threads], NULL, generator, (void *)(uintptr_t)n_threads) != 0) {
            snprintf(err, err_len, "cannot start generator thread %u", n_threads);
            break;
        }
    return 0;
}

static void synthetic_flush(void) {}

static void synthetic_stop(void)
{
    if (cfg.stop_ms) {
        struct timespec ts = {(time_t)(cfg.stop_ms / 1000), (long)(cfg.stop_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    rate_stop();
    for (unsigned i = 0; i < n_threads; i++)
        pthread_join(threads[i], NULL);
    n_threads = 0;
}

/* Resumes refused since the last pause; the core serialises both calls. */
static unsigned refusals;

static int synthetic_pause(char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    refusals = 0;
    rate_pause(true);
    return 0;
}

static int synthetic_resume(char *err, size_t err_len)
{
    if (refusals < cfg.held) {
        refusals++;
        snprintf(err, err_len, "another client (synthetic) still holds the tracing interface");
        return GPUFL_EUNSUPPORTED; /* as the CUPTI plugin answers */
    }
    rate_pause(false);
    return 0;
}

static const gpufl_plugin plugin = {
    .size = sizeof plugin,
    .abi = GPUFL_PLUGIN_ABI,
    .name = "synthetic",
    .start = synthetic_start,
    .flush = synthetic_flush,
    .stop = synthetic_stop,
    .pause = synthetic_pause,
    .resume = synthetic_resume,
};

__attribute__((visibility("default"))) const gpufl_plugin *gpufl_plugin_entry(void) { return &plugin; }
