/*
 * Theoretical occupancy (see occupancy.h). Each resource gets its own
 * function returning the blocks it allows, NO_LIMIT when it does not
 * constrain the launch; gpufl__occupancy_compute() takes the smallest.
 * Arithmetic is 64-bit where a product of two inputs could pass 2^32.
 */
#include "backend/cupti/occupancy.h"

#include <stddef.h>

#include "gpufl/gpufl.h"

#define NO_LIMIT UINT32_MAX

static uint64_t div_up(uint64_t x, uint64_t unit) { return (x + unit - 1) / unit; }

static uint64_t round_up(uint64_t x, uint64_t unit) { return div_up(x, unit) * unit; }

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

static uint32_t warps_per_block(const gfl_sm_limits *sm, const gfl_kernel_resources *k)
{
    return (uint32_t)div_up(k->threads_per_block, sm->warp_size);
}

/* Warp slots: a block is given whole warps, even for its last partial one. */
static uint32_t warp_limit(const gfl_sm_limits *sm, const gfl_kernel_resources *k)
{
    if (k->threads_per_block > sm->max_threads_per_block)
        return 0;
    return (sm->max_threads_per_sm / sm->warp_size) / warps_per_block(sm, k);
}

/*
 * Registers go to warps, in multiples of reg_alloc_unit, from the share of
 * the register file of one sub-partition: a warp lives on one sub-partition
 * and cannot borrow from another, so what is left over in each is wasted.
 * The per-block check is made twice, as the hardware does it (warps rounded
 * up to a multiple of the sub-partitions, as if every block used all of
 * them) and as software counts it (the warps the block has); either failing
 * means the launch cannot run.
 */
static uint32_t register_limit(const gfl_sm_limits *sm, const gfl_kernel_resources *k)
{
    if (k->regs_per_thread == 0)
        return NO_LIMIT;
    if (k->regs_per_thread > sm->max_regs_per_thread)
        return 0;
    uint64_t warps = warps_per_block(sm, k);
    uint64_t per_warp = round_up((uint64_t)k->regs_per_thread * sm->warp_size, sm->reg_alloc_unit);
    uint64_t per_block_hw = per_warp * round_up(warps, sm->sub_partitions);
    if (per_block_hw > sm->regs_per_block || per_warp * warps > sm->regs_per_block)
        return 0;
    uint64_t warps_per_sub = (sm->regs_per_sm / sm->sub_partitions) / per_warp;
    return (uint32_t)(warps_per_sub * sm->sub_partitions / warps);
}

/*
 * A block's shared memory is its static and dynamic bytes plus the driver's
 * reserved bytes, rounded up to the allocation unit, and the SM holds as
 * many blocks as fit in the carveout it ran with.
 *
 * A carveout smaller than one block cannot have run the launch: the driver
 * grows the carveout to the next size that holds a block. Past 0 (which
 * here means the maximum) the sizes at most double from one to the next
 * (8, 16, 32, 64, 100, 132, ... KiB), so that size holds one block and never
 * two: the answer is 1 without knowing the list of sizes.
 */
static uint32_t shared_limit(const gfl_sm_limits *sm, const gfl_kernel_resources *k)
{
    uint64_t own = (uint64_t)k->static_smem + k->dynamic_smem;
    if (own == 0)
        return NO_LIMIT; /* see "Limiter ties" in occupancy.h */
    uint64_t per_block = round_up(own + sm->smem_reserved_per_block, sm->smem_alloc_unit);
    if (per_block > (uint64_t)sm->smem_per_block_optin + sm->smem_reserved_per_block)
        return 0;
    uint64_t carveout = sm->smem_per_sm;
    if (k->smem_carveout != 0 && k->smem_carveout < carveout)
        carveout = k->smem_carveout;
    if (carveout < per_block)
        return 1;
    return (uint32_t)(carveout / per_block);
}

static int limits_valid(const gfl_sm_limits *sm)
{
    return sm->warp_size && sm->max_threads_per_block && sm->max_threads_per_sm >= sm->warp_size &&
           sm->max_blocks_per_sm && sm->regs_per_sm && sm->regs_per_block && sm->max_regs_per_thread &&
           sm->reg_alloc_unit && sm->sub_partitions && sm->smem_per_sm && sm->smem_per_block_optin &&
           sm->smem_alloc_unit;
}

