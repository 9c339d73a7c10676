/*
 * libgpufl_inject.so, driven the way the CUDA driver drives it: dlopen the
 * library CUDA_INJECTION64_PATH names and call its InitializeInjection().
 *
 * Why: the injection library records programs nobody changed, so every way
 * such a program ends (return from main, exit() from a worker thread,
 * SIGTERM or SIGINT at their default disposition) must leave a complete
 * session (session.json "ended", every log closed with session_end), and a
 * program that brings its own copy of gpufl must still be recorded once.
 * Each case runs in a fresh process (this test re-executed with --child
 * NAME) because the injection is once per process and leaves a session,
 * handlers and threads behind. The device plugin is the synthetic one, so
 * the kernels it scripts must all reach device.log.
 *
 * This test links the static libgpufl.a (through the test support library),
 * and the injection library brings libgpufl.so: every child holds two
 * copies of gpufl, as a statically linked program run under `gpufl run` does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpufl/gpufl.h"
#include "test_util.h"

#define N_KERNELS 200
#define N_COPIES 20
#define SCRIPT "kernels=200,copies=20,memsets=0,syncs=0,allocs=0,metrics=0,threads=2,pace=1"

/* ---- the children ------------------------------------------------------------ */

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "child: check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);                          \
            return __LINE__;                                                                                           \
        }                                                                                                              \
    } while (0)

typedef int (*inject_fn)(void);
static void *inject_lib;

/* What the driver does in cuInit. */
static int inject(void)
{
    inject_lib = dlopen(getenv("CUDA_INJECTION64_PATH"), RTLD_NOW | RTLD_LOCAL);
    if (!inject_lib) {
        fprintf(stderr, "child: %s\n", dlerror());
        return -1;
    }
    inject_fn init = (inject_fn)dlsym(inject_lib, "InitializeInjection");
    return init ? init() : -1;
}

/* A function of libgpufl.so, the copy the injection library uses. */
static void *so_symbol(const char *name) { return dlsym(inject_lib, name); }

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
}

/* The program returns from main; the second gpufl_init of either copy
 * starts nothing. */
static int child_return(void)
{
    CHECK(inject() == 1);
    bool (*so_recording)(void) = (bool (*)(void))so_symbol("gpufl_is_recording");
    const char *(*so_dir)(void) = (const char *(*)(void))so_symbol("gpufl_session_dir");
    bool (*so_init)(const gpufl_options *) = (bool (*)(const gpufl_options *))so_symbol("gpufl_init");
    CHECK(so_recording && so_dir && so_init);
    CHECK(so_recording());
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", so_dir());
    CHECK(dir[0]);
    /* the same copy: already recording, a no-op */
    CHECK(so_init(NULL));
    CHECK(!strcmp(so_dir(), dir));
    /* this program's own (static) copy: the process is claimed, a no-op */
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "own_copy";
    CHECK(gpufl_init(&o));
    CHECK(!gpufl_is_recording());
    CHECK(!strcmp(gpufl_session_dir(), ""));
    gpufl_scope s = gpufl_scope_begin("not recorded");
    gpufl_scope_end(s);
    return 0; /* the session ends at exit */
}

static void *exit_from_thread(void *arg)
{
    (void)arg;
    exit(0);
}

/* exit() on a worker while the main thread is still busy. */
static int child_thread_exit(void)
{
    CHECK(inject() == 1);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, exit_from_thread, NULL) == 0);
    for (;;)
        pause();
}

/* Waits to be killed by the parent (SIGTERM or SIGINT at SIG_DFL). */
static int child_wait_for_signal(void)
{
    CHECK(inject() == 1);
    struct sigaction cur;
    CHECK(sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL);
    touch(getenv("READY_FILE"));
    for (;;)
        pause();
}

static volatile sig_atomic_t got_term;
static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

/* A program with its own SIGTERM handler keeps it: it decides what SIGTERM
 * means (here: finish and return normally). */
static int child_own_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGTERM, &sa, NULL) == 0);
    CHECK(inject() == 1);
    struct sigaction cur;
    CHECK(sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == on_term);
    touch(getenv("READY_FILE"));
    /* polled: the signal may land on any thread without it blocked, the
     * device plugin's included, and leave this one in pause() */
    while (!got_term) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

/* The program's own copy starts first: the injection stands aside, and the
 * program's session is the one recorded (and reported). */
static int child_program_first(void)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "own_copy";
    CHECK(gpufl_init(&o));
    CHECK(gpufl_is_recording());
    CHECK(inject() == 1);
    bool (*so_recording)(void) = (bool (*)(void))so_symbol("gpufl_is_recording");
    CHECK(so_recording && !so_recording());
    struct sigaction cur;
    CHECK(sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL);
    gpufl_shutdown();
    return 0;
}

