/*
 * metrics_listen (issue 17, item 1): a recorded program serves Prometheus
 * metrics. Whole sessions on the fake NVML (tests/fake_nvml) and, where the
 * CUPTI plugin is built, the fake CUPTI (tests/fake_cupti), scraped over
 * HTTP on a free port:
 *   - the DCGM series with their exact labels and the fake's values, from
 *     the sampler's own readings (no system sampling asked: it runs for the
 *     endpoint alone, recording nothing);
 *   - the scope histogram's counts equal to the scopes recorded, buckets
 *     cumulative up to +Inf;
 *   - kernel time by scope equal to the fake kernels' durations;
 *   - drops and bytes written equal to session.json's figures;
 *   - a scraper that connects and never reads does not slow recording;
 *   - an address that cannot be listened on is a warning, and the session
 *     records anyway.
 * tests/exporter_prometheus.py has Debian's Prometheus scrape a recorded
 * program too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "collect/metrics_agg.h"
#include "gpufl/gpufl.h"
#include "test_util.h"

#ifdef GFL_FAKE_CUPTI
#include "fake_cupti.h"
static struct {
    void *lib;
    __typeof__(&fake_cupti_launch_kernel) launch_kernel;
} fake;
#endif

static char *log_path;

static int teardown(void **state)
{
    (void)state;
    tu_end_session(&log_path);
    tu_unsetenv("FAKE_NVML");
    return 0;
}

/* ---- HTTP ----------------------------------------------------------------- */

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

