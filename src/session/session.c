/*
 * gpufl_init / gpufl_shutdown and the session they bracket.
 *
 * Init and shutdown serialize on one lock; nothing on a producer path takes
 * it. A session owns its resolved options, its directory, the collector, and
 * (when asked for) the sampler and the device plugin. Producers never touch
 * session memory, only the process-wide rings and string table, which is why
 * a thread racing gpufl_shutdown() is safe.
 *
 * fork(): the child inherits no thread, so it does not continue the parent's
 * session; it may start its own with gpufl_init().
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/host/host_metrics.h"
#include "backend/nvml/nvml_source.h"
#include "collect/collector.h"
#include "collect/crash.h"
#include "collect/session_json.h"
#include "collect/summary.h"
#include "core/clock.h"
#include "core/clock_pair.h"
#include "core/intern.h"
#include "core/log.h"
#include "core/options.h"
#include "core/os.h"
#include "core/run_env.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"
#include "session/dumps.h"
#include "session/metrics_listen.h"
#include "session/plugin.h"
#include "session/sampler.h"
#include "session/session.h"
#include "session/session_dir.h"
#include "session/system_window.h"
#include "session/trace_windows.h"
#include "sink/session_sinks.h"

typedef struct session {
    gpufl__config config;
    gpufl__session_info info;
    gpufl__collector *collector;
    pid_t pid;
    gpufl__device_list devices;
    gpufl__nvml_source *nvml; /* until the sampler takes it */
    int device_note_level;    /* why there is no GPU telemetry, logged once recording */
    char device_note[600];
    gpufl__disk_budget budget;      /* shared by the sinks; collector thread once it runs */
    gpufl__metrics_listen *metrics; /* metrics_listen's endpoint; NULL: off, or it could not listen */
    char metrics_note[600];         /* why it could not, logged once recording */
} session;

/* Library messages as log events of the session (core/log.h hands them
 * here while a session records): into the calling thread's ring, dropped
 * and counted like any event when it is full. */
static void record_log(int level, const char *msg)
{
    gpufl__producer *p = gpufl__producer_self();
    if (!p)
        return;
    gfl_event ev = {.h = {.type = GFL_EV_LOG, .ts = gpufl__now_ns()}};
    ev.u.log.message = gpufl__intern(msg);
    ev.u.log.level = (uint8_t)level;
    (void)gpufl__ring_push(&p->ring, &ev, gpufl__producer_tid(p)); /* a full ring counts it lost */
}

static pthread_mutex_t lifecycle = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t process_once = PTHREAD_ONCE_INIT;
static session *current;
static _Atomic uint64_t started_ns; /* the latest session's start, for producers */

uint64_t gpufl__session_start_ns(void) { return atomic_load_explicit(&started_ns, memory_order_relaxed); }
static char last_dir[4096];

void gpufl__scope_thread_exit(gpufl__producer *p);
void gpufl__sampler_forget_after_fork(void);

/* ---- process-wide setup ------------------------------------------------ */

static void fork_prepare(void)
{
    pthread_mutex_lock(&lifecycle);
    gpufl__intern_fork_prepare();
}

static void fork_parent(void)
{
    gpufl__intern_fork_parent();
    pthread_mutex_unlock(&lifecycle);
}

static void fork_child(void)
{
    gpufl__intern_fork_child();
    atomic_store_explicit(&gpufl__recording_flag, false, memory_order_relaxed);
    gpufl__log_set_recorder(NULL);
    gpufl__sampler_forget_after_fork();
    /* The parent's session lives on in the parent; the child keeps no
     * pointer to it (its threads do not exist here). */
    current = NULL;
    pthread_mutex_init(&lifecycle, NULL);
}

static void register_atexit(void);
static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;

