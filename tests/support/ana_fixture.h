/*
 * Hand-built sessions for the analyses' tests (test_analyze_*.c): NDJSON
 * lines (docs/FORMAT.md shapes) added one call at a time, written as a
 * session directory (device.log, scope.log, system.log, each opened by a
 * session_start line) and read back with gpufl_trace_open(), so a test
 * runs the analyses on exactly what the reader makes of recorded lines.
 * Header-only; failures fail the calling cmocka test.
 */
#ifndef GPUFL_TEST_ANA_FIXTURE_H
#define GPUFL_TEST_ANA_FIXTURE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_util.h"
#include "gpufl/trace.h"

#define AF_START 1000000ull /* every fixture session starts here */

typedef struct af_text {
    char *s;
    size_t n, cap;
} af_text;

typedef struct af {
    af_text ch[3];   /* device, scope, system */
    uint64_t end_ns; /* 0: the session did not end */
} af;

enum { AF_DEVICE = 0, AF_SCOPE = 1, AF_SYSTEM = 2 };

__attribute__((format(printf, 3, 4))) static inline void af_line(af *f, int ch, const char *fmt, ...)
{
    af_text *t = &f->ch[ch];
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->n + (size_t)need + 2 > t->cap) {
        t->cap = (t->n + (size_t)need + 2) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, (size_t)need + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)need;
    t->s[t->n++] = '\n';
    t->s[t->n] = '\0';
}

/* A kernel (or, with table "memcpy"/"memset", other work): what a test
 * sets; 0 / NULL fields are left out of the line. */
typedef struct af_k {
    unsigned dev, stream;
    uint64_t start, end;
    const char *name;
    unsigned tid;
    uint64_t api_start, api_end;
    uint64_t scope;
    const char *nvtx;
    unsigned stack;
    unsigned grid, block, regs; /* x only; y = z = 1 */
} af_k;

static inline void af_attr(char *buf, size_t len, unsigned tid, uint64_t api_start, uint64_t api_end, uint64_t scope,
                           const char *nvtx, unsigned stack)
{
    size_t n = 0;
    buf[0] = '\0';
    if (tid)
        n += (size_t)snprintf(buf + n, len - n, ",\"tid\":%u", tid);
    if (api_start)
        n += (size_t)snprintf(buf + n, len - n, ",\"api_start_ns\":%llu,\"api_end_ns\":%llu",
                              (unsigned long long)api_start, (unsigned long long)api_end);
    if (scope)
        n += (size_t)snprintf(buf + n, len - n, ",\"scope\":%llu", (unsigned long long)scope);
    if (nvtx)
        n += (size_t)snprintf(buf + n, len - n, ",\"nvtx\":\"%s\"", nvtx);
    if (stack)
        n += (size_t)snprintf(buf + n, len - n, ",\"stack\":%u", stack);
}

static inline void af_kernel(af *f, af_k k)
{
    static unsigned corr;
    char at[256];
    af_attr(at, sizeof at, k.tid, k.api_start, k.api_end, k.scope, k.nvtx, k.stack);
    af_line(f, AF_DEVICE,
            "{\"type\":\"kernel\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":%u,\"context\":1,"
            "\"stream\":%u,\"corr\":%u,\"name\":\"%s\",\"grid\":[%u,1,1],\"block\":[%u,1,1],\"regs\":%u,"
            "\"smem_static\":0,\"smem_dynamic\":0%s}",
            (unsigned long long)k.start, (unsigned long long)k.end, (unsigned long long)(k.end - k.start), k.dev,
            k.stream, ++corr, k.name ? k.name : "k", k.grid ? k.grid : 1, k.block ? k.block : 32, k.regs ? k.regs : 16,
            at);
}

static inline void af_copy(af *f, unsigned dev, unsigned stream, uint64_t start, uint64_t end, const char *kind,
                           const char *src, const char *dst, uint64_t bytes, unsigned tid, uint64_t api_start)
{
    char at[256];
    af_attr(at, sizeof at, tid, api_start, api_start ? api_start + 1 : 0, 0, NULL, 0);
    af_line(f, AF_DEVICE,
            "{\"type\":\"memcpy\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":%u,\"context\":1,"
            "\"stream\":%u,\"corr\":0,\"kind\":\"%s\",\"src_kind\":\"%s\",\"dst_kind\":\"%s\",\"bytes\":%llu%s}",
            (unsigned long long)start, (unsigned long long)end, (unsigned long long)(end - start), dev, stream, kind,
            src, dst, (unsigned long long)bytes, at);
}