static int connect_port(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

/* GET /metrics (OpenMetrics when om); the body, malloc'd. */
static char *scrape(int port, bool om)
{
    int fd = connect_port(port);
    char req[256];
    int n = snprintf(req, sizeof req, "GET /metrics HTTP/1.1\r\nHost: x\r\n%s\r\n",
                     om ? "Accept: application/openmetrics-text;version=1.0.0\r\n" : "");
    assert_int_equal(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
    size_t cap = 4 << 20, got = 0;
    char *buf = malloc(cap);
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&pfd, 1, 5000), 1);
        ssize_t r = recv(fd, buf + got, cap - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    close(fd);
    assert_true(!strncmp(buf, "HTTP/1.1 200 OK\r\n", 17));
    char *body = strstr(buf, "\r\n\r\n");
    assert_non_null(body);
    char *out = strdup(body + 4);
    free(buf);
    return out;
}

/* The value of the sample whose name and labels are exactly series; -1
 * when there is none. */
static double value_of(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        if (!strncmp(line, series, n) && line[n] == ' ')
            return strtod(line + n + 1, NULL);
    return -1;
}

/* Scrapes until want appears (the sampler and the collector publish on
 * their own periods); fails after 10 s. */
static char *scrape_until(int port, const char *want)
{
    for (int i = 0; i < 100; i++) {
        char *t = scrape(port, false);
        if (strstr(t, want))
            return t;
        free(t);
        usleep(100000);
    }
    fail_msg("no '%s' in 10 s of scrapes", want);
    return NULL;
}

/* ---- sessions ----------------------------------------------------------- */

static gpufl_options options(const char *listen)
{
    gpufl_options o;
    gpufl_options_init(&o);
    log_path = tu_mkdtemp("mlisten");
    o.app_name = "mlisten";
    o.log_path = log_path;
    o.metrics_listen = listen;
    return o;
}

/* options() listening on a free port of `host` ("" for every address),
 * the port to *port; the address lives until the next call. */
static gpufl_options options_free_port(const char *host, int *port)
{
    static char addr[64];
    *port = free_port();
    snprintf(addr, sizeof addr, "%s:%d", host, *port);
    return options(addr);
}

static void nested_scopes(unsigned outer, unsigned inner)
{
    for (unsigned i = 0; i < outer; i++) {
        gpufl_scope a = gpufl_scope_begin("alpha");
        for (unsigned j = 0; j < inner; j++) {
            gpufl_scope b = gpufl_scope_begin("beta \"quoted\"");
            gpufl_scope_end(b);
        }
        gpufl_scope_end(a);
        if (i % 64 == 63)
            usleep(2000); /* well inside the default ring: nothing dropped */
    }
}

static void test_devices_and_scopes(void **state)
{
    (void)state;
    tu_setenv("GPUFL_NVML_LIBRARY", GFL_FAKE_NVML_FULL);
    tu_setenv("FAKE_NVML", "devices=2");
    int port;
    gpufl_options o = options_free_port("127.0.0.1", &port);
    assert_true(gpufl_init(&o));
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    nested_scopes(1000, 3);

    char want[128];
    snprintf(want, sizeof want, "gpufl_scope_duration_seconds_count{scope=\"alpha\"} 1000\n");
    char *t = scrape_until(port, want);
    /* the fake's GPUs under dcgm-exporter's names and labels, values in its units */
    for (int i = 0; i < 2; i++) {
        char series[768];
        char labels[512];
        snprintf(labels, sizeof labels,
                 "{gpu=\"%d\",UUID=\"GPU-fake-%d\",pci_bus_id=\"00000000:%02X:00.0\",device=\"nvidia%d\","
                 "modelName=\"Fake GPU %d\",Hostname=\"%s\"}",
                 i, i, 0x19 + i, i, i, host);
        snprintf(series, sizeof series, "DCGM_FI_DEV_GPU_TEMP%s", labels);
        assert_true(value_of(t, series) == 40 + i);
        snprintf(series, sizeof series, "DCGM_FI_DEV_SM_CLOCK%s", labels);
        assert_true(value_of(t, series) == 1410 + 10 * i);
        snprintf(series, sizeof series, "DCGM_FI_DEV_POWER_USAGE%s", labels);
        assert_true(value_of(t, series) == 100 + i);
        snprintf(series, sizeof series, "DCGM_FI_DEV_FB_USED%s", labels);
        double used = value_of(t, series);
        assert_true(used >= 1024.0 * (1 + i) && used < 1024.0 * (1 + i) + 10);
        snprintf(series, sizeof series, "DCGM_FI_DEV_GPU_UTIL%s", labels);
        double util = value_of(t, series);
        assert_true(util >= 0 && util <= 100);
        snprintf(series, sizeof series, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS%s", labels);
        assert_true(value_of(t, series) >= 0);
        snprintf(series, sizeof series, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL%s", labels);
        assert_true(value_of(t, series) == i);
    }
    assert_non_null(strstr(t, "# HELP DCGM_FI_DEV_GPU_TEMP "));
    assert_non_null(strstr(t, "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"));
    /* the histogram: HELP and TYPE, cumulative buckets ending in +Inf = count */
    assert_non_null(strstr(t, "# TYPE gpufl_scope_duration_seconds histogram\n"));
    assert_non_null(strstr(t, "# HELP gpufl_scope_duration_seconds "));
    const char *beta = "scope=\"beta \\\"quoted\\\"\"";
    char series[256];
    snprintf(series, sizeof series, "gpufl_scope_duration_seconds_count{%s}", beta);
    assert_true(value_of(t, series) == 3000);
    static const char *const les[] = {"1e-06", "1e-05", "0.0001", "0.001", "0.005", "0.01", "0.025",
                                      "0.05",  "0.1",   "0.25",   "0.5",   "1",     "2.5",  "5",
                                      "10",    "30",    "60",     "300",   "+Inf"};
    double last = 0;
    for (size_t i = 0; i < sizeof les / sizeof les[0]; i++) {
        snprintf(series, sizeof series, "gpufl_scope_duration_seconds_bucket{scope=\"alpha\",le=\"%s\"}", les[i]);
        double v = value_of(t, series);
        assert_true(v >= last);
        last = v;
        /* the le written is the bound the collector counts against */
        if (i < GFL_METRICS_BUCKETS)
            assert_true(llround(strtod(les[i], NULL) * 1e9) == (long long)gpufl__metrics_bounds_ns[i]);
    }
    assert_true(last == 1000);
    double sum = value_of(t, "gpufl_scope_duration_seconds_sum{scope=\"alpha\"}");
    assert_true(sum > 0 && sum < 10);
    assert_true(value_of(t, "gpufl_events_recorded_total{kind=\"scope_end\"}") == 4000);
    assert_true(value_of(t, "gpufl_events_dropped_total{reason=\"ring_full\"}") == 0);
    assert_non_null(strstr(t, "gpufl_exporter_scrapes_total "));
    free(t);
    /* OpenMetrics on request: the same figures, counters' families named
     * without _total, and # EOF last */
    t = scrape(port, true);
    assert_non_null(strstr(t, "# TYPE gpufl_events_dropped counter\n"));
    assert_non_null(strstr(t, "# TYPE gpufl_scope_duration_seconds histogram\n"));
    assert_true(value_of(t, "gpufl_scope_duration_seconds_count{scope=\"alpha\"}") == 1000);
    assert_true(!strcmp(t + strlen(t) - 6, "# EOF\n"));
    free(t);
    /* nothing of the readings was recorded: system sampling is off */
    char *dir = tu_session_dir(log_path);
    gpufl_shutdown();
    json_t *sj = tu_session_json(dir);
    json_t *summary = json_object_get(sj, "summary");
    assert_int_equal(tu_int(json_object_get(summary, "events"), "device_metrics"), 0);
    json_decref(sj);
    free(dir);
}

/* Drops (a ring far too small for a burst) and bytes written, as the
 * endpoint says them and as session.json does: once the session is quiet,
 * a scrape between two equal reads of session.json agrees with it. */
static void test_figures_agree(void **state)
{
    (void)state;
    tu_setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    int port;
    gpufl_options o = options_free_port("", &port);
    o.ring_events = 16;
    assert_true(gpufl_init(&o));
    for (int i = 0; i < 20000; i++)
        gpufl_scope_end(gpufl_scope_begin("burst"));
    char *dir = tu_session_dir(log_path);
    bool agreed = false;
    for (int attempt = 0; attempt < 60 && !agreed; attempt++) {
        usleep(250000);
        json_t *a = tu_session_json(dir);
        char *t = scrape(port, false);
        json_t *b = tu_session_json(dir);
        json_t *s = json_object_get(a, "summary");
        if (!json_equal(a, b) || !s) {
            json_decref(a);
            json_decref(b);
            free(t);
            continue;
        }
        json_t *dropped = json_object_get(s, "dropped");
        long long drops = tu_int(dropped, "ring_full");
        long long bytes = tu_int(json_object_get(s, "logs"), "bytes_written");
        long long scopes = -1;
        json_t *row;
        size_t i;
        json_array_foreach(json_object_get(s, "scopes"), i, row) if (!strcmp(tu_str(row, "name"), "burst")) scopes =
            tu_int(row, "count");
        double served_bytes = 0;
        static const char *const files[] = {"scope.log", "system.log", "device.log", "trace.gflt"};
        for (size_t f = 0; f < 4; f++) {
            char series[128];
            snprintf(series, sizeof series, "gpufl_bytes_written_total{file=\"%s\"}", files[f]);
            double v = value_of(t, series);
            served_bytes += v > 0 ? v : 0;
        }
        agreed = drops > 0 && value_of(t, "gpufl_events_dropped_total{reason=\"ring_full\"}") == (double)drops &&
                 served_bytes == (double)bytes && bytes > 0 &&
                 value_of(t, "gpufl_scope_duration_seconds_count{scope=\"burst\"}") == (double)scopes;
        json_decref(a);
        json_decref(b);
        free(t);
    }
    assert_true(agreed);
    free(dir);
}

/* Scopes a second for about ms of a tight loop. */
static double scope_rate(int ms)
{
    uint64_t n = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double el;
    do {
        for (int i = 0; i < 1000; i++) {
            static uint32_t site;
            gpufl_scope_end(gpufl_scope_begin_cached("tight", &site));
        }
        n += 1000;
        clock_gettime(CLOCK_MONOTONIC, &t);
        el = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
    } while (el * 1000 < ms);
    return (double)n / el;
}

/* Connections that never read their answer (and some that never finish
 * their request) hold server slots only: recording runs as fast as
 * without them. The best of five alternating rounds each, since other
 * work on a shared machine only ever slows a round; 0.6 leaves room for
 * that, where a producer that waited on a scraper would not reach it. */
static void test_stuck_scraper(void **state)
{
    (void)state;
    tu_setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    int port;
    gpufl_options o = options_free_port("127.0.0.1", &port);
    o.log_format = GPUFL_LOG_NONE; /* the producer and the collector, not the disk */
    assert_true(gpufl_init(&o));
    double with = 0, without = 0;
    int stuck[16];
    for (int r = 0; r < 5; r++) {
        double v = scope_rate(200);
        without = v > without ? v : without;
        for (int i = 0; i < 16; i++) {
            stuck[i] = connect_port(port);
            int small = 1;
            setsockopt(stuck[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
            const char *req = i % 2 ? "GET /metrics HTTP/1.1\r\n\r\n" : "GET /met";
            assert_true(send(stuck[i], req, strlen(req), MSG_NOSIGNAL) > 0);
        }
        v = scope_rate(200);
        with = v > with ? v : with;
        for (int i = 0; i < 16; i++)
            close(stuck[i]);
    }
    print_message("scopes/s, best of 5: %.0f without stuck scrapers, %.0f with 16\n", without, with);
    assert_true(with > 0.6 * without);
    /* and the endpoint still answers */
    char *t = scrape(port, false);
    assert_non_null(strstr(t, "gpufl_scope_duration_seconds_count{scope=\"tight\"}"));
    free(t);
}

/* The warning names the address and why; the session records. */
static void check_cannot_listen(const char *addr, const char *why)
{
    tu_setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    gpufl_options o = options(addr);
    o.log_format = GPUFL_LOG_NDJSON;
    assert_true(gpufl_init(&o));
    assert_true(gpufl_is_recording());
    gpufl_scope_end(gpufl_scope_begin("still"));
    char *dir = tu_session_dir(log_path);
    gpufl_shutdown();
    tu_ndjson sys, scope;
    assert_int_equal(tu_ndjson_load_channel(dir, "system", &sys), 0);
    assert_int_equal(tu_ndjson_load_channel(dir, "scope", &scope), 0);
    bool warned = false;
    for (size_t i = 0; i < sys.n; i++) {
        const char *msg = json_string_value(json_object_get(sys.lines[i], "message"));
        const char *level = json_string_value(json_object_get(sys.lines[i], "level"));
        if (msg && level && !strcmp(level, "warn") && strstr(msg, "metrics_listen") && strstr(msg, addr) &&
            strstr(msg, why))
            warned = true;
    }
    if (!warned)
        fail_msg("no warning naming %s (%s) in system.log", addr, why);
    assert_int_equal(tu_count_type(&scope, "scope_end"), 1);
    tu_ndjson_free(&sys);
    tu_ndjson_free(&scope);
    free(dir);
    tu_rm_rf(log_path);
    free(log_path);
    log_path = NULL;
}

static void test_cannot_listen(void **state)
{
    (void)state;
    check_cannot_listen("not-an-address", "bad listen address");
    /* a port another socket holds */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 1), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", ntohs(sa.sin_port));
    check_cannot_listen(addr, "in use");
    close(fd);
}

/* Kernel time by scope: fake kernels launched inside scopes are counted
 * under the scope innermost at their launch, outside every scope under
 * "(none)". */
static void test_kernels_by_scope(void **state)
{
    (void)state;
#ifdef GFL_FAKE_CUPTI
    tu_setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    int port;
    gpufl_options o = options_free_port("127.0.0.1", &port);
    o.profiling_engine = GPUFL_ENGINE_TRACE;
    o.device_plugin = GFL_CUPTI_PLUGIN;
    assert_true(gpufl_init(&o));
    fake_cupti_kernel k = {.name = "gemm", .grid = {1, 1, 1}, .block = {32, 1, 1}, .duration_ns = 250000};
    for (int i = 0; i < 40; i++) {
        gpufl_scope step = gpufl_scope_begin("step");
        (void)fake.launch_kernel(&k);
        gpufl_scope fwd = gpufl_scope_begin("forward");
        (void)fake.launch_kernel(&k);
        (void)fake.launch_kernel(&k);
        gpufl_scope_end(fwd);
        gpufl_scope_end(step);
    }
    (void)fake.launch_kernel(&k);
    /* the plugin hands CUPTI's buffers over every 100 ms */
    char *t = scrape_until(port, "gpufl_scope_kernels_total{scope=\"(none)\"} 1\n");
    assert_true(value_of(t, "gpufl_scope_kernels_total{scope=\"step\"}") == 40);
    assert_true(value_of(t, "gpufl_scope_kernels_total{scope=\"forward\"}") == 80);
    assert_true(value_of(t, "gpufl_scope_kernel_seconds_total{scope=\"step\"}") == 40 * 250e-6);
    assert_true(value_of(t, "gpufl_scope_kernel_seconds_total{scope=\"forward\"}") == 80 * 250e-6);
    assert_true(value_of(t, "gpufl_scope_kernel_seconds_total{scope=\"(none)\"}") == 250e-6);
    assert_true(value_of(t, "gpufl_scope_kernels_total{scope=\"(unknown)\"}") == -1);
    free(t);
#else
    skip();
#endif
}

/* Triggers by kind and outcome: gpufl_dump() without a flight window is
 * recorded, not dumped. */
static void test_triggers(void **state)
{
    (void)state;
    tu_setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    int port;
    gpufl_options o = options_free_port("127.0.0.1", &port);
    o.flight_window_s = 30;
    o.dump_min_interval_s = 3600;
    assert_true(gpufl_init(&o));
    gpufl_scope_end(gpufl_scope_begin("before"));
    assert_int_equal(gpufl_dump("first"), 0);
    (void)gpufl_dump("second"); /* within the storm gap: recorded, not dumped */
    char *t = scrape_until(port, "gpufl_triggers_total{trigger=\"dump\",outcome=\"storm\"} 1\n");
    assert_true(value_of(t, "gpufl_triggers_total{trigger=\"dump\",outcome=\"dumped\"}") == 1);
    free(t);
}

/* At most 256 scope names get series; the rest count under "(other)". */
static void test_scope_cap(void **state)
{
    (void)state;
    tu_setenv("GPUFL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    int port;
    gpufl_options o = options_free_port("127.0.0.1", &port);
    assert_true(gpufl_init(&o));
    for (int i = 0; i < 300; i++) {
        char name[32];
        snprintf(name, sizeof name, "s%03d", i);
        for (int k = 0; k < 2; k++)
            gpufl_scope_end(gpufl_scope_begin(name));
    }
    char *t = scrape_until(port, "gpufl_scope_duration_seconds_count{scope=\"(other)\"} 88\n");
    assert_true(value_of(t, "gpufl_scope_duration_seconds_count{scope=\"s255\"}") == 2);
    assert_true(value_of(t, "gpufl_scope_duration_seconds_count{scope=\"s256\"}") == -1);
    unsigned series = 0;
    for (const char *p = t; (p = strstr(p, "\ngpufl_scope_duration_seconds_count{")) != NULL; p++)
        series++;
    assert_int_equal(series, 257);
    free(t);
}

int main(void)
{
#ifdef GFL_FAKE_CUPTI
    setenv("GPUFL_CUPTI_LIBRARY", GFL_FAKE_CUPTI, 1);
    fake.lib = dlopen(GFL_FAKE_CUPTI, RTLD_NOW | RTLD_LOCAL);
    if (!fake.lib || !(*(void **)&fake.launch_kernel = dlsym(fake.lib, "fake_cupti_launch_kernel")))
        return 1;
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_devices_and_scopes, teardown),
        cmocka_unit_test_teardown(test_figures_agree, teardown),
        cmocka_unit_test_teardown(test_stuck_scraper, teardown),
        cmocka_unit_test_teardown(test_cannot_listen, teardown),
        cmocka_unit_test_teardown(test_kernels_by_scope, teardown),
        cmocka_unit_test_teardown(test_triggers, teardown),
        cmocka_unit_test_teardown(test_scope_cap, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
