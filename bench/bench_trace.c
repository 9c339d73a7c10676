/*
 * The trace formats and readers on a synthetic session (trace_gen.c, 10 M
 * events by default): .gflt bytes per kernel event and per event, the size
 * of the same events as NDJSON, how fast each reader loads them into a
 * gpufl_trace (events/s, median of runs) on every CPU (gpufl_trace_open's
 * threads, printed) and on one thread, and the memory the loaded trace
 * holds (gpufl_trace_memory_bytes and RSS, bytes per event).
 *
 * Both files are written with the library's own writers: the .gflt one with
 * the live sink's settings (16384-event chunks, zstd level 3), the NDJSON
 * one with the live formatter. Baselines in the same run: zstd -3 over the
 * NDJSON text (what a generic compressor makes of the same events), and a
 * plain read() of each file (the disk or page cache speed under the reader).
 *
 *   bench_trace [EVENTS]      files under $BENCH_DIR (default /tmp)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "bench_session.h"
#include "bench_util.h"
#include "core/intern.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "read/event_source.h"
#include "read/trace_internal.h"
#include "read/work_pool.h"
#include "sink/gflt_writer.h"
#include "sink/ndjson_export.h"
#include "trace_gen.h"

#define REPS 3

static uint64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Seconds to read a file with plain read() calls of 1 MiB. */
static double raw_read_seconds(const char *path)
{
    static char buf[1 << 20];
    int fd = open(path, O_RDONLY);
    uint64_t t0 = bench_now_ns();
    while (fd >= 0 && read(fd, buf, sizeof buf) > 0)
        ;
    if (fd >= 0)
        close(fd);
    return (double)(bench_now_ns() - t0) / 1e9;
}

/* zstd -3 of the NDJSON text, streamed: the generic-compressor baseline. */
static uint64_t zstd_bytes(const char *dir)
{
    static const char *const names[] = {"device.log", "scope.log", "system.log"};
    uint64_t total = 0;
    ZSTD_CCtx *z = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 3);
    static char in[1 << 20], out[1 << 20];
    for (int i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        size_t n;
        ZSTD_CCtx_reset(z, ZSTD_reset_session_only);
        while (f && (n = fread(in, 1, sizeof in, f)) > 0) {
            ZSTD_inBuffer ib = {in, n, 0};
            while (ib.pos < ib.size) {
                ZSTD_outBuffer ob = {out, sizeof out, 0};
                ZSTD_compressStream2(z, &ob, &ib, ZSTD_e_continue);
                total += ob.pos;
            }
        }
        size_t left;
        do {
            ZSTD_outBuffer ob = {out, sizeof out, 0};
            ZSTD_inBuffer ib = {in, 0, 0};
            left = ZSTD_compressStream2(z, &ob, &ib, ZSTD_e_end);
            total += ob.pos;
        } while (left && !ZSTD_isError(left));
        if (f)
            fclose(f);
    }
    ZSTD_freeCCtx(z);
    return total;
}

typedef struct read_figures {
    double eps;         /* events/s into a gpufl_trace, median */
    double eps_1thread; /* the same, read on one thread */
    double source_eps;  /* events/s through the event source alone */
    double raw_mbps;    /* read() of the same bytes */
    size_t memory_bytes;
    uint64_t rss_bytes, peak_bytes;
} read_figures;

static void measure_read(const char *path, uint64_t events, uint64_t bytes, const char *raw_path, read_figures *r)
{
    double eps[REPS], src_eps[REPS];
    char err[1024];
    for (int i = 0; i < REPS; i++) {
        gpufl__event_source *src;
        uint64_t t0 = bench_now_ns();
        if (gpufl__source_open(path, &src, err, sizeof err) != 0) {
            fprintf(stderr, "bench_trace: %s\n", err);
            exit(1);
        }
        const gfl_event *ev;
        uint64_t n = 0;
        while (gpufl__source_next(src, &ev) == 1)
            n++;
        gpufl__source_close(src);
        src_eps[i] = (double)n / ((double)(bench_now_ns() - t0) / 1e9);

        uint64_t rss0 = bench_rss_bytes();
        bench_peak_reset();
        gpufl_trace *t;
        t0 = bench_now_ns();
        if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
            fprintf(stderr, "bench_trace: %s\n", err);
            exit(1);
        }
        eps[i] = (double)events / ((double)(bench_now_ns() - t0) / 1e9);
        r->memory_bytes = gpufl_trace_memory_bytes(t);
        r->rss_bytes = bench_rss_bytes() - rss0;
        r->peak_bytes = bench_peak_rss_bytes() - rss0;
        gpufl_trace_close(t);
    }
    /* the same on one thread (once: it is the slow baseline) */
    gpufl_trace *t;
    uint64_t t0 = bench_now_ns();
    if (gpufl__trace_open(path, 1, &t, err, sizeof err) != 0) {
        fprintf(stderr, "bench_trace: %s\n", err);
        exit(1);
    }
    r->eps_1thread = (double)events / ((double)(bench_now_ns() - t0) / 1e9);
    gpufl_trace_close(t);
    r->eps = bench_median(eps, REPS);
    r->source_eps = bench_median(src_eps, REPS);
    r->raw_mbps = (double)bytes / raw_read_seconds(raw_path) / 1e6;
}

