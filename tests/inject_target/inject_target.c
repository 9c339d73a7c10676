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
    fprintf(stderr, "usage: inject_target exit N | signal N | wait | nocuda | children N\n");
    return 95;
}
