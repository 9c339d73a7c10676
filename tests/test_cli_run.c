/*
 * `gpufl run`, as a user runs it: the real command on a program that stands
 * in for a CUDA program (tests/inject_target: it calls InitializeInjection
 * itself where the driver would), with the synthetic device plugin.
 *
 * Why: `gpufl run` sits between a user (or a job script) and their program,
 * so it must be invisible where it should be (the program's stdout and
 * exit status, 128+N for a signal, 127 for a program that is not there) and
 * say plainly where the sessions went, and its options must reach every
 * session it starts.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpufl/trace.h"
#include "test_util.h"

typedef struct result {
    int code;        /* exit code, 128+N when killed by signal N */
    char *out, *err; /* stdout and stderr */
    char *cwd;       /* where it ran (a fresh directory) */
} result;

static result *current;
/* When set, `gpufl run` starts as a session leader with this terminal as
 * its controlling terminal and stdin, as from an interactive shell. */
static const char *controlling_tty;
static int tty_master = -1;

/* The pid inject_target `signals` wrote to .signals in dir, or 0. */
static pid_t program_pid(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.signals", dir);
    char *log = tu_read_file(path, NULL);
    int pid = 0;
    if (log && sscanf(log, "pid %d", &pid) != 1)
        pid = 0;
    free(log);
    return (pid_t)pid;
}

static int cleanup(void **state)
{
    (void)state;
    if (tty_master >= 0)
        close(tty_master);
    tty_master = -1;
    controlling_tty = NULL;
    if (current) {
        /* a program left running by a failed test is not left behind */
        pid_t orphan = current->cwd ? program_pid(current->cwd) : 0;
        if (orphan > 0 && kill(orphan, SIGKILL) == 0)
            waitpid(orphan, NULL, 0);
        free(current->out);
        free(current->err);
        tu_rm_rf(current->cwd);
        free(current->cwd);
        free(current);
        current = NULL;
    }
    return 0;
}

/* Starts `gpufl run args...` in a fresh directory; env is a NULL-terminated
 * list of NAME=VALUE (NAME= unsets). A first argument "./NAME" is made a
 * link to inject_target in that directory. */
static pid_t start(result *r, const char *const *args, const char *const *env)
{
    r->cwd = tu_mkdtemp("cli-run");
    char out[4200], err[4200], ready[4200];
    snprintf(out, sizeof out, "%s/.stdout", r->cwd);
    snprintf(err, sizeof err, "%s/.stderr", r->cwd);
    snprintf(ready, sizeof ready, "%s/.ready", r->cwd);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (chdir(r->cwd) != 0)
            _exit(120);
        if (controlling_tty) {
            int tty = -1;
            if (setsid() < 0 || (tty = open(controlling_tty, O_RDWR)) < 0 || dup2(tty, 0) < 0)
                _exit(123);
            close(tty);
        }
        if (args[0] && !strncmp(args[0], "./", 2) && symlink(GFL_INJECT_TARGET, args[0]) != 0)
            _exit(122);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        static const char *const clear[] = {
            "GPUFL_LOG_PATH",        "GPUFL_APP_NAME",    "GPUFL_PROFILING_ENGINE", "GPUFL_ENABLE_STACK_TRACE",
            "GPUFL_DISABLED",        "GPUFL_CONFIG_FILE", "GPUFL_INJECT_LIBRARY",   "CUDA_INJECTION64_PATH",
            "NVTX_INJECTION64_PATH", "GPUFL_RUN_REPORT",  "GPUFL_INJECTED_PID",     NULL};
        for (const char *const *c = clear; *c; c++)
            unsetenv(*c);
        setenv("GPUFL_DEVICE_PLUGIN", GFL_SYNTHETIC_PLUGIN, 1);
        setenv("GPUFL_SYNTHETIC", "kernels=50,copies=5,memsets=0,syncs=0,allocs=0,metrics=0,threads=1", 1);
        setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
        setenv("READY_FILE", ready, 1);
        for (const char *const *kv = env; kv && *kv; kv++) {
            char buf[4200];
            snprintf(buf, sizeof buf, "%s", *kv);
            char *eq = strchr(buf, '=');
            *eq = '\0';
            if (eq[1])
                setenv(buf, eq + 1, 1);
            else
                unsetenv(buf);
        }
        const char *argv[40] = {GFL_CLI, "run"};
        int n = 2;
        for (; args[n - 2] && n < 39; n++)
            argv[n] = args[n - 2];
        argv[n] = NULL;
        execv(GFL_CLI, (char *const *)argv);
        _exit(121);
    }
    return pid;
}

