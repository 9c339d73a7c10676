/*
 * Cost of leaving gpufl's Monitor engine on (issue 3): wall time of a fixed
 * GPU workload, 2000 cuBLAS SGEMMs of 4096 x 4096, with no gpufl and with
 * Monitor sampling NVML and host metrics every 50 ms, side by side in one
 * run. Each measurement is a fresh child process (CUDA does not survive
 * fork, so the parent never touches it), baseline and Monitor alternating;
 * the ratio is of the medians. Also: the cost of one sampling round (NVML
 * for every GPU + host), in µs.
 *
 *     bench_monitor_overhead [RUNS_EACH]      (default 5)
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench_util.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "sampling_round.h"

#define N 4096
#define GEMMS 2000
#define SAMPLE_MS 50

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Child: the workload, with or without gpufl; returns seconds of the timed loop. */
static double workload(bool monitor, const char *logs)
{
    cublasHandle_t h;
    float *a, *b, *c;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cudaMalloc(&a, sizeof(float) * N * N) ||
        cudaMalloc(&b, sizeof(float) * N * N) || cudaMalloc(&c, sizeof(float) * N * N))
        return -1;
    cudaMemset(a, 0, sizeof(float) * N * N);
    cudaMemset(b, 0, sizeof(float) * N * N);
    const float one = 1, zero = 0;
    for (int i = 0; i < 20; i++) /* warm up clocks, caches and cuBLAS */
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N);
    cudaDeviceSynchronize();
    if (monitor) {
        gpufl_options o;
        gpufl_options_init(&o);
        o.app_name = "bench_monitor";
        o.log_path = logs;
        o.system_sample_rate_ms = SAMPLE_MS;
        o.continuous_system_sampling = true;
        if (!gpufl_init(&o)) {
            std::fprintf(stderr, "gpufl_init: %s\n", gpufl_last_error());
            return -1;
        }
    }
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < GEMMS; i++)
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N);
    cudaDeviceSynchronize();
    double secs = (double)(bench_now_ns() - t0) / 1e9;
    if (monitor)
        gpufl_shutdown();
    cublasDestroy(h);
    return secs;
}

/* Runs fn in a child and returns the doubles it wrote. */
template <typename F> static std::vector<double> in_child(F fn, size_t count)
{
    int fds[2];
    std::vector<double> out(count, -1);
    if (pipe(fds) != 0)
        return out;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        std::vector<double> v = fn();
        ssize_t w = write(fds[1], v.data(), sizeof(double) * count);
        _exit(w == (ssize_t)(sizeof(double) * count) ? 0 : 1);
    }
    if (read(fds[0], out.data(), sizeof(double) * count) != (ssize_t)(sizeof(double) * count))
        out.assign(count, -1);
    waitpid(pid, nullptr, 0);
    close(fds[0]);
    close(fds[1]);
    return out;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? std::atoi(argv[1]) : 5;
    char *logs = tu_mkdtemp_in(std::getenv("BENCH_DIR"), "monitor");
    std::vector<double> base, mon;
    for (int r = 0; r < runs; r++) {
        /* alternate, so drifts in clocks and temperature hit both alike */
        base.push_back(in_child([&] { return std::vector<double>{workload(false, logs)}; }, 1)[0]);
        mon.push_back(in_child([&] { return std::vector<double>{workload(true, logs)}; }, 1)[0]);
    }
    std::vector<double> cost = in_child(
        [] {
            double n = -1, h = -1;
            bench_sampling_round(200, &n, &h);
            return std::vector<double>{n, h};
        },
        2);
    char machine[512];
    bench_machine(machine, sizeof machine);
    if (*std::min_element(base.begin(), base.end()) < 0 || *std::min_element(mon.begin(), mon.end()) < 0 ||
        cost[0] < 0) {
        std::fprintf(stderr, "bench_monitor_overhead: nothing measured: no CUDA device, cuBLAS or NVML "
                             "(see the messages above)\n");
        tu_rm_rf(logs);
        return 1;
    }
    std::printf("bench_monitor_overhead (%s)\n", machine);
    std::printf("  workload: %d SGEMM %dx%dx%d (cuBLAS), %d runs each, alternating\n", GEMMS, N, N, N, runs);
    std::printf("  no gpufl          ");
    for (double v : base)
        std::printf(" %.4f", v);
    std::printf("  median %.4f s\n", median(base));
    std::printf("  Monitor, %d ms    ", SAMPLE_MS);
    for (double v : mon)
        std::printf(" %.4f", v);
    std::printf("  median %.4f s\n", median(mon));
    std::printf("  ratio Monitor / none: %.4f (target <= 1.005)\n", median(mon) / median(base));
    std::printf("  one sampling round: NVML (all GPUs) %.1f us, host %.1f us\n", cost[0], cost[1]);
    std::fflush(stdout);
    in_child([] { return std::vector<double>{(double)bench_nvml_call_costs()}; }, 1);
    tu_rm_rf(logs);
    return 0;
}
