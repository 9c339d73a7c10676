/*
 * The flight window in a session (see dumps.h).
 */
#include "session/dumps.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/triggers.h"
#include "core/clock.h"
#include "core/dump_rules.h"
#include "core/intern.h"
#include "core/log.h"
#include "core/os.h"
#include "gpufl/gpufl.h"
#include "present/report/oom_json.h"
#include "sink/window.h"
#include "session/trace_windows.h"
#include "sink/window_dump.h"

#define API_WAIT_S 120 /* gpufl_dump() gives up waiting after this */

typedef struct job {
    struct job *next;
    gpufl__window_snapshot snap;
    char name[64], kind[32], detail[256];
    uint64_t at_ns, token;
} job;

static struct {
    const gpufl__session_info *info;
    gpufl__window *window;
    gpufl__triggers *triggers;
    uint32_t max_count;
    uint64_t max_bytes;

    pthread_mutex_t lock; /* the queue and the answers */
    pthread_cond_t changed;
    job *head, *tail;
    bool stopping, thread_running;
    pthread_t thread;

    /* the gpufl_dump() call waiting (one at a time: api_lock) */
    uint64_t next_token, answered;
    int answer_rc;
    char answer[512];

    int signal;
    struct sigaction previous;
    bool handler_installed;
    char note_path[512];
} D = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

/* What the signal handler and the plugin's hook reach; NULL outside a
 * session. The triggers outlive it (freed after the collector stops). */
static _Atomic(gpufl__triggers *) active;

/* gpufl_set_framework_oom(): the framework decides what is an out-of-memory.
 * Process-wide, like the framework's allocator; relaxed: it orders nothing,
 * and a failed allocation racing the switch may go either way. */
static atomic_bool framework_oom;

/* ---- answers to gpufl_dump() --------------------------------------------- */

static void answer_dump_call(uint64_t token, int rc, const char *text)
{
    if (!token)
        return;
    pthread_mutex_lock(&D.lock);
    D.answered = token;
    D.answer_rc = rc;
    snprintf(D.answer, sizeof D.answer, "%s", text);
    pthread_cond_broadcast(&D.changed);
    pthread_mutex_unlock(&D.lock);
}

/* ---- writing ------------------------------------------------------------- */

/* oom.json for a dump of an out-of-memory, read back from the dump itself
 * (so it says what the dump holds). Dump thread; a dump of a large window
 * takes a read of it, which is rare and off the program's threads. */
