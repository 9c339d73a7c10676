/*
 * `gpufl mem SUBCOMMAND ...` (mem.h): finds the subcommand and hands it
 * its arguments; answers --help for it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/mem.h"

static const gpufl__mem_command *const subcommands[] = {
    &gpufl__mem_info_command,    &gpufl__mem_monitor_command,  &gpufl__mem_track_command,
    &gpufl__mem_analyze_command, &gpufl__mem_diagnose_command,
};
#define NSUB (sizeof subcommands / sizeof subcommands[0])

static void print_usage(FILE *out, const gpufl__mem_command *c)
{
    fprintf(out, "usage: gpufl mem %s %s\n", c->name, c->synopsis);
}

int gpufl__mem_usage_error(const gpufl__mem_command *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gpufl mem %s: ", c->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    print_usage(stderr, c);
    return GFL_MEM_ERROR;
}

int gpufl__mem_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 1;
    return 0;
}

int gpufl__mem_help(const gpufl__mem_command *c)
{
    print_usage(stdout, c);
    printf("%s\n\n%s", c->about, c->details);
    return GFL_MEM_OK;
}

int gpufl_cmd_mem(int argc, char **argv)
{
    if (argc < 2) {
        return gpufl__cli_usage_error("mem", "which? info, monitor, track, analyze or diagnose");
    }
    for (size_t i = 0; i < NSUB; i++) {
        const gpufl__mem_command *c = subcommands[i];
        if (strcmp(argv[1], c->name) != 0)
            continue;
        if (gpufl__mem_wants_help(argc - 1, argv + 1))
            return gpufl__mem_help(c);
        return c->run(argc - 1, argv + 1);
    }
    if (gpufl__mem_wants_help(argc, argv))
        return gpufl__cli_help("mem");
    return gpufl__cli_usage_error("mem", "unknown subcommand '%s': info, monitor, track, analyze or diagnose", argv[1]);
}
