/*
 * The `gpufl` command: a dispatcher over one function per subcommand.
 * Exit codes, the same for every command (`gpufl help` lists them):
 *   0 success; 1 the command failed (an unreadable session, an unwritable
 *   file); 2 `gpufl monitor` saw a threshold crossed; 3 no NVIDIA driver
 *   (`gpufl devices`); 64 bad usage.
 */
#ifndef GPUFL_CLI_CLI_H
#define GPUFL_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GFL_EXIT_OK 0
#define GFL_EXIT_FAIL 1
#define GFL_EXIT_THRESHOLD 2
#define GFL_EXIT_NO_DRIVER 3
#define GFL_EXIT_USAGE 64

/* ---- help and usage errors, the same for every command (help.c) ---------
 * `gpufl CMD --help`, `gpufl CMD -h` and `gpufl help CMD` print CMD's help
 * on stdout and exit 0; a usage error says what was wrong and CMD's usage
 * lines on stderr and exits 64 (diff: 2). main.c answers --help and -h
 * before the command runs; a command's own parser sends the rest here. */

typedef struct gpufl__cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *synopsis; /* after "gpufl ": arguments; '\n' starts a continuation line */
    const char *about;    /* what it does, for the list in `gpufl help` ('\n' as above) */
    const char *details;  /* the rest of its --help: operands, options, exit codes */
    int usage_exit;       /* exit code for bad usage */
    /* arguments after the first operand are PROGRAM's own (run): main.c
     * looks for --help only before it */
    int program_args;
} gpufl__cli_command;

/* The command called name, or NULL. */
const gpufl__cli_command *gpufl__cli_find(const char *name);
/* Prints the help of command name on stdout; returns GFL_EXIT_OK. */
int gpufl__cli_help(const char *name);
/* Prints "gpufl NAME: <message>" and NAME's usage lines on stderr; returns
 * NAME's exit code for bad usage. */
int gpufl__cli_usage_error(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `gpufl help`: the list of commands and the exit codes, on out. */
void gpufl__cli_list(FILE *out);

/* ---- which copy of a session was read (read_note.c) ----------------------
 * When a session directory held the session twice (log_format both), says
 * on stderr which files were read and why: "gpufl CMD: read FILES: WHY". */
struct gpufl_trace;
void gpufl__cli_note_read(const char *command, const char *files, const char *why, unsigned copies);
void gpufl__cli_note_trace(const char *command, const struct gpufl_trace *t);

/* ---- option values (cli_args.c) -------------------------------------------
 * gpufl__cli_number: text is a number from lo to hi (*out set); false
 * otherwise. gpufl__cli_devices: text is a list of GPU indices below count,
 * "0,2"; each sets wanted[index]; false for a bad or empty list. */
bool gpufl__cli_number(const char *text, double lo, double hi, double *out);
bool gpufl__cli_devices(const char *text, bool *wanted, unsigned count);

/* ---- dates and times in UTC (cli_time.c) ----------------------------------
 * gpufl__cli_time: "2026-11-27" (that day), "2026-11-27T10:30" or
 * "2026-11-27T10:30:05" (a trailing Z allowed); *start_ns (ns since the
 * Unix epoch) when it begins, *end_ns when the day, minute or second it
 * names ends. gpufl__cli_time_range: "A..B" (A's start to B's end) or one
 * date or time (its start to its end). false for anything else, or B
 * ending before A starts. */
bool gpufl__cli_time(const char *text, int64_t *start_ns, int64_t *end_ns);
bool gpufl__cli_time_range(const char *text, int64_t *from_ns, int64_t *to_ns);

/* ---- clock limits as text (throttle_text.c) ------------------------------
 * "sw_power_cap,gpu_idle" from NVML clock-event bits ("none" when 0). */
void gpufl__throttle_text(uint64_t mask, char *buf, size_t len);

/* ---- the environment of programs `gpufl run` starts (env_path.c) ---------
 * Puts path first in the ':'-separated list variable name (LD_PRELOAD,
 * PYTHONPATH), or sets it to path. 0, or -1 after saying why on stderr. */
int gpufl__cli_env_prepend(const char *name, const char *path);

int gpufl_cmd_summary(int argc, char **argv);
int gpufl_cmd_options(int argc, char **argv);
int gpufl_cmd_devices(int argc, char **argv);
int gpufl_cmd_dump(int argc, char **argv);
int gpufl_cmd_monitor(int argc, char **argv);
int gpufl_cmd_convert(int argc, char **argv);
int gpufl_cmd_info(int argc, char **argv);
int gpufl_cmd_export(int argc, char **argv);
int gpufl_cmd_merge(int argc, char **argv);
int gpufl_cmd_exporter(int argc, char **argv);
int gpufl_cmd_stacks(int argc, char **argv);
int gpufl_cmd_run(int argc, char **argv);
/* gpufl_cmd_run, handing each session directory the program's processes
 * recorded to `each` once the program has ended (`gpufl mem track`). */
typedef void (*gpufl__run_session_fn)(const char *session_dir, void *ctx);
int gpufl__run_sessions(int argc, char **argv, gpufl__run_session_fn each, void *ctx);
int gpufl_cmd_view(int argc, char **argv);
int gpufl_cmd_report(int argc, char **argv);
int gpufl_cmd_graph(int argc, char **argv);
int gpufl_cmd_whatif(int argc, char **argv);
/* mem exits 0 fine, 1 a leak or a threshold, 2 an error or bad usage (cli/mem.h). */
int gpufl_cmd_mem(int argc, char **argv);
/* diff exits 0 no regression, 1 a regression, 2 bad usage or unreadable input,
 * like diff(1), so that CI can gate on it. */
int gpufl_cmd_diff(int argc, char **argv);
/* replay-check exits like diff: 0 the same GPU work, 1 different, 2 bad usage
 * or unreadable input (cli/replay_check.h). */
int gpufl_cmd_replay_check(int argc, char **argv);
/* upload exits 0 every session sent, 1 a failure, 2 bad usage: the lead's
 * scripts (and `gpufl serve`'s tests) tell a refused upload from a typo. */
int gpufl_cmd_upload(int argc, char **argv);
/* serve and fleet exit 0 fine, 1 failed (or built without libpq), 64 bad usage;
 * fleet regress 2 when it found a regression. */
int gpufl_cmd_serve(int argc, char **argv);
int gpufl_cmd_fleet(int argc, char **argv);

#endif /* GPUFL_CLI_CLI_H */
