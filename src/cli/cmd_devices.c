/*
 * `gpufl devices [--json]`: every GPU with its identity, limits and current
 * state. The JSON uses the field names of the session logs' device_info and
 * device_metrics lines (docs/FORMAT.md): the same formatter writes them.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/live.h"
#include "format/ndjson_format.h"
#include "present/report/summary_text.h"

/* An event as the JSON object of its log line, without "type" and "ts_ns". */
static json_t *event_object(const gfl_event *ev)
{
    size_t bound = gpufl__ndjson_bound(ev, &gpufl__intern_lookup);
    char *line = malloc(bound);
    if (!line)
        return NULL;
    size_t n = gpufl__ndjson_format(ev, &gpufl__intern_lookup, line);
    json_t *o = json_loadb(line, n, 0, NULL);
    free(line);
    json_object_del(o, "type");
    json_object_del(o, "ts_ns");
    return o;
}

static int print_json(const gpufl__live *live, const gpufl__live_sample *s)
{
    json_t *root = json_object(), *list = json_array();
    json_object_set_new(root, "driver_found", json_boolean(live->have_nvml));
    if (!live->have_nvml)
        json_object_set_new(root, "error", json_string(live->nvml_error));
    else
        json_object_set_new(root, "nvml_library", json_string(live->api.path));
    for (uint32_t i = 0; i < live->devices.count; i++) {
        gfl_event info, metrics;
        gpufl__device_info_event(&live->devices, &live->devices.devices[i], s->ts_ns, &info);
        memset(&metrics, 0, sizeof metrics);
        metrics.h.type = GFL_EV_DEVICE_METRICS;
        metrics.h.device = (uint16_t)live->devices.devices[i].index;
        metrics.u.dev = s->gpu[i];
        json_t *dev = event_object(&info), *state = event_object(&metrics);
        if (state)
            json_object_del(state, "device");
        json_object_set_new(dev, "state", state);
        json_array_append_new(list, dev);
    }
    json_object_set_new(root, "devices", list);
    gfl_event host;
    memset(&host, 0, sizeof host);
    host.h.type = GFL_EV_HOST_METRICS;
    host.u.host = s->host;
    json_object_set_new(root, "host", event_object(&host));
    int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    printf("\n");
    json_decref(root);
    return rc == 0 ? GFL_EXIT_OK : GFL_EXIT_FAIL;
}

#define NA "n/a (not reported)"

static void print_device(const gpufl__device_list *list, const gpufl__device_desc *d,
                         const gfl_device_metrics_payload *m)
{
    char a[32], b[32];
    uint32_t v = m->valid;
    printf("\nGPU %u  %s\n", d->index, d->name[0] ? d->name : "(unnamed)");
    printf("  uuid          %s\n", d->uuid[0] ? d->uuid : NA);
    printf("  pci bus id    %s\n", d->pci_bus_id[0] ? d->pci_bus_id : NA);
    if (d->cc_major >= 0)
        printf("  compute       capability %d.%d, %u SMs\n", d->cc_major, d->cc_minor, d->sm_count);
    if (v & GFL_DEV_MEM) {
        gpufl__format_bytes(m->mem_used_bytes, a, sizeof a);
        gpufl__format_bytes(m->mem_total_bytes, b, sizeof b);
        printf("  memory        %s used of %s (%.1f%%)", a, b,
               m->mem_total_bytes ? 100.0 * (double)m->mem_used_bytes / (double)m->mem_total_bytes : 0);
        if (v & GFL_DEV_PROC_MEM) {
            gpufl__format_bytes(m->proc_mem_bytes, a, sizeof a);
            printf(", %s by this process", a);
        }
        printf("\n");
    } else {
        printf("  memory        " NA "\n");
    }
    if (v & GFL_DEV_GPU_UTIL)
        printf("  utilization   GPU %u%%, memory %u%%\n", m->gpu_util_pct, m->mem_util_pct);
    if (v & GFL_DEV_TEMP) {
        printf("  temperature   %d C", m->temp_c);
        if (v & GFL_DEV_MEM_TEMP)
            printf(" (memory %d C)", m->mem_temp_c);
        printf("\n");
    }
    if (v & GFL_DEV_POWER)
        printf("  power         %.1f W of a %.1f W limit\n", m->power_mw / 1000.0,
               (v & GFL_DEV_POWER_LIMIT ? m->power_limit_mw : d->power_limit_mw) / 1000.0);
    if (v & GFL_DEV_CLOCKS)
        printf("  clocks        SM %u of %u MHz, memory %u of %u MHz\n", m->sm_clock_mhz, d->max_sm_clock_mhz,
               m->mem_clock_mhz, d->max_mem_clock_mhz);
    if (d->pcie_max_gen || (v & GFL_DEV_PCIE)) {
        printf("  pcie          gen %u x%u", d->pcie_max_gen, d->pcie_max_width);
        if (v & GFL_DEV_PCIE)
            printf(", rx %.1f MB/s, tx %.1f MB/s", m->pcie_rx_kbps / 1000.0, m->pcie_tx_kbps / 1000.0);
        printf("\n");
    }
    if (v & GFL_DEV_THROTTLE) {
        char t[256];
        gpufl__throttle_text(m->throttle_reasons, t, sizeof t);
        printf("  clock limits  %s\n", t);
    }
    if (v & GFL_DEV_FAN)
        printf("  fan           %u%%\n", m->fan_pct);
    if (v & GFL_DEV_ECC)
        printf("  ecc errors    %llu corrected, %llu uncorrected (since boot)\n", (unsigned long long)m->ecc_corrected,
               (unsigned long long)m->ecc_uncorrected);
    if (v & GFL_DEV_ENERGY)
        printf("  energy        %.1f kJ since the driver loaded\n", (double)m->energy_mj / 1e6);
    (void)list;
}

static void print_table(const gpufl__live *live, const gpufl__live_sample *s)
{
    const gpufl__device_list *l = &live->devices;
    printf("NVIDIA driver %s, CUDA %d.%d, %u GPU%s (NVML from %s)\n", l->driver_version[0] ? l->driver_version : "?",
           l->cuda_driver_version / 1000, l->cuda_driver_version % 1000 / 10, l->count, l->count == 1 ? "" : "s",
           live->api.path);
    for (uint32_t i = 0; i < l->count; i++)
        print_device(l, &l->devices[i], &s->gpu[i]);
}

int gpufl_cmd_devices(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else
            return gpufl__cli_usage_error("devices", "unknown argument '%s'", argv[i]);
    }
    gpufl__live live;
    char err[600];
    if (gpufl__live_open(&live, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl devices: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    /* Two readings far enough apart that PCIe throughput, a rate of
     * counters read at most every 250 ms, has a value. */
    gpufl__live_sample s;
    gpufl__live_sample_now(&live, &s);
    struct timespec pause = {0, (long)GFL_NVML_PCIE_PERIOD_NS};
    nanosleep(&pause, NULL);
    gpufl__live_sample_now(&live, &s);
    int rc = GFL_EXIT_OK;
    if (json) {
        rc = print_json(&live, &s);
    } else if (live.have_nvml) {
        print_table(&live, &s);
    } else {
        fprintf(stderr, "gpufl devices: %s\n", live.nvml_error);
    }
    if (!live.have_nvml && rc == GFL_EXIT_OK)
        rc = GFL_EXIT_NO_DRIVER;
    gpufl__live_close(&live);
    return rc;
}
