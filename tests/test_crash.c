/*
 * The crash case: a program that dies by a fatal signal inside scopes
 * leaves a session that says so.
 *
 * Why: a flight recorder exists for the run that crashed. Each case runs
 * this executable again as a child ("--crash-child SIGNAL HANDLER DIR"),
 * which starts a session (log_format both), records 100 scopes, opens two
 * nested scopes on a second thread and two on its main thread, then dies:
 * SIGSEGV by a write through a null pointer, SIGBUS by reading a mapped
 * page past the end of its file, SIGFPE by an integer division by zero,
 * SIGILL by __builtin_trap(), SIGABRT by abort(). With HANDLER "own", the
 * child installed a handler of its own before gpufl_init, which writes a
 * marker file, puts back the default action and returns. The session is
 * under DIR/logs; the marker and the file SIGBUS maps are beside it.
 *
 * Checked: the child died by that signal (so the program's action was
 * kept); the program's handler ran when it had one; session.json says
 * "crashed" with the signal; system.log and trace.gflt both hold a crash
 * with the signal and the main thread's id, its stack (frames in this
 * executable, when libunwind can be loaded) and the four open scopes of
 * both threads; and the 100 scopes recorded before the crash are on disk
 * in both formats.
 *
 * A child is exec'd rather than forked so that, in a sanitizer build, it
 * starts with ASAN_OPTIONS that leave the fatal signals to the program
 * (ASan otherwise installs its own SIGSEGV/SIGBUS/SIGFPE handler, which
 * gpufl would chain to and which exits with status 1 instead of dying by
 * the signal); the crashing functions are not instrumented, so the
 * sanitizers do not stop them before the hardware does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "test_util.h"

#define BEFORE_SCOPES 100

/* ---- the child -------------------------------------------------------------- */

static const char *marker_path;
static pthread_barrier_t ready;

static void own_handler(int sig)
{
    int fd = open(marker_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        char c = (char)('0' + sig % 10);
        if (write(fd, &c, 1) != 1)
            _exit(3);
        close(fd);
    }
    signal(sig, SIG_DFL); /* the fault happens again, or abort() raises again */
}

static void *worker(void *arg)
{
    (void)arg;
    gpufl_scope outer = gpufl_scope_begin("worker.outer");
    gpufl_scope inner = gpufl_scope_begin("worker.inner");
    pthread_barrier_wait(&ready);
    for (;;)
        pause();
    gpufl_scope_end(inner);
    gpufl_scope_end(outer);
    return NULL;
}

/* The crashes. Not instrumented: a sanitizer would report the null write
 * or the division itself instead of letting the hardware fault. */
#define RAW __attribute__((noinline, no_sanitize("address", "undefined")))
static volatile uintptr_t zero;

RAW static void die_segv(void) { *(volatile int *)zero = 1; }

RAW static void die_bus(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/empty", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    volatile char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        _exit(4);
    (void)p[0]; /* past the end of the (empty) file */
}

RAW static void die_fpe(void)
{
    /* both operands unknown to the compiler, which turns 1 / d into compares */
    volatile int n = 7, d = (int)zero;
    volatile int q = n / d;
    (void)q;
}

RAW static void die_ill(void) { __builtin_trap(); }

static int child_main(const char *signame, const char *handler, const char *dir)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(30);
    int sig = !strcmp(signame, "SEGV")  ? SIGSEGV
              : !strcmp(signame, "BUS") ? SIGBUS
              : !strcmp(signame, "FPE") ? SIGFPE
              : !strcmp(signame, "ILL") ? SIGILL
                                        : SIGABRT;
    static char marker[4200];
    snprintf(marker, sizeof marker, "%s/marker", dir);
    marker_path = marker;
    if (!strcmp(handler, "own"))
        signal(sig, own_handler);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "crash";
    char logs[4200];
    snprintf(logs, sizeof logs, "%s/logs", dir);
    o.log_path = logs;
    o.log_format = GPUFL_LOG_BOTH;
    o.system_sample_rate_ms = 0;
    if (!gpufl_init(&o))
        return 2;
    for (int i = 0; i < BEFORE_SCOPES; i++)
        gpufl_scope_end(gpufl_scope_begin("before"));
    pthread_barrier_init(&ready, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_barrier_wait(&ready);
    gpufl_scope_begin("main.outer");
    gpufl_scope_begin("main.inner");
    switch (sig) {
    case SIGSEGV: die_segv(); break;
    case SIGBUS: die_bus(dir); break;
    case SIGFPE: die_fpe(); break;
    case SIGILL: die_ill(); break;
    default: abort();
    }
    return 5; /* not reached: the signal ended the process */
}

/* ---- the checks -------------------------------------------------------------- */

static bool have_libunwind(void)
{
    void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
    return lib && dlsym(lib, "unw_backtrace");
}

static char self_path[4096];

