/*
 * SM limits from the CUDA driver (src/backend/cupti/device_limits.h).
 *
 * The occupancy of every kernel is computed from these limits, so a wrong or
 * missing attribute silently skews every number. Checked with a fake driver
 * (gfl_cu_ops): the driver's values win over the table, missing ones come
 * from the table, an unknown capability is accepted only when the driver
 * gives every limit, and each error maps to its code with nothing written.
 * Then the real loading path, in forked children (it runs once per process):
 * with no driver loaded, and with tests/fake_cuda's libcuda.so.1 loaded the
 * way a CUDA program has it: the cache asks the driver once per device,
 * retries after "not initialised", and gives racing threads the same answer.
 *
 * Built only where the CUDA toolkit was found (it needs cuda.h's numbers).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "backend/cupti/device_limits.h"
#include "gpufl/gpufl.h"
#include "test_util.h"

/* Field by field: the struct has padding, which memcmp would compare. */
static bool same_limits(const gfl_sm_limits *a, const gfl_sm_limits *b)
{
    return a->warp_size == b->warp_size && a->max_threads_per_block == b->max_threads_per_block &&
           a->max_threads_per_sm == b->max_threads_per_sm && a->max_blocks_per_sm == b->max_blocks_per_sm &&
           a->regs_per_sm == b->regs_per_sm && a->regs_per_block == b->regs_per_block &&
           a->max_regs_per_thread == b->max_regs_per_thread && a->reg_alloc_unit == b->reg_alloc_unit &&
           a->sub_partitions == b->sub_partitions && a->smem_per_sm == b->smem_per_sm &&
           a->smem_per_block_optin == b->smem_per_block_optin &&
           a->smem_reserved_per_block == b->smem_reserved_per_block && a->smem_alloc_unit == b->smem_alloc_unit &&
           a->cc_major == b->cc_major && a->cc_minor == b->cc_minor;
}

/* ---- a fake driver through gfl_cu_ops ------------------------------------- */

#define N_ATTRS 128
static struct {
    int values[N_ATTRS];
    bool present[N_ATTRS];
    int get_rc;    /* cuDeviceGet's result */
    int fail_attr; /* this attribute returns fail_rc */
    int fail_rc;
    unsigned calls;
} fake;

static int fake_get(int *device, int ordinal)
{
    fake.calls++;
    if (fake.get_rc)
        return fake.get_rc;
    *device = ordinal + 100; /* a handle is not the ordinal */
    return CUDA_SUCCESS;
}

static int fake_get_attribute(int *value, int attribute, int device)
{
    fake.calls++;
    if (device < 100)
        return CUDA_ERROR_INVALID_DEVICE;
    if (attribute == fake.fail_attr)
        return fake.fail_rc;
    if (attribute < 0 || attribute >= N_ATTRS || !fake.present[attribute])
        return CUDA_ERROR_INVALID_VALUE;
    *value = fake.values[attribute];
    return CUDA_SUCCESS;
}

static const gfl_cu_ops fake_ops = {fake_get, fake_get_attribute};

static void set_attr(int attribute, int value)
{
    fake.values[attribute] = value;
    fake.present[attribute] = true;
}

/* An H200 as its driver reports it. */
static int setup_h200(void **state)
{
    (void)state;
    memset(&fake, 0, sizeof fake);
    fake.fail_attr = -1;
    set_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9);
    set_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
    set_attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 32);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 65536);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 233472);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448);
    set_attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, 1024);
    return 0;
}

static void test_driver_values_win(void **state)
{
    (void)state;
    /* Not the table's numbers, so that it shows whose were taken. */
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 200000);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 20);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 1536);
    gfl_sm_limits l;
    assert_int_equal(gfl_device_limits_query(&fake_ops, 3, &l), 0);
    assert_int_equal(l.cc_major, 9);
    assert_int_equal(l.cc_minor, 0);
    assert_int_equal(l.warp_size, 32);
    assert_int_equal(l.max_threads_per_block, 1024);
    assert_int_equal(l.max_threads_per_sm, 1536);
    assert_int_equal(l.max_blocks_per_sm, 20);
    assert_int_equal(l.regs_per_sm, 65536);
    assert_int_equal(l.regs_per_block, 65536);
    assert_int_equal(l.smem_per_sm, 200000);
    assert_int_equal(l.smem_per_block_optin, 232448);
    assert_int_equal(l.smem_reserved_per_block, 1024);
    /* No attribute reports these: the table's, for CC 9.0. */
    assert_int_equal(l.max_regs_per_thread, 255);
    assert_int_equal(l.reg_alloc_unit, 256);
    assert_int_equal(l.sub_partitions, 4);
    assert_int_equal(l.smem_alloc_unit, 128);
}

