/*
 * `gpufl replay-check A B [options]`: did two runs of a program do the
 * same GPU work? Kernels (names and launch configurations), copies and
 * memsets per stream, allocations per device (analyze/ana_replay.h judges,
 * present/diff/replay_*.c write). Built to gate CI on determinism, so it
 * exits like diff(1): 0 the same, 1 different, 2 bad usage or a session
 * that could not be read. A and B may be sessions (directory, .log or
 * .gflt) or, both, job directories: then rank by rank
 * (replay_check_job.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/replay_check.h"
#include "gpufl/trace.h"
#include "present/diff/replay_json.h"
#include "present/diff/replay_text.h"
#include "present/view/view.h"
#include "read/job_find.h"

#define MAX_STREAM_MAP 64

int gpufl__rc_print_json(json_t *j)
{
    int rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (rc == 0)
        rc = fputc('\n', stdout) == EOF ? -1 : 0;
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "gpufl replay-check: writing the output failed\n");
    return rc;
}

static gpufl_trace *open_session(const char *label, const char *path)
{
    char err[1024];
    gpufl_trace *t = NULL;
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
        /* the reader's message names the file it failed on (one inside a
         * session directory); the operand is added when it does not */
        if (strstr(err, path))
            fprintf(stderr, "gpufl replay-check: %s: %s\n", label, err);
        else
            fprintf(stderr, "gpufl replay-check: %s (%s): %s\n", label, path, err);
        return NULL;
    }
    gpufl__cli_note_trace("replay-check", t);
    return t;
}

int gpufl__rc_check_pair(const char *a, const char *b, const gpufl__rc_args *args, json_t **json)
{
    gpufl_trace *ta = open_session("A", a);
    gpufl_trace *tb = ta ? open_session("B", b) : NULL;
    int status = RC_EXIT_TROUBLE;
    if (!ta || !tb)
        goto out;
    gpufl__replay r;
    char err[1024];
    int rc = gpufl__replay_check(ta, tb, &args->opt, &r, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "gpufl replay-check: %s\n", err[0] ? err : "the sessions could not be compared");
        goto out;
    }
    status = r.same ? RC_EXIT_SAME : RC_EXIT_DIFFERENT;
    if (json) {
        if (!(*json = gpufl__replay_json(&r, a, b, args->selection))) {
            fprintf(stderr, "gpufl replay-check: out of memory writing JSON\n");
            status = RC_EXIT_TROUBLE;
        }
    } else {
        gpufl__replay_text_opts o = {.a = a,
                                     .b = b,
                                     .selection = args->selection,
                                     .window = args->opt.window,
                                     .only_differences = args->only_differences};
        if (gpufl__replay_text(&r, &o, stdout) != 0 || fflush(stdout) != 0) {
            fprintf(stderr, "gpufl replay-check: writing the output failed\n");
            status = RC_EXIT_TROUBLE;
        }
    }
    gpufl__replay_free(&r);
out:
    if (tb)
        gpufl_trace_close(tb);
    if (ta)
        gpufl_trace_close(ta);
    return status;
}

/* ---- options --------------------------------------------------------------------------- */

