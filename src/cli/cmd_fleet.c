/*
 * `gpufl fleet`: queries over the sessions `gpufl serve` stored
 * (serve/fleet_query.h, serve/fleet_regress.h). This file only reads the
 * arguments. Built without libpq, it reads them and then says what the
 * build lacks.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#ifdef GPUFL_HAVE_SERVE
#include "analyze/ana_diff.h"
#include "gpufl/gpufl.h"
#include "serve/fleet_query.h"
#include "serve/fleet_regress.h"
#include "serve/serve_pg.h"
#endif

enum { Q_SESSIONS, Q_KERNELS, Q_SCOPES, Q_REGRESS };

typedef struct fleet_args {
    const char *db, *workspace, *host, *app, *job;
    const char *since, *until, *before, *after, *by, *step;
    int query;
    unsigned top;
    double threshold, min_impact;
    bool json, all, has_top, has_threshold, has_min_impact;
    int64_t since_ns, until_ns, before_from, before_to, after_from, after_to;
} fleet_args;

static const char *const query_names[] = {"sessions", "kernels", "scopes", "regress"};

/* An option given to a query it does not apply to. */
static int not_for(const char *flag, int query)
{
    return gpufl__cli_usage_error("fleet", "%s does not apply to 'fleet %s'", flag, query_names[query]);
}

