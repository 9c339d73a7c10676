/*
 * The NVML backend against a fake libnvidia-ml (tests/fake_nvml/fake_nvml.c)
 * loaded through the real dlopen path: the loader and its newest-symbol-
 * first fallbacks (a "full" fake with today's names, a "legacy" one with an
 * old driver's), device descriptions, samples, scripted failures, and the
 * session around them (session.json, device_info, device_metrics, the log
 * line that explains a missing driver).
 *
 * Why: without a GPU this is the only way CI runs the NVML code at all.
 * Every value the fake reports is a formula of the device index and of how
 * often that function was called on that device (see the fake's header), so
 * each field is checked exactly, not for plausibility.
 *
 * NVML stays mapped once loaded and its state is process-wide, so each case
 * opens and closes NVML itself (the fake restarts its counters at every
 * first nvmlInit). Cases that need a fresh process (LD_LIBRARY_PATH is read
 * at start-up; "never loaded" needs a process that never loaded it) run this
 * program again as "test_nvml --child <case>".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/nvml/nvml_api.h"
#include "backend/nvml/nvml_device.h"
#include "core/device_info.h"
#include "core/event.h"
#include "gpufl/gpufl.h"
#include "test_util.h"

extern char **environ;

/* ---- what the fake reports (as in fake_nvml.c) -------------------------------- */

#define GIB (1ull << 30)
#define MIB (1ull << 20)
#define MEM_TOTAL (141 * GIB)
#define MEM_RESERVED (512 * MIB)
#define PCIE_TX_STEP 3000000ull /* bytes per nvmlDeviceGetFieldValues call */
#define PCIE_RX_STEP 5000000ull

/* What every sample of the full fake has; PCIE needs a previous sample. */
#define VALID_FULL                                                                                                     \
    (GFL_DEV_GPU_UTIL | GFL_DEV_MEM_UTIL | GFL_DEV_MEM | GFL_DEV_TEMP | GFL_DEV_MEM_TEMP | GFL_DEV_POWER |             \
     GFL_DEV_POWER_LIMIT | GFL_DEV_ENERGY | GFL_DEV_CLOCKS | GFL_DEV_THROTTLE | GFL_DEV_ECC | GFL_DEV_PROC_MEM)
/* An old driver: no field values (memory temperature, PCIe), no energy. */
#define VALID_LEGACY (VALID_FULL & ~(GFL_DEV_MEM_TEMP | GFL_DEV_ENERGY))

/* Sample of device i where utilization and reasons were called k times
 * before, memory k_mem times and energy k_energy times; v1_memory: the v1
 * call (reserved memory counted as used). Fields without their bit stay 0. */
static gfl_device_metrics_payload expected_e(unsigned i, unsigned k, unsigned k_mem, unsigned k_energy, bool v1_memory,
                                             uint32_t valid)
{
    gfl_device_metrics_payload e;
    memset(&e, 0, sizeof e);
    e.valid = valid;
    if (valid & GFL_DEV_GPU_UTIL)
        e.gpu_util_pct = (uint8_t)((10 * i + 7 * k) % 101);
    if (valid & GFL_DEV_MEM_UTIL)
        e.mem_util_pct = (uint8_t)((3 * i + 5 * k) % 101);
    if (valid & GFL_DEV_MEM) {
        e.mem_used_bytes = (1 + i) * GIB + k_mem * MIB + (v1_memory ? MEM_RESERVED : 0);
        e.mem_total_bytes = MEM_TOTAL;
        /* v2 keeps the reserved memory out of both used and free */
        e.mem_free_bytes = MEM_TOTAL - e.mem_used_bytes - (v1_memory ? 0 : MEM_RESERVED);
    }
    if (valid & GFL_DEV_PROC_MEM)
        e.proc_mem_bytes = (256 + 64ull * i) * MIB + 16 * MIB; /* two records of ours */
    if (valid & GFL_DEV_ENERGY)
        e.energy_mj = 1000000ull * (1 + i) + 1000ull * k_energy;
    if (valid & GFL_DEV_THROTTLE)
        e.throttle_reasons = k % 2 ? 0x4 : 0x1;
    if (valid & GFL_DEV_ECC) {
        e.ecc_corrected = 3 + i;
        e.ecc_uncorrected = i;
    }
    if (valid & GFL_DEV_POWER)
        e.power_mw = 100000 + 1000 * i;
    if (valid & GFL_DEV_POWER_LIMIT)
        e.power_limit_mw = 700000;
    if (valid & GFL_DEV_CLOCKS) {
        e.sm_clock_mhz = 1410 + 10 * i;
        e.mem_clock_mhz = 2619;
        e.gfx_clock_mhz = 1410 + 10 * i;
    }
    if (valid & GFL_DEV_TEMP)
        e.temp_c = (int16_t)(40 + i);
    if (valid & GFL_DEV_MEM_TEMP)
        e.mem_temp_c = (int16_t)(50 + i);
    return e;
}

/* The same when energy was read at every earlier sample too. */
static gfl_device_metrics_payload expected(unsigned i, unsigned k, unsigned k_mem, bool v1_memory, uint32_t valid)
{
    return expected_e(i, k, k_mem, k, v1_memory, valid);
}

/* PCIe rate the sampler must compute from one counter step over dt_ns. */
static uint32_t kbps(uint64_t step_bytes, uint64_t dt_ns) { return (uint32_t)(step_bytes * 1000000ull / dt_ns); }

static void expect_pcie(gfl_device_metrics_payload *e, uint64_t dt_ns)
{
    e->valid |= GFL_DEV_PCIE;
    e->pcie_tx_kbps = kbps(PCIE_TX_STEP, dt_ns);
    e->pcie_rx_kbps = kbps(PCIE_RX_STEP, dt_ns);
}

