/*
 * A step whose changes can really be made, for gpufl whatif's validation on
 * a GPU (tests/gpu/test_whatif.py): the same program built four ways.
 *
 * Each step (NVTX range "step") moves CHUNKS chunks through the GPU: copy
 * a chunk in (pinned memory, cudaMemcpyAsync), kernel A on it, HOST_WORK_US
 * of host work, kernel B, copy it out; then cudaDeviceSynchronize.
 *
 *   -DKERNEL_A_FAST   kernel A runs half its loop: exactly 2x less work
 *   -DEXTRA_SYNC      cudaStreamSynchronize after kernel A's launch, so the
 *                     host work waits for A instead of overlapping it
 *   -DTWO_STREAMS     copies in on one stream and out on another, ordered
 *                     against the kernels with events (a chunk's copy in
 *                     before its kernel A, its copy out after its kernel B)
 *
 * usage: whatif_step [--steps N] (default 30, after 3 warm-up steps in an
 * NVTX range "warmup"). Exits 77 without a CUDA device.
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNKS 4
#define CHUNK_FLOATS (2u << 20) /* 8 MiB a chunk */
#define ITERS_A 4000
#define ITERS_B 1000
#define HOST_WORK_US 150

#ifdef KERNEL_A_FAST
#define ITERS_A_BUILT (ITERS_A / 2)
#else
#define ITERS_A_BUILT ITERS_A
#endif

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* A dependent chain of multiply-adds per element: time in proportion to
 * iters, whatever the compiler does with it. */
__global__ void kernel_a(float *x, unsigned n, int iters)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    for (int k = 0; k < iters; k++)
        v = v * 0.9999f + 0.5f;
    x[i] = v;
}

__global__ void kernel_b(float *x, unsigned n, int iters)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i];
    for (int k = 0; k < iters; k++)
        v = v * 1.0001f - 0.25f;
    x[i] = v;
}

static void host_work(unsigned us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec) < (long long)us * 1000);
}

typedef struct ctx {
    float *host_in, *host_out, *dev[CHUNKS];
    cudaStream_t main, up, down;
    cudaEvent_t in_done[CHUNKS], b_done[CHUNKS];
} ctx;

static void step(ctx *c)
{
    const unsigned threads = 256, blocks = (CHUNK_FLOATS + threads - 1) / threads;
    const size_t bytes = CHUNK_FLOATS * sizeof(float);
    for (int i = 0; i < CHUNKS; i++) {
#ifdef TWO_STREAMS
        CHECK(cudaMemcpyAsync(c->dev[i], c->host_in + (size_t)i * CHUNK_FLOATS, bytes, cudaMemcpyHostToDevice, c->up));
        CHECK(cudaEventRecord(c->in_done[i], c->up));
        CHECK(cudaStreamWaitEvent(c->main, c->in_done[i], 0));
#else
        CHECK(
            cudaMemcpyAsync(c->dev[i], c->host_in + (size_t)i * CHUNK_FLOATS, bytes, cudaMemcpyHostToDevice, c->main));
#endif
        kernel_a<<<blocks, threads, 0, c->main>>>(c->dev[i], CHUNK_FLOATS, ITERS_A_BUILT);
        CHECK(cudaGetLastError());
#ifdef EXTRA_SYNC
        CHECK(cudaStreamSynchronize(c->main));
#endif
        host_work(HOST_WORK_US);
        kernel_b<<<blocks, threads, 0, c->main>>>(c->dev[i], CHUNK_FLOATS, ITERS_B);
        CHECK(cudaGetLastError());
#ifdef TWO_STREAMS
        CHECK(cudaEventRecord(c->b_done[i], c->main));
        CHECK(cudaStreamWaitEvent(c->down, c->b_done[i], 0));
        CHECK(
            cudaMemcpyAsync(c->host_out + (size_t)i * CHUNK_FLOATS, c->dev[i], bytes, cudaMemcpyDeviceToHost, c->down));
#else
        CHECK(
            cudaMemcpyAsync(c->host_out + (size_t)i * CHUNK_FLOATS, c->dev[i], bytes, cudaMemcpyDeviceToHost, c->main));
#endif
    }
    CHECK(cudaDeviceSynchronize());
}

int main(int argc, char **argv)
{
    int steps = 30, n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            steps = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--steps N]\n", argv[0]);
            return 2;
        }
    }
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        fprintf(stderr, "no CUDA device: skipped\n");
        return 77;
    }
    ctx c;
    const size_t all = (size_t)CHUNKS * CHUNK_FLOATS * sizeof(float);
    CHECK(cudaMallocHost((void **)&c.host_in, all));
    CHECK(cudaMallocHost((void **)&c.host_out, all));
    for (size_t i = 0; i < (size_t)CHUNKS * CHUNK_FLOATS; i++)
        c.host_in[i] = (float)(i % 1000) * 0.001f;
    for (int i = 0; i < CHUNKS; i++) {
        CHECK(cudaMalloc((void **)&c.dev[i], CHUNK_FLOATS * sizeof(float)));
        CHECK(cudaEventCreateWithFlags(&c.in_done[i], cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&c.b_done[i], cudaEventDisableTiming));
    }
    CHECK(cudaStreamCreateWithFlags(&c.main, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&c.up, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&c.down, cudaStreamNonBlocking));
    for (int s = 0; s < 3; s++) {
        nvtxRangePushA("warmup");
        step(&c);
        nvtxRangePop();
    }
    for (int s = 0; s < steps; s++) {
        nvtxRangePushA("step");
        step(&c);
        nvtxRangePop();
    }
    printf("%d steps, checksum %f\n", steps, (double)c.host_out[12345]);
    return 0;
}
