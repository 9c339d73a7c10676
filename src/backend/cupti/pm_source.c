/*
 * PM sampling as a recorder source (see pm_source.h), over pm_sampling.c's
 * table.
 *
 * Clock: PM timestamps are the GPU's global timer, which the driver keeps
 * near the host's CLOCK_REALTIME: on an H100 a kernel's %globaltimer start
 * lagged realtime by 0.6 ms in one run and 3.2 ms in another (a kernel
 * launched 100 ms after a realtime reading began 99.4 and 96.8 ms after
 * it by the GPU's timer). The session clock is CLOCK_MONOTONIC, so one
 * offset, taken at start, maps the two, to within those milliseconds:
 * CUPTI 13 has no call that reads the GPU's timer beside the host's. The
 * first sample reaches back before start (on an H100, to the
 * configuration): it is clipped to the start.
 */
#include "backend/cupti/pm_source.h"

#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dlfcn.h>

#include "backend/cupti/pm_sampling.h"
#include "gpufl/gpufl.h"

#define MAX_DEVICES 16
#define MAX_METRICS 32
#define DECODE_EVERY_NS 100000000L
/* Samples x metrics of one counter data image: on an H100 CUPTI decoded
 * 20000 x 1 but refused 20000 x 6 (out of memory) and 10000 x 6
 * (unknown error); a decode takes as many images as it needs. */
#define MAX_SAMPLE_METRICS 12000u

typedef struct device_source {
    int device;
    gpufl_pm_handle *h;
    uint32_t metric_ids[MAX_METRICS];
    size_t n_metrics;
    uint64_t failed_decodes; /* said once, then counted: a decode runs every 100 ms */
    bool overflow_said;
} device_source;

static struct {
    const gpufl_plugin_host *host;
    const gpufl_pm_ops *ops;
    device_source dev[MAX_DEVICES];
    int n_dev;
    int64_t offset_ns; /* GPU timer - session clock */
    uint64_t started_ns;
    pthread_t thread;
    bool thread_running;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping; /* under lock */
    char *names;   /* the parsed list, owned */
    const char *metrics[MAX_METRICS];
    size_t n_metrics;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static void say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int level, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    S.host->log(level, msg);
}

/* Splits the option into S.metrics; "default" anywhere stands for the default list. */
static void parse(const char *option)
{
    const char *text = strcmp(option, "default") == 0 ? GFL_PM_DEFAULT_METRICS : option;
    S.names = strdup(text);
    S.n_metrics = 0;
    for (char *save = NULL, *tok = S.names ? strtok_r(S.names, ", ", &save) : NULL; tok;
         tok = strtok_r(NULL, ", ", &save)) {
        if (S.n_metrics == MAX_METRICS) {
            say(GFL_LOG_WARN, "pm_sampling_metrics: more than %d metrics; the rest are left out", MAX_METRICS);
            break;
        }
        S.metrics[S.n_metrics++] = tok;
    }
}

/* Configures h with as many of the metrics as fit one pass, in order. */
static int configure_greedy(device_source *d, char *err, size_t err_len)
{
    const char *kept[MAX_METRICS];
    size_t n = 0;
    gpufl_pm_config cfg;
    gpufl__pm_config_defaults(&cfg);
    cfg.sampling_interval = (uint64_t)S.host->options->pm_sampling_interval_us * 1000u;
    char last_err[512] = "";
    for (size_t i = 0; i < S.n_metrics; i++) {
        kept[n] = S.metrics[i];
        cfg.metrics = kept;
        cfg.num_metrics = n + 1;
        int rc = S.ops->configure(d->h, &cfg, last_err, sizeof last_err);
        if (rc == 0)
            n++;
        else
            say(GFL_LOG_WARN, "pm_sampling_metrics: %s left out on device %d: %s", S.metrics[i], d->device, last_err);
    }
    if (n == 0) {
        snprintf(err, err_len, "no metric of pm_sampling_metrics could be sampled");
        return -1;
    }
    /* The last configure may have been a refused one: configure what was kept. */
    cfg.metrics = kept;
    cfg.num_metrics = n;
    if (S.ops->configure(d->h, &cfg, err, err_len) != 0)
        return -1;
    d->n_metrics = n;
    for (size_t i = 0; i < n; i++)
        d->metric_ids[i] = S.host->intern(kept[i], strlen(kept[i]));
    return 0;
}

static uint64_t realtime_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void push_data(const device_source *d, const gpufl_pm_counter_data *data)
{
    for (uint64_t i = 0; i < data->num_samples; i++) {
        int64_t start = (int64_t)data->start_ns[i] - S.offset_ns, end = (int64_t)data->end_ns[i] - S.offset_ns;
        if (end <= (int64_t)S.started_ns)
            continue; /* wholly before the session asked (see the top) */
        if (start < (int64_t)S.started_ns)
            start = (int64_t)S.started_ns;
        for (uint32_t m = 0; m < data->num_metrics && m < d->n_metrics; m++) {
            double v = data->values[i * data->num_metrics + m];
            gfl_event ev;
            memset(&ev, 0, sizeof ev);
            ev.h.type = GFL_EV_PM_SAMPLE;
            ev.h.device = (uint16_t)d->device;
            ev.h.ts = (uint64_t)start;
            ev.u.pm_sample.end_ts = (uint64_t)end;
            ev.u.pm_sample.metric = d->metric_ids[m];
            /* NaN and negatives (none expected) as 0, the rest clamped to what the fixed point holds */
            ev.u.pm_sample.value_x10000 = !(v > 0)   ? 0
                                          : v < 1e15 ? (uint64_t)(v * 10000.0 + 0.5)
                                                     : 10000000000000000000ull;
            if (S.host->push_wait(&ev) != 0)
                return; /* recording stopped */
        }
    }
}

