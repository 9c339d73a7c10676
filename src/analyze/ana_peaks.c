/*
 * The peak bandwidths copies are compared with (analysis.h,
 * gpufl__ana_pcie_lane_gbps and gpufl__ana_hbm_gbps).
 *
 * PCIe: the per-lane, per-direction rate of each generation after line
 * coding (8b/10b up to gen 2, 128b/130b for gen 3 to 5, FLIT for gen 6), as
 * the PCI-SIG specifications give them; packet headers cost a few percent
 * more, so a copy reaching 85-90 % of these figures is at full speed.
 *
 * Memory: NVIDIA's published memory bandwidth of the GPUs seen most in
 * training and serving, matched by a substring of the device name NVML
 * reports; the more specific rows come first. The table also gives each
 * GPU's host link, used when the trace does not carry the device's own.
 */
#include <string.h>

#include "analyze/ana_peaks.h"

double gpufl__ana_pcie_lane_gbps(uint32_t gen)
{
    static const double lane[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
    return gen < sizeof lane / sizeof lane[0] ? lane[gen] : 0;
}

static const ana_gpu_row gpus[] = {
    /* workstation names first: "RTX A4000" contains "A40" */
    {"RTX 4090", 1008, 4, 16},
    {"RTX 3090", 936, 4, 16},
    {"RTX 6000 Ada", 960, 4, 16},
    {"RTX", 0, 0, 0},      /* other RTX cards: not in the table */
    {"GH200", 4000, 0, 0}, /* before H200, which it contains */
    {"H200", 4800, 5, 16},
    {"H100 NVL", 3900, 5, 16},
    {"H100 PCIe", 2000, 5, 16},
    {"H100", 3350, 5, 16}, /* SXM5 80 GB HBM3 */
    {"B200", 8000, 0, 0},
    {"A100-SXM4-80GB", 2039, 4, 16},
    {"A100 80GB PCIe", 1935, 4, 16},
    {"A100-SXM4-40GB", 1555, 4, 16},
    {"A100-PCIE-40GB", 1555, 4, 16},
    {"A100", 1555, 4, 16},
    {"L40S", 864, 4, 16},
    {"L40", 864, 4, 16},
    {"L4", 300, 4, 16},
    {"A40", 696, 4, 16},
    {"A30", 933, 4, 16},
    {"A10G", 600, 4, 16},
    {"A10", 600, 4, 16},
    {"V100S", 1134, 3, 16},
    {"V100", 900, 3, 16},
    {"T4", 320, 3, 16},
};

const ana_gpu_row *gpufl__ana_gpu_lookup(const char *device_name)
{
    if (!device_name || !*device_name)
        return NULL;
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
        if (strstr(device_name, gpus[i].match))
            return &gpus[i];
    return NULL;
}

double gpufl__ana_hbm_gbps(const char *device_name, const char **row)
{
    const ana_gpu_row *g = gpufl__ana_gpu_lookup(device_name);
    if (g && g->mem_gbps <= 0)
        g = NULL; /* a row that only stops a wrong match */
    if (row)
        *row = g ? g->match : NULL;
    return g ? g->mem_gbps : 0;
}
