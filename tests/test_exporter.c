/*
 * The metrics endpoint (issue 17, item 1): the exposition text of fake
 * NVML GPUs (tests/fake_nvml) under dcgm-exporter's names, labels and
 * units, checked by a small parser of the text format; the HTTP server
 * against a stuck connection and bad requests; `gpufl exporter`'s errors
 * when it cannot listen. tests/exporter_prometheus.sh has a real
 * Prometheus scrape it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "session/live.h"
#include "session/metrics_http.h"
#include "session/metrics_text.h"
#include "test_util.h"

/* ---- a parser of the exposition text ------------------------------------ */

typedef struct sample {
    char name[96];
    char gpu[8], uuid[64], device[16], model[64], host[256], bus[32];
    double value;
} sample;

typedef struct parsed {
    sample s[512];
    unsigned n;
} parsed;

/* Reads one label value at *p (after the opening quote), unescaping;
 * false on a bad escape or no closing quote. */
static bool label_value(const char **p, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *c = *p; *c; c++) {
        char ch = *c;
        if (ch == '"') {
            out[n] = '\0';
            *p = c + 1;
            return true;
        }
        if (ch == '\n')
            return false;
        if (ch == '\\') {
            c++;
            ch = *c == 'n' ? '\n' : *c == '\\' ? '\\' : *c == '"' ? '"' : 0;
            if (!ch)
                return false;
        }
        if (n + 1 < cap)
            out[n++] = ch;
    }
    return false;
}

/* Parses text; fails the test on a line that is not HELP, TYPE, a sample
 * whose family had both before it, or (openmetrics) "# EOF" last. */
static void parse_text(const char *text, bool openmetrics, parsed *out)
{
    char help[64][96], type[64][96];
    unsigned nhelp = 0, ntype = 0;
    out->n = 0;
    bool eof = false;
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        assert_non_null(end); /* every line ends in \n */
        assert_false(eof);    /* nothing after # EOF */
        char buf[2048];
        size_t len = (size_t)(end - line);
        assert_true(len < sizeof buf);
        memcpy(buf, line, len);
        buf[len] = '\0';
        char name[96], kind[32];
        if (!strncmp(buf, "# HELP ", 7)) {
            assert_int_equal(sscanf(buf + 7, "%95s", name), 1);
            assert_true(nhelp < 64);
            strcpy(help[nhelp++], name);
        } else if (!strncmp(buf, "# TYPE ", 7)) {
            assert_int_equal(sscanf(buf + 7, "%95s %31s", name, kind), 2);
            assert_true(!strcmp(kind, "gauge") || !strcmp(kind, "counter"));
            /* HELP comes first, for the same family */
            assert_true(nhelp > 0 && !strcmp(help[nhelp - 1], name));
            strcpy(type[ntype++], name);
        } else if (!strcmp(buf, "# EOF")) {
            assert_true(openmetrics);
            eof = true;
        } else {
            assert_true(buf[0] != '#');
            sample *s = &out->s[out->n];
            memset(s, 0, sizeof *s);
            size_t nl = strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:");
            assert_true(nl > 0 && nl < sizeof s->name);
            memcpy(s->name, buf, nl);
            /* its family is the last TYPE: the same name, or (OpenMetrics
             * counters) the name without _total */
            assert_true(ntype > 0);
            const char *fam = type[ntype - 1];
            size_t fl = strlen(fam);
            bool same = !strcmp(fam, s->name);
            bool total = openmetrics && nl == fl + 6 && !strncmp(s->name, fam, fl) && !strcmp(s->name + fl, "_total");
            assert_true(same || total);
            const char *p = buf + nl;
            if (*p == '{') {
                p++;
                while (*p != '}') {
                    char key[32], val[256];
                    size_t kl = strcspn(p, "=");
                    assert_true(kl > 0 && kl < sizeof key && p[kl] == '=' && p[kl + 1] == '"');
                    memcpy(key, p, kl);
                    key[kl] = '\0';
                    p += kl + 2;
                    assert_true(label_value(&p, val, sizeof val));
                    char *dst = !strcmp(key, "gpu")          ? s->gpu
                                : !strcmp(key, "UUID")       ? s->uuid
                                : !strcmp(key, "device")     ? s->device
                                : !strcmp(key, "modelName")  ? s->model
                                : !strcmp(key, "Hostname")   ? s->host
                                : !strcmp(key, "pci_bus_id") ? s->bus
                                                             : NULL;
                    assert_non_null(dst);
                    snprintf(dst, 64, "%s", val);
                    if (*p == ',')
                        p++;
                }
                p++;
            }
            assert_true(*p == ' ');
            char *vend;
            s->value = strtod(p + 1, &vend);
            assert_true(vend > p + 1 && *vend == '\0');
            out->n++;
            assert_true(out->n < 512);
        }
        line = end + 1;
    }
    assert_true(eof == openmetrics);
}

