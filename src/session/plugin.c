/*
 * Device plugin loading and the host functions handed to it (see plugin.h
 * and plugin_api.h).
 */
#include "session/dumps.h"
#include "session/plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/intern.h"
#include "core/log.h"
#include "core/plugin_api.h"
#include "ring/producer.h"
#include "session/session.h"
#include "session/source_files.h"
#include "session/trace_windows.h"

#define DEFAULT_PLUGIN "libgpufl_cupti.so"

static const gpufl_plugin *running;
_Atomic(gpufl__scope_hook_fn) gpufl__scope_hook;
static gpufl_plugin_host host;

/* When the user's pause let go, in the session clock; 0 while not paused
 * by the user. Trace windows (trace_windows.c) let go between windows:
 * `gap`. The plugin holds the vendor interface only while neither asks it
 * to let go, so each call below touches the plugin only when it changes
 * that. Callers serialize on the trace windows' lock. */
static uint64_t paused_at;
static bool gap;

/* ---- host functions ------------------------------------------------------ */

static bool is_interval(uint8_t type)
{
    return type == GFL_EV_KERNEL || type == GFL_EV_MEMCPY || type == GFL_EV_MEMSET || type == GFL_EV_SYNC;
}

/* End times sit at the same offset in every interval payload. */
static uint64_t end_of(const gfl_event *ev) { return ev->u.kernel.end_ts; }
_Static_assert(offsetof(gfl_memcpy_payload, end_ts) == 0 && offsetof(gfl_memset_payload, end_ts) == 0 &&
                   offsetof(gfl_sync_payload, end_ts) == 0 && offsetof(gfl_kernel_payload, end_ts) == 0,
               "interval payloads start with end_ts");

/* A record with no start, or one that ends before it starts, is a broken
 * record (CUPTI emits some on context teardown): never written. */
static bool malformed(const gfl_event *ev)
{
    /* scope begins and ends are the scope API's own (a plugin's could not
     * take part in any thread's scope stack) */
    return gpufl__record_len_of(ev) == 0 || ev->h.ts == 0 || (is_interval(ev->h.type) && end_of(ev) < ev->h.ts);
}

static int commit_to(gpufl__producer *p, const gfl_event *ev, bool own_tid)
{
    return gpufl__ring_push(&p->ring, ev, own_tid ? gpufl__producer_tid(p) : 0);
}

static int host_push(const gfl_event *ev)
{
    if (!gpufl__is_recording())
        return -1;
    gpufl__producer *p = gpufl__producer_self();
    if (!p)
        return -1;
    if (malformed(ev)) {
        gpufl__producer_count_lost(p, GFL_DROP_BAD_EVENT, gpufl__event_channel(ev->h.type), 1);
        return -1;
    }
    return commit_to(p, ev, true);
}

static int host_push_wait(const gfl_event *ev)
{
    gpufl__producer *p = gpufl__producer_self();
    if (!p || !gpufl__is_recording())
        return -1;
    if (malformed(ev)) {
        gpufl__producer_count_lost(p, GFL_DROP_BAD_EVENT, gpufl__event_channel(ev->h.type), 1);
        return -1;
    }
    /* The collector drains every few milliseconds; waiting here only slows
     * the plugin's own thread, never the program's. */
    while (!gpufl__ring_has_room(&p->ring, gpufl__record_len_of(ev))) {
        if (!gpufl__is_recording())
            return -1;
        struct timespec pause = {0, 200000};
        nanosleep(&pause, NULL);
    }
    return commit_to(p, ev, false);
}

static uint64_t host_current_scope(void) { return gpufl__producer_innermost_scope(); }

static void host_count_lost(uint8_t reason, uint8_t channel, uint64_t n)
{
    gpufl__producer *p = gpufl__producer_self();
    if (p && reason < GFL_DROP_REASON_COUNT && channel < GFL_CHANNEL_COUNT)
        gpufl__producer_count_lost(p, reason, channel, n);
}

static void host_log(int level, const char *message) { gpufl__log(level, "%s", message); }

static uint64_t host_now(void) { return gpufl__now_ns(); }

/* ---- loading ----------------------------------------------------------- */

/* A plugin whose table ends before pause and resume has neither. */
static bool has_pause(const gpufl_plugin *p)
{
    return p->size >= offsetof(gpufl_plugin, resume) + sizeof p->resume && p->pause && p->resume;
}