static void check_sample(const gfl_device_metrics_payload *a, const gfl_device_metrics_payload *e)
{
    assert_int_equal(a->valid, e->valid);
    assert_int_equal(a->gpu_util_pct, e->gpu_util_pct);
    assert_int_equal(a->mem_util_pct, e->mem_util_pct);
    assert_int_equal(a->fan_pct, e->fan_pct);
    assert_int_equal(a->mem_used_bytes, e->mem_used_bytes);
    assert_int_equal(a->mem_total_bytes, e->mem_total_bytes);
    assert_int_equal(a->mem_free_bytes, e->mem_free_bytes);
    assert_int_equal(a->proc_mem_bytes, e->proc_mem_bytes);
    assert_int_equal(a->energy_mj, e->energy_mj);
    assert_int_equal(a->throttle_reasons, e->throttle_reasons);
    assert_int_equal(a->ecc_corrected, e->ecc_corrected);
    assert_int_equal(a->ecc_uncorrected, e->ecc_uncorrected);
    assert_int_equal(a->power_mw, e->power_mw);
    assert_int_equal(a->power_limit_mw, e->power_limit_mw);
    assert_int_equal(a->sm_clock_mhz, e->sm_clock_mhz);
    assert_int_equal(a->mem_clock_mhz, e->mem_clock_mhz);
    assert_int_equal(a->gfx_clock_mhz, e->gfx_clock_mhz);
    assert_int_equal(a->pcie_rx_kbps, e->pcie_rx_kbps);
    assert_int_equal(a->pcie_tx_kbps, e->pcie_tx_kbps);
    assert_int_equal(a->temp_c, e->temp_c);
    assert_int_equal(a->mem_temp_c, e->mem_temp_c);
}

/* ---- per-case state ------------------------------------------------------------ */

static gpufl__nvml_api api;
static bool api_open;
static char *current_log_path;

/* The environment this program started with, restored after every case. */
static const char *const managed_env[] = {"GPUFL_NVML_LIBRARY", "FAKE_NVML"};
#define N_MANAGED (sizeof managed_env / sizeof managed_env[0])
static char *saved_env[N_MANAGED];

static void save_env(void)
{
    for (size_t i = 0; i < N_MANAGED; i++) {
        const char *v = getenv(managed_env[i]);
        saved_env[i] = v ? strdup(v) : NULL;
    }
}

static void restore_env(void)
{
    for (size_t i = 0; i < N_MANAGED; i++) {
        if (saved_env[i])
            tu_setenv(managed_env[i], saved_env[i]);
        else
            tu_unsetenv(managed_env[i]);
    }
}

static int cleanup(void **state)
{
    (void)state;
    gpufl_shutdown();
    if (api_open)
        gpufl__nvml_close(&api);
    api_open = false;
    restore_env();
    if (current_log_path) {
        tu_rm_rf(current_log_path);
        free(current_log_path);
        current_log_path = NULL;
    }
    return 0;
}

/* Opens NVML from lib (GPUFL_NVML_LIBRARY) with the fake's script. */
static void open_nvml(const char *lib, const char *script)
{
    tu_setenv("GPUFL_NVML_LIBRARY", lib);
    tu_setenv("FAKE_NVML", script);
    char err[512] = "";
    int rc = gpufl__nvml_open(&api, err, sizeof err);
    if (rc != 0)
        fail_msg("gpufl__nvml_open: %d: %s", rc, err);
    api_open = true;
    assert_string_equal(api.path, lib);
}

static void close_nvml(void)
{
    gpufl__nvml_close(&api);
    api_open = false;
}

/* The fake's own bookkeeping, looked up in the copy already loaded. */
static void *fake_symbol(const char *lib, const char *name, void **handle)
{
    *handle = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!*handle)
        fail_msg("%s is not loaded", lib);
    void *sym = dlsym(*handle, name);
    assert_non_null(sym);
    return sym;
}

/* Calls of NVML function fn since the fake was last initialised. */
static long fake_calls(const char *lib, const char *fn)
{
    void *h;
    long (*calls)(const char *);
    *(void **)&calls = fake_symbol(lib, "fakeNvmlCalls", &h);
    long n = calls(fn);
    dlclose(h);
    if (n < 0)
        fail_msg("the fake has no function %s", fn);
    return n;
}

/* nvmlInit calls not matched by nvmlShutdown. */
static int fake_init_depth(const char *lib)
{
    void *h;
    int (*depth)(void);
    *(void **)&depth = fake_symbol(lib, "fakeNvmlInitDepth", &h);
    int d = depth();
    dlclose(h);
    return d;
}

/* ---- loading -------------------------------------------------------------------- */

static void test_missing_library(void **state)
{
    (void)state;
    const char *path = "/nonexistent/gpufl-test/libnvidia-ml.so.1";
    tu_setenv("GPUFL_NVML_LIBRARY", path);
    char err[512] = "";
    assert_int_equal(gpufl__nvml_open(&api, err, sizeof err), GPUFL_ENOTFOUND);
    assert_non_null(strstr(err, "no NVIDIA driver found"));
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "could not be loaded"));
    assert_null(api.lib);
    assert_null(api.init);
    assert_string_equal(api.path, "");
}

static void test_init_failure(void **state)
{
    (void)state;
    tu_setenv("GPUFL_NVML_LIBRARY", GFL_FAKE_NVML_FULL);
    tu_setenv("FAKE_NVML", "devices=2,init_error=9");
    char err[512] = "";
    assert_int_equal(gpufl__nvml_open(&api, err, sizeof err), GPUFL_EIO);
    assert_non_null(strstr(err, GFL_FAKE_NVML_FULL));
    assert_non_null(strstr(err, "nvmlInit failed"));
    assert_non_null(strstr(err, "Driver Not Loaded")); /* the fake's nvmlErrorString(9) */
    assert_null(api.lib);
    assert_null(api.init);

    /* the fake's own guard: a script it cannot read fails init loudly */
    tu_setenv("FAKE_NVML", "devices=2,error.nvmlNoSuchFunction=3");
    err[0] = '\0';
    assert_int_equal(gpufl__nvml_open(&api, err, sizeof err), GPUFL_EIO);
    assert_non_null(strstr(err, "Unknown Error"));
}

