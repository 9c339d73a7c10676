/*
 * Catching fatal signals (see crash.h for the whole path).
 *
 * The handler runs on whatever thread the signal hit, possibly with
 * malloc's, the loader's or one of the program's locks held, possibly on a
 * stack that just overflowed. So it only calls async-signal-safe functions
 * (sigaction, pthread_sigmask, raise, nanosleep, clock_gettime, gettid)
 * and libunwind's unw_backtrace, which libunwind documents as safe in a
 * signal handler (it was loaded at install time, never here). Everything
 * that allocates, formats or takes a lock (naming modules, writing files,
 * session.json) is the collector's job; this thread waits for it, at most
 * GFL_CRASH_WAIT_MS.
 *
 * What the program keeps:
 * - Its own handler, installed before gpufl_init, runs after ours, called
 *   as the kernel would have called it (its mask, SA_RESETHAND, SA_NODEFER,
 *   siginfo and context); when it returns, so do we, so a handler that
 *   recovers still recovers.
 * - A signal it ignores (SIG_IGN) stays ignored when sent (kill, raise):
 *   we return at once and record nothing. A fault is different: the kernel
 *   kills a process whose faulting signal is ignored, so that one is
 *   recorded and then dies as it would have.
 * - The default action: SIG_DFL is put back and the signal let through, so
 *   the process dies by the same signal with the same core dump. A fault
 *   is let through by returning (the instruction runs again and faults
 *   again, now to the default action, with the kernel's own siginfo); a
 *   sent signal is raised again.
 * - A handler installed after gpufl_init replaces ours: gpufl then records
 *   nothing, as the program asked.
 *
 * One crash is recorded per session, the first: a second thread crashing
 * meanwhile waits for that record to be written, then takes its own
 * signal's path. gpufl's own threads block the program's signals but
 * not the faults (core/thread_signals.h), so a crash on one of them, or in
 * CUPTI called from one, is recorded like any other; only a crash on the
 * collector thread itself, which would have to wait for itself, is not.
 */
#include "collect/crash.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/recording.h"
#include "ring/producer.h"

#define ALT_STACK_BYTES (64u << 10)
/* Frames the unwinder may find inside the handler before the interrupted
 * one (this file's, libunwind's, the kernel's signal trampoline). */
#define HANDLER_FRAMES 16

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

/* The program's actions, saved at install (before ours is installed, so
 * the handler never reads a half-written one) and kept after uninstall: a
 * program handler that saved ours may still call it. Lifecycle lock. */
static struct sigaction prev_action[NFATAL];
static bool installed[NFATAL];

/* IDLE -> RECORDING (a handler fills the record) -> PENDING (published)
 * -> HEAD (crash and scopes written) -> DONE (stack written). */
enum { CRASH_IDLE = 0, CRASH_RECORDING, CRASH_PENDING, CRASH_HEAD, CRASH_DONE };
static _Atomic int state;
static gpufl__crash_record record;

static __thread int is_writer __attribute__((tls_model("initial-exec")));
static __thread int has_alt_stack __attribute__((tls_model("initial-exec")));

typedef int (*unw_backtrace_fn)(void **buffer, int size);
static unw_backtrace_fn unw_backtrace_p;
static pthread_once_t unwind_once = PTHREAD_ONCE_INIT;

/* ---- the record (handler side) ------------------------------------------ */

static int index_of(int sig)
{
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_signals[i] == sig)
            return (int)i;
    return -1;
}

