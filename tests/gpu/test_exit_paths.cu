/*
 * Every way a traced program can end leaves a complete trace and never hangs:
 * returning from main, exit() from a worker thread while the main thread is
 * still in CUDA calls, SIGTERM with its default disposition, a device reset
 * before the end, and (in-process, gpufl_init without gpufl_shutdown) the
 * library's own destructor. Each case runs as a child — under `gpufl run`,
 * or with the session started by the program itself — launches a known
 * number of kernels, waits for them, and ends its way; the parent then checks
 * the exit status, that the session ended, and that device.log holds exactly
 * those kernels. A hang is caught by timeout(1).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "fs_util.h"
#include "gpu_skip.h"
#include "gpufl/gpufl.h"
#include "spin.cuh"
#include "test_util.h"

#define KERNELS 500
#define HANG_LIMIT "60"

__global__ void exit_path_kernel(int *p) { p[threadIdx.x] += 1; }

/* ---- the child -------------------------------------------------------------- */

static int *buffer;

static void launch_known_work(void)
{
    CHECK(cudaMalloc(&buffer, 256 * sizeof(int)) == cudaSuccess, "cudaMalloc");
    for (int i = 0; i < KERNELS; i++)
        exit_path_kernel<<<1, 32>>>(buffer);
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
}

static void *exit_from_thread(void *arg)
{
    (void)arg;
    exit(0);
}

static int child(const char *mode, bool in_process)
{
    if (in_process)
        CHECK(gpufl_init(NULL), "gpufl_init: %s", gpufl_last_error());
    launch_known_work();
    if (!strcmp(mode, "return"))
        return 0;
    if (!strcmp(mode, "reset")) {
        CHECK(cudaDeviceReset() == cudaSuccess, "cudaDeviceReset");
        return 0;
    }
    if (!strcmp(mode, "sigterm")) {
        raise(SIGTERM);
        sleep(30); /* not reached when the signal ends the process */
        return 3;
    }
    if (!strcmp(mode, "exit-thread")) {
        /* the GPU still busy, the main thread alive but out of CUDA: a main
         * thread still calling CUDA while another tears it down with exit()
         * can crash inside CUDA with or without a tracer */
        spin<<<1, 1>>>(20000000);
        pthread_t t;
        pthread_create(&t, NULL, exit_from_thread, NULL);
        for (;;)
            pause();
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}

/* ---- the parent ---------------------------------------------------------------- */

static int failures;

#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            fprintf(stderr, "FAIL %s: ", label);                                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
        }                                                                                                              \
    } while (0)

static void check_session(const char *label, const char *logs, bool in_flight)
{
    char *dir = tu_session_dir(logs);
    EXPECT(dir, "no single session directory under %s", logs);
    if (!dir)
        return;
    json_t *info = tu_session_json(dir);
    const char *status = json_string_value(json_object_get(info, "status"));
    EXPECT(status && !strcmp(status, "ended"), "session.json status %s, expected ended", status ? status : "?");
    tu_ndjson dev;
    EXPECT(tu_ndjson_load_channel(dir, "device", &dev) == 0, "device.log unreadable");
    size_t kernels = 0, dropped = 0;
    for (size_t i = 0; i < dev.n; i++) {
        const char *type = json_string_value(json_object_get(dev.lines[i], "type"));
        const char *name = json_string_value(json_object_get(dev.lines[i], "name"));
        if (type && !strcmp(type, "kernel") && name && strstr(name, "exit_path_kernel"))
            kernels++;
        /* exit() from a thread tears the context down under a kernel still
         * running: CUPTI hands its record over unfinished, and it is dropped
         * and counted as malformed, which is right */
        const char *reason = json_string_value(json_object_get(dev.lines[i], "reason"));
        if (type && !strcmp(type, "dropped") && !(in_flight && reason && !strcmp(reason, "bad_event")))
            dropped++;
    }
    /* exit() from a thread races the main thread's launches of other
     * kernels, never ours: all of ours completed before */
    EXPECT(kernels == KERNELS, "%zu exit_path_kernel records, expected %d", kernels, KERNELS);
    EXPECT(dropped == 0, "%zu dropped lines", dropped);
    printf("%-28s %zu kernels, session %s\n", label, kernels, status ? status : "?");
    tu_ndjson_free(&dev);
    json_decref(info);
    free(dir);
}

static void run_case(const char *self, const char *mode, bool in_process, int expect_status)
{
    char label[64];
    snprintf(label, sizeof label, "%s %s", in_process ? "in-process" : "gpufl run", mode);
    char *logs = tu_mkdtemp("exit-paths");
    int status;
    if (in_process) {
        tu_setenv("GPUFL_LOG_PATH", logs);
        tu_setenv("GPUFL_PROFILING_ENGINE", "trace");
        tu_setenv("GPUFL_DEVICE_PLUGIN", GFL_CUPTI_PLUGIN);
        const char *argv[] = {"/usr/bin/timeout", HANG_LIMIT, self, "child-in-process", mode, NULL};
        status = tu_run(argv, NULL, NULL);
        tu_unsetenv("GPUFL_LOG_PATH");
        tu_unsetenv("GPUFL_PROFILING_ENGINE");
        tu_unsetenv("GPUFL_DEVICE_PLUGIN");
    } else {
        const char *argv[] = {
            "/usr/bin/timeout", HANG_LIMIT, GFL_CLI, "run", "--log-path", logs, "--", self, "child", mode, NULL};
        status = tu_run(argv, NULL, NULL);
    }
    EXPECT(status != 124, "hung: still running after %s s", HANG_LIMIT);
    EXPECT(status == expect_status, "exit status %d, expected %d", status, expect_status);
    if (status != 124)
        check_session(label, logs, !strcmp(mode, "exit-thread"));
    tu_rm_rf(logs);
    free(logs);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "child"))
        return child(argv[2], false);
    if (argc == 3 && !strcmp(argv[1], "child-in-process"))
        return child(argv[2], true);
    skip_without_gpu();
    if (!GFL_CUPTI_PLUGIN[0]) {
        printf("SKIP: the CUPTI plugin was not built\n");
        return GPU_SKIP_CODE;
    }
    const char *self = argv[0];
    char resolved[4096];
    if (realpath(argv[0], resolved))
        self = resolved;
    run_case(self, "return", false, 0);
    run_case(self, "exit-thread", false, 0);
    run_case(self, "sigterm", false, 128 + SIGTERM);
    run_case(self, "reset", false, 0);
    run_case(self, "return", true, 0);
    run_case(self, "exit-thread", true, 0);
    run_case(self, "reset", true, 0);
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("all exit paths left complete sessions\n");
    return 0;
}
