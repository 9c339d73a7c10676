/*
 * What the Trace engine adds to a kernel launch: 200 000 empty kernel
 * launches (<<<1, 1>>>) timed three ways, side by side in one run:
 *
 *   none    no tracing
 *   cupti   a minimal CUPTI client written here: the activity kinds gpufl's
 *           Trace engine enables with the default options (concurrent
 *           kernels, memcpy, memcpy2, memset, synchronization, external
 *           correlation, and API records of the launch entry points only;
 *           no MEMORY2, since enable_memory_tracking is off by default),
 *           buffer callbacks that only count records, and an empty API
 *           callback on the launch entry points; the floor any CUPTI-based
 *           tracer pays
 *   gpufl   gpufl_init() with the Trace engine, in process
 *
 * CUPTI attaches to a process once and cannot be cleanly detached and
 * attached again, so every measurement is a fresh process: this binary
 * re-executed with --variant. Runs alternate their order; the figures are
 * medians. Time per launch = (launch loop + final cudaDeviceSynchronize) / N,
 * so work the tracer adds on the GPU counts too; the loop alone is shown
 * beside it. gpufl's session must hold N + warm-up kernel records and no
 * dropped ones, or the benchmark fails.
 *
 * The ratio's spread: each round runs every variant once, back to back, so
 * the ratio within a round sees the same drift; the rounds' ratios are
 * given as median [min, max].
 *
 *     bench_launch_overhead [RUNS_EACH [LAUNCHES]]     (default 7, 200000)
 *     bench_launch_overhead --variant none|cupti|gpufl LAUNCHES   (one run)
 */
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <cuda_runtime.h>
#include <cupti.h>
#include <jansson.h>

#include "bench_util.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"

#ifndef GFL_CUPTI_PLUGIN
#define GFL_CUPTI_PLUGIN ""
#endif

#define WARMUP 1000

__global__ void empty_kernel() {}

/* What one child measured. */
struct result {
    double loop_ns, total_ns; /* per launch */
    long long kernels;        /* kernel records the tracer delivered; -1 = none */
    long long dropped;
};

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the minimal CUPTI client ----------------------------------------------- */

#define CUPTI_BUFFER_BYTES (8u << 20)
static std::atomic<long long> cupti_kernels, cupti_api_records, cupti_other, cupti_dropped;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = (uint8_t *)aligned_alloc(8, CUPTI_BUFFER_BYTES);
    *size = *buffer ? CUPTI_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)size;
    CUpti_Activity *rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            cupti_kernels++;
        else if (rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME || rec->kind == CUPTI_ACTIVITY_KIND_DRIVER)
            cupti_api_records++;
        else
            cupti_other++;
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        cupti_dropped += (long long)dropped;
    free(buffer);
}

static void CUPTIAPI on_api(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

/* The launch entry points, as gpufl's Trace engine picks them: by name,
 * whatever the version suffix ("cudaLaunchKernel_v7000", CUDA 13's
 * "__cudaLaunchKernel_v13000", "cuLaunchKernelEx", "cudaGraphLaunch"). */
static bool is_launch(const char *name)
{
    while (*name == '_')
        name++;
    return !strncmp(name, "cudaLaunch", 10) || !strncmp(name, "cuLaunch", 8) || !strncmp(name, "cudaGraphLaunch", 15) ||
           !strncmp(name, "cuGraphLaunch", 13);
}

/* A callback on each launch entry point and, as gpufl does for external
 * correlation, the API activity records of those entry points only. */
static int enable_launch_callbacks(CUpti_SubscriberHandle sub, CUpti_CallbackDomain domain, uint32_t n)
{
    int enabled = 0;
    for (uint32_t cbid = 1; cbid < n; cbid++) {
        const char *name = nullptr;
        if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name || !is_launch(name))
            continue;
        if (cuptiEnableCallback(1, sub, domain, cbid) == CUPTI_SUCCESS)
            enabled++;
        if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
            cuptiActivityEnableRuntimeApi(cbid, 1);
        else
            cuptiActivityEnableDriverApi(cbid, 1);
    }
    return enabled;
}

