/*
 * `gpufl mem info`: GPU memory now, per GPU (NVML, read through
 * session/live.h as `gpufl devices` reads it): total, used and free, the
 * processes of this machine that hold some (pid, bytes, name when /proc
 * shows it), the driver and CUDA versions, and the host's RAM. Without a
 * driver it says so and exits 2: there is nothing to report.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/mem.h"
#include "present/report/summary_text.h"
#include "session/live.h"

extern const gpufl__mem_command gpufl__mem_info_command;
#define CMD (&gpufl__mem_info_command)
#define MAX_PROCS 64

typedef struct sz {
    char s[32];
} sz;

static sz bytes(uint64_t v)
{
    sz out;
    gpufl__format_bytes(v, out.s, sizeof out.s);
    return out;
}

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

/* "13.0" from NVML's 13000; "" unknown. */
static void cuda_text(int v, char *buf, size_t len)
{
    if (v > 0)
        snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
    else
        snprintf(buf, len, "%s", "");
}

static void print_text(gpufl__live *live, const gpufl__live_sample *s)
{
    char cuda[16];
    cuda_text(live->devices.cuda_driver_version, cuda, sizeof cuda);
    printf("Driver %s, CUDA %s (%s)\n", live->devices.driver_version[0] ? live->devices.driver_version : "unknown",
           cuda[0] ? cuda : "unknown", live->nvml_library);
    for (uint32_t i = 0; i < live->devices.count; i++) {
        const gpufl__device_desc *d = &live->devices.devices[i];
        const gfl_device_metrics_payload *g = &s->gpu[i];
        printf("\nGPU %u: %s (%s, %s)\n", d->index, d->name, d->uuid, d->pci_bus_id);
        if (g->valid & GFL_DEV_MEM)
            printf("  memory: %s used, %s free of %s (%.1f %% used)\n", bytes(g->mem_used_bytes).s,
                   bytes(g->mem_free_bytes).s, bytes(g->mem_total_bytes).s, pct(g->mem_used_bytes, g->mem_total_bytes));
        else
            printf("  memory: %s in all; the driver does not say how much is used\n", bytes(d->memory_total_bytes).s);
        gpufl__live_process p[MAX_PROCS];
        unsigned n = gpufl__live_processes(live, i, p, MAX_PROCS);
        if (!n) {
            printf("  processes: none listed\n");
            continue;
        }
        printf("  processes:\n  %10s  %12s  %s\n", "pid", "used", "name");
        for (unsigned k = 0; k < n; k++)
            printf("  %10u  %12s  %s\n", p[k].pid, bytes(p[k].used_bytes).s, p[k].name[0] ? p[k].name : "?");
    }
    if (s->host.valid & GFL_HOST_RAM)
        printf("\nHost RAM: %s used of %s (%.1f %% used)\n", bytes(s->host.ram_used_bytes).s,
               bytes(s->host.ram_total_bytes).s, pct(s->host.ram_used_bytes, s->host.ram_total_bytes));
}

static json_t *device_json(gpufl__live *live, const gpufl__live_sample *s, uint32_t i)
{
    const gpufl__device_desc *d = &live->devices.devices[i];
    const gfl_device_metrics_payload *g = &s->gpu[i];
    json_t *o = json_pack("{s:i,s:s,s:s,s:s}", "index", (json_int_t)d->index, "name", d->name, "uuid", d->uuid,
                          "pci_bus_id", d->pci_bus_id);
    bool mem = (g->valid & GFL_DEV_MEM) != 0;
    uint64_t total = mem ? g->mem_total_bytes : d->memory_total_bytes;
    json_object_set_new(o, "memory_total_bytes", json_integer((json_int_t)total));
    json_object_set_new(o, "memory_used_bytes", mem ? json_integer((json_int_t)g->mem_used_bytes) : json_null());
    json_object_set_new(o, "memory_free_bytes", mem ? json_integer((json_int_t)g->mem_free_bytes) : json_null());
    json_object_set_new(o, "used_pct", mem ? json_real(pct(g->mem_used_bytes, total)) : json_null());
    json_t *procs = json_array();
    gpufl__live_process p[MAX_PROCS];
    unsigned n = gpufl__live_processes(live, i, p, MAX_PROCS);
    for (unsigned k = 0; k < n; k++)
        json_array_append_new(procs, json_pack("{s:i,s:I,s:o}", "pid", (json_int_t)p[k].pid, "used_bytes",
                                               (json_int_t)p[k].used_bytes, "name",
                                               p[k].name[0] ? json_string(p[k].name) : json_null()));
    json_object_set_new(o, "processes", procs);
    return o;
}

static int print_json(gpufl__live *live, const gpufl__live_sample *s)
{
    char cuda[16];
    cuda_text(live->devices.cuda_driver_version, cuda, sizeof cuda);
    json_t *root = json_object();
    json_object_set_new(root, "driver_version", json_string(live->devices.driver_version));
    json_object_set_new(root, "cuda_driver_version", cuda[0] ? json_string(cuda) : json_null());
    json_object_set_new(root, "nvml_library", json_string(live->nvml_library));
    json_t *devs = json_array();
    for (uint32_t i = 0; i < live->devices.count; i++)
        json_array_append_new(devs, device_json(live, s, i));
    json_object_set_new(root, "devices", devs);
    bool ram = (s->host.valid & GFL_HOST_RAM) != 0;
    json_object_set_new(root, "host",
                        ram ? json_pack("{s:I,s:I}", "ram_total_bytes", (json_int_t)s->host.ram_total_bytes,
                                        "ram_used_bytes", (json_int_t)s->host.ram_used_bytes)
                            : json_null());
    int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    json_decref(root);
    putchar('\n');
    return rc == 0 ? GFL_MEM_OK : GFL_MEM_ERROR;
}

static int run(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'}, {0, 0, 0, 0}};
    bool json_out = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'f' && (!strcmp(optarg, "txt") || !strcmp(optarg, "text")))
            json_out = false;
        else if (c == 'f' && !strcmp(optarg, "json"))
            json_out = true;
        else
            return gpufl__mem_usage_error(CMD, "bad argument '%s'", argv[optind - 1 > 0 ? optind - 1 : 0]);
    }
    if (optind < argc)
        return gpufl__mem_usage_error(CMD, "takes no operand ('%s')", argv[optind]);
    gpufl__live live;
    char err[512];
    if (gpufl__live_open(&live, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl mem info: %s\n", err);
        return GFL_MEM_ERROR;
    }
    if (!live.have_nvml) {
        fprintf(stderr, "gpufl mem info: %s\n", live.nvml_error);
        gpufl__live_close(&live);
        return GFL_MEM_ERROR;
    }
    gpufl__live_sample s;
    gpufl__live_sample_now(&live, &s);
    int rc = GFL_MEM_OK;
    if (json_out)
        rc = print_json(&live, &s);
    else
        print_text(&live, &s);
    if (fflush(stdout) != 0)
        rc = GFL_MEM_ERROR;
    gpufl__live_close(&live);
    return rc;
}

const gpufl__mem_command gpufl__mem_info_command = {
    "info", run, "[--format txt|json]",
    "GPU memory now: per GPU its total, used and free memory and the processes holding it, the driver\n"
    "and CUDA versions, and the host's RAM.",
    "  --format txt|json   text (default) or one JSON document\n"
    "\n"
    "Exit codes: 0 shown, 2 no NVIDIA driver, an error or bad usage.\n"};
