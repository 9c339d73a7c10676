/*
 * The Trace engine against work whose every detail is known in advance.
 *
 * One thread, in-process gpufl_init with the Trace engine, syncs, memory and
 * graph tracking on; then a fixed script: kernels of three kinds with known
 * launch shapes over three streams, copies of known sizes and memory kinds,
 * a memset, every kind of synchronization, plain and stream-ordered
 * allocations, and a captured CUDA graph launched three times; gpufl scopes
 * and NVTX ranges around the phases. After gpufl_shutdown() the logs are
 * read back and compared with the script exactly (trace_known_work.cuh):
 * counts per kernel name, launch shapes, resources against
 * cudaFuncGetAttributes, occupancy against the CUDA occupancy calculator,
 * per-stream order, copy and memset records, syncs, allocation/free pairs,
 * graph records, scope and NVTX attribution, unique correlation ids, sane
 * timestamps and no losses.
 *
 * Every failed check prints a line; the test exits 1 if any failed, 77
 * (skipped) without a GPU.
 *
 *     test_trace_known_work [PLUGIN]    PLUGIN: libgpufl_cupti.so to load
 *                                       (default: the one built with the test)
 */
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "gpufl/gpufl.h"
#include "trace_known_work.cuh"

#ifndef GFL_CUPTI_PLUGIN
#define GFL_CUPTI_PLUGIN ""
#endif
#ifndef GFL_CUPTI_LIB
#define GFL_CUPTI_LIB ""
#endif

#define CUDA_OK(call) CHECK((call) == cudaSuccess, "%s", cudaGetErrorString(cudaGetLastError()))

/* ---- the kernels --------------------------------------------------------- */

__global__ void k_fill(float *out, float v) { out[blockIdx.x * blockDim.x + threadIdx.x] = v; }

/* 1 KiB of static shared memory plus whatever dynamic amount the launch gives. */
__global__ void k_smem(float *out)
{
    __shared__ float tile[256];
    extern __shared__ float dyn[];
    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    tile[t] = (float)t;
    dyn[t] = 2.0f * t;
    __syncthreads();
    out[(blockIdx.x + gridDim.x * blockIdx.y) * 256 + t] = tile[255 - t] + dyn[t];
}

/* An array indexed at run time lives in local memory. */
__global__ void k_local(float *out, int pick)
{
    float scratch[64];
    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned t = b * blockDim.x + threadIdx.x;
    for (int j = 0; j < 64; j++)
        scratch[j] = out[4096 + (t + 7 * j) % 2048] + j; /* read past what the kernel writes */
    out[t] = scratch[(pick + threadIdx.x) & 63];
}

__global__ void k_graph_a(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f; }
__global__ void k_graph_b(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] *= 2.0f; }

static kspec specs[K_COUNT] = {
    {"k_fill", "_Z6k_fillPff", (const void *)k_fill, dim3(64), dim3(128), 0, {}, 0, 0},
    {"k_smem", "_Z6k_smemPf", (const void *)k_smem, dim3(16, 2), dim3(32, 4, 2), 40960, {}, 0, 0},
    {"k_local", "_Z7k_localPfi", (const void *)k_local, dim3(3, 3, 3), dim3(96), 1024, {}, 0, 0},
    {"k_graph_a", "_Z9k_graph_aPf", (const void *)k_graph_a, dim3(2), dim3(64), 0, {}, 0, 0},
    {"k_graph_b", "_Z9k_graph_bPf", (const void *)k_graph_b, dim3(4), dim3(32), 512, {}, 0, 0},
};

static int max_warps_per_sm, max_blocks_per_sm;