static const char *add_oom_diagnosis(void *ctx, const char *dir, const gpufl__dump_note *note)
{
    (void)ctx;
    if (strcmp(note->kind, "oom") != 0)
        return NULL;
    char *text = NULL, err[600] = "", path[4400];
    size_t len = 0;
    bool found = false;
    if (gpufl__oom_json_of(dir, &text, &len, &found, err, sizeof err) != 0) {
        gpufl__log(GFL_LOG_WARN, "the out-of-memory dump %s has no %s: %s", note->name, GPUFL_OOM_JSON, err);
        return NULL;
    }
    if (!found) {
        gpufl__log(GFL_LOG_INFO, "the out-of-memory dump %s holds no failed allocation nor trigger to diagnose",
                   note->name);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", dir, GPUFL_OOM_JSON);
    int rc = gpufl__write_file_atomic(path, text, len);
    int saved = errno;
    free(text);
    if (rc != 0) {
        gpufl__log(GFL_LOG_WARN, "cannot write %s: %s", path, strerror(saved));
        return NULL;
    }
    return GPUFL_OOM_JSON;
}

static void write_job(job *j)
{
    gpufl__dump_note note = {
        .name = j->name,
        .kind = j->kind,
        .detail = j->detail,
        .at_ns = j->at_ns,
        .from_ns = j->snap.from_ns,
        .to_ns = j->snap.to_ns,
        .events = j->snap.events,
        .bytes = j->snap.bytes,
    };
    char path[4400], err[600];
    uint64_t t0 = gpufl__now_ns();
    gpufl__dump_addition extra = {add_oom_diagnosis, NULL};
    int rc = gpufl__window_dump_write(D.info, &j->snap, &note, &extra, path, sizeof path, err, sizeof err);
    if (rc == 0) {
        unsigned removed = gpufl__window_dumps_prune(D.info, D.max_count, D.max_bytes);
        gpufl__log(GFL_LOG_INFO,
                   "flight window dumped (trigger %s%s%s) to %s: %llu events, %.1f s, %.1f MB in %.0f ms%s", j->kind,
                   j->detail[0] ? ": " : "", j->detail, path, (unsigned long long)j->snap.events,
                   j->snap.to_ns > j->snap.from_ns ? (double)(j->snap.to_ns - j->snap.from_ns) / 1e9 : 0.0,
                   (double)j->snap.bytes / 1e6, (double)(gpufl__now_ns() - t0) / 1e6,
                   removed ? "; older dumps removed to keep within dump_max_count/dump_max_bytes" : "");
        answer_dump_call(j->token, 0, path);
    } else {
        gpufl__log(GFL_LOG_WARN, "the flight window could not be dumped: %s", err);
        answer_dump_call(j->token, rc, err);
    }
    gpufl__window_snapshot_free(&j->snap);
    free(j);
}

static void *dump_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&D.lock);
    for (;;) {
        while (!D.head && !D.stopping)
            pthread_cond_wait(&D.changed, &D.lock);
        job *j = D.head;
        if (!j)
            break; /* stopping, and nothing left */
        D.head = j->next;
        if (!D.head)
            D.tail = NULL;
        pthread_mutex_unlock(&D.lock);
        write_job(j);
        pthread_mutex_lock(&D.lock);
    }
    pthread_mutex_unlock(&D.lock);
    return NULL;
}

/* ---- the triggers' hooks (collector thread) -------------------------------- */

static void copy_string(char *dst, size_t cap, uint32_t id)
{
    uint32_t len = 0;
    const char *s = id ? gpufl__intern_str(id, &len) : NULL;
    snprintf(dst, cap, "%.*s", s ? (int)len : 0, s ? s : "");
}

static void hook_dump(void *ctx, const gfl_event *ev, const char *name, uint64_t token, bool wait)
{
    (void)ctx;
    job *j = calloc(1, sizeof *j);
    if (!j || gpufl__window_snapshot_take(D.window, &j->snap) != 0) {
        free(j);
        gpufl__log(GFL_LOG_WARN, "the flight window could not be dumped: out of memory");
        answer_dump_call(token, GPUFL_ENOMEM, "out of memory taking the flight window");
        return;
    }
    snprintf(j->name, sizeof j->name, "%s", name);
    copy_string(j->kind, sizeof j->kind, ev->u.trigger.kind);
    copy_string(j->detail, sizeof j->detail, ev->u.trigger.detail);
    j->at_ns = ev->h.ts;
    j->token = token;
    pthread_mutex_lock(&D.lock);
    bool queue = D.thread_running && !wait;
    if (queue) {
        if (D.tail)
            D.tail->next = j;
        else
            D.head = j;
        D.tail = j;
        pthread_cond_broadcast(&D.changed);
    }
    pthread_mutex_unlock(&D.lock);
    if (!queue)
        write_job(j); /* a crash: the process ends once this returns */
}

/* trace_on_trigger: a trace window of trace_for_s (never blocks). */
static void hook_trace(void *ctx)
{
    (void)ctx;
    (void)gpufl__trace_windows_request((uint64_t)D.info->config->o.trace_for_s * 1000000000ull, "trigger");
}

