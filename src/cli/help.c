/*
 * The commands of `gpufl` and their help, in one table, and the one way
 * every command prints its help and its usage errors (see cli.h): help on
 * stdout with exit 0, usage errors on stderr with the command's usage
 * lines and exit 64 (diff: 2, like diff(1)). Run once per process, on the
 * main thread.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "gpufl/gpufl.h"

#define DIFF_USAGE_EXIT 2       /* see gpufl_cmd_diff and gpufl_cmd_replay_check in cli.h */
#define GFL_UPLOAD_USAGE_EXIT 2 /* see gpufl_cmd_upload in cli.h */
#define ABOUT_COLUMN 33         /* where `gpufl help` starts a command's description */

static int run_version(int argc, char **argv);
static int run_help(int argc, char **argv);

static const gpufl__cli_command commands[] = {
    {"devices", gpufl_cmd_devices, "devices [--json]", "every GPU: identity, limits and current state",
     "  --json   as JSON, with the field names of the logs' device_info and device_metrics\n"
     "Exit code: 3 when there is no NVIDIA driver (libnvidia-ml could not be loaded).\n",
     GFL_EXIT_USAGE, 0},
    {"exporter", gpufl_cmd_exporter, "exporter [--listen ADDR:PORT] [--interval MS] [--openmetrics] [--duration S]",
     "serve the GPUs' metrics to Prometheus, under dcgm-exporter's names",
     "  --listen ADDR:PORT  where to listen (default :9400, every address; 127.0.0.1:9400 this machine only)\n"
     "  --interval MS       time between NVML readings, 100 to 3600000 ms (default 1000)\n"
     "  --openmetrics       answer OpenMetrics 1.0 to every scrape (default: only when the\n"
     "                      scrape's Accept header asks for it; else the text format 0.0.4)\n"
     "  --duration S        stop after S seconds (default: until Ctrl-C or SIGTERM)\n"
     "GET /metrics: DCGM_FI_DEV_* per GPU (labels gpu, UUID, pci_bus_id, device, modelName,\n"
     "Hostname; FB in MiB, power in W, energy in mJ, clocks in MHz), a metric NVML does not\n"
     "report left out; gpufl_exporter_* counters of the exporter itself.\n"
     "Exit code: 0 stopped, 1 cannot listen (the address is named), 3 no NVIDIA driver, 64 bad usage.\n",
     GFL_EXIT_USAGE, 0},
    {"serve", gpufl_cmd_serve,
     "serve [--db CONNINFO] [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE]\n"
     "[--workers N] [--api-path PATH] [--migrate]\n"
     "| key add WORKSPACE | key list [WORKSPACE] [--json] | key revoke ID|PREFIX",
     "receive uploaded sessions (docs/UPLOAD.md) into PostgreSQL;\nmanage the API keys of workspaces",
     "  --db CONNINFO        the PostgreSQL database (libpq: \"host=... dbname=...\" or a postgresql://\n"
     "                       URI); default: GPUFL_SERVE_DB. Never printed: it may hold a password\n"
     "  --listen ADDR:PORT   where to listen (default :8080, every address)\n"
     "  --tls-cert FILE      serve HTTPS with this PEM certificate (chain) and --tls-key's key\n"
     "  --workers N          requests served at once, each with its database connection (default 8)\n"
     "  --api-path PATH      the API's prefix (default /api/v1)\n"
     "  --migrate            bring the database's schema up to date and exit (serve does it at start)\n"
     "key add WORKSPACE prints a new key once on stdout (only its SHA-256 is kept); key list shows\n"
     "ids and prefixes; key revoke refuses the key from then on. Uploads are stored under the\n"
     "key's workspace, each event once however often it is sent.\n"
     "Exit code: 0 stopped (SIGINT, SIGTERM) or done, 1 failed (database, address, TLS files;\n"
     "or built without libpq), 64 bad usage.\n",
     GFL_EXIT_USAGE, 0},
    {"fleet", gpufl_cmd_fleet,
     "fleet sessions|kernels|scopes|regress --workspace NAME [--db CONNINFO]\n"
     "[--host H] [--app A] [--job J] [--since T] [--until T] [--json]\n"
     "[--by day|hour] [--top N] (kernels, scopes)\n"
     "[--before RANGE --after RANGE] [--per-step SCOPE] [--threshold PCT] [--min-impact PCT] [--all]\n"
     "(regress)",
     "query the sessions gpufl serve stored: sessions, time per kernel\nor scope over time, regressions between two periods",
     "  sessions        the sessions selected, oldest first, with their events stored\n"
     "  kernels         GPU time per kernel name per day (--by hour: hour), the --top N names of\n"
     "                  each (default 10, 0 all)\n"
     "  scopes          the same for scopes (wall time)\n"
     "  regress         the sessions of --app started in --before against those in --after,\n"
     "                  kernel and scope time per session, judged as gpufl diff judges\n"
     "  --workspace NAME  the workspace (gpufl serve key add made it)\n"
     "  --db CONNINFO   as gpufl serve's (default: GPUFL_SERVE_DB)\n"
     "  --host, --app, --job   sessions of this host, app name, job id only\n"
     "  --since T, --until T   sessions started from T, before the end of T (UTC: 2026-11-27,\n"
     "                  2026-11-27T10:30)\n"
     "  --before, --after RANGE  2026-11-01..2026-11-07 (whole days, UTC) or one day\n"
     "  --per-step SCOPE  compare time per instance of SCOPE (a training step) in each session,\n"
     "                  not per session, so that runs of different lengths compare\n"
     "  --threshold PCT, --min-impact PCT, --all   as gpufl diff's (defaults 5 and 0.5)\n"
     "  --json          as JSON\n"
     "Exit code: 0 done (regress: no regression), 1 failed (database, no session in a period;\n"
     "or built without libpq), 2 regress found a regression, 64 bad usage.\n",
     GFL_EXIT_USAGE, 0},
    {"monitor", gpufl_cmd_monitor,
     "monitor [--duration S] [--interval MS] [--devices 0,1]\n"
     "[--format table|csv|json|ndjson] [--output FILE]\n"
     "[--warn-mem PCT] [--crit-mem PCT] [--warn-temp C] [--crit-temp C]",
     "live GPU and host view; alerts when a threshold is crossed",
     "  --duration S        stop after S seconds (default: until Ctrl-C)\n"
     "  --interval MS       time between readings, 10 to 3600000 ms\n"
     "  --devices 0,1       these GPUs only (NVML indices)\n"
     "  --format            table (default), csv, json or ndjson\n"
     "  --output FILE       write to FILE instead of stdout\n"
     "  --warn-mem, --crit-mem PCT    memory used, in % of the GPU's memory\n"
     "  --warn-temp, --crit-temp C    GPU temperature, in degrees Celsius\n"
     "Without an NVIDIA driver it shows host metrics only.\n"
     "Exit code: 0 no threshold crossed, 1 error, 2 a threshold was crossed, 64 bad usage.\n",
     GFL_EXIT_USAGE, 0},
    {"run", gpufl_cmd_run,
     "run [--engine NAME] [--log-path DIR] [--app-name NAME] [--stack-trace]\n"
     "[--no-torch-ops] [--] PROGRAM [ARGS...]",
     "record an unmodified CUDA program (default engine: trace);\nexits with PROGRAM's status",
     "Runs PROGRAM with gpufl injected at its first CUDA call (and in its CUDA child processes),\n"
     "then prints where each session went and its summary on stderr.\n"
     "  --engine NAME     monitor, trace (default), pc_sampling, sass_metrics, range_profiler, deep\n"
     "  --log-path DIR    directory for the session directories (default: ./gpufl-logs)\n"
     "  --app-name NAME   name of the sessions (default: PROGRAM's base name)\n"
     "  --stack-trace     record CPU call stacks at kernel launches and syncs\n"
     "  --no-torch-ops    Python programs: do not name kernels by their PyTorch op and module\n"
     "                    (gpufl.torch, attached when the program imports torch)\n"
     "Without a flag, GPUFL_PROFILING_ENGINE, GPUFL_LOG_PATH and GPUFL_APP_NAME apply when set.\n"
     "NCCL_PROFILER_PLUGIN is set to gpufl's libgpufl_nccl.so, so NCCL's collectives are recorded\n"
     "with their bytes (NCCL 2.24 and later); one already set is left alone, and said.\n"
     "Signals sent to gpufl run (HUP, INT, QUIT, TERM, USR1, USR2, WINCH) are passed on to\n"
     "PROGRAM, which stays in the terminal's process group; if gpufl run is killed, so is PROGRAM.\n"
     "Exit code: PROGRAM's own (128+N when signal N killed it); 126 PROGRAM could not be\n"
     "executed, 127 PROGRAM not found, 1 gpufl run itself failed, 64 bad usage.\n",
     GFL_EXIT_USAGE, 1},
    {"summary", gpufl_cmd_summary, "summary SESSION [--json]", "what a session recorded, from its session.json",
     "  SESSION   a session directory, or its session.json\n"
     "  --json    the summary as JSON\n",
     GFL_EXIT_USAGE, 0},
    {"stacks", gpufl_cmd_stacks, "stacks SESSION [--raw] [--symbolize-here]",
     "CPU stacks of launches and syncs, symbolized when recorded\non this machine",
     "  SESSION            a session directory, a .log or a .gflt file\n"
     "  --raw              module+offset only, as recorded\n"
     "  --symbolize-here   symbolize from this machine's module files even when the\n"
     "                     session was not recorded here\n",
     GFL_EXIT_USAGE, 0},
    {"report", gpufl_cmd_report,
     "report SESSION [--top N] [--format text|json|html] [-o FILE]\n[--symbolize-here]\n"
     "report JOB | SESSIONS... [--top N] [--format text|json|html] [-o FILE] [--mixed]",
     "every analysis: summary, scopes, hot kernels, occupancy,\ncopies, idle time, launches, memory",
     "  --top N            kernels listed in the hotspots (default 20)\n"
     "  --format           text (default), json (schema: docs/REPORT.md) or html (needs -o)\n"
     "  -o FILE            write the report to FILE instead of stdout\n"
     "  --symbolize-here   name stack frames from this machine's module files even when\n"
     "                     the session was not recorded here\n"
     "  JOB, SESSIONS...   a job directory (gpufl merge's, gpufl run's job-<id>) or several\n"
     "                     sessions: the job report (ranks side by side, alignment, NCCL,\n"
     "                     overlap, stragglers, imbalance); --top N lists N of each\n"
     "  --mixed            read sessions of different job ids together\n",
     GFL_EXIT_USAGE, 0},
    {"graph", gpufl_cmd_graph, "graph SESSION -f dot|json [--from T] [--to T] [-o FILE]",
     "the dependency graph: GPU work, launch calls, syncs, scope marks\nand what had to happen before what",
     "  -f dot|json   Graphviz dot (inferred edges dashed) or JSON (docs/REPORT.md, critical path)\n"
     "  --from, --to  only what meets this window; T: a time after the session's start:\n"
     "                1.5s, 250ms, 40us, or ns (12345)\n"
     "  -o FILE       write to FILE instead of stdout\n"
     "Edges the recorder does not capture (event waits, CUDA graphs' insides) are inferred\n"
     "from timing and marked inferred.\n",
     GFL_EXIT_USAGE, 0},
    {"whatif", gpufl_cmd_whatif,
     "whatif SESSION [--scope NAME] [--kernel NAME|~REGEX --speedup X]\n[--remove-sync ID]... [--overlap-copies] "
     "[--host-gap-scale F]\n[--from T --to T] [--format text|json] [-o FILE]",
     "the session re-scheduled with a change: the step time, GPU busy\nand idle time predicted, the critical path",
     "  --scope NAME        the step: a scope or NVTX range name (default: the most repeated\n"
     "                      outermost one, preferring a name with \"step\")\n"
     "  --kernel, --speedup kernels named NAME (or matching the extended regex after ~)\n"
     "                      run X times faster (X > 0)\n"
     "  --remove-sync ID    the host no longer waits in sync ID (gpufl graph's sync_id)\n"
     "  --overlap-copies    host-device copies on a stream of their own per direction, still\n"
     "                      before the work that reads them / after the work that wrote them\n"
     "  --host-gap-scale F  the host's own time between its calls times F (F >= 0)\n"
     "  --from T --to T     instead of a step, this window: T a time after the session's start,\n"
     "                      1.5s, 250ms, 40us, or ns\n"
     "  --format            text (default) or json\n"
     "  -o FILE             write to FILE instead of stdout\n"
     "Without a change: the session replayed as recorded (how well the model fits it).\n",
     GFL_EXIT_USAGE, 0},
    {"info", gpufl_cmd_info, "info SESSION [--json]", "what a session holds, read from its logs or trace.gflt",
     "  SESSION   a session directory, one .log or one .gflt file\n"
     "  --json    as JSON\n",
     GFL_EXIT_USAGE, 0},
    {"view", gpufl_cmd_view, "view SESSION [--from T] [--to T] [--width N]",
     "timeline: utilization, streams, scopes and NVTX by thread",
     "  T: a time after the session's start: 1.5s, 250ms, 40us, or ns (12345)\n"
     "  N: columns, 20 to 4096 (default: the terminal's width, or 100)\n",
     GFL_EXIT_USAGE, 0},
    {"diff", gpufl_cmd_diff,
     "diff BASELINE CANDIDATE [--threshold PCT] [--min-impact PCT]\n[--format text|json] [--all]",
     "what changed per kernel, scope and GPU, judged against the\nnoise; exits 1 on a regression (for CI)",
     "  BASELINE, CANDIDATE  session directories, .log or .gflt files\n"
     "  --threshold PCT      a change smaller than PCT % is no change (default 5)\n"
     "  --min-impact PCT     changes smaller than PCT % of the baseline's kernel time\n"
     "                       (scopes, idle: wall time) are not judged (default 0.5)\n"
     "  --format             text (default) or json\n"
     "  --all                also list kernels and scopes that did not change\n"
     "Exit code, like diff(1): 0 no regression, 1 a regression past the threshold,\n"
     "2 bad usage or a session that could not be read.\n",
     DIFF_USAGE_EXIT, 0},
    {"replay-check", gpufl_cmd_replay_check,
     "replay-check A B [--from-time T] [--to-time T] [--from-op N] [--to-op N]\n"
     "[--scope NAME[#N]] [--ignore-names REGEX] [--ignore-launch-config]\n"
     "[--ignore-allocs] [--stream-map A:B]... [--divergences N] [--json]\n[--only-differences]",
     "whether two runs did the same GPU work (kernels, launch\nconfigurations, copies, allocations); exits 1 when not (for CI)",
     "  A, B                    sessions (directory, .log or .gflt), or two job directories:\n"
     "                          then rank by rank\n"
     "Per stream: kernels (name, grid, block, registers, shared memory, graph node or not),\n"
     "copies (direction, memory kinds, bytes) and memsets in the order they ran; streams are\n"
     "paired per device by order of first use (ids differ between runs). Per device: driver\n"
     "allocations and frees, framework blocks and allocator records (sizes and order). Times\n"
     "are never compared. The first divergence of each lane is shown like a diff.\n"
     "  --from-time, --to-time T  only ops starting between these times after each session's\n"
     "                          start (1.5s, 200ms, 40us, or ns); each run is cut at its own times\n"
     "  --from-op, --to-op N    only ops of index N up to (not including) M in each lane\n"
     "  --scope NAME[#N]        only work launched inside gpufl scope NAME (its N-th occurrence,\n"
     "                          from 1; default every one), nested scopes included\n"
     "  --ignore-names REGEX    leave out kernels whose name matches (POSIX extended)\n"
     "  --ignore-launch-config  compare kernels by name only\n"
     "  --ignore-allocs         do not compare allocations\n"
     "  --stream-map A:B        pair A's stream A with B's stream B (CUPTI ids); repeatable\n"
     "  --window N              ops searched on each side to re-synchronise after a\n"
     "                          divergence (default 64, at most 4096)\n"
     "  --context N             equal ops shown around a divergence (default 3)\n"
     "  --divergences N         divergences listed per lane, the first included (default 10)\n"
     "  --json                  as JSON (schema: docs/REPORT.md); --format text|json too\n"
     "  --only-differences      list only the lanes that differ\n"
     "Exit code, like diff(1): 0 the same, 1 different, 2 bad usage or a session that could\n"
     "not be read.\n",
     DIFF_USAGE_EXIT, 0},
    {"export", gpufl_cmd_export, "export SESSION|JOB -f perfetto|chrome|csv [-o OUT]",
     "for other tools: a .perfetto-trace (ui.perfetto.dev), Chrome\ntrace JSON, or a directory of CSV "
     "files, one per table",
     "  perfetto  OUT is a .perfetto-trace file (ui.perfetto.dev, trace_processor)\n"
     "  chrome    OUT is a Trace Event Format .json file (chrome://tracing)\n"
     "  csv       OUT is a directory, made when missing, of one .csv file per table\n"
     "  JOB       a job directory (gpufl merge's, or gpufl run's job-<id>): one trace, a process\n"
     "            per rank, aligned (perfetto or chrome)\n"
     "  without -o: the session's name in the current directory\n"
     "  (<name>.perfetto-trace, <name>.json, <name>-csv)\n",
     GFL_EXIT_USAGE, 0},
    {"merge", gpufl_cmd_merge, "merge SESSIONS... -o JOB [--mixed] [--no-trace]",
     "the sessions of one distributed job (ranks) as one job directory:\naligned, with its report and one trace",
     "  SESSIONS  sessions of the job's ranks, or directories of them (gpufl run's job-<id>)\n"
     "  -o JOB    the directory to create: rank-<R>/ (each rank's session, hard-linked or\n"
     "            copied), job.json and job.html (the job report), job.perfetto-trace (a process\n"
     "            per rank on one time line)\n"
     "  --mixed   read sessions of different job ids together\n"
     "  --no-trace  skip job.perfetto-trace\n"
     "  then: gpufl report JOB (ranks side by side, NCCL, overlap, stragglers, imbalance)\n",
     GFL_EXIT_USAGE, 0},
    {"upload", gpufl_cmd_upload,
     "upload [--backend-url URL] [--api-key-file F] [--api-path P] [--ca-file F]\n"
     "[--session-id ID | --all-sessions] [--force] PATH...",
     "send sessions to a gpufl server (docs/UPLOAD.md), resumably",
     "  PATH                a session directory, a job directory, or a log_path holding sessions\n"
     "                      (of which the newest run is sent, unless --session-id or --all-sessions)\n"
     "  --backend-url URL   http(s)://host[:port] (default: GPUFL_BACKEND_URL)\n"
     "  --api-key-file F    read the API key from F's first line (default: GPUFL_API_KEY);\n"
     "                      never on the command line, where every user's ps shows it\n"
     "  --api-path P        the API's path on the server (default: GPUFL_API_PATH, else /api/v1)\n"
     "  --ca-file F         verify the server with the CA certificates in F (PEM)\n"
     "  --session-id ID     only the session of this id\n"
     "  --all-sessions      every session under each PATH\n"
     "  --force             send every event again, ignoring what the cursors say was sent\n"
     "Each session's .gpufl-upload-cursor.json remembers what the server acknowledged, so an\n"
     "interrupted upload started again sends each event once. Prints one line on stdout:\n"
     "sessions, events uploaded, duplicates, bytes, seconds; warnings and errors on stderr.\n"
     "Exit code: 0 every session sent, 1 a failure (named on stderr), 2 bad usage.\n",
     GFL_UPLOAD_USAGE_EXIT, 0},
    {"convert", gpufl_cmd_convert, "convert IN OUT [--level 0-19] [--force]",
     "between NDJSON and .gflt: OUT is a .gflt file, or a directory\nto create with the .log files",
     "  IN        a session directory, an NDJSON .log or a .gflt file\n"
     "  OUT       a name ending in .gflt, or a directory to create with the .log files and\n"
     "            a session.json (IN's own, or rebuilt from the events)\n"
     "  --level   zstd level of a .gflt, 0 (no compression) to 19\n"
     "  --force   replace an existing OUT .gflt file\n",
     GFL_EXIT_USAGE, 0},
    {"dump", gpufl_cmd_dump, "dump PID [--wait SECONDS]",
     "a running program writes out its flight window (flight_window_s);\nprints the dump's directory",
     "  PID        a process recording with a flight window, as this user\n"
     "  --wait S   how long to wait for the dump to appear (default 30; 0: do not wait)\n"
     "Nothing is sent to a process that keeps no flight window.\n",
     GFL_EXIT_USAGE, 0},
    {"mem", gpufl_cmd_mem, "mem info|monitor|track|analyze|diagnose [OPTIONS]",
     "GPU memory: the devices, live use, a tracked program,\nleaks in a session, an out-of-memory dump",
     "  info       the GPUs, their memory and what uses it\n"
     "  monitor    sample GPU memory for a while; CSV or JSON; thresholds\n"
     "  track      run a program under the recorder and report its memory (or watch the GPUs)\n"
     "  analyze    the memory of a recorded session: layers, peaks, leaks\n"
     "  diagnose   why a dump's program ran out of memory (its oom.json)\n"
     "'gpufl mem SUBCOMMAND --help' has each one's options.\n"
     "Exit code: 0 fine, 1 a leak was found or a threshold crossed, 2 an error or bad usage.\n",
     2, 1},
    {"options", gpufl_cmd_options, "options [--markdown]", "every option, its default and variable",
     "  --markdown   as the Markdown table of README.md\n", GFL_EXIT_USAGE, 0},
    {"version", run_version, "version", "the version", "", GFL_EXIT_USAGE, 0},
    {"help", run_help, "help [COMMAND]", "this text, or COMMAND's help", "", GFL_EXIT_USAGE, 0},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

const gpufl__cli_command *gpufl__cli_find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* text with each line after the first indented to column `indent` */
static void print_indented(FILE *out, const char *text, int indent)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(out, "%.*s", (int)n, p);
        if (!nl)
            break;
        fprintf(out, "\n%*s", indent, "");
        p = nl + 1;
    }
}

