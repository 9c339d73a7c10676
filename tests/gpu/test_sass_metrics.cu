/*
 * The SASS metrics engine against kernels built to show each effect:
 *
 *   k_coalesced   thread i reads in[i]: a warp's 32 floats are 4 sectors,
 *                 the ideal; coalescing efficiency near 100 %
 *   k_strided     thread i reads in[32 i]: each thread its own 32-byte
 *                 sector, 32 where 4 would do; efficiency 4/32 = 12.5 % for
 *                 the load, 22 % with the kernel's coalesced store, which
 *                 must be reported below 25 %
 *   k_divergent   odd and even lanes take different branches of a loop:
 *                 half the lanes idle in each, so the average active
 *                 threads per executed instruction fall well below 32
 *
 * In-process gpufl_init with engine sass_metrics; after gpufl_shutdown the
 * session is read back with the trace reader and the figures per kernel,
 * over its three launches, printed (and compared with ncu by the caller: `--plain` runs the same
 * launches without gpufl, for `ncu --metrics ...`). Exit 1 on a failed
 * check, 77 without a GPU.
 *
 *     test_sass_metrics [early|late|deep|deep_late|many_late|--plain]
 *       early  gpufl_init before the first CUDA call (the default)
 *       late   the CUDA context exists first: sass_metrics still measures
 *       deep   profiling_engine deep: SASS metrics and PC samples together
 *       deep_late  deep with the context there first: steps down to
 *              pc_sampling and says why
 *       many_late  late, and then 128 more kernels, each its own function
 *              launched for the first time 2 ms after the one before: CUPTI
 *              patches each at its first launch, and the run must end (it
 *              once hung, see engines.h) with rows for each of them
 *       --plain  no gpufl, for ncu
 *
 * A run that has not ended after HANG_S seconds says so and exits 1.
 */
#include <string>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <set>
#include <unistd.h>
#include <utility>

#include "gpu_skip.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "fs_util.h"
#include "test_util.h"

#ifndef GFL_CUPTI_PLUGIN
#define GFL_CUPTI_PLUGIN ""
#endif

#define N (1 << 20)
#define STRIDE 32
#define CUDA_OK(call) CHECK((call) == cudaSuccess, "%s", cudaGetErrorString(cudaGetLastError()))

__global__ void k_coalesced(const float *in, float *out)
{
    out[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f * in[blockIdx.x * blockDim.x + threadIdx.x];
}

__global__ void k_strided(const float *in, float *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2.0f * in[(i * STRIDE) % N];
}

__global__ void k_divergent(float *out, int rounds)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (float)i;
    if (threadIdx.x & 1) {
        for (int r = 0; r < rounds; r++)
            v = v * 1.0001f + 0.5f;
    } else {
        for (int r = 0; r < rounds; r++)
            v = v * 0.9999f - 0.25f;
    }
    out[i] = v;
}

static void launch_all(void)
{
    float *in, *out;
    CUDA_OK(cudaMalloc(&in, N * sizeof(float)));
    CUDA_OK(cudaMalloc(&out, N * sizeof(float)));
    CUDA_OK(cudaMemset(in, 0, N * sizeof(float)));
    for (int rep = 0; rep < 3; rep++) {
        k_coalesced<<<N / 256, 256>>>(in, out);
        k_strided<<<N / 256 / STRIDE, 256>>>(in, out);
        k_divergent<<<256, 256>>>(out, 64);
    }
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaFree(in));
    CUDA_OK(cudaFree(out));
}

#define MANY 128
#define HANG_S 60
#define STR_(x) #x
#define STR(x) STR_(x)

template <int I> __global__ void k_many(float *out) { out[blockIdx.x * blockDim.x + threadIdx.x] += (float)I; }

template <std::size_t... I> static void launch_each(float *out, std::index_sequence<I...>)
{
    ((usleep(2000), k_many<(int)I><<<4, 128>>>(out)), ...);
}

static void launch_many(void)
{
    float *out;
    CUDA_OK(cudaMalloc(&out, 4 * 128 * sizeof(float)));
    CUDA_OK(cudaMemset(out, 0, 4 * 128 * sizeof(float)));
    launch_each(out, std::make_index_sequence<MANY>{});
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaFree(out));
}