static inline void af_memset(af *f, unsigned dev, unsigned stream, uint64_t start, uint64_t end, uint64_t bytes)
{
    af_line(f, AF_DEVICE,
            "{\"type\":\"memset\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":%u,\"context\":1,"
            "\"stream\":%u,\"corr\":0,\"bytes\":%llu,\"value\":0,\"mem_kind\":\"device\"}",
            (unsigned long long)start, (unsigned long long)end, (unsigned long long)(end - start), dev, stream,
            (unsigned long long)bytes);
}

static inline void af_sync(af *f, unsigned dev, unsigned stream, uint64_t start, uint64_t end, const char *kind,
                           unsigned tid)
{
    af_line(f, AF_DEVICE,
            "{\"type\":\"sync\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":%u,\"context\":1,"
            "\"stream\":%u,\"corr\":0,\"kind\":\"%s\",\"tid\":%u}",
            (unsigned long long)start, (unsigned long long)end, (unsigned long long)(end - start), dev, stream, kind,
            tid);
}

static inline void af_mem(af *f, bool is_free, unsigned dev, uint64_t ts, uint64_t address, uint64_t bytes,
                          const char *kind)
{
    af_line(f, AF_DEVICE,
            "{\"type\":\"%s\",\"ts_ns\":%llu,\"device\":%u,\"context\":1,\"stream\":0,\"corr\":0,"
            "\"address\":\"0x%llx\",\"bytes\":%llu,\"kind\":\"%s\",\"tid\":9}",
            is_free ? "mem_free" : "mem_alloc", (unsigned long long)ts, dev, (unsigned long long)address,
            (unsigned long long)bytes, kind);
}

static inline void af_device(af *f, unsigned dev, const char *name, uint64_t mem_total)
{
    af_line(f, AF_DEVICE,
            "{\"type\":\"device_info\",\"ts_ns\":%llu,\"device\":%u,\"name\":\"%s\",\"uuid\":\"GPU-%u\","
            "\"memory_total_bytes\":%llu}",
            AF_START, dev, name, dev, (unsigned long long)mem_total);
}

static inline void af_metrics(af *f, unsigned dev, uint64_t ts, int util, uint64_t mem_used)
{
    af_line(f, AF_SYSTEM,
            "{\"type\":\"device_metrics\",\"ts_ns\":%llu,\"device\":%u,\"gpu_util_pct\":%d,\"mem_util_pct\":1,"
            "\"mem_used_bytes\":%llu,\"mem_total_bytes\":1000000000}",
            (unsigned long long)ts, dev, util, (unsigned long long)mem_used);
}

/* A gpufl scope: its begin and end lines (end 0: never ended). */
static inline void af_scope(af *f, unsigned tid, uint64_t id, uint64_t parent, unsigned depth, const char *name,
                            uint64_t begin, uint64_t end)
{
    af_line(f, AF_SCOPE,
            "{\"type\":\"scope_begin\",\"ts_ns\":%llu,\"tid\":%u,\"id\":%llu,\"parent\":%llu,\"depth\":%u,"
            "\"name\":\"%s\"}",
            (unsigned long long)begin, tid, (unsigned long long)id, (unsigned long long)parent, depth, name);
    if (end)
        af_line(f, AF_SCOPE,
                "{\"type\":\"scope_end\",\"ts_ns\":%llu,\"tid\":%u,\"id\":%llu,\"parent\":%llu,\"depth\":%u,"
                "\"name\":\"%s\",\"begin_ns\":%llu,\"dur_ns\":%llu}",
                (unsigned long long)end, tid, (unsigned long long)id, (unsigned long long)parent, depth, name,
                (unsigned long long)begin, (unsigned long long)(end - begin));
}