static void describe_kernels(void)
{
    int threads = 0;
    CUDA_OK(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
    CUDA_OK(cudaDeviceGetAttribute(&max_blocks_per_sm, cudaDevAttrMaxBlocksPerMultiprocessor, 0));
    max_warps_per_sm = threads / 32;
    for (kspec &k : specs) {
        CUDA_OK(cudaFuncGetAttributes(&k.attr, k.fn));
        int block = (int)(k.block.x * k.block.y * k.block.z);
        CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.blocks_per_sm, k.fn, block, k.dyn_smem));
        int warps = (block + 31) / 32;
        k.occ_x10000 = std::lround(10000.0 * k.blocks_per_sm * warps / max_warps_per_sm);
        std::printf("%-9s regs %d, smem static %zu, local %zu, %d blocks/SM, occupancy %.4f\n", k.base, k.attr.numRegs,
                    k.attr.sharedSizeBytes, k.attr.localSizeBytes, k.blocks_per_sm, k.occ_x10000 / 10000.0);
    }
}

static void launch(int k, cudaStream_t s, float *out)
{
    const kspec &sp = specs[k];
    switch (k) {
    case K_FILL: k_fill<<<sp.grid, sp.block, sp.dyn_smem, s>>>(out, 1.0f); break;
    case K_SMEM: k_smem<<<sp.grid, sp.block, sp.dyn_smem, s>>>(out); break;
    case K_LOCAL: k_local<<<sp.grid, sp.block, sp.dyn_smem, s>>>(out, 5); break;
    case K_GRAPH_A: k_graph_a<<<sp.grid, sp.block, sp.dyn_smem, s>>>(out); break;
    case K_GRAPH_B: k_graph_b<<<sp.grid, sp.block, sp.dyn_smem, s>>>(out); break;
    }
    CUDA_OK(cudaGetLastError());
}

/* A gpufl scope and an NVTX range around a phase; "" for no NVTX range. */
struct phase {
    gpufl_scope scope;
    bool nvtx;
    phase(const char *name, const char *range) : scope(gpufl_scope_begin(name)), nvtx(range != nullptr)
    {
        if (nvtx)
            nvtxRangePushA(range);
    }
    ~phase()
    {
        if (nvtx)
            nvtxRangePop();
        gpufl_scope_end(scope);
    }
};

/*
 * NVTX calls reach nobody unless NVTX_INJECTION64_PATH names a library that
 * implements them when the program makes its first NVTX call (nvtx3 reads it
 * once, then dlopens it); CUPTI's library is such an implementation, and it
 * is how NVTX ranges reach the Trace engine. gpufl_init() sets it when unset
 * (FORMAT.md), but the test does not rely on that: it points it at the
 * libcupti that the plugin loaded (found with dladdr on one of its symbols),
 * or at the toolkit's.
 */
static void point_nvtx_at_cupti(void)
{
    const char *set = std::getenv("NVTX_INJECTION64_PATH");
    if (set && *set) {
        std::printf("NVTX_INJECTION64_PATH=%s\n", set);
        return;
    }
    const char *names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
    for (const char *name : names) {
        void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        Dl_info info;
        void *sym = dlsym(h, "cuptiGetVersion");
        bool found = sym && dladdr(sym, &info) && info.dli_fname;
        if (found)
            tu_setenv("NVTX_INJECTION64_PATH", info.dli_fname);
        dlclose(h);
        if (found) {
            std::printf("NVTX_INJECTION64_PATH=%s (the loaded CUPTI)\n", std::getenv("NVTX_INJECTION64_PATH"));
            return;
        }
    }
    CHECK(GFL_CUPTI_LIB[0] && access(GFL_CUPTI_LIB, R_OK) == 0, "no CUPTI library for NVTX");
    tu_setenv("NVTX_INJECTION64_PATH", GFL_CUPTI_LIB);
    std::printf("NVTX_INJECTION64_PATH=%s (the toolkit's)\n", GFL_CUPTI_LIB);
}

/* The kernels phase: stream = i % 6 in {0,0,0,1,1,2}, kernels in the
 * proportion 4:3:2. With the launches before and after it, the streams get
 * 18, 9 and 4 kernels: different counts, which is how the checks tell their
 * records apart (CUPTI's stream ids are not cudaStream_t values). */
