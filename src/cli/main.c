/*
 * `gpufl` entry point: finds the subcommand (help.c's table) and hands it
 * its arguments, after answering --help and -h for it, so that every
 * command treats them the same way (see cli.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "gpufl/gpufl.h"

static int is_help(const char *arg) { return !strcmp(arg, "--help") || !strcmp(arg, "-h"); }

/* Whether the command's arguments ask for its help: --help or -h before
 * "--" and, for a command that runs a program, before the program. */
static int wants_help(const gpufl__cli_command *c, int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (is_help(argv[i]))
            return 1;
        if (c->program_args && argv[i][0] != '-')
            break; /* PROGRAM or an option's value: either way its own parser decides */
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        gpufl__cli_list(stderr);
        return GFL_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (is_help(name))
        name = "help";
    else if (!strcmp(name, "--version"))
        name = "version";
    const gpufl__cli_command *c = gpufl__cli_find(name);
    if (!c) {
        fprintf(stderr, "gpufl: unknown command '%s'; run 'gpufl help' for the list\n", name);
        return GFL_EXIT_USAGE;
    }
    if (wants_help(c, argc - 1, argv + 1))
        return gpufl__cli_help(c->name);
    return c->run(argc - 1, argv + 1);
}
