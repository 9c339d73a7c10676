/*
 * `gpufl serve`: the upload API's server (serve/serve_server.h) and its
 * API keys (serve/serve_keys.h). This file only reads the arguments; the
 * serve layer does the work. Built without libpq, the command still reads
 * its arguments (so --help and usage errors behave) and then says what the
 * build lacks.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#ifdef GPUFL_HAVE_SERVE
#include "gpufl/gpufl.h"
#include "serve/serve_keys.h"
#include "serve/serve_migrate.h"
#include "serve/serve_pg.h"
#include "serve/serve_server.h"
#endif

typedef struct serve_args {
    const char *db, *listen, *tls_cert, *tls_key, *api_path;
    unsigned workers;
    bool migrate, json;
    const char *key_action, *key_arg; /* `key add|list|revoke [ARG]` */
    char server_flag[32];             /* the first option that only the server takes ("" none) */
    char listen_flag[32];             /* the same, --migrate left out */
} serve_args;

static int parse_args(serve_args *a, int argc, char **argv)
{
    enum { O_DB = 1, O_LISTEN, O_CERT, O_KEY, O_WORKERS, O_API, O_MIGRATE, O_JSON };
    static const struct option opts[] = {{"db", required_argument, 0, O_DB},
                                         {"listen", required_argument, 0, O_LISTEN},
                                         {"tls-cert", required_argument, 0, O_CERT},
                                         {"tls-key", required_argument, 0, O_KEY},
                                         {"workers", required_argument, 0, O_WORKERS},
                                         {"api-path", required_argument, 0, O_API},
                                         {"migrate", no_argument, 0, O_MIGRATE},
                                         {"json", no_argument, 0, O_JSON},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    double v;
    int c, li;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, &li)) != -1) {
        if (c > 0 && c != O_DB && c != O_JSON && c != '?' && c != 'h') {
            if (!a->server_flag[0])
                snprintf(a->server_flag, sizeof a->server_flag, "--%s", opts[li].name);
            if (c != O_MIGRATE && !a->listen_flag[0])
                snprintf(a->listen_flag, sizeof a->listen_flag, "--%s", opts[li].name);
        }
        switch (c) {
        case O_DB: a->db = optarg; break;
        case O_LISTEN: a->listen = optarg; break;
        case O_CERT: a->tls_cert = optarg; break;
        case O_KEY: a->tls_key = optarg; break;
        case O_WORKERS:
            if (!gpufl__cli_number(optarg, 1, 256, &v) || v != (unsigned)v)
                return gpufl__cli_usage_error("serve", "--workers wants a whole number from 1 to 256, not '%s'",
                                              optarg);
            a->workers = (unsigned)v;
            break;
        case O_API:
            if (optarg[0] != '/' || optarg[strlen(optarg) - 1] == '/' || strpbrk(optarg, " ?#"))
                return gpufl__cli_usage_error("serve",
                                              "--api-path wants a path like /api/v1 (no trailing /), not "
                                              "'%s'",
                                              optarg);
            a->api_path = optarg;
            break;
        case O_MIGRATE: a->migrate = true; break;
        case O_JSON: a->json = true; break;
        case 'h': gpufl__cli_help("serve"); return -1;
        default:
            return gpufl__cli_usage_error("serve", "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    if (optind < argc) {
        if (strcmp(argv[optind], "key") != 0)
            return gpufl__cli_usage_error("serve", "unknown operand '%s' (only 'key add|list|revoke')", argv[optind]);
        if (optind + 1 >= argc)
            return gpufl__cli_usage_error("serve", "key wants add WORKSPACE, list [WORKSPACE] or revoke ID");
        a->key_action = argv[optind + 1];
        a->key_arg = optind + 2 < argc ? argv[optind + 2] : NULL;
        bool list = !strcmp(a->key_action, "list");
        if (strcmp(a->key_action, "add") && !list && strcmp(a->key_action, "revoke"))
            return gpufl__cli_usage_error("serve", "unknown key action '%s' (add, list or revoke)", a->key_action);
        if (!list && !a->key_arg)
            return gpufl__cli_usage_error("serve", "key %s wants %s", a->key_action,
                                          strcmp(a->key_action, "add") ? "the key's id or prefix" : "a WORKSPACE");
        if (argc > optind + 3)
            return gpufl__cli_usage_error("serve", "key %s: one operand too many ('%s')", a->key_action,
                                          argv[optind + 3]);
        if (a->server_flag[0])
            return gpufl__cli_usage_error("serve", "%s is the server's; key %s takes only --db%s", a->server_flag,
                                          a->key_action, list ? " and --json" : "");
        if (a->json && !list)
            return gpufl__cli_usage_error("serve", "--json is for key list");
        if (!strcmp(a->key_action, "add") && !a->key_arg[0])
            return gpufl__cli_usage_error("serve", "key add wants a WORKSPACE name");
    } else {
        if (a->json)
            return gpufl__cli_usage_error("serve", "--json is for key list");
        if (!a->tls_cert != !a->tls_key)
            return gpufl__cli_usage_error("serve", "--tls-cert and --tls-key go together");
        if (a->migrate && a->listen_flag[0])
            return gpufl__cli_usage_error("serve", "--migrate only migrates the schema: %s does not apply",
                                          a->listen_flag);
    }
    if (!a->db)
        a->db = getenv("GPUFL_SERVE_DB");
    if (!a->db || !a->db[0])
        return gpufl__cli_usage_error("serve", "no database: give --db CONNINFO or set GPUFL_SERVE_DB");
    return 0;
}

#ifdef GPUFL_HAVE_SERVE
static volatile sig_atomic_t stop_requested;
static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int keys(const serve_args *a)
{
    char why[600];
    PGconn *conn = gpufl__serve_pg_connect(a->db, why, sizeof why);
    int rc = GPUFL_EIO, from, to;
    if (conn)
        rc = gpufl__serve_migrate(conn, &from, &to, why, sizeof why);
    if (rc == 0 && !strcmp(a->key_action, "add"))
        rc = gpufl__serve_key_add(conn, a->key_arg, stdout, why, sizeof why);
    else if (rc == 0 && !strcmp(a->key_action, "list"))
        rc = gpufl__serve_key_list(conn, a->key_arg, a->json, stdout, why, sizeof why);
    else if (rc == 0)
        rc = gpufl__serve_key_revoke(conn, a->key_arg, stdout, why, sizeof why);
    PQfinish(conn);
    if (rc != 0)
        fprintf(stderr, "gpufl serve key %s: %s\n", a->key_action, why);
    return rc == 0 ? GFL_EXIT_OK : GFL_EXIT_FAIL;
}

static int migrate_only(const serve_args *a)
{
    char why[600];
    int from = 0, to = 0, rc = gpufl__serve_migrate_db(a->db, &from, &to, why, sizeof why);
    if (rc != 0) {
        fprintf(stderr, "gpufl serve --migrate: %s\n", why);
        return GFL_EXIT_FAIL;
    }
    if (from == to)
        fprintf(stderr, "gpufl serve --migrate: the schema is at version %d already\n", to);
    else
        fprintf(stderr, "gpufl serve --migrate: schema migrated from version %d to %d\n", from, to);
    return GFL_EXIT_OK;
}
#endif

int gpufl_cmd_serve(int argc, char **argv)
{
    serve_args a = {.listen = ":8080", .api_path = "/api/v1", .workers = 8};
    int rc = parse_args(&a, argc, argv);
    if (rc != 0)
        return rc < 0 ? GFL_EXIT_OK : rc;
#ifndef GPUFL_HAVE_SERVE
    fprintf(stderr, "gpufl serve: built without PostgreSQL client library (libpq-dev)\n");
    return GFL_EXIT_FAIL;
#else
    if (a.key_action)
        return keys(&a);
    if (a.migrate)
        return migrate_only(&a);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-answer is an error return, not a signal (TLS writes) */
    gpufl__serve_config cfg = {.listen = a.listen,
                               .conninfo = a.db,
                               .tls_cert = a.tls_cert,
                               .tls_key = a.tls_key,
                               .api_path = a.api_path,
                               .workers = a.workers};
    return gpufl__serve_run(&cfg, &stop_requested, stderr) == 0 ? GFL_EXIT_OK : GFL_EXIT_FAIL;
#endif
}
