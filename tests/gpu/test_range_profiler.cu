/*
 * The range_profiler engine on a GPU. A copy kernel moves a known number
 * of bytes (256 MiB read, 256 MiB written: five times an H100's L2, so
 * nearly all of it is DRAM traffic) in each of three "copy" scopes; a
 * "spin" scope holds a kernel that touches no memory; an "outer" scope
 * holds a copy and an "inner" scope with a spin.
 *
 * Checks: the engine ran (no step down); every range has its scope's name
 * and id; each "copy" range's DRAM bytes read and written are within 5 %
 * of the bytes the kernel moved; the "spin" range's are under 1 MiB; the
 * "outer" scope makes two ranges, the copy's (within 5 %) and, after
 * "inner" ended, one with no kernel (under 1 MiB): the inner scope's work
 * is its own range. Prints every range's metrics, for the comparison with
 * ncu.
 *
 * Modes: early (gpufl before any CUDA call), late (a context first: the
 * profiler then starts on it at the first scope, or the session says why
 * not), bare (the copy kernel alone, no gpufl: what ncu profiles).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <cuda_runtime.h>

#include "gpu_skip.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "spin.cuh"

#define N_FLOATS (64ull << 20) /* 256 MiB */
#define MOVED ((double)N_FLOATS * sizeof(float))

__global__ void copy(const float4 *in, float4 *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i];
}

static float *in_buf, *out_buf;

static void run_copy(void)
{
    copy<<<1024, 256>>>((const float4 *)in_buf, (float4 *)out_buf, N_FLOATS / 4);
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "copy");
}

static void alloc(void)
{
    CHECK(cudaMalloc(&in_buf, N_FLOATS * sizeof(float)) == cudaSuccess, "malloc");
    CHECK(cudaMalloc(&out_buf, N_FLOATS * sizeof(float)) == cudaSuccess, "malloc");
    CHECK(cudaMemset(in_buf, 1, N_FLOATS * sizeof(float)) == cudaSuccess, "memset");
    CHECK(cudaMemset(out_buf, 0, N_FLOATS * sizeof(float)) == cudaSuccess, "memset");
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "sync");
}

static const char *str(const gpufl_trace *t, uint32_t id)
{
    const char *s = gpufl_trace_string(t, id);
    return s ? s : "";
}

static double metric(const gpufl_trace *t, uint32_t range, const char *name)
{
    const gpufl_trace_range_metrics *r = gpufl_trace_get_range_metrics(t);
    for (size_t i = 0; i < r->n; i++)
        if (r->range[i] == range && !std::strcmp(str(t, r->metric[i]), name))
            return r->value[i];
    return -1;
}

