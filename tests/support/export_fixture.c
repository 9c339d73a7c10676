/*
 * The export tests' hand-made session (export_fixture.h), as NDJSON lines,
 * and a session exported by one exporter.
 */
#include "export_fixture.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs_util.h"
#include "session_file.h"

/* Appends a formatted line to buf (a growing text). */
typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void add(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->len + (size_t)n + 2 > t->cap) {
        t->cap = (t->len + (size_t)n + 2) * 2;
        t->p = realloc(t->p, t->cap);
        if (!t->p)
            abort();
    }
    vsnprintf(t->p + t->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    t->len += (size_t)n;
    t->p[t->len++] = '\n';
    t->p[t->len] = '\0';
}

static void session_start(text *t, const char *channel)
{
    add(t,
        "{\"type\":\"session_start\",\"ts_ns\":%llu,\"wall_ns\":1790000000000000000,"
        "\"session_id\":\"fixture-1\",\"app_name\":\"exporter \\\"one\\\", two\",\"pid\":4242,"
        "\"host\":\"node1\",\"channel\":\"%s\",\"part\":0,\"format_version\":1,\"gpufl_version\":\"0.1.0\"}",
        (unsigned long long)FIX_START_NS, channel);
}

/* Ends the channel's session and writes it as <dir>/<channel>.log. */
static void write_channel(text *t, const char *dir, const char *channel)
{
    add(t,
        "{\"type\":\"session_end\",\"ts_ns\":%llu,\"wall_ns\":1790000000002000000,"
        "\"session_id\":\"fixture-1\",\"app_name\":\"exporter \\\"one\\\", two\",\"lines\":1,\"lost\":0}",
        (unsigned long long)FIX_US(2000));
    char file[4200];
    snprintf(file, sizeof file, "%s/%s.log", dir, channel);
    tu_write_file(file, t->p);
    free(t->p);
}

static void scope(text *t, unsigned tid, unsigned id, unsigned parent, unsigned depth, const char *name, unsigned begin,
                  unsigned end)
{
    add(t, "{\"type\":\"scope_begin\",\"ts_ns\":%llu,\"tid\":%u,\"id\":%u,\"parent\":%u,\"depth\":%u,\"name\":\"%s\"}",
        (unsigned long long)FIX_US(begin), tid, id, parent, depth, name);
    if (end)
        add(t,
            "{\"type\":\"scope_end\",\"ts_ns\":%llu,\"tid\":%u,\"id\":%u,\"parent\":%u,\"depth\":%u,\"name\":\"%s\","
            "\"begin_ns\":%llu,\"dur_ns\":%llu}",
            (unsigned long long)FIX_US(end), tid, id, parent, depth, name, (unsigned long long)FIX_US(begin),
            (unsigned long long)(FIX_US(end) - FIX_US(begin)));
}

/* "start_ns":..,"end_ns":..,"dur_ns":..,"device":0,"context":1,"stream":s,"corr":c */
static void interval(char *buf, size_t len, unsigned start, unsigned end, unsigned stream, unsigned corr)
{
    snprintf(buf, len,
             "\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":0,\"context\":1,\"stream\":%u,\"corr\":%u",
             (unsigned long long)FIX_US(start), (unsigned long long)FIX_US(end),
             (unsigned long long)(FIX_US(end) - FIX_US(start)), stream, corr);
}

static void call(char *buf, size_t len, unsigned api_start, unsigned api_end)
{
    snprintf(buf, len, "\"tid\":101,\"scope\":2,\"api_start_ns\":%llu,\"api_end_ns\":%llu",
             (unsigned long long)FIX_US(api_start), (unsigned long long)FIX_US(api_end));
}

static void kernel(text *t, const char *name, unsigned start, unsigned end, unsigned stream, unsigned corr,
                   unsigned api_start, unsigned api_end, unsigned grid, unsigned block, unsigned regs)
{
    char iv[256], cl[128];
    interval(iv, sizeof iv, start, end, stream, corr);
    call(cl, sizeof cl, api_start, api_end);
    add(t,
        "{\"type\":\"kernel\",%s,%s,\"name\":\"%s\",\"grid\":[%u,1,1],\"block\":[%u,1,1],\"regs\":%u,"
        "\"smem_static\":1024,\"smem_dynamic\":0,\"local_mem\":0,\"occupancy\":0.5,\"limiter\":\"registers\"}",
        iv, cl, name, grid, block, regs);
}

