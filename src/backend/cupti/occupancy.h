/*
 * Theoretical occupancy of a kernel launch: how many blocks of it fit on one
 * SM at once, given the SM's limits and the kernel's block size, registers
 * and shared memory, and what stops more from fitting. It is the number the
 * CUDA occupancy calculator gives, computed here so that every kernel record
 * of a trace carries it without asking the driver.
 *
 * Pure functions, no CUDA needed: any thread, no state. Called by the CUPTI
 * plugin's worker once per kernel record (up to ~1M/s), so the computation is
 * a few integer divisions and never allocates.
 */
#ifndef GPUFL_BACKEND_CUPTI_OCCUPANCY_H
#define GPUFL_BACKEND_CUPTI_OCCUPANCY_H

#include <stdint.h>

#include "core/event.h"

/* What one SM of a device offers. device_limits.h fills it from the driver,
 * gpufl__sm_limits_for_cc() from the documented tables. */
typedef struct gfl_sm_limits {
    uint32_t warp_size; /* threads */
    uint32_t max_threads_per_block;
    uint32_t max_threads_per_sm; /* resident; / warp_size = warp slots */
    uint32_t max_blocks_per_sm;  /* resident */
    uint32_t regs_per_sm;        /* 32-bit registers in the register file */
    uint32_t regs_per_block;     /* the most one block may hold */
    uint32_t max_regs_per_thread;
    uint32_t reg_alloc_unit;          /* registers; a warp's allocation is a multiple */
    uint32_t sub_partitions;          /* the register file is split evenly among them */
    uint32_t smem_per_sm;             /* bytes, the largest shared memory carveout */
    uint32_t smem_per_block_optin;    /* bytes, the most one block may opt into */
    uint32_t smem_reserved_per_block; /* bytes the driver adds to every block (1 KiB on CC >= 8.0) */
    uint32_t smem_alloc_unit;         /* bytes; a block's allocation is a multiple */
    uint8_t cc_major, cc_minor;
} gfl_sm_limits;

/* One launch's resources, as CUPTI's kernel record has them. */
typedef struct gfl_kernel_resources {
    uint32_t threads_per_block; /* blockDim.x * y * z */
    uint32_t regs_per_thread;   /* 0: the kernel uses none (no register limit) */
    uint32_t static_smem;       /* bytes */
    uint32_t dynamic_smem;      /* bytes */
    uint32_t smem_carveout;     /* bytes the SM ran the launch with (CUPTI's
                                 * sharedMemoryExecuted); 0 = smem_per_sm */
} gfl_kernel_resources;

typedef struct gfl_occupancy {
    uint32_t blocks_per_sm;    /* resident blocks; 0 = the launch cannot fit */
    uint32_t warps_per_sm;     /* blocks_per_sm * warps per block */
    uint16_t occupancy_x10000; /* warps_per_sm / warp slots, x10000, rounded down */
    uint8_t limiter;           /* gfl_occupancy_limiter, see below */
} gfl_occupancy;

/*
 * Computes the occupancy of launch k on an SM with limits sm. Each resource
 * caps the resident blocks on its own:
 *   warps      warp slots / warps per block (0 if the block is too big)
 *   blocks     the SM's maximum resident blocks
 *   registers  warps per sub-partition's register share, times sub-partitions,
 *              / warps per block; 0 if the kernel needs more registers per
 *              thread or per block than allowed
 *   shared     carveout / the block's allocation; 0 if one block needs more
 *              than a block may have
 * and the result is the smallest cap.
 *
 * Limiter ties: when several caps equal the result, the first of warps,
 * blocks, registers, shared memory is reported. The SM's own caps come first
 * because at a tie lowering the kernel's registers or shared memory alone
 * would not add a block. A kernel with no static or dynamic shared memory has
 * no shared-memory cap at all (its only footprint is the driver's reserved
 * bytes), so it is never reported as limited by shared memory.
 *
 * Returns 0 and fills *out, or GPUFL_EINVAL (out unchanged) when a pointer is
 * NULL, threads_per_block is 0, or a limit that divides or caps is 0.
 */
__attribute__((warn_unused_result)) int gpufl__occupancy_compute(const gfl_sm_limits *sm, const gfl_kernel_resources *k,
                                                                 gfl_occupancy *out);

/*
 * The documented limits of compute capability major.minor (CUDA Programming
 * Guide, "Technical Specifications per Compute Capability"; allocation units
 * and sub-partitions as the toolkit's occupancy calculator models them), for
 * when the driver cannot be asked. Known: 7.0, 7.2, 7.5, 8.0, 8.6, 8.7, 8.9,
 * 9.0, 10.0, 10.3, 12.0, 12.1.
 *
 * Returns 0 and fills *out, GPUFL_EUNSUPPORTED for another capability, or
 * GPUFL_EINVAL for a NULL out; out is unchanged on failure.
 */
__attribute__((warn_unused_result)) int gpufl__sm_limits_for_cc(int major, int minor, gfl_sm_limits *out);

#endif /* GPUFL_BACKEND_CUPTI_OCCUPANCY_H */