static void finish(result *r, pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 256 + WTERMSIG(status);
    char path[4200];
    snprintf(path, sizeof path, "%s/.stdout", r->cwd);
    r->out = tu_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/.stderr", r->cwd);
    r->err = tu_read_file(path, NULL);
    assert_non_null(r->out);
    assert_non_null(r->err);
}

static result *run_cli(const char *const *args, const char *const *env)
{
    result *r = current = calloc(1, sizeof *r);
    finish(r, start(r, args, env));
    return r;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_code(const result *r, int code)
{
    if (r->code != code)
        fail_msg("exit code %d, expected %d; stderr:\n%s", r->code, code, r->err);
}

/* The session directories `gpufl run` named, in order (malloc'd). */
static size_t recorded_dirs(const result *r, char **dirs, size_t max)
{
    static const char tag[] = " recorded into ";
    size_t n = 0;
    for (const char *p = strstr(r->err, tag); p; p = strstr(p + 1, tag)) {
        const char *start = p + strlen(tag), *end = strchr(start, '\n');
        assert_non_null(end);
        assert_true(n < max);
        dirs[n++] = strndup(start, (size_t)(end - start));
    }
    return n;
}

/* The one recorded session's session.json (json_decref it), after checking
 * that its directory exists under parent. */
static json_t *one_session(const result *r, const char *parent)
{
    char *dirs[4];
    size_t n = recorded_dirs(r, dirs, 4);
    if (n != 1)
        fail_msg("%zu sessions reported, expected 1; stderr:\n%s", n, r->err);
    struct stat st;
    assert_int_equal(stat(dirs[0], &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    char *real_parent = realpath(parent, NULL);
    assert_non_null(real_parent);
    assert_true(!strncmp(dirs[0], real_parent, strlen(real_parent)));
    json_t *sj = tu_session_json(dirs[0]);
    free(real_parent);
    free(dirs[0]);
    return sj;
}

static const char *option_str(json_t *sj, const char *key) { return tu_str(json_object_get(sj, "options"), key); }

/* Read as the commands read it: the default (compact) keeps kernels in
 * trace.gflt only. */
static size_t kernels_in(json_t *sj)
{
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(tu_str(sj, "log_dir"), &t, err, sizeof err) != 0)
        fail_msg("%s", err);
    size_t n = gpufl_trace_get_kernels(t)->n;
    gpufl_trace_close(t);
    return n;
}

/* Whether the session directory has the file name. */
static bool has_file(json_t *sj, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", tu_str(sj, "log_dir"), name);
    return access(path, F_OK) == 0;
}

/* ---- the program's status, stdout and sessions ---------------------------------- */

static void test_exit_zero(void **state)
{
    (void)state;
    result *r = run_cli(ARGS(GFL_INJECT_TARGET, "exit", "0"), NULL);
    expect_code(r, 0);
    /* stdout is the program's alone */
    assert_string_equal(r->out, "inject_target: hello\n");
    char parent[4200];
    snprintf(parent, sizeof parent, "%s/gpufl-logs", r->cwd);
    json_t *sj = one_session(r, parent);
    assert_string_equal(tu_str(sj, "app_name"), "gpufl_inject_target");
    assert_string_equal(tu_str(sj, "status"), "ended");
    assert_string_equal(option_str(sj, "profiling_engine"), "trace");
    assert_int_equal(kernels_in(sj), 50);
    /* the default, compact: device work in trace.gflt, scopes and metrics
     * also as NDJSON for log shippers, no device.log */
    assert_string_equal(option_str(sj, "log_format"), "compact");
    assert_true(has_file(sj, "trace.gflt") && has_file(sj, "scope.log") && has_file(sj, "system.log"));
    assert_false(has_file(sj, "device.log"));
    json_decref(sj);
    /* the summary `gpufl summary` prints, on stderr */
    assert_non_null(strstr(r->err, "gpufl session gpufl_inject_target-"));
    assert_non_null(strstr(r->err, "ended cleanly"));
    assert_non_null(strstr(r->err, "GPU kernels (by total time)")); /* one process: in full */
    assert_non_null(strstr(r->err, "exited with status 0"));
}

/* `gpufl run ./prog`: the library's default log directory, ./prog, would
 * be the program itself. */
static void test_program_in_current_directory(void **state)
{
    (void)state;
    result *r = run_cli(ARGS("./prog", "exit", "0"), NULL);
    expect_code(r, 0);
    char parent[4200];
    snprintf(parent, sizeof parent, "%s/gpufl-logs", r->cwd);
    json_t *sj = one_session(r, parent);
    assert_string_equal(tu_str(sj, "app_name"), "prog");
    json_decref(sj);
}

static void test_exit_code_passes_through(void **state)
{
    (void)state;
    result *r = run_cli(ARGS(GFL_INJECT_TARGET, "exit", "3"), NULL);
    expect_code(r, 3);
    json_t *sj = one_session(r, r->cwd);
    assert_string_equal(tu_str(sj, "status"), "ended");
    json_decref(sj);
}

static void test_program_killed_by_sigterm(void **state)
{
    (void)state;
    result *r = run_cli(ARGS(GFL_INJECT_TARGET, "signal", "15"), NULL);
    expect_code(r, 128 + SIGTERM);
    json_t *sj = one_session(r, r->cwd);
    assert_string_equal(tu_str(sj, "status"), "ended"); /* flushed before dying */
    assert_int_equal(kernels_in(sj), 50);
    json_decref(sj);
    assert_non_null(strstr(r->err, "killed by signal 15"));
}

static void test_program_killed_by_sigkill(void **state)
{
    (void)state;
    result *r = run_cli(ARGS(GFL_INJECT_TARGET, "signal", "9"), NULL);
    expect_code(r, 128 + SIGKILL);
    json_t *sj = one_session(r, r->cwd); /* still reported; nothing could end it */
    json_decref(sj);
}

/* A SIGTERM sent to gpufl run (a job scheduler stopping the job) reaches
 * the program, which writes its session and dies of it. */
static void test_sigterm_is_forwarded(void **state)
{
    (void)state;
    result *r = current = calloc(1, sizeof *r);
    pid_t pid = start(r, ARGS(GFL_INJECT_TARGET, "wait"), NULL);
    char ready[4200];
    snprintf(ready, sizeof ready, "%s/.ready", r->cwd);
    for (int i = 0; i < 20000 && !tu_exists(ready); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    assert_true(tu_exists(ready));
    assert_int_equal(kill(pid, SIGTERM), 0);
    finish(r, pid);
    expect_code(r, 128 + SIGTERM);
    json_t *sj = one_session(r, r->cwd);
    assert_string_equal(tu_str(sj, "status"), "ended");
    json_decref(sj);
}

static void test_several_processes(void **state)
{
    (void)state;
    result *r = run_cli(ARGS(GFL_INJECT_TARGET, "children", "2"), NULL);
    expect_code(r, 0);
    char *dirs[8];
    size_t n = recorded_dirs(r, dirs, 8);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++) {
        json_t *sj = tu_session_json(dirs[i]);
        assert_string_equal(tu_str(sj, "status"), "ended");
        json_decref(sj);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(dirs[i], dirs[j]);
    }
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
    /* several: the first lines of each summary, and a word on the rest */
    assert_non_null(strstr(r->err, "3 processes recorded"));
    assert_null(strstr(r->err, "GPU kernels (by total time)"));
}

/* A rank of a job (torchrun's variables): its session goes under
 * <log_path>/job-<id>, the id made safe, and says where it stands. */
static void test_a_job_goes_under_its_id(void **state)
{
    (void)state;
    result *r = run_cli(ARGS(GFL_INJECT_TARGET, "exit", "0"),
                        (const char *const[]){"RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1", "TORCHELASTIC_RUN_ID=run/../7",
                                              "SLURM_JOB_ID=", NULL});
    expect_code(r, 0);
    char parent[4200];
    snprintf(parent, sizeof parent, "%s/gpufl-logs/job-run_.._7", r->cwd);
    json_t *sj = one_session(r, parent);
    json_t *job = json_object_get(sj, "job");
    assert_string_equal(tu_str(job, "launcher"), "torchrun");
    assert_int_equal(tu_int(job, "rank"), 1);
    assert_int_equal(tu_int(job, "world_size"), 2);
    assert_string_equal(tu_str(job, "id"), "run/../7");
    json_decref(sj);
}

/* Plain torchrun names no job (its run id is "none"): the ranks get the
 * id `gpufl run` hands the processes it starts, so they still go under one
 * job directory. */
static void test_plain_torchrun_ranks_get_the_runs_id(void **state)
{
    (void)state;
    result *r =
        run_cli(ARGS(GFL_INJECT_TARGET, "exit", "0"),
                (const char *const[]){"RANK=0", "WORLD_SIZE=2", "TORCHELASTIC_RUN_ID=none", "SLURM_JOB_ID=", NULL});
    expect_code(r, 0);
    char *dirs[2];
    assert_int_equal(recorded_dirs(r, dirs, 2), 1);
    json_t *sj = tu_session_json(dirs[0]);
    json_t *job = json_object_get(sj, "job");
    assert_string_equal(tu_str(job, "id_from"), "GPUFL_RUN_JOB_ID");
    const char *id = tu_str(job, "id");
    assert_true(!strncmp(id, "run-", 4));
    char want[256];
    snprintf(want, sizeof want, "/gpufl-logs/job-%s/", id);
    if (!strstr(dirs[0], want))
        fail_msg("session %s is not under %s", dirs[0], want);
    json_decref(sj);
    free(dirs[0]);
}

static void test_no_cuda_no_session(void **state)
{
    (void)state;
    result *r = run_cli(ARGS(GFL_INJECT_TARGET, "nocuda"), NULL);
    expect_code(r, 0);
    assert_non_null(strstr(r->err, "nothing was recorded"));
    assert_non_null(strstr(r->err, "never initialised CUDA"));
    char *dirs[1];
    assert_int_equal(recorded_dirs(r, dirs, 1), 0);
}

/* ---- signals ------------------------------------------------------------------- */

#define SIGNAL_ENV ((const char *const[]){"SIGNAL_LOG=.signals", NULL})

static void wait_ready(const result *r)
{
    char ready[4200];
    snprintf(ready, sizeof ready, "%s/.ready", r->cwd);
    for (int i = 0; i < 20000 && !tu_exists(ready); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (!tu_exists(ready))
        fail_msg("the program never became ready");
}

/* inject_target `signals`'s log (malloc'd) once it holds `line`, or a
 * failed test after 20 s. */
static char *wait_signal_line(const result *r, int sig)
{
    char path[4200], line[32];
    snprintf(path, sizeof path, "%s/.signals", r->cwd);
    snprintf(line, sizeof line, "signal %d\n", sig);
    for (int i = 0; i < 20000; i++) {
        char *log = tu_read_file(path, NULL);
        if (log && strstr(log, line))
            return log;
        free(log);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    fail_msg("signal %d (%s) never reached the program", sig, strsignal(sig));
    return NULL;
}

/* The log holds its pid, then each of sigs exactly once, in order. */
static void expect_signals(const result *r, const int *sigs, size_t n)
{
    char path[4200], expected[512];
    snprintf(path, sizeof path, "%s/.signals", r->cwd);
    char *log = tu_read_file(path, NULL);
    assert_non_null(log);
    int len = snprintf(expected, sizeof expected, "pid %d\n", (int)program_pid(r->cwd));
    for (size_t i = 0; i < n; i++)
        len += snprintf(expected + len, sizeof expected - (size_t)len, "signal %d\n", sigs[i]);
    if (strcmp(log, expected) != 0)
        fail_msg("the program got:\n%s\nexpected:\n%s", log, expected);
    free(log);
}

/* Every signal a job is sent (by a user, a scheduler, a hang-up) reaches the
 * program once, and gpufl run lives on until the program ends. */
static void test_signals_are_forwarded(void **state)
{
    (void)state;
    static const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGTERM};
    result *r = current = calloc(1, sizeof *r);
    pid_t pid = start(r, ARGS(GFL_INJECT_TARGET, "signals"), SIGNAL_ENV);
    wait_ready(r);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        assert_int_equal(kill(pid, sigs[i]), 0);
        free(wait_signal_line(r, sigs[i]));
    }
    finish(r, pid);
    expect_code(r, 0); /* the program's own status: it exits 0 after SIGTERM */
    expect_signals(r, sigs, sizeof sigs / sizeof sigs[0]);
}

/* From a terminal (Ctrl-C, Ctrl-\, a resize) the signal reaches the program
 * directly, as under a shell, and gpufl run does not send it a second time. */
static void test_terminal_signals_reach_the_program_once(void **state)
{
    (void)state;
    tty_master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(tty_master >= 0);
    assert_int_equal(grantpt(tty_master), 0);
    assert_int_equal(unlockpt(tty_master), 0);
    controlling_tty = ptsname(tty_master);
    assert_non_null(controlling_tty);
    result *r = current = calloc(1, sizeof *r);
    pid_t pid = start(r, ARGS(GFL_INJECT_TARGET, "signals"), SIGNAL_ENV);
    wait_ready(r);
    assert_int_equal(write(tty_master, "\003", 1), 1); /* VINTR */
    free(wait_signal_line(r, SIGINT));
    assert_int_equal(write(tty_master, "\034", 1), 1); /* VQUIT */
    free(wait_signal_line(r, SIGQUIT));
    struct winsize ws = {.ws_row = 40, .ws_col = 100};
    assert_int_equal(ioctl(tty_master, TIOCSWINSZ, &ws), 0);
    free(wait_signal_line(r, SIGWINCH));
    /* a duplicate would have been sent by now: forwarding is immediate */
    assert_int_equal(kill(pid, SIGTERM), 0);
    finish(r, pid);
    expect_code(r, 0);
    static const int sigs[] = {SIGINT, SIGQUIT, SIGWINCH, SIGTERM};
    expect_signals(r, sigs, sizeof sigs / sizeof sigs[0]);
}

/* gpufl run killed outright (SIGKILL, the OOM killer, a crash of its own):
 * the program does not run on without it. */
static void test_no_orphan_when_gpufl_run_is_killed(void **state)
{
    (void)state;
    /* the orphan, if any, becomes this process's child, to be waited for */
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    result *r = current = calloc(1, sizeof *r);
    pid_t pid = start(r, ARGS(GFL_INJECT_TARGET, "signals"), SIGNAL_ENV);
    wait_ready(r);
    pid_t program = program_pid(r->cwd);
    assert_true(program > 0);
    assert_int_equal(kill(pid, SIGKILL), 0);
    finish(r, pid);
    assert_int_equal(r->code, 256 + SIGKILL);
    int status = 0;
    pid_t got = 0;
    for (int i = 0; i < 10000 && (got = waitpid(program, &status, WNOHANG)) == 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    if (got != program)
        fail_msg("the program (pid %d) was still running 10 s after gpufl run was killed", (int)program);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
}

/* ---- options ------------------------------------------------------------------- */

static void test_options_reach_the_session(void **state)
{
    (void)state;
    result *r = run_cli(ARGS("--engine", "monitor", "--app-name", "my app", "--log-path", "rel/logs", "--stack-trace",
                             "--", GFL_INJECT_TARGET, "exit", "0"),
                        NULL);
    expect_code(r, 0);
    char parent[4200];
    snprintf(parent, sizeof parent, "%s/rel/logs", r->cwd);
    json_t *sj = one_session(r, parent);
    assert_string_equal(tu_str(sj, "app_name"), "my app");
    assert_string_equal(option_str(sj, "profiling_engine"), "monitor");
    assert_true(json_is_true(json_object_get(json_object_get(sj, "options"), "enable_stack_trace")));
    assert_int_equal(kernels_in(sj), 0); /* monitor never loads the device plugin */
    json_decref(sj);
}

/* Without --engine and --app-name the caller's variables are kept. */
static void test_caller_environment_kept(void **state)
{
    (void)state;
    result *r = run_cli(ARGS(GFL_INJECT_TARGET, "exit", "0"),
                        (const char *const[]){"GPUFL_PROFILING_ENGINE=monitor", "GPUFL_APP_NAME=from_env", NULL});
    expect_code(r, 0);
    json_t *sj = one_session(r, r->cwd);
    assert_string_equal(tu_str(sj, "app_name"), "from_env");
    assert_string_equal(option_str(sj, "profiling_engine"), "monitor");
    json_decref(sj);
}

/* NCCL_PROFILER_PLUGIN names gpufl's NCCL plugin, built beside the
 * injection library; one the user set is left alone, and said. */
static void test_nccl_profiler_plugin(void **state)
{
    (void)state;
    result *r = run_cli(ARGS("/bin/sh", "-c", "echo \"plugin=$NCCL_PROFILER_PLUGIN\""),
                        (const char *const[]){"NCCL_PROFILER_PLUGIN=", NULL});
    expect_code(r, 0);
    char want[4200], *real = realpath(GFL_NCCL_PLUGIN, NULL);
    assert_non_null(real);
    snprintf(want, sizeof want, "plugin=%s\n", real);
    free(real);
    assert_string_equal(r->out, want);
    assert_null(strstr(r->err, "NCCL_PROFILER_PLUGIN"));
    free(r->out);
    free(r->err);
    tu_rm_rf(r->cwd);
    free(r->cwd);
    free(r);
    current = NULL;

    r = run_cli(ARGS("/bin/sh", "-c", "echo \"plugin=$NCCL_PROFILER_PLUGIN\""),
                (const char *const[]){"NCCL_PROFILER_PLUGIN=/opt/mine/libnccl-profiler.so", NULL});
    expect_code(r, 0);
    assert_string_equal(r->out, "plugin=/opt/mine/libnccl-profiler.so\n");
    if (!strstr(r->err, "NCCL_PROFILER_PLUGIN=/opt/mine/libnccl-profiler.so is set: left alone"))
        fail_msg("not said; stderr:\n%s", r->err);
}

/* ---- errors ------------------------------------------------------------------- */

static void test_program_not_found(void **state)
{
    (void)state;
    result *r = run_cli(ARGS("/nonexistent/gpufl-test-program"), NULL);
    expect_code(r, 127);
    assert_non_null(strstr(r->err, "/nonexistent/gpufl-test-program"));
    assert_string_equal(r->out, "");
    cleanup(NULL);
    r = run_cli(ARGS("gpufl-test-no-such-program-in-path"), NULL);
    expect_code(r, 127);
    assert_non_null(strstr(r->err, "gpufl-test-no-such-program-in-path"));
}

static void test_program_not_executable(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp("cli-run-file"), path[4200];
    snprintf(path, sizeof path, "%s/not-a-program", dir);
    tu_write_file(path, "just text\n");
    chmod(path, 0644);
    result *r = run_cli(ARGS(path), NULL);
    tu_rm_rf(dir);
    free(dir);
    expect_code(r, 126);
}

static void test_bad_usage(void **state)
{
    (void)state;
    result *r = run_cli(ARGS("--bogus", GFL_INJECT_TARGET, "exit", "0"), NULL);
    expect_code(r, 64);
    assert_non_null(strstr(r->err, "--bogus"));
    cleanup(NULL);
    r = run_cli(ARGS("--engine", "warp", GFL_INJECT_TARGET, "exit", "0"), NULL);
    expect_code(r, 64);
    assert_non_null(strstr(r->err, "warp"));
    cleanup(NULL);
    r = run_cli((const char *const[]){NULL}, NULL);
    expect_code(r, 64);
    cleanup(NULL);
    r = run_cli(ARGS("--engine"), NULL);
    expect_code(r, 64);
}

static void test_missing_injection_library(void **state)
{
    (void)state;
    result *r = run_cli(ARGS(GFL_INJECT_TARGET, "exit", "0"),
                        (const char *const[]){"GPUFL_INJECT_LIBRARY=/nonexistent/libgpufl_inject.so", NULL});
    expect_code(r, 1);
    assert_non_null(strstr(r->err, "GPUFL_INJECT_LIBRARY"));
    assert_string_equal(r->out, ""); /* the program never ran */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_exit_zero, cleanup),
        cmocka_unit_test_teardown(test_program_in_current_directory, cleanup),
        cmocka_unit_test_teardown(test_exit_code_passes_through, cleanup),
        cmocka_unit_test_teardown(test_program_killed_by_sigterm, cleanup),
        cmocka_unit_test_teardown(test_program_killed_by_sigkill, cleanup),
        cmocka_unit_test_teardown(test_sigterm_is_forwarded, cleanup),
        cmocka_unit_test_teardown(test_signals_are_forwarded, cleanup),
        cmocka_unit_test_teardown(test_terminal_signals_reach_the_program_once, cleanup),
        cmocka_unit_test_teardown(test_no_orphan_when_gpufl_run_is_killed, cleanup),
        cmocka_unit_test_teardown(test_several_processes, cleanup),
        cmocka_unit_test_teardown(test_a_job_goes_under_its_id, cleanup),
        cmocka_unit_test_teardown(test_plain_torchrun_ranks_get_the_runs_id, cleanup),
        cmocka_unit_test_teardown(test_no_cuda_no_session, cleanup),
        cmocka_unit_test_teardown(test_options_reach_the_session, cleanup),
        cmocka_unit_test_teardown(test_caller_environment_kept, cleanup),
        cmocka_unit_test_teardown(test_nccl_profiler_plugin, cleanup),
        cmocka_unit_test_teardown(test_program_not_found, cleanup),
        cmocka_unit_test_teardown(test_program_not_executable, cleanup),
        cmocka_unit_test_teardown(test_bad_usage, cleanup),
        cmocka_unit_test_teardown(test_missing_injection_library, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