static void hook_refused(void *ctx, uint64_t token, gfl_trigger_outcome outcome)
{
    (void)ctx;
    char why[256];
    if (outcome == GFL_TRIGGER_STORM)
        snprintf(why, sizeof why, "the last dump is younger than dump_min_interval_s (%u s): recorded, not dumped",
                 D.info->config->o.dump_min_interval_s);
    else if (D.window) /* a window, but this kind does not dump */
        snprintf(why, sizeof why, "dump_on_oom is off: the out-of-memory is recorded, not dumped");
    else
        snprintf(why, sizeof why, "the session keeps no flight window (flight_window_s is 0)");
    answer_dump_call(token, GPUFL_ESTATE, why);
}

/* ---- open and close ----------------------------------------------------- */

int gpufl__dumps_open(const gpufl__session_info *info, gpufl__collector_config *cc, char *err, size_t err_len)
{
    const gpufl_options *o = &info->config->o;
    D.info = info;
    D.window = NULL;
    D.max_count = o->dump_max_count;
    D.max_bytes = o->dump_max_bytes;
    D.head = D.tail = NULL;
    D.stopping = false;
    D.answered = 0;
    if (o->flight_window_s) {
        if (cc->nsinks == GFL_COLLECTOR_MAX_SINKS) {
            snprintf(err, err_len, "no room for the flight window among the collector's sinks");
            return GPUFL_EINVAL;
        }
        int rc = gpufl__window_open(&cc->sinks[cc->nsinks], &D.window, info, err, err_len);
        if (rc != 0)
            return rc;
        cc->nsinks++;
    }
    gpufl__trigger_hooks hooks = {.ctx = NULL, .write_dump = hook_dump, .refused = hook_refused, .trace = hook_trace};
    int rc = gpufl__triggers_create(&D.triggers, o, D.window != NULL, &hooks, err, err_len);
    if (rc != 0)
        return rc; /* the window, a sink of cc, is closed with the others */
    cc->triggers = D.triggers;
    if (D.window) {
        D.thread_running = gpufl__thread_start(&D.thread, dump_main, NULL, "gpufl-dump") == 0;
        if (!D.thread_running)
            gpufl__log(GFL_LOG_WARN, "no dump thread: dumps are written on the collector thread");
    }
    return 0;
}

/* ---- the dump signal and the note ------------------------------------------ */

static void on_dump_signal(int sig)
{
    (void)sig;
    gpufl__triggers *t = atomic_load_explicit(&active, memory_order_acquire);
    if (t)
        gpufl__triggers_signal(t);
}

int gpufl__dump_note_path(int pid, char *out, size_t len)
{
    const char *run = getenv(GPUFL_DUMP_NOTE_DIR_ENV);
    int n = run && run[0] == '/' ? snprintf(out, len, "%s/gpufl/%d", run, pid)
                                 : snprintf(out, len, "/tmp/gpufl-%u/%d", (unsigned)getuid(), pid);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* The note's directory, only if it is ours: a directory another user made
 * in /tmp must not receive it. */
static int note_dir_ready(const char *path)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() && !(st.st_mode & 022) ? 0 : -1;
}

static void write_note(void)
{
    char text[4400];
    int n = snprintf(text, sizeof text, "%d\n%s\n", D.signal, D.info->dir);
    if (gpufl__dump_note_path(D.info->pid, D.note_path, sizeof D.note_path) != 0 || note_dir_ready(D.note_path) != 0 ||
        n <= 0 || gpufl__write_file_atomic(D.note_path, text, (size_t)n) != 0) {
        gpufl__log(GFL_LOG_INFO, "`gpufl dump %d` will not find this session (no note at %s); the signal %d works",
                   D.info->pid, D.note_path, D.signal);
        D.note_path[0] = '\0';
    }
}

void gpufl__dumps_arm(void)
{
    atomic_store_explicit(&active, D.triggers, memory_order_release);
    D.signal = gpufl__signal_parse(D.info->config->o.dump_signal);
    if (!D.window || D.signal <= 0)
        return;
    struct sigaction sa, prev;
    if (sigaction(D.signal, NULL, &prev) != 0)
        return;
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL) {
        gpufl__log(GFL_LOG_WARN,
                   "the program handles signal %d itself: it does not dump the flight window (choose another "
                   "dump_signal)",
                   D.signal);
        return;
    }
    if (prev.sa_flags & SA_SIGINFO) {
        gpufl__log(GFL_LOG_WARN, "the program handles signal %d itself: it does not dump the flight window", D.signal);
        return;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_dump_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(D.signal, &sa, &D.previous) != 0)
        return;
    D.handler_installed = true;
    write_note();
}