int main(int argc, char **argv)
{
    uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
    char machine[512], err[1024];
    bench_machine(machine, sizeof machine);
    trace_gen *g = bench_gen_open("bench_trace");
    char *dir = bench_tmpdir();
    char ndjson_dir[4200], gflt_path[4200], kernels_path[4200];
    snprintf(ndjson_dir, sizeof ndjson_dir, "%s/ndjson", dir);
    snprintf(gflt_path, sizeof gflt_path, "%s/trace.gflt", dir);
    snprintf(kernels_path, sizeof kernels_path, "%s/kernels.gflt", dir);

    gpufl__session_meta meta;
    bench_session_meta(&meta, "bench_trace-20261121-000000-1-0000", "bench_trace");
    gpufl__ndjson_export nd;
    bench_gflt_file all, kernels;
    if (gpufl__ndjson_export_open(&nd, ndjson_dir, &meta, &gpufl__intern_lookup, err, sizeof err) != 0) {
        fprintf(stderr, "bench_trace: %s\n", err);
        return 1;
    }
    bench_gflt_open(&all, gflt_path, &meta);
    bench_gflt_open(&kernels, kernels_path, &meta);
    uint64_t nkernels = 0, counts[GFL_EV_TYPE_COUNT] = {0}, gflt_ns = 0, last = 0;
    for (uint64_t i = 0; i < events; i++) {
        gfl_event ev;
        trace_gen_next(g, &ev);
        counts[ev.h.type]++;
        if (ev.h.ts > last)
            last = ev.h.ts;
        uint64_t t0 = bench_now_ns();
        int rc = gpufl__gflt_writer_add(&all.w, &ev);
        gflt_ns += bench_now_ns() - t0;
        if (ev.h.type == GFL_EV_KERNEL) {
            nkernels++;
            rc |= gpufl__gflt_writer_add(&kernels.w, &ev);
        }
        if (rc != 0 || gpufl__ndjson_export_event(&nd, &ev) != 0) {
            fprintf(stderr, "bench_trace: writing failed\n");
            return 1;
        }
    }
    bench_session_end(&meta, last);
    bench_gflt_close(&all, &meta);
    bench_gflt_close(&kernels, &meta);
    if (gpufl__ndjson_export_close(&nd, &meta, err, sizeof err) != 0) {
        fprintf(stderr, "bench_trace: %s\n", err);
        return 1;
    }
    trace_gen_close(g);

    char path[4300];
    uint64_t nd_bytes = 0;
    static const char *const logs[] = {"device.log", "scope.log", "system.log"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", ndjson_dir, logs[i]);
        nd_bytes += file_bytes(path);
    }
    uint64_t gflt_bytes = file_bytes(gflt_path), kernel_bytes = file_bytes(kernels_path);
    uint64_t zstd = zstd_bytes(ndjson_dir);

    printf("bench_trace (%s; files in %s; reading on %u threads)\n", machine,
           getenv("BENCH_DIR") ? getenv("BENCH_DIR") : "/tmp", gpufl__read_threads());
    printf("  session: %llu events over %.1f s of recording:", (unsigned long long)events,
           (double)(last - meta.start_ns) / 1e9);
    for (unsigned t = 1; t < GFL_EV_TYPE_COUNT; t++)
        if (counts[t])
            printf(" %s %.1f%%", gpufl__event_type_name((uint8_t)t), 100.0 * (double)counts[t] / (double)events);
    printf("\n");
    printf("  .gflt, kernels only           %.2f bytes per kernel event (%llu kernels, %llu bytes; target <= 12)\n",
           (double)kernel_bytes / (double)nkernels, (unsigned long long)nkernels, (unsigned long long)kernel_bytes);
    printf("  .gflt, whole session          %.2f bytes per event (%.1f MB)\n", (double)gflt_bytes / (double)events,
           (double)gflt_bytes / 1e6);
    printf("  NDJSON, whole session         %.1f bytes per event (%.1f MB)\n", (double)nd_bytes / (double)events,
           (double)nd_bytes / 1e6);
    printf("  NDJSON / .gflt size           %.1f x (target >= 15)\n", (double)nd_bytes / (double)gflt_bytes);
    printf("  baseline: zstd -3 of the NDJSON   %.2f bytes per event (%.1f x smaller than NDJSON)\n",
           (double)zstd / (double)events, (double)nd_bytes / (double)zstd);
    printf("  .gflt writer (encode + zstd + write) %.2f M events/s\n", (double)events / ((double)gflt_ns / 1e9) / 1e6);

    read_figures rg, rn;
    measure_read(gflt_path, events, gflt_bytes, gflt_path, &rg);
    snprintf(path, sizeof path, "%s/device.log", ndjson_dir);
    measure_read(ndjson_dir, events, nd_bytes, path, &rn);
    unsigned threads = gpufl__read_threads();
    printf("  read .gflt into a trace       %.2f M events/s on %u threads (target >= 10); on 1 thread %.2f M/s;"
           " event source alone %.2f M/s; raw read() %.0f MB/s\n",
           rg.eps / 1e6, threads, rg.eps_1thread / 1e6, rg.source_eps / 1e6, rg.raw_mbps);
    printf("  read NDJSON into a trace      %.2f M events/s on %u threads (target >= 1); on 1 thread %.2f M/s;"
           " event source alone %.2f M/s; raw read() %.0f MB/s\n",
           rn.eps / 1e6, threads, rn.eps_1thread / 1e6, rn.source_eps / 1e6, rn.raw_mbps);
    printf("  trace memory                  %.1f bytes per event by gpufl_trace_memory_bytes, RSS %.1f,"
           " peak RSS while loading %.1f (target <= 40)\n",
           (double)rg.memory_bytes / (double)events, (double)rg.rss_bytes / (double)events,
           (double)rg.peak_bytes / (double)events);
    printf("  (from NDJSON: %.1f bytes per event, RSS %.1f, peak %.1f)\n", (double)rn.memory_bytes / (double)events,
           (double)rn.rss_bytes / (double)events, (double)rn.peak_bytes / (double)events);
    tu_rm_rf(dir);
    free(dir);
    return 0;
}
