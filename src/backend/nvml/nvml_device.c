/*
 * NVML device descriptions and samples (see nvml_device.h). Every call is
 * checked; a failure leaves its field unknown and never stops the rest.
 */
#include "backend/nvml/nvml_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"

#define OK(call) ((call) == GFL_NVML_SUCCESS)

unsigned gpufl__cores_per_sm(int major, int minor)
{
    switch (major) {
    case 3: return 192;
    case 5: return 128;
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return minor == 0 ? 64 : 128;
    case 9:
    case 10:
    case 11:
    case 12: return 128;
    default: return 0;
    }
}

static gfl_nvml_device handle(const gpufl__nvml_api *api, unsigned index)
{
    gfl_nvml_device dev = NULL;
    return OK(api->device_by_index(index, &dev)) ? dev : NULL;
}

static void describe_one(const gpufl__nvml_api *api, gfl_nvml_device dev, gpufl__device_desc *d)
{
    d->cc_major = d->cc_minor = -1;
    if (api->device_name)
        (void)api->device_name(dev, d->name, sizeof d->name);
    if (api->device_uuid)
        (void)api->device_uuid(dev, d->uuid, sizeof d->uuid);
    gfl_nvml_pci_info pci;
    if (api->device_pci_info && OK(api->device_pci_info(dev, &pci))) {
        memcpy(d->pci_bus_id, pci.bus_id, sizeof d->pci_bus_id);
        d->pci_bus_id[sizeof d->pci_bus_id - 1] = '\0';
    }
    int major, minor;
    if (api->device_cuda_cc && OK(api->device_cuda_cc(dev, &major, &minor))) {
        d->cc_major = major;
        d->cc_minor = minor;
    }
    gfl_nvml_device_attributes attr;
    unsigned cores;
    if (api->device_attributes && OK(api->device_attributes(dev, &attr)) && attr.multiprocessor_count)
        d->sm_count = attr.multiprocessor_count;
    else if (api->device_num_cores && OK(api->device_num_cores(dev, &cores)) &&
             gpufl__cores_per_sm(d->cc_major, d->cc_minor))
        d->sm_count = cores / gpufl__cores_per_sm(d->cc_major, d->cc_minor);
    gfl_nvml_memory_v2 m2 = {.version = GFL_NVML_MEMORY_V2_VERSION};
    gfl_nvml_memory_v1 m1;
    if (api->device_memory_v2 && OK(api->device_memory_v2(dev, &m2)))
        d->memory_total_bytes = m2.total;
    else if (api->device_memory_v1 && OK(api->device_memory_v1(dev, &m1)))
        d->memory_total_bytes = m1.total;
    if (api->device_power_limit)
        (void)api->device_power_limit(dev, &d->power_limit_mw);
    if (api->device_max_clock) {
        (void)api->device_max_clock(dev, GFL_NVML_CLOCK_SM, &d->max_sm_clock_mhz);
        (void)api->device_max_clock(dev, GFL_NVML_CLOCK_MEM, &d->max_mem_clock_mhz);
    }
    if (api->device_max_pcie_gen)
        (void)api->device_max_pcie_gen(dev, &d->pcie_max_gen);
    if (api->device_max_pcie_width)
        (void)api->device_max_pcie_width(dev, &d->pcie_max_width);
}

int gpufl__nvml_describe(const gpufl__nvml_api *api, gpufl__device_list *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    snprintf(out->vendor, sizeof out->vendor, "nvidia");
    unsigned count = 0;
    gfl_nvml_return rc = api->device_count(&count);
    if (!OK(rc)) {
        snprintf(err, err_len, "nvmlDeviceGetCount failed: %s", gpufl__nvml_error(api, rc));
        return GPUFL_EIO;
    }
    if (api->driver_version)
        (void)api->driver_version(out->driver_version, sizeof out->driver_version);
    if (api->cuda_driver_version)
        (void)api->cuda_driver_version(&out->cuda_driver_version);
    if (count > GFL_MAX_DEVICES)
        count = GFL_MAX_DEVICES;
    for (unsigned i = 0; i < count; i++) {
        gpufl__device_desc *d = &out->devices[out->count];
        gfl_nvml_device dev = handle(api, i);
        if (!dev)
            continue; /* e.g. no permission on this one: describe the rest */
        d->index = i;
        describe_one(api, dev, d);
        out->count++;
    }
    return 0;
}

/* ---- samples ------------------------------------------------------------ */

static bool field_u64(const gfl_nvml_field_value *f, uint64_t *v)
{
    if (f->nvml_return != GFL_NVML_SUCCESS)
        return false;
    switch (f->value_type) {
    case GFL_NVML_VALUE_UINT: *v = f->value.ui; return true;
    case GFL_NVML_VALUE_ULONG: *v = f->value.ul; return true;
    case GFL_NVML_VALUE_ULLONG: *v = f->value.ull; return true;
    case GFL_NVML_VALUE_SLLONG: *v = (uint64_t)f->value.sll; return f->value.sll >= 0;
    case GFL_NVML_VALUE_SINT: *v = (uint64_t)f->value.si; return f->value.si >= 0;
    case GFL_NVML_VALUE_USHORT: *v = f->value.us; return true;
    case GFL_NVML_VALUE_DOUBLE: *v = (uint64_t)f->value.d; return f->value.d >= 0;
    }
    return false;
}