/* The samples of metric name, by gpu label; how many. */
static unsigned series(const parsed *p, const char *name, const sample *by_gpu[16])
{
    unsigned n = 0;
    for (unsigned i = 0; i < p->n; i++)
        if (!strcmp(p->s[i].name, name)) {
            int g = atoi(p->s[i].gpu);
            if (g >= 0 && g < 16)
                by_gpu[g] = &p->s[i];
            n++;
        }
    return n;
}

/* ---- rendering ---------------------------------------------------------- */

/* Opens the fake NVML with script; renders one reading (after a settled
 * one, so PCIe has a rate) in the format asked. */
static char *render(const char *script, bool openmetrics, const char *host)
{
    tu_setenv("GPUFL_NVML_LIBRARY", GFL_FAKE_NVML_FULL);
    tu_setenv("FAKE_NVML", script);
    gpufl__live live;
    char err[512];
    assert_int_equal(gpufl__live_open(&live, err, sizeof err), 0);
    assert_true(live.have_nvml);
    /* two readings 300 ms apart: the second has no fresh energy (read once
     * a second) but holds the first's, and a PCIe rate */
    gpufl__live_sample s;
    static gfl_device_metrics_payload held[GFL_MAX_DEVICES];
    memset(held, 0, sizeof held);
    gpufl__live_sample_now(&live, &s);
    gpufl__metrics_hold(held, &s, live.devices.count);
    struct timespec wait = {0, 300000000};
    nanosleep(&wait, NULL);
    gpufl__live_sample_now(&live, &s);
    gpufl__metrics_hold(held, &s, live.devices.count);
    gpufl__bytebuf b = {0};
    assert_int_equal(gpufl__metrics_render_devices(&live.devices, s.gpu, host, openmetrics, &b), 0);
    gpufl__metrics_counters c = {.scrapes = 3, .samples = 2};
    assert_int_equal(gpufl__metrics_finish(&c, openmetrics, &b), 0);
    assert_int_equal(gpufl__bytebuf_append(&b, "", 1), 0);
    gpufl__live_close(&live);
    tu_unsetenv("FAKE_NVML");
    return (char *)b.p;
}

static const char *const dcgm_names[] = {
    "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_MEM_CLOCK",
    "DCGM_FI_DEV_MEMORY_TEMP",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_MEM_COPY_UTIL",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "DCGM_FI_PROF_PCIE_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES",
};

