/*
 * A steady GPU load for tests that compare readings: holds MIB mebibytes of
 * device memory and keeps every SM busy for SECONDS seconds.
 *     gpu_load MIB SECONDS
 */
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "spin.cuh"

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: gpu_load MIB SECONDS\n");
        return 64;
    }
    size_t mib = std::strtoull(argv[1], nullptr, 10);
    double seconds = std::atof(argv[2]);
    void *mem = nullptr;
    if (cudaMalloc(&mem, mib << 20) != cudaSuccess || cudaMemset(mem, 1, mib << 20) != cudaSuccess) {
        std::fprintf(stderr, "gpu_load: cannot hold %zu MiB\n", mib);
        return 1;
    }
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    /* 100 ms kernels back to back, so the GPU is never idle between them */
    for (double done = 0; done < seconds; done += 0.1)
        spin<<<sms * 4, 256>>>(100000000ull);
    cudaError_t rc = cudaDeviceSynchronize();
    cudaFree(mem);
    return rc == cudaSuccess ? 0 : 1;
}