/* Memory temperature: a field value, cheap. */
static void sample_memory_temperature(const gpufl__nvml_api *api, gfl_nvml_device dev, gfl_device_metrics_payload *out)
{
    gfl_nvml_field_value f = {.field_id = GFL_NVML_FI_MEMORY_TEMP};
    uint64_t temp;
    if (api->device_field_values && OK(api->device_field_values(dev, 1, &f)) && field_u64(&f, &temp) && temp > 0 &&
        temp < 200) {
        out->mem_temp_c = (int16_t)temp;
        out->valid |= GFL_DEV_MEM_TEMP;
    }
}

/* PCIe throughput from the byte counters, when due (see the header). */
static void sample_pcie(const gpufl__nvml_api *api, gfl_nvml_device dev, gpufl__nvml_state *st, uint64_t ts,
                        gfl_device_metrics_payload *out)
{
    if (!api->device_field_values || ts < st->pcie_due_ns)
        return;
    st->pcie_due_ns = ts + GFL_NVML_PCIE_PERIOD_NS;
    gfl_nvml_field_value f[2];
    memset(f, 0, sizeof f);
    f[0].field_id = GFL_NVML_FI_PCIE_TX_BYTES;
    f[1].field_id = GFL_NVML_FI_PCIE_RX_BYTES;
    uint64_t tx, rx;
    if (!OK(api->device_field_values(dev, 2, f)) || !field_u64(&f[0], &tx) || !field_u64(&f[1], &rx)) {
        st->have_pcie = false;
        return;
    }
    /* counters may wrap or reset: only a forward step is a rate */
    if (st->have_pcie && ts > st->pcie_ns && tx >= st->pcie_tx_bytes && rx >= st->pcie_rx_bytes) {
        uint64_t dt = ts - st->pcie_ns;
        /* bytes per ns -> KB/s: * 1e9 / 1000 */
        out->pcie_tx_kbps = (uint32_t)((unsigned __int128)(tx - st->pcie_tx_bytes) * 1000000u / dt);
        out->pcie_rx_kbps = (uint32_t)((unsigned __int128)(rx - st->pcie_rx_bytes) * 1000000u / dt);
        out->valid |= GFL_DEV_PCIE;
    }
    st->have_pcie = true;
    st->pcie_tx_bytes = tx;
    st->pcie_rx_bytes = rx;
    st->pcie_ns = ts;
}

/* GPU memory held by process pid on this device. */
static void sample_process_memory(const gpufl__nvml_api *api, gfl_nvml_device dev, int pid,
                                  gfl_device_metrics_payload *out)
{
    if (!api->device_processes || pid <= 0)
        return;
    unsigned char buf[64 * sizeof(gfl_nvml_process_v2)];
    unsigned n = (unsigned)(sizeof buf / api->process_record_size);
    if (!OK(api->device_processes(dev, &n, buf)))
        return; /* INSUFFICIENT_SIZE with > 64 processes: rare; leave unknown */
    uint64_t used = 0;
    bool found = false;
    for (unsigned i = 0; i < n; i++) {
        const unsigned char *rec = buf + (size_t)i * api->process_record_size;
        gfl_nvml_process_v1 p; /* both layouts begin with pid and used memory */
        memcpy(&p, rec, sizeof p);
        if (p.pid == (unsigned)pid) {
            found = true;
            used += p.used_gpu_memory;
        }
    }
    /* Not listed: either no memory here, or another PID namespace (a
     * container sees host PIDs in NVML). Leave it unknown, never 0. */
    if (found) {
        out->proc_mem_bytes = used;
        out->valid |= GFL_DEV_PROC_MEM;
    }
}

/* Whether to ask for metric `bit`: not once the driver said it has none. */
static bool wanted(const gpufl__nvml_state *st, uint32_t bit) { return !(st->unsupported & bit); }

/* Records a NOT_SUPPORTED answer for `bit`; true when rc was a success. */
static bool answered(gpufl__nvml_state *st, uint32_t bit, gfl_nvml_return rc)
{
    if (rc == GFL_NVML_ERROR_NOT_SUPPORTED)
        st->unsupported |= bit;
    return rc == GFL_NVML_SUCCESS;
}

