/*
 * `gpufl run [--engine NAME] [--log-path DIR] [--app-name NAME]
 *            [--stack-trace] [--no-torch-ops] [--] PROGRAM ARGS...`
 *
 * Records an unmodified CUDA program. The program runs with
 * CUDA_INJECTION64_PATH naming libgpufl_inject.so, so the CUDA driver
 * starts a gpufl session inside it at its first cuInit (and in each child
 * process that uses CUDA); the options travel as GPUFL_* variables. Each
 * process that records appends "<pid> <session dir>" to a report file
 * (GPUFL_RUN_REPORT, see src/core/run_env.h), which is how this command
 * learns, once the program has ended, where every session went; it prints
 * that and each session's summary to stderr (stdout stays the program's)
 * and exits with the program's status.
 *
 * Single-threaded; the only concurrency is the signal handler that passes
 * the signals a job gets (HUP, INT, QUIT, TERM, USR1, USR2, WINCH) on to the
 * program. The program is never left running without us: it stays in our
 * process group (the terminal's foreground group when we are), and it is
 * killed if gpufl run dies first (see run_program).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cupti/cupti_guard.h"
#include "cli/cli.h"
#include "cli/run_python.h"
#include "collect/summary_json.h"
#include "core/options.h"
#include "core/run_env.h"
#include "present/report/summary_text.h"

#ifndef GPUFL_BIN_TO_LIB
#define GPUFL_BIN_TO_LIB "../lib"
#endif

#define INJECT_NAME "libgpufl_inject.so"
#define CUPTI_PLUGIN_NAME "libgpufl_cupti.so"
#define NCCL_PLUGIN_NAME "libgpufl_nccl.so"
#define DEFAULT_LOG_PATH "gpufl-logs" /* in the current directory */
/* One recorded process: its full summary. Up to this many: the first lines
 * of each. More: where they went, nothing else. */
#define MAX_OVERVIEWS 16

#define EXIT_CANNOT_EXEC 126 /* as a shell: found, but could not be run */
#define EXIT_NOT_FOUND 127   /* as a shell: no such program */

typedef struct run_args {
    const char *engine, *log_path, *app_name;
    bool stack_trace;
    bool no_torch_ops; /* Python programs: leave gpufl.torch out (run_python.h) */
    char **program;    /* PROGRAM ARGS..., NULL-terminated */
} run_args;

/* ---- arguments ---------------------------------------------------------- */

/* Fills *a. Returns 0, -1 after printing the help (exit 0), or
 * GFL_EXIT_USAGE after saying what was wrong. */
static int parse_args(int argc, char **argv, run_args *a)
{
    enum { O_ENGINE = 1, O_LOG_PATH, O_APP_NAME, O_STACK_TRACE, O_NO_TORCH_OPS };
    static const struct option opts[] = {{"engine", required_argument, 0, O_ENGINE},
                                         {"log-path", required_argument, 0, O_LOG_PATH},
                                         {"app-name", required_argument, 0, O_APP_NAME},
                                         {"stack-trace", no_argument, 0, O_STACK_TRACE},
                                         {"no-torch-ops", no_argument, 0, O_NO_TORCH_OPS},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    optind = 1;
    opterr = 0;
    int c;
    /* "+": options end at PROGRAM, whose own options are its business */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case O_ENGINE: {
            gpufl_engine e;
            if (gpufl__engine_parse(optarg, &e) != 0) {
                return gpufl__cli_usage_error("run",
                                              "--engine '%s' is not an engine (monitor, trace, "
                                              "pc_sampling, sass_metrics, range_profiler, deep)",
                                              optarg);
            }
            a->engine = gpufl__engine_name(e);
            break;
        }
        case O_LOG_PATH:
        case O_APP_NAME:
            if (!optarg[0])
                return gpufl__cli_usage_error("run", "--%s must not be empty",
                                              c == O_LOG_PATH ? "log-path" : "app-name");
            *(c == O_LOG_PATH ? &a->log_path : &a->app_name) = optarg;
            break;
        case O_STACK_TRACE: a->stack_trace = true; break;
        case O_NO_TORCH_OPS: a->no_torch_ops = true; break;
        case 'h': gpufl__cli_help("run"); return -1;
        default: goto bad;
        }
    }
    if (optind >= argc)
        return gpufl__cli_usage_error("run", "no PROGRAM to run");
    a->program = argv + optind;
    return 0;
bad:
    return gpufl__cli_usage_error("run", "unknown option, or one without its value: '%s'", argv[optind - 1]);
}

/* ---- the environment of the program -------------------------------------- */

static bool readable(const char *path) { return access(path, R_OK) == 0; }

/* The injection library, as an absolute path (the program may chdir before
 * its first CUDA call): GPUFL_INJECT_LIBRARY, else beside this executable
 * (a build tree), else in the lib directory of its install prefix. Returns
 * 0, or -1 after saying where it looked. */
