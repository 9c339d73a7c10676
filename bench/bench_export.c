/*
 * The exports (`gpufl export`, src/present/export_*.c) on a synthetic
 * session (trace_gen.c, 10 M events by default): how fast a loaded trace
 * becomes a .perfetto-trace, Chrome JSON and CSV files, in recorded events
 * per second (median of runs), and the bytes per event each writes.
 *
 * The session is written as .gflt with the library's writer and loaded
 * with gpufl_trace_open() once; only the export is timed. Baseline in the
 * same run: write() of as many bytes as the Perfetto export made, from one
 * buffer (the speed of the disk or page cache under the exporter).
 *
 *   bench_export [EVENTS]     files under $BENCH_DIR (default /tmp)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_session.h"
#include "bench_util.h"
#include "core/os.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "present/export/export.h"

#define REPS 3

static void fail(const char *what)
{
    fprintf(stderr, "bench_export: %s\n", what);
    exit(1);
}

typedef int (*export_fn)(const gpufl_trace *t, const char *path, gpufl__export_result *r, char *err, size_t err_len);

typedef struct figures {
    double eps; /* recorded events per second, median */
    double bpe; /* bytes written per recorded event */
    gpufl__export_result r;
} figures;

static void measure(const gpufl_trace *t, uint64_t events, export_fn fn, const char *out, int reps, figures *f)
{
    double eps[REPS];
    char err[1024];
    for (int i = 0; i < reps; i++) {
        uint64_t t0 = bench_now_ns();
        if (fn(t, out, &f->r, err, sizeof err) != 0)
            fail(err);
        eps[i] = (double)events / ((double)(bench_now_ns() - t0) / 1e9);
    }
    f->eps = bench_median(eps, (size_t)reps);
    f->bpe = (double)f->r.bytes / (double)events;
}

/* write() of bytes from one 1 MiB buffer, MB/s. */
static double raw_write_mbps(const char *path, uint64_t bytes)
{
    size_t chunk = 1 << 20;
    char *buf = calloc(1, chunk);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!buf || fd < 0)
        fail("cannot write the baseline file");
    uint64_t t0 = bench_now_ns();
    for (uint64_t done = 0; done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? (size_t)(bytes - done) : chunk;
        if (gpufl__write_all(fd, buf, n) != n)
            fail("writing the baseline file failed");
    }
    close(fd);
    double s = (double)(bench_now_ns() - t0) / 1e9;
    free(buf);
    unlink(path);
    return (double)bytes / s / 1e6;
}

int main(int argc, char **argv)
{
    uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
    char machine[512], err[1024];
    bench_machine(machine, sizeof machine);
    char *dir = bench_tmpdir();
    char session[4200], out[4200], raw[4200];
    snprintf(session, sizeof session, "%s/trace.gflt", dir);
    bench_write_session(session, events, "bench_export-20261121-000000-1-0000", "bench_export");
    gpufl_trace *t;
    if (gpufl_trace_open(session, &t, err, sizeof err) != 0)
        fail(err);

    figures pf, cj, csv;
    snprintf(out, sizeof out, "%s/out.perfetto-trace", dir);
    measure(t, events, gpufl__export_perfetto, out, REPS, &pf);
    unlink(out);
    snprintf(out, sizeof out, "%s/out.json", dir);
    measure(t, events, gpufl__export_chrome, out, 1, &cj);
    unlink(out);
    snprintf(out, sizeof out, "%s/csv", dir);
    measure(t, events, gpufl__export_csv, out, 1, &csv);
    snprintf(raw, sizeof raw, "%s/raw", dir);
    double raw_mbps = raw_write_mbps(raw, pf.r.bytes);
    gpufl_trace_close(t);

    const gpufl__tl_stats *s = &pf.r.timeline;
    printf("bench_export: %llu synthetic events (%s)\n", (unsigned long long)events, machine);
    printf("  timeline: %llu tracks, %llu slices, %llu instants, %llu launch calls, %llu flows, "
           "%llu counter values, %llu on overflow lanes\n",
           (unsigned long long)s->tracks, (unsigned long long)s->slices, (unsigned long long)s->instants,
           (unsigned long long)s->api_calls, (unsigned long long)s->flows, (unsigned long long)s->counters,
           (unsigned long long)s->overlapped);
    printf("  %-10s %12s %10s %10s\n", "export", "events/s", "MB/s", "bytes/ev");
    const char *names[] = {"perfetto", "chrome", "csv"};
    const figures *f[] = {&pf, &cj, &csv};
    for (int i = 0; i < 3; i++)
        printf("  %-10s %12.0f %10.1f %10.1f\n", names[i], f[i]->eps, f[i]->eps * f[i]->bpe / 1e6, f[i]->bpe);
    printf("  baseline: write() of the Perfetto file's %llu bytes from one buffer: %.1f MB/s\n",
           (unsigned long long)pf.r.bytes, raw_mbps);
    printf("  perfetto target >= 2000000 events/s: %s\n", pf.eps >= 2e6 ? "met" : "NOT met");
    tu_rm_rf(dir);
    free(dir);
    return 0;
}