static void process_setup(void)
{
    gpufl__producer_exit_hook = gpufl__scope_thread_exit;
    (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- starting and stopping the parts ------------------------------------ */

static int start_collector(session *s, const gfl_event *clock_start, char *err, size_t err_len)
{
    gpufl__collector_config cc = {
        .info = &s->info,
        .durable = s->config.o.flush_logs_always,
        .session_gen = gpufl__session_generation(),
        .checkpoints = true,
        .clock_start = clock_start,
        .clock_period_ns = GPUFL__CLOCK_PERIOD_NS,
    };
    if (s->metrics)
        gpufl__metrics_listen_collector(s->metrics, &cc);
    int rc = gpufl__session_sinks_open(&cc, &s->info, &s->budget, err, err_len);
    if (rc != 0)
        return rc;
    if ((rc = gpufl__dumps_open(&s->info, &cc, err, err_len)) != 0) {
        gpufl__session_end end = {.end_ns = gpufl__now_ns(), .end_wall_ns = gpufl__wall_ns()};
        for (size_t i = 0; i < cc.nsinks; i++)
            cc.sinks[i].close(cc.sinks[i].self, &end);
        return rc;
    }
    rc = gpufl__collector_start(&s->collector, &cc, err, err_len);
    if (rc != 0)
        gpufl__dumps_close(); /* the collector closed the sinks, the window with them */
    return rc;
}

/* GPU telemetry: NVML for backend auto or nvidia. Without it the session
 * records host metrics and scopes; the reason is logged once recording
 * starts (a warning only when nvidia was asked for by name). */
static void open_devices(session *s)
{
    const gpufl_options *o = &s->config.o;
    if (o->backend == GPUFL_BACKEND_NONE || o->backend == GPUFL_BACKEND_AMD) {
        if (o->backend == GPUFL_BACKEND_AMD) {
            s->device_note_level = GFL_LOG_WARN;
            snprintf(s->device_note, sizeof s->device_note,
                     "backend amd: AMD GPUs are not supported by this build; recording host metrics "
                     "and scopes");
        }
        return;
    }
    char err[512];
    if (gpufl__nvml_source_open(&s->nvml, &s->devices, err, sizeof err) != 0) {
        s->device_note_level = o->backend == GPUFL_BACKEND_NVIDIA ? GFL_LOG_WARN : GFL_LOG_INFO;
        snprintf(s->device_note, sizeof s->device_note, "no GPU telemetry: %s; recording host metrics and scopes", err);
        return;
    }
    s->info.devices = &s->devices;
}

/* One device_info event per GPU, right after the session starts. */
static void record_devices(session *s)
{
    if (s->device_note[0])
        gpufl__log(s->device_note_level, "%s", s->device_note);
    if (!s->info.devices)
        return;
    gpufl__producer *p = gpufl__producer_self();
    for (uint32_t i = 0; p && i < s->devices.count; i++) {
        gfl_event ev;
        gpufl__device_info_event(&s->devices, &s->devices.devices[i], gpufl__now_ns(), &ev);
        if (gpufl__ring_push(&p->ring, &ev, gpufl__producer_tid(p)) != 0)
            break;
    }
}

/* Which engine records, as an event (so that readers of the trace alone
 * know it) and in session.json, right away: a program that crashes in its
 * first seconds still says what ran. */
static void record_engine(session *s, const gpufl__engine_choice *c)
{
    gpufl__producer *p = gpufl__producer_self();
    if (!p)
        return;
    gfl_event ev;
    gpufl__engine_event(c, gpufl__now_ns(), &ev);
    if (gpufl__ring_push(&p->ring, &ev, gpufl__producer_tid(p)) != 0)
        return; /* counted as lost by the ring */
    gpufl__collector_checkpoint(s->collector);
}

/* The metrics endpoint's device readings come from the sampler; without
 * system sampling it runs for the endpoint alone, once a second, recording
 * nothing. */
#define METRICS_ONLY_PERIOD_MS 1000

static void start_sampler(session *s)
{
    const gpufl_options *o = &s->config.o;
    gpufl__metric_source sources[2];
    size_t n = 0;
    gpufl__host_metrics *host;
    bool record = o->system_sample_rate_ms != 0;
    uint32_t period = record ? o->system_sample_rate_ms : s->metrics && s->nvml ? METRICS_ONLY_PERIOD_MS : 0;
    if (record && gpufl__host_metrics_open(&host, "/proc") == 0)
        sources[n++] = gpufl__host_metrics_source(host);
    if (period && s->nvml) {
        sources[n++] = gpufl__nvml_source_metric(s->nvml);
        s->nvml = NULL; /* the sampler owns it now, and closes it */
    }
    gpufl__nvml_source_close(s->nvml); /* not sampling: the descriptions were all we needed */
    s->nvml = NULL;
    char err[256];
    gpufl__sampler_reader reader = {0};
    if (s->metrics)
        reader = gpufl__metrics_listen_reader(s->metrics, record);
    if (n && gpufl__sampler_start(period, o->continuous_system_sampling, sources, n, s->metrics ? &reader : NULL, err,
                                  sizeof err) != 0)
        gpufl__log(GFL_LOG_WARN, "system sampling is off: %s", err);
}

/* metrics_listen: an address it cannot listen on is said once recording
 * (so that it is in the session's log too) and the session goes on. */
static void start_metrics(session *s)
{
    const char *addr = s->config.o.metrics_listen;
    if (!addr || !addr[0])
        return;
    char err[512];
    if (gpufl__metrics_listen_start(addr, s->info.devices, s->info.host, &s->metrics, err, sizeof err) != 0)
        snprintf(s->metrics_note, sizeof s->metrics_note, "metrics_listen: %s; recording without the metrics endpoint",
                 err);
}

static void log_metrics(const session *s)
{
    if (s->metrics_note[0])
        gpufl__log(GFL_LOG_WARN, "%s", s->metrics_note);
    else if (s->metrics)
        gpufl__log(GFL_LOG_INFO, "serving metrics on http://%s/metrics", gpufl__metrics_listen_address(s->metrics));
}

static void warn_deprecated(const gpufl_options *o)
{
    if (o->remote_upload)
        gpufl__log(GFL_LOG_WARN, "remote_upload is deprecated; the library does not upload by itself: call "
                                 "gpufl_upload_logs() after gpufl_shutdown() or run `gpufl upload` (Python's "
                                 "init(remote_upload=True) uploads at exit)");
    if (o->kernel_sample_rate_ms)
        gpufl__log(GFL_LOG_WARN, "kernel_sample_rate_ms is deprecated and has no effect");
}

/* Everything of s that was started; s is freed. Under the lifecycle lock. */
static void end_session(session *s)
{
    gpufl__crash_uninstall();
    gpufl__dumps_disarm();
    gpufl__trace_windows_stop();
    gpufl__plugin_stop();
    gpufl__trace_windows_end();
    gpufl__sampler_stop();
    /* the end is the end's clock pair, so that it maps to wall time as
     * exactly as the pair says */
    gfl_event clock;
    gpufl__clock_event("end", &clock);
    gpufl__session_end end = {.end_ns = clock.h.ts, .end_wall_ns = clock.u.clock.wall_ns, .clock = &clock};
    /* release: producers that see false stop; in-flight events are drained */
    atomic_store_explicit(&gpufl__recording_flag, false, memory_order_release);
    if (s->collector) {
        gpufl__collector_stop(s->collector, &end, NULL);
        gpufl__dumps_close();
    }
    gpufl__metrics_listen_stop(s->metrics); /* its last figures were the collector's final ones */
    gpufl__log_set_recorder(NULL);
    gpufl__system_windows_reset();
    gpufl__config_free(&s->config);
    free(s);
}

/* ---- public API --------------------------------------------------------- */

static bool disabled_in_code(const gpufl_options *opts)
{
    return opts && opts->struct_size >= offsetof(gpufl_options, enabled) + sizeof(bool) && !opts->enabled;
}

GPUFL_API bool gpufl_init(const gpufl_options *opts)
{
    gpufl__clear_error();
    /* Disabled: return before any thread, file or library exists. */
    if (gpufl__env_disabled() || disabled_in_code(opts))
        return true;
    pthread_once(&process_once, process_setup);
    pthread_mutex_lock(&lifecycle);
    if (current) {
        pthread_mutex_unlock(&lifecycle);
        gpufl__log(GFL_LOG_DEBUG, "gpufl_init: a session is already recording; options ignored");
        return true;
    }
    char err[GFL_ERR_LEN];
    bool claimed_now = false;
    session *s = calloc(1, sizeof *s);
    if (!s) {
        gpufl__set_error("gpufl_init: out of memory");
        pthread_mutex_unlock(&lifecycle);
        return false;
    }
    int rc = gpufl__config_resolve(opts, &s->config, err, sizeof err);
    if (rc != 0) {
        free(s);
        goto fail;
    }
    if (!s->config.o.enabled) {
        gpufl__config_free(&s->config);
        free(s);
        pthread_mutex_unlock(&lifecycle);
        return true;
    }
    gpufl__log_set_debug(s->config.o.enable_debug_output);
    /* A program run under `gpufl run` that carries its own copy of gpufl
     * (static libgpufl.a) is recorded once, by the copy that started first. */
    if (!gpufl__run_claim(&claimed_now)) {
        gpufl__config_free(&s->config);
        free(s);
        pthread_mutex_unlock(&lifecycle);
        gpufl__log(GFL_LOG_DEBUG,
                   "gpufl_init: another copy of gpufl records this process (%s); "
                   "not starting a second session",
                   GPUFL_INJECTED_PID_ENV);
        return true;
    }
    gpufl__clock_init();
    s->pid = getpid();
    s->info.pid = (int)s->pid;
    s->info.config = &s->config;
    /* the start is the start's clock pair (core/clock_pair.h), which the
     * collector records first */
    gfl_event clock_start;
    gpufl__clock_event("start", &clock_start);
    s->info.start_ns = clock_start.h.ts;
    atomic_store_explicit(&started_ns, s->info.start_ns, memory_order_relaxed);
    s->info.start_wall_ns = clock_start.u.clock.wall_ns;
    snprintf(s->info.app_name, sizeof s->info.app_name, "%s", s->config.o.app_name);
    if (gethostname(s->info.host, sizeof s->info.host - 1) != 0)
        snprintf(s->info.host, sizeof s->info.host, "unknown");
    gpufl__config_warn_not_utf8(&s->config);
    gpufl__job_read(&s->info.job);
    if (gpufl__session_dir_make(&s->info, &s->config.o, err, sizeof err) != 0) {
        gpufl__config_free(&s->config);
        free(s);
        goto fail;
    }
    open_devices(s);
    if (gpufl__session_json_write(&s->info, NULL, NULL) != 0) {
        snprintf(err, sizeof err, "cannot write %s/session.json: %s", s->info.dir, strerror(errno));
        gpufl__nvml_source_close(s->nvml);
        gpufl__config_free(&s->config);
        free(s);
        goto fail;
    }
    atomic_fetch_add_explicit(&gpufl__session_gen, 1, memory_order_relaxed);
    gpufl__producer_set_ring_events(s->config.o.ring_events);
    gpufl__system_windows_reset();
    start_metrics(s);
    if ((rc = start_collector(s, &clock_start, err, sizeof err)) != 0) {
        gpufl__metrics_listen_stop(s->metrics);
        gpufl__nvml_source_close(s->nvml);
        gpufl__config_free(&s->config);
        free(s);
        goto fail;
    }
    current = s;
    pthread_once(&atexit_once, register_atexit);
    snprintf(last_dir, sizeof last_dir, "%s", s->info.dir);
    gpufl__log_set_recorder(record_log);
    atomic_store_explicit(&gpufl__recording_flag, true, memory_order_release);
    gpufl__crash_install();
    gpufl__dumps_arm();
    warn_deprecated(&s->config.o);
    if (s->info.job.warning[0]) /* now, so that it is in the session's log */
        gpufl__log(GFL_LOG_WARN, "job identity (%s): %s", s->info.job.launcher ? s->info.job.launcher : "?",
                   s->info.job.warning);
    record_devices(s);
    log_metrics(s);
    start_sampler(s);
    gpufl__engine_choice engine;
    uint64_t plugin_start_ns = gpufl__now_ns();
    bool tracing = gpufl__plugin_start(&s->info, &engine);
    record_engine(s, &engine);
    gpufl__trace_windows_start(&s->config.o, tracing, plugin_start_ns);
    gpufl__log(GFL_LOG_INFO, "recording session %s into %s", s->info.id, s->info.dir);
    gpufl__run_report(s->info.pid, s->info.dir);
    pthread_mutex_unlock(&lifecycle);
    return true;
fail:
    if (claimed_now)
        gpufl__run_release();
    gpufl__set_error("gpufl_init: %s", err);
    gpufl__log(GFL_LOG_ERROR, "%s; not recording", err);
    pthread_mutex_unlock(&lifecycle);
    return false;
}

GPUFL_API void gpufl_shutdown(void)
{
    pthread_mutex_lock(&lifecycle);
    session *s = current;
    current = NULL;
    if (s)
        end_session(s);
    pthread_mutex_unlock(&lifecycle);
}

GPUFL_API bool gpufl_is_recording(void) { return gpufl__is_recording(); }

GPUFL_API const char *gpufl_session_dir(void) { return last_dir; }

void gpufl__session_flush(void)
{
    pthread_mutex_lock(&lifecycle);
    if (current && current->collector)
        gpufl__collector_flush(current->collector);
    pthread_mutex_unlock(&lifecycle);
}

/* Under the lifecycle lock, so that a pause or resume never overlaps the
 * plugin's start or stop. */
static int hand_over(int (*step)(void), const char *call)
{
    pthread_mutex_lock(&lifecycle);
    int rc;
    if (!current) {
        gpufl__set_error("%s: no session; call gpufl_init first", call);
        rc = GPUFL_ESTATE;
    } else {
        rc = step();
    }
    pthread_mutex_unlock(&lifecycle);
    return rc;
}

GPUFL_API int gpufl_trace_pause(void) { return hand_over(gpufl__trace_windows_user_pause, "gpufl_trace_pause"); }

GPUFL_API int gpufl_trace_resume(void) { return hand_over(gpufl__trace_windows_user_resume, "gpufl_trace_resume"); }

/* Under the lifecycle lock: gpufl_shutdown() waits for a dump under way. */
int gpufl__session_dump(const char *api, const char *kind, const char *detail)
{
    pthread_mutex_lock(&lifecycle);
    int rc;
    if (!current) {
        gpufl__set_error("%s: no session; call gpufl_init first", api);
        rc = GPUFL_ESTATE;
    } else {
        rc = gpufl__dumps_request(api, kind, detail);
    }
    pthread_mutex_unlock(&lifecycle);
    return rc;
}

GPUFL_API int gpufl_dump(const char *reason) { return gpufl__session_dump("gpufl_dump", "dump", reason); }

/* A program that forgets gpufl_shutdown() (or exits from a worker thread)
 * still gets its logs drained and its session ended. exit() runs atexit
 * handlers before any library's destructor, and the session must end then:
 * by destructor time the dlopen()ed CUPTI plugin and libcupti may already be
 * finalized (they were loaded after the program, so they go first), and
 * flushing them would crash. The destructor stays for a libgpufl that is
 * dlclose()d with a session open. */
static void shutdown_at_exit(void)
{
    if (current && current->pid == getpid())
        gpufl_shutdown();
}

__attribute__((destructor)) static void shutdown_at_unload(void) { shutdown_at_exit(); }

static void register_atexit(void) { (void)atexit(shutdown_at_exit); }
