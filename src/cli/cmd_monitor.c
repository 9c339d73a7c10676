/*
 * `gpufl monitor`: a live view of the GPUs and the host in the spirit of
 * `nvidia-smi dmon`. On a terminal the table is redrawn in place; piped or
 * written to a file it is plain lines (or CSV, JSON, NDJSON). Thresholds on
 * memory and temperature raise alerts as they are crossed, and the exit code
 * says whether any was: 0 none, 2 some. Ctrl-C or the end of --duration
 * prints a summary per GPU.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/clock.h"
#include "present/report/summary_text.h"
#include "session/live.h"

typedef enum { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_NDJSON } out_format;

typedef struct thresholds {
    double warn_mem, crit_mem;   /* % of device memory; < 0 = not set */
    double warn_temp, crit_temp; /* °C */
} thresholds;

typedef struct gpu_totals {
    uint64_t samples, util_samples, util_sum;
    uint64_t mem_peak, mem_total;
    bool have_temp;
    int temp_max;
    bool have_energy;
    uint64_t energy_first, energy_last; /* mJ, NVML's counter */
    double power_mj;                    /* ∫ power dt, for drivers without the counter */
    uint64_t last_ts;
    int mem_level, temp_level; /* 0 below, 1 warn, 2 crit */
} gpu_totals;

typedef struct monitor {
    gpufl__live live;
    double duration_s;
    unsigned interval_ms;
    out_format format;
    FILE *out;
    bool tty; /* redraw in place */
    bool selected[GFL_MAX_DEVICES];
    thresholds th;
    gpu_totals gpu[GFL_MAX_DEVICES];
    uint64_t samples;
    uint64_t host_samples, host_cpu_sum_x100;
    uint64_t host_ram_peak, host_ram_total;
    unsigned alerts_warn, alerts_crit;
    char recent_alerts[4][200]; /* shown under a redrawn table */
    unsigned recent_count;
    unsigned lines_drawn;
    bool json_first;
} monitor;

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* ---- arguments ------------------------------------------------------------ */

static int parse_args(monitor *m, int argc, char **argv, const char **output, bool *wanted, bool *filtered)
{
    enum { O_DURATION = 1, O_INTERVAL, O_DEVICES, O_FORMAT, O_OUTPUT, O_WMEM, O_CMEM, O_WTEMP, O_CTEMP };
    static const struct option opts[] = {{"duration", required_argument, 0, O_DURATION},
                                         {"interval", required_argument, 0, O_INTERVAL},
                                         {"devices", required_argument, 0, O_DEVICES},
                                         {"format", required_argument, 0, O_FORMAT},
                                         {"output", required_argument, 0, O_OUTPUT},
                                         {"warn-mem", required_argument, 0, O_WMEM},
                                         {"crit-mem", required_argument, 0, O_CMEM},
                                         {"warn-temp", required_argument, 0, O_WTEMP},
                                         {"crit-temp", required_argument, 0, O_CTEMP},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    double v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_DURATION:
            if (!gpufl__cli_number(optarg, 0.001, 1e7, &m->duration_s))
                goto bad;
            break;
        case O_INTERVAL:
            if (!gpufl__cli_number(optarg, 10, 3600000, &v))
                goto bad;
            m->interval_ms = (unsigned)v;
            break;
        case O_DEVICES:
            if (!gpufl__cli_devices(optarg, wanted, GFL_MAX_DEVICES))
                goto bad;
            *filtered = true;
            break;
        case O_FORMAT:
            if (!strcmp(optarg, "table"))
                m->format = FMT_TABLE;
            else if (!strcmp(optarg, "csv"))
                m->format = FMT_CSV;
            else if (!strcmp(optarg, "json"))
                m->format = FMT_JSON;
            else if (!strcmp(optarg, "ndjson"))
                m->format = FMT_NDJSON;
            else
                goto bad;
            break;
        case O_OUTPUT: *output = optarg; break;
        case O_WMEM:
            if (!gpufl__cli_number(optarg, 0, 100, &m->th.warn_mem))
                goto bad;
            break;
        case O_CMEM:
            if (!gpufl__cli_number(optarg, 0, 100, &m->th.crit_mem))
                goto bad;
            break;
        case O_WTEMP:
            if (!gpufl__cli_number(optarg, -50, 200, &m->th.warn_temp))
                goto bad;
            break;
        case O_CTEMP:
            if (!gpufl__cli_number(optarg, -50, 200, &m->th.crit_temp))
                goto bad;
            break;
        case 'h': gpufl__cli_help("monitor"); return -1;
        default: goto bad;
        }
    }
    if (optind < argc)
        return gpufl__cli_usage_error("monitor", "takes no operand ('%s')", argv[optind]);
    return 0;
