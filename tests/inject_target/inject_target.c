/*
 * A stand-in for a CUDA program, for test_cli_run: where a real program's
 * first CUDA call would make the driver load CUDA_INJECTION64_PATH and call
 * its InitializeInjection(), this one does exactly that itself, so that
 * `gpufl run` can be tested end to end without CUDA. It links nothing of
 * gpufl.
 *
 *   inject_target exit N       "initialise CUDA", say hello on stdout, exit N
 *   inject_target signal N     "initialise CUDA", then raise signal N
 *   inject_target wait         "initialise CUDA", create $READY_FILE, wait for a signal
 *   inject_target nocuda       never touch CUDA, exit 0
 *   inject_target children N   run `exit 0` in N child processes, then "initialise CUDA", exit 0
 *   inject_target signals      write "pid P" then each of HUP INT QUIT TERM USR1 USR2 WINCH it
 *                              gets as a line "signal N" to $SIGNAL_LOG, "initialise CUDA",
 *                              create $READY_FILE; exit 0 after SIGTERM
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void cuda_init(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path)
        return; /* the driver would not inject anything either */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "inject_target: %s\n", dlerror());
        exit(90);
    }
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    if (!init || init() != 1) {
        fprintf(stderr, "inject_target: InitializeInjection failed\n");
        exit(91);
    }
}

static int signal_log = -1;
static volatile sig_atomic_t terminated;

/* async-signal-safe: formats with no stdio, one write per line */
static void log_signal(int sig)
{
    char line[32] = "signal ", digits[12];
    size_t n = 7, d = 0;
    for (int v = sig; v > 0 || d == 0; v /= 10)
        digits[d++] = (char)('0' + v % 10);
    while (d > 0)
        line[n++] = digits[--d];
    line[n++] = '\n';
    ssize_t w = write(signal_log, line, n);
    (void)w;
    if (sig == SIGTERM)
        terminated = 1;
}

static int record_signals(void)
{
    static const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH};
    const char *path = getenv("SIGNAL_LOG");
    signal_log = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
    if (signal_log < 0)
        return 96;
    dprintf(signal_log, "pid %d\n", (int)getpid());
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = log_signal;
        sigfillset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    cuda_init();
    const char *ready = getenv("READY_FILE");
    int fd = ready ? open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    if (fd >= 0)
        close(fd);
    while (!terminated)
        sigsuspend(&old); /* no signal is missed between the test and the wait */
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(mode, "exit")) {
        cuda_init();
        printf("inject_target: hello\n");
        return n;
    }
    if (!strcmp(mode, "signal")) {
        cuda_init();
        raise(n);
        return 92; /* not reached for a signal that kills */
    }
    if (!strcmp(mode, "wait")) {
        cuda_init();
        const char *ready = getenv("READY_FILE");
        int fd = ready ? open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
        if (fd >= 0)
            close(fd);
        for (;;)
            pause();
    }
    if (!strcmp(mode, "nocuda"))
        return 0;
    if (!strcmp(mode, "children")) {
        for (int i = 0; i < n; i++) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid == 0) {
                char *child_argv[] = {argv[0], "exit", "0", NULL};
                execv("/proc/self/exe", child_argv);
                _exit(93);
            }
            int status = 0;
            if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
                return 94;
        }
        cuda_init();
        return 0;
    }
    if (!strcmp(mode, "signals"))
        return record_signals();
    fprintf(stderr, "usage: inject_target exit N | signal N | wait | nocuda | children N | signals\n");
    return 95;
}