int gpufl__occupancy_compute(const gfl_sm_limits *sm, const gfl_kernel_resources *k, gfl_occupancy *out)
{
    if (!sm || !k || !out || k->threads_per_block == 0 || !limits_valid(sm))
        return GPUFL_EINVAL;

    /* In tie order (occupancy.h): the first cap equal to the minimum wins. */
    const struct {
        uint32_t blocks;
        gfl_occupancy_limiter why;
    } caps[] = {
        {warp_limit(sm, k), GFL_LIMIT_WARPS},
        {sm->max_blocks_per_sm, GFL_LIMIT_BLOCKS},
        {register_limit(sm, k), GFL_LIMIT_REGISTERS},
        {shared_limit(sm, k), GFL_LIMIT_SHARED_MEMORY},
    };
    uint32_t blocks = NO_LIMIT;
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        blocks = min_u32(blocks, caps[i].blocks);
    gfl_occupancy_limiter why = GFL_LIMIT_UNKNOWN;
    for (size_t i = 0; i < sizeof caps / sizeof caps[0] && why == GFL_LIMIT_UNKNOWN; i++)
        if (caps[i].blocks == blocks)
            why = caps[i].why;

    /* blocks <= the warp cap, so warps never exceed the SM's warp slots. */
    uint32_t warp_slots = sm->max_threads_per_sm / sm->warp_size;
    uint64_t warps = (uint64_t)blocks * warps_per_block(sm, k);
    uint64_t x10000 = warps * 10000u / warp_slots;
    out->blocks_per_sm = blocks;
    out->warps_per_sm = (uint32_t)warps;
    out->occupancy_x10000 = (uint16_t)(x10000 > 10000u ? 10000u : x10000);
    out->limiter = (uint8_t)why;
    return 0;
}

/*
 * What differs between capabilities. Every capability from 7.0 on shares the
 * rest: 32-thread warps, 1024 threads per block, a 64K-register file of which
 * one block may hold all, 255 registers per thread allocated 256 at a time
 * over 4 sub-partitions; shared memory allocated in 256-byte units before
 * Ampere and 128-byte units from it, when the driver also began reserving
 * 1 KiB per block. The table rows are the Programming Guide's; maximum
 * blocks for 12.x follow the toolkit's occupancy calculator.
 */
static const struct cc_row {
    uint8_t major, minor;
    uint16_t threads_per_sm;
    uint8_t blocks_per_sm;
    uint16_t smem_per_sm_kib; /* largest carveout */
    uint16_t smem_optin_kib;  /* per block */
} cc_rows[] = {
    {7, 0, 2048, 32, 96, 96},    /* Volta (V100) */
    {7, 2, 2048, 32, 96, 96},    /* Xavier */
    {7, 5, 1024, 16, 64, 64},    /* Turing */
    {8, 0, 2048, 32, 164, 163},  /* A100 */
    {8, 6, 1536, 16, 100, 99},   /* GA10x */
    {8, 7, 1536, 16, 164, 163},  /* Orin */
    {8, 9, 1536, 24, 100, 99},   /* Ada */
    {9, 0, 2048, 32, 228, 227},  /* Hopper */
    {10, 0, 2048, 32, 228, 227}, /* B200 */
    {10, 3, 2048, 32, 228, 227}, /* B300 */
    {12, 0, 1536, 24, 100, 99},  /* RTX 50 */
    {12, 1, 1536, 24, 100, 99},  /* GB10 */
};

int gpufl__sm_limits_for_cc(int major, int minor, gfl_sm_limits *out)
{
    if (!out)
        return GPUFL_EINVAL;
    for (size_t i = 0; i < sizeof cc_rows / sizeof cc_rows[0]; i++) {
        const struct cc_row *r = &cc_rows[i];
        if (r->major != major || r->minor != minor)
            continue;
        *out = (gfl_sm_limits){
            .warp_size = 32,
            .max_threads_per_block = 1024,
            .max_threads_per_sm = r->threads_per_sm,
            .max_blocks_per_sm = r->blocks_per_sm,
            .regs_per_sm = 65536,
            .regs_per_block = 65536,
            .max_regs_per_thread = 255,
            .reg_alloc_unit = 256,
            .sub_partitions = 4,
            .smem_per_sm = r->smem_per_sm_kib * 1024u,
            .smem_per_block_optin = r->smem_optin_kib * 1024u,
            .smem_reserved_per_block = major >= 8 ? 1024 : 0,
            .smem_alloc_unit = major >= 8 ? 128 : 256,
            .cc_major = r->major,
            .cc_minor = r->minor,
        };
        return 0;
    }
    return GPUFL_EUNSUPPORTED;
}
