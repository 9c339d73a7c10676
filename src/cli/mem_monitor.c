/*
 * `gpufl mem monitor`: device memory sampled at an interval (NVML through
 * session/live.h), written as CSV lines as they come (so `tail -f` and CI
 * logs see them) or as one JSON document at the end with each device's
 * peak and the alerts. An alert goes to stderr when a device's used share
 * crosses the warning or critical threshold on the way up; the exit code
 * says whether any did (1) so that CI can gate on it, 0 otherwise, 2 on an
 * error. Ends after --duration, or on SIGINT/SIGTERM with what it has.
 *
 * One thread; an interval costs a few NVML calls per device (well under a
 * millisecond), so 10 samples a second is cheap.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/mem.h"
#include "core/clock.h"
#include "session/live.h"

extern const gpufl__mem_command gpufl__mem_monitor_command;
#define CMD (&gpufl__mem_monitor_command)

enum { LEVEL_OK = 0, LEVEL_WARNING = 1, LEVEL_CRITICAL = 2 };
static const char *const level_names[] = {"ok", "warning", "critical"};

typedef struct device_peak {
    uint64_t samples, peak_used, total;
    double peak_pct;
    int level; /* the latest sample's */
} device_peak;

typedef struct mon {
    double duration_s, interval_s, warn_pct, crit_pct;
    bool json_out;
    bool selected[GFL_MAX_DEVICES], filtered;
    FILE *out;
    const char *output;
    gpufl__live live;
    device_peak peak[GFL_MAX_DEVICES];
    json_t *samples, *alerts; /* JSON output */
    uint64_t nsamples, nalerts;
} mon;

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* ---- arguments ------------------------------------------------------------ */

static bool devices(const char *text, mon *m)
{
    m->filtered = true;
    return gpufl__cli_devices(text, m->selected, GFL_MAX_DEVICES);
}

static int parse(mon *m, int argc, char **argv)
{
    enum { O_DURATION = 1, O_INTERVAL, O_OUTPUT, O_FORMAT, O_WARN, O_CRIT, O_DEVICES, O_DEVICE };
    static const struct option opts[] = {{"duration", required_argument, 0, O_DURATION},
                                         {"interval", required_argument, 0, O_INTERVAL},
                                         {"output", required_argument, 0, O_OUTPUT},
                                         {"format", required_argument, 0, O_FORMAT},
                                         {"warning-threshold", required_argument, 0, O_WARN},
                                         {"critical-threshold", required_argument, 0, O_CRIT},
                                         {"devices", required_argument, 0, O_DEVICES},
                                         {"device", required_argument, 0, O_DEVICE},
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case O_DURATION: ok = gpufl__cli_number(optarg, 0, 1e7, &m->duration_s); break;
        case O_INTERVAL: ok = gpufl__cli_number(optarg, 0.01, 3600, &m->interval_s); break;
        case O_OUTPUT: m->output = optarg; break;
        case O_FORMAT:
            ok = !strcmp(optarg, "csv") || !strcmp(optarg, "json");
            m->json_out = !strcmp(optarg, "json");
            break;
        case O_WARN: ok = gpufl__cli_number(optarg, 0, 100, &m->warn_pct); break;
        case O_CRIT: ok = gpufl__cli_number(optarg, 0, 100, &m->crit_pct); break;
        case O_DEVICES:
        case O_DEVICE: ok = devices(optarg, m); break;
        default: ok = false;
        }
        if (!ok)
            return gpufl__mem_usage_error(CMD, "bad argument '%s'", argv[optind - 1 > 0 ? optind - 1 : 0]);
    }
    if (optind < argc)
        return gpufl__mem_usage_error(CMD, "takes no operand ('%s')", argv[optind]);
    if (m->warn_pct > m->crit_pct)
        return gpufl__mem_usage_error(CMD, "--warning-threshold %.1f is above --critical-threshold %.1f", m->warn_pct,
                                      m->crit_pct);
    return 0;
}

/* ---- sampling --------------------------------------------------------------- */

/* Seconds since the epoch, as the CSV's timestamp column writes them. */
static double unix_s(uint64_t wall_ns) { return (double)wall_ns / 1e9; }