static void decode_all(void)
{
    for (int k = 0; k < S.n_dev; k++) {
        device_source *d = &S.dev[k];
        uint32_t max = MAX_SAMPLE_METRICS / (uint32_t)(d->n_metrics ? d->n_metrics : 1);
        for (int round = 0; round < 256; round++) {
            gpufl_pm_counter_data *data = NULL;
            char err[512];
            if (S.ops->decode(d->h, max, &data, err, sizeof err) != 0) {
                if (d->failed_decodes++ == 0)
                    say(GFL_LOG_WARN, "PM sampling: %s (said once; the count comes at the end)", err);
                break;
            }
            if (data->overflow && !d->overflow_said) {
                d->overflow_said = true;
                say(GFL_LOG_WARN, "PM sampling on device %d: the hardware buffer overflowed; samples were lost",
                    d->device);
            }
            push_data(d, data);
            bool more = data->more && data->num_samples > 0;
            S.ops->free_data(data);
            if (!more)
                break;
        }
    }
}

static void *decoder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&S.lock);
    while (!S.stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += DECODE_EVERY_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&S.wake, &S.lock, &until);
        if (S.stopping)
            break;
        pthread_mutex_unlock(&S.lock);
        decode_all();
        pthread_mutex_lock(&S.lock);
    }
    pthread_mutex_unlock(&S.lock);
    return NULL;
}

/* CUDA devices the program's driver has: the profiler's chip-name call
 * answers for ordinals past the last device too (on an H100 machine, for
 * 1..15). libcuda is the program's own (RTLD_NOLOAD); without it, one. */
static int device_count(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    int (*count)(int *) = lib ? (int (*)(int *))dlsym(lib, "cuDeviceGetCount") : NULL;
    int n = 0;
    if (!count || count(&n) != 0 || n <= 0)
        n = 1;
    if (lib)
        dlclose(lib);
    return n < MAX_DEVICES ? n : MAX_DEVICES;
}

static void close_devices(bool touch_cupti)
{
    for (int k = 0; k < S.n_dev; k++) {
        if (S.dev[k].failed_decodes)
            say(GFL_LOG_WARN, "PM sampling on device %d: %llu decode(s) failed; their samples are missing",
                S.dev[k].device, (unsigned long long)S.dev[k].failed_decodes);
        if (touch_cupti)
            S.ops->close(S.dev[k].h); /* stops and disables */
    }
    S.n_dev = 0;
    free(S.names);
    S.names = NULL;
}

void gfl_pm_source_start(const gpufl_plugin_host *host)
{
    const gpufl_options *o = host->options;
    if (!o->pm_sampling_metrics || !o->pm_sampling_metrics[0] || S.thread_running)
        return;
    S.host = host;
    S.ops = gfl_pm_sampling_ops();
    parse(o->pm_sampling_metrics);
    if (S.n_metrics == 0) {
        say(GFL_LOG_WARN, "pm_sampling_metrics names no metric");
        close_devices(false);
        return;
    }
    /* Before any device starts, so that no sample begins before it. The
     * pair is read back to back: they differ by the ns between the reads. */
    S.started_ns = host->now_ns();
    S.offset_ns = (int64_t)realtime_ns() - (int64_t)S.started_ns;
    int n_devices = device_count();
    for (int dev = 0; dev < n_devices; dev++) {
        device_source *d = &S.dev[S.n_dev];
        char err[512] = "";
        memset(d, 0, sizeof *d);
        d->device = dev;
        int rc = S.ops->open(dev, &d->h, err, sizeof err);
        if (rc == 0)
            rc = S.ops->enable(d->h, err, sizeof err);
        if (rc == GPUFL_PM_E_INVALID_DEVICE) { /* past the last device */
            S.ops->close(d->h);
            break;
        }
        if (rc == 0)
            rc = configure_greedy(d, err, sizeof err);
        if (rc == 0)
            rc = S.ops->start(d->h, err, sizeof err);
        if (rc != 0) {
            say(GFL_LOG_WARN, "pm_sampling_metrics: no PM sampling on device %d: %s", dev, err);
            S.ops->close(d->h);
            if (rc == GPUFL_PM_E_LIBRARY_NOT_LOADED)
                break;
            continue;
        }
        S.n_dev++;
    }
    if (S.n_dev == 0) {
        close_devices(false);
        return;
    }
    S.stopping = false;
    if (pthread_create(&S.thread, NULL, decoder, NULL) != 0) {
        say(GFL_LOG_WARN, "pm_sampling_metrics: no thread for PM sampling; not sampling");
        close_devices(true);
        return;
    }
    S.thread_running = true;
    say(GFL_LOG_INFO, "PM sampling every %u us on %d device(s): %zu metric(s) of %zu on device %d",
        o->pm_sampling_interval_us, S.n_dev, S.dev[0].n_metrics, S.n_metrics, S.dev[0].device);
}

void gfl_pm_source_stop(bool process_exiting)
{
    if (!S.thread_running)
        return;
    pthread_mutex_lock(&S.lock);
    S.stopping = true;
    pthread_cond_signal(&S.wake);
    pthread_mutex_unlock(&S.lock);
    pthread_join(S.thread, NULL);
    S.thread_running = false;
    if (!process_exiting) {
        char err[512];
        for (int k = 0; k < S.n_dev; k++)
            (void)S.ops->stop(S.dev[k].h, err, sizeof err);
        decode_all(); /* what was sampled since the last decode */
    }
    close_devices(!process_exiting);
}