static void check_eight_gpus(bool openmetrics)
{
    char *text = render("devices=8", openmetrics, "node-7");
    parsed *p = calloc(1, sizeof *p);
    parse_text(text, openmetrics, p);
    for (size_t m = 0; m < sizeof dcgm_names / sizeof dcgm_names[0]; m++) {
        const sample *g[16] = {0};
        if (series(p, dcgm_names[m], g) != 8)
            fail_msg("%s: want 8 series", dcgm_names[m]);
        for (int i = 0; i < 8; i++) {
            assert_non_null(g[i]);
            char want[64];
            snprintf(want, sizeof want, "GPU-fake-%d", i);
            assert_string_equal(g[i]->uuid, want);
            snprintf(want, sizeof want, "nvidia%d", i);
            assert_string_equal(g[i]->device, want);
            snprintf(want, sizeof want, "Fake GPU %d", i);
            assert_string_equal(g[i]->model, want);
            snprintf(want, sizeof want, "00000000:%02X:00.0", 0x19 + i);
            assert_string_equal(g[i]->bus, want);
            assert_string_equal(g[i]->host, "node-7");
        }
    }
    /* the fake's formulas (tests/fake_nvml/fake_nvml.c) in dcgm-exporter's units */
    const sample *g[16] = {0};
    for (int i = 0; i < 8; i++) {
        series(p, "DCGM_FI_DEV_SM_CLOCK", g);
        assert_true(g[i]->value == 1410 + 10 * i); /* MHz */
        series(p, "DCGM_FI_DEV_MEM_CLOCK", g);
        assert_true(g[i]->value == 2619);
        series(p, "DCGM_FI_DEV_GPU_TEMP", g);
        assert_true(g[i]->value == 40 + i); /* C */
        series(p, "DCGM_FI_DEV_MEMORY_TEMP", g);
        assert_true(g[i]->value == 50 + i);
        series(p, "DCGM_FI_DEV_POWER_USAGE", g);
        assert_true(g[i]->value == 100 + i); /* 100000 + 1000i mW in W */
        series(p, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", g);
        assert_true(g[i]->value >= 1000000.0 * (1 + i) && g[i]->value < 1000000.0 * (1 + i) + 10000); /* mJ */
        series(p, "DCGM_FI_DEV_FB_USED", g);
        double used = g[i]->value; /* (1 + i) GiB + k MiB, in MiB */
        assert_true(used >= 1024.0 * (1 + i) && used < 1024.0 * (1 + i) + 10);
        series(p, "DCGM_FI_DEV_FB_FREE", g);
        assert_true(g[i]->value == 141 * 1024 - 512 - used); /* total - reserved - used */
        series(p, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", g);
        assert_true(g[i]->value == 3 + i);
        series(p, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", g);
        assert_true(g[i]->value == i);
        series(p, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", g);
        assert_true(g[i]->value == 1 || g[i]->value == 4);
        series(p, "DCGM_FI_DEV_GPU_UTIL", g);
        assert_true(g[i]->value >= 0 && g[i]->value <= 100);
        /* the counters step 3e6 (tx) and 5e6 (rx) bytes a read, 300 ms
         * apart here: bytes per second (not NVML's KB/s) */
        series(p, "DCGM_FI_PROF_PCIE_TX_BYTES", g);
        assert_true(g[i]->value > 3e6 / 0.6 && g[i]->value < 3e6 / 0.25);
        series(p, "DCGM_FI_PROF_PCIE_RX_BYTES", g);
        assert_true(g[i]->value > 5e6 / 0.6 && g[i]->value < 5e6 / 0.25);
    }
    const sample *own[16] = {0};
    assert_int_equal(series(p, "gpufl_exporter_scrapes_total", own), 1);
    free(p);
    free(text);
}

static void test_eight_gpus_text(void **state)
{
    (void)state;
    check_eight_gpus(false);
}

static void test_eight_gpus_openmetrics(void **state)
{
    (void)state;
    check_eight_gpus(true);
}

/* A metric NVML did not report is left out, not written as 0. */
static void test_unreported_left_out(void **state)
{
    (void)state;
    char *text = render("devices=3,error.nvmlDeviceGetPowerUsage=3,error.nvmlDeviceGetTemperature:1=3", false, "h");
    parsed *p = calloc(1, sizeof *p);
    parse_text(text, false, p);
    const sample *g[16] = {0};
    assert_int_equal(series(p, "DCGM_FI_DEV_POWER_USAGE", g), 0);
    assert_null(strstr(text, "DCGM_FI_DEV_POWER_USAGE")); /* no HELP for a family without samples */
    assert_int_equal(series(p, "DCGM_FI_DEV_GPU_TEMP", g), 2);
    assert_null(g[1]);
    assert_non_null(g[0]);
    assert_non_null(g[2]);
    free(p);
    free(text);
}

static void test_label_escaping(void **state)
{
    (void)state;
    gpufl__bytebuf b = {0};
    assert_int_equal(gpufl__metrics_label_value(&b, "a\"b\\c\nd"), 0);
    assert_int_equal(gpufl__bytebuf_append(&b, "", 1), 0);
    assert_string_equal((char *)b.p, "a\\\"b\\\\c\\nd");
    gpufl__bytebuf_free(&b);
    /* a host name that needs escaping still parses back to itself */
    char *text = render("devices=1", false, "we\"ird\\host");
    parsed *p = calloc(1, sizeof *p);
    parse_text(text, false, p);
    assert_true(p->n > 0);
    assert_string_equal(p->s[0].host, "we\"ird\\host");
    free(p);
    free(text);
}

/* ---- the server --------------------------------------------------------- */

static int connect_to(const char *address)
{
    const char *colon = strrchr(address, ':');
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

/* Sends request (len bytes), reads the answer until the server closes or
 * timeout_ms passes; returns it (malloc'd) or NULL on timeout. */
static char *exchange(const char *address, const void *request, size_t len, int timeout_ms)
{
    int fd = connect_to(address);
    size_t off = 0;
    while (off < len) {
        ssize_t n = send(fd, (const char *)request + off, len - off, MSG_NOSIGNAL);
        if (n <= 0)
            break; /* the server may answer and close before taking it all */
        off += (size_t)n;
    }
    size_t cap = 1 << 20, got = 0;
    char *buf = malloc(cap);
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, timeout_ms) <= 0) {
            free(buf);
            close(fd);
            return NULL;
        }
        ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    close(fd);
    return buf;
}

static char *get(const char *address, const char *request) { return exchange(address, request, strlen(request), 3000); }

static gpufl__metrics_server *start_server(bool openmetrics)
{
    gpufl__metrics_server *s;
    char err[256];
    assert_int_equal(gpufl__metrics_server_start("127.0.0.1:0", openmetrics, &s, err, sizeof err), 0);
    static const char text[] = "# HELP x An x.\n# TYPE x gauge\nx 1\n";
    static const char om[] = "# HELP y A y.\n# TYPE y gauge\ny 2\n";
    assert_int_equal(gpufl__metrics_server_publish(s, text, sizeof text - 1, om, sizeof om - 1), 0);
    return s;
}

static void test_server_answers(void **state)
{
    (void)state;
    gpufl__metrics_server *s = start_server(false);
    const char *a = gpufl__metrics_server_address(s);
    char *r = get(a, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_non_null(r);
    assert_true(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17));
    assert_non_null(strstr(r, "Content-Type: text/plain; version=0.0.4"));
    assert_non_null(strstr(r, "\r\n\r\n# HELP x An x.\n# TYPE x gauge\nx 1\n"));
    assert_non_null(strstr(r, "gpufl_exporter_scrapes_total 1\n"));
    assert_null(strstr(r, "# EOF"));
    free(r);
    /* OpenMetrics when the scrape asks, as Prometheus does */
    r = get(a, "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n\r\n");
    assert_non_null(r);
    assert_non_null(strstr(r, "Content-Type: application/openmetrics-text; version=1.0.0"));
    assert_non_null(strstr(r, "\ny 2\n"));
    assert_non_null(strstr(r, "\ngpufl_exporter_scrapes_total 2\n"));
    assert_true(!strcmp(r + strlen(r) - 6, "# EOF\n"));
    free(r);
    r = get(a, "GET / HTTP/1.0\r\n\r\n");
    assert_non_null(strstr(r, "200 OK"));
    assert_non_null(strstr(r, "href=\"/metrics\""));
    free(r);
    gpufl__metrics_server_stop(s);

    s = start_server(true); /* --openmetrics: without an Accept header too */
    r = get(gpufl__metrics_server_address(s), "GET /metrics HTTP/1.1\r\n\r\n");
    assert_non_null(strstr(r, "# EOF\n"));
    free(r);
    gpufl__metrics_server_stop(s);
}

static void test_bad_requests(void **state)
{
    (void)state;
    gpufl__metrics_server *s = start_server(false);
    const char *a = gpufl__metrics_server_address(s);
    static const struct {
        const char *request, *status;
    } cases[] = {
        {"POST /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 405 "},
        {"DELETE / HTTP/1.1\r\n\r\n", "HTTP/1.1 405 "},
        {"GET /other HTTP/1.1\r\n\r\n", "HTTP/1.1 404 "},
        {"GET /metricsx HTTP/1.1\r\n\r\n", "HTTP/1.1 404 "},
        {"hello\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /metrics SPDY/3\r\n\r\n", "HTTP/1.1 400 "},
        {"GET /met\x01rics HTTP/1.1\r\n\r\n", "HTTP/1.1 400 "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *r = get(a, cases[i].request);
        assert_non_null(r);
        if (strncmp(r, cases[i].status, strlen(cases[i].status)) != 0)
            fail_msg("'%s' answered '%.40s', want '%s'", cases[i].request, r, cases[i].status);
        free(r);
    }
    /* binary with NUL bytes, and a head too large */
    static const unsigned char binary[] = {0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03};
    char *r = exchange(a, binary, sizeof binary, 3000);
    assert_non_null(r);
    assert_true(!strncmp(r, "HTTP/1.1 400 ", 13));
    free(r);
    size_t big = 64 * 1024;
    char *huge = malloc(big);
    memcpy(huge, "GET /", 5);
    memset(huge + 5, 'a', big - 5);
    r = exchange(a, huge, big, 3000);
    assert_non_null(r);
    assert_true(!strncmp(r, "HTTP/1.1 431 ", 13));
    free(r);
    free(huge);
    /* and it still answers */
    r = get(a, "GET /metrics HTTP/1.1\r\n\r\n");
    assert_true(!strncmp(r, "HTTP/1.1 200 OK", 15));
    free(r);
    gpufl__metrics_counters c;
    gpufl__metrics_server_counters(s, &c);
    assert_int_equal(c.bad_requests, 9);
    assert_int_equal(c.scrapes, 1);
    gpufl__metrics_server_stop(s);
}

/* Connections that send nothing (or half a request) and hold the socket
 * do not stop another scrape from being answered: well before the 5 s a
 * stuck connection is given (3 s leaves room for a loaded machine; a
 * server that waited on the stuck ones would take 5). */
static void test_stuck_scraper(void **state)
{
    (void)state;
    gpufl__metrics_server *s = start_server(false);
    const char *a = gpufl__metrics_server_address(s);
    int stuck[8];
    for (int i = 0; i < 8; i++) {
        stuck[i] = connect_to(a);
        if (i % 2)
            assert_int_equal(send(stuck[i], "GET /metr", 9, 0), 9);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *r = exchange(a, "GET /metrics HTTP/1.1\r\n\r\n", 25, 3000);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_non_null(r);
    assert_true(!strncmp(r, "HTTP/1.1 200 OK", 15));
    free(r);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_true(ms < 3000);
    /* publishing is not held up either */
    assert_int_equal(gpufl__metrics_server_publish(s, "a 1\n", 4, "a 1\n", 4), 0);
    for (int i = 0; i < 8; i++)
        close(stuck[i]);
    gpufl__metrics_server_stop(s);
}

/* A stuck connection is closed at its deadline (5 s). */
static void test_stuck_closed(void **state)
{
    (void)state;
    gpufl__metrics_server *s = start_server(false);
    int fd = connect_to(gpufl__metrics_server_address(s));
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 8000), 1);
    char c;
    assert_int_equal(recv(fd, &c, 1, 0), 0); /* closed, no answer */
    close(fd);
    gpufl__metrics_counters k;
    gpufl__metrics_server_counters(s, &k);
    assert_int_equal(k.timeouts, 1);
    gpufl__metrics_server_stop(s);
}

static void test_listen_errors(void **state)
{
    (void)state;
    gpufl__metrics_server *s = start_server(false), *t;
    char err[256];
    const char *a = gpufl__metrics_server_address(s);
    assert_int_equal(gpufl__metrics_server_start(a, false, &t, err, sizeof err), GPUFL_EIO);
    assert_null(t);
    assert_non_null(strstr(err, a));
    assert_non_null(strstr(err, "in use"));
    static const char *const bad[] = {"nonsense", "127.0.0.1:", "127.0.0.1:99999", ":9x", "[::1:80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(gpufl__metrics_server_start(bad[i], false, &t, err, sizeof err), GPUFL_EINVAL);
        assert_non_null(strstr(err, bad[i]));
    }
    assert_int_equal(gpufl__metrics_server_start("no-such-host.invalid:9400", false, &t, err, sizeof err), GPUFL_EIO);
    assert_non_null(strstr(err, "no-such-host.invalid:9400"));
    gpufl__metrics_server_stop(s);
}

/* `gpufl exporter` says which address it cannot listen on, and exits 1. */
static void test_cli_port_taken(void **state)
{
    (void)state;
    gpufl__metrics_server *s = start_server(false);
    const char *a = gpufl__metrics_server_address(s);
    tu_setenv("GPUFL_NVML_LIBRARY", GFL_FAKE_NVML_FULL);
    char *out = NULL, *err = NULL;
    int status = tu_run_subcommand(GFL_CLI, "exporter", (const char *const[]){"--listen", a, "--duration", "1", NULL},
                                   &out, &err);
    assert_int_equal(status, 1);
    assert_non_null(strstr(err, "cannot listen on"));
    assert_non_null(strstr(err, a));
    free(out);
    free(err);
    status = tu_run_subcommand(GFL_CLI, "exporter", (const char *const[]){"--interval", "5", NULL}, &out, &err);
    assert_int_equal(status, 64);
    free(out);
    free(err);
    gpufl__metrics_server_stop(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eight_gpus_text),     cmocka_unit_test(test_eight_gpus_openmetrics),
        cmocka_unit_test(test_unreported_left_out), cmocka_unit_test(test_label_escaping),
        cmocka_unit_test(test_server_answers),      cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_stuck_scraper),       cmocka_unit_test(test_stuck_closed),
        cmocka_unit_test(test_listen_errors),       cmocka_unit_test(test_cli_port_taken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
