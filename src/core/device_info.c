/*
 * Device descriptions as "device_info" events (see device_info.h).
 */
#include "core/device_info.h"

#include <string.h>

#include "core/intern.h"

void gpufl__device_info_event(const gpufl__device_list *list, const gpufl__device_desc *d, uint64_t ts, gfl_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->h.type = GFL_EV_DEVICE_INFO;
    ev->h.device = (uint16_t)d->index;
    ev->h.ts = ts;
    gfl_device_info_payload *p = &ev->u.info;
    p->memory_total_bytes = d->memory_total_bytes;
    p->name = gpufl__intern(d->name);
    p->uuid = gpufl__intern(d->uuid);
    p->pci_bus_id = gpufl__intern(d->pci_bus_id);
    p->driver_version = gpufl__intern(list->driver_version);
    p->cuda_driver_version = list->cuda_driver_version;
    p->sm_count = d->sm_count;
    p->power_limit_mw = d->power_limit_mw;
    p->max_sm_clock_mhz = d->max_sm_clock_mhz;
    p->max_mem_clock_mhz = d->max_mem_clock_mhz;
    p->cc_major = (int8_t)d->cc_major;
    p->cc_minor = (int8_t)d->cc_minor;
    p->pcie_max_gen = (uint8_t)d->pcie_max_gen;
    p->pcie_max_width = (uint8_t)d->pcie_max_width;
}