/* A whole number from lo to hi. */
static bool parse_count(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* "A:B", two CUPTI stream ids. */
static bool parse_pair(const char *s, gpufl__rp_pair *p)
{
    char a[32];
    const char *colon = strchr(s, ':');
    uint64_t x, y;
    if (!colon || (size_t)(colon - s) >= sizeof a)
        return false;
    memcpy(a, s, (size_t)(colon - s));
    a[colon - s] = '\0';
    if (!parse_count(a, 0, UINT32_MAX, &x) || !parse_count(colon + 1, 0, UINT32_MAX, &y))
        return false;
    p->a = (uint32_t)x;
    p->b = (uint32_t)y;
    return true;
}

/* "NAME" or "NAME#N" (N >= 1); name points into text (a copy cut at '#'). */
static bool parse_scope(char *text, const char **name, uint32_t *occurrence)
{
    char *hash = strrchr(text, '#');
    *occurrence = 0;
    if (hash) {
        uint64_t n;
        if (!parse_count(hash + 1, 1, UINT32_MAX, &n))
            return false;
        *hash = '\0';
        *occurrence = (uint32_t)n;
    }
    *name = text;
    return text[0] != '\0';
}

/* What is compared, in words, from the options as given. */
static void selection_words(const gpufl__rc_args *a, const char *names, const char *from_t, const char *to_t, char *buf,
                            size_t len)
{
    const gpufl__replay_options *o = &a->opt;
    size_t n = 0;
    buf[0] = '\0';
#define ADD(...)                                                                                                       \
    do {                                                                                                               \
        if (n < len) {                                                                                                 \
            int w = snprintf(buf + n, len - n, "%s", n ? "; " : "");                                                   \
            n += w > 0 ? (size_t)w : 0;                                                                                \
        }                                                                                                              \
        if (n < len) {                                                                                                 \
            int w = snprintf(buf + n, len - n, __VA_ARGS__);                                                           \
            n += w > 0 ? (size_t)w : 0;                                                                                \
        }                                                                                                              \
    } while (0)
    if (from_t || to_t)
        ADD("ops starting from %s to %s after each session's start", from_t ? from_t : "0", to_t ? to_t : "its end");
    if (o->from_op || o->has_to_op) {
        if (o->has_to_op)
            ADD("ops of index %" PRIu64 " to %" PRIu64 " (not included) in each lane", o->from_op, o->to_op);
        else
            ADD("ops of index %" PRIu64 " on in each lane", o->from_op);
    }
    if (o->scope) {
        if (o->occurrence)
            ADD("work launched inside occurrence #%u of scope '%s'", o->occurrence, o->scope);
        else
            ADD("work launched inside scope '%s'", o->scope);
    }
    if (names)
        ADD("kernels whose name matches /%s/ left out", names);
    if (o->ignore_config)
        ADD("kernels compared by name only");
    if (o->ignore_allocs)
        ADD("allocations not compared");
    if (!n)
        ADD("whole sessions");
#undef ADD
}

int gpufl_cmd_replay_check(int argc, char **argv)
{
    enum {
        O_FROM_TIME = 1,
        O_TO_TIME,
        O_FROM_OP,
        O_TO_OP,
        O_SCOPE,
        O_IGNORE_NAMES,
        O_IGNORE_CONFIG,
        O_IGNORE_ALLOCS,
        O_STREAM_MAP,
        O_WINDOW,
        O_CONTEXT,
        O_JSON,
        O_FORMAT,
        O_ONLY_DIFF,
        O_DIVERGENCES
    };
    static const struct option opts[] = {{"from-time", required_argument, 0, O_FROM_TIME},
                                         {"to-time", required_argument, 0, O_TO_TIME},
                                         {"from-op", required_argument, 0, O_FROM_OP},
                                         {"to-op", required_argument, 0, O_TO_OP},
                                         {"scope", required_argument, 0, O_SCOPE},
                                         {"ignore-names", required_argument, 0, O_IGNORE_NAMES},
                                         {"ignore-launch-config", no_argument, 0, O_IGNORE_CONFIG},
                                         {"ignore-allocs", no_argument, 0, O_IGNORE_ALLOCS},
                                         {"stream-map", required_argument, 0, O_STREAM_MAP},
                                         {"window", required_argument, 0, O_WINDOW},
                                         {"context", required_argument, 0, O_CONTEXT},
                                         {"json", no_argument, 0, O_JSON},
                                         {"format", required_argument, 0, O_FORMAT},
                                         {"only-differences", no_argument, 0, O_ONLY_DIFF},
                                         {"divergences", required_argument, 0, O_DIVERGENCES},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    gpufl__rc_args args = {0};
    gpufl__replay_options_default(&args.opt);
    gpufl__rp_pair map[MAX_STREAM_MAP];
    size_t nmap = 0;
    const char *names = NULL, *from_t = NULL, *to_t = NULL;
    char *scope = NULL;
    regex_t re;
    bool have_re = false;
    int status = RC_EXIT_TROUBLE, c;
    uint64_t v;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_FROM_TIME:
        case O_TO_TIME: {
            uint64_t *dst = c == O_FROM_TIME ? &args.opt.from_ns : &args.opt.to_ns;
            if (gpufl__view_parse_time(optarg, dst) != 0) {
                status = gpufl__cli_usage_error("replay-check",
                                                "bad %s '%s': expected a time such as 1.5s, 200ms, "
                                                "40us or 12345 (ns)",
                                                c == O_FROM_TIME ? "--from-time" : "--to-time", optarg);
                goto done;
            }
            if (c == O_TO_TIME) {
                args.opt.has_to = true;
                to_t = optarg;
            } else {
                from_t = optarg;
            }
            break;
        }
        case O_FROM_OP:
        case O_TO_OP:
            if (!parse_count(optarg, 0, UINT32_MAX, &v)) {
                status = gpufl__cli_usage_error("replay-check", "bad %s '%s': expected an op index, 0 or more",
                                                c == O_FROM_OP ? "--from-op" : "--to-op", optarg);
                goto done;
            }
            if (c == O_FROM_OP) {
                args.opt.from_op = v;
            } else {
                args.opt.to_op = v;
                args.opt.has_to_op = true;
            }
            break;
        case O_SCOPE:
            free(scope);
            if (!(scope = strdup(optarg)) || !parse_scope(scope, &args.opt.scope, &args.opt.occurrence)) {
                status = gpufl__cli_usage_error("replay-check", "bad --scope '%s': expected NAME or NAME#N (N from 1)",
                                                optarg);
                goto done;
            }
            break;
        case O_IGNORE_NAMES: {
            if (have_re)
                regfree(&re);
            have_re = false;
            int e = regcomp(&re, optarg, REG_EXTENDED | REG_NOSUB);
            if (e != 0) {
                char why[256];
                regerror(e, &re, why, sizeof why);
                status = gpufl__cli_usage_error("replay-check", "bad --ignore-names '%s': %s", optarg, why);
                goto done;
            }
            have_re = true;
            names = optarg;
            break;
        }
        case O_IGNORE_CONFIG: args.opt.ignore_config = true; break;
        case O_IGNORE_ALLOCS: args.opt.ignore_allocs = true; break;
        case O_STREAM_MAP:
            if (nmap == MAX_STREAM_MAP || !parse_pair(optarg, &map[nmap])) {
                status = gpufl__cli_usage_error("replay-check",
                                                nmap == MAX_STREAM_MAP ? "too many --stream-map pairs ('%s'): at "
                                                                         "most 64"
                                                                       : "bad --stream-map '%s': expected A:B, a "
                                                                         "stream id of A and one of B (CUPTI's, "
                                                                         "as the report lists them)",
                                                optarg);
                goto done;
            }
            nmap++;
            break;
        case O_WINDOW:
        case O_CONTEXT:
            if (!parse_count(optarg, c == O_WINDOW ? 1 : 0, c == O_WINDOW ? 4096 : 100, &v)) {
                status = gpufl__cli_usage_error("replay-check", "bad %s '%s': expected %s",
                                                c == O_WINDOW ? "--window" : "--context", optarg,
                                                c == O_WINDOW ? "1 to 4096 ops" : "0 to 100 ops");
                goto done;
            }
            *(c == O_WINDOW ? &args.opt.window : &args.opt.context) = (uint32_t)v;
            break;
        case O_DIVERGENCES:
            if (!parse_count(optarg, 0, 1000, &v)) {
                status = gpufl__cli_usage_error("replay-check", "bad --divergences '%s': expected 0 to 1000", optarg);
                goto done;
            }
            args.opt.list = (uint32_t)v;
            break;
        case O_JSON: args.json = true; break;
        case O_FORMAT:
            if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
                status = gpufl__cli_usage_error("replay-check", "bad --format '%s': expected text or json", optarg);
                goto done;
            }
            args.json = !strcmp(optarg, "json");
            break;
        case O_ONLY_DIFF: args.only_differences = true; break;
        case 'h': status = gpufl__cli_help("replay-check"); goto done;
        default:
            status = gpufl__cli_usage_error("replay-check", "bad argument '%s'",
                                            optind > 0 && optind <= argc ? argv[optind - 1] : "");
            goto done;
        }
    }
    if (argc - optind != 2) {
        status = argc - optind < 2
                     ? gpufl__cli_usage_error("replay-check", "expected two sessions (or two job directories): A B")
                     : gpufl__cli_usage_error("replay-check", "expected two sessions only: A B ('%s' is a third)",
                                              argv[optind + 2]);
        goto done;
    }
    if (args.opt.has_to && args.opt.to_ns <= args.opt.from_ns) {
        status = gpufl__cli_usage_error("replay-check", "the time range is empty: --to-time must be after --from-time");
        goto done;
    }
    if (args.opt.has_to_op && args.opt.to_op <= args.opt.from_op) {
        status = gpufl__cli_usage_error("replay-check", "the op range is empty: --to-op must be above --from-op");
        goto done;
    }
    args.opt.ignore_names = have_re ? &re : NULL;
    args.opt.stream_map = map;
    args.opt.nstream_map = nmap;
    char selection[1024];
    selection_words(&args, names, from_t, to_t, selection, sizeof selection);
    args.selection = selection;

    const char *a = argv[optind], *b = argv[optind + 1];
    bool job_a = gpufl__job_is_dir(a), job_b = gpufl__job_is_dir(b);
    if (job_a != job_b) {
        fprintf(stderr,
                "gpufl replay-check: %s is a job directory and %s a single session: give two sessions or "
                "two job directories\n",
                job_a ? a : b, job_a ? b : a);
        goto done;
    }
    if (job_a) {
        if (nmap)
            fprintf(stderr, "gpufl replay-check: --stream-map applies to every rank's pair of sessions\n");
        status = gpufl__rc_check_jobs(a, b, &args);
        goto done;
    }
    json_t *j = NULL;
    status = gpufl__rc_check_pair(a, b, &args, args.json ? &j : NULL);
    if (j) {
        if (gpufl__rc_print_json(j) != 0)
            status = RC_EXIT_TROUBLE;
        json_decref(j);
    }
done:
    if (have_re)
        regfree(&re);
    free(scope);
    return status;
}