static int find_inject_library(char *out, size_t len)
{
    const char *forced = getenv("GPUFL_INJECT_LIBRARY");
    if (forced && forced[0]) {
        if (!readable(forced) || !realpath(forced, out)) {
            fprintf(stderr, "gpufl run: GPUFL_INJECT_LIBRARY=%s: %s\n", forced, strerror(errno));
            return -1;
        }
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr,
                "gpufl run: cannot find this program's own path (/proc/self/exe: %s); set "
                "GPUFL_INJECT_LIBRARY to the path of " INJECT_NAME "\n",
                strerror(errno));
        return -1;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    *slash = '\0';
    char candidate[2][PATH_MAX + 64];
    snprintf(candidate[0], sizeof candidate[0], "%s/" INJECT_NAME, exe);
    snprintf(candidate[1], sizeof candidate[1], "%s/" GPUFL_BIN_TO_LIB "/" INJECT_NAME, exe);
    for (int i = 0; i < 2; i++)
        if (readable(candidate[i]) && realpath(candidate[i], out) && strlen(out) < len)
            return 0;
    fprintf(stderr,
            "gpufl run: cannot find " INJECT_NAME " (looked for %s and %s); set "
            "GPUFL_INJECT_LIBRARY to its path\n",
            candidate[0], candidate[1]);
    return -1;
}

static int set(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        fprintf(stderr, "gpufl run: cannot set %s: %s\n", name, strerror(errno));
        return -1;
    }
    return 0;
}

static int set_if_unset(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && v[0] ? 0 : set(name, value);
}

/* The path of the library `name` installed in the injection library's
 * directory (inject is absolute). */
static void beside(const char *inject, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%.*s/%s", (int)(strrchr(inject, '/') - inject), inject, name);
}

/* Puts the CUPTI guard (backend/cupti/cupti_guard.h), installed beside the
 * injection library, first in LD_PRELOAD: a CUPTI client in the program
 * that gpufl shuts out is then told so on stderr and named in the session.
 * Builds without it (sanitizer builds) run the program without it. */
/* Names gpufl's NCCL profiler plugin (inject/nccl_profiler.c), installed
 * beside the injection library, in NCCL_PROFILER_PLUGIN, so that NCCL
 * hands every collective's count and datatype to the session (the bytes
 * of the NCCL reports). A plugin the user named is theirs: left alone,
 * and said, since the reports then have no bytes. */
static int name_nccl_plugin(const char *inject)
{
    char plugin[PATH_MAX + 64];
    beside(inject, NCCL_PLUGIN_NAME, plugin, sizeof plugin);
    const char *user = getenv("NCCL_PROFILER_PLUGIN");
    if (user && user[0]) {
        if (strcmp(user, plugin) != 0)
            fprintf(stderr,
                    "gpufl run: NCCL_PROFILER_PLUGIN=%s is set: left alone, so NCCL's collectives are recorded "
                    "without their bytes (gpufl's plugin is %s)\n",
                    user, plugin);
        return 0;
    }
    if (!readable(plugin)) {
        fprintf(stderr, "gpufl run: %s is missing: NCCL's collectives are recorded without their bytes\n", plugin);
        return 0;
    }
    return set("NCCL_PROFILER_PLUGIN", plugin);
}

static int preload_cupti_guard(const char *inject)
{
    char guard[PATH_MAX + 64];
    beside(inject, GPUFL_CUPTI_GUARD_NAME, guard, sizeof guard);
    if (!readable(guard))
        return 0;
    return gpufl__cli_env_prepend("LD_PRELOAD", guard);
}

/* Sets what the program's gpufl needs. Options given here win over the
 * caller's GPUFL_* variables; without them, the caller's variables win over
 * this command's defaults. */
