/*
 * `gpufl view SESSION [--from T] [--to T] [--width N]`: a session's
 * timeline in the terminal (src/present/view/view.h draws it). T is a time after
 * the session's start (1.5s, 250ms, 40us, or ns); the width defaults to the
 * terminal's, or 100 when stdout is not a terminal. Colours only when
 * stdout is a terminal and NO_COLOR is not set.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gpufl/trace.h"
#include "present/view/view.h"

#define DEFAULT_WIDTH 100

static int bad_time(const char *opt, const char *text)
{
    return gpufl__cli_usage_error("view",
                                  "bad %s '%s': expected a time after the session's start, such as 1.5s, "
                                  "250ms, 40us or 12345 (ns)",
                                  opt, text);
}

static unsigned terminal_width(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
        return DEFAULT_WIDTH;
    if (ws.ws_col < GPUFL__VIEW_MIN_WIDTH)
        return GPUFL__VIEW_MIN_WIDTH;
    return ws.ws_col > GPUFL__VIEW_MAX_WIDTH ? GPUFL__VIEW_MAX_WIDTH : ws.ws_col;
}

int gpufl_cmd_view(int argc, char **argv)
{
    enum { O_FROM = 1, O_TO, O_WIDTH };
    static const struct option opts[] = {{"from", required_argument, 0, O_FROM},
                                         {"to", required_argument, 0, O_TO},
                                         {"width", required_argument, 0, O_WIDTH},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    gpufl__view_opts o = {.width = 0};
    bool has_width = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_FROM:
            if (gpufl__view_parse_time(optarg, &o.from_ns) != 0)
                return bad_time("--from", optarg);
            break;
        case O_TO:
            if (gpufl__view_parse_time(optarg, &o.to_ns) != 0)
                return bad_time("--to", optarg);
            o.has_to = true;
            break;
        case O_WIDTH: {
            char *end;
            unsigned long w = strtoul(optarg, &end, 10);
            if (optarg[0] < '0' || optarg[0] > '9' || *end || w < GPUFL__VIEW_MIN_WIDTH || w > GPUFL__VIEW_MAX_WIDTH)
                return gpufl__cli_usage_error("view", "bad --width '%s': expected %d to %d columns", optarg,
                                              GPUFL__VIEW_MIN_WIDTH, GPUFL__VIEW_MAX_WIDTH);
            o.width = (unsigned)w;
            has_width = true;
            break;
        }
        case 'h': return gpufl__cli_help("view");
        default:
            return gpufl__cli_usage_error("view", "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    if (optind >= argc)
        return gpufl__cli_usage_error("view", "which SESSION?");
    if (optind < argc - 1)
        return gpufl__cli_usage_error("view", "one SESSION only ('%s' is a second)", argv[optind + 1]);
    if (o.has_to && o.to_ns <= o.from_ns)
        return gpufl__cli_usage_error("view", "the window is empty: --to must be after --from");
    const char *path = argv[optind];
    if (!has_width)
        o.width = terminal_width();
    o.color = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL;

    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl view: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    gpufl__cli_note_trace("view", t);
    char *text;
    int rc = gpufl__view_render(t, &o, &text, err, sizeof err);
    gpufl_trace_close(t);
    if (rc == GPUFL_EINVAL)
        return gpufl__cli_usage_error("view", "%s", err);
    if (rc != 0) {
        fprintf(stderr, "gpufl view: %s: %s\n", path, err);
        return GFL_EXIT_FAIL;
    }
    fputs(text, stdout);
    free(text);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gpufl view: writing the output failed\n");
        return GFL_EXIT_FAIL;
    }
    return GFL_EXIT_OK;
}
