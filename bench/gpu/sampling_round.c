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
