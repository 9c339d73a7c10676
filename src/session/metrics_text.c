/*
 * The metrics endpoint's text (metrics_text.h). One table holds every
 * device metric: its dcgm-exporter name, type, help, the validity bit that
 * says NVML reported it, and how its value is read in dcgm-exporter's
 * unit (MiB, W, mJ, MHz, C, %, bytes per second), so a metric is added in
 * one row.
 */
#include "session/metrics_text.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/utf8.h"

typedef double (*metric_value)(const gfl_device_metrics_payload *m);

static double v_gpu_util(const gfl_device_metrics_payload *m) { return m->gpu_util_pct; }
static double v_mem_util(const gfl_device_metrics_payload *m) { return m->mem_util_pct; }
/* dcgm-exporter's FB figures are whole MiB */
static double v_fb_used(const gfl_device_metrics_payload *m) { return (double)(m->mem_used_bytes >> 20); }
static double v_fb_free(const gfl_device_metrics_payload *m) { return (double)(m->mem_free_bytes >> 20); }
static double v_power(const gfl_device_metrics_payload *m) { return m->power_mw / 1000.0; }
static double v_energy(const gfl_device_metrics_payload *m) { return (double)m->energy_mj; }
static double v_gpu_temp(const gfl_device_metrics_payload *m) { return m->temp_c; }
static double v_mem_temp(const gfl_device_metrics_payload *m) { return m->mem_temp_c; }
static double v_sm_clock(const gfl_device_metrics_payload *m) { return m->sm_clock_mhz; }
static double v_mem_clock(const gfl_device_metrics_payload *m) { return m->mem_clock_mhz; }
static double v_throttle(const gfl_device_metrics_payload *m) { return (double)m->throttle_reasons; }
static double v_ecc_sbe(const gfl_device_metrics_payload *m) { return (double)m->ecc_corrected; }
static double v_ecc_dbe(const gfl_device_metrics_payload *m) { return (double)m->ecc_uncorrected; }
/* NVML's throughput is in KB/s (1000 bytes); DCGM's PCIe fields are bytes/s */
static double v_pcie_tx(const gfl_device_metrics_payload *m) { return m->pcie_tx_kbps * 1000.0; }
static double v_pcie_rx(const gfl_device_metrics_payload *m) { return m->pcie_rx_kbps * 1000.0; }

typedef struct metric_row {
    const char *name, *type, *help;
    uint32_t valid; /* GFL_DEV_* bit that must be set */
    metric_value value;
} metric_row;

static const metric_row rows[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", GFL_DEV_CLOCKS, v_sm_clock},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", GFL_DEV_CLOCKS, v_mem_clock},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", GFL_DEV_MEM_TEMP, v_mem_temp},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", GFL_DEV_TEMP, v_gpu_temp},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", GFL_DEV_POWER, v_power},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", GFL_DEV_ENERGY,
     v_energy},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", GFL_DEV_GPU_UTIL, v_gpu_util},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", GFL_DEV_MEM_UTIL, v_mem_util},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", GFL_DEV_MEM, v_fb_free},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", GFL_DEV_MEM, v_fb_used},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Current clock throttle reasons (NVML's bit mask).",
     GFL_DEV_THROTTLE, v_throttle},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.", GFL_DEV_ECC,
     v_ecc_sbe},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.", GFL_DEV_ECC,
     v_ecc_dbe},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus (in bytes per second).",
     GFL_DEV_PCIE, v_pcie_tx},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus (in bytes per second).",
     GFL_DEV_PCIE, v_pcie_rx},
};

#define appendf gpufl__metrics_appendf

