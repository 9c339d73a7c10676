/*
 * `gpufl graph SESSION -f dot|json [--from T] [--to T] [-o FILE]`: the
 * session's dependency graph (analyze/ana_graph.h): GPU work, launch calls,
 * syncs and scope/NVTX marks, and what had to happen before what (host
 * order, launches, streams, syncs, copy engines; event waits and CUDA
 * graphs' insides inferred from timing, marked so). T is a time after the
 * session's start, as gpufl view takes it (1.5s, 250ms, 40us, or ns).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analyze/ana_graph.h"
#include "cli/cli.h"
#include "gpufl/trace.h"
#include "present/report/whatif_out.h"
#include "present/view/view.h"

static int bad_time(const char *opt, const char *text)
{
    return gpufl__cli_usage_error("graph",
                                  "bad %s '%s': expected a time after the session's start, such as 1.5s, "
                                  "250ms, 40us or 12345 (ns)",
                                  opt, text);
}

int gpufl_cmd_graph(int argc, char **argv)
{
    enum { O_FROM = 1, O_TO };
    static const struct option opts[] = {{"from", required_argument, 0, O_FROM}, {"to", required_argument, 0, O_TO},
                                         {"format", required_argument, 0, 'f'},  {"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    uint64_t from = 0, to = 0;
    bool has_to = false;
    const char *format = NULL, *output = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
        switch (c) {
        case O_FROM:
            if (gpufl__view_parse_time(optarg, &from) != 0)
                return bad_time("--from", optarg);
            break;
        case O_TO:
            if (gpufl__view_parse_time(optarg, &to) != 0)
                return bad_time("--to", optarg);
            has_to = true;
            break;
        case 'f': format = optarg; break;
        case 'o': output = optarg; break;
        case 'h': return gpufl__cli_help("graph");
        default:
            return gpufl__cli_usage_error("graph", "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    if (optind >= argc)
        return gpufl__cli_usage_error("graph", "which SESSION?");
    if (optind < argc - 1)
        return gpufl__cli_usage_error("graph", "one SESSION only ('%s' is a second)", argv[optind + 1]);
    if (!format)
        return gpufl__cli_usage_error("graph", "which format? -f dot or -f json");
    bool dot = !strcmp(format, "dot");
    if (!dot && strcmp(format, "json") != 0)
        return gpufl__cli_usage_error("graph", "unknown format '%s': dot or json", format);
    if (has_to && to <= from)
        return gpufl__cli_usage_error("graph", "the window is empty: --to must be after --from");
    const char *path = argv[optind];
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl graph: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    gpufl__cli_note_trace("graph", t);
    gpufl__graph g;
    int rc = gpufl__graph_build(t, &g);
    if (rc != 0) {
        fprintf(stderr, "gpufl graph: %s: out of memory building the graph\n", path);
        gpufl_trace_close(t);
        return GFL_EXIT_FAIL;
    }
    uint64_t start = gpufl_trace_get_info(t)->start_ns;
    uint64_t lo = start + from, hi = has_to ? start + to : UINT64_MAX;
    FILE *out = output ? fopen(output, "w") : stdout;
    if (!out) {
        fprintf(stderr, "gpufl graph: %s: cannot create: %s\n", output, strerror(errno));
        rc = GPUFL_EIO;
    } else {
        rc = dot ? gpufl__graph_write_dot(&g, lo, hi, out) : gpufl__graph_write_json(&g, lo, hi, out);
        if (output && fclose(out) != 0 && rc == 0)
            rc = GPUFL_EIO;
        if (rc)
            fprintf(stderr, "gpufl graph: writing %s failed\n", output ? output : "the output");
    }
    gpufl__graph_free(&g);
    gpufl_trace_close(t);
    return rc ? GFL_EXIT_FAIL : GFL_EXIT_OK;
}
