/*
 * `gpufl diff BASELINE CANDIDATE [--threshold PCT] [--min-impact PCT]
 * [--format text|json] [--all]`: what changed between two sessions, per
 * kernel, scope and device (analyze/ana_diff.h judges, present/diff_*.c
 * write). Built to gate CI, so its exit status follows diff(1) rather than
 * the other commands: 0 no regression, 1 a regression, 2 bad usage or a
 * session that could not be read.
 */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_diff.h"
#include "analyze/analysis.h"
#include "cli/cli.h"
#include "gpufl/trace.h"
#include "present/diff/diff_json.h"
#include "present/diff/diff_text.h"

#define DIFF_EXIT_SAME 0
#define DIFF_EXIT_REGRESSED 1
#define DIFF_EXIT_TROUBLE 2

/* A percentage: a finite number >= 0, with an optional '%'. */
static bool parse_pct(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s)
        return false;
    if (*end == '%')
        end++;
    if (*end || !isfinite(v) || v < 0)
        return false;
    *out = v;
    return true;
}

/* A session and its analyses. */
typedef struct side {
    const char *path;
    gpufl_trace *t;
    gpufl__ana_report r;
    bool analyzed;
} side;

static int load(side *s)
{
    char err[1024];
    if (gpufl_trace_open(s->path, &s->t, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl diff: %s\n", err);
        return -1;
    }
    gpufl__cli_note_trace("diff", s->t);
    /* Every kernel: a diff that left out the tail would miss a new one. */
    gpufl__ana_options o;
    gpufl__ana_options_default(&o);
    o.top_kernels = UINT32_MAX;
    if (gpufl__analyze_report(s->t, &o, &s->r) != 0) {
        fprintf(stderr, "gpufl diff: %s: out of memory analyzing the session\n", s->path);
        return -1;
    }
    s->analyzed = true;
    return 0;
}

static void unload(side *s)
{
    if (s->analyzed)
        gpufl__ana_report_free(&s->r);
    if (s->t)
        gpufl_trace_close(s->t);
}

static int render(const gpufl__diff *d, const side *b, const side *c, bool json, bool all)
{
    if (json) {
        json_t *j = gpufl__diff_json(d, b->path, c->path);
        if (!j) {
            fprintf(stderr, "gpufl diff: out of memory writing JSON\n");
            return -1;
        }
        int rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
        json_decref(j);
        if (rc == 0)
            rc = fputc('\n', stdout) == EOF ? -1 : 0;
        if (rc != 0) {
            fprintf(stderr, "gpufl diff: writing the output failed\n");
            return -1;
        }
    } else {
        gpufl__diff_text_opts o = {.baseline = b->path, .candidate = c->path, .all = all};
        if (gpufl__diff_text(d, &o, stdout) != 0) {
            fprintf(stderr, "gpufl diff: writing the output failed\n");
            return -1;
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gpufl diff: writing the output failed\n");
        return -1;
    }
    return 0;
}

int gpufl_cmd_diff(int argc, char **argv)
{
    enum { O_THRESHOLD = 1, O_MIN_IMPACT, O_FORMAT, O_ALL };
    static const struct option opts[] = {{"threshold", required_argument, 0, O_THRESHOLD},
                                         {"min-impact", required_argument, 0, O_MIN_IMPACT},
                                         {"format", required_argument, 0, O_FORMAT},
                                         {"all", no_argument, 0, O_ALL},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    gpufl__diff_options dopt;
    gpufl__diff_options_default(&dopt);
    bool json = false, all = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_THRESHOLD:
        case O_MIN_IMPACT:
            if (!parse_pct(optarg, c == O_THRESHOLD ? &dopt.threshold_pct : &dopt.min_impact_pct))
                return gpufl__cli_usage_error("diff", "bad %s '%s': expected a percentage >= 0, such as 5 or 2.5",
                                              c == O_THRESHOLD ? "--threshold" : "--min-impact", optarg);
            break;
        case O_FORMAT:
            if (strcmp(optarg, "text") && strcmp(optarg, "json"))
                return gpufl__cli_usage_error("diff", "bad --format '%s': expected text or json", optarg);
            json = !strcmp(optarg, "json");
            break;
        case O_ALL: all = true; break;
        case 'h': return gpufl__cli_help("diff");
        default:
            return gpufl__cli_usage_error("diff", "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    if (argc - optind < 2)
        return gpufl__cli_usage_error("diff", "expected two sessions: BASELINE CANDIDATE");
    if (argc - optind > 2)
        return gpufl__cli_usage_error("diff", "expected two sessions only: BASELINE CANDIDATE ('%s' is a third)",
                                      argv[optind + 2]);

    side b = {.path = argv[optind]}, cand = {.path = argv[optind + 1]};
    int status = DIFF_EXIT_TROUBLE;
    if (load(&b) == 0 && load(&cand) == 0) {
        gpufl__diff d;
        if (gpufl__diff_reports(b.t, &b.r, cand.t, &cand.r, &dopt, &d) != 0) {
            fprintf(stderr, "gpufl diff: out of memory comparing the sessions\n");
        } else {
            if (render(&d, &b, &cand, json, all) == 0)
                status = d.regressions ? DIFF_EXIT_REGRESSED : DIFF_EXIT_SAME;
            gpufl__diff_free(&d);
        }
    }
    unload(&cand);
    unload(&b);
    return status;
}