static void iso_time(uint64_t wall_ns, char *buf, size_t len)
{
    time_t secs = (time_t)(wall_ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03uZ", (unsigned)(wall_ns / 1000000ull % 1000));
}

static void alert(mon *m, uint32_t dev, int level, double used_pct, uint64_t wall_ns)
{
    char when[40];
    iso_time(wall_ns, when, sizeof when);
    double limit = level == LEVEL_CRITICAL ? m->crit_pct : m->warn_pct;
    fprintf(stderr, "gpufl mem monitor: %s %s: GPU %u memory %.1f %% used, at or above %.1f %%\n", when,
            level == LEVEL_CRITICAL ? "CRITICAL" : "WARNING", dev, used_pct, limit);
    m->nalerts++;
    if (m->json_out)
        json_array_append_new(m->alerts, json_pack("{s:f,s:s,s:i,s:s,s:f,s:f}", "timestamp", unix_s(wall_ns), "time",
                                                   when, "device", (json_int_t)dev, "level", level_names[level],
                                                   "used_pct", used_pct, "threshold_pct", limit));
}

/* Bytes the compute processes hold on device i (NVML's list); false when
 * NVML lists none. */
static bool process_bytes(mon *m, uint32_t i, uint64_t *out)
{
    gpufl__live_process p[64];
    unsigned n = gpufl__live_processes(&m->live, i, p, 64);
    *out = 0;
    for (unsigned k = 0; k < n; k++)
        *out += p[k].used_bytes;
    return n > 0;
}

static void one_device(mon *m, uint32_t i, const gfl_device_metrics_payload *g, uint64_t wall_ns)
{
    uint32_t dev = m->live.devices.devices[i].index;
    if (!(g->valid & GFL_DEV_MEM) || !g->mem_total_bytes)
        return;
    double used_pct = 100.0 * (double)g->mem_used_bytes / (double)g->mem_total_bytes;
    int level = used_pct >= m->crit_pct ? LEVEL_CRITICAL : used_pct >= m->warn_pct ? LEVEL_WARNING : LEVEL_OK;
    device_peak *pk = &m->peak[i];
    if (level > pk->level)
        alert(m, dev, level, used_pct, wall_ns);
    pk->level = level;
    pk->samples++;
    pk->total = g->mem_total_bytes;
    if (g->mem_used_bytes >= pk->peak_used) {
        pk->peak_used = g->mem_used_bytes;
        pk->peak_pct = used_pct;
    }
    uint64_t procs;
    bool have_procs = process_bytes(m, i, &procs);
    m->nsamples++;
    if (m->json_out) {
        json_t *s =
            json_pack("{s:f,s:i,s:I,s:I,s:f,s:I}", "timestamp", unix_s(wall_ns), "device", (json_int_t)dev,
                      "used_bytes", (json_int_t)g->mem_used_bytes, "total_bytes", (json_int_t)g->mem_total_bytes,
                      "used_pct", used_pct, "free_bytes", (json_int_t)g->mem_free_bytes);
        json_object_set_new(s, "process_bytes", have_procs ? json_integer((json_int_t)procs) : json_null());
        json_object_set_new(s, "level", json_string(level_names[level]));
        json_array_append_new(m->samples, s);
        return;
    }
    fprintf(m->out, "%.3f,%u,%llu,%llu,%.2f,%llu,", unix_s(wall_ns), dev, (unsigned long long)g->mem_used_bytes,
            (unsigned long long)g->mem_total_bytes, used_pct, (unsigned long long)g->mem_free_bytes);
    if (have_procs)
        fprintf(m->out, "%llu", (unsigned long long)procs);
    fprintf(m->out, ",%s\n", level_names[level]);
}

static void sample_loop(mon *m)
{
    uint64_t start = gpufl__mono_ns(), interval_ns = (uint64_t)(m->interval_s * 1e9);
    uint64_t end = m->duration_s > 0 ? start + (uint64_t)(m->duration_s * 1e9) : UINT64_MAX;
    for (uint64_t next = start; !stop_requested && next <= end; next += interval_ns) {
        gpufl__live_sample s;
        gpufl__live_sample_now(&m->live, &s);
        for (uint32_t i = 0; i < m->live.devices.count; i++)
            if (!m->filtered || m->selected[m->live.devices.devices[i].index])
                one_device(m, i, &s.gpu[i], s.wall_ns);
        if (!m->json_out)
            fflush(m->out);
        uint64_t now = gpufl__mono_ns();
        if (next + interval_ns > end)
            break;
        while (!stop_requested && now < next + interval_ns) { /* a signal cuts the wait short */
            uint64_t left = next + interval_ns - now;
            struct timespec ts = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
            nanosleep(&ts, NULL);
            now = gpufl__mono_ns();
        }
    }
}

static int write_json(mon *m)
{
    json_t *devs = json_array();
    for (uint32_t i = 0; i < m->live.devices.count; i++) {
        const device_peak *pk = &m->peak[i];
        if (!pk->samples)
            continue;
        json_array_append_new(devs, json_pack("{s:i,s:s,s:I,s:I,s:f,s:I}", "device",
                                              (json_int_t)m->live.devices.devices[i].index, "name",
                                              m->live.devices.devices[i].name, "samples", (json_int_t)pk->samples,
                                              "peak_used_bytes", (json_int_t)pk->peak_used, "peak_used_pct",
                                              pk->peak_pct, "total_bytes", (json_int_t)pk->total));
    }
    json_t *summary = json_pack("{s:f,s:f,s:f,s:I,s:o,s:o}", "interval_s", m->interval_s, "warning_threshold_pct",
                                m->warn_pct, "critical_threshold_pct", m->crit_pct, "samples", (json_int_t)m->nsamples,
                                "devices", devs, "alerts", m->alerts);
    json_t *root = json_pack("{s:o,s:o}", "samples", m->samples, "summary", summary);
    m->samples = m->alerts = NULL; /* root owns them */
    int rc = root ? json_dumpf(root, m->out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) : -1;
    if (rc == 0)
        fputc('\n', m->out);
    json_decref(root);
    return rc == 0 ? 0 : -1;
}

static int run(int argc, char **argv)
{
    mon m = {.duration_s = 10, .interval_s = 0.1, .warn_pct = 80, .crit_pct = 95, .out = stdout};
    int rc = parse(&m, argc, argv);
    if (rc != 0)
        return rc;
    char err[512];
    if (gpufl__live_open(&m.live, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl mem monitor: %s\n", err);
        return GFL_MEM_ERROR;
    }
    if (!m.live.have_nvml) {
        fprintf(stderr, "gpufl mem monitor: %s\n", m.live.nvml_error);
        gpufl__live_close(&m.live);
        return GFL_MEM_ERROR;
    }
    for (uint32_t d = 0; m.filtered && d < GFL_MAX_DEVICES; d++) {
        bool present = false;
        for (uint32_t i = 0; i < m.live.devices.count; i++)
            present |= m.live.devices.devices[i].index == d;
        if (m.selected[d] && !present) {
            fprintf(stderr, "gpufl mem monitor: no GPU %u (this machine has %u)\n", d, m.live.devices.count);
            gpufl__live_close(&m.live);
            return GFL_MEM_ERROR;
        }
    }
    if (m.output && !(m.out = fopen(m.output, "w"))) {
        fprintf(stderr, "gpufl mem monitor: cannot write %s: %s\n", m.output, strerror(errno));
        gpufl__live_close(&m.live);
        return GFL_MEM_ERROR;
    }
    if (m.json_out) {
        m.samples = json_array();
        m.alerts = json_array();
    } else {
        fprintf(m.out, "timestamp,device,used_bytes,total_bytes,used_pct,free_bytes,process_bytes,level\n");
    }
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sample_loop(&m);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    bool failed = m.json_out && write_json(&m) != 0;
    json_decref(m.samples);
    json_decref(m.alerts);
    failed |= fflush(m.out) != 0 || ferror(m.out);
    if (m.output && fclose(m.out) != 0)
        failed = true;
    gpufl__live_close(&m.live);
    if (failed) {
        fprintf(stderr, "gpufl mem monitor: cannot write %s\n", m.output ? m.output : "the output");
        return GFL_MEM_ERROR;
    }
    return m.nalerts ? GFL_MEM_FOUND : GFL_MEM_OK;
}

const gpufl__mem_command gpufl__mem_monitor_command = {
    "monitor", run,
    "[--duration S] [--interval S] [--output FILE] [--format csv|json]\n"
    "                         [--warning-threshold PCT] [--critical-threshold PCT] [--devices 0,1]",
    "Samples device memory at an interval and raises an alert (on stderr) when a GPU's used share\n"
    "crosses the warning or critical threshold.",
    "  --duration S               how long, in seconds (default 10; 0: until interrupted)\n"
    "  --interval S               seconds between samples, fractions allowed (default 0.1)\n"
    "  --output FILE              write there instead of standard output\n"
    "  --format csv|json          CSV lines as they come (default), or one JSON document at the end:\n"
    "                             the samples and a summary with each device's peak and the alerts\n"
    "  --warning-threshold PCT    % of a GPU's memory in use (default 80)\n"
    "  --critical-threshold PCT   (default 95)\n"
    "  --devices 0,1              these GPUs only (default all; --device N for one)\n"
    "\n"
    "CSV columns: timestamp (Unix seconds), device, used_bytes, total_bytes, used_pct, free_bytes,\n"
    "process_bytes (held by the GPU's compute processes; empty when NVML lists none), level (ok,\n"
    "warning, critical).\n"
    "\n"
    "Exit codes: 0 no threshold crossed, 1 a threshold crossed, 2 no NVIDIA driver, an error or bad\n"
    "usage.\n"};
