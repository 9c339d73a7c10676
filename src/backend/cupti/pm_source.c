/*
 * PM sampling as a recorder source (see pm_source.h), over pm_sampling.c's
 * table.
 *
 * History: on an H100 on 2026-11-27 an earlier form of this source, which
 * set the devices up inside the driver's injection or on a thread without
 * a context, crashed the program (SIGSEGV in libnvperf_host) and was kept
 * behind GPUFL_EXPERIMENTAL_PM_SOURCE=1. Set up as below (the thread, in
 * the program's primary context) it ran a PyTorch loop, three ResNet-50
 * trainings and tests/gpu/test_pm_source.cu without a fault the same day,
 * so the option alone now turns it on.
 *
 * Clock: PM timestamps come in one of two clocks. Without a timestamp
 * callback they are the GPU's global timer, which the driver keeps near
 * the host's CLOCK_REALTIME: on an H100 a kernel's %globaltimer start
 * lagged realtime by 0.6 ms in one run and 3.2 ms in another. But the
 * recorder registers the session clock with
 * cuptiActivityRegisterTimestampCallback for its activity records, and on
 * an H100 (CUPTI 13.0, 2026-11-27) the PM samples then came in that clock
 * too (their ends 52 s into a machine up for about a minute, against
 * realtime's 1.8e18 ns): every sample had been dropped as "before the
 * session". So the first decode that has samples decides: the clock that
 * the newest sample's end lies nearer to now in is the samples' clock
 * (offset 0 for the session clock; realtime minus the session clock, read
 * back to back at start, otherwise). Samples decoded before that are
 * mapped by the same choice, since it is made before any is pushed. The
 * first sample reaches back before start (on an H100, to the
 * configuration): it is clipped to the start.
 *
 * Thread: the devices are set up on the decoder thread, not the caller's:
 * under `gpufl run` the plugin starts inside the program's first CUDA call
 * (the driver's injection), where cuptiProfilerInitialize failed on an H100
 * (CUPTI_ERROR_UNKNOWN). The thread waits for the program's own primary
 * context and works inside it (retained, current on the thread until the
 * end): CUPTI's PM calls from a thread with no current context crashed in
 * libcuda on an H100. Devices whose primary context the program has not
 * made by then are not sampled, and the log says so.
 *
 * Decodes: often enough that one period's samples fit one counter data
 * image of MAX_SAMPLES_PER_DECODE: a decode whose image fills returned
 * nothing of the rest of the hardware buffer on an H100 (the next decode
 * found it empty), so the rest of that period is lost and said so.
 */
#include "backend/cupti/pm_source.h"

#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dlfcn.h>

#include "backend/cupti/driver_api.h"
#include "backend/cupti/pm_sampling.h"
#include "core/thread_signals.h"
#include "gpufl/gpufl.h"

#define MAX_DEVICES 16
#define MAX_METRICS 32
#define MAX_SAMPLES_PER_DECODE 4000u
#define SLOWEST_DECODE_NS 100000000L /* at long intervals: every 100 ms */
#define FASTEST_DECODE_NS 5000000L

typedef struct device_source {
    int device;
    gpufl_pm_handle *h;
    uint32_t metric_ids[MAX_METRICS];
    size_t n_metrics;
    uint64_t failed_decodes; /* said once, then counted: a decode runs every few ms */
    uint64_t image_full;     /* decodes whose image filled: the rest of their period was lost */
    uint64_t decodes;
    bool overflow_said;
} device_source;

