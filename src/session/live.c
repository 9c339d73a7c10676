/*
 * Live readings without a recording (see live.h): NVML and /proc opened
 * the way a session opens them, sampled when the caller asks.
 */
#include "session/live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/host/host_metrics.h"
#include "backend/nvml/nvml_api.h"
#include "backend/nvml/nvml_device.h"
#include "core/clock.h"
#include "gpufl/gpufl.h"

struct gpufl__live_backend {
    gpufl__nvml_api api;
    gpufl__nvml_state state[GFL_MAX_DEVICES];
    gpufl__host_metrics *host;
};

int gpufl__live_open(gpufl__live *live, char *err, size_t err_len)
{
    memset(live, 0, sizeof *live);
    struct gpufl__live_backend *b = calloc(1, sizeof *b);
    if (!b || gpufl__host_metrics_open(&b->host, "/proc") != 0) {
        free(b);
        snprintf(err, err_len, "out of memory");
        return GPUFL_ENOMEM;
    }
    live->backend = b;
    int rc = gpufl__nvml_open(&b->api, live->nvml_error, sizeof live->nvml_error);
    if (rc == GPUFL_ENOTFOUND)
        return 0;
    if (rc == 0)
        rc = gpufl__nvml_describe(&b->api, &live->devices, live->nvml_error, sizeof live->nvml_error);
    if (rc != 0) {
        if (b->api.lib)
            gpufl__nvml_close(&b->api);
        snprintf(err, err_len, "%s", live->nvml_error);
        gpufl__host_metrics_close(b->host);
        free(b);
        live->backend = NULL;
        return GPUFL_EIO;
    }
    snprintf(live->nvml_library, sizeof live->nvml_library, "%s", b->api.path);
    live->have_nvml = true;
    return 0;
}

void gpufl__live_sample_now(gpufl__live *live, gpufl__live_sample *out)
{
    struct gpufl__live_backend *b = live->backend;
    out->ts_ns = gpufl__mono_ns();
    out->wall_ns = gpufl__wall_ns();
    for (uint32_t i = 0; live->have_nvml && i < live->devices.count; i++)
        gpufl__nvml_sample(&b->api, live->devices.devices[i].index, &b->state[i], out->ts_ns, (int)getpid(),
                           &out->gpu[i]);
    gpufl__host_metrics_read(b->host, out->ts_ns, &out->host);
}

void gpufl__live_sample_settled(gpufl__live *live, gpufl__live_sample *out)
{
    gpufl__live_sample_now(live, out);
    struct timespec pause = {0, (long)GFL_NVML_PCIE_PERIOD_NS};
    nanosleep(&pause, NULL);
    gpufl__live_sample_now(live, out);
}

unsigned gpufl__live_processes(gpufl__live *live, uint32_t i, gpufl__live_process *out, unsigned cap)
{
    struct gpufl__live_backend *b = live->backend;
    if (!live->have_nvml || i >= live->devices.count || !cap)
        return 0;
    gpufl__gpu_process procs[64];
    unsigned n =
        gpufl__nvml_processes(&b->api, live->devices.devices[i].index, &b->state[i], procs, cap < 64 ? cap : 64);
    for (unsigned k = 0; k < n; k++) {
        out[k] = (gpufl__live_process){.pid = procs[k].pid, .used_bytes = procs[k].used_bytes};
        char path[64];
        snprintf(path, sizeof path, "/proc/%u/comm", procs[k].pid);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(out[k].name, sizeof out[k].name, f))
                out[k].name[strcspn(out[k].name, "\n")] = '\0';
            fclose(f);
        }
    }
    return n;
}

void gpufl__live_close(gpufl__live *live)
{
    struct gpufl__live_backend *b = live->backend;
    if (b) {
        if (live->have_nvml)
            gpufl__nvml_close(&b->api);
        gpufl__host_metrics_close(b->host);
        free(b);
    }
    memset(live, 0, sizeof *live);
}