int main(int argc, char **argv)
{
    skip_without_gpu();
    const char *mode = argc > 1 ? argv[1] : "early";
    if (!std::strcmp(mode, "bare")) {
        alloc();
        run_copy();
        std::printf("copy kernel ran once: %.0f bytes read, %.0f written\n", MOVED, MOVED);
        return 0;
    }
    bool late = !std::strcmp(mode, "late");
    if (late)
        CHECK(cudaFree(0) == cudaSuccess, "context");
    char dir_template[] = "/tmp/gpufl-rp-XXXXXX";
    const char *log_path = mkdtemp(dir_template);
    CHECK(log_path, "mkdtemp");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = late ? "range-profiler-late" : "range-profiler";
    o.log_path = log_path;
    o.profiling_engine = GPUFL_ENGINE_RANGE_PROFILER;
    if (GFL_CUPTI_PLUGIN[0])
        o.device_plugin = GFL_CUPTI_PLUGIN;
    o.system_sample_rate_ms = 0;
    CHECK(gpufl_init(&o), "gpufl_init: %s", gpufl_last_error());
    std::string dir = gpufl_session_dir() ? gpufl_session_dir() : "";
    alloc();
    for (int i = 0; i < 3; i++) {
        gpufl_scope s = gpufl_scope_begin("copy");
        run_copy();
        gpufl_scope_end(s);
    }
    {
        gpufl_scope s = gpufl_scope_begin("spin");
        spin<<<132, 128>>>(20000000ull);
        CHECK(cudaDeviceSynchronize() == cudaSuccess, "spin");
        gpufl_scope_end(s);
    }
    {
        gpufl_scope outer = gpufl_scope_begin("outer");
        run_copy();
        gpufl_scope inner = gpufl_scope_begin("inner");
        spin<<<132, 128>>>(20000000ull);
        CHECK(cudaDeviceSynchronize() == cudaSuccess, "spin");
        gpufl_scope_end(inner);
        gpufl_scope_end(outer);
    }
    gpufl_shutdown();
    CHECK(!dir.empty(), "no session dir");

    gpufl_trace *t = nullptr;
    char err[512];
    CHECK(gpufl_trace_open(dir.c_str(), &t, err, sizeof err) == 0, "open %s: %s", dir.c_str(), err);
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    std::printf("session %s: engine %s (asked %s)%s%s\n", dir.c_str(), str(t, info->engine),
                str(t, info->engine_requested), info->engine_reason ? ": " : "", str(t, info->engine_reason));
    const gpufl_trace_range_metrics *r = gpufl_trace_get_range_metrics(t);
    if (late && std::strcmp(str(t, info->engine), "range_profiler")) {
        CHECK(r->n == 0 && info->engine_reason && str(t, info->engine_reason)[0], "a late step down says why");
        std::printf("PASS (late start stepped down to %s)\n", str(t, info->engine));
        gpufl_trace_close(t);
        return 0;
    }
    CHECK(!std::strcmp(str(t, info->engine), "range_profiler"), "the engine stepped down: %s",
          str(t, info->engine_reason));
    uint32_t last = 0, copies = 0, spins = 0, outers = 0, inners = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->range[i] == last)
            continue;
        last = r->range[i];
        const char *name = str(t, r->name[i]);
        std::printf("range %u %-6s scope %llx %8.3f ms:", last, name, (unsigned long long)r->scope_id[i],
                    (double)(r->end_ns[i] - r->ts_ns[i]) / 1e6);
        for (size_t j = i; j < r->n && r->range[j] == last; j++)
            std::printf(" %s=%.4g", str(t, r->metric[j]), r->value[j]);
        std::printf("\n");
        CHECK(r->scope_id[i] != 0, "range %u has no scope", last);
        double rd = metric(t, last, "dram__bytes_read.sum"), wr = metric(t, last, "dram__bytes_write.sum");
        bool resumed_outer = !std::strcmp(name, "outer") && outers == 1;
        if (!std::strcmp(name, "copy") || (!std::strcmp(name, "outer") && !resumed_outer)) {
            CHECK(rd >= 0 && wr >= 0, "DRAM bytes were not counted (metrics kept: see the session log)");
            CHECK(rd > 0.95 * MOVED && rd < 1.05 * MOVED, "%s read %.0f bytes of DRAM, moved %.0f", name, rd, MOVED);
            CHECK(wr > 0.95 * MOVED && wr < 1.05 * MOVED, "%s wrote %.0f bytes of DRAM, moved %.0f", name, wr, MOVED);
            std::printf("  DRAM read %+.2f %%, written %+.2f %% of the bytes moved\n", (rd / MOVED - 1) * 100,
                        (wr / MOVED - 1) * 100);
            copies += !std::strcmp(name, "copy");
            outers += !std::strcmp(name, "outer");
        } else if (!std::strcmp(name, "spin") || !std::strcmp(name, "inner") || resumed_outer) {
            CHECK(rd < 1048576.0 && wr < 1048576.0, "%s moved %.0f + %.0f bytes of DRAM", name, rd, wr);
            spins += !std::strcmp(name, "spin");
            inners += !std::strcmp(name, "inner");
            outers += resumed_outer;
        }
    }
    CHECK(copies == 3 && spins == 1 && outers == 2 && inners == 1, "ranges: %u copy, %u spin, %u outer, %u inner",
          copies, spins, outers, inners);
    gpufl_trace_close(t);
    std::printf("PASS\n");
    return 0;
}
