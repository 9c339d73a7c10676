/*
 * `gpufl mem`: GPU memory from the command line, in the reference memory
 * profiler's terms (info, monitor, track, analyze, diagnose). One file per
 * subcommand; cmd_mem.c dispatches. Each subcommand answers its own --help
 * (gpufl__mem_help) and shares these exit codes, which CI gates on:
 *   0 fine; 1 a leak was found or a threshold crossed; 2 an error or bad usage.
 */
#ifndef GPUFL_CLI_MEM_H
#define GPUFL_CLI_MEM_H

#include <stddef.h>
#include <stdio.h>

#define GFL_MEM_OK 0
#define GFL_MEM_FOUND 1
#define GFL_MEM_ERROR 2

typedef struct gpufl__mem_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
    const char *synopsis;              /* after "gpufl mem NAME " */
    const char *about;
    const char *details; /* options and exit codes, for its --help */
} gpufl__mem_command;

extern const gpufl__mem_command gpufl__mem_info_command;
extern const gpufl__mem_command gpufl__mem_monitor_command;
extern const gpufl__mem_command gpufl__mem_track_command;
extern const gpufl__mem_command gpufl__mem_analyze_command;
extern const gpufl__mem_command gpufl__mem_diagnose_command;

/* `gpufl mem analyze` of the session at path, already open as t, with its
 * default options (steps of 5 repetitions or more, every name, no plots),
 * written to out as text or (json) JSON; *leak_found is 1 when a leak was
 * found. For `gpufl mem track`, which prints it after the program it ran
 * and reads the same trace for its thresholds. Returns 0, or a negative
 * GPUFL_E* with err saying what failed (GPUFL_EIO for out, GPUFL_ENOMEM);
 * *leak_found is 0 then. */
struct gpufl_trace;
int gpufl__mem_analyze_trace(const struct gpufl_trace *t, const char *path, int json, FILE *out, int *leak_found,
                             char *err, size_t err_len) __attribute__((warn_unused_result));

/* Prints "gpufl mem NAME: <message>" and NAME's usage on stderr; returns
 * GFL_MEM_ERROR. */
int gpufl__mem_usage_error(const gpufl__mem_command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether argv (after argv[0]) asks for help (--help, -h before "--"). */
int gpufl__mem_wants_help(int argc, char **argv);
/* Prints NAME's help on stdout; returns GFL_MEM_OK. */
int gpufl__mem_help(const gpufl__mem_command *c);

#endif /* GPUFL_CLI_MEM_H */