static void test_missing_attributes_come_from_the_table(void **state)
{
    (void)state;
    /* An older driver: no reserved-memory or blocks-per-SM attribute; a
     * warp size of 0 is no answer either. */
    fake.present[CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK] = false;
    fake.present[CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR] = false;
    set_attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, -5);
    gfl_sm_limits l, table;
    assert_int_equal(gfl_device_limits_query(&fake_ops, 0, &l), 0);
    assert_int_equal(gpufl__sm_limits_for_cc(9, 0, &table), 0);
    assert_true(same_limits(&l, &table));
}

static void test_reserved_zero_is_a_value(void **state)
{
    (void)state;
    set_attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, 0);
    gfl_sm_limits l;
    assert_int_equal(gfl_device_limits_query(&fake_ops, 0, &l), 0);
    assert_int_equal(l.smem_reserved_per_block, 0);
}

static void test_unknown_capability(void **state)
{
    (void)state;
    /* 11.0 is not in the table: with every limit from the driver it is
     * fine, the allocation units coming from the nearest earlier row. */
    set_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 11);
    set_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
    set_attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 24);
    gfl_sm_limits l;
    assert_int_equal(gfl_device_limits_query(&fake_ops, 0, &l), 0);
    assert_int_equal(l.cc_major, 11);
    assert_int_equal(l.cc_minor, 0);
    assert_int_equal(l.max_blocks_per_sm, 24);
    assert_int_equal(l.smem_alloc_unit, 128);
    assert_int_equal(l.reg_alloc_unit, 256);

    /* A later minor of a known major works the same way. */
    set_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 13);
    set_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 5);
    assert_int_equal(gfl_device_limits_query(&fake_ops, 0, &l), 0);
    assert_int_equal(l.cc_major, 13);

    /* But a missing limit cannot be guessed from another capability. */
    fake.present[CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR] = false;
    gfl_sm_limits untouched = {.warp_size = 77};
    assert_int_equal(gfl_device_limits_query(&fake_ops, 0, &untouched), GPUFL_EUNSUPPORTED);
    assert_int_equal(untouched.warp_size, 77);

    /* Before 7.0 there is nothing to lean on. */
    fake.present[CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR] = true;
    set_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 6);
    set_attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 1);
    assert_int_equal(gfl_device_limits_query(&fake_ops, 0, &untouched), GPUFL_EUNSUPPORTED);
    assert_int_equal(untouched.warp_size, 77);
}

static void expect_error(int rc)
{
    gfl_sm_limits untouched = {.warp_size = 77};
    assert_int_equal(gfl_device_limits_query(&fake_ops, 0, &untouched), rc);
    assert_int_equal(untouched.warp_size, 77);
}

static void test_errors(void **state)
{
    (void)state;
    fake.get_rc = CUDA_ERROR_NOT_INITIALIZED;
    expect_error(GPUFL_ESTATE);
    fake.get_rc = CUDA_ERROR_DEINITIALIZED;
    expect_error(GPUFL_ESTATE);
    fake.get_rc = CUDA_ERROR_INVALID_DEVICE;
    expect_error(GPUFL_EINVAL);
    fake.get_rc = CUDA_ERROR_UNKNOWN;
    expect_error(GPUFL_EUNSUPPORTED);
    fake.get_rc = 0;

    fake.fail_attr = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
    fake.fail_rc = CUDA_ERROR_INVALID_VALUE;
    expect_error(GPUFL_EUNSUPPORTED);
    /* A driver torn down half-way through the questions. */
    fake.fail_attr = CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK;
    fake.fail_rc = CUDA_ERROR_DEINITIALIZED;
    expect_error(GPUFL_ESTATE);
    fake.fail_attr = -1;

    gfl_sm_limits l;
    gfl_cu_ops half = {fake_get, NULL};
    assert_int_equal(gfl_device_limits_query(NULL, 0, &l), GPUFL_EINVAL);
    assert_int_equal(gfl_device_limits_query(&half, 0, &l), GPUFL_EINVAL);
    assert_int_equal(gfl_device_limits_query(&fake_ops, 0, NULL), GPUFL_EINVAL);
    assert_int_equal(gfl_device_limits_query(&fake_ops, -1, &l), GPUFL_EINVAL);
}

/* ---- the real loading path, each in a fresh process --------------------- */

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            return __LINE__;                                                                                           \
    } while (0)

