/*
 * The `gpufl` command: a dispatcher over one function per subcommand.
 * Exit codes: 0 success, 1 the command ran and found a problem in its input
 * (for example an unreadable session), 2 bad usage.
 */
#ifndef GPUFL_CLI_CLI_H
#define GPUFL_CLI_CLI_H

#define GFL_EXIT_OK 0
#define GFL_EXIT_FAIL 1
#define GFL_EXIT_USAGE 2

int gpufl_cmd_summary(int argc, char **argv);
int gpufl_cmd_options(int argc, char **argv);

#endif /* GPUFL_CLI_CLI_H */
