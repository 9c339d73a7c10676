/*
 * The trace windows' controller (see trace_windows.h).
 *
 * One window is open at a time. It has up to two limits, a time (until_ns)
 * and a step count (steps_until: it closes once that many steps have
 * ended), and closes when both are reached; a request, trigger, schedule
 * or step window that comes while one is open extends it instead of
 * opening another, so the events never overlap.
 *
 * The schedule's first window opens at the session's start: the plugin
 * starts tracing anyway (so that window costs no second attach), and a
 * program shorter than trace_every_s still gets its start-up traced, where
 * first-iteration trouble (compilation, allocation, warm-up) shows. The
 * next open at start + k * trace_every_s. Without a schedule the plugin
 * starts paused (plugin_api.h, start_paused).
 *
 * Times: a window's begin is read before the plugin takes the interface
 * back and its end after it let go (and flushed), so every device record
 * of a window starts inside [begin, end].
 *
 * Rates: a window opens every few seconds or steps at most; the scope path
 * pays one relaxed load per begin and end (trace_windows.h) and an atomic
 * add per step scope; only a window's first and last step take the lock.
 */
#include "session/trace_windows.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/intern.h"
#include "core/log.h"
#include "core/os.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"
#include "session/plugin.h"

#define REQUEST_MAX_S 1e7 /* a longer request is this long: no overflow of the session clock */

_Atomic uint32_t gpufl__trace_step_name;

enum { R_SCHEDULE, R_STEPS, R_TRIGGER, R_REQUEST, R_COUNT };
static const char *const reason_names[R_COUNT] = {"schedule", "steps", "trigger", "request"};

static struct {
    pthread_mutex_t lock;
    bool session;  /* a session records */
    bool tracing;  /* its device plugin runs */
    bool windowed; /* and windows switch it on and off */
    bool stop;     /* the controller's thread is asked to end */
    uint64_t every_ns, for_ns, next_sched_ns;
    uint32_t steps;
    const char *step_scope; /* the session's option string */
    /* the open window */
    bool open;
    unsigned reason, extended; /* extended: a bit per reason that extended it */
    uint32_t index, windows;
    uint64_t begin_ns;
    uint64_t until_ns;    /* time limit, 0 = reached or none */
    uint64_t first_step;  /* for the detail of a steps window */
    uint64_t steps_until; /* closes once this many steps ended, 0 = reached or none */
    char detail[128];
    /* windows the user's pause skipped, logged once per pause */
    uint64_t skipped;
    bool open_failed_logged;
    pthread_t thread;
    bool thread_running;
} W = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Steps begun and ended in this session, on any thread (meant for one loop). */
static _Atomic uint32_t every_steps;
static _Atomic uint64_t steps_begun, steps_ended;
/* W.steps_until, for the step end's check without the lock; 0 = none */
static _Atomic uint64_t close_after_steps;

/* Triggers hand their request over here: whoever sets `pending_busy` may
 * write the reason; pending_ns (the longest asked for) is set last. */
static _Atomic bool accepting;
static atomic_flag pending_busy = ATOMIC_FLAG_INIT;
static _Atomic uint64_t pending_ns;
static char pending_reason[64];

/* Wakes the controller's thread; process-wide and never closed, so that a
 * trigger racing the session's end never writes into a reused descriptor. */
