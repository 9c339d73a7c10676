/*
 * GPU tests exit 77 (CTest: skipped) when the machine has no usable GPU,
 * saying why, and 1 with a message on the first failed check.
 */
#ifndef GPUFL_GPU_SKIP_H
#define GPUFL_GPU_SKIP_H

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define GPU_SKIP_CODE 77

static inline void skip_without_gpu(void)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n == 0) {
        std::printf("SKIP: no CUDA device (%s)\n", rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
        std::exit(GPU_SKIP_CODE);
    }
}

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                              \
            std::fprintf(stderr, __VA_ARGS__);                                                                         \
            std::fprintf(stderr, "\n");                                                                                \
            std::exit(1);                                                                                              \
        }                                                                                                              \
    } while (0)

#endif