static int stream_of(int i) { return i % 6 < 3 ? 0 : i % 6 < 5 ? 1 : 2; }
static int kernel_of(int i)
{
    static const int seq[9] = {K_FILL, K_SMEM, K_FILL, K_LOCAL, K_SMEM, K_FILL, K_SMEM, K_LOCAL, K_FILL};
    return seq[i % 9];
}

static void run_script(script &sc)
{
    cudaStream_t st[N_STREAMS], gs;
    float *out;
    char *dev_a, *dev_b, *host_page, *host_pin;
    for (cudaStream_t &s : st)
        CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_OK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
    {
        /* Multiples of 2 MiB, so that a record of the size requested and
         * one rounded to the allocation granularity agree. */
        phase p("setup", nullptr);
        CUDA_OK(cudaMalloc(&out, 2 * MiB));
        CUDA_OK(cudaMalloc(&dev_a, 4 * MiB));
        CUDA_OK(cudaMalloc(&dev_b, 4 * MiB));
        sc.allocs.push_back({out, 2 * MiB, false});
        sc.allocs.push_back({dev_a, 4 * MiB, false});
        sc.allocs.push_back({dev_b, 4 * MiB, false});
        CUDA_OK(cudaMallocHost(&host_pin, 4 * MiB));
        host_page = (char *)std::malloc(4 * MiB);
        CHECK(host_page, "malloc");
        std::memset(host_page, 1, 4 * MiB);
        std::memset(host_pin, 2, 4 * MiB);
    }
    /* Each stream writes its own quarter of out: no two kernels race. */
    auto region = [&](int stream) { return out + stream * (128 * 1024); };

    /* Outside any scope or range: the records must carry neither. */
    for (int i = 0; i < 2; i++) {
        launch(K_FILL, st[0], region(0));
        sc.launches.push_back({K_FILL, 0, "", ""});
    }
    auto run = [&](int i) {
        bool inner = i >= 9 && i < 18;
        launch(kernel_of(i), st[stream_of(i)], region(stream_of(i)));
        sc.launches.push_back(
            {kernel_of(i), stream_of(i), inner ? "kernels_inner" : "kernels", inner ? "nvtx_inner" : "nvtx_kernels"});
    };
    {
        phase p("kernels", "nvtx_kernels");
        for (int i = 0; i < 9; i++)
            run(i);
        {
            phase inner("kernels_inner", "nvtx_inner"); /* nested: the innermost wins */
            for (int i = 9; i < 18; i++)
                run(i);
        }
        for (int i = 18; i < 27; i++)
            run(i);
    }
    {
        phase p("copies", "nvtx_copies");
        for (int i = 0; i < 2; i++)
            CUDA_OK(cudaMemcpy(dev_a, host_page, 1 * MiB, cudaMemcpyHostToDevice));
        for (int i = 0; i < 2; i++)
            CUDA_OK(cudaMemcpyAsync(dev_a + MiB, host_pin, 2 * MiB, cudaMemcpyHostToDevice, st[1]));
        for (int i = 0; i < 2; i++)
            CUDA_OK(cudaMemcpyAsync(host_pin + 3 * MiB, dev_a, 512 * KiB, cudaMemcpyDeviceToHost, st[2]));
        CUDA_OK(cudaMemcpyAsync(dev_b, dev_a, 3 * MiB, cudaMemcpyDeviceToDevice, st[0]));
        CUDA_OK(cudaMemsetAsync(dev_b, 0x5A, 768 * KiB, st[0]));
    }
    {
        phase p("sync", "nvtx_sync");
        cudaEvent_t ev;
        CUDA_OK(cudaEventCreate(&ev));
        launch(K_FILL, st[0], region(0));
        sc.launches.push_back({K_FILL, 0, "sync", "nvtx_sync"});
        CUDA_OK(cudaEventRecord(ev, st[0]));
        CUDA_OK(cudaStreamWaitEvent(st[1], ev, 0));
        launch(K_SMEM, st[1], region(1));
        sc.launches.push_back({K_SMEM, 1, "sync", "nvtx_sync"});
        CUDA_OK(cudaEventSynchronize(ev));
        CUDA_OK(cudaStreamSynchronize(st[1]));
        CUDA_OK(cudaStreamSynchronize(st[2]));
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaEventDestroy(ev));
        sc.syncs = {{"event", 1}, {"stream_wait_event", 1}, {"stream", 2}, {"context", 1}};
    }
    {
        phase p("memory", "nvtx_memory");
        void *plain, *pooled;
        CUDA_OK(cudaMalloc(&plain, 4 * MiB));
        CUDA_OK(cudaFree(plain));
        CUDA_OK(cudaMallocAsync(&pooled, 6 * MiB, st[0]));
        CUDA_OK(cudaFreeAsync(pooled, st[0]));
        CUDA_OK(cudaStreamSynchronize(st[0]));
        sc.allocs.push_back({plain, 4 * MiB, false});
        sc.allocs.push_back({pooled, 6 * MiB, true});
    }
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    {
        /* Captured launches do not run: only the graph's launches below make records. */
        phase p("capture", "nvtx_capture");
        CUDA_OK(cudaStreamBeginCapture(gs, cudaStreamCaptureModeThreadLocal));
        launch(K_GRAPH_A, gs, out + 3 * 128 * 1024);
        launch(K_GRAPH_B, gs, out + 3 * 128 * 1024);
        CUDA_OK(cudaMemcpyAsync(dev_b + 2 * MiB, dev_a + 2 * MiB, 64 * KiB, cudaMemcpyDeviceToDevice, gs));
        CUDA_OK(cudaStreamEndCapture(gs, &graph));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    }
    {
        phase p("graph", "nvtx_graph");
        for (int i = 0; i < 3; i++)
            CUDA_OK(cudaGraphLaunch(exec, gs));
        CUDA_OK(cudaStreamSynchronize(gs));
    }
    {
        phase p("teardown", nullptr);
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaGraphDestroy(graph));
        CUDA_OK(cudaFree(out));
        CUDA_OK(cudaFree(dev_a));
        CUDA_OK(cudaFree(dev_b));
        CUDA_OK(cudaFreeHost(host_pin));
        std::free(host_page);
        for (cudaStream_t &s : st)
            CUDA_OK(cudaStreamDestroy(s));
        CUDA_OK(cudaStreamDestroy(gs));
    }
}