int gpufl__metrics_appendf(gpufl__bytebuf *out, const char *fmt, ...)
{
    /* every line written here fits 512 bytes but the HELP texts' */
    if (gpufl__bytebuf_reserve(out, 512) != 0)
        return GPUFL_ENOMEM;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf((char *)out->p + out->len, out->cap - out->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return GPUFL_EINVAL;
    if ((size_t)n >= out->cap - out->len) {
        if (gpufl__bytebuf_reserve(out, (size_t)n + 1) != 0)
            return GPUFL_ENOMEM;
        va_start(ap, fmt);
        vsnprintf((char *)out->p + out->len, out->cap - out->len, fmt, ap);
        va_end(ap);
    }
    out->len += (size_t)n;
    return 0;
}

int gpufl__metrics_label_value(gpufl__bytebuf *out, const char *text)
{
    size_t left = strlen(text);
    for (const char *c = text; *c;) {
        const char *esc = *c == '\\' ? "\\\\" : *c == '"' ? "\\\"" : *c == '\n' ? "\\n" : NULL;
        /* label values are UTF-8, and a scraper rejects the whole answer
         * over one bad byte: a scope name may be anything, so U+FFFD */
        size_t n = esc ? 1 : gpufl__utf8_seq((const unsigned char *)c, left);
        int rc = esc ? gpufl__bytebuf_append(out, esc, 2)
                 : n ? gpufl__bytebuf_append(out, c, n)
                     : gpufl__bytebuf_append(out, "\xEF\xBF\xBD", 3);
        if (rc != 0)
            return rc;
        n = n ? n : 1;
        c += n;
        left -= n;
    }
    return 0;
}

/* gpu="0",UUID="...",pci_bus_id="...",device="nvidia0",modelName="...",Hostname="..." */
static int labels(gpufl__bytebuf *out, const gpufl__device_desc *d, const char *hostname)
{
    int rc = appendf(out, "{gpu=\"%u\",UUID=\"", d->index);
    rc = rc ? rc : gpufl__metrics_label_value(out, d->uuid);
    rc = rc ? rc : appendf(out, "\",pci_bus_id=\"");
    rc = rc ? rc : gpufl__metrics_label_value(out, d->pci_bus_id);
    rc = rc ? rc : appendf(out, "\",device=\"nvidia%u\",modelName=\"", d->index);
    rc = rc ? rc : gpufl__metrics_label_value(out, d->name);
    rc = rc ? rc : appendf(out, "\",Hostname=\"");
    rc = rc ? rc : gpufl__metrics_label_value(out, hostname);
    return rc ? rc : appendf(out, "\"}");
}

/* %.17g keeps every integer NVML gives exactly and prints no exponent
 * below 1e17; Prometheus and OpenMetrics both read it. */
static int value(gpufl__bytebuf *out, double v) { return appendf(out, " %.17g\n", v); }

int gpufl__metrics_render_devices(const gpufl__device_list *devices, const gfl_device_metrics_payload *gpu,
                                  const char *hostname, bool openmetrics, gpufl__bytebuf *out)
{
    uint32_t n = devices->count;
    if (n > GFL_MAX_DEVICES)
        n = GFL_MAX_DEVICES;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const metric_row *row = &rows[r];
        bool any = false;
        for (uint32_t i = 0; i < n && !any; i++)
            any = (gpu[i].valid & row->valid) == row->valid;
        if (!any)
            continue; /* no TYPE line for a metric without samples: nothing to describe */
        /* OpenMetrics requires a counter's samples to end in _total; the
         * family keeps dcgm-exporter's name and counters are written as
         * gauges there so the series' names stay the ones dashboards use. */
        const char *type = openmetrics && row->type[0] == 'c' ? "gauge" : row->type;
        int rc = appendf(out, "# HELP %s %s\n# TYPE %s %s\n", row->name, row->help, row->name, type);
        for (uint32_t i = 0; rc == 0 && i < n; i++) {
            const gfl_device_metrics_payload *m = &gpu[i];
            if ((m->valid & row->valid) != row->valid)
                continue;
            rc = appendf(out, "%s", row->name);
            rc = rc ? rc : labels(out, &devices->devices[i], hostname);
            rc = rc ? rc : value(out, row->value(m));
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

void gpufl__metrics_hold(gfl_device_metrics_payload *held, gpufl__live_sample *s, uint32_t n)
{
    for (uint32_t i = 0; i < n && i < GFL_MAX_DEVICES; i++) {
        gfl_device_metrics_payload *h = &held[i], *m = &s->gpu[i];
        if (m->valid & GFL_DEV_ENERGY)
            h->energy_mj = m->energy_mj;
        else if (h->valid & GFL_DEV_ENERGY)
            m->energy_mj = h->energy_mj;
        if (m->valid & GFL_DEV_PCIE) {
            h->pcie_tx_kbps = m->pcie_tx_kbps;
            h->pcie_rx_kbps = m->pcie_rx_kbps;
        } else if (h->valid & GFL_DEV_PCIE) {
            m->pcie_tx_kbps = h->pcie_tx_kbps;
            m->pcie_rx_kbps = h->pcie_rx_kbps;
        }
        uint32_t held_bits = GFL_DEV_ENERGY | GFL_DEV_PCIE;
        h->valid |= m->valid & held_bits;
        m->valid |= h->valid & held_bits;
    }
}

int gpufl__metrics_finish(const gpufl__metrics_counters *c, bool openmetrics, gpufl__bytebuf *out)
{
    static const struct {
        const char *name, *help;
        size_t offset;
    } counters[] = {
        {"gpufl_exporter_scrapes", "Scrapes of /metrics answered.", offsetof(gpufl__metrics_counters, scrapes)},
        {"gpufl_exporter_bad_requests", "Requests answered with an HTTP error status.",
         offsetof(gpufl__metrics_counters, bad_requests)},
        {"gpufl_exporter_rejected_connections", "Connections closed at once because every slot was busy.",
         offsetof(gpufl__metrics_counters, rejected)},
        {"gpufl_exporter_timeouts", "Connections closed because the request did not arrive in time.",
         offsetof(gpufl__metrics_counters, timeouts)},
        {"gpufl_exporter_samples", "Device readings taken.", offsetof(gpufl__metrics_counters, samples)},
    };
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        uint64_t v;
        memcpy(&v, (const char *)c + counters[i].offset, sizeof v);
        /* the sample is name_total in both formats; OpenMetrics names the
         * family without the suffix, 0.0.4 with it (its families are
         * named as their samples) */
        const char *suffix = openmetrics ? "" : "_total";
        int rc = appendf(out, "# HELP %s%s %s\n# TYPE %s%s counter\n%s_total %llu\n", counters[i].name, suffix,
                         counters[i].help, counters[i].name, suffix, counters[i].name, (unsigned long long)v);
        if (rc != 0)
            return rc;
    }
    return openmetrics ? gpufl__bytebuf_append(out, "# EOF\n", 6) : 0;
}