static struct {
    const gpufl_plugin_host *host;
    const gpufl_pm_ops *ops;
    device_source dev[MAX_DEVICES];
    int n_dev;
    int64_t offset_ns;       /* samples' clock - session clock (pm_clock_chosen decides it) */
    int64_t realtime_offset; /* CLOCK_REALTIME - session clock, at start */
    bool clock_chosen;
    uint64_t started_ns;
    long decode_every_ns;
    pthread_t thread;
    bool thread_running;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;        /* under lock */
    bool process_exiting; /* under lock: at stop, leave CUPTI alone */
    CUdevice held;        /* the device whose primary context the thread retained */
    bool context_held;
    char *names; /* the parsed list, owned */
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

/* Configures h with all the metrics, or else with as many as fit one
 * pass, in order (each configure is a new config handed to CUPTI: the
 * common case makes one). */
static int configure_greedy(device_source *d, char *err, size_t err_len)
{
    const char *kept[MAX_METRICS];
    size_t n = 0;
    gpufl_pm_config cfg;
    gpufl__pm_config_defaults(&cfg);
    cfg.sampling_interval = (uint64_t)S.host->options->pm_sampling_interval_us * 1000u;
    cfg.metrics = S.metrics;
    cfg.num_metrics = S.n_metrics;
    char last_err[512] = "";
    bool last_kept = S.ops->configure(d->h, &cfg, last_err, sizeof last_err) == 0;
    if (last_kept) {
        memcpy(kept, S.metrics, S.n_metrics * sizeof *kept);
        n = S.n_metrics;
    }
    for (size_t i = 0; !last_kept && i < S.n_metrics; i++) {
        kept[n] = S.metrics[i];
        cfg.metrics = kept;
        cfg.num_metrics = n + 1;
        int rc = S.ops->configure(d->h, &cfg, last_err, sizeof last_err);
        if (rc == 0)
            n++;
        else
            say(GFL_LOG_WARN, "pm_sampling_metrics: %s left out on device %d: %s", S.metrics[i], d->device, last_err);
        last_kept = rc == 0 && i + 1 == S.n_metrics;
    }
    if (n == 0) {
        snprintf(err, err_len, "no metric of pm_sampling_metrics could be sampled");
        return -1;
    }
    if (!last_kept) { /* the last configure was a refused one: configure what was kept */
        cfg.metrics = kept;
        cfg.num_metrics = n;
        if (S.ops->configure(d->h, &cfg, err, err_len) != 0)
            return -1;
    }
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

/* Returns the samples that reached into the session (the rest ended before it). */
static uint64_t push_data(const device_source *d, const gpufl_pm_counter_data *data)
{
    uint64_t kept = 0;
    for (uint64_t i = 0; i < data->num_samples; i++) {
        int64_t start = (int64_t)data->start_ns[i] - S.offset_ns, end = (int64_t)data->end_ns[i] - S.offset_ns;
        if (end <= (int64_t)S.started_ns)
            continue; /* wholly before the session asked (see the top) */
        if (start < (int64_t)S.started_ns)
            start = (int64_t)S.started_ns;
        kept++;
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
                return kept; /* recording stopped */
        }
    }
    return kept;
}

/* Once, at the first samples: which clock they are in (see the top). */
static void choose_clock(const device_source *d, const gpufl_pm_counter_data *data)
{
    if (S.clock_chosen || data->num_samples == 0)
        return;
    int64_t newest = (int64_t)data->end_ns[data->num_samples - 1];
    int64_t from_session = newest - (int64_t)S.host->now_ns(), from_real = newest - (int64_t)realtime_ns();
    bool session_clock = llabs(from_session) < llabs(from_real);
    S.offset_ns = session_clock ? 0 : S.realtime_offset;
    S.clock_chosen = true;
    say(GFL_LOG_DEBUG, "PM sampling on device %d: samples are in the %s clock (newest ends %lld ns from now)",
        d->device, session_clock ? "session's" : "GPU's realtime",
        (long long)(session_clock ? from_session : from_real));
}

static void decode_all(void)
{
    for (int k = 0; k < S.n_dev; k++) {
        device_source *d = &S.dev[k];
        gpufl_pm_counter_data *data = NULL;
        char err[512];
        uint64_t nth = ++d->decodes;
        if (nth == 1)
            say(GFL_LOG_DEBUG, "PM sampling on device %d: first decode", d->device);
        if (S.ops->decode(d->h, MAX_SAMPLES_PER_DECODE, &data, err, sizeof err) != 0) {
            if (d->failed_decodes++ == 0)
                say(GFL_LOG_WARN, "PM sampling: %s (said once; the count comes at the end)", err);
            continue;
        }
        if (data->overflow && !d->overflow_said) {
            d->overflow_said = true;
            say(GFL_LOG_WARN, "PM sampling on device %d: the hardware buffer overflowed; samples were lost", d->device);
        }
        if (data->more)
            d->image_full++;
        choose_clock(d, data);
        uint64_t kept = push_data(d, data);
        if (nth <= 3) /* where the first samples fall against the session's start, in its clock */
            say(GFL_LOG_DEBUG,
                "PM sampling on device %d: decode %llu: %llu sample(s) of %llu, %llu kept; first [%lld, %lld] ns "
                "from the start",
                d->device, (unsigned long long)nth, (unsigned long long)data->num_samples,
                (unsigned long long)data->num_total_samples, (unsigned long long)kept,
                data->num_samples ? (long long)((int64_t)data->start_ns[0] - S.offset_ns - (int64_t)S.started_ns) : 0,
                data->num_samples ? (long long)((int64_t)data->end_ns[0] - S.offset_ns - (int64_t)S.started_ns) : 0);
        S.ops->free_data(data);
    }
}

/* Waits on S.wake for up to ns; false once stopping. Called with S.lock held. */
static bool wait_unless_stopping(long ns)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += ns;
    while (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    if (!S.stopping)
        pthread_cond_timedwait(&S.wake, &S.lock, &until);
    return !S.stopping;
}

static bool primary_active(const gfl_driver_api *drv, int ordinal, CUdevice *dev)
{
    unsigned flags = 0;
    int active = 0;
    return drv->cuDeviceGet(dev, ordinal) == CUDA_SUCCESS &&
           drv->cuDevicePrimaryCtxGetState(*dev, &flags, &active) == CUDA_SUCCESS && active;
}

/* Until the program has made a primary context on one of its devices (or
 * the session stops): that context retained and made current here. Returns
 * the number of devices, 0 when stopping first. */
static int wait_for_context(void)
{
    pthread_mutex_lock(&S.lock);
    int n = 0;
    for (;;) {
        const gfl_driver_api *drv = gfl_driver();
        if (drv && drv->cuDeviceGetCount(&n) == CUDA_SUCCESS && n > 0) {
            for (int i = 0; i < n; i++) {
                CUdevice dev;
                CUcontext ctx = NULL;
                if (!primary_active(drv, i, &dev) || drv->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS)
                    continue;
                if (drv->cuCtxPushCurrent(ctx) != CUDA_SUCCESS) {
                    drv->cuDevicePrimaryCtxRelease(dev);
                    continue;
                }
                S.held = dev;
                S.context_held = true;
                pthread_mutex_unlock(&S.lock);
                return n < MAX_DEVICES ? n : MAX_DEVICES;
            }
        }
        if (!wait_unless_stopping(50000000L)) { /* 50 ms */
            pthread_mutex_unlock(&S.lock);
            return 0;
        }
    }
}

static void release_context(void)
{
    const gfl_driver_api *drv = gfl_driver();
    if (S.context_held && drv) {
        CUcontext popped;
        drv->cuCtxPopCurrent(&popped);
        drv->cuDevicePrimaryCtxRelease(S.held);
    }
    S.context_held = false;
}

static void close_devices(bool touch_cupti)
{
    for (int k = 0; k < S.n_dev; k++) {
        if (S.dev[k].failed_decodes)
            say(GFL_LOG_WARN, "PM sampling on device %d: %llu decode(s) failed; their samples are missing",
                S.dev[k].device, (unsigned long long)S.dev[k].failed_decodes);
        if (S.dev[k].image_full)
            say(GFL_LOG_WARN,
                "PM sampling on device %d: %llu decode(s) found more than %u samples; the rest of each was lost",
                S.dev[k].device, (unsigned long long)S.dev[k].image_full, MAX_SAMPLES_PER_DECODE);
        if (touch_cupti)
            S.ops->close(S.dev[k].h); /* stops and disables */
    }
    S.n_dev = 0;
    free(S.names);
    S.names = NULL;
}

/* On the decoder thread: every device the program's driver has, set up
 * and started. Returns how many started; with none, everything is closed. */
static int open_devices(void)
{
    int n_devices = wait_for_context();
    const gfl_driver_api *drv = gfl_driver();
    for (int dev = 0; dev < n_devices; dev++) {
        device_source *d = &S.dev[S.n_dev];
        char err[512] = "";
        CUdevice cu;
        if (!primary_active(drv, dev, &cu)) {
            say(GFL_LOG_INFO, "pm_sampling_metrics: device %d is not sampled: the program had no context on it yet",
                dev);
            continue;
        }
        memset(d, 0, sizeof *d);
        d->device = dev;
        int rc = S.ops->open(dev, &d->h, err, sizeof err);
        if (rc == 0)
            rc = S.ops->enable(d->h, err, sizeof err);
        if (rc == GPUFL_PM_E_INVALID_DEVICE) { /* past the last device */
            S.ops->close(d->h);
            break;
        }
        say(GFL_LOG_DEBUG, "PM sampling on device %d: %s", dev, rc == 0 ? "enabled" : "not enabled");
        if (rc == 0)
            rc = configure_greedy(d, err, sizeof err);
        say(GFL_LOG_DEBUG, "PM sampling on device %d: %s", dev, rc == 0 ? "configured" : "not configured");
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
        release_context();
        return 0;
    }
    say(GFL_LOG_INFO,
        "PM sampling every %u us on %d device(s), decoded every %ld ms: %zu metric(s) of %zu on device %d",
        S.host->options->pm_sampling_interval_us, S.n_dev, S.decode_every_ns / 1000000, S.dev[0].n_metrics, S.n_metrics,
        S.dev[0].device);
    return S.n_dev;
}

/* The thread: sets the devices up, decodes every S.decode_every_ns, and at
 * the end stops, decodes what is left and closes them, all in the context
 * it holds (when the process is exiting, it leaves CUPTI alone). */
static void *decoder(void *arg)
{
    (void)arg;
    gpufl__block_program_signals(NULL);
    if (open_devices() == 0)
        return NULL;
    pthread_mutex_lock(&S.lock);
    while (wait_unless_stopping(S.decode_every_ns)) {
        pthread_mutex_unlock(&S.lock);
        decode_all();
        pthread_mutex_lock(&S.lock);
    }
    bool exiting = S.process_exiting;
    pthread_mutex_unlock(&S.lock);
    if (!exiting) {
        char err[512];
        for (int k = 0; k < S.n_dev; k++)
            (void)S.ops->stop(S.dev[k].h, err, sizeof err);
        decode_all(); /* what was sampled since the last decode */
    }
    close_devices(!exiting);
    if (!exiting)
        release_context();
    return NULL;
}

bool gfl_pm_source_wanted(const gpufl_options *o) { return o->pm_sampling_metrics && o->pm_sampling_metrics[0]; }

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
    /* three quarters of an image per period, within bounds */
    long every = (long)o->pm_sampling_interval_us * 1000L * (MAX_SAMPLES_PER_DECODE * 3 / 4);
    S.decode_every_ns = every < FASTEST_DECODE_NS   ? FASTEST_DECODE_NS
                        : every > SLOWEST_DECODE_NS ? SLOWEST_DECODE_NS
                                                    : every;
    /* Before any device starts, so that no sample begins before it. The
     * pair is read back to back: they differ by the ns between the reads. */
    S.started_ns = host->now_ns();
    S.realtime_offset = (int64_t)realtime_ns() - (int64_t)S.started_ns;
    S.offset_ns = S.realtime_offset;
    S.clock_chosen = false;
    S.n_dev = 0;
    S.stopping = S.process_exiting = false;
    if (pthread_create(&S.thread, NULL, decoder, NULL) != 0) {
        say(GFL_LOG_WARN, "pm_sampling_metrics: no thread for PM sampling; not sampling");
        close_devices(false);
        return;
    }
    S.thread_running = true;
}

void gfl_pm_source_stop(bool process_exiting)
{
    if (!S.thread_running)
        return;
    pthread_mutex_lock(&S.lock);
    S.stopping = true;
    S.process_exiting = process_exiting;
    pthread_cond_signal(&S.wake);
    pthread_mutex_unlock(&S.lock);
    pthread_join(S.thread, NULL);
    S.thread_running = false;
}
