/*
 * One sampling round, timed (see sampling_round.h).
 */
#include "sampling_round.h"

#include <stdio.h>
#include <stdlib.h>

#include "backend/host/host_metrics.h"
#include "backend/nvml/nvml_source.h"
#include "bench_util.h"

int bench_sampling_round(int rounds, double *nvml_us, double *host_us)
{
    gpufl__device_list devices;
    gpufl__nvml_source *src;
    gpufl__host_metrics *host;
    char err[512];
    if (gpufl__nvml_source_open(&src, &devices, err, sizeof err) != 0) {
        fprintf(stderr, "NVML: %s\n", err);
        return -1;
    }
    if (gpufl__host_metrics_open(&host, "/proc") != 0) {
        gpufl__nvml_source_close(src);
        return -1;
    }
    gpufl__metric_source nvml = gpufl__nvml_source_metric(src), hm = gpufl__host_metrics_source(host);
    static gfl_event ev[GFL_MAX_DEVICES];
    double *tn = calloc((size_t)rounds, sizeof *tn), *th = calloc((size_t)rounds, sizeof *th);
    for (int i = 0; i < rounds; i++) {
        uint64_t t0 = bench_now_ns();
        nvml.sample(nvml.self, t0, ev, GFL_MAX_DEVICES);
        uint64_t t1 = bench_now_ns();
        hm.sample(hm.self, t1, ev, 1);
        uint64_t t2 = bench_now_ns();
        tn[i] = (double)(t1 - t0) / 1e3;
        th[i] = (double)(t2 - t1) / 1e3;
    }
    *nvml_us = bench_median(tn, (size_t)rounds);
    *host_us = bench_median(th, (size_t)rounds);
    free(tn);
    free(th);
    nvml.close(nvml.self);
    hm.close(hm.self);
    return 0;
}

/* ---- per-call costs ---------------------------------------------------------- */

#include "backend/nvml/nvml_api.h"

#define CALLS 50

typedef struct call_timer {
    const char *name;
    double us[CALLS];
} call_timer;

static double time_median(call_timer *t) { return bench_median(t->us, CALLS); }

int bench_nvml_call_costs(void)
{
    gpufl__nvml_api api;
    char err[512];
    if (gpufl__nvml_open(&api, err, sizeof err) != 0) {
        fprintf(stderr, "NVML: %s\n", err);
        return -1;
    }
    gfl_nvml_device dev;
    if (api.device_by_index(0, &dev) != GFL_NVML_SUCCESS) {
        gpufl__nvml_close(&api);
        return -1;
    }
    static unsigned char procs[64 * sizeof(gfl_nvml_process_v2)];
    printf("  NVML call costs on GPU 0, median of %d calls (us):\n", CALLS);
#define TIME(label, call)                                                                                              \
    do {                                                                                                               \
        call_timer t = {label, {0}};                                                                                   \
        for (int i = 0; i < CALLS; i++) {                                                                              \
            uint64_t t0 = bench_now_ns();                                                                              \
            (void)(call);                                                                                              \
            t.us[i] = (double)(bench_now_ns() - t0) / 1e3;                                                             \
        }                                                                                                              \
        printf("    %-40s %9.1f\n", t.name, time_median(&t));                                                          \
    } while (0)
    gfl_nvml_utilization u;
    gfl_nvml_memory_v2 m2 = {.version = GFL_NVML_MEMORY_V2_VERSION};
    unsigned v, n;
    unsigned long long ull, ull2;
    gfl_nvml_field_value f[3] = {{.field_id = GFL_NVML_FI_MEMORY_TEMP},
                                 {.field_id = GFL_NVML_FI_PCIE_TX_BYTES},
                                 {.field_id = GFL_NVML_FI_PCIE_RX_BYTES}};
    TIME("nvmlDeviceGetHandleByIndex", api.device_by_index(0, &dev));
    TIME("nvmlDeviceGetUtilizationRates", api.device_utilization(dev, &u));
    TIME("nvmlDeviceGetMemoryInfo_v2", api.device_memory_v2(dev, &m2));
    TIME("nvmlDeviceGetTemperature", api.device_temperature(dev, 0, &v));
    TIME("nvmlDeviceGetPowerUsage", api.device_power_usage(dev, &v));
    TIME("nvmlDeviceGetEnforcedPowerLimit", api.device_power_limit(dev, &v));
    TIME("nvmlDeviceGetTotalEnergyConsumption", api.device_energy(dev, &ull));
    TIME("nvmlDeviceGetClockInfo x3",
         (api.device_clock(dev, 0, &v), api.device_clock(dev, 1, &v), api.device_clock(dev, 2, &v)));
    TIME("nvmlDeviceGetCurrentClocksEventReasons", api.device_clock_reasons(dev, &ull));
    TIME("nvmlDeviceGetFanSpeed", api.device_fan_speed(dev, &v));
    TIME("nvmlDeviceGetTotalEccErrors x2",
         (api.device_ecc_total(dev, 0, 0, &ull), api.device_ecc_total(dev, 1, 0, &ull2)));
    TIME("nvmlDeviceGetFieldValues (memT, PCIe tx/rx)", api.device_field_values(dev, 3, f));
    gfl_nvml_field_value fe[1] = {{.field_id = 83}}; /* NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION */
    TIME("nvmlDeviceGetFieldValues (energy, field 83)", api.device_field_values(dev, 1, fe));
    gfl_nvml_field_value fp[2] = {{.field_id = GFL_NVML_FI_PCIE_TX_BYTES}, {.field_id = GFL_NVML_FI_PCIE_RX_BYTES}};
    TIME("nvmlDeviceGetFieldValues (PCIe tx/rx)", api.device_field_values(dev, 2, fp));
    gfl_nvml_field_value fm[1] = {{.field_id = GFL_NVML_FI_MEMORY_TEMP}};
    TIME("nvmlDeviceGetFieldValues (memory temp)", api.device_field_values(dev, 1, fm));
    printf("    (energy field: return %d, value %llu)\n", fe[0].nvml_return, fe[0].value.ull);
    TIME("nvmlDeviceGetComputeRunningProcesses", (n = 64, api.device_processes(dev, &n, procs)));
#undef TIME
    fflush(stdout); /* a child process ends with _exit */
    gpufl__nvml_close(&api);
    return 0;
}