static int prepare_environment(const run_args *a, const char *inject, const char *report)
{
    char path[PATH_MAX + 64];
    const char *base = strrchr(a->program[0], '/');
    base = base ? base + 1 : a->program[0];
    if (set("CUDA_INJECTION64_PATH", inject) != 0 || set_if_unset("NVTX_INJECTION64_PATH", inject) != 0 ||
        set(GPUFL_RUN_REPORT_ENV, report) != 0)
        return -1;
    /* the ranks of a launcher that names no job (plain torchrun) are kept together by this run's id */
    char job_id[64];
    snprintf(job_id, sizeof job_id, "run-%lld-%d", (long long)time(NULL), (int)getpid());
    if (set_if_unset(GPUFL_RUN_JOB_ID_ENV, job_id) != 0)
        return -1;
    if ((a->engine ? set("GPUFL_PROFILING_ENGINE", a->engine) : set_if_unset("GPUFL_PROFILING_ENGINE", "trace")) != 0)
        return -1;
    if ((a->app_name ? set("GPUFL_APP_NAME", a->app_name) : set_if_unset("GPUFL_APP_NAME", base[0] ? base : "gpufl")) !=
        0)
        return -1;
    if (a->stack_trace && set("GPUFL_ENABLE_STACK_TRACE", "1") != 0)
        return -1;
    /* Absolute, so that a program that changes directory before its first
     * CUDA call records where it was asked to. The default is not the
     * library's ./<app name>: that is PROGRAM itself for `gpufl run ./a.out`. */
    const char *log_path = a->log_path ? a->log_path : DEFAULT_LOG_PATH;
    char cwd[PATH_MAX];
    if (log_path[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(path, sizeof path, "%s", log_path);
    else
        snprintf(path, sizeof path, "%s/%s", cwd, log_path);
    if ((a->log_path ? set("GPUFL_LOG_PATH", path) : set_if_unset("GPUFL_LOG_PATH", path)) != 0)
        return -1;
    /* A program that carries its own static copy of gpufl cannot find the
     * CUPTI plugin beside a libgpufl.so; name the one installed with us. */
    beside(inject, CUPTI_PLUGIN_NAME, path, sizeof path);
    if (readable(path) && set_if_unset("GPUFL_DEVICE_PLUGIN", path) != 0)
        return -1;
    if (gpufl__run_is_python(a->program[0])) {
        snprintf(path, sizeof path, "%.*s", (int)(strrchr(inject, '/') - inject), inject);
        if (gpufl__run_python_env(path, !a->no_torch_ops) != 0)
            return -1;
    }
    if (name_nccl_plugin(inject) != 0)
        return -1;
    return preload_cupti_guard(inject);
}

/* ---- running the program -------------------------------------------------- */

/* The signals a program is sent as a job: by a terminal (hang-up, Ctrl-C,
 * Ctrl-\, a resize), a scheduler or a user. Job control (TSTP, CONT) is
 * left to the terminal, which stops and continues the whole group. */
static const int forwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

/* The running program; 0 once it has been waited for (set with the
 * forwarded signals blocked, so the handler never signals a reaped pid). */
static volatile sig_atomic_t child_pid;

/* Passes a signal sent to gpufl run alone (kill, a job scheduler: si_code
 * <= 0) on to the program. One from the terminal (SI_KERNEL) already
 * reached the program, which shares our process group; sending it again
 * would be a second signal, which the injected program takes as "do not
 * wait for the session to be written". */
static void forward_signal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    int saved_errno = errno;
    if (info->si_code <= 0 && child_pid > 0)
        kill((pid_t)child_pid, sig);
    errno = saved_errno;
}

/* In the child, before exec: dies with gpufl run. PR_SET_PDEATHSIG lasts
 * across exec (not into a set-user-ID program); SIGKILL because nothing
 * would be left to escalate a signal the program ignores. gpufl run may
 * have died before the call: then the parent is no longer `parent`, and
 * the program is not started at all. Returns only on success. */
static void die_with_parent(pid_t parent, int errfd)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        int e = errno; /* reported by gpufl run like a failed exec */
        ssize_t n = write(errfd, &e, sizeof e);
        (void)n;
        _exit(EXIT_CANNOT_EXEC);
    }
    if (getppid() != parent)
        _exit(EXIT_CANNOT_EXEC);
}

/* Forks and execs the program; fills *status (waitpid's) once it ended.
 * Returns 0, or the exit code to use when it could not be run. The program
 * stays in our process group, as a shell's command does, so that the
 * terminal's signals reach it directly. */
