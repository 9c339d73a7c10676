/*
 * The `gpufl` command: a dispatcher over one function per subcommand.
 * Exit codes, the same for every command (`gpufl help` lists them):
 *   0 success; 1 the command failed (an unreadable session, an unwritable
 *   file); 2 `gpufl monitor` saw a threshold crossed; 3 no NVIDIA driver
 *   (`gpufl devices`); 64 bad usage.
 */
#ifndef GPUFL_CLI_CLI_H
#define GPUFL_CLI_CLI_H

#define GFL_EXIT_OK 0
#define GFL_EXIT_FAIL 1
#define GFL_EXIT_THRESHOLD 2
#define GFL_EXIT_NO_DRIVER 3
#define GFL_EXIT_USAGE 64

int gpufl_cmd_summary(int argc, char **argv);
int gpufl_cmd_options(int argc, char **argv);
int gpufl_cmd_devices(int argc, char **argv);
int gpufl_cmd_monitor(int argc, char **argv);
int gpufl_cmd_convert(int argc, char **argv);
int gpufl_cmd_info(int argc, char **argv);
int gpufl_cmd_export(int argc, char **argv);
int gpufl_cmd_stacks(int argc, char **argv);
int gpufl_cmd_run(int argc, char **argv);
int gpufl_cmd_view(int argc, char **argv);
int gpufl_cmd_report(int argc, char **argv);
/* diff exits 0 no regression, 1 a regression, 2 bad usage or unreadable input,
 * like diff(1), so that CI can gate on it. */
int gpufl_cmd_diff(int argc, char **argv);

#endif /* GPUFL_CLI_CLI_H */
