/*
 * `gpufl mem analyze SESSION`: the memory of a recorded session, as the
 * report's memory section gives it (src/analyze/analysis.h: the layers and
 * their gaps, the peaks, the leak verdicts, the allocations replayed), as
 * text or JSON, with SVG plots on request. Exits 1 when a leak is found, so
 * CI can gate on it; 2 for bad usage or an unreadable session.
 *
 * gpufl__mem_analyze_trace (mem.h) is the same analysis with the default
 * options, for `gpufl mem track` to print after the program it ran.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analysis.h"
#include "cli/cli.h"
#include "cli/mem.h"
#include "cli/mem_plots.h"
#include "gpufl/trace.h"
#include "present/report/jwriter.h"
#include "present/report/report_json_parts.h"
#include "present/report/report_text.h"
#include "read/session_origin.h"
#include "read/stack_table.h"
#include "read/symbolize.h"

#define JSON_SCHEMA "gpufl-mem-analyze"
#define JSON_VERSION 1
#define MAX_MIN_STEPS 1000000

typedef struct analyze_opts {
    bool json;
    gpufl__ana_leak_options leak;
    const char *plot_dir; /* NULL: no plots */
} analyze_opts;

/* The memory analyses of t into the parts of r the memory section reads. */
static int analyze_memory(const gpufl_trace *t, const gpufl__ana_leak_options *lo, gpufl__ana_report *r)
{
    memset(r, 0, sizeof *r);
    gpufl__ana_options_default(&r->options);
    int rc = gpufl__analyze_summary(t, &r->summary);
    if (rc == 0)
        rc = gpufl__analyze_memory(t, &r->options, &r->memory);
    if (rc == 0)
        rc = gpufl__analyze_memory_views(t, lo, r);
    if (rc != 0)
        gpufl__ana_report_free(r);
    return rc;
}

static gpufl__stack_table *load_stacks(const char *path)
{
    gpufl__stack_table *s = calloc(1, sizeof *s);
    char err[512];
    if (!s || gpufl__stack_table_load(path, s, err, sizeof err) != 0 || !s->n) {
        if (s)
            gpufl__stack_table_free(s);
        free(s);
        return NULL;
    }
    return s;
}

static void name_frame(void *ctx, const char *module, uint64_t offset, char *buf, size_t len)
{
    gpufl__symbolize_frame(ctx, module, offset, true, buf, len);
}

static const char *leak_word(uint32_t n) { return n == 1 ? "leak" : "leaks"; }

static void verdict(FILE *out, const gpufl_trace *t, const gpufl__ana_leaks *l)
{
    if (!l->detected) {
        fprintf(out, "\nverdict: no leak found (%u repeated scope%s or range%s judged)\n", l->n, l->n == 1 ? "" : "s",
                l->n == 1 ? "" : "s");
        return;
    }
    uint32_t riders = 0;
    for (uint32_t i = 0; i < l->n; i++)
        riders += gpufl__ana_leak_rides_on(l, i) >= 0;
    uint32_t own = l->detected - riders;
    fprintf(out, "\nverdict: %u %s found:", own, leak_word(own));
    for (uint32_t i = 0, shown = 0; i < l->n && shown < 5; i++)
        if (l->rows[i].detected && gpufl__ana_leak_rides_on(l, i) < 0) {
            fprintf(out, "%s %s (%s)", shown++ ? "," : "", gpufl_trace_string(t, l->rows[i].name),
                    gpufl__ana_severity_name(l->rows[i].severity));
        }
    if (riders)
        fprintf(out, "; %u NVTX range%s inside %s rise with %s", riders, riders == 1 ? "" : "s",
                own == 1 ? "it" : "them", own == 1 ? "it" : "them");
    fputc('\n', out);
}