static int no_driver_child(void)
{
    gfl_sm_limits l = {.warp_size = 77};
    CHECK(gfl_device_limits_get(-1, &l) == GPUFL_EINVAL);
    CHECK(gfl_device_limits_get(0, NULL) == GPUFL_EINVAL);
    /* No libcuda here: not found. On a machine with a driver it is found,
     * but this process never called cuInit. */
    int rc = gfl_device_limits_get(0, &l);
    CHECK(rc == GPUFL_ENOTFOUND || rc == GPUFL_ESTATE);
    CHECK(l.warp_size == 77);
    return 0;
}

static void test_get_without_a_driver(void **state)
{
    (void)state;
    tu_expect_child_ok(no_driver_child, __FILE__);
}

static int *fake_initialized;
static unsigned long *fake_calls;

/* Loads the fake driver as a CUDA program has its driver loaded. */
static int load_fake_driver(void)
{
    void *lib = dlopen(GFL_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL);
    fake_initialized = dlsym(lib, "fake_cuda_initialized");
    fake_calls = dlsym(lib, "fake_cuda_calls");
    CHECK(fake_initialized && fake_calls);
    return 0;
}

static int cache_child(void)
{
    int line = load_fake_driver();
    if (line)
        return line;
    gfl_sm_limits l, table;
    CHECK(gpufl__sm_limits_for_cc(9, 0, &table) == 0);

    /* Before cuInit: an error that is not remembered. */
    *fake_initialized = 0;
    CHECK(gfl_device_limits_get(0, &l) == GPUFL_ESTATE);
    *fake_initialized = 1;
    CHECK(gfl_device_limits_get(0, &l) == 0);
    CHECK(same_limits(&l, &table));

    /* Cached: the driver is not asked again, for answers or errors. */
    unsigned long calls = *fake_calls;
    for (int i = 0; i < 100; i++) {
        memset(&l, 0, sizeof l);
        CHECK(gfl_device_limits_get(0, &l) == 0);
        CHECK(same_limits(&l, &table));
    }
    CHECK(*fake_calls == calls);
    CHECK(gfl_device_limits_get(1, &l) == 0);
    CHECK(*fake_calls > calls);
    CHECK(gfl_device_limits_get(7, &l) == GPUFL_EINVAL); /* the fake has 2 devices */
    calls = *fake_calls;
    CHECK(gfl_device_limits_get(7, &l) == GPUFL_EINVAL);
    CHECK(gfl_device_limits_get(1, &l) == 0);
    CHECK(*fake_calls == calls);

    /* Past the cache's ordinals every call asks the driver. */
    CHECK(gfl_device_limits_get(GFL_DEVICE_LIMITS_MAX_DEVICES, &l) == GPUFL_EINVAL);
    CHECK(*fake_calls == calls + 1);
    return 0;
}

static void test_get_caches_per_device(void **state)
{
    (void)state;
    tu_expect_child_ok(cache_child, __FILE__);
}

#define RACERS 8
static pthread_barrier_t start_line;
static gfl_sm_limits seen[RACERS];
static int results[RACERS];

static void *racer(void *arg)
{
    size_t i = (size_t)arg;
    pthread_barrier_wait(&start_line);
    results[i] = 0;
    for (int n = 0; n < 200 && results[i] == 0; n++)
        results[i] = gfl_device_limits_get(0, &seen[i]);
    return NULL;
}

static int race_child(void)
{
    int line = load_fake_driver();
    if (line)
        return line;
    pthread_t threads[RACERS];
    CHECK(pthread_barrier_init(&start_line, NULL, RACERS) == 0);
    for (size_t i = 0; i < RACERS; i++)
        CHECK(pthread_create(&threads[i], NULL, racer, (void *)i) == 0);
    for (size_t i = 0; i < RACERS; i++)
        CHECK(pthread_join(threads[i], NULL) == 0);
    gfl_sm_limits table;
    CHECK(gpufl__sm_limits_for_cc(9, 0, &table) == 0);
    for (size_t i = 0; i < RACERS; i++) {
        CHECK(results[i] == 0);
        CHECK(same_limits(&seen[i], &table));
    }
    return 0;
}

static void test_get_from_racing_threads(void **state)
{
    (void)state;
    tu_expect_child_ok(race_child, __FILE__);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_driver_values_win, setup_h200),
        cmocka_unit_test_setup(test_missing_attributes_come_from_the_table, setup_h200),
        cmocka_unit_test_setup(test_reserved_zero_is_a_value, setup_h200),
        cmocka_unit_test_setup(test_unknown_capability, setup_h200),
        cmocka_unit_test_setup(test_errors, setup_h200),
        cmocka_unit_test(test_get_without_a_driver),
        cmocka_unit_test(test_get_caches_per_device),
        cmocka_unit_test(test_get_from_racing_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
