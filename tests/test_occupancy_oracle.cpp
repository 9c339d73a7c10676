/*
 * Differential test of gpufl__occupancy_compute (src/backend/cupti/occupancy.h)
 * against the CUDA toolkit's own occupancy calculator, the header-only
 * cuda_occupancy.h (host code, no GPU, no CUDA runtime): over thousands of
 * pseudo-random launches per compute capability, the resident blocks per SM
 * must match exactly, and gpufl's limiter must be the first (in gpufl's tie
 * order: warps, blocks, registers, shared memory) of the factors the toolkit
 * reports as limiting.
 *
 * Both sides get the same device: the toolkit's device properties are filled
 * from gpufl__sm_limits_for_cc (the documented limits), so the toolkit checks
 * what gpufl derives from them, and its own per-capability constants (blocks
 * per SM, allocation units, carveout sizes) check gpufl's table.
 *
 * The carveout: the toolkit takes a preference in percent and turns it into
 * one of the SM's carveout sizes; gpufl takes the size CUPTI reports. Each
 * launch draws a preference, asks the toolkit which size it means, and gives
 * gpufl that size. Left out, so that both sides mean the same thing:
 *  - 0% (as much L1 as possible): the toolkit then starts from no shared
 *    memory at all, while gpufl reads a carveout of 0 as "the SM's maximum"
 *    (CUPTI never reports 0 for a launch that used shared memory);
 *  - kernels with no shared memory of their own run with the default
 *    carveout: gpufl deliberately gives them no shared-memory limit (the
 *    driver's reserved 1 KiB alone never limits them in gpufl's model),
 *    where the toolkit would count the reserved bytes against a small
 *    carveout.
 *
 * Plain checks, like test_cpp_wrapper.cpp; exit code: the number of failures.
 * Built only where the CUDA toolkit was found (GPUFL_HAVE_CUDA).
 */
#include <cuda_occupancy.h>

#include <cstdint>
#include <cstdio>

/* occupancy.h brings core/event.h, which is C: its _Static_asserts are
 * static_assert in C++. */
#define _Static_assert static_assert
extern "C" {
#include "backend/cupti/occupancy.h"
}
#undef _Static_assert

static int failures;