void gpufl__nvml_sample(const gpufl__nvml_api *api, unsigned index, gpufl__nvml_state *st, uint64_t ts, int pid,
                        gfl_device_metrics_payload *out)
{
    memset(out, 0, sizeof *out);
    if (!st->dev)
        st->dev = handle(api, index);
    gfl_nvml_device dev = st->dev;
    if (!dev)
        return;
    gfl_nvml_utilization u;
    if (api->device_utilization && OK(api->device_utilization(dev, &u))) {
        out->gpu_util_pct = (uint8_t)(u.gpu > 100 ? 100 : u.gpu);
        out->mem_util_pct = (uint8_t)(u.memory > 100 ? 100 : u.memory);
        out->valid |= GFL_DEV_GPU_UTIL | GFL_DEV_MEM_UTIL;
    }
    gfl_nvml_memory_v2 m2 = {.version = GFL_NVML_MEMORY_V2_VERSION};
    gfl_nvml_memory_v1 m1;
    if (api->device_memory_v2 && OK(api->device_memory_v2(dev, &m2))) {
        out->mem_used_bytes = m2.used;
        out->mem_free_bytes = m2.free;
        out->mem_total_bytes = m2.total;
        out->valid |= GFL_DEV_MEM;
    } else if (api->device_memory_v1 && OK(api->device_memory_v1(dev, &m1))) {
        out->mem_used_bytes = m1.used;
        out->mem_free_bytes = m1.free;
        out->mem_total_bytes = m1.total;
        out->valid |= GFL_DEV_MEM;
    }
    unsigned v;
    if (api->device_temperature && OK(api->device_temperature(dev, GFL_NVML_TEMPERATURE_GPU, &v))) {
        out->temp_c = (int16_t)v;
        out->valid |= GFL_DEV_TEMP;
    }
    if (api->device_power_usage && OK(api->device_power_usage(dev, &out->power_mw)))
        out->valid |= GFL_DEV_POWER;
    if (api->device_power_limit && OK(api->device_power_limit(dev, &out->power_limit_mw)))
        out->valid |= GFL_DEV_POWER_LIMIT;
    unsigned long long energy;
    if (api->device_energy && wanted(st, GFL_DEV_ENERGY) && ts >= st->energy_due_ns) {
        st->energy_due_ns = ts + GFL_NVML_ENERGY_PERIOD_NS;
        if (answered(st, GFL_DEV_ENERGY, api->device_energy(dev, &energy))) {
            out->energy_mj = energy;
            out->valid |= GFL_DEV_ENERGY;
        }
    }
    if (api->device_clock && OK(api->device_clock(dev, GFL_NVML_CLOCK_SM, &out->sm_clock_mhz)) &&
        OK(api->device_clock(dev, GFL_NVML_CLOCK_MEM, &out->mem_clock_mhz)) &&
        OK(api->device_clock(dev, GFL_NVML_CLOCK_GRAPHICS, &out->gfx_clock_mhz)))
        out->valid |= GFL_DEV_CLOCKS;
    unsigned long long reasons;
    if (api->device_clock_reasons && OK(api->device_clock_reasons(dev, &reasons))) {
        out->throttle_reasons = reasons;
        out->valid |= GFL_DEV_THROTTLE;
    }
    if (api->device_fan_speed && wanted(st, GFL_DEV_FAN) && answered(st, GFL_DEV_FAN, api->device_fan_speed(dev, &v))) {
        out->fan_pct = (uint8_t)(v > 100 ? 100 : v);
        out->valid |= GFL_DEV_FAN;
    }
    unsigned long long corrected, uncorrected;
    if (api->device_ecc_total && wanted(st, GFL_DEV_ECC) &&
        answered(st, GFL_DEV_ECC,
                 api->device_ecc_total(dev, GFL_NVML_MEMORY_ERROR_CORRECTED, GFL_NVML_VOLATILE_ECC, &corrected)) &&
        OK(api->device_ecc_total(dev, GFL_NVML_MEMORY_ERROR_UNCORRECTED, GFL_NVML_VOLATILE_ECC, &uncorrected))) {
        out->ecc_corrected = corrected;
        out->ecc_uncorrected = uncorrected;
        out->valid |= GFL_DEV_ECC;
    }
    sample_memory_temperature(api, dev, out);
    sample_pcie(api, dev, st, ts, out);
    sample_process_memory(api, dev, pid, out);
}

unsigned gpufl__nvml_processes(const gpufl__nvml_api *api, unsigned index, gpufl__nvml_state *st,
                               gpufl__gpu_process *out, unsigned cap)
{
    if (!st->dev)
        st->dev = handle(api, index);
    if (!st->dev || !api->device_processes)
        return 0;
    unsigned char buf[64 * sizeof(gfl_nvml_process_v2)];
    unsigned n = (unsigned)(sizeof buf / api->process_record_size);
    if (!OK(api->device_processes(st->dev, &n, buf)))
        return 0; /* INSUFFICIENT_SIZE with > 64 processes: rare; none listed */
    unsigned count = 0;
    for (unsigned i = 0; i < n; i++) {
        gfl_nvml_process_v1 p; /* both layouts begin with pid and used memory */
        memcpy(&p, buf + (size_t)i * api->process_record_size, sizeof p);
        unsigned k = 0;
        while (k < count && out[k].pid != p.pid)
            k++;
        if (k == count) {
            if (count == cap)
                continue;
            out[count++] = (gpufl__gpu_process){p.pid, 0};
        }
        out[k].used_bytes += p.used_gpu_memory;
    }
    return count;
}
