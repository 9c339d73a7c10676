/*
 * The exporter's cost per scrape with 8 GPUs (issue 17, item 5), on the
 * fake NVML (tests/fake_nvml): rendering one reading in the text format
 * and in OpenMetrics (what `gpufl exporter` does once per --interval), and
 * a whole scrape over loopback (connect, GET /metrics, read the answer,
 * close) against the server thread. Baseline in the same run: the NVML
 * reading itself (gpufl__live_sample_now over 8 fake GPUs), which the
 * exporter pays once per interval, not per scrape.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_util.h"
#include "session/live.h"
#include "session/metrics_http.h"
#include "session/metrics_text.h"

#define ROUNDS 15
#define ITERS 200
#define SCRAPES 50

static size_t scrape(const char *address, char *buf, size_t cap)
{
    const char *colon = strrchr(address, ':');
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        perror("bench_exporter: connect");
        exit(1);
    }
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n";
    if (send(fd, req, sizeof req - 1, 0) != (ssize_t)(sizeof req - 1)) {
        perror("bench_exporter: send");
        exit(1);
    }
    size_t got = 0;
    ssize_t n;
    while ((n = recv(fd, buf + got, cap - got, 0)) > 0)
        got += (size_t)n;
    close(fd);
    return got;
}

int main(void)
{
    char machine[512];
    bench_machine(machine, sizeof machine);
    setenv("GPUFL_NVML_LIBRARY", GFL_FAKE_NVML, 1);
    setenv("FAKE_NVML", "devices=8", 1);
    gpufl__live live;
    char err[512];
    if (gpufl__live_open(&live, err, sizeof err) != 0 || !live.have_nvml || live.devices.count != 8) {
        fprintf(stderr, "bench_exporter: the fake NVML did not give 8 GPUs: %s\n", live.nvml_error);
        return 1;
    }
    gpufl__metrics_server *srv;
    if (gpufl__metrics_server_start("127.0.0.1:0", false, &srv, err, sizeof err) != 0) {
        fprintf(stderr, "bench_exporter: %s\n", err);
        return 1;
    }
    static gfl_device_metrics_payload held[GFL_MAX_DEVICES];
    gpufl__live_sample s;
    gpufl__bytebuf text = {0}, om = {0};
    char *answer = malloc(1 << 20);
    size_t answer_len = 0;
    double t_sample[ROUNDS], t_render[ROUNDS], t_scrape[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < ITERS; i++) {
            gpufl__live_sample_now(&live, &s);
            gpufl__metrics_hold(held, &s, live.devices.count);
        }
        uint64_t t1 = bench_now_ns();
        for (int i = 0; i < ITERS; i++) {
            text.len = om.len = 0;
            if (gpufl__metrics_render_devices(&live.devices, s.gpu, "bench-host", false, &text) != 0 ||
                gpufl__metrics_render_devices(&live.devices, s.gpu, "bench-host", true, &om) != 0 ||
                gpufl__metrics_server_publish(srv, text.p, text.len, om.p, om.len) != 0) {
                fprintf(stderr, "bench_exporter: out of memory\n");
                return 1;
            }
        }
        uint64_t t2 = bench_now_ns();
        for (int i = 0; i < SCRAPES; i++)
            answer_len = scrape(gpufl__metrics_server_address(srv), answer, 1 << 20);
        uint64_t t3 = bench_now_ns();
        t_sample[r] = (double)(t1 - t0) / ITERS;
        t_render[r] = (double)(t2 - t1) / ITERS;
        t_scrape[r] = (double)(t3 - t2) / SCRAPES;
    }
    /* the figures are only worth something if the answer was the whole text */
    unsigned series = 0;
    for (const char *p = answer; (p = strstr(p, "\nDCGM_FI_")) != NULL; p++)
        series++;
    if (answer_len == 0 || strncmp(answer, "HTTP/1.1 200 OK", 15) != 0 || series != 15 * 8) {
        fprintf(stderr, "bench_exporter: the scrape got %zu bytes, %u DCGM series (want %u)\n", answer_len, series,
                15 * 8);
        return 1;
    }
    char a[96], b[96], c[96];
    printf("bench_exporter: %s\n", machine);
    printf("  8 GPUs (fake NVML), %u DCGM series, answer %zu bytes (text format)\n", series, answer_len);
    printf("  NVML reading of 8 GPUs (baseline)  %s us\n", bench_spread(t_sample, ROUNDS, 1e3, 1, a, sizeof a));
    printf("  render text + OpenMetrics, publish %s us\n", bench_spread(t_render, ROUNDS, 1e3, 1, b, sizeof b));
    printf("  one scrape over loopback           %s us\n", bench_spread(t_scrape, ROUNDS, 1e3, 1, c, sizeof c));
    printf("  median of %d rounds [min-max]; %d readings, renders and %d scrapes a round\n", ROUNDS, ITERS, SCRAPES);
    gpufl__bytebuf_free(&text);
    gpufl__bytebuf_free(&om);
    free(answer);
    gpufl__metrics_server_stop(srv);
    gpufl__live_close(&live);
    return 0;
}