static uint32_t next_random(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static cudaOccDeviceProp toolkit_device(const gfl_sm_limits &sm)
{
    cudaOccDeviceProp p;
    p.computeMajor = sm.cc_major;
    p.computeMinor = sm.cc_minor;
    p.maxThreadsPerBlock = (int)sm.max_threads_per_block;
    p.maxThreadsPerMultiprocessor = (int)sm.max_threads_per_sm;
    p.regsPerBlock = (int)sm.regs_per_block;
    p.regsPerMultiprocessor = (int)sm.regs_per_sm;
    p.warpSize = (int)sm.warp_size;
    p.sharedMemPerBlock = 48 * 1024; /* without opting in; every capability here */
    p.sharedMemPerMultiprocessor = sm.smem_per_sm;
    p.numSms = 132; /* any: occupancy is per SM */
    p.sharedMemPerBlockOptin = sm.smem_per_block_optin;
    p.reservedSharedMemPerBlock = sm.smem_reserved_per_block;
    return p;
}

/* The toolkit's limiting-factor bit for a gpufl limiter. */
static unsigned factor_bit(int limiter)
{
    switch (limiter) {
    case GFL_LIMIT_WARPS: return OCC_LIMIT_WARPS;
    case GFL_LIMIT_BLOCKS: return OCC_LIMIT_BLOCKS;
    case GFL_LIMIT_REGISTERS: return OCC_LIMIT_REGISTERS;
    case GFL_LIMIT_SHARED_MEMORY: return OCC_LIMIT_SHARED_MEMORY;
    default: return 0;
    }
}

static int expected_limiter(unsigned factors)
{
    static const int order[] = {GFL_LIMIT_WARPS, GFL_LIMIT_BLOCKS, GFL_LIMIT_REGISTERS, GFL_LIMIT_SHARED_MEMORY};
    for (int why : order)
        if (factors & factor_bit(why))
            return why;
    return GFL_LIMIT_UNKNOWN;
}

/* Shared memory per block: zero a quarter of the time, a few KiB a quarter
 * (where rounding and the reserved bytes matter most), else anything up to
 * 227 KiB (past a device's per-block limit on purpose). */
static uint32_t random_smem(uint64_t *seed)
{
    switch (next_random(seed) % 4) {
    case 0: return 0;
    case 1: return next_random(seed) % (8 * 1024 + 1);
    default: return next_random(seed) % (227 * 1024 + 1);
    }
}

static int check_capability(int major, int minor, int launches, uint64_t seed)
{
    gfl_sm_limits sm;
    if (gpufl__sm_limits_for_cc(major, minor, &sm) != 0) {
        std::printf("FAIL: no limits for CC %d.%d\n", major, minor);
        return 1;
    }
    cudaOccDeviceProp prop = toolkit_device(sm);
    int mismatches = 0;
    for (int i = 0; i < launches; i++) {
        uint32_t threads = 1 + next_random(&seed) % 1024;
        uint32_t regs = 1 + next_random(&seed) % 255;
        uint32_t smem = random_smem(&seed);
        uint32_t static_smem = smem ? next_random(&seed) % (smem + 1) : 0;
        uint32_t dynamic_smem = smem - static_smem;
        int percent =
            smem == 0 || next_random(&seed) % 4 == 0 ? SHAREDMEM_CARVEOUT_DEFAULT : (int)(1 + next_random(&seed) % 100);

        cudaOccFuncAttributes attr;
        attr.maxThreadsPerBlock = 1024;
        attr.numRegs = (int)regs;
        attr.sharedSizeBytes = static_smem;
        attr.partitionedGCConfig = PARTITIONED_GC_OFF;
        attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
        attr.maxDynamicSharedSizeBytes = dynamic_smem; /* as if set with cudaFuncSetAttribute */
        attr.numBlockBarriers = 1;
        attr.virtualResourceCount = 0;
        cudaOccDeviceState state;
        state.carveoutConfig = percent;

        size_t carveout = 0;
        cudaOccResult want;
        if (cudaOccSMemPerMultiprocessor(&carveout, &prop, &state) != CUDA_OCC_SUCCESS ||
            cudaOccMaxActiveBlocksPerMultiprocessor(&want, &prop, &attr, &state, (int)threads, dynamic_smem) !=
                CUDA_OCC_SUCCESS) {
            std::printf("FAIL: CC %d.%d: the toolkit refused launch %d\n", major, minor, i);
            return 1;
        }

        gfl_kernel_resources k = {threads, regs, static_smem, dynamic_smem, (uint32_t)carveout};
        gfl_occupancy got;
        if (gpufl__occupancy_compute(&sm, &k, &got) != 0) {
            std::printf("FAIL: CC %d.%d: gpufl__occupancy_compute refused launch %d\n", major, minor, i);
            return 1;
        }
        int why = expected_limiter(want.limitingFactors);
        if ((int)got.blocks_per_sm != want.activeBlocksPerMultiprocessor || got.limiter != why) {
            if (mismatches++ < 20)
                std::printf("FAIL: CC %d.%d threads=%u regs=%u static=%u dynamic=%u carveout=%zu "
                            "(%d%%): gpufl %u blocks, limiter %u; toolkit %d blocks, factors 0x%x "
                            "(warps %d regs %d smem %d blocks %d)\n",
                            major, minor, threads, regs, static_smem, dynamic_smem, carveout, percent,
                            got.blocks_per_sm, got.limiter, want.activeBlocksPerMultiprocessor, want.limitingFactors,
                            want.blockLimitWarps, want.blockLimitRegs, want.blockLimitSharedMem, want.blockLimitBlocks);
        }
    }
    std::printf("CC %d.%d: %d launches, %d mismatches\n", major, minor, launches, mismatches);
    return mismatches;
}

int main()
{
    static const int capabilities[][2] = {{7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {12, 0}};
    uint64_t seed = 20240601;
    for (const auto &c : capabilities)
        failures += check_capability(c[0], c[1], 20000, seed++);
    return failures > 255 ? 255 : failures;
}
