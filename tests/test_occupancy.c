/*
 * Theoretical occupancy (src/backend/cupti/occupancy.h).
 *
 * Every kernel line of a trace carries this number and its limiter, and
 * people tune kernels by it, so each case below is worked out by hand in its
 * comment from the documented rules. Most use CC 9.0 (H100/H200): 2048
 * threads = 64 warp slots, 32 blocks, 65536 registers in 4 sub-partitions of
 * 16384, allocated 256 per warp; 228 KiB of shared memory (233472 bytes),
 * 227 KiB per block, 1 KiB reserved per block, allocated 128 bytes at a time.
 * test_occupancy_oracle.cpp compares against the toolkit's own calculator.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "backend/cupti/occupancy.h"
#include "gpufl/gpufl.h"

static gfl_sm_limits cc(int major, int minor)
{
    gfl_sm_limits sm;
    assert_int_equal(gpufl__sm_limits_for_cc(major, minor, &sm), 0);
    return sm;
}

static gfl_occupancy occ(const gfl_sm_limits *sm, uint32_t threads, uint32_t regs, uint32_t static_smem,
                         uint32_t dynamic_smem, uint32_t carveout)
{
    gfl_kernel_resources k = {threads, regs, static_smem, dynamic_smem, carveout};
    gfl_occupancy o;
    memset(&o, 0xee, sizeof o);
    assert_int_equal(gpufl__occupancy_compute(sm, &k, &o), 0);
    return o;
}

#define expect(o, blocks, warps, x10000, why)                                                                          \
    do {                                                                                                               \
        assert_int_equal((o).blocks_per_sm, (blocks));                                                                 \
        assert_int_equal((o).warps_per_sm, (warps));                                                                   \
        assert_int_equal((o).occupancy_x10000, (x10000));                                                              \
        assert_int_equal((o).limiter, (why));                                                                          \
    } while (0)

static void test_full_sm_is_limited_by_warps(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* 256 threads = 8 warps: 64 slots / 8 = 8 blocks. 32 registers x 32
     * threads = 1024 per warp: 16384 / 1024 = 16 warps per sub-partition,
     * 64 per SM, / 8 = 8 blocks too. The tie goes to warps: fewer registers
     * would not add a block. 8 x 8 = 64 warps = 100%. */
    expect(occ(&h, 256, 32, 0, 0, 0), 8, 64, 10000, GFL_LIMIT_WARPS);
}

static void test_tiny_blocks_are_limited_by_blocks(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* 1 thread still takes a whole warp: 64 slots would allow 64 blocks,
     * registers 64, but the SM holds 32 blocks: 32 warps = 50%. */
    expect(occ(&h, 1, 32, 0, 0, 0), 32, 32, 5000, GFL_LIMIT_BLOCKS);
    /* 48 threads = 2 warps on CC 8.6 (1536 threads = 48 slots, 16 blocks):
     * warps allow 24, blocks 16: 32 warps of 48 = 66.66%, rounded down. */
    gfl_sm_limits a = cc(8, 6);
    expect(occ(&a, 48, 32, 0, 0, 0), 16, 32, 6666, GFL_LIMIT_BLOCKS);
}

static void test_heavy_registers(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* 128 registers x 32 = 4096 per warp: 16384 / 4096 = 4 warps per
     * sub-partition, 16 per SM; 256 threads = 8 warps, so 2 blocks (warps
     * would allow 8): 16 warps = 25%. */
    expect(occ(&h, 256, 128, 0, 0, 0), 2, 16, 2500, GFL_LIMIT_REGISTERS);
    /* 40 registers x 32 = 1280 per warp. 16384 / 1280 = 12.8: 12 warps per
     * sub-partition, 48 per SM (the whole file would hold 51: a warp cannot
     * use registers left over in another sub-partition). 64 threads = 2
     * warps: 24 blocks, 48 warps = 75%. */
    expect(occ(&h, 64, 40, 0, 0, 0), 24, 48, 7500, GFL_LIMIT_REGISTERS);
    /* 64 registers, 1024 threads: 2048 per warp x 32 warps = 65536, exactly
     * the block limit. 16384 / 2048 = 8 warps per sub-partition, 32 per SM:
     * 1 block (warps would allow 2), 32 warps = 50%. */
    expect(occ(&h, 1024, 64, 0, 0, 0), 1, 32, 5000, GFL_LIMIT_REGISTERS);
}

