/*
 * The counter tracks of the timeline (timeline.h): which sample fields
 * become counters, under which names, and their values.
 */
#include "present/timeline/timeline.h"

enum { C_GPU_UTIL, C_MEM_USED, C_POWER, C_TEMP, C_SM_CLOCK, C_PROC_CPU, C_SYS_CPU, C_RSS };

const gpufl__tl_counter_def gpufl__tl_device_counters[] = {
    {"utilization (%)", GPUFL__DS_GPU_UTIL, 0, C_GPU_UTIL},
    {"memory used (bytes)", GPUFL__DS_MEMORY, 1, C_MEM_USED},
    {"power (W)", GPUFL__DS_POWER, 0, C_POWER},
    {"temperature (C)", GPUFL__DS_TEMP, 0, C_TEMP},
    {"SM clock (MHz)", GPUFL__DS_CLOCKS, 0, C_SM_CLOCK},
};
const size_t gpufl__tl_ndevice_counters = sizeof gpufl__tl_device_counters / sizeof gpufl__tl_device_counters[0];

const gpufl__tl_counter_def gpufl__tl_host_counters[] = {
    {"host CPU, process (%)", GPUFL__HS_PROC_CPU, 0, C_PROC_CPU},
    {"host CPU, machine (%)", GPUFL__HS_SYS_CPU, 0, C_SYS_CPU},
    {"host RSS (bytes)", GPUFL__HS_RSS, 1, C_RSS},
};
const size_t gpufl__tl_nhost_counters = sizeof gpufl__tl_host_counters / sizeof gpufl__tl_host_counters[0];

const gpufl__tl_counter_def gpufl__tl_pm_counter = {"PM", 0, 0, 0};

double gpufl__tl_counter_value(const gpufl__tl_counter_def *def, const gpufl__dev_row *d, const gpufl__host_row *h)
{
    switch (def->field) {
    case C_GPU_UTIL: return d->gpu_util_pct;
    case C_MEM_USED: return (double)d->mem_used_bytes;
    case C_POWER: return d->power_mw / 1000.0;
    case C_TEMP: return d->temp_c;
    case C_SM_CLOCK: return d->sm_clock_mhz;
    case C_PROC_CPU: return h->proc_cpu_pct_x100 / 100.0;
    case C_SYS_CPU: return h->sys_cpu_pct_x100 / 100.0;
    default: return (double)h->proc_rss_bytes;
    }
}