static int wake_fd = -1;
static pthread_once_t wake_once = PTHREAD_ONCE_INIT;
static void make_wake_fd(void) { wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

static void wake(void)
{
    uint64_t one = 1;
    if (wake_fd >= 0)
        (void)!write(wake_fd, &one, sizeof one); /* EAGAIN: already awake enough */
}

/* ---- events ---------------------------------------------------------------- */

static void push_window(uint64_t begin, uint64_t end, const char *detail)
{
    gpufl__producer *p = gpufl__producer_self();
    if (!p)
        return;
    gfl_event ev = {.h = {.type = GFL_EV_TRACE_WINDOW, .ts = begin}};
    ev.u.trace_window = (gfl_trace_window_payload){
        .end_ts = end,
        .reason = gpufl__intern(reason_names[W.reason]),
        .detail = detail[0] ? gpufl__intern(detail) : 0,
        .index = W.index,
    };
    (void)gpufl__ring_push(&p->ring, &ev, gpufl__producer_tid(p)); /* a full ring counts it lost */
}

static void steps_detail(char *buf, size_t len, uint64_t first, uint64_t last)
{
    snprintf(buf, len, "steps %llu-%llu of `%.60s`", (unsigned long long)first, (unsigned long long)last, W.step_scope);
}

/* The closing event's detail: the steps a steps window ended up covering,
 * and what else kept it open. */
static void closing_detail(char *buf, size_t len, uint64_t steps_done, const char *why)
{
    if (W.reason == R_STEPS)
        steps_detail(buf, len, W.first_step, steps_done ? steps_done - 1 : W.first_step);
    else
        snprintf(buf, len, "%s", W.detail);
    size_t n = strlen(buf);
    for (unsigned r = 0; r < R_COUNT; r++)
        if (W.extended & (1u << r) && n + 2 < len)
            n += (size_t)snprintf(buf + n, len - n, "%sextended by %s", n ? "; " : "", reason_names[r]);
    if (why && n + 2 < len)
        snprintf(buf + n, len - n, "%s%s", n ? "; " : "", why);
}

/* ---- opening and closing; the lock held --------------------------------- */

static void publish_steps_limit(void)
{
    /* relaxed: the step end re-reads W.steps_until under the lock */
    atomic_store_explicit(&close_after_steps, W.open ? W.steps_until : 0, memory_order_relaxed);
}

/* Opens a window now with the given limits (0: none), or extends the open
 * one. Returns 0; GPUFL_ESTATE while the user's pause holds (the window is
 * skipped and counted); the plugin's error when it could not take the
 * interface back (logged once a session; nothing opened). */
static int open_or_extend(unsigned reason, uint64_t until_ns, uint64_t steps_until, const char *detail)
{
    if (W.open) {
        if (until_ns > W.until_ns)
            W.until_ns = until_ns;
        if (steps_until > W.steps_until)
            W.steps_until = steps_until;
        if (reason != W.reason)
            W.extended |= 1u << reason;
        publish_steps_limit();
        return 0;
    }
    if (gpufl__plugin_user_paused()) {
        if (!W.skipped++)
            gpufl__log(GFL_LOG_INFO,
                       "trace window (%s) skipped: the trace is paused by gpufl_trace_pause(); "
                       "no window opens until gpufl_trace_resume()",
                       reason_names[reason]);
        return GPUFL_ESTATE;
    }
    uint64_t begin = gpufl__now_ns();
    char err[512] = "";
    int rc = gpufl__plugin_set_gap(false, err, sizeof err);
    if (rc != 0) {
        if (!W.open_failed_logged)
            gpufl__log(GFL_LOG_WARN, "a trace window (%s) could not open: %s; later windows will try again",
                       reason_names[reason], err[0] ? err : "the device plugin refused");
        W.open_failed_logged = true;
        gpufl__set_error("gpufl_trace_window: %s", err[0] ? err : "the device plugin refused");
        return rc;
    }
    W.open = true;
    W.reason = reason;
    W.extended = 0;
    W.index = ++W.windows;
    W.begin_ns = begin;
    W.until_ns = until_ns;
    W.steps_until = steps_until;
    snprintf(W.detail, sizeof W.detail, "%s", detail);
    publish_steps_limit();
    push_window(begin, 0, W.detail);
    return 0;
}

/* Closes the open window: the plugin lets go (let_go false at the
 * session's end, where stopping the plugin follows), then the event. */
static void close_window(bool let_go, const char *why)
{
    if (!W.open)
        return;
    if (let_go) {
        char err[512] = "";
        if (gpufl__plugin_set_gap(true, err, sizeof err) != 0)
            gpufl__log(GFL_LOG_WARN, "trace window %u: the device plugin did not let go (%s); tracing on", W.index,
                       err[0] ? err : "no reason given");
    }
    uint64_t end = gpufl__now_ns();
    char detail[sizeof W.detail + 96];
    closing_detail(detail, sizeof detail, atomic_load_explicit(&steps_ended, memory_order_relaxed), why);
    W.open = false;
    publish_steps_limit();
    push_window(W.begin_ns, end, detail);
}

/* The window's time limit passed (or the steps ended: steps_done). */
static void limit_reached(bool time, bool steps)
{
    if (time)
        W.until_ns = 0;
    if (steps)
        W.steps_until = 0;
    publish_steps_limit();
    if (!W.until_ns && !W.steps_until)
        close_window(true, NULL);
}

/* ---- the controller's thread ---------------------------------------------- */

static void take_trigger(uint64_t now)
{
    if (!atomic_load_explicit(&pending_ns, memory_order_acquire))
        return;
    if (atomic_flag_test_and_set_explicit(&pending_busy, memory_order_acquire))
        return; /* a trigger is writing: its wake comes after */
    /* acquire (the flag): the reason its writer stored before clearing it */
    uint64_t ns = atomic_exchange_explicit(&pending_ns, 0, memory_order_relaxed);
    char reason[sizeof pending_reason];
    memcpy(reason, pending_reason, sizeof reason);
    pending_reason[0] = '\0';
    atomic_flag_clear_explicit(&pending_busy, memory_order_release);
    if (ns)
        (void)open_or_extend(R_TRIGGER, now + ns, 0, reason);
}

static void wait_for_work(uint64_t now)
{
    uint64_t next = 0;
    if (W.every_ns)
        next = W.next_sched_ns;
    if (W.open && W.until_ns && (!next || W.until_ns < next))
        next = W.until_ns;
    int timeout_ms = -1;
    if (next)
        timeout_ms = next > now ? (int)((next - now + 999999) / 1000000) : 0;
    pthread_mutex_unlock(&W.lock);
    struct pollfd pfd = {.fd = wake_fd, .events = POLLIN};
    if (poll(&pfd, 1, timeout_ms) > 0) {
        uint64_t count;
        (void)!read(wake_fd, &count, sizeof count);
    }
    pthread_mutex_lock(&W.lock);
}

static void *controller_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&W.lock);
    while (!W.stop) {
        uint64_t now = gpufl__now_ns();
        take_trigger(now);
        if (W.every_ns && now >= W.next_sched_ns) {
            char detail[64];
            snprintf(detail, sizeof detail, "every %llu s for %llu s", (unsigned long long)(W.every_ns / 1000000000u),
                     (unsigned long long)(W.for_ns / 1000000000u));
            (void)open_or_extend(R_SCHEDULE, now + W.for_ns, 0, detail);
            while (W.next_sched_ns <= now)
                W.next_sched_ns += W.every_ns; /* windows missed while busy are not made up */
        }
        now = gpufl__now_ns();
        if (W.open && W.until_ns && now >= W.until_ns)
            limit_reached(true, false);
        wait_for_work(gpufl__now_ns());
    }
    pthread_mutex_unlock(&W.lock);
    return NULL;
}