static inline void af_nvtx(af *f, unsigned tid, uint64_t id, const char *name, uint64_t start, uint64_t end)
{
    af_line(f, AF_SCOPE,
            "{\"type\":\"nvtx_range\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"tid\":%u,"
            "\"name\":\"%s\",\"id\":%llu}",
            (unsigned long long)start, (unsigned long long)end, (unsigned long long)(end - start), tid, name,
            (unsigned long long)id);
}

static inline void af_mark(af *f, unsigned tid, uint64_t id, const char *name, uint64_t ts)
{
    af_line(f, AF_SCOPE, "{\"type\":\"nvtx_mark\",\"ts_ns\":%llu,\"tid\":%u,\"name\":\"%s\",\"id\":%llu}",
            (unsigned long long)ts, tid, name, (unsigned long long)id);
}

/* A PM sampling interval of one metric (docs/FORMAT.md `pm_sample`); value
 * with the 4 decimals the format keeps. */
static inline void af_pm(af *f, unsigned dev, const char *metric, uint64_t start, uint64_t end, double value)
{
    af_line(f, AF_DEVICE,
            "{\"type\":\"pm_sample\",\"ts_ns\":%llu,\"end_ns\":%llu,\"device\":%u,\"metric\":\"%s\","
            "\"value\":%.4f}",
            (unsigned long long)start, (unsigned long long)end, dev, metric, value);
}

/* An NCCL collective as NCCL's profiler plugin records it (nccl_coll);
 * dtype NULL leaves datatype and bytes out, as the plugin does for a
 * datatype it cannot size. */
static inline void af_nccl(af *f, uint64_t start, uint64_t comm, int rank, unsigned nranks, uint64_t seq,
                           const char *func, uint64_t count, const char *dtype, unsigned dtype_size)
{
    char extra[160] = "";
    if (dtype)
        snprintf(extra, sizeof extra, ",\"datatype\":\"%s\",\"bytes\":%llu", dtype,
                 (unsigned long long)(count * dtype_size));
    af_line(f, AF_DEVICE,
            "{\"type\":\"nccl_coll\",\"start_ns\":%llu,\"end_ns\":%llu,\"device\":0,\"comm\":\"0x%llx\","
            "\"rank\":%d,\"nranks\":%u,\"seq\":%llu,\"func\":\"%s\",\"count\":%llu%s,\"algo\":\"Ring\","
            "\"proto\":\"Simple\",\"abi\":4}",
            (unsigned long long)start, (unsigned long long)start + 1000, (unsigned long long)comm, rank, nranks,
            (unsigned long long)seq, func, (unsigned long long)count, extra);
}

/* Writes the session as <dir>/<name> and opens it; frees f's text. */
static inline gpufl_trace *af_open(af *f, const char *dir, const char *name)
{
    static const char *const chans[3] = {"device", "scope", "system"};
    char path[4096], file[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *cmd = malloc(strlen(path) + 16);
    sprintf(cmd, "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    for (int c = 0; c < 3; c++) {
        snprintf(file, sizeof file, "%s/%s.log", path, chans[c]);
        FILE *out = fopen(file, "w");
        assert_non_null(out);
        fprintf(out,
                "{\"type\":\"session_start\",\"ts_ns\":%llu,\"wall_ns\":1790000000000000000,"
                "\"session_id\":\"%s\",\"app_name\":\"test\",\"pid\":42,\"host\":\"h\",\"channel\":\"%s\","
                "\"part\":0,\"format_version\":1,\"gpufl_version\":\"0.1.0\"}\n",
                AF_START, name, chans[c]);
        if (f->ch[c].s)
            fputs(f->ch[c].s, out);
        if (f->end_ns)
            fprintf(out,
                    "{\"type\":\"session_end\",\"ts_ns\":%llu,\"wall_ns\":1790000000001000000,"
                    "\"session_id\":\"%s\",\"app_name\":\"test\",\"lines\":1,\"lost\":0}\n",
                    (unsigned long long)f->end_ns, name);
        assert_int_equal(fclose(out), 0);
        free(f->ch[c].s);
        f->ch[c] = (af_text){0};
    }
    gpufl_trace *t = NULL;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        fail_msg("%s: %s", path, err);
    return t;
}

#endif /* GPUFL_TEST_ANA_FIXTURE_H */