int main(int argc, char **argv)
{
    skip_without_gpu(); /* cuInit only: no context before gpufl_init */
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const char *plugin = argc > 1 ? argv[1] : GFL_CUPTI_PLUGIN;
    char *logs = tu_mkdtemp("trace-known");
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "trace_known_work";
    o.log_path = logs;
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.enable_synchronization = true;
    o.enable_memory_tracking = true;
    o.enable_cuda_graphs_tracking = true;
    o.device_plugin = plugin;
    CHECK(gpufl_init(&o), "%s", gpufl_last_error());
    CHECK(tu_mapped("libcupti"), "the Trace engine did not load CUPTI (plugin \"%s\"): see gpufl's warning above",
          plugin);
    point_nvtx_at_cupti();
    describe_kernels();
    script sc;
    run_script(sc);
    gpufl_shutdown();

    char *dir = tu_session_dir(logs);
    CHECK(dir, "one session directory under %s", logs);
    context c;
    c.specs = specs;
    c.max_warps_per_sm = max_warps_per_sm;
    c.max_blocks_per_sm = max_blocks_per_sm;
    c.tid = (long long)syscall(SYS_gettid);
    if (check_session(dir, sc, c)) {
        std::fprintf(stderr, "%d checks failed; logs kept in %s\n", failures, dir);
        return 1;
    }
    tu_rm_rf(logs);
    std::printf("PASS\n");
    return 0;
}