static bool start_minimal_cupti(void)
{
    static const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    };
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS)
        return false;
    for (CUpti_ActivityKind k : kinds)
        if (cuptiActivityEnable(k) != CUPTI_SUCCESS)
            std::fprintf(stderr, "minimal CUPTI client: activity kind %d not enabled\n", (int)k);
    CUpti_SubscriberHandle sub;
    if (cuptiSubscribe(&sub, on_api, nullptr) != CUPTI_SUCCESS)
        return false;
    int n = enable_launch_callbacks(sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE) +
            enable_launch_callbacks(sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
    return n > 0;
}

/* ---- gpufl's session, read back ----------------------------------------------- */

/* Kernel lines in device.log and its rotated parts (a 200 000-kernel session
 * is past the default rotation size). */
static long long count_kernel_lines(const char *session)
{
    long long n = 0;
    DIR *d = opendir(session);
    struct dirent *e;
    while (d && (e = readdir(d)) != nullptr) {
        if (strncmp(e->d_name, "device.", 7) || !strstr(e->d_name, ".log"))
            continue;
        std::string path = std::string(session) + "/" + e->d_name;
        char *text = tu_read_file(path.c_str(), nullptr);
        for (char *line = text; line && *line;) {
            n += !strncmp(line, "{\"type\":\"kernel\"", 16);
            char *nl = strchr(line, '\n');
            line = nl ? nl + 1 : nullptr;
        }
        free(text);
    }
    if (d)
        closedir(d);
    return n;
}

static long long session_dropped(const char *session)
{
    std::string path = std::string(session) + "/session.json";
    json_t *j = json_load_file(path.c_str(), 0, nullptr);
    json_t *total = json_object_get(json_object_get(j, "summary"), "dropped_total");
    long long n = json_is_integer(total) ? json_integer_value(total) : -1;
    json_decref(j);
    return n;
}

/* ---- one measurement (the child) ----------------------------------------------- */

static int measure(const char *variant, long n)
{
    result r = {0, 0, -1, 0};
    char *logs = nullptr;
    if (!strcmp(variant, "cupti") && !start_minimal_cupti()) {
        std::fprintf(stderr, "minimal CUPTI client: could not start\n");
        return 1;
    }
    if (!strcmp(variant, "gpufl")) {
        logs = bench_tmpdir();
        gpufl_options o;
        gpufl_options_init(&o);
        o.app_name = "bench_launch";
        o.log_path = logs;
        o.profiling_engine = GPUFL_ENGINE_TRACE;
        if (!std::getenv("GPUFL_DEVICE_PLUGIN")) /* the environment may name another */
            o.device_plugin = GFL_CUPTI_PLUGIN;
        if (!gpufl_init(&o)) {
            std::fprintf(stderr, "gpufl_init: %s\n", gpufl_last_error());
            return 1;
        }
    }
    cudaError_t rc = cudaFree(nullptr);
    if (rc != cudaSuccess) {
        std::fprintf(stderr, "no CUDA context: %s\n", cudaGetErrorString(rc));
        return 1;
    }
    for (int i = 0; i < WARMUP; i++)
        empty_kernel<<<1, 1>>>();
    if (cudaDeviceSynchronize() != cudaSuccess)
        return 1;
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++)
        empty_kernel<<<1, 1>>>();
    uint64_t t1 = bench_now_ns();
    if (cudaDeviceSynchronize() != cudaSuccess)
        return 1;
    uint64_t t2 = bench_now_ns();
    r.loop_ns = (double)(t1 - t0) / n;
    r.total_ns = (double)(t2 - t0) / n;
    if (!strcmp(variant, "cupti")) {
        cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        r.kernels = cupti_kernels;
        r.dropped = cupti_dropped;
    }
    if (logs) {
        gpufl_shutdown();
        std::string session = gpufl_session_dir();
        r.kernels = count_kernel_lines(session.c_str());
        r.dropped = session_dropped(session.c_str());
        tu_rm_rf(logs);
        free(logs);
    }
    std::printf("RESULT %.3f %.3f %lld %lld\n", r.loop_ns, r.total_ns, r.kernels, r.dropped);
    return 0;
}

