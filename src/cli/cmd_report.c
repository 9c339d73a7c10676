/*
 * `gpufl report SESSION [--top N] [--format text|json|html] [-o FILE]`:
 * every analysis of a recorded session (src/analyze/analysis.h), rendered
 * as text (the default, to stdout), as JSON (schema: docs/REPORT.md) or as
 * one self-contained HTML page (to FILE, which html needs).
 *
 * The text shows the frames of the hot kernels' CPU stacks when the session
 * recorded them (read/stack_table.h, NDJSON or .gflt alike), symbolized
 * when this build has libdw, the modules are on this machine
 * (read/symbolize.h) and the session was recorded here
 * (read/session_origin.h) or --symbolize-here says to use this machine's
 * files anyway; otherwise as module+offset, with a one-line note under the
 * hotspots saying why.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "cli/cli.h"
#include "cli/job_output.h"
#include "gpufl/trace.h"
#include "present/report/report_html.h"
#include "present/report/report_json.h"
#include "present/report/report_text.h"
#include "read/job_find.h"
#include "read/session_origin.h"
#include "read/stack_table.h"
#include "read/symbolize.h"

#define MAX_TOP 10000

enum report_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_HTML };

static void name_frame(void *ctx, const char *module, uint64_t offset, char *buf, size_t len)
{
    gpufl__symbolize_frame(ctx, module, offset, true, buf, len);
}

/* The stacks of the session at path, when it recorded them; a session
 * without them gets NULL, silently: the report then lists stack ids. */
static gpufl__stack_table *load_stacks(const char *path)
{
    gpufl__stack_table *t = calloc(1, sizeof *t);
    char err[512];
    if (!t || gpufl__stack_table_load(path, t, err, sizeof err) != 0 || !t->n) {
        if (t)
            gpufl__stack_table_free(t);
        free(t);
        return NULL;
    }
    return t;
}

static int render_text(const gpufl_trace *t, const gpufl__ana_report *r, const char *path, bool here, FILE *out)
{
    gpufl__report_text_opts o = {0};
    gpufl__symbolizer *sym = NULL;
    /* stacks name the hot kernels' callers, and the framework blocks' and
     * leaking allocations' */
    bool any = r->hotspots.launches || r->memory.recorded;
    gpufl__stack_table *stacks = any && !r->hotspots.stack_frames ? load_stacks(path) : NULL;
    char why[1024], note[1400];
    if (stacks) {
        o.stacks = stacks;
        if (gpufl__symbolizer_available() && !here &&
            gpufl__session_origin_of(path, why, sizeof why) != GFL_ORIGIN_HERE) {
            snprintf(note, sizeof note,
                     "%s: frames are module+offset, since this machine's copies of the "
                     "modules may differ; --symbolize-here uses them anyway",
                     why);
            o.frames_note = note;
        } else if (gpufl__symbolizer_available() && (sym = gpufl__symbolizer_new()) != NULL) {
            o.name_frame = name_frame;
            o.frame_ctx = sym;
        }
    }
    int rc = gpufl__report_text(t, r, &o, out);
    gpufl__symbolizer_free(sym);
    if (stacks)
        gpufl__stack_table_free(stacks);
    free(stacks);
    return rc;
}

static int parse_top(const char *text, uint32_t *top)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end || errno || v < 1 || v > MAX_TOP)
        return -1;
    *top = (uint32_t)v;
    return 0;
}

static int write_report(const gpufl_trace *t, const gpufl__ana_report *r, const char *session,
                        enum report_format format, const char *file, bool here)
{
    if (format == FORMAT_HTML) {
        char err[1024];
        if (gpufl__report_html(t, r, file, err, sizeof err) != 0) {
            fprintf(stderr, "gpufl report: %s\n", err);
            return GFL_EXIT_FAIL;
        }
        return GFL_EXIT_OK;
    }
    FILE *out = stdout;
    if (file && !(out = fopen(file, "we"))) {
        fprintf(stderr, "gpufl report: cannot write '%s': %s\n", file, strerror(errno));
        return GFL_EXIT_FAIL;
    }
    int rc = format == FORMAT_JSON ? gpufl__report_json(t, r, out) : render_text(t, r, session, here, out);
    if (file && fclose(out) != 0 && rc == 0)
        rc = GPUFL_EIO;
    if (rc != 0) {
        fprintf(stderr, "gpufl report: %s '%s'%s\n", rc == GPUFL_ENOMEM ? "out of memory writing" : "writing",
                file ? file : "(stdout)", rc == GPUFL_ENOMEM ? "" : " failed");
        return GFL_EXIT_FAIL;
    }
    return GFL_EXIT_OK;
}

int gpufl_cmd_report(int argc, char **argv)
{
    enum { O_TOP = 1, O_FORMAT, O_SYMBOLIZE_HERE, O_MIXED };
    static const struct option opts[] = {{"top", required_argument, 0, O_TOP},
                                         {"format", required_argument, 0, O_FORMAT},
                                         {"output", required_argument, 0, 'o'},
                                         {"symbolize-here", no_argument, 0, O_SYMBOLIZE_HERE},
                                         {"mixed", no_argument, 0, O_MIXED},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    gpufl__ana_options ao;
    gpufl__ana_options_default(&ao);
    enum report_format format = FORMAT_TEXT;
    const char *file = NULL;
    bool here = false, mixed = false, top_given = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case O_TOP:
            if (parse_top(optarg, &ao.top_kernels) != 0)
                return gpufl__cli_usage_error("report", "bad --top '%s': expected 1 to %d kernels", optarg, MAX_TOP);
            top_given = true;
            break;
        case O_FORMAT:
            if (!strcmp(optarg, "text"))
                format = FORMAT_TEXT;
            else if (!strcmp(optarg, "json"))
                format = FORMAT_JSON;
            else if (!strcmp(optarg, "html"))
                format = FORMAT_HTML;
            else
                return gpufl__cli_usage_error("report", "bad --format '%s': expected text, json or html", optarg);
            break;
        case 'o': file = optarg; break;
        case O_SYMBOLIZE_HERE: here = true; break;
        case O_MIXED: mixed = true; break;
        case 'h': return gpufl__cli_help("report");
        default:
            return gpufl__cli_usage_error("report", "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    if (optind >= argc)
        return gpufl__cli_usage_error("report", "which SESSION?");
    if (optind < argc - 1 || gpufl__job_is_dir(argv[optind])) {
        if (format == FORMAT_HTML && !file)
            return gpufl__cli_usage_error("report", "--format html writes a file: name it with -o FILE");
        return gpufl__job_report_cmd("report", (const char *const *)argv + optind, (size_t)(argc - optind),
                                     format == FORMAT_JSON   ? GFL_JOB_JSON
                                     : format == FORMAT_HTML ? GFL_JOB_HTML
                                                             : GFL_JOB_TEXT,
                                     top_given ? ao.top_kernels : 10, file, mixed);
    }
    if (format == FORMAT_HTML && !file)
        return gpufl__cli_usage_error("report", "--format html writes a file: name it with -o FILE");
    const char *path = argv[optind];

    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl report: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    gpufl__cli_note_trace("report", t);
    gpufl__ana_report r;
    if (gpufl__analyze_report(t, &ao, &r) != 0) {
        fprintf(stderr, "gpufl report: %s: out of memory analyzing the session\n", path);
        gpufl_trace_close(t);
        return GFL_EXIT_FAIL;
    }
    int rc = write_report(t, &r, path, format, file, here);
    gpufl__ana_report_free(&r);
    gpufl_trace_close(t);
    return rc;
}
