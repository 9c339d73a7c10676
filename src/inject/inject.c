/*
 * libgpufl_inject.so: records an unmodified CUDA program.
 *
 * When CUDA_INJECTION64_PATH names this library (`gpufl run` sets it), the
 * CUDA driver loads it during the process's first cuInit and calls
 * InitializeInjection() on that thread, once. We start a session with
 * gpufl_init(NULL): every option then comes from the GPUFL_* variables and
 * GPUFL_CONFIG_FILE, as for a program that calls gpufl_init itself. The
 * engine (GPUFL_PROFILING_ENGINE, `trace` under `gpufl run`) decides whether
 * the core loads the CUPTI plugin; this library has no CUDA dependency of
 * its own and needs no CUDA headers.
 *
 * The session ends at process exit: exit() (from any thread) and a return
 * from main run the exit handler the core registers when its first session
 * starts (here, inside cuInit: so it runs before any exit handler registered
 * earlier, while CUPTI can still be flushed). SIGTERM and SIGINT at their
 * default disposition would kill the process with nothing flushed, so here
 * (and only here: a library linked into a program never touches its
 * termination signals) they get a handler that wakes a watcher thread,
 * which ends the session and then lets the signal kill the process as it
 * would have (see install_signal_flush). Fatal signals (SIGSEGV, SIGABRT,
 * ...) are not handled here: gpufl_init installs the core's crash handler
 * (collect/crash.h) for an injected session as for any other, once.
 *
 * InitializeInjectionNvtx2() forwards NVTX's injection call to CUPTI, so
 * NVTX_INJECTION64_PATH can name this library too.
 *
 * This library never writes to stdout, never aborts and never exits.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/cupti/cupti_paths.h"
#include "gpufl/gpufl.h"

#define INJECT_API __attribute__((visibility("default")))

/* How long a caught SIGTERM/SIGINT waits for the session to be written
 * before the signal is let through anyway. Ending a session takes
 * milliseconds; this only bounds a flush stuck behind, say, a hung file
 * system, so that the signal always ends the process. */
#define FLUSH_DEADLINE_S 10

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t initialised_in; /* the process InitializeInjection ran in; init_lock */

/* ---- ending the session on SIGTERM and SIGINT ---------------------------
 *
 * The handler may run on any thread, at any point, with any lock held, so it
 * does only async-signal-safe things: it posts a semaphore. (A semaphore
 * rather than a pipe: it has no file descriptor for the program to close,
 * or to reuse for a file of its own, in a close-everything loop.) The
 * watcher thread, blocked in sem_wait(), does the rest in an ordinary thread
 * context: gpufl_shutdown(), then SIG_DFL and the signal again, so the
 * process ends as it would have without gpufl (same signal, same exit
 * status). Nothing waits on the watcher, so no exit path can deadlock on it:
 * exit() while it is flushing waits for the lifecycle lock, and the
 * watcher's re-raise then ends the process; a flush that never ends is cut
 * off at FLUSH_DEADLINE_S. A second signal while the first is being flushed
 * (an impatient Ctrl-C) skips the flush.
 */
static sem_t wake;                /* posted by the handler, waited on by the watcher */
static pid_t owner_pid;           /* the process the watcher runs in */
static _Atomic int caught_signal; /* the first signal caught, 0 = none */

static void die_by(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
}

static void on_signal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    int saved_errno = errno;
    int none = 0;
    /* In a fork of the program there is no watcher, and a second signal
     * means "now": both get the default action at once. The exchange is
     * seq_cst (the default) so that exactly one signal wins the flush. */
    if (getpid() != owner_pid || !atomic_compare_exchange_strong(&caught_signal, &none, sig)) {
        die_by(sig);
        errno = saved_errno;
        return;
    }
    sem_post(&wake);
    /* Sent by the program to itself (raise(), kill(getpid(), ...)): it
     * expects not to get past that call, so this thread waits here until
     * the watcher ends the process. A signal from outside parks no thread:
     * the one it interrupted may hold a lock (malloc's, the driver's) that
     * writing the session needs; it runs on for the moment of the flush. */
    if (info->si_pid == owner_pid && (info->si_code == SI_USER || info->si_code == SI_TKILL))
        for (;;)
            pause();
    errno = saved_errno;
}

static void *end_session(void *arg)
{
    (void)arg;
    gpufl_shutdown();
    return NULL;
}

