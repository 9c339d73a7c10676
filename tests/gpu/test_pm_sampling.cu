/*
 * PM sampling on a known workload: a kernel that keeps every SM busy for
 * 0.5 s between idle stretches, sampled every 10 us through the public API
 * (include/gpufl/pm_sampling.h, the CUPTI plugin built here).
 *
 * Checks: SM activity is near 100 % while the kernel runs and near 0 when
 * the GPU idles; the busy samples span the kernel's own time, read from its
 * %globaltimer, which says PM timestamps are on the GPU's global timer;
 * the samples are contiguous at the asked interval. Prints what it saw, and
 * the host clocks beside the first sample, for the record.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include <cuda_runtime.h>
#include <unistd.h>

#include "gpu_skip.h"
#include "gpufl/pm_sampling.h"

#define SM_ACTIVE "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
#define BUSY_NS 500000000ull

__global__ void spin_marked(unsigned long long ns, unsigned long long *started)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *started = start;
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

static unsigned long long clock_ns(clockid_t id)
{
    timespec t;
    clock_gettime(id, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

int main()
{
    skip_without_gpu();
    if (GFL_CUPTI_PLUGIN[0])
        setenv("GPUFL_DEVICE_PLUGIN", GFL_CUPTI_PLUGIN, 0);
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess, "SM count");
    unsigned long long *started = nullptr;
    CHECK(cudaMalloc(&started, sizeof *started) == cudaSuccess, "cudaMalloc");

    gpufl_pm_collector *c = nullptr;
    int rc = gpufl_pm_collector_create(0, &c);
    CHECK(rc == 0, "create: %s", gpufl_pm_last_error(c));
    rc = gpufl_pm_enable(c);
    if (rc == GPUFL_PM_E_INSUFFICIENT_PRIVILEGES) {
        std::printf("SKIP: %s\n", gpufl_pm_last_error(c));
        return GPU_SKIP_CODE;
    }
    CHECK(rc == 0, "enable: %s: %s", gpufl_pm_error_string(rc), gpufl_pm_last_error(c));
    const char *metrics[] = {SM_ACTIVE};
    gpufl_pm_config cfg;
    gpufl_pm_config_init(&cfg);
    cfg.metrics = metrics;
    cfg.num_metrics = 1;
    rc = gpufl_pm_configure(c, &cfg);
    CHECK(rc == 0, "configure: %s", gpufl_pm_last_error(c));
    unsigned long long real0 = clock_ns(CLOCK_REALTIME), mono0 = clock_ns(CLOCK_MONOTONIC);
    CHECK(gpufl_pm_start(c) == 0, "start: %s", gpufl_pm_last_error(c));
    usleep(100000); /* idle */
    spin_marked<<<sms * 2, 128>>>(BUSY_NS, started);
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "spin");
    usleep(100000); /* idle */
    CHECK(gpufl_pm_stop(c) == 0, "stop: %s", gpufl_pm_last_error(c));
    unsigned long long kernel_start = 0;
    CHECK(cudaMemcpy(&kernel_start, started, sizeof kernel_start, cudaMemcpyDeviceToHost) == cudaSuccess, "copy");

    std::vector<unsigned long long> start, end;
    std::vector<double> value;
    bool overflow = false;
    for (int i = 0; i < 1000; i++) {
        gpufl_pm_counter_data *d = nullptr;
        CHECK(gpufl_pm_decode(c, 10000, &d) == 0, "decode: %s", gpufl_pm_last_error(c));
        for (uint64_t k = 0; k < d->num_samples; k++) {
            start.push_back(d->start_ns[k]);
            end.push_back(d->end_ns[k]);
            value.push_back(d->values[k]);
        }
        overflow = overflow || d->overflow;
        bool more = d->more || d->num_samples > 0;
        if (i == 0)
            std::printf("chip %s, metric %s\n", d->chip_name, d->metrics[0]);
        gpufl_pm_counter_data_free(d);
        if (!more)
            break;
    }
    CHECK(gpufl_pm_disable(c) == 0, "disable: %s", gpufl_pm_last_error(c));
    gpufl_pm_collector_destroy(c);
    size_t n = start.size();
    CHECK(n > 1000, "only %zu samples in 0.7 s at 10 us", n);
    std::printf("samples %zu, overflow %d\n", n, (int)overflow);
    std::printf("clocks at start(): realtime %llu, monotonic %llu; first sample start %llu (-realtime %lld ns); "
                "kernel globaltimer start %llu\n",
                real0, mono0, start[0], (long long)(start[0] - real0), kernel_start);
    std::vector<unsigned long long> widths;
    for (size_t i = 0; i < n; i++)
        widths.push_back(end[i] - start[i]);
    std::nth_element(widths.begin(), widths.begin() + n / 2, widths.end());
    std::printf("median sample width %llu ns\n", widths[n / 2]);
    CHECK(widths[n / 2] > 5000 && widths[n / 2] < 20000, "median width %llu ns for 10 us", widths[n / 2]);

    /* Busy by the kernel's own clock, with 5 ms margins; idle: before it by over 10 ms. */
    unsigned long long busy_from = kernel_start + 5000000, busy_to = kernel_start + BUSY_NS - 5000000;
    double busy_sum = 0, idle_sum = 0;
    size_t busy_n = 0, idle_n = 0;
    for (size_t i = 0; i < n; i++) {
        if (start[i] >= busy_from && end[i] <= busy_to) {
            busy_sum += value[i];
            busy_n++;
        } else if (end[i] + 10000000 < kernel_start) {
            idle_sum += value[i];
            idle_n++;
        }
    }
    CHECK(busy_n > 1000 && idle_n > 100, "%zu busy and %zu idle samples: are PM timestamps on the global timer?",
          busy_n, idle_n);
    double busy = busy_sum / busy_n, idle = idle_sum / idle_n;
    std::printf("SM active: %.2f %% while the kernel runs (%zu samples), %.2f %% idle (%zu samples)\n", busy, busy_n,
                idle, idle_n);
    CHECK(busy >= 90.0, "SM active %.2f %% under a kernel on every SM", busy);
    CHECK(idle <= 5.0, "SM active %.2f %% with the GPU idle", idle);
    std::printf("PASS\n");
    return 0;
}