static int run_program(char **program, int *status)
{
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) {
        fprintf(stderr, "gpufl run: pipe: %s\n", strerror(errno));
        return GFL_EXIT_FAIL;
    }
    /* Blocked until the handlers are in place, so that a signal arriving
     * meanwhile is passed on, not lost. The child starts with the caller's
     * mask and dispositions: SIGINT ignored (a background job) stays so. */
    sigset_t block, old;
    sigemptyset(&block);
    for (size_t i = 0; i < NFORWARDED; i++)
        sigaddset(&block, forwarded[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        close(errpipe[0]);
        sigprocmask(SIG_SETMASK, &old, NULL);
        die_with_parent(parent, errpipe[1]);
        execvp(program[0], program);
        int e = errno;
        ssize_t n = write(errpipe[1], &e, sizeof e);
        (void)n;
        _exit(EXIT_NOT_FOUND);
    }
    close(errpipe[1]);
    if (pid < 0) {
        fprintf(stderr, "gpufl run: fork: %s\n", strerror(errno));
        close(errpipe[0]);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return GFL_EXIT_FAIL;
    }
    child_pid = pid;
    for (size_t i = 0; i < NFORWARDED; i++) {
        struct sigaction cur, sa;
        if (sigaction(forwarded[i], NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
            continue; /* ignored here, so ignored by the program too (exec keeps SIG_IGN) */
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = forward_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(forwarded[i], &sa, NULL);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);

    int exec_errno = 0;
    ssize_t n;
    while ((n = read(errpipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(errpipe[0]);
    /* Waits without reaping, so that the pid cannot be reused while the
     * handler may still signal it; reaps once the handler is held off. */
    siginfo_t ended;
    while (waitid(P_PID, (id_t)pid, &ended, WEXITED | WNOWAIT) != 0) {
        if (errno != EINTR) {
            fprintf(stderr, "gpufl run: waitid: %s\n", strerror(errno));
            return GFL_EXIT_FAIL;
        }
    }
    sigprocmask(SIG_BLOCK, &block, NULL);
    child_pid = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "gpufl run: waitpid: %s\n", strerror(errno));
            return GFL_EXIT_FAIL;
        }
    }
    if (n == (ssize_t)sizeof exec_errno) {
        bool missing = exec_errno == ENOENT || exec_errno == ENOTDIR;
        fprintf(stderr, "gpufl run: %s: %s\n", program[0],
                missing ? "no such program (not a file, and not found in PATH)" : strerror(exec_errno));
        return missing ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
    }
    return 0;
}

/* ---- what was recorded ----------------------------------------------------- */

static void print_summary(const char *dir, bool full)
{
    gpufl__summary s;
    char err[1024];
    if (gpufl__summary_load(dir, &s, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl run: no summary: %s\n", err);
        return;
    }
    fputc('\n', stderr);
    if (full)
        gpufl__summary_render_text(&s, stderr);
    else
        gpufl__summary_render_overview(&s, stderr);
    gpufl__summary_free(&s);
}

/* Reads the report: one "<pid> <dir>" line per recorded process. Prints
 * where each session went and what it holds (see MAX_OVERVIEWS), and hands
 * each directory to `each` when there is one. */
static void print_sessions(const char *report, const char *program, gpufl__run_session_fn each, void *ctx)
{
    FILE *f = fopen(report, "re");
    char *line = NULL;
    size_t cap = 0, count = 0;
    ssize_t len;
    while (f && (len = getline(&line, &cap, f)) > 0)
        count += line[len - 1] == '\n';
    if (count == 0) {
        if (gpufl__env_disabled())
            fprintf(stderr, "gpufl run: nothing was recorded: GPUFL_DISABLED is set\n");
        else
            fprintf(stderr,
                    "gpufl run: nothing was recorded: %s never initialised CUDA (gpufl starts "
                    "recording at a process's first CUDA call), or gpufl could not start "
                    "(see any gpufl: message above)\n",
                    program);
    }
    if (f)
        rewind(f);
    while (f && (len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] != '\n')
            continue; /* torn: a process died writing it */
        line[len - 1] = '\0';
        char *dir = strchr(line, ' ');
        if (!dir)
            continue;
        *dir++ = '\0';
        fprintf(stderr, "gpufl run: process %s recorded into %s\n", line, dir);
        if (count <= MAX_OVERVIEWS)
            print_summary(dir, count == 1);
        if (each)
            each(dir, ctx);
    }
    if (count > 1)
        fprintf(stderr, "gpufl run: %zu processes recorded; `gpufl summary DIR` shows each in full\n", count);
    free(line);
    if (f)
        fclose(f);
}

/* The report file, empty, for the processes to append to. Returns 0 or -1. */
static int make_report(char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/gpufl-run-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "gpufl run: cannot create a file in %s: %s\n", tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

int gpufl_cmd_run(int argc, char **argv) { return gpufl__run_sessions(argc, argv, NULL, NULL); }

int gpufl__run_sessions(int argc, char **argv, gpufl__run_session_fn each, void *ctx)
{
    run_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0)
        return rc < 0 ? GFL_EXIT_OK : rc;
    char inject[PATH_MAX], report[PATH_MAX];
    if (find_inject_library(inject, sizeof inject) != 0 || make_report(report, sizeof report) != 0)
        return GFL_EXIT_FAIL;
    if (prepare_environment(&a, inject, report) != 0) {
        unlink(report);
        return GFL_EXIT_FAIL;
    }
    int status = 0;
    rc = run_program(a.program, &status);
    if (rc != 0) {
        unlink(report);
        return rc;
    }
    int code;
    if (WIFSIGNALED(status)) {
        code = 128 + WTERMSIG(status);
        fprintf(stderr, "gpufl run: %s was killed by signal %d (%s)\n", a.program[0], WTERMSIG(status),
                strsignal(WTERMSIG(status)));
    } else {
        code = WEXITSTATUS(status);
        fprintf(stderr, "gpufl run: %s exited with status %d\n", a.program[0], code);
    }
    print_sessions(report, a.program[0], each, ctx);
    unlink(report);
    return code;
}