/* "usage: gpufl NAME ARGS", continuation lines under the first argument */
static void print_usage(FILE *out, const gpufl__cli_command *c)
{
    fprintf(out, "usage: gpufl ");
    print_indented(out, c->synopsis, (int)strlen("usage: gpufl ") + (int)strlen(c->name) + 1);
    fputc('\n', out);
}

int gpufl__cli_help(const char *name)
{
    const gpufl__cli_command *c = gpufl__cli_find(name);
    if (!c)
        return GFL_EXIT_FAIL; /* a name missing from the table: a bug, said by the caller's test */
    print_usage(stdout, c);
    /* the list's description as a sentence: one line, capitalised */
    for (const char *p = c->about; *p; p++)
        putchar(p == c->about ? toupper((unsigned char)*p) : *p == '\n' ? ' ' : *p);
    fputs(".\n", stdout);
    fputs(c->details, stdout);
    return GFL_EXIT_OK;
}

int gpufl__cli_usage_error(const char *name, const char *fmt, ...)
{
    const gpufl__cli_command *c = gpufl__cli_find(name);
    fflush(stdout);
    fprintf(stderr, "gpufl %s: ", name);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (!c)
        return GFL_EXIT_USAGE;
    print_usage(stderr, c);
    fprintf(stderr, "'gpufl help %s' says more.\n", name);
    return c->usage_exit;
}