static bool start_thread(void)
{
    pthread_once(&wake_once, make_wake_fd);
    if (wake_fd < 0)
        return false;
    uint64_t stale;
    (void)!read(wake_fd, &stale, sizeof stale);
    int perr = gpufl__thread_start(&W.thread, controller_main, NULL, "gpufl-trace");
    if (perr != 0)
        return false;
    W.thread_running = true;
    return true;
}

/* ---- the session's calls ------------------------------------------------------ */

bool gpufl__trace_windows_wanted(const gpufl_options *o)
{
    return o->profiling_engine > GPUFL_ENGINE_MONITOR && (o->trace_every_s || o->trace_every_steps);
}

bool gpufl__trace_windows_start_paused(const gpufl_options *o)
{
    return gpufl__trace_windows_wanted(o) && !o->trace_every_s;
}

void gpufl__trace_windows_start(const gpufl_options *o, bool tracing, uint64_t plugin_start_ns)
{
    pthread_mutex_lock(&W.lock);
    W.session = true;
    W.tracing = tracing;
    W.windowed = W.stop = W.open = W.open_failed_logged = false;
    W.windows = 0;
    W.skipped = 0;
    atomic_store_explicit(&steps_begun, 0, memory_order_relaxed);
    atomic_store_explicit(&steps_ended, 0, memory_order_relaxed);
    atomic_store_explicit(&close_after_steps, 0, memory_order_relaxed);
    atomic_store_explicit(&pending_ns, 0, memory_order_relaxed);
    if (!tracing || !gpufl__trace_windows_wanted(o)) {
        pthread_mutex_unlock(&W.lock);
        return;
    }
    if (!gpufl__plugin_can_pause()) {
        gpufl__log(GFL_LOG_WARN,
                   "trace windows: the device plugin %s cannot let go of its tracing; tracing all "
                   "the time",
                   gpufl__plugin_name());
        pthread_mutex_unlock(&W.lock);
        return;
    }
    W.every_ns = (uint64_t)o->trace_every_s * 1000000000u;
    W.for_ns = (uint64_t)o->trace_for_s * 1000000000u;
    W.steps = o->trace_steps ? o->trace_steps : 1;
    W.step_scope = o->trace_step_scope ? o->trace_step_scope : "";
    if (!start_thread()) {
        char err[512] = "";
        gpufl__log(GFL_LOG_WARN, "trace windows: cannot start their thread (%s); tracing all the time",
                   strerror(errno));
        if (gpufl__plugin_set_gap(false, err, sizeof err) != 0)
            gpufl__log(GFL_LOG_WARN, "trace windows: the device plugin could not start tracing: %s", err);
        pthread_mutex_unlock(&W.lock);
        return;
    }
    W.windowed = true;
    if (W.every_ns) {
        /* the plugin traces since it started: the first window is that */
        W.open = true;
        W.reason = R_SCHEDULE;
        W.extended = 0;
        W.index = ++W.windows;
        W.begin_ns = plugin_start_ns;
        W.until_ns = plugin_start_ns + W.for_ns;
        W.steps_until = 0;
        snprintf(W.detail, sizeof W.detail, "every %u s for %u s", o->trace_every_s, o->trace_for_s);
        push_window(plugin_start_ns, 0, W.detail);
        W.next_sched_ns = plugin_start_ns + W.every_ns;
    }
    if (o->trace_every_steps && W.step_scope[0]) {
        atomic_store_explicit(&every_steps, o->trace_every_steps, memory_order_relaxed);
        atomic_store_explicit(&gpufl__trace_step_name, gpufl__intern(W.step_scope), memory_order_relaxed);
    } else if (o->trace_every_steps) {
        gpufl__log(GFL_LOG_WARN, "trace_every_steps: trace_step_scope is empty; no step windows");
    }
    atomic_store_explicit(&accepting, true, memory_order_release);
    pthread_mutex_unlock(&W.lock);
    gpufl__log(GFL_LOG_DEBUG, "trace windows: every %u s for %u s, %u steps of every %u of `%s`", o->trace_every_s,
               o->trace_for_s, o->trace_steps, o->trace_every_steps, W.step_scope);
}