/* A library without NVML's symbols (the synthetic device plugin). */
static void test_missing_required_symbols(void **state)
{
    (void)state;
    tu_setenv("GPUFL_NVML_LIBRARY", GFL_SYNTHETIC_PLUGIN);
    char err[512] = "";
    assert_int_equal(gpufl__nvml_open(&api, err, sizeof err), GPUFL_EIO);
    assert_non_null(strstr(err, GFL_SYNTHETIC_PLUGIN));
    assert_non_null(strstr(err, "lacks nvmlInit"));
    assert_non_null(strstr(err, "not a usable NVML"));
    assert_null(api.lib);
    assert_null(api.device_count);
    /* and it was unloaded again */
    char *copy = strdup(GFL_SYNTHETIC_PLUGIN);
    assert_false(tu_mapped(basename(copy)));
    free(copy);
}

/* ---- the full fake: today's symbols ------------------------------------------------ */

static void check_desc(const gpufl__device_desc *d, unsigned i)
{
    char s[64];
    assert_int_equal(d->index, i);
    snprintf(s, sizeof s, "Fake GPU %u", i);
    assert_string_equal(d->name, s);
    snprintf(s, sizeof s, "GPU-fake-%u", i);
    assert_string_equal(d->uuid, s);
    snprintf(s, sizeof s, "00000000:%02X:00.0", 0x19 + i);
    assert_string_equal(d->pci_bus_id, s);
    assert_int_equal(d->cc_major, 9);
    assert_int_equal(d->cc_minor, 0);
    assert_int_equal(d->sm_count, 132);
    assert_int_equal(d->memory_total_bytes, MEM_TOTAL);
    assert_int_equal(d->power_limit_mw, 700000);
    assert_int_equal(d->max_sm_clock_mhz, 1980);
    assert_int_equal(d->max_mem_clock_mhz, 2619);
    assert_int_equal(d->pcie_max_gen, 5);
    assert_int_equal(d->pcie_max_width, 16);
}