void gpufl__plugin_default_path(char *buf, size_t len)
{
    Dl_info info;
    if (dladdr((void *)gpufl__plugin_start, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
        const char *slash = strrchr(info.dli_fname, '/');
        snprintf(buf, len, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, DEFAULT_PLUGIN);
        if (access(buf, R_OK) == 0)
            return;
    }
    snprintf(buf, len, "%s", DEFAULT_PLUGIN);
}

/* The session records with engine `ran` instead of what it asked for:
 * says why in choice->reason (after what it already says) and, when warn,
 * in one warning. Returns false, for the caller to return. */
static bool downgrade(gpufl__engine_choice *choice, gpufl_engine ran, bool warn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool downgrade(gpufl__engine_choice *choice, gpufl_engine ran, bool warn, const char *fmt, ...)
{
    size_t n = strlen(choice->reason);
    if (n && n + 2 < sizeof choice->reason) {
        memcpy(choice->reason + n, "; ", 3);
        n += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(choice->reason + n, sizeof choice->reason - n, fmt, ap);
    va_end(ap);
    choice->ran = ran;
    if (warn)
        gpufl__log(GFL_LOG_WARN, "%s", choice->reason + n);
    return false;
}

/* The choice being made (during the plugin's start), then the one made:
 * a plugin that steps down later changes the kept copy and records it. */
static gpufl__engine_choice *starting;
static gpufl__engine_choice kept;
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

void gpufl__engine_event(const gpufl__engine_choice *c, uint64_t ts, gfl_event *ev)
{
    *ev = (gfl_event){.h = {.type = GFL_EV_ENGINE, .ts = ts}};
    ev->u.engine = (gfl_engine_payload){
        .requested = gpufl__intern(gpufl__engine_name(c->requested)),
        .ran = gpufl__intern(gpufl__engine_name(c->ran)),
        .plugin = c->plugin ? gpufl__intern(c->plugin) : 0,
        .reason = c->reason[0] ? gpufl__intern(c->reason) : 0,
    };
}

static void host_engine_ran(uint32_t engine, const char *reason)
{
    if (engine > GPUFL_ENGINE_DEEP || !reason)
        return;
    pthread_mutex_lock(&engine_lock);
    if (starting) {
        (void)downgrade(starting, (gpufl_engine)engine, true, "%s", reason);
        pthread_mutex_unlock(&engine_lock);
        return;
    }
    (void)downgrade(&kept, (gpufl_engine)engine, true, "%s", reason);
    gfl_event ev;
    gpufl__engine_event(&kept, gpufl__now_ns(), &ev);
    pthread_mutex_unlock(&engine_lock);
    (void)host_push(&ev); /* lost (and counted) only when the ring is full */
}

static bool start_plugin(const gpufl__session_info *info, gpufl__engine_choice *choice);

bool gpufl__plugin_start(const gpufl__session_info *info, gpufl__engine_choice *choice)
{
    pthread_mutex_lock(&engine_lock);
    starting = choice;
    pthread_mutex_unlock(&engine_lock);
    bool ran = start_plugin(info, choice);
    pthread_mutex_lock(&engine_lock);
    starting = NULL;
    kept = *choice;
    pthread_mutex_unlock(&engine_lock);
    return ran;
}

static bool start_plugin(const gpufl__session_info *info, gpufl__engine_choice *choice)
{
    const gpufl_options *o = &info->config->o;
    *choice = (gpufl__engine_choice){.requested = o->profiling_engine, .ran = o->profiling_engine};
    const char *engine = gpufl__engine_name(o->profiling_engine);
    if (o->profiling_engine == GPUFL_ENGINE_MONITOR)
        return false;
    if (o->backend == GPUFL_BACKEND_NONE)
        return downgrade(choice, GPUFL_ENGINE_MONITOR, false,
                         "engine %s: backend none records no device activity; recording as monitor", engine);
    if (o->backend == GPUFL_BACKEND_AMD)
        return downgrade(choice, GPUFL_ENGINE_MONITOR, true,
                         "engine %s: the AMD backend is not part of this build; recording as monitor "
                         "(host metrics and scopes)",
                         engine);
    char path[4096];
    if (o->device_plugin[0])
        snprintf(path, sizeof path, "%s", o->device_plugin);
    else
        gpufl__plugin_default_path(path, sizeof path);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return downgrade(choice, GPUFL_ENGINE_MONITOR, true,
                         "engine %s needs the device plugin, which could not be loaded (%s); "
                         "recording as monitor",
                         engine, dlerror());
    gpufl_plugin_entry_fn entry = (gpufl_plugin_entry_fn)dlsym(lib, GPUFL_PLUGIN_ENTRY);
    const gpufl_plugin *plugin = entry ? entry() : NULL;
    if (!plugin || plugin->abi != GPUFL_PLUGIN_ABI || plugin->size < sizeof *plugin)
        return downgrade(choice, GPUFL_ENGINE_MONITOR, true, "%s is not a gpufl plugin of ABI %d; recording as monitor",
                         path, GPUFL_PLUGIN_ABI);
    bool start_paused = has_pause(plugin) && gpufl__trace_windows_start_paused(o);
    host = (gpufl_plugin_host){
        .size = sizeof host,
        .abi = GPUFL_PLUGIN_ABI,
        .options = o,
        .session_dir = info->dir,
        .session_start_ns = info->start_ns,
        .now_ns = host_now,
        .intern = gpufl__intern_n,
        .push = host_push,
        .current_scope = host_current_scope,
        .count_lost = host_count_lost,
        .log = host_log,
        .push_wait = host_push_wait,
        .trigger = gpufl__dumps_plugin_trigger,
        .start_paused = start_paused,
        .engine_ran = host_engine_ran,
        .source_file = gpufl__source_files_note,
    };
    char err[512] = "";
    int rc = plugin->start(&host, err, sizeof err);
    if (rc != 0)
        return downgrade(choice, GPUFL_ENGINE_MONITOR, true,
                         "device plugin %s could not start (%s); recording as monitor", plugin->name,
                         err[0] ? err : "no reason given");
    gpufl__log(GFL_LOG_DEBUG, "device plugin %s started from %s", plugin->name, path);
    running = plugin;
    gap = start_paused;
    if (o->profiling_engine == GPUFL_ENGINE_RANGE_PROFILER &&
        plugin->size >= offsetof(gpufl_plugin, scope) + sizeof plugin->scope && plugin->scope)
        atomic_store_explicit(&gpufl__scope_hook, plugin->scope, memory_order_release);
    choice->plugin = plugin->name;
    return true;
}

/* ---- handing the vendor interface to another tool -------------------------- */

static bool can_hand_over(const char *call)
{
    if (!running) {
        gpufl__set_error("%s: no device tracing is running (the engine is monitor, or the device "
                         "plugin could not start)",
                         call);
        return false;
    }
    if (!has_pause(running)) {
        gpufl__set_error("%s: the device plugin %s cannot hand its tracing over", call, running->name);
        return false;
    }
    return true;
}

int gpufl__plugin_pause(void)
{
    if (!can_hand_over("gpufl_trace_pause"))
        return running ? GPUFL_EUNSUPPORTED : GPUFL_ESTATE;
    if (paused_at) {
        gpufl__set_error("gpufl_trace_pause: the trace is already paused");
        return GPUFL_ESTATE;
    }
    char err[512] = "";
    int rc = gap ? 0 : running->pause(err, sizeof err);
    if (rc != 0) {
        gpufl__set_error("gpufl_trace_pause: %s", err[0] ? err : "the device plugin refused");
        return rc;
    }
    paused_at = gpufl__now_ns();
    gpufl__log(GFL_LOG_INFO,
               "trace paused by gpufl_trace_pause() at %llu ns: CUPTI is free for another "
               "tool; device work from now until gpufl_trace_resume() is not recorded",
               (unsigned long long)paused_at);
    return 0;
}

int gpufl__plugin_resume(void)
{
    if (!can_hand_over("gpufl_trace_resume"))
        return running ? GPUFL_EUNSUPPORTED : GPUFL_ESTATE;
    if (!paused_at) {
        gpufl__set_error("gpufl_trace_resume: the trace is not paused");
        return GPUFL_ESTATE;
    }
    char err[512] = "";
    int rc = gap ? 0 : running->resume(err, sizeof err);
    if (rc != 0) {
        gpufl__set_error("gpufl_trace_resume: %s; still paused, call it again once the other tool "
                         "has stopped",
                         err[0] ? err : "the device plugin refused");
        return rc;
    }
    uint64_t now = gpufl__now_ns();
    gpufl__log(GFL_LOG_INFO,
               "trace resumed by gpufl_trace_resume() at %llu ns after %.3f s paused: "
               "device work from %llu ns to %llu ns was not recorded",
               (unsigned long long)now, (double)(now - paused_at) / 1e9, (unsigned long long)paused_at,
               (unsigned long long)now);
    paused_at = 0;
    return 0;
}

int gpufl__plugin_set_gap(bool let_go, char *err, size_t err_len)
{
    if (!running || let_go == gap)
        return 0;
    if (!paused_at) {
        int rc = let_go ? running->pause(err, err_len) : running->resume(err, err_len);
        if (rc != 0)
            return rc;
    }
    gap = let_go;
    return 0;
}

bool gpufl__plugin_can_pause(void) { return running && has_pause(running); }

bool gpufl__plugin_user_paused(void) { return paused_at != 0; }

void gpufl__plugin_stop(void)
{
    if (!running)
        return;
    if (paused_at)
        gpufl__log(GFL_LOG_INFO,
                   "the session ended with the trace paused since %llu ns: device work from "
                   "then on was not recorded",
                   (unsigned long long)paused_at);
    paused_at = 0;
    gap = false;
    atomic_store_explicit(&gpufl__scope_hook, NULL, memory_order_release);
    running->stop();
    running = NULL;
    /* the plugin names no more files once stopped; this may block on I/O */
    gpufl__source_files_copy(host.session_dir);
}

const char *gpufl__plugin_name(void) { return running ? running->name : NULL; }