void gpufl__trace_windows_stop(void)
{
    atomic_store_explicit(&accepting, false, memory_order_relaxed);
    atomic_store_explicit(&gpufl__trace_step_name, 0, memory_order_relaxed);
    pthread_mutex_lock(&W.lock);
    W.stop = true;
    bool join = W.thread_running;
    W.thread_running = false;
    pthread_mutex_unlock(&W.lock);
    if (join) {
        wake();
        pthread_join(W.thread, NULL);
    }
}

void gpufl__trace_windows_end(void)
{
    pthread_mutex_lock(&W.lock);
    close_window(false, "the session ended");
    W.session = W.tracing = W.windowed = false;
    pthread_mutex_unlock(&W.lock);
}

/* ---- steps, on the program's thread -------------------------------------------- */

void gpufl__trace_windows_step_begin(void)
{
    uint64_t n = atomic_fetch_add_explicit(&steps_begun, 1, memory_order_relaxed);
    uint32_t every = atomic_load_explicit(&every_steps, memory_order_relaxed);
    if (!every || n % every)
        return;
    pthread_mutex_lock(&W.lock);
    if (W.windowed && !W.stop) {
        char detail[96];
        steps_detail(detail, sizeof detail, n, n + W.steps - 1);
        if (!W.open)
            W.first_step = n;
        (void)open_or_extend(R_STEPS, 0, n + W.steps, detail);
    }
    pthread_mutex_unlock(&W.lock);
}

