/*
 * `gpufl` entry point: finds the subcommand and hands it its arguments.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "gpufl/gpufl.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} command;

static const command commands[] = {
    {"devices", gpufl_cmd_devices, "devices [--json]           every GPU: identity, limits and current state"},
    {"monitor", gpufl_cmd_monitor,
     "monitor [--duration S] [--interval MS] [--devices 0,1] [--format table|csv|json|ndjson]\n"
     "        [--output FILE] [--warn-mem PCT] [--crit-mem PCT] [--warn-temp C] [--crit-temp C]\n"
     "                                 live GPU and host view; alerts when a threshold is crossed"},
    {"run", gpufl_cmd_run,
     "run [--engine NAME] [--log-path DIR] [--app-name NAME] [--stack-trace] [--] PROGRAM [ARGS...]\n"
     "                                 record an unmodified CUDA program (default engine: trace);\n"
     "                                 exits with PROGRAM's status"},
    {"summary", gpufl_cmd_summary, "summary SESSION [--json]   what a session recorded, from its session.json"},
    {"stacks", gpufl_cmd_stacks,
     "stacks SESSION [--raw] [--symbolize-here]\n"
     "                                 CPU stacks of launches and syncs, symbolized when recorded\n"
     "                                 on this machine (--symbolize-here: from this machine's\n"
     "                                 module files anyway)"},
    {"report", gpufl_cmd_report,
     "report SESSION [--top N] [--format text|json|html] [-o FILE] [--symbolize-here]\n"
     "                                 every analysis: summary, scopes, hot kernels, occupancy,\n"
     "                                 copies, idle time, launches, memory (JSON: docs/REPORT.md)"},
    {"info", gpufl_cmd_info, "info SESSION [--json]      what a session holds, read from its logs or trace.gflt"},
    {"view", gpufl_cmd_view,
     "view SESSION [--from T] [--to T] [--width N]\n"
     "                                 timeline: utilization, streams, scopes and NVTX by thread;\n"
     "                                 T is 1.5s, 250ms, 40us or ns after the session's start"},
    {"diff", gpufl_cmd_diff,
     "diff BASELINE CANDIDATE [--threshold PCT] [--min-impact PCT] [--format text|json] [--all]\n"
     "                                 what changed per kernel, scope and GPU, judged against the\n"
     "                                 noise; exits 1 on a regression (for CI)"},
    {"export", gpufl_cmd_export,
     "export SESSION -f perfetto|chrome|csv [-o OUT]\n"
     "                                 for other tools: a .perfetto-trace (ui.perfetto.dev), Chrome\n"
     "                                 trace JSON, or a directory of CSV files, one per table\n"
     "                                 (default OUT: the session's name in the current directory)"},
    {"convert", gpufl_cmd_convert,
     "convert IN OUT [--level N] [--force]\n"
     "                                 between NDJSON and .gflt: OUT is a .gflt file, or a directory\n"
     "                                 to create with the .log files"},
    {"options", gpufl_cmd_options, "options [--markdown]       every option, its default and variable"},
};

static void usage(FILE *out)
{
    fprintf(out, "gpufl %s: a flight recorder for GPU workloads\n\nusage: gpufl COMMAND [ARGS]\n\n",
            gpufl_version());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  gpufl %s\n", commands[i].usage);
    fprintf(out, "  gpufl version                  the version\n"
                 "  gpufl help                     this text\n\n"
                 "SESSION is a session directory (<log_path>/<session id>); summary also takes\n"
                 "its session.json, info one .log or .gflt file.\n\n"
                 "Exit codes:\n"
                 "  0   success (monitor: no threshold was crossed)\n"
                 "  1   the command failed: unreadable input, unwritable output, NVML error\n"
                 "  2   monitor: a --warn-* or --crit-* threshold was crossed\n"
                 "  3   devices: no NVIDIA driver (libnvidia-ml could not be loaded)\n"
                 "  64  bad usage\n"
                 "  run exits with PROGRAM's own status (128+N if signal N killed it), 126 if\n"
                 "      PROGRAM could not be executed, 127 if it was not found\n"
                 "  diff exits like diff(1): 0 no regression, 1 a regression past the\n"
                 "      threshold, 2 bad usage or a session that could not be read\n"
                 "Without an NVIDIA driver, devices says so and monitor shows host metrics only.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GFL_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return GFL_EXIT_OK;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("gpufl %s\n", gpufl_version());
        return GFL_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gpufl: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return GFL_EXIT_USAGE;
}