static bool is_handler(const struct sigaction *a)
{
    if (a->sa_flags & SA_SIGINFO)
        return a->sa_sigaction != NULL;
    return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

static uint8_t action_of(const struct sigaction *a)
{
    if (is_handler(a))
        return GFL_CRASH_HANDLER;
    return a->sa_handler == SIG_IGN ? GFL_CRASH_IGNORED : GFL_CRASH_DEFAULT;
}

/* Where the thread was when the signal came: the first frame of the stack. */
static uintptr_t interrupted_pc(const void *context)
{
    const ucontext_t *uc = context;
    if (!uc)
        return 0;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    return 0;
#endif
}

/* The thread's stack from the interrupted instruction outwards: the unwinder
 * starts in this handler and crosses the signal frame, so the frames before
 * the interrupted pc are dropped. When the unwinder did not get that far,
 * the pc alone is kept. */
static void capture_stack(const void *context)
{
    uintptr_t pc = interrupted_pc(context);
    if (!unw_backtrace_p) {
        record.flags |= GFL_F_CRASH_NO_UNWIND;
        if (pc) {
            record.frames[0] = pc;
            record.info.frames = 1;
        }
        return;
    }
    void *raw[GFL_CRASH_MAX_FRAMES + HANDLER_FRAMES];
    int n = unw_backtrace_p(raw, (int)(sizeof raw / sizeof raw[0]));
    int first = -1;
    for (int k = 0; k < n && k < HANDLER_FRAMES && first < 0; k++)
        if ((uintptr_t)raw[k] == pc)
            first = k;
    if (first < 0) {
        record.frames[0] = pc;
        record.info.frames = pc != 0;
        record.info.stack_truncated = n > 0;
        return;
    }
    int kept = n - first < GFL_CRASH_MAX_FRAMES ? n - first : GFL_CRASH_MAX_FRAMES;
    for (int k = 0; k < kept; k++)
        record.frames[k] = (uintptr_t)raw[first + k];
    record.info.frames = (uint16_t)kept;
    record.info.stack_truncated = n - first > kept || n == (int)(sizeof raw / sizeof raw[0]);
}

/*
 * Every thread's open scopes, read without a lock from the producers
 * (ring/producer.h). The owners keep running meanwhile and write their
 * stacks with plain stores, so each value is read once, atomically (the
 * fields are aligned words: no torn values), and a frame is kept only if
 * its id reads the same before and after its other fields and it is still
 * below the thread's depth afterwards: a scope that ended or replaced
 * another while we read is left out rather than reported wrong. The
 * crashed thread's own stack is exact: it is stopped here.
 */
#define PEEK(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static void snapshot_scopes(void)
{
    uint32_t gen = gpufl__session_generation(), n = 0, lost = 0;
    for (gpufl__producer *p = gpufl__producer_first(); p; p = p->next) {
        /* acquire: pairs with the release of attach/adoption, so an owned
         * producer's fields are its owner's */
        if (atomic_load_explicit(&p->state, memory_order_acquire) != GFL_PRODUCER_OWNED || PEEK(p->scope_gen) != gen)
            continue;
        uint32_t depth = PEEK(p->depth), tid = gpufl__producer_tid(p), from = n;
        if (depth > GFL_SCOPE_MAX_DEPTH)
            depth = GFL_SCOPE_MAX_DEPTH;
        for (uint32_t d = 0; d < depth; d++) {
            if (n == GFL_CRASH_MAX_SCOPES) {
                lost += depth - d;
                break;
            }
            gpufl__crash_scope *s = &record.scopes[n];
            s->id = PEEK(p->stack[d].id);
            s->begin_ts = PEEK(p->stack[d].begin_ts);
            s->name = PEEK(p->stack[d].name);
            s->parent = d ? PEEK(p->stack[d - 1].id) : 0;
            s->tid = tid;
            s->depth = (uint16_t)d;
            if (s->id && PEEK(p->stack[d].id) == s->id)
                n++;
        }
        /* scopes that ended while we read are not open any more */
        uint32_t after = PEEK(p->depth);
        uint32_t keep = from;
        for (uint32_t k = from; k < n; k++)
            if (record.scopes[k].depth < after)
                record.scopes[keep++] = record.scopes[k];
        n = keep;
    }
    record.info.open_scopes = n;
    record.info.scopes_lost = lost;
}

static void fill_record(int sig, const siginfo_t *si, const void *context, uint8_t action)
{
    /* a sent signal (kill, raise, abort) has a sender and no fault address */
    bool sent = si->si_code <= 0;
    record.ts = gpufl__now_ns();
    record.tid = (uint32_t)syscall(SYS_gettid);
    record.flags = 0;
    memset(&record.info, 0, sizeof record.info);
    record.info.signal = sig;
    record.info.code = si->si_code;
    record.info.address = sent ? 0 : (uint64_t)(uintptr_t)si->si_addr;
    record.info.sender_pid = sent ? (uint32_t)si->si_pid : 0;
    record.info.action = action;
    capture_stack(context);
    snapshot_scopes();
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Records the crash (the first thread to get here) and waits until it is
 * written, or GFL_CRASH_WAIT_MS. A thread that crashes while another's
 * crash is being written waits too: the process must not die before. */
static void record_and_wait(int sig, const siginfo_t *si, const void *context, uint8_t action)
{
    int expected = CRASH_IDLE;
    /* seq_cst: exactly one thread fills the record */
    if (atomic_compare_exchange_strong(&state, &expected, CRASH_RECORDING)) {
        fill_record(sig, si, context, action);
        /* release: the collector that sees PENDING sees the whole record */
        atomic_store_explicit(&state, CRASH_PENDING, memory_order_release);
    }
    uint64_t deadline = mono_ms() + GFL_CRASH_WAIT_MS;
    struct timespec nap = {0, 1000000};
    /* acquire: nothing to read after it, but it orders our exit after the
     * collector's writes in the eyes of a debugger reading the core */
    while (atomic_load_explicit(&state, memory_order_acquire) != CRASH_DONE && mono_ms() < deadline)
        nanosleep(&nap, NULL);
}

/* ---- after the record: the program's action ------------------------------ */

static void set_default(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
}

/* The program's handler, called as the kernel would have called it. */
static void call_program(int sig, siginfo_t *si, void *context, const struct sigaction *prev)
{
    sigset_t old, one;
    pthread_sigmask(SIG_BLOCK, &prev->sa_mask, &old);
    if (prev->sa_flags & SA_NODEFER) {
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    }
    if (prev->sa_flags & SA_RESETHAND)
        set_default(sig);
    if (prev->sa_flags & SA_SIGINFO)
        prev->sa_sigaction(sig, si, context);
    else
        prev->sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void chain(int sig, siginfo_t *si, void *context, const struct sigaction *prev)
{
    if (is_handler(prev)) {
        call_program(sig, si, context, prev);
        return;
    }
    set_default(sig);
    if (si->si_code > 0)
        return; /* a fault: it happens again, to the default action */
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
}

static void on_fatal(int sig, siginfo_t *si, void *context)
{
    int saved_errno = errno;
    int i = index_of(sig);
    if (i < 0 || !si)
        return;
    const struct sigaction *prev = &prev_action[i];
    if (!is_handler(prev) && prev->sa_handler == SIG_IGN && si->si_code <= 0) {
        errno = saved_errno;
        return; /* sent, and the program ignores it: nothing happened */
    }
    if (!is_writer && gpufl__is_recording())
        record_and_wait(sig, si, context, action_of(prev));
    chain(sig, si, context, prev);
    errno = saved_errno;
}

/* ---- the collector's side ------------------------------------------------ */

void gpufl__crash_mark_writer_thread(void) { is_writer = 1; }

const gpufl__crash_record *gpufl__crash_pending(void)
{
    /* acquire: pairs with the handler's release of PENDING */
    return atomic_load_explicit(&state, memory_order_acquire) == CRASH_PENDING ? &record : NULL;
}

/* release: the waiting thread lets the process die only after our writes */
void gpufl__crash_written_head(void) { atomic_store_explicit(&state, CRASH_HEAD, memory_order_release); }
void gpufl__crash_written_done(void) { atomic_store_explicit(&state, CRASH_DONE, memory_order_release); }

/* ---- installing ---------------------------------------------------------- */

/* libunwind is loaded, not linked (as for enable_stack_trace): a machine
 * without it records crashes without their stack. Loaded here, because
 * dlopen in a signal handler is not safe. */
static void load_unwind(void)
{
    void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
    unw_backtrace_p = lib ? (unw_backtrace_fn)dlsym(lib, "unw_backtrace") : NULL;
}

/* A handler for a stack overflow needs a stack of its own. Threads get
 * none by default; the one that starts the session (usually the main
 * thread) gets ours unless it has one. The memory stays for the life of
 * the thread's process (a thread may crash after the session ended and a
 * new one began). Other threads overflowing their stack die by SIGSEGV
 * unrecorded, as the kernel cannot run the handler there. */
static void ensure_alt_stack(void)
{
    stack_t cur;
    if (has_alt_stack || sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
        return;
    void *mem = mmap(NULL, ALT_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return;
    stack_t ss = {.ss_sp = mem, .ss_size = ALT_STACK_BYTES, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(mem, ALT_STACK_BYTES);
        return;
    }
    has_alt_stack = 1;
}

void gpufl__crash_install(void)
{
    pthread_once(&unwind_once, load_unwind);
    ensure_alt_stack();
    /* a crash the program survived belonged to the last session */
    int done = CRASH_DONE;
    atomic_compare_exchange_strong(&state, &done, CRASH_IDLE);
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction cur;
        if (sigaction(fatal_signals[i], NULL, &cur) != 0)
            continue;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fatal) {
            installed[i] = true; /* still ours: the saved action is still the program's */
            continue;
        }
        prev_action[i] = cur;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal;
        /* SA_ONSTACK: a stack overflow is caught where an alternate stack
         * exists; SA_RESTART as the program asked, for a handler that
         * returns */
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | (cur.sa_flags & SA_RESTART);
        sigemptyset(&sa.sa_mask);
        installed[i] = sigaction(fatal_signals[i], &sa, NULL) == 0;
    }
}

void gpufl__crash_uninstall(void)
{
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction cur;
        if (!installed[i] || sigaction(fatal_signals[i], NULL, &cur) != 0)
            continue;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fatal)
            sigaction(fatal_signals[i], &prev_action[i], NULL);
        installed[i] = false;
    }
}