static void test_too_many_registers_cannot_run(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* 65 registers x 32 = 2080, allocated 2304 per warp; x 32 warps = 73728
     * registers, more than a block may hold. */
    expect(occ(&h, 1024, 65, 0, 0, 0), 0, 0, 0, GFL_LIMIT_REGISTERS);
    /* More registers per thread than the architecture has (255). */
    expect(occ(&h, 32, 256, 0, 0, 0), 0, 0, 0, GFL_LIMIT_REGISTERS);
    /* 255 is allowed: 8160 -> 8192 per warp, 2 warps per sub-partition,
     * 8 per SM: 8 one-warp blocks = 12.5%. */
    expect(occ(&h, 32, 255, 0, 0, 0), 8, 8, 1250, GFL_LIMIT_REGISTERS);
}

static void test_no_registers_means_no_register_limit(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* An empty kernel may use 0 registers: warps (8) decide. */
    expect(occ(&h, 256, 0, 0, 0, 0), 8, 64, 10000, GFL_LIMIT_WARPS);
}

static void test_heavy_shared_memory_with_carveout(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* 48 KiB dynamic + 1 KiB reserved = 50176 bytes (a multiple of 128).
     * The launch ran with a 100 KiB carveout: 102400 / 50176 = 2.04, so 2
     * blocks (warps allow 16, registers 16): 2 x 4 warps = 8 = 12.5%. */
    expect(occ(&h, 128, 32, 0, 48 * 1024, 100 * 1024), 2, 8, 1250, GFL_LIMIT_SHARED_MEMORY);
    /* The same launch with the whole 228 KiB: 233472 / 50176 = 4.65 -> 4
     * blocks, 16 warps = 25%. Carveout 0 means the SM's maximum. */
    expect(occ(&h, 128, 32, 0, 48 * 1024, 0), 4, 16, 2500, GFL_LIMIT_SHARED_MEMORY);
    /* A carveout larger than the SM has is capped to it. */
    expect(occ(&h, 128, 32, 0, 48 * 1024, 1u << 30), 4, 16, 2500, GFL_LIMIT_SHARED_MEMORY);
    /* Static and dynamic add up: 16 KiB + 32 KiB is the same 48 KiB. */
    expect(occ(&h, 128, 32, 16 * 1024, 32 * 1024, 100 * 1024), 2, 8, 1250, GFL_LIMIT_SHARED_MEMORY);
}

static void test_shared_memory_rounding(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* 1 byte + 1024 reserved = 1025, allocated 1152. With an 8 KiB carveout
     * 8192 / 1152 = 7.1: 7 one-warp blocks, 7 / 64 = 10.93%. */
    expect(occ(&h, 32, 16, 1, 0, 8192), 7, 7, 1093, GFL_LIMIT_SHARED_MEMORY);
    /* CC 7.5 allocates 256 bytes at a time and reserves none: 100 bytes take
     * 256, and a 32 KiB carveout holds 128 blocks; Turing's 16 blocks bind. */
    gfl_sm_limits t = cc(7, 5);
    expect(occ(&t, 32, 16, 100, 0, 32 * 1024), 16, 16, 5000, GFL_LIMIT_BLOCKS);
    /* 4000 bytes -> 4096: 32768 / 4096 = 8 blocks; 8 of 32 slots = 25%. */
    expect(occ(&t, 32, 16, 4000, 0, 32 * 1024), 8, 8, 2500, GFL_LIMIT_SHARED_MEMORY);
}

static void test_block_too_big_for_shared_memory(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* 227 KiB is the most a block may have: + 1 KiB reserved = 233472, the
     * whole SM, so exactly 1 block (4 warps = 6.25%). */
    expect(occ(&h, 128, 32, 0, 227 * 1024, 0), 1, 4, 625, GFL_LIMIT_SHARED_MEMORY);
    /* One byte more cannot run. */
    expect(occ(&h, 128, 32, 0, 227 * 1024 + 1, 0), 0, 0, 0, GFL_LIMIT_SHARED_MEMORY);
    /* The per-block limit is the device's, not the carveout's: CC 8.0 allows
     * 163 KiB, so 164 KiB of dynamic memory cannot run on an A100. */
    gfl_sm_limits a = cc(8, 0);
    expect(occ(&a, 128, 32, 0, 164 * 1024, 0), 0, 0, 0, GFL_LIMIT_SHARED_MEMORY);
}

static void test_carveout_smaller_than_a_block(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* 40 KiB + 1 KiB = 41984 bytes against a 32 KiB carveout: such a launch
     * ran on a carveout grown to 64 KiB, which holds 1 block. */
    expect(occ(&h, 128, 32, 0, 40 * 1024, 32 * 1024), 1, 4, 625, GFL_LIMIT_SHARED_MEMORY);
}

static void test_no_shared_memory_is_never_the_limiter(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* Counting only the 1 KiB reserved, an 8 KiB carveout would hold 8
     * blocks; the kernel declares no shared memory, so it has no shared
     * memory limit and the SM's 32 blocks decide (16 registers: 512 per
     * warp, 128 warps). */
    expect(occ(&h, 32, 16, 0, 0, 8192), 32, 32, 5000, GFL_LIMIT_BLOCKS);
    expect(occ(&h, 32, 16, 0, 0, 1024), 32, 32, 5000, GFL_LIMIT_BLOCKS);
}