static int write_text(const gpufl_trace *t, const gpufl__ana_report *r, const char *path,
                      const gpufl__stack_table *stacks, FILE *out)
{
    const gpufl_trace_info *in = gpufl_trace_get_info(t);
    const char *id = gpufl_trace_string(t, in->session_id);
    fprintf(out, "gpufl mem analyze: %s\n  session   %s\n", id && *id ? id : "(no id)", path);
    if (r->leaks.min_steps != GPUFL__ANA_LEAK_MIN_STEPS)
        fprintf(out, "  steps     names repeated at least %u times\n", r->leaks.min_steps);
    gpufl__report_text_opts o = {.stacks = stacks};
    gpufl__symbolizer *sym = NULL;
    char why[1024];
    if (stacks && gpufl__symbolizer_available() && gpufl__session_origin_of(path, why, sizeof why) == GFL_ORIGIN_HERE &&
        (sym = gpufl__symbolizer_new()) != NULL) {
        o.name_frame = name_frame;
        o.frame_ctx = sym;
    }
    int rc = gpufl__report_text_memory(t, r, &o, out);
    gpufl__symbolizer_free(sym);
    if (rc == 0) {
        verdict(out, t, &r->leaks);
        if (fflush(out) != 0 || ferror(out))
            rc = GPUFL_EIO;
    }
    return rc;
}

static int write_json(const gpufl_trace *t, const gpufl__ana_report *r, const char *path,
                      const gpufl__stack_table *stacks, FILE *out)
{
    const gpufl_trace_info *in = gpufl_trace_get_info(t);
    jw w;
    gpufl__jw_init(&w);
    gpufl__jw_obj(&w, NULL);
    gpufl__jw_str(&w, "schema", JSON_SCHEMA);
    gpufl__jw_u64(&w, "schema_version", JSON_VERSION);
    gpufl__jw_obj(&w, "session");
    gpufl__jw_str(&w, "path", path);
    gpufl__jw_str(&w, "session_id", in->session_id ? gpufl_trace_string(t, in->session_id) : NULL);
    gpufl__jw_str(&w, "app_name", in->app_name ? gpufl_trace_string(t, in->app_name) : NULL);
    gpufl__jw_u64(&w, "start_ns", r->summary.start_ns);
    gpufl__jw_u64(&w, "end_ns", r->summary.end_ns);
    gpufl__jw_obj_end(&w);
    gpufl__jw_bool(&w, "leak_found", r->leaks.detected > 0);
    gpufl__rj_memory_layers(&w, t, &r->mem_layers);
    gpufl__rj_memory_peaks(&w, t, &r->mem_peaks);
    gpufl__rj_leaks(&w, t, &r->leaks, stacks);
    gpufl__rj_memory(&w, t, &r->memory);
    gpufl__jw_obj_end(&w);
    return gpufl__jw_write(&w, out);
}

/* Whether name was judged (it was repeated often enough). */
static bool scope_found(const gpufl__ana_leaks *l) { return l->n > 0; }

/* The analysis of the open trace t of the session at path. */
static int analyze_trace(const gpufl_trace *t, const char *path, const analyze_opts *o, FILE *out, int *leak_found,
                         char *err, size_t err_len)
{
    *leak_found = 0;
    gpufl__ana_report r;
    int rc = analyze_memory(t, &o->leak, &r);
    if (rc != 0) {
        snprintf(err, err_len, "%s: out of memory analyzing the session", path);
        return rc;
    }
    if (o->leak.scope && !scope_found(&r.leaks)) {
        snprintf(err, err_len,
                 "%s: no scope or NVTX range named '%s' was repeated at least %u times with memory recorded", path,
                 o->leak.scope, r.leaks.min_steps);
        rc = GPUFL_ENOTFOUND;
    }
    gpufl__stack_table *stacks = rc == 0 ? load_stacks(path) : NULL;
    if (rc == 0 && o->plot_dir) {
        unsigned n = 0;
        rc = gpufl__mem_plots_write(o->plot_dir, t, &r.mem_layers, &r.leaks, &n, err, err_len);
    }
    if (rc == 0) {
        rc = o->json ? write_json(t, &r, path, stacks, out) : write_text(t, &r, path, stacks, out);
        if (rc != 0)
            snprintf(err, err_len, "%s the analysis failed", rc == GPUFL_ENOMEM ? "out of memory: writing" : "writing");
    }
    if (rc == 0)
        *leak_found = r.leaks.detected > 0;
    if (stacks)
        gpufl__stack_table_free(stacks);
    free(stacks);
    gpufl__ana_report_free(&r);
    return rc;
}