static void *watch_signals(void *arg)
{
    (void)arg;
    while (sem_wait(&wake) != 0)
        ; /* EINTR only: the semaphore is valid for the life of the process */
    int sig = atomic_load(&caught_signal);
    /* The flush runs on its own thread so that this one can stop waiting at
     * the deadline; when it cannot start, flush here without a deadline. */
    pthread_t t;
    if (pthread_create(&t, NULL, end_session, NULL) == 0) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += FLUSH_DEADLINE_S;
        if (pthread_timedjoin_np(t, NULL, &deadline) != 0)
            fprintf(stderr,
                    "gpufl: warning: the session was not written within %d s of signal "
                    "%d; ending without it\n",
                    FLUSH_DEADLINE_S, sig);
    } else {
        gpufl_shutdown();
    }
    die_by(sig);
    return NULL; /* not reached: SIGINT and SIGTERM end the process by default */
}

/* Installs the flush for SIGTERM and SIGINT, each only while its disposition
 * is SIG_DFL: a program that handles or ignores a signal keeps doing so.
 * On failure (no thread) nothing is installed and a signal kills the
 * process unflushed, as it would without gpufl. */
static void install_signal_flush(void)
{
    if (sem_init(&wake, 0, 0) != 0)
        goto fail;
    owner_pid = getpid();
    /* The watcher blocks every signal, so it never takes one meant for the
     * program's own threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t watcher;
    int rc = pthread_create(&watcher, &attr, watch_signals, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        errno = rc;
        goto fail;
    }
    static const int signals[] = {SIGTERM, SIGINT};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction cur;
        if (sigaction(signals[i], NULL, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        /* restart the program's interrupted calls: it runs on for the few
         * milliseconds of the flush and should not see EINTR meanwhile */
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(signals[i], &sa, NULL);
    }
    return;
fail:
    fprintf(stderr,
            "gpufl: warning: cannot watch SIGTERM/SIGINT (%s); a signal will end the "
            "program without writing the end of its session\n",
            strerror(errno));
}

/* ---- entry points ------------------------------------------------------ */

/*
 * Called by the CUDA driver during cuInit. Returns 1: the session started,
 * or there is nothing to start (GPUFL_DISABLED, or another copy of gpufl in
 * the program records it). Returns 0 when gpufl_init failed (a bad GPUFL_*
 * variable or config file; the reason is on stderr); the driver and the
 * program carry on either way.
 */
INJECT_API int InitializeInjection(void)
{
    int ok = 1;
    pthread_mutex_lock(&init_lock);
    if (initialised_in != getpid()) {
        initialised_in = getpid();
        if (!gpufl_init(NULL)) {
            ok = 0;
        } else if (gpufl_is_recording()) {
            install_signal_flush();
        }
    }
    pthread_mutex_unlock(&init_lock);
    return ok;
}

/* NVTX's injection entry point, forwarded to CUPTI's: CUPTI then records
 * the program's NVTX ranges and markers for the trace engines. Returns what
 * CUPTI returns, or 0 (NVTX calls stay no-ops) when CUPTI cannot be loaded
 * or has no such entry. The library is the one GPUFL_CUPTI_LIBRARY names,
 * else found as the CUPTI plugin finds it (backend/cupti/cupti_paths.h),
 * so that the plugin, loading later, gets this same one by its soname. */
typedef const void *(*nvtx_get_export_table_fn)(uint32_t export_table_id);
typedef int (*nvtx_initialize_fn)(nvtx_get_export_table_fn get_export_table);

INJECT_API int InitializeInjectionNvtx2(nvtx_get_export_table_fn get_export_table)
{
    const char *forced = getenv("GPUFL_CUPTI_LIBRARY");
    static const char *const defaults[] = {GFL_CUPTI_SONAMES, GFL_CUPTI_TOOLKIT_PATHS};
    const char *const only[] = {forced};
    const char *const *names = forced && forced[0] ? only : defaults;
    size_t n = forced && forced[0] ? 1 : sizeof defaults / sizeof defaults[0];
    for (size_t i = 0; i < n; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            continue;
        /* never closed: CUPTI's hooks stay installed for the process's life */
        nvtx_initialize_fn init = (nvtx_initialize_fn)dlsym(lib, "InitializeInjectionNvtx2");
        return init ? init(get_export_table) : 0;
    }
    return 0;
}