static void test_too_many_threads_cannot_run(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    expect(occ(&h, 1025, 16, 0, 0, 0), 0, 0, 0, GFL_LIMIT_WARPS);
    /* 1024 threads = 32 warps: 2 blocks fill the 64 slots. */
    expect(occ(&h, 1024, 16, 0, 0, 0), 2, 64, 10000, GFL_LIMIT_WARPS);
}

static void test_tie_order(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    /* 64 threads = 2 warps, 32 registers: warps 32, blocks 32, registers
     * 64 / 2 = 32 blocks: all three tie, warps is first. */
    expect(occ(&h, 64, 32, 0, 0, 0), 32, 64, 10000, GFL_LIMIT_WARPS);
    /* 32 threads, 64 registers = 2048 per warp: 8 per sub-partition, 32
     * blocks; the SM's 32 blocks tie with it (warps allow 64): blocks. */
    expect(occ(&h, 32, 64, 0, 0, 0), 32, 32, 5000, GFL_LIMIT_BLOCKS);
    /* 256 threads, 64 registers: 32 warps / 8 = 4 blocks. 50000 bytes +
     * 1024 = 51024 -> 51072, 233472 / 51072 = 4.57 -> 4 too: registers come
     * before shared memory. */
    expect(occ(&h, 256, 64, 0, 50000, 0), 4, 32, 5000, GFL_LIMIT_REGISTERS);
    /* With 40000 bytes (+ 1024 -> 41088, 5.68 -> 5 blocks) registers alone
     * limit: same answer, no tie. */
    expect(occ(&h, 256, 64, 0, 40000, 0), 4, 32, 5000, GFL_LIMIT_REGISTERS);
}

static void test_turing(void **state)
{
    (void)state;
    gfl_sm_limits t = cc(7, 5);
    /* CC 7.5 has 1024 threads = 32 slots: 256 threads = 8 warps -> 4 blocks
     * (registers would allow 8), 32 warps = 100%. */
    expect(occ(&t, 256, 32, 0, 0, 0), 4, 32, 10000, GFL_LIMIT_WARPS);
}

static void test_invalid_arguments(void **state)
{
    (void)state;
    gfl_sm_limits h = cc(9, 0);
    gfl_kernel_resources k = {256, 32, 0, 0, 0};
    gfl_occupancy o = {.blocks_per_sm = 77};
    assert_int_equal(gpufl__occupancy_compute(NULL, &k, &o), GPUFL_EINVAL);
    assert_int_equal(gpufl__occupancy_compute(&h, NULL, &o), GPUFL_EINVAL);
    assert_int_equal(gpufl__occupancy_compute(&h, &k, NULL), GPUFL_EINVAL);
    k.threads_per_block = 0;
    assert_int_equal(gpufl__occupancy_compute(&h, &k, &o), GPUFL_EINVAL);
    k.threads_per_block = 256;
    /* Each limit that is divided by or caps the result must be set. */
    static const size_t fields[] = {
        offsetof(gfl_sm_limits, warp_size),
        offsetof(gfl_sm_limits, max_threads_per_block),
        offsetof(gfl_sm_limits, max_threads_per_sm),
        offsetof(gfl_sm_limits, max_blocks_per_sm),
        offsetof(gfl_sm_limits, regs_per_sm),
        offsetof(gfl_sm_limits, regs_per_block),
        offsetof(gfl_sm_limits, max_regs_per_thread),
        offsetof(gfl_sm_limits, reg_alloc_unit),
        offsetof(gfl_sm_limits, sub_partitions),
        offsetof(gfl_sm_limits, smem_per_sm),
        offsetof(gfl_sm_limits, smem_per_block_optin),
        offsetof(gfl_sm_limits, smem_alloc_unit),
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        gfl_sm_limits bad = h;
        memset((char *)&bad + fields[i], 0, sizeof(uint32_t));
        assert_int_equal(gpufl__occupancy_compute(&bad, &k, &o), GPUFL_EINVAL);
    }
    assert_int_equal(o.blocks_per_sm, 77); /* untouched */
}

