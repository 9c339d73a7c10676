/*
 * `gpufl mem track [OPTIONS] [--] PROGRAM [ARGS...]`: runs PROGRAM under
 * the recorder with its memory recorded (gpufl run with memory tracking,
 * continuous GPU sampling, CPU and Python stacks, PyTorch's allocator), then
 * says what its memory did: the analysis of `gpufl mem analyze` for each
 * process it recorded, and whether the GPU's memory crossed the warning or
 * critical threshold. --output writes the memory timeline read back from
 * the sessions (the device samples and the allocator's states), CSV or JSON.
 *
 * Without PROGRAM there is nothing to record: it watches the GPUs as
 * `gpufl mem monitor` does, with the same options.
 *
 * Exit: 0 fine; 1 a leak, an out-of-memory or a crossed threshold; 2 an
 * error: bad usage, a program that could not run or failed for another
 * reason, or nothing recorded.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_oom.h"
#include "cli/cli.h"
#include "cli/mem.h"
#include "cli/run_python.h"
#include "gpufl/trace.h"

#define MAX_SESSIONS 64

typedef struct track_args {
    double interval_s, warning_pct, critical_pct;
    const char *output, *format, *log_path;
    bool oom_recorder, watchdog;
    long oom_max_dumps, oom_max_total_mb;
    const char *watch_only; /* an option of watching the GPUs (gpufl mem monitor's) */
    char **program;
} track_args;

typedef struct tracked {
    char *dirs[MAX_SESSIONS];
    size_t n;
} tracked;

static int parse_number(const gpufl__mem_command *c, const char *opt, const char *v, double lo, double hi, double *out)
{
    if (!gpufl__cli_number(v, lo, hi, out))
        return gpufl__mem_usage_error(c, "%s: '%s' is not a number from %g to %g", opt, v, lo, hi);
    return 0;
}