/* An injected process that execs itself keeps its pid; the new image must
 * still be free to record (the claim names the old image). */
static int child_exec_self(void)
{
    CHECK(inject() == 1);
    char *argv[] = {program_invocation_name, "--child", "return", NULL};
    execv("/proc/self/exe", argv);
    CHECK(!"execv failed");
    return 0;
}

/* GPUFL_DISABLED: nothing starts, the signals are left alone. */
static int child_disabled(void)
{
    CHECK(inject() == 1);
    bool (*so_recording)(void) = (bool (*)(void))so_symbol("gpufl_is_recording");
    CHECK(so_recording && !so_recording());
    struct sigaction cur;
    CHECK(sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL);
    CHECK(sigaction(SIGINT, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL);
    return 0;
}

/* A bad variable: InitializeInjection says so (0), the program runs on. */
static int child_bad_env(void)
{
    CHECK(inject() == 0);
    return 0;
}

typedef int (*nvtx_fn)(const void *(*)(uint32_t));
static const void *fake_export_table(uint32_t id) { return id == 1 ? (const void *)&fake_export_table : NULL; }

/* NVTX's entry point reaches CUPTI's (GPUFL_CUPTI_LIBRARY), or says 0. */
static int child_nvtx(void)
{
    void *lib = dlopen(getenv("CUDA_INJECTION64_PATH"), RTLD_NOW | RTLD_LOCAL);
    CHECK(lib);
    nvtx_fn nvtx = (nvtx_fn)dlsym(lib, "InitializeInjectionNvtx2");
    CHECK(nvtx);
    setenv("GPUFL_CUPTI_LIBRARY", GFL_FAKE_CUPTI_NVTX, 1);
    CHECK(nvtx(fake_export_table) == 42); /* the fake's answer when it got our table */
    setenv("GPUFL_CUPTI_LIBRARY", "/nonexistent/libcupti.so.13", 1);
    CHECK(nvtx(fake_export_table) == 0);
    setenv("GPUFL_CUPTI_LIBRARY", GFL_SYNTHETIC_PLUGIN, 1); /* a library without the entry */
    CHECK(nvtx(fake_export_table) == 0);
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(void);
} children[] = {
    {"return", child_return},
    {"thread_exit", child_thread_exit},
    {"wait_for_signal", child_wait_for_signal},
    {"own_handler", child_own_handler},
    {"program_first", child_program_first},
    {"exec_self", child_exec_self},
    {"disabled", child_disabled},
    {"bad_env", child_bad_env},
    {"nvtx", child_nvtx},
};

static int child_main(const char *name)
{
    for (size_t i = 0; i < sizeof children / sizeof children[0]; i++)
        if (!strcmp(children[i].name, name))
            return children[i].fn() ? 1 : 0;
    fprintf(stderr, "test_inject: no child case '%s'\n", name);
    return 2;
}

/* ---- the parent -------------------------------------------------------------- */

typedef struct run {
    char *root;                /* temporary directory of the case */
    char log_path[4200];       /* GPUFL_LOG_PATH */
    char report[4200];         /* GPUFL_RUN_REPORT */
    char ready[4200];          /* created by a child once injected */
    char out[4200], err[4200]; /* the child's stdout and stderr */
    pid_t pid;
} run;

static run *current;

static void run_free(run *r)
{
    if (r->pid > 0) {
        kill(r->pid, SIGKILL);
        waitpid(r->pid, NULL, 0);
    }
    tu_rm_rf(r->root);
    free(r->root);
    free(r);
}

static int cleanup(void **state)
{
    (void)state;
    if (current)
        run_free(current);
    current = NULL;
    return 0;
}

/* Starts `this test --child name` with the injection environment; extra is
 * a NULL-terminated list of NAME=VALUE. */
static run *start_child(const char *name, const char *const *extra)
{
    run *r = current = calloc(1, sizeof *r);
    r->root = tu_mkdtemp("inject");
    snprintf(r->log_path, sizeof r->log_path, "%s/logs", r->root);
    snprintf(r->report, sizeof r->report, "%s/report", r->root);
    snprintf(r->ready, sizeof r->ready, "%s/ready", r->root);
    snprintf(r->out, sizeof r->out, "%s/stdout", r->root);
    snprintf(r->err, sizeof r->err, "%s/stderr", r->root);
    tu_write_file(r->report, "");
    fflush(NULL);
    r->pid = fork();
    assert_true(r->pid >= 0);
    if (r->pid == 0) {
        int o = open(r->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(r->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        /* the child's cmocka-free main must not write over the parent's report */
        unsetenv("CMOCKA_MESSAGE_OUTPUT");
        unsetenv("CMOCKA_XML_FILE");
        unsetenv("GPUFL_DISABLED");
        unsetenv("GPUFL_CONFIG_FILE");
        setenv("CUDA_INJECTION64_PATH", GFL_INJECT_LIBRARY, 1);
        setenv("GPUFL_LOG_PATH", r->log_path, 1);
        setenv("GPUFL_APP_NAME", "inject", 1);
        setenv("GPUFL_PROFILING_ENGINE", "trace", 1);
        setenv("GPUFL_LOG_FORMAT", "ndjson", 1); /* every log read back, device.log too */
        setenv("GPUFL_DEVICE_PLUGIN", GFL_SYNTHETIC_PLUGIN, 1);
        setenv("GPUFL_SYNTHETIC", SCRIPT, 1);
        setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
        setenv("GPUFL_RUN_REPORT", r->report, 1);
        setenv("READY_FILE", r->ready, 1);
        for (const char *const *kv = extra; kv && *kv; kv++) {
            char buf[512];
            snprintf(buf, sizeof buf, "%s", *kv);
            char *eq = strchr(buf, '=');
            *eq = '\0';
            setenv(buf, eq + 1, 1);
        }
        char *argv[] = {program_invocation_name, "--child", (char *)name, NULL};
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    return r;
}

static int wait_child(run *r)
{
    int status = 0;
    assert_int_equal(waitpid(r->pid, &status, 0), r->pid);
    r->pid = 0;
    return status;
}

static void expect_exit_ok(run *r, int status)
{
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char *err = tu_read_file(r->err, NULL);
        fail_msg("child status %d; stderr:\n%s", status, err ? err : "");
    }
}

static void wait_ready(run *r)
{
    for (int i = 0; i < 10000 && !tu_exists(r->ready); i++) {
        int status;
        if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
            r->pid = 0;
            char *err = tu_read_file(r->err, NULL);
            fail_msg("child ended early (status %d); stderr:\n%s", status, err ? err : "");
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    assert_true(tu_exists(r->ready));
}

/* The lines of the report, in order: pids[i], dirs[i] (malloc'd). */
static size_t read_report(run *r, long *pids, char **dirs, size_t max)
{
    char *text = tu_read_file(r->report, NULL);
    assert_non_null(text);
    size_t n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        assert_non_null(sp);
        *sp = '\0';
        assert_true(n < max);
        pids[n] = strtol(line, NULL, 10);
        dirs[n++] = strdup(sp + 1);
    }
    free(text);
    return n;
}

/* The one session of the case: ended, every log closed, every scripted
 * kernel and copy in device.log, named in the report by the child's pid. */
static void expect_complete_session(run *r, pid_t pid, const char *app)
{
    char *dir = tu_session_dir(r->log_path);
    assert_non_null(dir); /* exactly one */
    json_t *sj = tu_session_json(dir);
    assert_string_equal(tu_str(sj, "status"), "ended");
    assert_string_equal(tu_str(sj, "app_name"), app);
    assert_int_equal(tu_int(sj, "pid"), pid);
    json_decref(sj);
    static const char *const logs[] = {"device", "scope", "system"};
    for (size_t i = 0; i < 3; i++) {
        tu_ndjson f;
        assert_int_equal(tu_ndjson_load_channel(dir, logs[i], &f), 0);
        assert_int_equal(f.tail_bytes, 0);
        assert_true(f.n >= 2);
        assert_int_equal(tu_count_type(&f, "session_end"), 1);
        if (i == 0) {
            assert_int_equal(tu_count_type(&f, "kernel"), N_KERNELS);
            assert_int_equal(tu_count_type(&f, "memcpy"), N_COPIES);
        }
        tu_ndjson_free(&f);
    }
    long pids[4];
    char *dirs[4];
    assert_int_equal(read_report(r, pids, dirs, 4), 1);
    assert_int_equal(pids[0], pid);
    char *real = realpath(dir, NULL);
    assert_string_equal(dirs[0], real);
    free(real);
    free(dirs[0]);
    free(dir);
}

static void expect_stdout_empty(run *r)
{
    size_t len = 0;
    char *out = tu_read_file(r->out, &len);
    assert_non_null(out);
    if (len)
        fail_msg("the child wrote to stdout: %s", out);
    free(out);
}

static void test_return_from_main(void **state)
{
    (void)state;
    run *r = start_child("return", NULL);
    pid_t pid = r->pid;
    expect_exit_ok(r, wait_child(r));
    expect_complete_session(r, pid, "inject");
    expect_stdout_empty(r);
}

static void test_exit_from_worker_thread(void **state)
{
    (void)state;
    run *r = start_child("thread_exit", NULL);
    pid_t pid = r->pid;
    expect_exit_ok(r, wait_child(r));
    expect_complete_session(r, pid, "inject");
}

static void killed_by(int sig)
{
    run *r = start_child("wait_for_signal", NULL);
    pid_t pid = r->pid;
    wait_ready(r);
    assert_int_equal(kill(pid, sig), 0);
    int status = wait_child(r);
    /* the same end as without gpufl: killed by that signal */
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), sig);
    expect_complete_session(r, pid, "inject");
    expect_stdout_empty(r);
}

static void test_sigterm(void **state)
{
    (void)state;
    killed_by(SIGTERM);
}

static void test_sigint(void **state)
{
    (void)state;
    killed_by(SIGINT);
}

static void test_program_handler_kept(void **state)
{
    (void)state;
    run *r = start_child("own_handler", NULL);
    pid_t pid = r->pid;
    wait_ready(r);
    assert_int_equal(kill(pid, SIGTERM), 0);
    expect_exit_ok(r, wait_child(r));
    expect_complete_session(r, pid, "inject");
}

static void test_program_copy_first(void **state)
{
    (void)state;
    run *r = start_child("program_first", NULL);
    pid_t pid = r->pid;
    expect_exit_ok(r, wait_child(r));
    char *dir = tu_session_dir(r->log_path);
    assert_non_null(dir); /* one session, not two */
    json_t *sj = tu_session_json(dir);
    assert_string_equal(tu_str(sj, "app_name"), "own_copy");
    assert_string_equal(tu_str(sj, "status"), "ended");
    json_decref(sj);
    long pids[4];
    char *dirs[4];
    assert_int_equal(read_report(r, pids, dirs, 4), 1);
    assert_int_equal(pids[0], pid);
    free(dirs[0]);
    free(dir);
}

static void test_exec_self(void **state)
{
    (void)state;
    run *r = start_child("exec_self", NULL);
    pid_t pid = r->pid;
    expect_exit_ok(r, wait_child(r));
    long pids[4];
    char *dirs[4];
    /* two images, two sessions, one pid; execve ends the first image
     * without exit handlers, so its session stays "running", like a killed
     * one, while the second ends normally */
    assert_int_equal(read_report(r, pids, dirs, 4), 2);
    static const char *const status[] = {"running", "ended"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pids[i], pid);
        json_t *sj = tu_session_json(dirs[i]);
        assert_string_equal(tu_str(sj, "status"), status[i]);
        json_decref(sj);
        free(dirs[i]);
    }
}

