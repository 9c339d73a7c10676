/*
 * `gpufl report` on a synthetic session (trace_gen.c, 10 M events by
 * default, written as .gflt with the live sink's settings): seconds to open
 * it, run every analysis and render the text report to /dev/null (median
 * of runs, and each step's share), and memory: the reader's peak RSS
 * (while opening) against the peak of the whole report, and the trace's
 * own gpufl_trace_memory_bytes. The targets (issue 6): at most 3 s and at
 * most 1.5 x the reader's memory.
 *
 *   bench_report [EVENTS]      files under $BENCH_DIR (default /tmp)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "bench_session.h"
#include "bench_util.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "present/report/report_json.h"
#include "present/report/report_text.h"

#define REPS 3

static void die(const char *what)
{
    fprintf(stderr, "bench_report: %s\n", what);
    exit(1);
}

typedef struct run {
    double open_s, analyze_s, render_s, total_s;
    uint64_t reader_peak, report_peak; /* bytes above the RSS before opening */
    uint64_t trace_bytes;
} run;

static void one_run(const char *path, run *r)
{
    char err[1024];
    FILE *devnull = fopen("/dev/null", "w");
    if (!devnull)
        die("cannot open /dev/null");
    bench_peak_reset();
    uint64_t base = bench_rss_bytes();
    uint64_t t0 = bench_now_ns();
    gpufl_trace *t;
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        die(err);
    uint64_t t1 = bench_now_ns();
    r->reader_peak = bench_peak_rss_bytes() - base;
    gpufl__ana_report rep;
    if (gpufl__analyze_report(t, NULL, &rep) != 0)
        die("out of memory analyzing");
    uint64_t t2 = bench_now_ns();
    if (gpufl__report_text(t, &rep, NULL, devnull) != 0)
        die("rendering failed");
    uint64_t t3 = bench_now_ns();
    r->report_peak = bench_peak_rss_bytes() - base;
    r->trace_bytes = gpufl_trace_memory_bytes(t);
    gpufl__ana_report_free(&rep);
    gpufl_trace_close(t);
    fclose(devnull);
    r->open_s = (double)(t1 - t0) / 1e9;
    r->analyze_s = (double)(t2 - t1) / 1e9;
    r->render_s = (double)(t3 - t2) / 1e9;
    r->total_s = (double)(t3 - t0) / 1e9;
}

int main(int argc, char **argv)
{
    uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
    char machine[512];
    bench_machine(machine, sizeof machine);
    char *dir = bench_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/trace.gflt", dir);
    bench_write_session(path, events, "bench_report-20261121-000000-1-0000", "bench_report");

    run runs[REPS];
    double total[REPS], open_s[REPS], analyze_s[REPS], render_s[REPS];
    uint64_t reader_peak = 0, report_peak = 0;
    for (int i = 0; i < REPS; i++) {
        one_run(path, &runs[i]);
        total[i] = runs[i].total_s;
        open_s[i] = runs[i].open_s;
        analyze_s[i] = runs[i].analyze_s;
        render_s[i] = runs[i].render_s;
        if (runs[i].reader_peak > reader_peak)
            reader_peak = runs[i].reader_peak;
        if (runs[i].report_peak > report_peak)
            report_peak = runs[i].report_peak;
    }
    double ratio = reader_peak ? (double)report_peak / (double)reader_peak : 0;
    double secs = bench_median(total, REPS);
    printf("bench_report: %llu events (.gflt), %s\n", (unsigned long long)events, machine);
    printf("  report (open + analyze + text)  %.3f s median of %d  (open %.3f, analyze %.3f, render %.4f)"
           "  target <= 3 s: %s\n",
           secs, REPS, bench_median(open_s, REPS), bench_median(analyze_s, REPS), bench_median(render_s, REPS),
           secs <= 3.0 ? "met" : "MISSED");
    printf("  peak RSS: reader %.1f MiB, whole report %.1f MiB = %.2f x  target <= 1.5 x: %s\n",
           (double)reader_peak / 1048576.0, (double)report_peak / 1048576.0, ratio, ratio <= 1.5 ? "met" : "MISSED");
    printf("  trace memory (gpufl_trace_memory_bytes) %.1f MiB, %.1f bytes/event\n",
           (double)runs[0].trace_bytes / 1048576.0, (double)runs[0].trace_bytes / (double)events);
    tu_rm_rf(dir);
    free(dir);
    return 0;
}
