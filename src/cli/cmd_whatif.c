/*
 * `gpufl whatif SESSION [--scope NAME] [--kernel NAME|~REGEX --speedup X]
 * [--remove-sync ID]... [--overlap-copies] [--host-gap-scale F]
 * [--from T --to T] [--format text|json] [-o FILE]`: the session re-scheduled with a change
 * (analyze/ana_whatif.h): the step time, GPU busy and idle time before and
 * after, and the critical path after. Without a change it replays the
 * session as recorded, which says how well the model fits it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_whatif_run.h"
#include "cli/cli.h"
#include "gpufl/trace.h"
#include "present/report/whatif_out.h"
#include "present/view/view.h"

#define MAX_REMOVE 256

int gpufl_cmd_whatif(int argc, char **argv)
{
    enum { O_SCOPE = 1, O_KERNEL, O_SPEEDUP, O_REMOVE, O_OVERLAP, O_GAPS, O_FROM, O_TO };
    static const struct option opts[] = {{"scope", required_argument, 0, O_SCOPE},
                                         {"kernel", required_argument, 0, O_KERNEL},
                                         {"speedup", required_argument, 0, O_SPEEDUP},
                                         {"remove-sync", required_argument, 0, O_REMOVE},
                                         {"overlap-copies", no_argument, 0, O_OVERLAP},
                                         {"host-gap-scale", required_argument, 0, O_GAPS},
                                         {"from", required_argument, 0, O_FROM},
                                         {"to", required_argument, 0, O_TO},
                                         {"format", required_argument, 0, 'f'},
                                         {"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    gpufl__whatif_change ch = gpufl__whatif_none();
    static uint64_t remove[MAX_REMOVE];
    const char *scope = NULL, *format = "text", *output = NULL;
    bool has_speedup = false, has_from = false, has_to = false;
    uint64_t from = 0, to = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
        switch (c) {
        case O_SCOPE: scope = optarg; break;
        case O_KERNEL: ch.kernel = optarg; break;
        case O_SPEEDUP:
            if (!gpufl__cli_number(optarg, 0, 1e6, &ch.speedup) || !(ch.speedup > 0))
                return gpufl__cli_usage_error(
                    "whatif", "bad --speedup '%s': expected a factor above 0 (2: twice as fast)", optarg);
            has_speedup = true;
            break;
        case O_REMOVE: {
            char *end;
            errno = 0;
            unsigned long long id = strtoull(optarg, &end, 10);
            if (optarg[0] < '0' || optarg[0] > '9' || *end || errno)
                return gpufl__cli_usage_error(
                    "whatif", "bad --remove-sync '%s': expected a sync id (gpufl graph lists them)", optarg);
            if (ch.nremove == MAX_REMOVE)
                return gpufl__cli_usage_error("whatif", "more than %d --remove-sync", MAX_REMOVE);
            remove[ch.nremove++] = id;
            break;
        }
        case O_OVERLAP: ch.overlap_copies = true; break;
        case O_GAPS:
            if (!gpufl__cli_number(optarg, 0, 1e6, &ch.host_gap_scale))
                return gpufl__cli_usage_error("whatif", "bad --host-gap-scale '%s': expected a factor of at least 0",
                                              optarg);
            break;
        case O_FROM:
        case O_TO:
            if (gpufl__view_parse_time(optarg, c == O_FROM ? &from : &to) != 0)
                return gpufl__cli_usage_error("whatif",
                                              "bad %s '%s': expected a time after the session's start, such as "
                                              "1.5s, 250ms, 40us or 12345 (ns)",
                                              c == O_FROM ? "--from" : "--to", optarg);
            *(c == O_FROM ? &has_from : &has_to) = true;
            break;
        case 'f': format = optarg; break;
        case 'o': output = optarg; break;
        case 'h': return gpufl__cli_help("whatif");
        default:
            return gpufl__cli_usage_error("whatif", "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    ch.remove = remove;
    if (optind >= argc)
        return gpufl__cli_usage_error("whatif", "which SESSION?");
    if (optind < argc - 1)
        return gpufl__cli_usage_error("whatif", "one SESSION only ('%s' is a second)", argv[optind + 1]);
    if (ch.kernel && !has_speedup)
        return gpufl__cli_usage_error("whatif", "--kernel needs --speedup (how much faster)");
    if (has_speedup && !ch.kernel)
        return gpufl__cli_usage_error("whatif", "--speedup needs --kernel (which kernels)");
    if (has_from != has_to)
        return gpufl__cli_usage_error("whatif", "a window needs both --from and --to");
    if (has_from && scope)
        return gpufl__cli_usage_error("whatif", "--scope or a window (--from, --to), not both");
    if (has_to && to <= from)
        return gpufl__cli_usage_error("whatif", "the window is empty: --to must be after --from");
    bool json = !strcmp(format, "json");
    if (!json && strcmp(format, "text") != 0)
        return gpufl__cli_usage_error("whatif", "unknown format '%s': text or json", format);
    const char *path = argv[optind];
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl whatif: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    gpufl__cli_note_trace("whatif", t);
    gpufl__whatif w;
    uint64_t start = gpufl_trace_get_info(t)->start_ns;
    int rc = has_from ? gpufl__whatif_run_window(t, start + from, start + to, &ch, &w, err, sizeof err)
                      : gpufl__whatif_run(t, scope, &ch, &w, err, sizeof err);
    if (rc == GPUFL_EINVAL) {
        gpufl_trace_close(t);
        return gpufl__cli_usage_error("whatif", "%s", err);
    }
    if (rc) {
        fprintf(stderr, "gpufl whatif: %s: %s\n", path, err);
        gpufl_trace_close(t);
        return GFL_EXIT_FAIL;
    }
    FILE *out = output ? fopen(output, "w") : stdout;
    if (!out) {
        fprintf(stderr, "gpufl whatif: %s: cannot create: %s\n", output, strerror(errno));
        rc = GPUFL_EIO;
    } else {
        rc = json ? gpufl__whatif_write_json(&w, &ch, out) : gpufl__whatif_write_text(&w, &ch, out);
        if (output && fclose(out) != 0 && rc == 0)
            rc = GPUFL_EIO;
        if (rc)
            fprintf(stderr, "gpufl whatif: writing %s failed\n", output ? output : "the output");
    }
    gpufl__whatif_free(&w);
    gpufl_trace_close(t);
    return rc ? GFL_EXIT_FAIL : GFL_EXIT_OK;
}