bad:
    return gpufl__cli_usage_error("monitor", "bad argument '%s'", optind > 0 && optind <= argc ? argv[optind - 1] : "");
}

/* ---- formatting helpers ------------------------------------------------- */

static void clock_text(uint64_t wall_ns, char *buf, size_t len, bool utc_iso)
{
    time_t secs = (time_t)(wall_ns / 1000000000ull);
    struct tm tm;
    if (utc_iso)
        gmtime_r(&secs, &tm);
    else
        localtime_r(&secs, &tm);
    size_t n = strftime(buf, len, utc_iso ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03u%s", (unsigned)(wall_ns / 1000000ull % 1000), utc_iso ? "Z" : "");
}

static double mem_pct(const gfl_device_metrics_payload *g)
{
    return g->mem_total_bytes ? 100.0 * (double)g->mem_used_bytes / (double)g->mem_total_bytes : 0;
}

/* ---- thresholds -------------------------------------------------------------- */

static void alert(monitor *m, int level, const char *what, unsigned gpu, double value, double limit, const char *unit,
                  uint64_t wall_ns)
{
    char when[32], line[200];
    clock_text(wall_ns, when, sizeof when, false);
    snprintf(line, sizeof line, "%s ALERT %s: GPU %u %s %.1f%s >= %.1f%s", when, level == 2 ? "crit" : "warn", gpu,
             what, value, unit, limit, unit);
    if (level == 2)
        m->alerts_crit++;
    else
        m->alerts_warn++;
    if (m->tty) {
        /* shown under the table, which owns the terminal */
        memmove(m->recent_alerts[1], m->recent_alerts[0], sizeof m->recent_alerts[0] * 3);
        snprintf(m->recent_alerts[0], sizeof m->recent_alerts[0], "%s", line);
        if (m->recent_count < 4)
            m->recent_count++;
    } else {
        fprintf(stderr, "gpufl monitor: %s\n", line);
    }
}

/* Raises an alert when a value climbs into a higher band than before; a
 * band is re-armed when the value falls back below it. */
static void check_band(monitor *m, int *level, double value, double warn, double crit, const char *what, unsigned gpu,
                       const char *unit, uint64_t wall_ns)
{
    int now = (crit >= 0 && value >= crit) ? 2 : (warn >= 0 && value >= warn) ? 1 : 0;
    if (now > *level)
        alert(m, now, what, gpu, value, now == 2 ? crit : warn, unit, wall_ns);
    *level = now;
}

static void account(monitor *m, const gpufl__live_sample *s)
{
    m->samples++;
    const gfl_host_metrics_payload *h = &s->host;
    if (h->valid & GFL_HOST_SYS_CPU) {
        m->host_samples++;
        m->host_cpu_sum_x100 += h->sys_cpu_pct_x100;
    }
    if (h->valid & GFL_HOST_RAM) {
        if (h->ram_used_bytes > m->host_ram_peak)
            m->host_ram_peak = h->ram_used_bytes;
        m->host_ram_total = h->ram_total_bytes;
    }
    for (uint32_t i = 0; i < m->live.devices.count; i++) {
        if (!m->selected[i])
            continue;
        const gfl_device_metrics_payload *g = &s->gpu[i];
        gpu_totals *t = &m->gpu[i];
        unsigned index = m->live.devices.devices[i].index;
        t->samples++;
        if (g->valid & GFL_DEV_GPU_UTIL) {
            t->util_samples++;
            t->util_sum += g->gpu_util_pct;
        }
        if (g->valid & GFL_DEV_MEM) {
            if (g->mem_used_bytes > t->mem_peak)
                t->mem_peak = g->mem_used_bytes;
            t->mem_total = g->mem_total_bytes;
            check_band(m, &t->mem_level, mem_pct(g), m->th.warn_mem, m->th.crit_mem, "memory", index, "%", s->wall_ns);
        }
        if (g->valid & GFL_DEV_TEMP) {
            if (!t->have_temp || g->temp_c > t->temp_max)
                t->temp_max = g->temp_c;
            t->have_temp = true;
            check_band(m, &t->temp_level, g->temp_c, m->th.warn_temp, m->th.crit_temp, "temperature", index, " C",
                       s->wall_ns);
        }
        if (g->valid & GFL_DEV_ENERGY) {
            if (!t->have_energy)
                t->energy_first = g->energy_mj;
            t->have_energy = true;
            t->energy_last = g->energy_mj;
        }
        if ((g->valid & GFL_DEV_POWER) && t->last_ts && s->ts_ns > t->last_ts)
            t->power_mj += g->power_mw * (double)(s->ts_ns - t->last_ts) / 1e9;
        t->last_ts = s->ts_ns;
    }
}

/* ---- output formats ------------------------------------------------------- */

#define CELL(buf, valid, ...) (valid ? snprintf(buf, sizeof buf, __VA_ARGS__) : snprintf(buf, sizeof buf, "-"))

static int table_row(char *buf, size_t len, const gpufl__device_desc *d, const gfl_device_metrics_payload *g)
{
    char util[8], memu[8], mem[32], temp[8], mtemp[8], power[24], sm[8], mclk[8], pcie[24], thr[128];
    uint32_t v = g->valid;
    CELL(util, v & GFL_DEV_GPU_UTIL, "%u%%", g->gpu_util_pct);
    CELL(memu, v & GFL_DEV_MEM_UTIL, "%u%%", g->mem_util_pct);
    CELL(mem, v & GFL_DEV_MEM, "%.1f/%.1fG %3.0f%%", (double)g->mem_used_bytes / (1 << 30),
         (double)g->mem_total_bytes / (1 << 30), mem_pct(g));
    CELL(temp, v & GFL_DEV_TEMP, "%dC", g->temp_c);
    CELL(mtemp, v & GFL_DEV_MEM_TEMP, "%dC", g->mem_temp_c);
    CELL(power, v & GFL_DEV_POWER, "%.0f/%.0fW", g->power_mw / 1000.0, g->power_limit_mw / 1000.0);
    CELL(sm, v & GFL_DEV_CLOCKS, "%u", g->sm_clock_mhz);
    CELL(mclk, v & GFL_DEV_CLOCKS, "%u", g->mem_clock_mhz);
    CELL(pcie, v & GFL_DEV_PCIE, "%.1f/%.1f", g->pcie_rx_kbps / 1000.0, g->pcie_tx_kbps / 1000.0);
    if (v & GFL_DEV_THROTTLE)
        gpufl__throttle_text(g->throttle_reasons, thr, sizeof thr);
    else
        snprintf(thr, sizeof thr, "-");
    return snprintf(buf, len, "%3u  %-18.18s %5s %5s %20s %5s %5s %11s %6s %6s %13s  %s\n", d->index, d->name, util,
                    memu, mem, temp, mtemp, power, sm, mclk, pcie, thr);
}

static const char table_header[] =
    "gpu  name                util  mem%     memory used/total  temp  memT  power/limit sm MHz memMHz "
    "pcie rx/tx MB/s  clock limits\n";

static int host_line(char *buf, size_t len, const gfl_host_metrics_payload *h)
{
    char cpu[16], ram[48];
    CELL(cpu, h->valid & GFL_HOST_SYS_CPU, "%.1f%%", h->sys_cpu_pct_x100 / 100.0);
    CELL(ram, h->valid & GFL_HOST_RAM, "%.1f/%.1f GiB", (double)h->ram_used_bytes / (1 << 30),
         (double)h->ram_total_bytes / (1 << 30));
    return snprintf(buf, len, "host  cpu %s of %u CPUs, ram %s\n", cpu, h->cpu_count, ram);
}

static void emit_table(monitor *m, const gpufl__live_sample *s)
{
    static char frame[1 << 16];
    size_t n = 0;
    char when[32];
    clock_text(s->wall_ns, when, sizeof when, false);
    if (m->tty) {
        n += (size_t)snprintf(frame + n, sizeof frame - n, "gpufl monitor  %s  every %u ms, Ctrl-C to stop\n%s", when,
                              m->interval_ms, m->live.have_nvml ? table_header : "");
    } else if (m->samples == 1) {
        fprintf(m->out, "time          %s", m->live.have_nvml ? table_header : "host\n");
    }
    for (uint32_t i = 0; i < m->live.devices.count && n < sizeof frame - 512; i++) {
        if (!m->selected[i])
            continue;
        if (!m->tty)
            n += (size_t)snprintf(frame + n, sizeof frame - n, "%-13s ", when);
        n += (size_t)table_row(frame + n, sizeof frame - n, &m->live.devices.devices[i], &s->gpu[i]);
    }
    if (!m->tty)
        n += (size_t)snprintf(frame + n, sizeof frame - n, "%-13s ", when);
    n += (size_t)host_line(frame + n, sizeof frame - n, &s->host);
    if (m->tty) {
        if (!m->live.have_nvml)
            n += (size_t)snprintf(frame + n, sizeof frame - n, "(no GPUs: %s)\n", m->live.nvml_error);
        for (unsigned i = 0; i < m->recent_count; i++)
            n += (size_t)snprintf(frame + n, sizeof frame - n, "%s\n", m->recent_alerts[i]);
        /* back to the top of the previous frame, and clear what is below */
        if (m->lines_drawn)
            fprintf(m->out, "\x1b[%uA\x1b[J", m->lines_drawn);
        m->lines_drawn = 0;
        for (size_t k = 0; k < n; k++)
            m->lines_drawn += frame[k] == '\n';
    }
    fwrite(frame, 1, n, m->out);
    fflush(m->out);
}

static void csv_value(FILE *f, bool valid, unsigned long long v)
{
    if (valid)
        fprintf(f, ",%llu", v);
    else
        fputs(",", f);
}

static void emit_csv(monitor *m, const gpufl__live_sample *s)
{
    if (m->samples == 1)
        fputs("time,epoch_ms,gpu,name,gpu_util_pct,mem_util_pct,mem_used_bytes,mem_total_bytes,temp_c,"
              "mem_temp_c,power_mw,power_limit_mw,energy_mj,sm_clock_mhz,mem_clock_mhz,pcie_rx_kbps,"
              "pcie_tx_kbps,clock_limits,host_cpu_pct,host_ram_used_bytes,host_ram_total_bytes\n",
              m->out);
    char when[40];
    clock_text(s->wall_ns, when, sizeof when, true);
    const gfl_host_metrics_payload *h = &s->host;
    bool any = false;
    for (uint32_t i = 0; i <= m->live.devices.count; i++) {
        bool host_only = i == m->live.devices.count;
        if (host_only && any)
            break;
        if (!host_only && !m->selected[i])
            continue;
        any = true;
        fprintf(m->out, "%s,%llu", when, (unsigned long long)(s->wall_ns / 1000000ull));
        if (host_only) {
            fputs(",,,,,,,,,,,,,,,,,", m->out);
        } else {
            const gfl_device_metrics_payload *g = &s->gpu[i];
            uint32_t v = g->valid;
            char thr[160];
            gpufl__throttle_text(g->throttle_reasons, thr, sizeof thr);
            fprintf(m->out, ",%u,\"%s\"", m->live.devices.devices[i].index, m->live.devices.devices[i].name);
            csv_value(m->out, v & GFL_DEV_GPU_UTIL, g->gpu_util_pct);
            csv_value(m->out, v & GFL_DEV_MEM_UTIL, g->mem_util_pct);
            csv_value(m->out, v & GFL_DEV_MEM, g->mem_used_bytes);
            csv_value(m->out, v & GFL_DEV_MEM, g->mem_free_bytes);
            csv_value(m->out, v & GFL_DEV_MEM, g->mem_total_bytes);
            if (v & GFL_DEV_TEMP)
                fprintf(m->out, ",%d", g->temp_c);
            else
                fputs(",", m->out);
            if (v & GFL_DEV_MEM_TEMP)
                fprintf(m->out, ",%d", g->mem_temp_c);
            else
                fputs(",", m->out);
            csv_value(m->out, v & GFL_DEV_POWER, g->power_mw);
            csv_value(m->out, v & GFL_DEV_POWER_LIMIT, g->power_limit_mw);
            csv_value(m->out, v & GFL_DEV_ENERGY, g->energy_mj);
            csv_value(m->out, v & GFL_DEV_CLOCKS, g->sm_clock_mhz);
            csv_value(m->out, v & GFL_DEV_CLOCKS, g->mem_clock_mhz);
            csv_value(m->out, v & GFL_DEV_PCIE, g->pcie_rx_kbps);
            csv_value(m->out, v & GFL_DEV_PCIE, g->pcie_tx_kbps);
            fprintf(m->out, ",%s", v & GFL_DEV_THROTTLE ? thr : "");
        }
        if (h->valid & GFL_HOST_SYS_CPU)
            fprintf(m->out, ",%.2f", h->sys_cpu_pct_x100 / 100.0);
        else
            fputs(",", m->out);
        csv_value(m->out, h->valid & GFL_HOST_RAM, h->ram_used_bytes);
        csv_value(m->out, h->valid & GFL_HOST_RAM, h->ram_total_bytes);
        fputs("\n", m->out);
    }
    fflush(m->out);
}

/* One sample as a JSON object: the same fields as the session logs. */
static json_t *sample_json(monitor *m, const gpufl__live_sample *s)
{
    char when[40];
    clock_text(s->wall_ns, when, sizeof when, true);
    json_t *gpus = json_array();
    for (uint32_t i = 0; i < m->live.devices.count; i++) {
        if (!m->selected[i])
            continue;
        const gfl_device_metrics_payload *g = &s->gpu[i];
        uint32_t v = g->valid;
        json_t *o = json_pack("{s:i,s:s}", "gpu", (int)m->live.devices.devices[i].index, "name",
                              m->live.devices.devices[i].name);
        if (v & GFL_DEV_GPU_UTIL) {
            json_object_set_new(o, "gpu_util_pct", json_integer(g->gpu_util_pct));
            json_object_set_new(o, "mem_util_pct", json_integer(g->mem_util_pct));
        }
        if (v & GFL_DEV_MEM) {
            json_object_set_new(o, "mem_used_bytes", json_integer((json_int_t)g->mem_used_bytes));
            json_object_set_new(o, "mem_free_bytes", json_integer((json_int_t)g->mem_free_bytes));
            json_object_set_new(o, "mem_total_bytes", json_integer((json_int_t)g->mem_total_bytes));
        }
        if (v & GFL_DEV_TEMP)
            json_object_set_new(o, "temp_c", json_integer(g->temp_c));
        if (v & GFL_DEV_MEM_TEMP)
            json_object_set_new(o, "mem_temp_c", json_integer(g->mem_temp_c));
        if (v & GFL_DEV_POWER)
            json_object_set_new(o, "power_mw", json_integer(g->power_mw));
        if (v & GFL_DEV_POWER_LIMIT)
            json_object_set_new(o, "power_limit_mw", json_integer(g->power_limit_mw));
        if (v & GFL_DEV_ENERGY)
            json_object_set_new(o, "energy_mj", json_integer((json_int_t)g->energy_mj));
        if (v & GFL_DEV_CLOCKS) {
            json_object_set_new(o, "sm_clock_mhz", json_integer(g->sm_clock_mhz));
            json_object_set_new(o, "mem_clock_mhz", json_integer(g->mem_clock_mhz));
        }
        if (v & GFL_DEV_PCIE) {
            json_object_set_new(o, "pcie_rx_kbps", json_integer(g->pcie_rx_kbps));
            json_object_set_new(o, "pcie_tx_kbps", json_integer(g->pcie_tx_kbps));
        }
        if (v & GFL_DEV_THROTTLE) {
            char thr[160];
            gpufl__throttle_text(g->throttle_reasons, thr, sizeof thr);
            json_object_set_new(o, "clock_limits", json_string(thr));
        }
        json_array_append_new(gpus, o);
    }
    const gfl_host_metrics_payload *h = &s->host;
    json_t *host = json_pack("{s:i}", "cpu_count", (int)h->cpu_count);
    if (h->valid & GFL_HOST_SYS_CPU)
        json_object_set_new(host, "cpu_pct", json_real(h->sys_cpu_pct_x100 / 100.0));
    if (h->valid & GFL_HOST_RAM) {
        json_object_set_new(host, "ram_used_bytes", json_integer((json_int_t)h->ram_used_bytes));
        json_object_set_new(host, "ram_total_bytes", json_integer((json_int_t)h->ram_total_bytes));
    }
    return json_pack("{s:s,s:I,s:o,s:o}", "time", when, "epoch_ms", (json_int_t)(s->wall_ns / 1000000ull), "gpus", gpus,
                     "host", host);
}

static void emit_json(monitor *m, const gpufl__live_sample *s)
{
    json_t *o = sample_json(m, s);
    if (m->format == FMT_JSON)
        fputs(m->json_first ? "[\n" : ",\n", m->out);
    json_dumpf(o, m->out, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (m->format == FMT_NDJSON)
        fputs("\n", m->out);
    m->json_first = false;
    json_decref(o);
    fflush(m->out);
}

/* ---- summary ---------------------------------------------------------------- */

static void summary(monitor *m, FILE *f, double elapsed_s)
{
    fprintf(f, "\nsummary: %.1f s, %llu samples\n", elapsed_s, (unsigned long long)m->samples);
    for (uint32_t i = 0; i < m->live.devices.count; i++) {
        const gpu_totals *t = &m->gpu[i];
        if (!m->selected[i] || !t->samples)
            continue;
        char peak[32];
        gpufl__format_bytes(t->mem_peak, peak, sizeof peak);
        fprintf(f, "  GPU %u %s: peak memory %s (%.1f%%)", m->live.devices.devices[i].index,
                m->live.devices.devices[i].name, peak,
                t->mem_total ? 100.0 * (double)t->mem_peak / (double)t->mem_total : 0);
        if (t->have_temp)
            fprintf(f, ", max temperature %d C", t->temp_max);
        if (t->util_samples)
            fprintf(f, ", mean utilization %.1f%%", (double)t->util_sum / (double)t->util_samples);
        /* NVML's energy counter is read once a second: over a shorter run it
         * has not moved, and power readings give the better estimate */
        if (t->have_energy && t->energy_last > t->energy_first)
            fprintf(f, ", energy %.1f J", (double)(t->energy_last - t->energy_first) / 1000.0);
        else if (t->power_mj > 0)
            fprintf(f, ", energy %.1f J (from power readings)", t->power_mj / 1000.0);
        fprintf(f, "\n");
    }
    if (m->host_samples || m->host_ram_total) {
        char peak[32], total[32];
        gpufl__format_bytes(m->host_ram_peak, peak, sizeof peak);
        gpufl__format_bytes(m->host_ram_total, total, sizeof total);
        fprintf(f, "  host: mean cpu %.1f%%, peak ram %s of %s\n",
                m->host_samples ? (double)m->host_cpu_sum_x100 / (double)m->host_samples / 100.0 : 0, peak, total);
    }
    unsigned alerts = m->alerts_warn + m->alerts_crit;
    fprintf(f, "  thresholds: %u alert%s (%u warn, %u crit)\n", alerts, alerts == 1 ? "" : "s", m->alerts_warn,
            m->alerts_crit);
}

/* ---- the loop ------------------------------------------------------------ */

static void sleep_until(uint64_t deadline_ns)
{
    while (!stop_requested) {
        uint64_t now = gpufl__mono_ns();
        if (now >= deadline_ns)
            return;
        uint64_t left = deadline_ns - now;
        struct timespec ts = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
        nanosleep(&ts, NULL); /* a signal cuts it short: then we stop */
    }
}

int gpufl_cmd_monitor(int argc, char **argv)
{
    static monitor m; /* large; static keeps it off the stack */
    memset(&m, 0, sizeof m);
    m.interval_ms = 1000;
    m.th = (thresholds){-1, -1, -1, -1};
    m.json_first = true;
    const char *output = NULL;
    bool filtered = false, wanted[GFL_MAX_DEVICES] = {false};
    int rc = parse_args(&m, argc, argv, &output, wanted, &filtered);
    if (rc != 0)
        return rc < 0 ? GFL_EXIT_OK : rc;

    char err[600];
    if (gpufl__live_open(&m.live, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl monitor: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    if (!m.live.have_nvml)
        fprintf(stderr, "gpufl monitor: %s; showing host metrics only\n", m.live.nvml_error);
    /* --devices names NVML indices; selected[] is by position in the list */
    for (uint32_t i = 0; i < m.live.devices.count; i++)
        m.selected[i] = !filtered || wanted[m.live.devices.devices[i].index];
    for (unsigned want = 0; filtered && want < GFL_MAX_DEVICES; want++) {
        bool exists = false;
        for (uint32_t i = 0; i < m.live.devices.count; i++)
            exists |= m.live.devices.devices[i].index == want;
        if (wanted[want] && !exists) {
            fprintf(stderr, "gpufl monitor: --devices: there is no GPU %u (%u GPU%s found)\n", want,
                    m.live.devices.count, m.live.devices.count == 1 ? "" : "s");
            gpufl__live_close(&m.live);
            return GFL_EXIT_USAGE;
        }
    }
    m.out = stdout;
    if (output && !(m.out = fopen(output, "w"))) {
        fprintf(stderr, "gpufl monitor: cannot write '%s': %s\n", output, strerror(errno));
        gpufl__live_close(&m.live);
        return GFL_EXIT_FAIL;
    }
    m.tty = m.format == FMT_TABLE && !output && isatty(STDOUT_FILENO);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: the sleep must end */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    uint64_t start = gpufl__mono_ns(), next = start;
    uint64_t end = m.duration_s > 0 ? start + (uint64_t)(m.duration_s * 1e9) : UINT64_MAX;
    gpufl__live_sample s;
    while (!stop_requested) {
        gpufl__live_sample_now(&m.live, &s);
        account(&m, &s);
        if (m.format == FMT_TABLE)
            emit_table(&m, &s);
        else if (m.format == FMT_CSV)
            emit_csv(&m, &s);
        else
            emit_json(&m, &s);
        next += (uint64_t)m.interval_ms * 1000000ull;
        if (next >= end) {
            sleep_until(end); /* the run lasts what was asked */
            break;
        }
        sleep_until(next);
    }
    if (m.format == FMT_JSON)
        fputs(m.json_first ? "[]\n" : "\n]\n", m.out);
    double elapsed = (double)(gpufl__mono_ns() - start) / 1e9;
    /* the summary goes where a person reads it: not into a data stream */
    FILE *sf = (m.format == FMT_TABLE || output) ? stdout : stderr;
    if (m.out != stdout)
        fclose(m.out);
    summary(&m, sf, elapsed);
    gpufl__live_close(&m.live);
    return m.alerts_warn + m.alerts_crit ? GFL_EXIT_THRESHOLD : GFL_EXIT_OK;
}
