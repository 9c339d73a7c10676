/*
 * gpufl's own threads block the program's signals but not the faults.
 *
 * Why: a thread of gpufl's calls into libraries that can crash (CUPTI's PC
 * sampling and SASS metric reads run on the CUPTI worker). Linux kills a
 * process whose thread faults with the fault's signal blocked without
 * running any handler, so when those threads blocked every signal such a
 * crash left a session that looked as if it had simply stopped: no crash
 * record, no stack, no program handler. Seen on an H100 on 2026-11-27:
 * 3 of 12 ResNet-50 sessions under --engine deep died by SIGSEGV with none
 * of gpufl's crash record.
 *
 * Checked: a thread started by gpufl__thread_start blocks SIGINT, SIGTERM,
 * SIGCHLD and SIGUSR1 and leaves SIGSEGV, SIGBUS, SIGFPE and SIGILL open;
 * and a child whose gpufl thread dies by SIGSEGV (run again as
 * "--fault-child DIR") dies by that signal and leaves a session marked
 * crashed, with that thread's id in the record.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/os.h"
#include "gpufl/gpufl.h"
#include "test_util.h"

static sigset_t seen_mask;

static void *read_mask(void *arg)
{
    (void)arg;
    pthread_sigmask(SIG_BLOCK, NULL, &seen_mask);
    return NULL;
}

static void a_gpufl_thread_blocks_the_programs_signals_but_not_faults(void **state)
{
    (void)state;
    pthread_t t;
    assert_int_equal(gpufl__thread_start(&t, read_mask, NULL, "gpufl-test"), 0);
    pthread_join(t, NULL);
    const int blocked[] = {SIGINT, SIGTERM, SIGCHLD, SIGUSR1, SIGPROF};
    for (size_t i = 0; i < sizeof blocked / sizeof blocked[0]; i++)
        if (!sigismember(&seen_mask, blocked[i]))
            fail_msg("signal %d reaches gpufl's thread", blocked[i]);
    const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        if (sigismember(&seen_mask, faults[i]))
            fail_msg("fault %d is blocked on gpufl's thread", faults[i]);
}

/* ---- the child whose gpufl thread crashes --------------------------------- */

#define RAW __attribute__((noinline, no_sanitize("address", "undefined")))
static volatile uintptr_t zero;

RAW static void *fault(void *arg)
{
    (void)arg;
    *(volatile int *)zero = 1;
    return NULL;
}

static int child_main(const char *dir)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(30);
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "thread-fault";
    o.log_path = dir;
    o.system_sample_rate_ms = 0;
    if (!gpufl_init(&o))
        return 2;
    gpufl_scope_end(gpufl_scope_begin("before"));
    pthread_t t;
    if (gpufl__thread_start(&t, fault, NULL, "gpufl-test") != 0)
        return 3;
    pthread_join(t, NULL);
    return 4; /* not reached: the fault ended the process */
}

static char self_path[4096];

static void a_fault_on_a_gpufl_thread_is_recorded(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("thread-fault");
    const char *argv[] = {self_path, "--fault-child", dir, NULL};
    /* a sanitizer build leaves the fault to gpufl's handler */
    tu_setenv("ASAN_OPTIONS", "handle_segv=0:detect_leaks=0");
    char *err = NULL;
    int status = tu_run(argv, NULL, &err);
    if (status != 128 + SIGSEGV)
        fail_msg("the child ended with status %d, not by SIGSEGV\n%s", status, err ? err : "");
    free(err);
    char *session_dir = tu_session_dir(dir);
    assert_non_null(session_dir);
    json_t *crash;
    json_t *session = tu_crashed_session(session_dir, SIGSEGV, &crash);
    /* the gpufl thread's, not the main thread's */
    assert_int_not_equal(tu_int(crash, "tid"), tu_int(session, "pid"));
    json_decref(session);
    free(session_dir);
    tu_rm_rf(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--fault-child"))
        return child_main(argv[2]);
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    self_path[n > 0 ? n : 0] = '\0';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_gpufl_thread_blocks_the_programs_signals_but_not_faults),
        cmocka_unit_test(a_fault_on_a_gpufl_thread_is_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
