/*
 * Live readings for the CLI (see live.h).
 */
#include "cli/live.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "gpufl/gpufl.h"

int gpufl__live_open(gpufl__live *live, char *err, size_t err_len)
{
    memset(live, 0, sizeof *live);
    if (gpufl__host_metrics_open(&live->host, "/proc") != 0) {
        snprintf(err, err_len, "out of memory");
        return GPUFL_ENOMEM;
    }
    int rc = gpufl__nvml_open(&live->api, live->nvml_error, sizeof live->nvml_error);
    if (rc == GPUFL_ENOTFOUND)
        return 0;
    if (rc == 0)
        rc = gpufl__nvml_describe(&live->api, &live->devices, live->nvml_error, sizeof live->nvml_error);
    if (rc != 0) {
        if (live->api.lib)
            gpufl__nvml_close(&live->api);
        snprintf(err, err_len, "%s", live->nvml_error);
        gpufl__host_metrics_close(live->host);
        live->host = NULL;
        return GPUFL_EIO;
    }
    live->have_nvml = true;
    return 0;
}

void gpufl__live_sample_now(gpufl__live *live, gpufl__live_sample *out)
{
    out->ts_ns = gpufl__mono_ns();
    out->wall_ns = gpufl__wall_ns();
    for (uint32_t i = 0; live->have_nvml && i < live->devices.count; i++)
        gpufl__nvml_sample(&live->api, live->devices.devices[i].index, &live->state[i], out->ts_ns, (int)getpid(),
                           &out->gpu[i]);
    gpufl__host_metrics_read(live->host, out->ts_ns, &out->host);
}

void gpufl__live_close(gpufl__live *live)
{
    if (live->have_nvml)
        gpufl__nvml_close(&live->api);
    gpufl__host_metrics_close(live->host);
    memset(live, 0, sizeof *live);
}

void gpufl__throttle_text(uint64_t mask, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned b = 0; b < GFL_THROTTLE_REASON_COUNT; b++)
        if (mask & (1ull << b))
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "," : "",
                                     gpufl__throttle_reason_name(b));
    if (!used)
        snprintf(buf, len, "none");
}
