/*
 * Where libcupti is looked for when GPUFL_CUPTI_LIBRARY is not set: by
 * soname, then in the toolkit's usual directories. The CUPTI plugin
 * (cupti_api.c) and the injection library's NVTX forwarding (inject.c) must
 * find the same library, so both take these lists from here. Plain C: no
 * CUDA headers.
 */
#ifndef GPUFL_BACKEND_CUPTI_CUPTI_PATHS_H
#define GPUFL_BACKEND_CUPTI_CUPTI_PATHS_H

#define GFL_CUPTI_SONAMES "libcupti.so.13", "libcupti.so"

#define GFL_CUPTI_TOOLKIT_PATHS                                                                                        \
    "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",                       \
        "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13"

#endif /* GPUFL_BACKEND_CUPTI_CUPTI_PATHS_H */
