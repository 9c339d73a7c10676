/*
 * `gpufl exporter`: the GPUs' live metrics for Prometheus, under
 * dcgm-exporter's names and labels so its dashboards work unchanged
 * (session/metrics_text.h). The main thread reads NVML every --interval
 * and publishes the rendered text; the HTTP server's thread
 * (session/metrics_http.h) answers scrapes from the last one, so a scrape
 * costs no NVML call and a stuck scraper delays no reading.
 */
#include <getopt.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/clock.h"
#include "session/live.h"
#include "session/metrics_http.h"

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

typedef struct exporter_args {
    const char *listen;
    unsigned interval_ms;
    double duration_s; /* 0 = until a signal */
    bool openmetrics;
} exporter_args;

static int parse_args(exporter_args *a, int argc, char **argv)
{
    enum { O_LISTEN = 1, O_INTERVAL, O_DURATION, O_OPENMETRICS };
    static const struct option opts[] = {{"listen", required_argument, 0, O_LISTEN},
                                         {"interval", required_argument, 0, O_INTERVAL},
                                         {"duration", required_argument, 0, O_DURATION},
                                         {"openmetrics", no_argument, 0, O_OPENMETRICS},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    double v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_LISTEN: a->listen = optarg; break;
        case O_INTERVAL:
            if (!gpufl__cli_number(optarg, 100, 3600000, &v))
                goto bad;
            a->interval_ms = (unsigned)v;
            break;
        case O_DURATION:
            if (!gpufl__cli_number(optarg, 0.001, 1e7, &a->duration_s))
                goto bad;
            break;
        case O_OPENMETRICS: a->openmetrics = true; break;
        case 'h': gpufl__cli_help("exporter"); return -1;
        default: goto bad;
        }
    }
    if (optind < argc)
        return gpufl__cli_usage_error("exporter", "takes no operand ('%s')", argv[optind]);
    return 0;
bad:
    return gpufl__cli_usage_error("exporter", "bad argument '%s'",
                                  optind > 0 && optind <= argc ? argv[optind - 1] : "");
}

/* Renders one reading in both formats and hands it to the server. */
static int publish(gpufl__metrics_server *srv, gpufl__live *live, const char *host, gfl_device_metrics_payload *held)
{
    gpufl__live_sample s;
    gpufl__live_sample_now(live, &s);
    gpufl__metrics_hold(held, &s, live->devices.count);
    gpufl__bytebuf text = {0}, om = {0};
    int rc = gpufl__metrics_render_devices(&live->devices, s.gpu, host, false, &text);
    rc = rc ? rc : gpufl__metrics_render_devices(&live->devices, s.gpu, host, true, &om);
    rc = rc ? rc : gpufl__metrics_server_publish(srv, text.p, text.len, om.p, om.len);
    gpufl__bytebuf_free(&text);
    gpufl__bytebuf_free(&om);
    return rc;
}

int gpufl_cmd_exporter(int argc, char **argv)
{
    exporter_args a = {.listen = ":9400", .interval_ms = 1000};
    int rc = parse_args(&a, argc, argv);
    if (rc != 0)
        return rc < 0 ? GFL_EXIT_OK : rc;

    char err[600];
    gpufl__live live;
    if (gpufl__live_open(&live, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl exporter: %s\n", err);
        return GFL_EXIT_FAIL;
    }
    if (!live.have_nvml) {
        fprintf(stderr, "gpufl exporter: no NVIDIA driver: %s\n", live.nvml_error);
        gpufl__live_close(&live);
        return GFL_EXIT_NO_DRIVER;
    }
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "unknown");

    static gfl_device_metrics_payload held[GFL_MAX_DEVICES]; /* static: large, and one exporter a process */
    gpufl__metrics_server *srv;
    if (gpufl__metrics_server_start(a.listen, a.openmetrics, &srv, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl exporter: %s\n", err);
        gpufl__live_close(&live);
        return GFL_EXIT_FAIL;
    }
    /* the first reading before the banner: a scraper that waits for it
     * never gets an empty answer */
    if (publish(srv, &live, host, held) != 0)
        fprintf(stderr, "gpufl exporter: out of memory rendering the metrics\n");
    fprintf(stderr, "gpufl exporter: serving http://%s/metrics (%u GPU%s, a reading every %u ms)\n",
            gpufl__metrics_server_address(srv), live.devices.count, live.devices.count == 1 ? "" : "s", a.interval_ms);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: the sleep must end */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    uint64_t interval_ns = (uint64_t)a.interval_ms * 1000000u;
    uint64_t start = gpufl__mono_ns(), next = start + interval_ns;
    uint64_t end = a.duration_s > 0 ? start + (uint64_t)(a.duration_s * 1e9) : UINT64_MAX;
    while (!stop_requested) {
        uint64_t now = gpufl__mono_ns();
        if (now >= end)
            break;
        if (now < next) {
            uint64_t wait = (next < end ? next : end) - now;
            struct timespec ts = {(time_t)(wait / 1000000000u), (long)(wait % 1000000000u)};
            nanosleep(&ts, NULL); /* a signal ends it early */
            continue;
        }
        if (publish(srv, &live, host, held) != 0)
            fprintf(stderr, "gpufl exporter: out of memory rendering the metrics\n");
        /* a reading that took longer than the interval delays the next,
         * it does not start a burst */
        next = next + interval_ns > now ? next + interval_ns : now + interval_ns;
    }
    gpufl__metrics_server_stop(srv);
    gpufl__live_close(&live);
    return GFL_EXIT_OK;
}