static int parse_args(fleet_args *a, int argc, char **argv)
{
    enum {
        O_DB = 1,
        O_WS,
        O_HOST,
        O_APP,
        O_JOB,
        O_SINCE,
        O_UNTIL,
        O_BY,
        O_TOP,
        O_BEFORE,
        O_AFTER,
        O_THRESHOLD,
        O_IMPACT,
        O_JSON,
        O_ALL,
        O_STEP
    };
    static const struct option opts[] = {{"db", required_argument, 0, O_DB},
                                         {"workspace", required_argument, 0, O_WS},
                                         {"host", required_argument, 0, O_HOST},
                                         {"app", required_argument, 0, O_APP},
                                         {"job", required_argument, 0, O_JOB},
                                         {"since", required_argument, 0, O_SINCE},
                                         {"until", required_argument, 0, O_UNTIL},
                                         {"by", required_argument, 0, O_BY},
                                         {"top", required_argument, 0, O_TOP},
                                         {"before", required_argument, 0, O_BEFORE},
                                         {"after", required_argument, 0, O_AFTER},
                                         {"threshold", required_argument, 0, O_THRESHOLD},
                                         {"min-impact", required_argument, 0, O_IMPACT},
                                         {"json", no_argument, 0, O_JSON},
                                         {"all", no_argument, 0, O_ALL},
                                         {"per-step", required_argument, 0, O_STEP},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    double v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_DB: a->db = optarg; break;
        case O_WS: a->workspace = optarg; break;
        case O_HOST: a->host = optarg; break;
        case O_APP: a->app = optarg; break;
        case O_JOB: a->job = optarg; break;
        case O_SINCE: a->since = optarg; break;
        case O_UNTIL: a->until = optarg; break;
        case O_BY: a->by = optarg; break;
        case O_TOP:
            if (!gpufl__cli_number(optarg, 0, 100000, &v) || v != (unsigned)v)
                return gpufl__cli_usage_error("fleet", "--top wants a whole number (0: all), not '%s'", optarg);
            a->top = (unsigned)v, a->has_top = true;
            break;
        case O_BEFORE: a->before = optarg; break;
        case O_AFTER: a->after = optarg; break;
        case O_THRESHOLD:
            if (!gpufl__cli_number(optarg, 0, 1000, &a->threshold))
                return gpufl__cli_usage_error("fleet", "--threshold wants a percentage from 0 to 1000, not '%s'",
                                              optarg);
            a->has_threshold = true;
            break;
        case O_IMPACT:
            if (!gpufl__cli_number(optarg, 0, 100, &a->min_impact))
                return gpufl__cli_usage_error("fleet", "--min-impact wants a percentage from 0 to 100, not '%s'",
                                              optarg);
            a->has_min_impact = true;
            break;
        case O_JSON: a->json = true; break;
        case O_ALL: a->all = true; break;
        case O_STEP:
            if (!optarg[0])
                return gpufl__cli_usage_error("fleet", "--per-step wants a scope name");
            a->step = optarg;
            break;
        case 'h': gpufl__cli_help("fleet"); return -1;
        default:
            return gpufl__cli_usage_error("fleet", "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    if (optind >= argc)
        return gpufl__cli_usage_error("fleet", "which query: sessions, kernels, scopes or regress");
    a->query = -1;
    for (int q = 0; q < 4; q++)
        if (!strcmp(argv[optind], query_names[q]))
            a->query = q;
    if (a->query < 0)
        return gpufl__cli_usage_error("fleet", "unknown query '%s' (sessions, kernels, scopes or regress)",
                                      argv[optind]);
    if (optind + 1 < argc)
        return gpufl__cli_usage_error("fleet", "one operand too many ('%s')", argv[optind + 1]);
    int q = a->query;
    bool series = q == Q_KERNELS || q == Q_SCOPES;
    if (a->by && !series)
        return not_for("--by", q);
    if (a->has_top && !series)
        return not_for("--top", q);
    if (q == Q_REGRESS && (a->since || a->until))
        return not_for(a->since ? "--since" : "--until", q);
    if (q != Q_REGRESS && a->step)
        return not_for("--per-step", q);
    if (q != Q_REGRESS && (a->before || a->after || a->has_threshold || a->has_min_impact || a->all))
        return not_for(a->before           ? "--before"
                       : a->after          ? "--after"
                       : a->has_threshold  ? "--threshold"
                       : a->has_min_impact ? "--min-impact"
                                           : "--all",
                       q);
    if (series && a->by && strcmp(a->by, "day") && strcmp(a->by, "hour"))
        return gpufl__cli_usage_error("fleet", "--by wants day or hour, not '%s'", a->by);
    if (!series)
        a->top = 0;
    else if (!a->has_top)
        a->top = 10;
    int64_t ignored;
    if (a->since && !gpufl__cli_time(a->since, &a->since_ns, &ignored))
        return gpufl__cli_usage_error("fleet",
                                      "--since wants a date or time in UTC (2026-11-27, "
                                      "2026-11-27T10:30), not '%s'",
                                      a->since);
    if (a->until && !gpufl__cli_time(a->until, &ignored, &a->until_ns))
        return gpufl__cli_usage_error("fleet", "--until wants a date or time in UTC, not '%s'", a->until);
    if (q == Q_REGRESS) {
        if (!a->app || !a->before || !a->after)
            return gpufl__cli_usage_error("fleet", "regress wants --app, --before and --after");
        if (!gpufl__cli_time_range(a->before, &a->before_from, &a->before_to))
            return gpufl__cli_usage_error("fleet",
                                          "--before wants a date range in UTC (2026-11-01..2026-11-07, "
                                          "or one day), not '%s'",
                                          a->before);
        if (!gpufl__cli_time_range(a->after, &a->after_from, &a->after_to))
            return gpufl__cli_usage_error("fleet", "--after wants a date range in UTC, not '%s'", a->after);
    }
    if (!a->workspace)
        return gpufl__cli_usage_error("fleet", "--workspace NAME is required (the keys' workspace)");
    if (!a->db)
        a->db = getenv("GPUFL_SERVE_DB");
    if (!a->db || !a->db[0])
        return gpufl__cli_usage_error("fleet", "no database: give --db CONNINFO or set GPUFL_SERVE_DB");
    return 0;
}

#ifdef GPUFL_HAVE_SERVE
static int run_query(const fleet_args *a)
{
    char why[600];
    PGconn *conn = gpufl__serve_pg_connect(a->db, why, sizeof why);
    int rc = conn ? gpufl__fleet_check(conn, a->workspace, why, sizeof why) : GPUFL_EIO;
    gpufl__fleet_filter f = {.workspace = a->workspace,
                             .host = a->host,
                             .app = a->app,
                             .job = a->job,
                             .has_from = a->since != NULL,
                             .has_to = a->until != NULL,
                             .from_ns = a->since_ns,
                             .to_ns = a->until_ns};
    unsigned regressions = 0;
    if (rc == 0 && a->query == Q_SESSIONS) {
        rc = gpufl__fleet_sessions(conn, &f, a->json, stdout, why, sizeof why);
    } else if (rc == 0 && a->query != Q_REGRESS) {
        rc = gpufl__fleet_series(conn, &f, a->query == Q_KERNELS ? GPUFL__FLEET_KERNELS : GPUFL__FLEET_SCOPES,
                                 a->by && !strcmp(a->by, "hour"), a->top, a->json, stdout, why, sizeof why);
    } else if (rc == 0) {
        gpufl__fleet_regress_opts o = {
            .before_text = a->before,
            .after_text = a->after,
            .before_from = a->before_from,
            .before_to = a->before_to,
            .after_from = a->after_from,
            .after_to = a->after_to,
            .threshold_pct = a->has_threshold ? a->threshold : GPUFL__DIFF_DEFAULT_THRESHOLD_PCT,
            .min_impact_pct = a->has_min_impact ? a->min_impact : GPUFL__DIFF_DEFAULT_MIN_IMPACT_PCT,
            .step = a->step,
            .all = a->all,
            .json = a->json};
        rc = gpufl__fleet_regress(conn, &f, &o, stdout, &regressions, why, sizeof why);
    }
    PQfinish(conn);
    if (rc != 0) {
        fprintf(stderr, "gpufl fleet %s: %s\n", query_names[a->query], why);
        return GFL_EXIT_FAIL;
    }
    return regressions ? GFL_EXIT_THRESHOLD : GFL_EXIT_OK;
}
#endif

int gpufl_cmd_fleet(int argc, char **argv)
{
    fleet_args a = {0};
    int rc = parse_args(&a, argc, argv);
    if (rc != 0)
        return rc < 0 ? GFL_EXIT_OK : rc;
#ifndef GPUFL_HAVE_SERVE
    fprintf(stderr, "gpufl fleet: built without PostgreSQL client library (libpq-dev)\n");
    return GFL_EXIT_FAIL;
#else
    return run_query(&a);
#endif
}