static int analyze(const char *path, const analyze_opts *o, FILE *out, int *leak_found, char *err, size_t err_len)
{
    *leak_found = 0;
    gpufl_trace *t;
    int rc = gpufl_trace_open(path, &t, err, err_len);
    if (rc != 0)
        return rc;
    rc = analyze_trace(t, path, o, out, leak_found, err, err_len);
    gpufl_trace_close(t);
    return rc;
}

int gpufl__mem_analyze_trace(const gpufl_trace *t, const char *path, int json, FILE *out, int *leak_found, char *err,
                             size_t err_len)
{
    if (!t || !path || !out || !leak_found) {
        snprintf(err, err_len, "no session, output or result");
        return GPUFL_EINVAL;
    }
    analyze_opts o = {.json = json != 0};
    return analyze_trace(t, path, &o, out, leak_found, err, err_len);
}

/* <session>/plots: beside the trace when the session is named by a file. */
static void default_plot_dir(const char *session, char *buf, size_t len)
{
    struct stat st;
    if (stat(session, &st) == 0 && !S_ISDIR(st.st_mode)) {
        const char *slash = strrchr(session, '/');
        if (!slash)
            snprintf(buf, len, "plots");
        else
            snprintf(buf, len, "%.*s/plots", (int)(slash - session), session);
        return;
    }
    snprintf(buf, len, "%s/plots", session);
}

/* Makes dir (one level) unless it is a directory already. 0, or -1 with
 * err saying why. */
static int make_plot_dir(const char *dir, char *err, size_t err_len)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        snprintf(err, err_len, "the plot directory %s is not a directory", dir);
        return -1;
    }
    if (mkdir(dir, 0755) != 0) {
        snprintf(err, err_len, "cannot make the plot directory %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

static int parse_min_steps(const char *text, uint32_t *v)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end || errno || n < 4 || n > MAX_MIN_STEPS)
        return -1;
    *v = (uint32_t)n;
    return 0;
}