static void test_disabled(void **state)
{
    (void)state;
    run *r = start_child("disabled", (const char *const[]){"GPUFL_DISABLED=1", NULL});
    expect_exit_ok(r, wait_child(r));
    assert_false(tu_exists(r->log_path));
    long pids[1];
    char *dirs[1];
    assert_int_equal(read_report(r, pids, dirs, 1), 0);
    expect_stdout_empty(r);
}

static void test_bad_environment(void **state)
{
    (void)state;
    run *r = start_child("bad_env", (const char *const[]){"GPUFL_RING_EVENTS=lots", NULL});
    expect_exit_ok(r, wait_child(r));
    assert_false(tu_exists(r->log_path));
    char *err = tu_read_file(r->err, NULL);
    assert_non_null(strstr(err, "GPUFL_RING_EVENTS"));
    free(err);
    expect_stdout_empty(r);
}

static void test_nvtx_forwarding(void **state)
{
    (void)state;
    run *r = start_child("nvtx", NULL);
    expect_exit_ok(r, wait_child(r));
    assert_false(tu_exists(r->log_path)); /* NVTX alone starts no session */
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--child"))
        return child_main(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_return_from_main, cleanup),
        cmocka_unit_test_teardown(test_exit_from_worker_thread, cleanup),
        cmocka_unit_test_teardown(test_sigterm, cleanup),
        cmocka_unit_test_teardown(test_sigint, cleanup),
        cmocka_unit_test_teardown(test_program_handler_kept, cleanup),
        cmocka_unit_test_teardown(test_program_copy_first, cleanup),
        cmocka_unit_test_teardown(test_exec_self, cleanup),
        cmocka_unit_test_teardown(test_disabled, cleanup),
        cmocka_unit_test_teardown(test_bad_environment, cleanup),
        cmocka_unit_test_teardown(test_nvtx_forwarding, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
