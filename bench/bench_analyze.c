/*
 * The analyses (src/analyze) on a synthetic session (trace_gen.c, 10 M
 * events by default, written as .gflt with the live sink's settings): the
 * time to load it, the time of each analysis and of gpufl__analyze_report
 * (the target: load + report <= 3 s on the 2-core development machine),
 * the memory the loaded trace holds (gpufl_trace_memory_bytes and RSS) and
 * the peak RSS while analyzing (the target: at most 1.5x the reader's).
 * The sections are timed one by one on one thread; the report runs them in
 * two halves at once (ana_report.c), so it takes less than their sum.
 * Last, gpufl diff's comparison of the session with its first 99 %.
 *
 *   bench_analyze [EVENTS]      files under $BENCH_DIR (default /tmp)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/ana_diff.h"
#include "analyze/analysis.h"
#include "bench_session.h"
#include "bench_util.h"
#include "fs_util.h"
#include "gpufl/trace.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_analyze: %s\n", what);
    exit(1);
}

static double secs(uint64_t t0) { return (double)(bench_now_ns() - t0) / 1e9; }

#define TIME(label, call, free_call)                                                                                   \
    do {                                                                                                               \
        uint64_t t0 = bench_now_ns();                                                                                  \
        if ((call) != 0)                                                                                               \
            die(label " failed");                                                                                      \
        printf("  %-10s %8.3f s\n", label, secs(t0));                                                                  \
        free_call;                                                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    uint64_t events = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
    char machine[512], err[1024], path[4200];
    bench_machine(machine, sizeof machine);
    char *dir = bench_tmpdir();
    snprintf(path, sizeof path, "%s/trace.gflt", dir);
    bench_write_session(path, events, "bench_analyze-20261121-000000-1-0000", "bench_analyze");

    uint64_t rss0 = bench_rss_bytes();
    bench_peak_reset();
    gpufl_trace *t;
    uint64_t t0 = bench_now_ns();
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0)
        die(err);
    double load = secs(t0);
    size_t reader_bytes = gpufl_trace_memory_bytes(t);
    uint64_t reader_rss = bench_rss_bytes() - rss0;
    uint64_t load_peak = bench_peak_rss_bytes() - rss0;

    printf("bench_analyze: %llu events (%zu kernels), %s\n", (unsigned long long)events, gpufl_trace_get_kernels(t)->n,
           machine);
    printf("  load       %8.3f s   trace memory %.1f MB, RSS %.1f MB (peak while loading %.1f MB)\n", load,
           (double)reader_bytes / 1e6, (double)reader_rss / 1e6, (double)load_peak / 1e6);
    gpufl__ana_options o;
    gpufl__ana_options_default(&o);
    gpufl__ana_summary s;
    gpufl__ana_scopes sc;
    gpufl__ana_hotspots h;
    gpufl__ana_copies c;
    gpufl__ana_idle i;
    gpufl__ana_launches l;
    gpufl__ana_memory m;
    gpufl__ana_counters k;
    TIME("summary", gpufl__analyze_summary(t, &s), gpufl__ana_summary_free(&s));
    TIME("scopes", gpufl__analyze_scopes(t, &sc), gpufl__ana_scopes_free(&sc));
    TIME("hotspots", gpufl__analyze_hotspots(t, &o, &h), gpufl__ana_hotspots_free(&h));
    TIME("copies", gpufl__analyze_copies(t, &c), gpufl__ana_copies_free(&c));
    TIME("idle", gpufl__analyze_idle(t, &i), gpufl__ana_idle_free(&i));
    TIME("launches", gpufl__analyze_launches(t, &l), gpufl__ana_launches_free(&l));
    TIME("memory", gpufl__analyze_memory(t, &o, &m), gpufl__ana_memory_free(&m));
    TIME("counters", gpufl__analyze_counters(t, &k), gpufl__ana_counters_free(&k));

    uint64_t base = bench_rss_bytes();
    bench_peak_reset();
    gpufl__ana_report r;
    t0 = bench_now_ns();
    if (gpufl__analyze_report(t, NULL, &r) != 0)
        die("report failed");
    double report = secs(t0);
    uint64_t extra = bench_peak_rss_bytes() > base ? bench_peak_rss_bytes() - base : 0;
    printf("  report     %8.3f s   (all of the above in two halves on two threads, the trees built once)\n", report);
    printf("  load + report %.3f s (target <= 3 s)\n", load + report);
    printf("  analysis peak RSS above the loaded trace: %.1f MB; peak total %.1f MB = %.2fx the reader's RSS "
           "(target <= 1.5x)\n",
           (double)extra / 1e6, (double)(reader_rss + extra) / 1e6,
           reader_rss ? (double)(reader_rss + extra) / (double)reader_rss : 0);
    gpufl__ana_report_free(&r);

    /* gpufl diff's comparison (its reports list every kernel, as the
     * command's do) against the same session cut 1 % short: every launch
     * configuration's counts differ, and its launches are matched by
     * place in the program */
    char cut_path[4200];
    snprintf(cut_path, sizeof cut_path, "%s/cut.gflt", dir);
    bench_write_session(cut_path, events - events / 100, "bench_analyze-20261121-000000-1-0001", "bench_analyze");
    gpufl_trace *cut;
    if (gpufl_trace_open(cut_path, &cut, err, sizeof err) != 0)
        die(err);
    o.top_kernels = UINT32_MAX;
    gpufl__ana_report rb, rc;
    if (gpufl__analyze_report(t, &o, &rb) != 0 || gpufl__analyze_report(cut, &o, &rc) != 0)
        die("report failed");
    gpufl__diff d;
    t0 = bench_now_ns();
    if (gpufl__diff_reports(t, &rb, cut, &rc, NULL, &d) != 0)
        die("diff failed");
    printf("  diff       %8.3f s   (against its first 99 %%: %u kernels, %u regressions)\n", secs(t0), d.nkernels,
           d.regressions);
    gpufl__diff_free(&d);
    gpufl__ana_report_free(&rb);
    gpufl__ana_report_free(&rc);
    gpufl_trace_close(cut);
    unlink(cut_path);
    gpufl_trace_close(t);
    unlink(path);
    tu_rm_rf(dir);
    free(dir);
    return 0;
}