/* ---- the parent -------------------------------------------------------------- */

/* Runs this binary with --variant in a fresh process; false if it failed. */
static bool run_child(const char *variant, long n, result *r)
{
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        std::string count = std::to_string(n);
        execl("/proc/self/exe", "bench_launch_overhead", "--variant", variant, count.c_str(), (char *)nullptr);
        _exit(127);
    }
    close(fds[1]);
    char buf[512] = "";
    size_t used = 0;
    ssize_t got;
    while (used < sizeof buf - 1 && (got = read(fds[0], buf + used, sizeof buf - 1 - used)) > 0)
        used += (size_t)got;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const char *line = strstr(buf, "RESULT ");
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 && line &&
           std::sscanf(line, "RESULT %lf %lf %lld %lld", &r->loop_ns, &r->total_ns, &r->kernels, &r->dropped) == 4;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--variant"))
        return measure(argv[2], std::atol(argv[3]));
    int runs = argc > 1 ? std::atoi(argv[1]) : 7;
    long n = argc > 2 ? std::atol(argv[2]) : 200000;
    const char *names[3] = {"none", "cupti", "gpufl"};
    const char *labels[3] = {"no tracing          ", "minimal CUPTI client", "gpufl Trace engine  "};
    std::vector<result> res[3];
    for (int r = 0; r < runs; r++) {
        /* alternate the order, so drifts in clocks and temperature hit all alike */
        for (int k = 0; k < 3; k++) {
            int v = r % 2 ? 2 - k : k;
            result one;
            if (!run_child(names[v], n, &one)) {
                std::fprintf(stderr, "bench_launch_overhead: the %s run failed (see above)\n", names[v]);
                return 1;
            }
            res[v].push_back(one);
        }
    }
    char machine[512];
    bench_machine(machine, sizeof machine);
    std::printf("bench_launch_overhead (%s)\n", machine);
    std::printf("  %ld empty kernel launches <<<1, 1>>> after %d warm-up ones; %d runs of each, each a "
                "fresh process, order alternating\n",
                n, WARMUP, runs);
    std::printf("  ns per launch (loop + final sync):\n");
    double med[3], loop[3];
    for (int v = 0; v < 3; v++) {
        std::vector<double> total, only;
        for (const result &x : res[v]) {
            total.push_back(x.total_ns);
            only.push_back(x.loop_ns);
        }
        med[v] = median(total);
        loop[v] = median(only);
        std::printf("    %s", labels[v]);
        for (double t : total)
            std::printf(" %8.1f", t);
        std::printf("   median %8.1f (loop alone %8.1f)\n", med[v], loop[v]);
    }
    std::printf("  ratio gpufl / minimal CUPTI: %.3f (loop alone %.3f)\n", med[2] / med[1], loop[2] / loop[1]);
    std::vector<double> rounds;
    for (int r = 0; r < runs; r++)
        rounds.push_back(res[2][r].total_ns / res[1][r].total_ns);
    std::printf("    per round: median %.3f, min %.3f, max %.3f over %d rounds\n", median(rounds),
                *std::min_element(rounds.begin(), rounds.end()), *std::max_element(rounds.begin(), rounds.end()), runs);
    std::printf("  ratio gpufl / none:          %.3f (loop alone %.3f)\n", med[2] / med[0], loop[2] / loop[0]);
    std::printf("  ratio minimal CUPTI / none:  %.3f (loop alone %.3f)\n", med[1] / med[0], loop[1] / loop[0]);
    bool ok = true;
    for (int v = 1; v < 3; v++) {
        std::printf("  %s kernel records per run:", labels[v]);
        for (const result &x : res[v])
            std::printf(" %lld", x.kernels);
        std::printf("; dropped:");
        for (const result &x : res[v])
            std::printf(" %lld", x.dropped);
        std::printf("\n");
    }
    for (const result &x : res[2])
        ok = ok && x.kernels == n + WARMUP && x.dropped == 0;
    if (!ok)
        std::printf("  FAILED: every gpufl run must record %ld kernels and drop none\n", n + WARMUP);
    return ok ? 0 : 1;
}