static void hung(int)
{
    static const char msg[] = "test_sass_metrics: still running after " STR(HANG_S) " s: hung (see engines.h)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

typedef struct figures {
    unsigned long long inst, thread_inst, sectors, ideal, branch, divergent, rows;
    unsigned lines; /* rows with a source line */
} figures;

static figures of(const gpufl_trace *t, const char *kernel)
{
    const gpufl_trace_sass_metrics *s = gpufl_trace_get_sass_metrics(t);
    figures f;
    std::memset(&f, 0, sizeof f);
    for (size_t i = 0; i < s->n; i++) {
        const char *name = gpufl_trace_string(t, s->function[i]);
        if (!name || !std::strstr(name, kernel))
            continue;
        f.rows++;
        f.inst += s->inst_executed[i];
        f.thread_inst += s->thread_inst_executed[i];
        f.sectors += s->sectors[i];
        f.ideal += s->sectors_ideal[i];
        f.branch += s->branch_targets[i];
        f.divergent += s->divergent_targets[i];
        f.lines += s->line[i] != 0;
    }
    return f;
}

int main(int argc, char **argv)
{
    skip_without_gpu();
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc > 1 && !std::strcmp(argv[1], "--plain")) {
        launch_all();
        return 0;
    }
    std::string mode = argc > 1 ? argv[1] : "early";
    std::signal(SIGALRM, hung);
    alarm(HANG_S);
    bool many = mode == "many_late";
    if (many)
        mode = "late";
    if (mode == "late" || mode == "deep_late")
        CUDA_OK(cudaFree(0)); /* the context exists before gpufl starts */
    char *logs = tu_mkdtemp("sass-metrics");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "sass_metrics";
    o.log_path = logs;
    o.profiling_engine = mode == "deep" || mode == "deep_late" ? GPUFL_ENGINE_DEEP : GPUFL_ENGINE_SASS_METRICS;
    o.enable_source_collection = true;
    o.enable_debug_output = true; /* the engine's log (metrics the chip offers, counts read) on stderr */
    o.device_plugin = GFL_CUPTI_PLUGIN;
    /* deep's PC sampling (deep_late records only that), on nine kernels
     * that run for microseconds: the default 2^19 cycles between samples
     * (about 260 us an SM) gave them no sample on an H200, 2^13 gives each
     * some */
    o.pc_sampling_period = 13;
    CHECK(gpufl_init(&o), "%s", gpufl_last_error());
    launch_all();
    if (many)
        launch_many();
    gpufl_shutdown();

    char *dir = tu_session_dir(logs);
    CHECK(dir, "one session directory under %s", logs);
    gpufl_trace *t = NULL;
    char err[512] = "";
    CHECK(gpufl_trace_open(dir, &t, err, sizeof err) == 0 && t, "cannot read the session in %s: %s", dir, err);
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    const char *engine = gpufl_trace_string(t, info->engine), *why = gpufl_trace_string(t, info->engine_reason);
    std::printf("engine %s%s%s\n", engine ? engine : "?", why && *why ? ": " : "", why ? why : "");
    if (mode == "deep_late") {
        CHECK(engine && !std::strcmp(engine, "pc_sampling") && why && std::strstr(why, "first CUDA context"),
              "deep started late recorded as %s: %s", engine ? engine : "?", why ? why : "");
        CHECK(gpufl_trace_get_sass_metrics(t)->n == 0 && gpufl_trace_get_pc_samples(t)->n > 0,
              "deep started late: %zu SASS rows, %zu PC sample rows", gpufl_trace_get_sass_metrics(t)->n,
              gpufl_trace_get_pc_samples(t)->n);
        gpufl_trace_close(t);
        tu_rm_rf(logs);
        std::printf("ok\n");
        return 0;
    }
    CHECK(engine && !std::strcmp(engine, mode == "deep" ? "deep" : "sass_metrics"), "the session recorded as %s: %s",
          engine ? engine : "?", why ? why : "");
    const gpufl_trace_sass_metrics *s = gpufl_trace_get_sass_metrics(t);
    std::printf("sass_metric rows: %zu, pc_sample rows: %zu\n", s->n, gpufl_trace_get_pc_samples(t)->n);
    if (mode == "deep")
        CHECK(gpufl_trace_get_pc_samples(t)->n > 0, "deep recorded no PC samples");
    CHECK(s->n > 0, "no SASS metric rows: the engine recorded nothing (see gpufl's log in %s)", dir);
    const char *kernels[] = {"k_coalesced", "k_strided", "k_divergent"};
    figures f[3];
    for (int k = 0; k < 3; k++) {
        f[k] = of(t, kernels[k]);
        double eff = f[k].sectors ? 100.0 * (double)f[k].ideal / (double)f[k].sectors : 0.0;
        double active = f[k].inst ? (double)f[k].thread_inst / (double)f[k].inst : 0.0;
        std::printf("%-12s rows %llu lines %u | inst %llu thread_inst %llu (%.2f threads/inst) | "
                    "sectors %llu ideal %llu (coalescing %.1f %%) | branch targets %llu divergent %llu\n",
                    kernels[k], f[k].rows, f[k].lines, f[k].inst, f[k].thread_inst, active, f[k].sectors, f[k].ideal,
                    eff, f[k].branch, f[k].divergent);
    }
    int failed = 0;
#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "check failed: %s: ", #cond);                                                         \
            std::fprintf(stderr, __VA_ARGS__);                                                                         \
            std::fprintf(stderr, "\n");                                                                                \
            failed = 1;                                                                                                \
        }                                                                                                              \
    } while (0)
    /* the counts are of all three launches together: each launch of
     * k_coalesced executes each of its instructions once per warp */
    for (int k = 0; k < 3; k++)
        EXPECT(f[k].rows > 0 && (mode == "deep" ? f[k].lines == 0 : f[k].lines > 0),
               "%s: %llu rows, %u with a source line (deep: none, sass_metrics.c says why)", kernels[k], f[k].rows,
               f[k].lines);
    EXPECT(f[0].inst % (3ull * (N / 32)) == 0,
           "coalesced kernel: %llu warp instructions is not a multiple of 3 x %d warps", f[0].inst, N / 32);
    EXPECT(f[0].sectors && f[0].ideal * 100 >= f[0].sectors * 90, "coalesced kernel: efficiency %llu/%llu below 90 %%",
           f[0].ideal, f[0].sectors);
    EXPECT(f[1].sectors && f[1].ideal * 100 < f[1].sectors * 25, "strided kernel: efficiency %llu/%llu not below 25 %%",
           f[1].ideal, f[1].sectors);
    /* the sectors follow from the access pattern alone, whatever the
     * compiler made of it, and are what ncu counted on an H100
     * (smsp__sass_sectors_mem_global, 2026-11-27): per launch, k_coalesced
     * 4 load and 4 store sectors a warp (262 144), k_strided 32 load and 4
     * store sectors a warp (36 864); three launches each */
    EXPECT(f[0].sectors == 3ull * 262144, "coalesced kernel: %llu sectors, ncu 3 x 262 144", f[0].sectors);
    EXPECT(f[1].sectors == 3ull * 36864, "strided kernel: %llu sectors, ncu 3 x 36 864", f[1].sectors);
    EXPECT(f[2].inst && f[2].thread_inst * 100 < f[2].inst * 32 * 75,
           "divergent kernel: %llu threads over %llu instructions is not below 75 %% of 32", f[2].thread_inst,
           f[2].inst);
    EXPECT(f[0].inst && f[0].thread_inst == f[0].inst * 32, "coalesced kernel: not every lane active (%llu / %llu)",
           f[0].thread_inst, f[0].inst);
    if (many) {
        std::set<std::string> measured;
        for (size_t i = 0; i < s->n; i++) {
            const char *name = gpufl_trace_string(t, s->function[i]);
            if (name && std::strstr(name, "k_many"))
                measured.insert(name);
        }
        std::printf("k_many: %zu of %d functions with rows\n", measured.size(), MANY);
        EXPECT(measured.size() == MANY, "%zu of the %d k_many functions have SASS rows", measured.size(), MANY);
    }
    gpufl_trace_close(t);
    if (!failed)
        tu_rm_rf(logs);
    return failed;
}