/* Fills *a; returns 0 or GFL_MEM_ERROR after saying why. */
static int parse(int argc, char **argv, track_args *a)
{
    enum {
        O_INTERVAL = 1,
        O_OUTPUT,
        O_FORMAT,
        O_WARN,
        O_CRIT,
        O_OOM,
        O_MAX_DUMPS,
        O_MAX_MB,
        O_LOG,
        O_DURATION,
        O_DEVICE,
        O_DEVICES,
        O_WD
    };
    static const struct option opts[] = {{"interval", required_argument, 0, O_INTERVAL},
                                         {"output", required_argument, 0, O_OUTPUT},
                                         {"format", required_argument, 0, O_FORMAT},
                                         {"warning-threshold", required_argument, 0, O_WARN},
                                         {"critical-threshold", required_argument, 0, O_CRIT},
                                         {"oom-flight-recorder", no_argument, 0, O_OOM},
                                         {"oom-max-dumps", required_argument, 0, O_MAX_DUMPS},
                                         {"oom-max-total-mb", required_argument, 0, O_MAX_MB},
                                         {"log-path", required_argument, 0, O_LOG},
                                         {"duration", required_argument, 0, O_DURATION},
                                         {"device", required_argument, 0, O_DEVICE},
                                         {"devices", required_argument, 0, O_DEVICES},
                                         {"watchdog", no_argument, 0, O_WD},
                                         {0, 0, 0, 0}};
    const gpufl__mem_command *c = &gpufl__mem_track_command;
    *a = (track_args){.interval_s = 0.1, .warning_pct = 80, .critical_pct = 95, .format = "csv"};
    double v = 0;
    optind = 0;
    opterr = 0;
    int o;
    while ((o = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        switch (o) {
        case O_INTERVAL:
            if (parse_number(c, "--interval", optarg, 0.001, 3600, &a->interval_s))
                return GFL_MEM_ERROR;
            break;
        case O_OUTPUT: a->output = optarg; break;
        case O_FORMAT:
            if (strcmp(optarg, "csv") != 0 && strcmp(optarg, "json") != 0)
                return gpufl__mem_usage_error(c, "--format: '%s': csv or json", optarg);
            a->format = optarg;
            break;
        case O_WARN:
            if (parse_number(c, "--warning-threshold", optarg, 0, 100, &a->warning_pct))
                return GFL_MEM_ERROR;
            break;
        case O_CRIT:
            if (parse_number(c, "--critical-threshold", optarg, 0, 100, &a->critical_pct))
                return GFL_MEM_ERROR;
            break;
        case O_OOM: a->oom_recorder = true; break;
        case O_MAX_DUMPS:
            if (parse_number(c, "--oom-max-dumps", optarg, 1, 100000, &v))
                return GFL_MEM_ERROR;
            a->oom_max_dumps = (long)v;
            break;
        case O_MAX_MB:
            if (parse_number(c, "--oom-max-total-mb", optarg, 1, 1 << 30, &v))
                return GFL_MEM_ERROR;
            a->oom_max_total_mb = (long)v;
            break;
        case O_LOG: a->log_path = optarg; break;
        case O_DURATION: a->watch_only = "--duration"; break;
        case O_DEVICE: a->watch_only = "--device"; break;
        case O_DEVICES: a->watch_only = "--devices"; break;
        case O_WD: a->watchdog = true; break;
        default: return gpufl__mem_usage_error(c, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (a->warning_pct > a->critical_pct)
        return gpufl__mem_usage_error(c, "--warning-threshold %g is above --critical-threshold %g", a->warning_pct,
                                      a->critical_pct);
    if ((a->oom_max_dumps || a->oom_max_total_mb) && !a->oom_recorder)
        return gpufl__mem_usage_error(c, "--oom-max-dumps and --oom-max-total-mb need --oom-flight-recorder");
    a->program = optind < argc ? argv + optind : NULL;
    if (a->program && a->watch_only)
        return gpufl__mem_usage_error(c,
                                      "%s: a PROGRAM runs to its end on every GPU it uses; without PROGRAM, "
                                      "gpufl mem track watches the GPUs and takes it",
                                      a->watch_only);
    if (!a->program && (a->oom_recorder || a->log_path || a->watchdog))
        return gpufl__mem_usage_error(c, "%s: needs a PROGRAM to record",
                                      a->oom_recorder ? "--oom-flight-recorder"
                                      : a->log_path   ? "--log-path"
                                                      : "--watchdog");
    /* the watchdog empties PyTorch's cache from inside the program: only a
     * Python program has one to empty */
    if (a->watchdog && !gpufl__run_is_python(a->program[0]))
        return gpufl__mem_usage_error(c,
                                      "--watchdog: %s is not a Python program; the watchdog empties PyTorch's "
                                      "cache from inside one",
                                      a->program[0]);
    return 0;
}

static int set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        perror("gpufl mem track: setenv");
        return -1;
    }
    return 0;
}

/* The recorder's settings for a tracked program, through the variables
 * gpufl run's program reads (docs: README, options). */
static int prepare(const track_args *a)
{
    char v[64];
    snprintf(v, sizeof v, "%u", (unsigned)(a->interval_s * 1000 + 0.5) ? (unsigned)(a->interval_s * 1000 + 0.5) : 1);
    if (set_env("GPUFL_ENABLE_MEMORY_TRACKING", "1") || set_env("GPUFL_SYSTEM_SAMPLE_RATE_MS", v) ||
        set_env("GPUFL_CONTINUOUS_SYSTEM_SAMPLING", "1"))
        return -1;
    if (a->watchdog) { /* python/run_hook: a MemoryWatchdog with these thresholds */
        char w[32], c[32];
        snprintf(w, sizeof w, "%g", a->warning_pct);
        snprintf(c, sizeof c, "%g", a->critical_pct);
        if (set_env("GPUFL_MEMORY_WATCHDOG", "1") || set_env("GPUFL_MEMORY_WARNING_PCT", w) ||
            set_env("GPUFL_MEMORY_CRITICAL_PCT", c))
            return -1;
    }
    if (a->oom_recorder) {
        if (!getenv("GPUFL_FLIGHT_WINDOW_S") && set_env("GPUFL_FLIGHT_WINDOW_S", "60"))
            return -1;
        if (set_env("GPUFL_DUMP_ON_OOM", "1"))
            return -1;
        if (a->oom_max_dumps) {
            snprintf(v, sizeof v, "%ld", a->oom_max_dumps);
            if (set_env("GPUFL_DUMP_MAX_COUNT", v))
                return -1;
        }
        if (a->oom_max_total_mb) {
            snprintf(v, sizeof v, "%ldMiB", a->oom_max_total_mb);
            if (set_env("GPUFL_DUMP_MAX_BYTES", v))
                return -1;
        }
    }
    return 0;
}

static void remember(const char *dir, void *ctx)
{
    tracked *t = ctx;
    if (t->n < MAX_SESSIONS && (t->dirs[t->n] = strdup(dir)) != NULL)
        t->n++;
}

/* ---- after the run --------------------------------------------------------- */

/* The highest share of a device's memory in use (all processes) in the
 * session; 0 without samples. */
static double peak_used_pct(const gpufl_trace *t, uint32_t *device)
{
    const gpufl_trace_device_samples *s = gpufl_trace_get_device_samples(t);
    double peak = 0;
    for (size_t i = 0; s && i < s->n; i++) {
        if (!(s->valid[i] & 4) || !s->mem_total_bytes[i])
            continue;
        double pct = 100.0 * (double)s->mem_used_bytes[i] / (double)s->mem_total_bytes[i];
        if (pct > peak) {
            peak = pct;
            *device = s->device[i];
        }
    }
    return peak;
}

/* The memory timeline of one session: device samples and allocator
 * states, in time order per kind, seconds since the session's start. */
static void write_timeline(FILE *f, const gpufl_trace *t, const char *dir, bool json, bool *first)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    const gpufl_trace_device_samples *s = gpufl_trace_get_device_samples(t);
    const gpufl_trace_allocator *a = gpufl_trace_get_allocator(t);
    for (size_t i = 0; s && i < s->n; i++) {
        if (!(s->valid[i] & 4))
            continue;
        double ts = (double)(s->ts_ns[i] - info->start_ns) / 1e9;
        uint64_t proc = (s->valid[i] & 8192) ? s->proc_mem_bytes[i] : 0;
        if (json)
            fprintf(f,
                    "%s\n  {\"session\": \"%s\", \"time_s\": %.6f, \"source\": \"device\", \"device\": %u, "
                    "\"used_bytes\": %llu, \"total_bytes\": %llu, \"process_bytes\": %llu}",
                    *first ? "" : ",", dir, ts, s->device[i], (unsigned long long)s->mem_used_bytes[i],
                    (unsigned long long)s->mem_total_bytes[i], (unsigned long long)proc);
        else
            fprintf(f, "%s,%.6f,device,%u,%llu,%llu,%llu,,,,\n", dir, ts, s->device[i],
                    (unsigned long long)s->mem_used_bytes[i], (unsigned long long)s->mem_total_bytes[i],
                    (unsigned long long)proc);
        *first = false;
    }
    for (size_t i = 0; a && i < a->n; i++) {
        double ts = (double)(a->ts_ns[i] - info->start_ns) / 1e9;
        if (json)
            fprintf(f,
                    "%s\n  {\"session\": \"%s\", \"time_s\": %.6f, \"source\": \"allocator\", \"device\": %u, "
                    "\"allocated_bytes\": %llu, \"reserved_bytes\": %llu, \"active_bytes\": %llu, "
                    "\"inactive_split_bytes\": %llu, \"reason\": \"%s\"}",
                    *first ? "" : ",", dir, ts, a->device[i], (unsigned long long)a->allocated[i],
                    (unsigned long long)a->reserved[i], (unsigned long long)a->active[i],
                    (unsigned long long)a->inactive_split[i], gpufl_trace_string(t, a->reason[i]));
        else
            fprintf(f, "%s,%.6f,allocator,%u,,,,%llu,%llu,%llu,%llu\n", dir, ts, a->device[i],
                    (unsigned long long)a->allocated[i], (unsigned long long)a->reserved[i],
                    (unsigned long long)a->active[i], (unsigned long long)a->inactive_split[i]);
        *first = false;
    }
}

/* Reports on every session; returns the exit code it calls for. */
static int report(const track_args *a, const tracked *tr)
{
    FILE *out = NULL;
    bool json = !strcmp(a->format, "json"), first = true;
    if (a->output) {
        if (!(out = fopen(a->output, "we"))) {
            fprintf(stderr, "gpufl mem track: cannot write %s: %m\n", a->output);
            return GFL_MEM_ERROR;
        }
        fputs(json ? "["
                   : "session,time_s,source,device,used_bytes,total_bytes,process_bytes,allocated_bytes,"
                     "reserved_bytes,active_bytes,inactive_split_bytes\n",
              out);
    }
    int code = GFL_MEM_OK;
    for (size_t i = 0; i < tr->n; i++) {
        char err[1024];
        int leak = 0;
        printf("== %s\n", tr->dirs[i]);
        gpufl_trace *t = NULL;
        if (gpufl_trace_open(tr->dirs[i], &t, err, sizeof err) != 0 ||
            gpufl__mem_analyze_trace(t, tr->dirs[i], 0, stdout, &leak, err, sizeof err) != 0) {
            fprintf(stderr, "gpufl mem track: %s\n", err);
            code = GFL_MEM_ERROR;
            if (t)
                gpufl_trace_close(t);
            continue;
        }
        if (leak && code == GFL_MEM_OK)
            code = GFL_MEM_FOUND;
        uint32_t dev = 0;
        double pct = peak_used_pct(t, &dev);
        const char *level = pct >= a->critical_pct ? "CRITICAL" : pct >= a->warning_pct ? "WARNING" : NULL;
        if (level) {
            printf("%s: GPU %u memory reached %.1f %% in use (threshold %.0f %%)\n", level, dev, pct,
                   pct >= a->critical_pct ? a->critical_pct : a->warning_pct);
            if (code == GFL_MEM_OK)
                code = GFL_MEM_FOUND;
        }
        gpufl__ana_oom oom; /* a failed allocation or an "oom" trigger, as gpufl mem diagnose finds it */
        if (gpufl__analyze_oom(t, &oom) == 0 && oom.found) {
            printf("OUT OF MEMORY: see `gpufl mem diagnose %s`\n", tr->dirs[i]);
            if (code == GFL_MEM_OK)
                code = GFL_MEM_FOUND;
        }
        if (out)
            write_timeline(out, t, tr->dirs[i], json, &first);
        gpufl_trace_close(t);
    }
    if (out) {
        if (json)
            fputs("\n]\n", out);
        if (fclose(out) != 0) {
            fprintf(stderr, "gpufl mem track: cannot write %s: %m\n", a->output);
            return GFL_MEM_ERROR;
        }
    }
    return code;
}

static int run(int argc, char **argv)
{
    track_args a;
    if (parse(argc, argv, &a) != 0)
        return GFL_MEM_ERROR;
    if (!a.program) /* nothing to record: watch the GPUs */
        return gpufl__mem_monitor_command.run(argc, argv);
    if (prepare(&a) != 0)
        return GFL_MEM_ERROR;
    char *rargv[8 + 1];
    int n = 0;
    rargv[n++] = "run";
    rargv[n++] = "--stack-trace";
    if (a.log_path) {
        rargv[n++] = "--log-path";
        rargv[n++] = (char *)a.log_path;
    }
    rargv[n++] = "--";
    int nprog = 0;
    while (a.program[nprog])
        nprog++;
    char **full = malloc((size_t)(n + nprog + 1) * sizeof *full);
    if (!full)
        return GFL_MEM_ERROR;
    memcpy(full, rargv, (size_t)n * sizeof *full);
    memcpy(full + n, a.program, (size_t)(nprog + 1) * sizeof *full);
    tracked tr = {0};
    int status = gpufl__run_sessions(n + nprog, full, remember, &tr);
    free(full);
    int code;
    if (tr.n == 0) {
        fprintf(stderr, "gpufl mem track: nothing was recorded\n");
        code = GFL_MEM_ERROR;
    } else {
        code = report(&a, &tr);
        if (status != 0 && code == GFL_MEM_OK) {
            fprintf(stderr, "gpufl mem track: %s exited with status %d\n", a.program[0], status);
            code = GFL_MEM_ERROR;
        }
    }
    for (size_t i = 0; i < tr.n; i++)
        free(tr.dirs[i]);
    return code;
}

const gpufl__mem_command gpufl__mem_track_command = {
    "track",
    run,
    "[--interval S] [--output FILE] [--format csv|json]\n"
    "    [--warning-threshold PCT] [--critical-threshold PCT] [--log-path DIR]\n"
    "    [--oom-flight-recorder [--oom-max-dumps N] [--oom-max-total-mb MB]] [--watchdog]\n"
    "    [--] PROGRAM [ARGS...]\n"
    "  or: gpufl mem track [--duration S] [--device N | --devices 0,1] [the options above but --log-path\n"
    "    and --oom-*]",
    "Runs PROGRAM under the recorder with its memory recorded, then reports its memory:\n"
    "the layers (GPU, driver, PyTorch's allocator), peaks and leaks of each process.",
    "  --interval S             GPU samples every S seconds (default 0.1)\n"
    "  --output FILE            the memory timeline (GPU samples, allocator states)\n"
    "  --format csv|json        of --output (default csv)\n"
    "  --warning-threshold PCT  GPU memory in use, % of the GPU, that counts as a warning (80)\n"
    "  --critical-threshold PCT and as critical (95)\n"
    "  --log-path DIR           where the sessions go (default ./gpufl-logs)\n"
    "  --oom-flight-recorder    keep a flight window, dumped with its oom.json on an out-of-memory\n"
    "  --oom-max-dumps N        dumps kept (default 10)\n"
    "  --oom-max-total-mb MB    bytes of dumps kept (default 4096)\n"
    "  --watchdog               Python programs: empty PyTorch's cache when GPU memory passes\n"
    "                           the warning threshold (critical: also collect garbage), as the\n"
    "                           reference profiler's MemoryWatchdog does, at most every 30 s\n"
    "Without PROGRAM it watches the GPUs as gpufl mem monitor does, with its options\n"
    "(--duration S, default 10, 0 until Ctrl-C; --device N or --devices 0,1).\n"
    "Exit code: 0 fine; 1 a leak, an out-of-memory or a crossed threshold; 2 an error\n"
    "(bad usage, PROGRAM could not run or failed for another reason, nothing recorded).\n",
};
