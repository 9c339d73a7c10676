/*
 * The signals gpufl's own threads block: every one the program may send or
 * receive (SIGINT, SIGTERM, SIGCHLD, SIGPROF, its real-time signals), so
 * that its handlers for them run on its own threads. The faults a thread
 * raises on itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL) stay open: Linux kills
 * a process at once, running no handler, when a thread faults with its
 * fault signal blocked, so a crash inside gpufl or inside a library it
 * calls (CUPTI's PC sampling, on its worker) would leave no crash record,
 * no backtrace from the program's handler and no core-dump hint of where.
 * Header-only: the CUPTI plugin, a library of its own, uses it too.
 */
#ifndef GPUFL_CORE_THREAD_SIGNALS_H
#define GPUFL_CORE_THREAD_SIGNALS_H

#include <pthread.h>
#include <signal.h>

/* Sets the calling thread's mask to block the program's signals (above);
 * the previous mask goes to *old when old is not NULL. */
static inline void gpufl__block_program_signals(sigset_t *old)
{
    sigset_t s;
    sigfillset(&s);
    sigdelset(&s, SIGSEGV);
    sigdelset(&s, SIGBUS);
    sigdelset(&s, SIGFPE);
    sigdelset(&s, SIGILL);
    pthread_sigmask(SIG_SETMASK, &s, old);
}

#endif /* GPUFL_CORE_THREAD_SIGNALS_H */