static void test_limits_for_cc(void **state)
{
    (void)state;
    static const int known[][2] = {{7, 0}, {7, 2}, {7, 5},  {8, 0},  {8, 6},  {8, 7},
                                   {8, 9}, {9, 0}, {10, 0}, {10, 3}, {12, 0}, {12, 1}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        gfl_sm_limits sm = cc(known[i][0], known[i][1]);
        assert_int_equal(sm.cc_major, known[i][0]);
        assert_int_equal(sm.cc_minor, known[i][1]);
        assert_int_equal(sm.warp_size, 32);
        assert_true(sm.smem_per_block_optin + sm.smem_reserved_per_block <= sm.smem_per_sm);
        assert_int_equal(sm.smem_reserved_per_block, known[i][0] >= 8 ? 1024 : 0);
        /* Every table row gives a usable answer. */
        gfl_occupancy o = occ(&sm, 128, 32, 0, 0, 0);
        assert_true(o.blocks_per_sm > 0);
    }
    gfl_sm_limits h = cc(9, 0);
    assert_int_equal(h.max_threads_per_sm, 2048);
    assert_int_equal(h.max_blocks_per_sm, 32);
    assert_int_equal(h.smem_per_sm, 228 * 1024);
    assert_int_equal(h.smem_per_block_optin, 227 * 1024);
    gfl_sm_limits ada = cc(8, 9);
    assert_int_equal(ada.max_threads_per_sm, 1536);
    assert_int_equal(ada.max_blocks_per_sm, 24);

    gfl_sm_limits untouched = {.warp_size = 99};
    assert_int_equal(gpufl__sm_limits_for_cc(6, 1, &untouched), GPUFL_EUNSUPPORTED);
    assert_int_equal(gpufl__sm_limits_for_cc(11, 0, &untouched), GPUFL_EUNSUPPORTED);
    assert_int_equal(gpufl__sm_limits_for_cc(13, 0, &untouched), GPUFL_EUNSUPPORTED);
    assert_int_equal(gpufl__sm_limits_for_cc(-1, 0, &untouched), GPUFL_EUNSUPPORTED);
    assert_int_equal(untouched.warp_size, 99);
    assert_int_equal(gpufl__sm_limits_for_cc(9, 0, NULL), GPUFL_EINVAL);
}

/* Properties over many random launches: more of any resource never adds
 * blocks; the result never exceeds a cap; the outputs agree with each other. */
static uint32_t next_random(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static void test_monotone_and_consistent(void **state)
{
    (void)state;
    static const int ccs[][2] = {{7, 5}, {8, 0}, {8, 6}, {9, 0}, {12, 0}};
    uint64_t seed = 12345;
    for (size_t c = 0; c < sizeof ccs / sizeof ccs[0]; c++) {
        gfl_sm_limits sm = cc(ccs[c][0], ccs[c][1]);
        uint32_t slots = sm.max_threads_per_sm / sm.warp_size;
        for (int i = 0; i < 5000; i++) {
            uint32_t threads = 1 + next_random(&seed) % 1024;
            uint32_t regs = 1 + next_random(&seed) % 255;
            uint32_t smem = next_random(&seed) % (sm.smem_per_block_optin + 1);
            gfl_occupancy o = occ(&sm, threads, regs, 0, smem, 0);
            uint32_t warps = (threads + 31) / 32;
            assert_true(o.blocks_per_sm <= sm.max_blocks_per_sm);
            assert_true(o.blocks_per_sm * warps <= slots);
            assert_int_equal(o.warps_per_sm, o.blocks_per_sm * warps);
            assert_int_equal(o.occupancy_x10000, o.warps_per_sm * 10000u / slots);
            assert_true(o.limiter >= GFL_LIMIT_WARPS && o.limiter < GFL_LIMIT_COUNT);
            if (smem == 0)
                assert_int_not_equal(o.limiter, GFL_LIMIT_SHARED_MEMORY);
            assert_true(occ(&sm, threads, regs + 1, 0, smem, 0).blocks_per_sm <= o.blocks_per_sm);
            assert_true(occ(&sm, threads, regs, 0, smem + 128, 0).blocks_per_sm <= o.blocks_per_sm);
            if (threads < 1024)
                assert_true(occ(&sm, threads + 32, regs, 0, smem, 0).blocks_per_sm <= o.blocks_per_sm);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_sm_is_limited_by_warps),
        cmocka_unit_test(test_tiny_blocks_are_limited_by_blocks),
        cmocka_unit_test(test_heavy_registers),
        cmocka_unit_test(test_too_many_registers_cannot_run),
        cmocka_unit_test(test_no_registers_means_no_register_limit),
        cmocka_unit_test(test_heavy_shared_memory_with_carveout),
        cmocka_unit_test(test_shared_memory_rounding),
        cmocka_unit_test(test_block_too_big_for_shared_memory),
        cmocka_unit_test(test_carveout_smaller_than_a_block),
        cmocka_unit_test(test_no_shared_memory_is_never_the_limiter),
        cmocka_unit_test(test_too_many_threads_cannot_run),
        cmocka_unit_test(test_tie_order),
        cmocka_unit_test(test_turing),
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test(test_limits_for_cc),
        cmocka_unit_test(test_monotone_and_consistent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