char *tu_export_fixture(const char *dir)
{
    size_t n = strlen(dir) + sizeof "/fixture";
    char *path = malloc(n);
    if (!path)
        abort();
    snprintf(path, n, "%s/fixture", dir);
    if (mkdir(path, 0755) != 0) {
        fprintf(stderr, "cannot create %s\n", path);
        abort();
    }
    char iv[256], cl[128];

    text s = {0};
    session_start(&s, "scope");
    scope(&s, 101, 1, 0, 0, "step", 100, 900);
    scope(&s, 101, 2, 1, 1, "forward, \\\"fwd\\\"\\n", 200, 500);
    scope(&s, 202, 3, 0, 0, "loader\\u0001", 100, 200);
    scope(&s, 101, 4, 0, 0, "open", 950, 0);
    add(&s,
        "{\"type\":\"nvtx_range\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":100000,\"tid\":101,"
        "\"name\":\"attention op\",\"depth\":0,\"id\":1}",
        (unsigned long long)FIX_US(300), (unsigned long long)FIX_US(400));
    add(&s,
        "{\"type\":\"nvtx_range\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":150000,\"tid\":101,"
        "\"name\":\"cross\",\"domain\":\"io\",\"depth\":0,\"id\":2}",
        (unsigned long long)FIX_US(450), (unsigned long long)FIX_US(600));
    add(&s, "{\"type\":\"nvtx_mark\",\"ts_ns\":%llu,\"tid\":101,\"name\":\"checkpoint\",\"id\":3}",
        (unsigned long long)FIX_US(700));
    write_channel(&s, path, "scope");

    text d = {0};
    session_start(&d, "device");
    add(&d,
        "{\"type\":\"device_info\",\"ts_ns\":%llu,\"device\":0,\"name\":\"NVIDIA H200\",\"uuid\":\"GPU-1\","
        "\"compute_capability\":\"9.0\",\"sm_count\":132,\"memory_total_bytes\":150000000000}",
        (unsigned long long)FIX_START_NS);
    add(&d,
        "{\"type\":\"mem_alloc\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":0,\"corr\":9,"
        "\"address\":\"0x7f0000000000\",\"bytes\":1048576,\"kind\":\"device\",\"tid\":101}",
        (unsigned long long)FIX_US(150));
    interval(iv, sizeof iv, 230, 245, 7, 10);
    call(cl, sizeof cl, 205, 208);
    add(&d,
        "{\"type\":\"memcpy\",%s,%s,\"kind\":\"HtoD\",\"src_kind\":\"pinned\",\"dst_kind\":\"device\",\"bytes\":4096}",
        iv, cl);
    kernel(&d, "gemm<float, 128>", 250, 350, 7, 11, 210, 215, 132, 256, 64);
    interval(iv, sizeof iv, 250, 260, 8, 14);
    add(&d, "{\"type\":\"memset\",%s,\"bytes\":512,\"value\":0,\"mem_kind\":\"device\"}", iv);
    kernel(&d, "relu", 300, 380, 8, 13, 230, 233, 64, 128, 32);
    kernel(&d, "softmax", 360, 420, 7, 12, 220, 224, 16, 1024, 40);
    interval(iv, sizeof iv, 400, 430, 7, 15);
    add(&d, "{\"type\":\"sync\",%s,\"tid\":101,\"kind\":\"stream\"}", iv);
    add(&d,
        "{\"type\":\"mem_free\",\"ts_ns\":%llu,\"device\":0,\"context\":1,\"stream\":0,\"corr\":16,"
        "\"address\":\"0x7f0000000000\",\"bytes\":1048576,\"kind\":\"device\",\"tid\":101}",
        (unsigned long long)FIX_US(1500));
    write_channel(&d, path, "device");

    text y = {0};
    session_start(&y, "system");
    for (unsigned i = 0; i < 3; i++)
        add(&y,
            "{\"type\":\"device_metrics\",\"ts_ns\":%llu,\"device\":0,\"gpu_util_pct\":%u,\"mem_util_pct\":%u,"
            "\"mem_used_bytes\":%u000000,\"mem_free_bytes\":1000000,\"mem_total_bytes\":150000000000,"
            "\"temp_c\":%u,\"power_mw\":%u,\"sm_clock_mhz\":1980,\"mem_clock_mhz\":2619}",
            (unsigned long long)FIX_US(500 * i), 10 + 40 * i, 5 + i, 100 + i, 40 + i, 100500 + 1000 * i);
    for (unsigned i = 0; i < 2; i++)
        add(&y,
            "{\"type\":\"host_metrics\",\"ts_ns\":%llu,\"cpu_count\":16,\"proc_cpu_pct\":%u.25,"
            "\"sys_cpu_pct\":12.5,\"ram_used_bytes\":8000000000,\"ram_total_bytes\":64000000000,"
            "\"proc_rss_bytes\":%u00000000}",
            (unsigned long long)FIX_US(1000 * i), 95 + i, 20 + i);
    write_channel(&y, path, "system");
    return path;
}

void tu_export_session(const char *session, tu_exporter fn, const char *out, gpufl__export_result *r)
{
    gpufl_trace *t = tu_trace_open(session);
    char err[1024];
    if (fn(t, out, r, err, sizeof err) != 0)
        fail_msg("export: %s", err);
    gpufl_trace_close(t);
}