static void test_full_describe(void **state)
{
    (void)state;
    const char *lib = GFL_FAKE_NVML_FULL;
    open_nvml(lib, "devices=2");
    assert_int_equal(api.process_record_size, 24);
    static gpufl__device_list list;
    char err[256] = "";
    assert_int_equal(gpufl__nvml_describe(&api, &list, err, sizeof err), 0);
    assert_string_equal(list.vendor, "nvidia");
    assert_string_equal(list.driver_version, "580.95.05");
    assert_int_equal(list.cuda_driver_version, 13000);
    assert_int_equal(list.count, 2);
    check_desc(&list.devices[0], 0);
    check_desc(&list.devices[1], 1);

    /* newest symbol first, the older one never called */
    static const struct {
        const char *newest, *older;
        long calls;
    } chosen[] = {
        {"nvmlInit_v2", "nvmlInit", 1},
        {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", 1},
        {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", 2},
        {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", 2},
        {"nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes", 2},
        {"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo", 2},
        {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion", 1},
    };
    for (size_t c = 0; c < sizeof chosen / sizeof chosen[0]; c++) {
        assert_int_equal(fake_calls(lib, chosen[c].newest), chosen[c].calls);
        assert_int_equal(fake_calls(lib, chosen[c].older), 0);
    }
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetNumGpuCores"), 0); /* attributes sufficed */

    assert_int_equal(fake_init_depth(lib), 1);
    close_nvml();
    assert_int_equal(fake_init_depth(lib), 0);
    assert_int_equal(fake_calls(lib, "nvmlShutdown"), 1);
}

/* Failures while describing: one device's handle, the attributes call
 * (SMs then come from CUDA cores), and more devices than gpufl keeps. */
static void test_describe_partial_failures(void **state)
{
    (void)state;
    const char *lib = GFL_FAKE_NVML_FULL;
    open_nvml(lib, "devices=3,error.nvmlDeviceGetHandleByIndex_v2:1=4,"
                   "error.nvmlDeviceGetAttributes_v2=3");
    static gpufl__device_list list;
    char err[256] = "";
    assert_int_equal(gpufl__nvml_describe(&api, &list, err, sizeof err), 0);
    assert_int_equal(list.count, 2);
    check_desc(&list.devices[0], 0);
    check_desc(&list.devices[1], 2); /* sm_count 132 = 16896 cores / 128 */
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetNumGpuCores"), 2);
    close_nvml();

    open_nvml(lib, "devices=70");
    assert_int_equal(gpufl__nvml_describe(&api, &list, err, sizeof err), 0);
    assert_int_equal(list.count, GFL_MAX_DEVICES);
    check_desc(&list.devices[GFL_MAX_DEVICES - 1], GFL_MAX_DEVICES - 1);
    close_nvml();

    open_nvml(lib, "devices=2,error.nvmlDeviceGetCount_v2=4");
    assert_int_equal(gpufl__nvml_describe(&api, &list, err, sizeof err), GPUFL_EIO);
    assert_non_null(strstr(err, "nvmlDeviceGetCount failed"));
    assert_non_null(strstr(err, "Insufficient Permissions"));
    assert_int_equal(list.count, 0);
    close_nvml();
}

/* The sampler's cadence: energy (2.3 ms a read on an H200) at most once a
 * second, the PCIe counters at most every 250 ms, and the fan, which this
 * board does not have, asked once. */
static void test_full_sample(void **state)
{
    (void)state;
    const char *lib = GFL_FAKE_NVML_FULL;
    open_nvml(lib, "devices=2");
    int pid = (int)getpid();
    gpufl__nvml_state st[2];
    memset(st, 0, sizeof st);
    /* 1 s (energy and PCIe due), 0.5 s (PCIe only), no time at all (neither) */
    const uint64_t ts[] = {1000000000ull, 2000000000ull, 2500000000ull, 2500000000ull};
    const bool energy[] = {true, true, false, false}, pcie[] = {false, true, true, false};
    const unsigned k_energy[] = {0, 1, 0, 0};
    for (unsigned k = 0; k < 4; k++) {
        for (unsigned i = 0; i < 2; i++) { /* interleaved: counters are per device */
            gfl_device_metrics_payload m;
            gpufl__nvml_sample(&api, i, &st[i], ts[k], pid, &m);
            uint32_t valid = energy[k] ? VALID_FULL : VALID_FULL & ~GFL_DEV_ENERGY;
            gfl_device_metrics_payload e = expected_e(i, k, k, k_energy[k], false, valid);
            if (pcie[k])
                expect_pcie(&e, ts[k] - ts[k - 1]);
            check_sample(&m, &e);
        }
    }
    /* 1 s: 3 MB -> 3000 KB/s; 0.5 s: 5 MB -> 10000 KB/s */
    assert_int_equal(kbps(PCIE_TX_STEP, 1000000000ull), 3000);
    assert_int_equal(kbps(PCIE_RX_STEP, 500000000ull), 10000);

    assert_int_equal(fake_calls(lib, "nvmlDeviceGetTotalEnergyConsumption"), 4);
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetComputeRunningProcesses_v3"), 8);
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetComputeRunningProcesses_v2"), 0);
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetComputeRunningProcesses"), 0);
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetCurrentClocksEventReasons"), 8);
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"), 0);
    /* NOT_SUPPORTED once per device, then never asked again */
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetFanSpeed"), 2);
    /* memory temperature every sample, the PCIe counters 3 times a device */
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetFieldValues"), 8 + 6);
    /* the handle is looked up once per device, not per sample */
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetHandleByIndex_v2"), 2);
    close_nvml();
}

/* The process is not listed (another PID namespace): its memory is
 * unknown, not 0; a pid of 0 is never looked up. */
static void test_sample_pid_not_listed(void **state)
{
    (void)state;
    open_nvml(GFL_FAKE_NVML_FULL, "devices=1,hide_pid=1");
    gpufl__nvml_state st;
    memset(&st, 0, sizeof st);
    gfl_device_metrics_payload m;
    gpufl__nvml_sample(&api, 0, &st, 1000, (int)getpid(), &m);
    gfl_device_metrics_payload e = expected(0, 0, 0, false, VALID_FULL & ~GFL_DEV_PROC_MEM);
    check_sample(&m, &e);
    close_nvml();

    open_nvml(GFL_FAKE_NVML_FULL, "devices=1");
    memset(&st, 0, sizeof st);
    gpufl__nvml_sample(&api, 0, &st, 1000, 0, &m);
    check_sample(&m, &e);
    assert_int_equal(fake_calls(GFL_FAKE_NVML_FULL, "nvmlDeviceGetComputeRunningProcesses_v3"), 0);
    close_nvml();
}

/* Scripted errors clear exactly their fields; a failing v2 memory call
 * falls back to v1 on that device only. */
static void test_sample_scripted_errors(void **state)
{
    (void)state;
    open_nvml(GFL_FAKE_NVML_FULL, "devices=2,error.nvmlDeviceGetPowerUsage=3,"
                                  "error.nvmlDeviceGetTemperature=3,"
                                  "error.nvmlDeviceGetMemoryInfo_v2:1=3");
    gpufl__nvml_state st[2];
    memset(st, 0, sizeof st);
    uint32_t valid = VALID_FULL & ~(GFL_DEV_POWER | GFL_DEV_TEMP);
    for (unsigned k = 0; k < 2; k++) {
        for (unsigned i = 0; i < 2; i++) {
            gfl_device_metrics_payload m;
            /* 1 s apart: energy and the PCIe counters are read each time */
            uint64_t ts = 1000000000ull + k * 1000000000ull;
            gpufl__nvml_sample(&api, i, &st[i], ts, (int)getpid(), &m);
            gfl_device_metrics_payload e = expected(i, k, k, i == 1, valid);
            if (k > 0)
                expect_pcie(&e, 1000000000ull);
            check_sample(&m, &e);
        }
    }
    assert_int_equal(fake_calls(GFL_FAKE_NVML_FULL, "nvmlDeviceGetMemoryInfo"), 2);
    close_nvml();

    /* all three clocks or none */
    open_nvml(GFL_FAKE_NVML_FULL, "devices=1,error.nvmlDeviceGetClockInfo=2");
    memset(st, 0, sizeof st);
    gfl_device_metrics_payload m;
    gpufl__nvml_sample(&api, 0, &st[0], 1000, (int)getpid(), &m);
    gfl_device_metrics_payload e = expected(0, 0, 0, false, VALID_FULL & ~GFL_DEV_CLOCKS);
    check_sample(&m, &e);
    close_nvml();
}

/* ---- the legacy fake: an old driver's symbols ---------------------------------------- */

static void test_legacy(void **state)
{
    (void)state;
    const char *lib = GFL_FAKE_NVML_LEGACY;
    open_nvml(lib, "devices=2");
    assert_int_equal(api.process_record_size, 16);
    assert_null(api.device_attributes);
    assert_null(api.device_memory_v2);
    assert_null(api.device_field_values);
    assert_null(api.device_energy);

    static gpufl__device_list list;
    char err[256] = "";
    assert_int_equal(gpufl__nvml_describe(&api, &list, err, sizeof err), 0);
    assert_string_equal(list.driver_version, "535.104.05");
    assert_int_equal(list.cuda_driver_version, 12020);
    assert_int_equal(list.count, 2);
    check_desc(&list.devices[0], 0); /* SMs from cores, memory from v1 */
    check_desc(&list.devices[1], 1);
    static const char *const used[] = {
        "nvmlInit",
        "nvmlDeviceGetCount",
        "nvmlDeviceGetHandleByIndex",
        "nvmlDeviceGetPciInfo_v2",
        "nvmlDeviceGetNumGpuCores",
        "nvmlDeviceGetMemoryInfo",
        "nvmlSystemGetCudaDriverVersion",
    };
    for (size_t u = 0; u < sizeof used / sizeof used[0]; u++)
        assert_true(fake_calls(lib, used[u]) > 0);

    gpufl__nvml_state st[2];
    memset(st, 0, sizeof st);
    for (unsigned k = 0; k < 3; k++) {
        for (unsigned i = 0; i < 2; i++) {
            gfl_device_metrics_payload m;
            gpufl__nvml_sample(&api, i, &st[i], 1000000000ull + k * 10000000ull, (int)getpid(), &m);
            /* describe called memory once already; no PCIe without counters */
            gfl_device_metrics_payload e = expected(i, k, k + 1, true, VALID_LEGACY);
            check_sample(&m, &e);
        }
    }
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"), 6);
    assert_int_equal(fake_calls(lib, "nvmlDeviceGetComputeRunningProcesses"), 6);
    close_nvml();
    assert_int_equal(fake_init_depth(lib), 0);
}

/* ---- the default library name (fresh processes) ----------------------------------------- */

/* The child's cmocka must write to the terminal, never over the parent's
 * XML report. */
#define CHILD_UNSET "GPUFL_NVML_LIBRARY", "CMOCKA_MESSAGE_OUTPUT", "CMOCKA_XML_FILE"

static char fake_dir[4096];

/* LD_LIBRARY_PATH=<dirs> followed by the caller's own path, which may be
 * where libcmocka and libjansson are (an unpacked .deb tree, say): the fake
 * directories come first, nothing the test binary needs is lost. */
static void ld_library_path(char *buf, size_t len, const char *dirs)
{
    const char *inherited = getenv("LD_LIBRARY_PATH");
    snprintf(buf, len, "LD_LIBRARY_PATH=%s%s%s", dirs, inherited && inherited[0] ? ":" : "",
             inherited ? inherited : "");
}

static const char *full_fake_dir(void)
{
    snprintf(fake_dir, sizeof fake_dir, "%s", GFL_FAKE_NVML_FULL);
    return dirname(fake_dir);
}

/* A fresh directory (removed by cleanup) holding only libnvidia-ml.so, the
 * name a development package installs, as a link to the legacy fake. */
static const char *dev_link_dir(void)
{
    current_log_path = tu_mkdtemp("nvml-link");
    char link[4200];
    snprintf(link, sizeof link, "%s/libnvidia-ml.so", current_log_path);
    assert_int_equal(symlink(GFL_FAKE_NVML_LEGACY, link), 0);
    return current_log_path;
}

/* Whether the library at path (as /proc/self/maps names it) is mapped. */
static bool fake_mapped(const char *path)
{
    char *real = realpath(path, NULL);
    assert_non_null(real);
    bool mapped = tu_mapped(real);
    free(real);
    return mapped;
}

static void open_by_default_name(void)
{
    assert_null(getenv("GPUFL_NVML_LIBRARY"));
    char err[512] = "";
    int rc = gpufl__nvml_open(&api, err, sizeof err);
    if (rc != 0)
        fail_msg("gpufl__nvml_open: %d: %s", rc, err);
    api_open = true;
}

/* libnvidia-ml.so.1 wins over libnvidia-ml.so, both on the search path. */
static void child_default_name(void **state)
{
    (void)state;
    open_by_default_name();
    assert_string_equal(api.path, "libnvidia-ml.so.1");
    assert_true(fake_mapped(GFL_FAKE_NVML_FULL));
    assert_false(fake_mapped(GFL_FAKE_NVML_LEGACY));
    static gpufl__device_list list;
    char err[256] = "";
    assert_int_equal(gpufl__nvml_describe(&api, &list, err, sizeof err), 0);
    assert_string_equal(list.driver_version, "580.95.05"); /* the full fake's */
    assert_int_equal(list.count, 3);
    check_desc(&list.devices[2], 2);
    close_nvml();
}

static void test_default_library_name(void **state)
{
    (void)state;
    char dirs[8400], ld[16384];
    snprintf(dirs, sizeof dirs, "%s:%s", dev_link_dir(), full_fake_dir());
    ld_library_path(ld, sizeof ld, dirs);
    const char *set[] = {ld, "FAKE_NVML=devices=3", NULL};
    const char *unset[] = {CHILD_UNSET, NULL};
    tu_run_child("default_name", set, unset);
}

/* Without libnvidia-ml.so.1, libnvidia-ml.so is tried. */
static void child_fallback_name(void **state)
{
    (void)state;
    void *real = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (real) {
        dlclose(real);
        skip(); /* a real driver is installed: it would be found first */
    }
    open_by_default_name();
    assert_string_equal(api.path, "libnvidia-ml.so");
    assert_true(fake_mapped(GFL_FAKE_NVML_LEGACY));
    static gpufl__device_list list;
    char err[256] = "";
    assert_int_equal(gpufl__nvml_describe(&api, &list, err, sizeof err), 0);
    assert_string_equal(list.driver_version, "535.104.05"); /* the legacy fake's */
    assert_int_equal(list.count, 1);
    check_desc(&list.devices[0], 0);
    close_nvml();
}

static void test_fallback_library_name(void **state)
{
    (void)state;
    char ld[16384];
    ld_library_path(ld, sizeof ld, dev_link_dir());
    const char *set[] = {ld, "FAKE_NVML=devices=1", NULL};
    const char *unset[] = {CHILD_UNSET, NULL};
    tu_run_child("fallback_name", set, unset);
}

/* ---- sessions --------------------------------------------------------------------------- */

static void sleep_ms(unsigned ms)
{
    struct timespec t = {0, (long)ms * 1000000L};
    nanosleep(&t, NULL);
}

/* Waits (10 s at most, a bound that only a hung sampler reaches) until
 * the session's system.log holds a host_metrics line. */
static void wait_for_host_sample(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/system.log", gpufl_session_dir());
    for (int tries = 0; tries < 1000; tries++) {
        char *text = tu_read_file(path, NULL);
        bool found = text && strstr(text, "\"type\":\"host_metrics\"");
        free(text);
        if (found)
            return;
        sleep_ms(10);
    }
    fail_msg("no host_metrics line in %s after 10 s", path);
}

/* Waits (10 s at most) until the fake was sampled n times. */
static void wait_for_device_samples(const char *lib, long n)
{
    for (int tries = 0; tries < 1000; tries++) {
        if (fake_calls(lib, "nvmlDeviceGetUtilizationRates") >= n)
            return;
        sleep_ms(10);
    }
    fail_msg("fewer than %ld device samples after 10 s", n);
}

/* Records a session: with sampling, until the host was sampled and lib (if
 * given) device_samples times; lib must be initialised depth times while
 * recording. Returns its directory (malloc'd). */
static char *record(gpufl_backend backend, uint32_t sample_ms, const char *lib, int depth, long device_samples)
{
    current_log_path = tu_mkdtemp("nvml");
    gpufl_options o;
    gpufl_options_init(&o);
    o.log_format = GPUFL_LOG_NDJSON; /* read back from device.log */
    o.app_name = "test_nvml";
    o.log_path = current_log_path;
    o.system_sample_rate_ms = sample_ms;
    o.continuous_system_sampling = true;
    o.backend = backend;
    assert_true(gpufl_init(&o));
    if (lib)
        assert_int_equal(fake_init_depth(lib), depth);
    if (lib && device_samples)
        wait_for_device_samples(lib, device_samples);
    if (sample_ms)
        wait_for_host_sample();
    gpufl_shutdown();
    char *dir = tu_session_dir(current_log_path);
    assert_non_null(dir);
    return dir;
}

static void load(const char *dir, const char *channel, tu_ndjson *f)
{
    assert_int_equal(tu_ndjson_load_channel(dir, channel, f), 0);
    assert_int_equal(f->tail_bytes, 0);
}

static void check_device_json(json_t *d, unsigned i)
{
    char s[64];
    assert_int_equal(tu_int(d, "index"), i);
    assert_string_equal(tu_str(d, "vendor"), "nvidia");
    snprintf(s, sizeof s, "Fake GPU %u", i);
    assert_string_equal(tu_str(d, "name"), s);
    snprintf(s, sizeof s, "GPU-fake-%u", i);
    assert_string_equal(tu_str(d, "uuid"), s);
    snprintf(s, sizeof s, "00000000:%02X:00.0", 0x19 + i);
    assert_string_equal(tu_str(d, "pci_bus_id"), s);
    assert_string_equal(tu_str(d, "compute_capability"), "9.0");
    assert_int_equal(tu_int(d, "sm_count"), 132);
    assert_int_equal(tu_int(d, "memory_total_bytes"), MEM_TOTAL);
    assert_int_equal(tu_int(d, "power_limit_mw"), 700000);
    assert_int_equal(tu_int(d, "max_sm_clock_mhz"), 1980);
    assert_int_equal(tu_int(d, "max_mem_clock_mhz"), 2619);
    assert_int_equal(tu_int(d, "pcie_max_gen"), 5);
    assert_int_equal(tu_int(d, "pcie_max_width"), 16);
    assert_string_equal(tu_str(d, "driver_version"), "580.95.05");
    assert_string_equal(tu_str(d, "cuda_driver_version"), "13.0");
}

static void check_device_info_line(json_t *line, unsigned i)
{
    char s[64];
    assert_int_equal(tu_int(line, "device"), i);
    snprintf(s, sizeof s, "Fake GPU %u", i);
    assert_string_equal(tu_str(line, "name"), s);
    snprintf(s, sizeof s, "GPU-fake-%u", i);
    assert_string_equal(tu_str(line, "uuid"), s);
    snprintf(s, sizeof s, "00000000:%02X:00.0", 0x19 + i);
    assert_string_equal(tu_str(line, "pci_bus_id"), s);
    assert_string_equal(tu_str(line, "compute_capability"), "9.0");
    assert_int_equal(tu_int(line, "sm_count"), 132);
    assert_int_equal(tu_int(line, "memory_total_bytes"), MEM_TOTAL);
    assert_int_equal(tu_int(line, "power_limit_mw"), 700000);
    assert_string_equal(tu_str(line, "driver_version"), "580.95.05");
    assert_string_equal(tu_str(line, "cuda_driver_version"), "13.0");
}

/* What the checker knows of one device's earlier lines: mirrors the
 * sampler's cadence of slow readings (energy each second, PCIe each 250 ms). */
typedef struct line_state {
    unsigned lines;
    unsigned energy_reads, pcie_reads;
    uint64_t energy_due, pcie_due, pcie_ts;
} line_state;

/* The next device_metrics line of device i, checked exactly. */
static void check_metrics_line(json_t *line, unsigned i, line_state *ls)
{
    unsigned j = ls->lines++;
    uint64_t ts = (uint64_t)tu_int(line, "ts_ns");
    bool energy = ts >= ls->energy_due, pcie = ts >= ls->pcie_due;
    /* describe read memory once before the first sample */
    gfl_device_metrics_payload e = expected_e(i, j, j + 1, ls->energy_reads, false, VALID_FULL);
    assert_int_equal(tu_int(line, "gpu_util_pct"), e.gpu_util_pct);
    assert_int_equal(tu_int(line, "mem_util_pct"), e.mem_util_pct);
    assert_int_equal(tu_int(line, "mem_used_bytes"), e.mem_used_bytes);
    assert_int_equal(tu_int(line, "mem_total_bytes"), e.mem_total_bytes);
    assert_int_equal(tu_int(line, "mem_free_bytes"), e.mem_free_bytes);
    assert_int_equal(tu_int(line, "proc_mem_bytes"), e.proc_mem_bytes);
    assert_int_equal(tu_int(line, "temp_c"), e.temp_c);
    assert_int_equal(tu_int(line, "mem_temp_c"), e.mem_temp_c);
    assert_int_equal(tu_int(line, "power_mw"), e.power_mw);
    assert_int_equal(tu_int(line, "power_limit_mw"), e.power_limit_mw);
    if (energy) {
        assert_int_equal(tu_int(line, "energy_mj"), e.energy_mj);
        ls->energy_reads++;
        ls->energy_due = ts + GFL_NVML_ENERGY_PERIOD_NS;
    } else {
        assert_null(json_object_get(line, "energy_mj"));
    }
    assert_int_equal(tu_int(line, "sm_clock_mhz"), e.sm_clock_mhz);
    assert_int_equal(tu_int(line, "mem_clock_mhz"), e.mem_clock_mhz);
    assert_int_equal(tu_int(line, "gfx_clock_mhz"), e.gfx_clock_mhz);
    assert_int_equal(tu_int(line, "throttle_mask"), e.throttle_reasons);
    json_t *names = json_object_get(line, "throttle");
    assert_int_equal(json_array_size(names), 1);
    assert_string_equal(json_string_value(json_array_get(names, 0)), j % 2 ? "sw_power_cap" : "gpu_idle");
    assert_int_equal(tu_int(line, "ecc_corrected"), e.ecc_corrected);
    assert_int_equal(tu_int(line, "ecc_uncorrected"), e.ecc_uncorrected);
    assert_null(json_object_get(line, "fan_pct"));
    if (pcie && ls->pcie_reads > 0) {
        assert_true(ts > ls->pcie_ts);
        assert_int_equal(tu_int(line, "pcie_tx_kbps"), kbps(PCIE_TX_STEP, ts - ls->pcie_ts));
        assert_int_equal(tu_int(line, "pcie_rx_kbps"), kbps(PCIE_RX_STEP, ts - ls->pcie_ts));
    } else {
        assert_null(json_object_get(line, "pcie_tx_kbps"));
        assert_null(json_object_get(line, "pcie_rx_kbps"));
    }
    if (pcie) {
        ls->pcie_reads++;
        ls->pcie_ts = ts;
        ls->pcie_due = ts + GFL_NVML_PCIE_PERIOD_NS;
    }
}

static void test_session_with_devices(void **state)
{
    (void)state;
    const char *lib = GFL_FAKE_NVML_FULL;
    tu_setenv("GPUFL_NVML_LIBRARY", lib);
    tu_setenv("FAKE_NVML", "devices=2");
    char *dir = record(GPUFL_BACKEND_AUTO, 10, lib, 1, 2 * 5); /* 5 samples of 2 GPUs */
    assert_int_equal(fake_init_depth(lib), 0);                 /* the sampler shut NVML down */

    json_t *session = tu_session_json(dir);
    json_t *devices = json_object_get(session, "devices");
    assert_int_equal(json_array_size(devices), 2);
    check_device_json(json_array_get(devices, 0), 0);
    check_device_json(json_array_get(devices, 1), 1);

    tu_ndjson dev;
    load(dir, "device", &dev);
    assert_int_equal(tu_count_type(&dev, "device_info"), 2);
    check_device_info_line(tu_nth_type(&dev, "device_info", 0), 0);
    check_device_info_line(tu_nth_type(&dev, "device_info", 1), 1);
    tu_ndjson_free(&dev);

    tu_ndjson sys;
    load(dir, "system", &sys);
    size_t n[2] = {0, 0};
    line_state ls[2];
    memset(ls, 0, sizeof ls);
    uint64_t util_max[2] = {0, 0}, mem_max[2] = {0, 0};
    long long energy_first[2] = {-1, -1}, energy_last[2] = {0, 0};
    for (size_t k = 0; k < tu_count_type(&sys, "device_metrics"); k++) {
        json_t *line = tu_nth_type(&sys, "device_metrics", k);
        long long i = tu_int(line, "device");
        assert_in_range(i, 0, 1);
        check_metrics_line(line, (unsigned)i, &ls[i]);
        long long util = tu_int(line, "gpu_util_pct"), mem = tu_int(line, "mem_used_bytes");
        util_max[i] = (uint64_t)util > util_max[i] ? (uint64_t)util : util_max[i];
        mem_max[i] = (uint64_t)mem > mem_max[i] ? (uint64_t)mem : mem_max[i];
        if (json_object_get(line, "energy_mj")) {
            if (energy_first[i] < 0)
                energy_first[i] = tu_int(line, "energy_mj");
            energy_last[i] = tu_int(line, "energy_mj");
        }
        n[i]++;
    }
    /* each sample has both devices */
    assert_true(n[0] >= 5);
    assert_int_equal(n[0], n[1]);
    tu_ndjson_free(&sys);

    json_t *sum = json_object_get(json_object_get(session, "summary"), "devices");
    assert_int_equal(json_array_size(sum), 2);
    for (unsigned i = 0; i < 2; i++) {
        json_t *d = json_array_get(sum, i);
        assert_int_equal(tu_int(d, "device"), i);
        assert_int_equal(tu_int(d, "samples"), n[i]);
        assert_int_equal(tu_int(d, "gpu_util_pct_max"), util_max[i]);
        assert_int_equal(tu_int(d, "mem_used_peak_bytes"), mem_max[i]);
        assert_int_equal(tu_int(d, "mem_total_bytes"), MEM_TOTAL);
        assert_int_equal(tu_int(d, "power_max_mw"), 100000 + 1000 * i);
        assert_int_equal(tu_int(d, "temp_max_c"), 40 + i);
        assert_true(ls[i].energy_reads >= 1);
        assert_int_equal(tu_int(d, "energy_mj"), energy_last[i] - energy_first[i]);
        assert_int_equal(tu_int(d, "energy_mj"), 1000 * ((long long)ls[i].energy_reads - 1));
    }
    json_decref(session);
    free(dir);
}

/* Without sampling, NVML is shut down as soon as the devices are described. */
static void test_session_without_sampling(void **state)
{
    (void)state;
    const char *lib = GFL_FAKE_NVML_FULL;
    tu_setenv("GPUFL_NVML_LIBRARY", lib);
    tu_setenv("FAKE_NVML", "devices=2");
    char *dir = record(GPUFL_BACKEND_NVIDIA, 0, lib, 0, 0); /* already shut down */
    json_t *session = tu_session_json(dir);
    assert_int_equal(json_array_size(json_object_get(session, "devices")), 2);
    json_decref(session);
    tu_ndjson dev, sys;
    load(dir, "device", &dev);
    assert_int_equal(tu_count_type(&dev, "device_info"), 2);
    load(dir, "system", &sys);
    assert_int_equal(tu_count_type(&sys, "device_metrics"), 0);
    tu_ndjson_free(&dev);
    tu_ndjson_free(&sys);
    free(dir);
}

/* The line in system.log that says why there is no GPU telemetry. */
static json_t *device_note(const tu_ndjson *sys)
{
    for (size_t k = 0; k < tu_count_type(sys, "log"); k++) {
        json_t *line = tu_nth_type(sys, "log", k);
        if (strstr(tu_str(line, "message"), "no GPU telemetry"))
            return line;
    }
    return NULL;
}

static void check_missing_driver(gpufl_backend backend, const char *level)
{
    const char *path = "/nonexistent/gpufl-test/libnvidia-ml.so.1";
    tu_setenv("GPUFL_NVML_LIBRARY", path);
    char *dir = record(backend, 10, NULL, 0, 0);
    json_t *session = tu_session_json(dir);
    assert_int_equal(json_array_size(json_object_get(session, "devices")), 0);
    json_decref(session);
    tu_ndjson sys;
    load(dir, "system", &sys);
    assert_int_equal(tu_count_type(&sys, "device_metrics"), 0);
    assert_true(tu_count_type(&sys, "host_metrics") > 0); /* still recording the host */
    json_t *note = device_note(&sys);
    assert_non_null(note);
    assert_string_equal(tu_str(note, "level"), level);
    assert_non_null(strstr(tu_str(note, "message"), path));
    tu_ndjson_free(&sys);
    free(dir);
    cleanup(NULL);
}

static void test_session_missing_driver(void **state)
{
    (void)state;
    check_missing_driver(GPUFL_BACKEND_NVIDIA, "warn"); /* asked for by name */
    check_missing_driver(GPUFL_BACKEND_AUTO, "info");
}

/* NVML loads but cannot count its devices: the note says why, and NVML is
 * shut down at once rather than held by a session that cannot use it. */
static void test_session_describe_failure(void **state)
{
    (void)state;
    const char *lib = GFL_FAKE_NVML_FULL;
    tu_setenv("GPUFL_NVML_LIBRARY", lib);
    tu_setenv("FAKE_NVML", "devices=2,error.nvmlDeviceGetCount_v2=4");
    char *dir = record(GPUFL_BACKEND_NVIDIA, 10, lib, 0, 0);
    assert_int_equal(fake_calls(lib, "nvmlShutdown"), 1);
    json_t *session = tu_session_json(dir);
    assert_int_equal(json_array_size(json_object_get(session, "devices")), 0);
    json_decref(session);
    tu_ndjson sys;
    load(dir, "system", &sys);
    assert_int_equal(tu_count_type(&sys, "device_metrics"), 0);
    json_t *note = device_note(&sys);
    assert_non_null(note);
    assert_string_equal(tu_str(note, "level"), "warn");
    assert_non_null(strstr(tu_str(note, "message"), "nvmlDeviceGetCount failed: Insufficient Permissions"));
    tu_ndjson_free(&sys);
    free(dir);
}

/* backend none: the library is never even loaded (a fresh process, which
 * has loaded no NVML before). */
static void child_backend_none(void **state)
{
    (void)state;
    tu_setenv("GPUFL_NVML_LIBRARY", GFL_FAKE_NVML_FULL);
    char *dir = record(GPUFL_BACKEND_NONE, 10, NULL, 0, 0);
    assert_false(tu_mapped("libnvidia-ml"));
    json_t *session = tu_session_json(dir);
    assert_int_equal(json_array_size(json_object_get(session, "devices")), 0);
    json_decref(session);
    tu_ndjson dev, sys;
    load(dir, "device", &dev);
    assert_int_equal(tu_count_type(&dev, "device_info"), 0);
    load(dir, "system", &sys);
    assert_int_equal(tu_count_type(&sys, "device_metrics"), 0);
    assert_true(tu_count_type(&sys, "host_metrics") > 0);
    assert_null(device_note(&sys)); /* nothing was missing: none was asked for */
    tu_ndjson_free(&dev);
    tu_ndjson_free(&sys);
    free(dir);
}

static void test_backend_none_never_loads(void **state)
{
    (void)state;
    const char *set[] = {"FAKE_NVML=devices=2", NULL};
    const char *unset[] = {CHILD_UNSET, NULL};
    tu_run_child("backend_none", set, unset);
}

/* ---- main ------------------------------------------------------------------------------ */

static const struct {
    const char *name;
    struct CMUnitTest test;
} children[] = {
    {"default_name", cmocka_unit_test_teardown(child_default_name, cleanup)},
    {"fallback_name", cmocka_unit_test_teardown(child_fallback_name, cleanup)},
    {"backend_none", cmocka_unit_test_teardown(child_backend_none, cleanup)},
};

int main(int argc, char **argv)
{
    save_env();
    if (argc == 3 && !strcmp(argv[1], "--child")) {
        for (size_t c = 0; c < sizeof children / sizeof children[0]; c++) {
            if (strcmp(children[c].name, argv[2]) != 0)
                continue;
            const struct CMUnitTest one[] = {children[c].test};
            return cmocka_run_group_tests_name(children[c].name, one, NULL, NULL);
        }
        fprintf(stderr, "test_nvml: no child case '%s'\n", argv[2]);
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_backend_none_never_loads, cleanup),
        cmocka_unit_test_teardown(test_missing_library, cleanup),
        cmocka_unit_test_teardown(test_init_failure, cleanup),
        cmocka_unit_test_teardown(test_missing_required_symbols, cleanup),
        cmocka_unit_test_teardown(test_full_describe, cleanup),
        cmocka_unit_test_teardown(test_describe_partial_failures, cleanup),
        cmocka_unit_test_teardown(test_full_sample, cleanup),
        cmocka_unit_test_teardown(test_sample_pid_not_listed, cleanup),
        cmocka_unit_test_teardown(test_sample_scripted_errors, cleanup),
        cmocka_unit_test_teardown(test_legacy, cleanup),
        cmocka_unit_test_teardown(test_default_library_name, cleanup),
        cmocka_unit_test_teardown(test_fallback_library_name, cleanup),
        cmocka_unit_test_teardown(test_session_with_devices, cleanup),
        cmocka_unit_test_teardown(test_session_without_sampling, cleanup),
        cmocka_unit_test_teardown(test_session_missing_driver, cleanup),
        cmocka_unit_test_teardown(test_session_describe_failure, cleanup),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    for (size_t i = 0; i < N_MANAGED; i++)
        free(saved_env[i]);
    return failed;
}