/* The crash as a reader sees it, in either format. */
static void check_trace(const char *path, const char *signame, int sig, pid_t child)
{
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        fail_msg("%s", err);
    const gpufl_trace_crash *c = gpufl_trace_get_crash(t);
    if (!c)
        fail_msg("%s: no crash", path);
    assert_int_equal(c->signal, sig);
    assert_int_equal(c->tid, (uint32_t)child);
    char expected[16];
    snprintf(expected, sizeof expected, "SIG%s", signame);
    assert_string_equal(gpufl_trace_string(t, c->signal_name), expected);
    if (have_libunwind()) {
        assert_true(c->nframes > 1);
        bool ours = false;
        for (uint32_t i = 0; i < c->nframes; i++)
            ours |= c->frames[i].present && !strcmp(gpufl_trace_string(t, c->frames[i].module), self_path);
        if (!ours)
            fail_msg("%s: no frame of the stack is in %s", path, self_path);
    }
    assert_int_equal(c->nscopes, 4);
    int main_scopes = 0, worker_scopes = 0;
    for (uint32_t i = 0; i < c->nscopes; i++) {
        const char *name = gpufl_trace_string(t, c->scopes[i].name);
        if (c->scopes[i].tid == (uint32_t)child) {
            assert_string_equal(name, c->scopes[i].depth ? "main.inner" : "main.outer");
            main_scopes++;
        } else {
            assert_string_equal(name, c->scopes[i].depth ? "worker.inner" : "worker.outer");
            worker_scopes++;
        }
        assert_true(c->scopes[i].begin_ns > 0 && c->scopes[i].begin_ns <= c->ts_ns);
    }
    assert_int_equal(main_scopes, 2);
    assert_int_equal(worker_scopes, 2);
    /* what came before the crash is there */
    const gpufl_trace_scopes *s = gpufl_trace_get_scopes(t);
    size_t before = 0;
    for (size_t i = 0; i < s->n; i++)
        before += !strcmp(gpufl_trace_string(t, s->name[i]), "before") && s->end_ns[i];
    assert_int_equal(before, BEFORE_SCOPES);
    gpufl_trace_close(t);
}

static void run_case(const char *signame, int sig, bool own)
{
    char *log_path = tu_mkdtemp("crash");
    const char *argv[] = {self_path, "--crash-child", signame, own ? "own" : "none", log_path, NULL};
    /* a sanitizer build leaves the fatal signals to the program (see top) */
    tu_setenv("ASAN_OPTIONS", "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:"
                              "handle_abort=0:detect_leaks=0");
    char *err = NULL;
    int status = tu_run(argv, NULL, &err);
    pid_t child = 0;
    if (status != 128 + sig)
        fail_msg("%s: the child ended with status %d, not by its signal\n%s", signame, status, err ? err : "");
    free(err);
    char marker[4200];
    snprintf(marker, sizeof marker, "%s/marker", log_path);
    assert_int_equal(access(marker, F_OK) == 0, own);

    char logs[4200];
    snprintf(logs, sizeof logs, "%s/logs", log_path);
    char *dir = tu_session_dir(logs);
    assert_non_null(dir);
    json_t *crash;
    json_t *session = tu_crashed_session(dir, sig, &crash);
    assert_string_equal(tu_str(crash, "action"), own ? "handler" : "default");
    child = (pid_t)tu_int(session, "pid");
    assert_int_equal(tu_int(crash, "tid"), child);
    json_decref(session);

    /* the NDJSON lines */
    tu_ndjson sys;
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &sys), 0);
    assert_int_equal(tu_count_type(&sys, "crash"), 1);
    json_t *line = tu_nth_type(&sys, "crash", 0);
    assert_int_equal(tu_int(line, "signal"), sig);
    assert_int_equal(tu_int(line, "tid"), child);
    assert_int_equal(tu_int(line, "open_scopes"), 4);
    assert_int_equal(tu_count_type(&sys, "crash_scope"), 4);
    if (have_libunwind())
        assert_true(tu_int(line, "stack_frames") > 1 && tu_count_type(&sys, "crash_stack") >= 1);
    tu_ndjson_free(&sys);

    char path[4200];
    snprintf(path, sizeof path, "%s/trace.gflt", dir);
    check_trace(path, signame, sig, child);
    /* the NDJSON logs, read through the reader: the directory without its
     * trace.gflt */
    unlink(path);
    check_trace(dir, signame, sig, child);
    free(dir);
    tu_rm_rf(log_path);
    free(log_path);
}

static void test_segv(void **state)
{
    (void)state;
    run_case("SEGV", SIGSEGV, false);
}
static void test_segv_own_handler(void **state)
{
    (void)state;
    run_case("SEGV", SIGSEGV, true);
}
static void test_bus(void **state)
{
    (void)state;
    run_case("BUS", SIGBUS, false);
}
static void test_bus_own_handler(void **state)
{
    (void)state;
    run_case("BUS", SIGBUS, true);
}
static void test_fpe(void **state)
{
    (void)state;
    run_case("FPE", SIGFPE, false);
}
static void test_fpe_own_handler(void **state)
{
    (void)state;
    run_case("FPE", SIGFPE, true);
}
static void test_ill(void **state)
{
    (void)state;
    run_case("ILL", SIGILL, false);
}
static void test_ill_own_handler(void **state)
{
    (void)state;
    run_case("ILL", SIGILL, true);
}
static void test_abrt(void **state)
{
    (void)state;
    run_case("ABRT", SIGABRT, false);
}
static void test_abrt_own_handler(void **state)
{
    (void)state;
    run_case("ABRT", SIGABRT, true);
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--crash-child"))
        return child_main(argv[2], argv[3], argv[4]);
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    self_path[n > 0 ? n : 0] = '\0';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segv), cmocka_unit_test(test_segv_own_handler),
        cmocka_unit_test(test_bus),  cmocka_unit_test(test_bus_own_handler),
        cmocka_unit_test(test_fpe),  cmocka_unit_test(test_fpe_own_handler),
        cmocka_unit_test(test_ill),  cmocka_unit_test(test_ill_own_handler),
        cmocka_unit_test(test_abrt), cmocka_unit_test(test_abrt_own_handler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