void gpufl__dumps_disarm(void)
{
    atomic_store_explicit(&active, NULL, memory_order_release);
    if (D.handler_installed) {
        struct sigaction now;
        /* put back what was there, unless the program has taken the signal since */
        if (sigaction(D.signal, NULL, &now) == 0 && now.sa_handler == on_dump_signal)
            (void)sigaction(D.signal, &D.previous, NULL);
        D.handler_installed = false;
    }
    if (D.note_path[0])
        (void)unlink(D.note_path);
    D.note_path[0] = '\0';
}

void gpufl__dumps_close(void)
{
    pthread_mutex_lock(&D.lock);
    D.stopping = true;
    pthread_cond_broadcast(&D.changed);
    pthread_mutex_unlock(&D.lock);
    if (D.thread_running)
        pthread_join(D.thread, NULL);
    D.thread_running = false;
    while (D.head) { /* no thread: write what is left here */
        job *j = D.head;
        D.head = j->next;
        write_job(j);
    }
    D.tail = NULL;
    gpufl__triggers_free(D.triggers);
    D.triggers = NULL;
    D.window = NULL;
    answer_dump_call(D.next_token, GPUFL_ESTATE, "the session ended"); /* a gpufl_dump() still waiting */
}

/* ---- requests ------------------------------------------------------------ */

void gpufl__dumps_plugin_trigger(const char *kind, const char *detail)
{
    /* the failed allocation is recorded; whether it is an out-of-memory is
     * the framework's to say (its allocator retries after emptying its cache) */
    if (!strcmp(kind, "oom") && atomic_load_explicit(&framework_oom, memory_order_relaxed))
        return;
    gpufl__triggers *t = atomic_load_explicit(&active, memory_order_acquire);
    if (t)
        (void)gpufl__triggers_request(t, kind, detail, 0);
}

void gpufl__dumps_framework_oom(bool on) { atomic_store_explicit(&framework_oom, on, memory_order_relaxed); }

int gpufl__dumps_request(const char *api, const char *kind, const char *detail)
{
    gpufl__triggers *t = atomic_load_explicit(&active, memory_order_acquire);
    if (!t) {
        gpufl__set_error("%s: no session; call gpufl_init first", api);
        return GPUFL_ESTATE;
    }
    if (!D.window) {
        gpufl__set_error("%s: the session keeps no flight window (set flight_window_s)", api);
        return GPUFL_ESTATE;
    }
    pthread_mutex_lock(&api_lock);
    pthread_mutex_lock(&D.lock);
    uint64_t token = ++D.next_token;
    pthread_mutex_unlock(&D.lock);
    int rc;
    if (gpufl__triggers_request(t, kind, detail ? detail : "", token) != 0) {
        gpufl__set_error("%s: too many triggers at once; try again", api);
        pthread_mutex_unlock(&api_lock);
        return GPUFL_ESTATE;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += API_WAIT_S;
    pthread_mutex_lock(&D.lock);
    int wait_rc = 0;
    while (D.answered < token && wait_rc != ETIMEDOUT)
        wait_rc = pthread_cond_timedwait(&D.changed, &D.lock, &until);
    if (D.answered >= token) {
        rc = D.answer_rc;
        if (rc != 0)
            gpufl__set_error("%s: %s", api, D.answer);
    } else {
        rc = GPUFL_EIO;
        gpufl__set_error("%s: no dump after %d s", api, API_WAIT_S);
    }
    pthread_mutex_unlock(&D.lock);
    pthread_mutex_unlock(&api_lock);
    return rc;
}