void gpufl__cli_list(FILE *out)
{
    fprintf(out, "gpufl %s: a flight recorder for GPU workloads\n\nusage: gpufl COMMAND [ARGS]\n\n", gpufl_version());
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const gpufl__cli_command *c = &commands[i];
        int at = fprintf(out, "  gpufl ");
        print_indented(out, c->synopsis, at + (int)strlen(c->name) + 1);
        /* the description beside a short synopsis, under a long one */
        const char *last = strrchr(c->synopsis, '\n');
        int width = last ? at + (int)strlen(c->name) + 1 + (int)strlen(last + 1) : at + (int)strlen(c->synopsis);
        if (last || width >= ABOUT_COLUMN)
            fprintf(out, "\n%*s", ABOUT_COLUMN, "");
        else
            fprintf(out, "%*s", ABOUT_COLUMN - width, "");
        print_indented(out, c->about, ABOUT_COLUMN);
        fputc('\n', out);
    }
    fprintf(out, "\n`gpufl COMMAND --help` (or -h, or `gpufl help COMMAND`) describes each.\n"
                 "SESSION is a session directory (<log_path>/<session id>); summary also takes\n"
                 "its session.json, info one .log or .gflt file.\n\n"
                 "Exit codes:\n"
                 "  0   success (monitor: no threshold was crossed)\n"
                 "  1   the command failed: unreadable input, unwritable output, NVML error\n"
                 "  2   monitor: a --warn-* or --crit-* threshold was crossed\n"
                 "  3   devices: no NVIDIA driver (libnvidia-ml could not be loaded)\n"
                 "  64  bad usage (a usage error is said on stderr; --help goes to stdout)\n"
                 "  run exits with PROGRAM's own status (128+N if signal N killed it), 126 if\n"
                 "      PROGRAM could not be executed, 127 if it was not found\n"
                 "  diff exits like diff(1): 0 no regression, 1 a regression past the\n"
                 "      threshold, 2 bad usage or a session that could not be read\n"
                 "  replay-check exits like diff(1): 0 the same GPU work, 1 different,\n"
                 "      2 bad usage or a session that could not be read\n"
                 "Without an NVIDIA driver, devices says so and monitor shows host metrics only.\n");
}

/* ---- the two commands of gpufl itself -------------------------------------- */

static int run_version(int argc, char **argv)
{
    if (argc > 1)
        return gpufl__cli_usage_error("version", "takes no arguments ('%s')", argv[1]);
    printf("gpufl %s\n", gpufl_version());
    return GFL_EXIT_OK;
}

static int run_help(int argc, char **argv)
{
    if (argc > 2)
        return gpufl__cli_usage_error("help", "one COMMAND at most ('%s' is a second)", argv[2]);
    if (argc == 2 && argv[1][0] == '-')
        return gpufl__cli_usage_error("help", "unknown option '%s'", argv[1]);
    if (argc == 1) {
        gpufl__cli_list(stdout);
        return GFL_EXIT_OK;
    }
    if (!gpufl__cli_find(argv[1])) {
        fprintf(stderr, "gpufl help: unknown command '%s'; run 'gpufl help' for the list\n", argv[1]);
        return GFL_EXIT_USAGE;
    }
    return gpufl__cli_help(argv[1]);
}
