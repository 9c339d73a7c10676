/*
 * NVML metric source (see nvml_source.h). Sampler thread only.
 */
#include "backend/nvml/nvml_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/nvml/nvml_api.h"
#include "backend/nvml/nvml_device.h"
#include "gpufl/gpufl.h"

struct gpufl__nvml_source {
    gpufl__nvml_api api;
    unsigned count;
    unsigned index[GFL_MAX_DEVICES];
    gpufl__nvml_state state[GFL_MAX_DEVICES];
    int pid;
};

int gpufl__nvml_source_open(gpufl__nvml_source **out, gpufl__device_list *devices, char *err, size_t err_len)
{
    gpufl__nvml_source *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_len, "out of memory");
        return GPUFL_ENOMEM;
    }
    int rc = gpufl__nvml_open(&s->api, err, err_len);
    if (rc == 0 && (rc = gpufl__nvml_describe(&s->api, devices, err, err_len)) != 0)
        gpufl__nvml_close(&s->api);
    if (rc != 0) {
        free(s);
        return rc;
    }
    s->count = devices->count;
    for (unsigned i = 0; i < s->count; i++)
        s->index[i] = devices->devices[i].index;
    s->pid = (int)getpid();
    *out = s;
    return 0;
}

void gpufl__nvml_source_close(gpufl__nvml_source *s)
{
    if (!s)
        return;
    gpufl__nvml_close(&s->api);
    free(s);
}

static size_t source_sample(void *self, uint64_t ts, gfl_event *out, size_t max)
{
    gpufl__nvml_source *s = self;
    size_t n = 0;
    for (unsigned i = 0; i < s->count && n < max; i++, n++) {
        memset(&out[n].h, 0, sizeof out[n].h);
        out[n].h.type = GFL_EV_DEVICE_METRICS;
        out[n].h.device = (uint16_t)s->index[i];
        out[n].h.ts = ts;
        gpufl__nvml_sample(&s->api, s->index[i], &s->state[i], ts, s->pid, &out[n].u.dev);
    }
    return n;
}

static void source_close(void *self) { gpufl__nvml_source_close(self); }

gpufl__metric_source gpufl__nvml_source_metric(gpufl__nvml_source *s)
{
    return (gpufl__metric_source){"nvml", s, source_sample, NULL, source_close};
}