static int run(int argc, char **argv)
{
    const gpufl__mem_command *me = &gpufl__mem_analyze_command;
    enum { O_FORMAT = 1, O_VIS, O_PLOT_DIR, O_MIN_STEPS, O_SCOPE };
    static const struct option opts[] = {{"format", required_argument, 0, O_FORMAT},
                                         {"output", required_argument, 0, 'o'},
                                         {"visualization", no_argument, 0, O_VIS},
                                         {"plot-dir", required_argument, 0, O_PLOT_DIR},
                                         {"min-steps", required_argument, 0, O_MIN_STEPS},
                                         {"scope", required_argument, 0, O_SCOPE},
                                         {0, 0, 0, 0}};
    analyze_opts o = {0};
    const char *file = NULL, *plot_dir = NULL;
    bool vis = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case O_FORMAT:
            if (!strcmp(optarg, "json"))
                o.json = true;
            else if (!strcmp(optarg, "txt") || !strcmp(optarg, "text"))
                o.json = false;
            else
                return gpufl__mem_usage_error(me, "bad --format '%s': expected json or txt", optarg);
            break;
        case 'o': file = optarg; break;
        case O_VIS: vis = true; break;
        case O_PLOT_DIR:
            if (!*optarg)
                return gpufl__mem_usage_error(me, "--plot-dir needs a directory");
            plot_dir = optarg;
            break;
        case O_MIN_STEPS:
            if (parse_min_steps(optarg, &o.leak.min_steps) != 0)
                return gpufl__mem_usage_error(
                    me, "bad --min-steps '%s': expected 4 to %d (a line through 3 repetitions after the warm-up)",
                    optarg, MAX_MIN_STEPS);
            break;
        case O_SCOPE:
            if (!*optarg)
                return gpufl__mem_usage_error(me, "--scope needs a name");
            o.leak.scope = optarg;
            break;
        default:
            return gpufl__mem_usage_error(me, "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    if (optind >= argc)
        return gpufl__mem_usage_error(me, "which SESSION?");
    if (optind < argc - 1)
        return gpufl__mem_usage_error(me, "one SESSION only ('%s' is a second)", argv[optind + 1]);
    if (plot_dir && !vis)
        return gpufl__mem_usage_error(me,
                                      "--plot-dir names where --visualization writes its plots: add --visualization");
    const char *path = argv[optind];
    char err[1400], dir[4096];
    if (vis) {
        if (!plot_dir) {
            default_plot_dir(path, dir, sizeof dir);
            plot_dir = dir;
        }
        if (make_plot_dir(plot_dir, err, sizeof err) != 0) {
            fprintf(stderr, "gpufl mem analyze: %s (name another with --plot-dir)\n", err);
            return GFL_MEM_ERROR;
        }
        o.plot_dir = plot_dir;
    }
    FILE *out = stdout;
    if (file && !(out = fopen(file, "we"))) {
        fprintf(stderr, "gpufl mem analyze: cannot write '%s': %s\n", file, strerror(errno));
        return GFL_MEM_ERROR;
    }
    int leak = 0;
    int rc = analyze(path, &o, out, &leak, err, sizeof err);
    if (file && fclose(out) != 0 && rc == 0) {
        snprintf(err, sizeof err, "writing '%s' failed", file);
        rc = GPUFL_EIO;
    }
    if (rc != 0) {
        fprintf(stderr, "gpufl mem analyze: %s\n", err);
        return GFL_MEM_ERROR;
    }
    if (vis)
        fprintf(stderr, "gpufl mem analyze: plots in %s\n", plot_dir);
    return leak ? GFL_MEM_FOUND : GFL_MEM_OK;
}

const gpufl__mem_command gpufl__mem_analyze_command = {
    "analyze", run,
    "SESSION [--format json|txt] [--output FILE] [--visualization [--plot-dir DIR]] [--min-steps N] [--scope NAME]",
    "The memory of a recorded session: its layers (NVML, driver, framework allocator) and the\n"
    "gaps between them, peaks by device, stream, scope and NVTX range, and whether memory leaks\n"
    "from one repetition of a step to the next.",
    "  SESSION           a session directory, its trace.gflt or one of its logs\n"
    "  --format F        txt (the default) or json (schema \"gpufl-mem-analyze\": the report's\n"
    "                    memory_layers, memory_peaks, leaks and memory members, docs/REPORT.md)\n"
    "  -o, --output FILE write there instead of stdout\n"
    "  --visualization   write SVG plots: each GPU's memory layers over time, and live memory\n"
    "                    after each repetition of each step with the fitted line\n"
    "  --plot-dir DIR    where the plots go (default SESSION/plots, made when missing)\n"
    "  --min-steps N     repetitions that make a scope or NVTX range a step (default 5, at least 4)\n"
    "  --scope NAME      judge only this scope or NVTX range (an error when it was not repeated\n"
    "                    often enough)\n"
    "A step leaks when live memory after each repetition rises on a line (after a warm-up of\n"
    "the first 20 %): p < 0.01, r² >= 0.5 and 1 MiB or more over the repetitions fitted.\n"
    "Exit code: 0 no leak, 1 a leak was found, 2 an error or bad usage.\n"};
