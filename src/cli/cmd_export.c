/*
 * `gpufl export SESSION -f perfetto|chrome|csv [-o OUT]`: a recorded
 * session for other tools (src/present/export/export.h does the work):
 *
 *   perfetto  OUT.perfetto-trace for ui.perfetto.dev and trace_processor
 *   chrome    OUT.json (Trace Event Format) for chrome://tracing
 *   csv       a directory OUT with one .csv file per table
 *
 * Without -o, OUT is named after the session (its directory's or file's
 * name) in the current directory: run1.perfetto-trace, run1.json,
 * run1-csv/. An existing file of that name is replaced, only once the new
 * one is complete. One line on stdout says what was written.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/job_output.h"
#include "core/clock.h"
#include "gpufl/trace.h"
#include "present/export/export.h"
#include "read/job_find.h"

typedef enum { F_NONE, F_PERFETTO, F_CHROME, F_CSV } export_format;

static double now_s(void) { return (double)gpufl__mono_ns() / 1e9; }

/* The session's name: the last path component of path, less a .gflt or
 * .log extension ("runs/train-1/" gives "train-1"). */
static void session_name(const char *path, char *out, size_t len)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/')
        b--;
    size_t m = n - b;
    if (m > 5 && !strncmp(path + n - 5, ".gflt", 5))
        m -= 5;
    else if (m > 4 && !strncmp(path + n - 4, ".log", 4))
        m -= 4;
    if (m == 0 || (m == 1 && path[b] == '.') || (m == 2 && !strncmp(path + b, "..", 2)))
        snprintf(out, len, "session");
    else
        snprintf(out, len, "%.*s", (int)m, path + b);
}

/* A job directory: its ranks aligned, one trace with a process per rank. */
static int export_job(const char *path, export_format format, const char *out)
{
    if (format == F_CSV) {
        fprintf(stderr, "gpufl export: %s is a job: export it as perfetto or chrome, or each rank's session as csv\n",
                path);
        return GFL_EXIT_FAIL;
    }
    gpufl__job job;
    if (gpufl__job_load_cmd("export", &path, 1, true, &job) != 0)
        return GFL_EXIT_FAIL;
    gpufl__job_report r;
    int rc = GFL_EXIT_FAIL;
    if (gpufl__job_report_build(job.ranks, job.n, &r) != 0)
        fprintf(stderr, "gpufl export: out of memory aligning the job\n");
    else
        rc = gpufl__job_export_trace("export", &r, format == F_CHROME ? GFL_JOB_CHROME : GFL_JOB_PERFETTO, out);
    gpufl__job_report_free(&r);
    gpufl__job_free(&job);
    return rc;
}

int gpufl_cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {{"format", required_argument, 0, 'f'},
                                         {"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    export_format format = F_NONE;
    const char *out = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (!strcmp(optarg, "perfetto")) {
                format = F_PERFETTO;
            } else if (!strcmp(optarg, "chrome")) {
                format = F_CHROME;
            } else if (!strcmp(optarg, "csv")) {
                format = F_CSV;
            } else {
                return gpufl__cli_usage_error("export", "unknown format '%s': expected perfetto, chrome or csv",
                                              optarg);
            }
            break;
        case 'o': out = optarg; break;
        case 'h': return gpufl__cli_help("export");
        default:
            return gpufl__cli_usage_error("export", "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    if (optind >= argc)
        return gpufl__cli_usage_error("export", "which SESSION?");
    if (optind < argc - 1)
        return gpufl__cli_usage_error("export", "one SESSION only ('%s' is a second)", argv[optind + 1]);
    if (format == F_NONE)
        return gpufl__cli_usage_error("export", "which format? -f perfetto, -f chrome or -f csv");
    if (out && !*out)
        return gpufl__cli_usage_error("export", "-o needs a file or directory name");
    const char *path = argv[optind];

    char default_out[512];
    if (!out) {
        char name[256];
        session_name(path, name, sizeof name);
        static const char *const suffix[] = {"", ".perfetto-trace", ".json", "-csv"};
        snprintf(default_out, sizeof default_out, "%s%s", name, suffix[format]);
        out = default_out;
    }

    if (gpufl__job_is_dir(path))
        return export_job(path, format, out);

    double t0 = now_s();
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl export: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    gpufl__cli_note_trace("export", t);
    double t1 = now_s();
    gpufl__export_result r;
    int rc;
    if (format == F_PERFETTO)
        rc = gpufl__export_perfetto(t, out, &r, err, sizeof err);
    else if (format == F_CHROME)
        rc = gpufl__export_chrome(t, out, &r, err, sizeof err);
    else
        rc = gpufl__export_csv(t, out, &r, err, sizeof err);
    gpufl_trace_close(t);
    if (rc != 0) {
        fprintf(stderr, "gpufl export: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    double t2 = now_s();
    if (format == F_CSV) {
        printf("wrote %s: %llu files, %llu rows, %llu bytes (read %.2f s, export %.2f s)\n", out,
               (unsigned long long)r.files, (unsigned long long)r.rows, (unsigned long long)r.bytes, t1 - t0, t2 - t1);
    } else {
        const gpufl__tl_stats *s = &r.timeline;
        printf("wrote %s: %llu tracks, %llu slices, %llu flows, %llu counter values, %llu bytes "
               "(read %.2f s, export %.2f s)\n",
               out, (unsigned long long)s->tracks, (unsigned long long)(s->slices + s->instants),
               (unsigned long long)s->flows, (unsigned long long)s->counters, (unsigned long long)r.bytes, t1 - t0,
               t2 - t1);
        if (s->overlapped)
            printf("note: %llu slices overlapped others on their track without nesting; they are on "
                   "extra lanes (\"#2\", ...)\n",
                   (unsigned long long)s->overlapped);
    }
    return GFL_EXIT_OK;
}