void gpufl__trace_windows_step_end(void)
{
    uint64_t ended = atomic_fetch_add_explicit(&steps_ended, 1, memory_order_relaxed) + 1;
    uint64_t at = atomic_load_explicit(&close_after_steps, memory_order_relaxed);
    if (!at || ended < at)
        return;
    pthread_mutex_lock(&W.lock);
    /* stopping: the open window stays open until the plugin has stopped */
    if (W.windowed && !W.stop && W.open && W.steps_until && ended >= W.steps_until)
        limit_reached(false, true);
    pthread_mutex_unlock(&W.lock);
}

/* ---- the user's calls, requests and triggers ------------------------------------- */

int gpufl__trace_windows_user_pause(void)
{
    pthread_mutex_lock(&W.lock);
    int rc = gpufl__plugin_pause();
    if (rc == 0 && W.windowed) {
        char err[512];
        close_window(false, "closed by gpufl_trace_pause()");
        (void)gpufl__plugin_set_gap(true, err, sizeof err); /* paused already: only the state */
        W.skipped = 0;
    }
    pthread_mutex_unlock(&W.lock);
    return rc;
}

int gpufl__trace_windows_user_resume(void)
{
    pthread_mutex_lock(&W.lock);
    int rc = gpufl__plugin_resume();
    if (rc == 0 && W.skipped)
        gpufl__log(GFL_LOG_INFO, "%llu trace windows were skipped while the trace was paused",
                   (unsigned long long)W.skipped);
    if (rc == 0)
        W.skipped = 0;
    pthread_mutex_unlock(&W.lock);
    return rc;
}

GPUFL_API int gpufl_trace_window(double seconds)
{
    if (!(seconds > 0)) {
        gpufl__set_error("gpufl_trace_window: seconds must be more than 0 (got %g)", seconds);
        return GPUFL_EINVAL;
    }
    if (seconds > REQUEST_MAX_S)
        seconds = REQUEST_MAX_S;
    int rc = 0;
    pthread_mutex_lock(&W.lock);
    if (!W.session) {
        gpufl__set_error("gpufl_trace_window: no session; call gpufl_init first");
        rc = GPUFL_ESTATE;
    } else if (!W.tracing) {
        gpufl__set_error("gpufl_trace_window: no device tracing is running (the engine is monitor, or the "
                         "device plugin could not start)");
        rc = GPUFL_ESTATE;
    } else if (gpufl__plugin_user_paused()) {
        gpufl__set_error("gpufl_trace_window: the trace is paused by gpufl_trace_pause()");
        rc = GPUFL_ESTATE;
    } else if (W.windowed) {
        char detail[64];
        snprintf(detail, sizeof detail, "%.3f s requested", seconds);
        rc = open_or_extend(R_REQUEST, gpufl__now_ns() + (uint64_t)(seconds * 1e9), 0, detail);
    } /* else traced all the time: the request is met */
    pthread_mutex_unlock(&W.lock);
    if (rc == 0)
        wake(); /* the thread's next deadline moved */
    return rc;
}

int gpufl__trace_windows_request(uint64_t ns, const char *reason)
{
    if (!ns)
        return GPUFL_EINVAL;
    if (!atomic_load_explicit(&accepting, memory_order_acquire))
        return GPUFL_ESTATE;
    if (!atomic_flag_test_and_set_explicit(&pending_busy, memory_order_acquire)) {
        snprintf(pending_reason, sizeof pending_reason, "%s", reason ? reason : "");
        atomic_flag_clear_explicit(&pending_busy, memory_order_release);
    } /* busy: another trigger's reason names the window; the longest wins */
    uint64_t cur = atomic_load_explicit(&pending_ns, memory_order_relaxed);
    /* release: the reason above is visible to the thread that sees ns */
    while (ns > cur &&
           !atomic_compare_exchange_weak_explicit(&pending_ns, &cur, ns, memory_order_release, memory_order_relaxed)) {
    }
    wake();
    return 0;
}
