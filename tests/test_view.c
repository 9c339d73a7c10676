/*
 * The terminal timeline (src/present/view*.c, src/cli/cmd_view.c): what
 * `gpufl view` draws of a session.
 *
 * Why: the view is read by eye, so a wrong column is a wrong conclusion
 * ("the GPU sat idle here"). Checked against golden text derived by hand
 * from the layout rules (view_layout.h) on a hand-written NDJSON session
 * of known shape: two devices, three streams, kernels, copies of three
 * kinds and a memset, nested scopes on two threads, an NVTX range, NVML
 * samples on one device only; drawn whole at narrow, medium and wide
 * widths, through a --from/--to window that cuts rows at both ends, without
 * any device samples, and empty. Times on the command line parse exactly
 * or not at all; colour only adds escapes; bad windows and widths are
 * errors, never a crash. On the real recorded sample (samples/train_sample)
 * at many widths and windows: every line fits, the lanes are there, and
 * the device's busy time and kernel count equal a plain recomputation from
 * the trace.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "flight_fixture.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "present/view/view.h"
#include "present/view/view_text.h"
#include "session_file.h"
#include "test_util.h"

#define T0 1000000000ull /* the sessions' start, ns */
#define US 1000ull

TU_TEMP_DIR_FIXTURES(dir, "view")

/* ---- hand-written sessions ------------------------------------------------ */

/* <dir>/<session>/<channel>.log, opened with its session_start line. */
static FILE *open_log(const char *session, const char *channel)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s/%s.log", dir, session, channel);
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s", path);
    fprintf(f,
            "{\"type\":\"session_start\",\"ts_ns\":%llu,\"wall_ns\":1790000000000000000,"
            "\"session_id\":\"%s\",\"app_name\":\"viewtest\",\"pid\":42,\"host\":\"node1\","
            "\"channel\":\"%s\",\"part\":0,\"format_version\":1,\"gpufl_version\":\"0.1.0\"}\n",
            T0, session, channel);
    return f;
}

/* Ends the log with session_end at T0 + end_ns (none when end_ns is 0). */
static void close_log(FILE *f, const char *session, uint64_t end_ns)
{
    if (end_ns)
        fprintf(f,
                "{\"type\":\"session_end\",\"ts_ns\":%llu,\"wall_ns\":%llu,\"session_id\":\"%s\","
                "\"app_name\":\"viewtest\",\"lines\":1,\"lost\":0}\n",
                T0 + end_ns, 1790000000000000000ull + end_ns, session);
    assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *session)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, session);
    if (mkdir(path, 0755) != 0)
        fail_msg("cannot create %s", path);
}

/* Times below are us after T0. */
static void kernel(FILE *f, unsigned dev, unsigned stream, const char *name, unsigned a, unsigned b)
{
    static unsigned corr;
    fprintf(f,
            "{\"type\":\"kernel\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":%u,"
            "\"context\":1,\"stream\":%u,\"corr\":%u,\"tid\":100,\"name\":\"%s\",\"grid\":[64,1,1],"
            "\"block\":[256,1,1],\"regs\":32}\n",
            T0 + a * US, T0 + b * US, (b - a) * US, dev, stream, ++corr, name);
}

static void copy(FILE *f, unsigned dev, unsigned stream, const char *kind, unsigned a, unsigned b)
{
    fprintf(f,
            "{\"type\":\"memcpy\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":%u,"
            "\"context\":1,\"stream\":%u,\"corr\":900,\"kind\":\"%s\",\"src_kind\":\"pinned\","
            "\"dst_kind\":\"device\",\"bytes\":1048576%s}\n",
            T0 + a * US, T0 + b * US, (b - a) * US, dev, stream, kind, strcmp(kind, "PtoP") ? "" : ",\"dst_device\":0");
}

static void memset_line(FILE *f, unsigned dev, unsigned stream, unsigned a, unsigned b)
{
    fprintf(f,
            "{\"type\":\"memset\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":%u,"
            "\"context\":1,\"stream\":%u,\"corr\":901,\"bytes\":4096,\"value\":0,\"mem_kind\":\"device\"}\n",
            T0 + a * US, T0 + b * US, (b - a) * US, dev, stream);
}

static void scope(FILE *f, unsigned tid, unsigned id, unsigned parent, unsigned depth, const char *name, unsigned a,
                  unsigned b)
{
    fprintf(f,
            "{\"type\":\"scope_begin\",\"ts_ns\":%llu,\"tid\":%u,\"id\":%u,\"parent\":%u,\"depth\":%u,"
            "\"name\":\"%s\"}\n",
            T0 + a * US, tid, id, parent, depth, name);
    fprintf(f,
            "{\"type\":\"scope_end\",\"ts_ns\":%llu,\"tid\":%u,\"id\":%u,\"parent\":%u,\"depth\":%u,"
            "\"name\":\"%s\",\"begin_ns\":%llu,\"dur_ns\":%llu}\n",
            T0 + b * US, tid, id, parent, depth, name, T0 + a * US, (b - a) * US);
}

static void util_sample(FILE *f, unsigned dev, unsigned at, unsigned pct)
{
    fprintf(f, "{\"type\":\"device_metrics\",\"ts_ns\":%llu,\"device\":%u,\"gpu_util_pct\":%u,\"temp_c\":50}\n",
            T0 + at * US, dev, pct);
}

/*
 * 40 us of two GPUs (us after the start):
 *   gpu 0 stream 7:  gemm [2,12) relu [12,16) gemm [20,30)
 *   gpu 0 stream 13: HtoD [0,4) memset [4,6) softmax [30,34) DtoH [36,40)
 *   gpu 1 stream 21: gemm [5,25) PtoP [25,30)
 *   thread 100: step [0,38) > forward [1,18) > attn [2,8); step > backward
 *               [19,37); NVTX aten::mm [3,13)
 *   thread 200: loader [0,10), loader [20,30)
 *   with_samples: gpu 0 GPU utilization 50, 100, 25, 0 % at 10, 20, 30, 40
 *   (each standing for the 10 us before it); gpu 1 has none.
 * Written once per name; returns its directory (static buffer).
 */
static const char *session_two_gpus(const char *name, bool with_samples)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (tu_exists(path))
        return path;
    make_dir(name);
    FILE *d = open_log(name, "device");
    fprintf(d, "{\"type\":\"device_info\",\"ts_ns\":%llu,\"device\":0,\"name\":\"GPU Zero\",\"sm_count\":132}\n", T0);
    fprintf(d, "{\"type\":\"device_info\",\"ts_ns\":%llu,\"device\":1,\"name\":\"GPU One\",\"sm_count\":132}\n", T0);
    /* device buffers arrive out of order */
    copy(d, 0, 13, "DtoH", 36, 40);
    kernel(d, 0, 7, "gemm", 20, 30);
    kernel(d, 1, 21, "gemm", 5, 25);
    kernel(d, 0, 7, "gemm", 2, 12);
    kernel(d, 0, 7, "relu", 12, 16);
    copy(d, 0, 13, "HtoD", 0, 4);
    memset_line(d, 0, 13, 4, 6);
    kernel(d, 0, 13, "softmax", 30, 34);
    copy(d, 1, 21, "PtoP", 25, 30);
    close_log(d, name, 40 * US);
    FILE *s = open_log(name, "scope");
    scope(s, 200, 5, 0, 0, "loader", 0, 10);
    scope(s, 100, 4, 2, 2, "attn", 2, 8);
    scope(s, 100, 2, 1, 1, "forward", 1, 18);
    fprintf(s,
            "{\"type\":\"nvtx_range\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"tid\":100,"
            "\"name\":\"aten::mm\",\"domain\":\"PyTorch\",\"depth\":0,\"id\":1}\n",
            T0 + 3 * US, T0 + 13 * US, 10 * US);
    scope(s, 200, 6, 0, 0, "loader", 20, 30);
    scope(s, 100, 3, 1, 1, "backward", 19, 37);
    scope(s, 100, 1, 0, 0, "step", 0, 38);
    close_log(s, name, 40 * US);
    FILE *y = open_log(name, "system");
    if (with_samples) {
        static const unsigned pct[4] = {50, 100, 25, 0};
        for (unsigned i = 0; i < 4; i++)
            util_sample(y, 0, 10 * (i + 1), pct[i]);
    }
    close_log(y, name, 40 * US);
    return path;
}

/* ---- rendering ------------------------------------------------------------- */

static char *render_trace(const gpufl_trace *t, uint64_t from, uint64_t to, bool has_to, unsigned width, bool color)
{
    gpufl__view_opts o = {.from_ns = from, .to_ns = to, .has_to = has_to, .width = width, .color = color};
    char *text, err[512];
    int rc = gpufl__view_render(t, &o, &text, err, sizeof err);
    if (rc != 0)
        fail_msg("view (width %u): %d %s", width, rc, err);
    return text;
}

static char *render(const char *path, uint64_t from, uint64_t to, bool has_to, unsigned width)
{
    gpufl_trace *t = tu_trace_open(path);
    char *text = render_trace(t, from, to, has_to, width, false);
    gpufl_trace_close(t);
    return text;
}

/* Fails at the first line where got and want differ, showing both. */
static void expect_text(const char *got, const char *want)
{
    if (!strcmp(got, want))
        return;
    unsigned line = 1;
    const char *g = got, *w = want;
    for (;;) {
        size_t gl = strcspn(g, "\n"), wl = strcspn(w, "\n");
        if (gl != wl || memcmp(g, w, gl) != 0 || !g[gl] != !w[wl])
            fail_msg("line %u differs:\n  got:  '%.*s'\n  want: '%.*s'\nwhole output:\n%s", line, (int)gl, g, (int)wl,
                     w, got);
        if (!g[gl])
            break;
        g += gl + 1;
        w += wl + 1;
        line++;
    }
    fail_msg("outputs differ:\n%s", got);
}

static void expect_view(const char *path, uint64_t from, uint64_t to, bool has_to, unsigned width, const char *want)
{
    char *got = render(path, from, to, has_to, width);
    expect_text(got, want);
    free(got);
}

/* ---- golden views of the two-GPU session ---------------------------------- */

/* Width 54: a label column of 13, 40 columns of 1 us each. */
static const char golden_medium[] = "view-a\n"
                                    "              0us       10us      20us      30us\n"
                                    "              |---------|---------|---------|---------\n"
                                    "gpu 0  GPU Zero\n"
                                    "  util        ▄▄▄▄▄▄▄▄▄▄██████████▂▂▂▂▂▂▂▂▂▂\n"
                                    "  stream 7      AAAAAAAAAABBBB    AAAAAAAAAA\n"
                                    "  stream 13   >>>>~~                        CCCC  <<<<\n"
                                    "gpu 1  GPU One\n"
                                    "  busy             ████████████████████\n"
                                    "  stream 21        AAAAAAAAAAAAAAAAAAAA%%%%%\n"
                                    "thread 100\n"
                                    "  scope 0     [step--------------------------------]\n"
                                    "  scope 1      [forward--------] [backward--------]\n"
                                    "  scope 2       [attn]\n"
                                    "  nvtx 0         [aten::mm]\n"
                                    "thread 200\n"
                                    "  scope 0     [loader--]          [loader--]\n"
                                    "kernels by time (a lowercase letter: mostly idle)\n"
                                    "  A  83.3%   40.00 us       3x  gemm\n"
                                    "  B   8.3%    4.00 us       1x  relu\n"
                                    "  C   8.3%    4.00 us       1x  softmax\n"
                                    "> HtoD copy, < DtoH copy, % PtoP copy, ~ memset\n"
                                    "window 0s to 40us (40.00 us), 40 columns of 1.00 us\n"
                                    "gpu 0: busy 70.0%, util 44% (NVML, 4 samples)\n"
                                    "  4 kernels, 2 copies, 1 memset\n"
                                    "gpu 1: busy 50.0%, 1 kernel, 1 copy, 0 memsets\n"
                                    "2 threads: 6 scopes, 1 NVTX range\n";

static void test_two_gpus_medium(void **state)
{
    (void)state;
    expect_view(session_two_gpus("view-a", true), 0, 0, false, 54, golden_medium);
}

/* Width 95: a label column of 14, 80 columns of 500 ns: the same picture,
 * every run twice as long, and room for every scope's name. */
static const char golden_wide[] =
    "view-a\n"
    "               0us       5us       10us      15us      20us      25us      30us      35us\n"
    "               |---------|---------|---------|---------|---------|---------|---------|---------\n"
    "gpu 0  GPU Zero\n"
    "  util         ▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄████████████████████▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂\n"
    "  stream 7         AAAAAAAAAAAAAAAAAAAABBBBBBBB        AAAAAAAAAAAAAAAAAAAA\n"
    "  stream 13    >>>>>>>>~~~~                                                CCCCCCCC    <<<<<<<<\n"
    "gpu 1  GPU One\n"
    "  busy                   ████████████████████████████████████████\n"
    "  stream 21              AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%%%%%%%%%%\n"
    "thread 100\n"
    "  scope 0      [step----------------------------------------------------------------------]\n"
    "  scope 1        [forward-------------------------]  [backward--------------------------]\n"
    "  scope 2          [attn------]\n"
    "  nvtx 0             [aten::mm----------]\n"
    "thread 200\n"
    "  scope 0      [loader------------]                    [loader------------]\n"
    "kernels by time (a lowercase letter: mostly idle)\n"
    "  A  83.3%   40.00 us       3x  gemm\n"
    "  B   8.3%    4.00 us       1x  relu\n"
    "  C   8.3%    4.00 us       1x  softmax\n"
    "> HtoD copy, < DtoH copy, % PtoP copy, ~ memset\n"
    "window 0s to 40us (40.00 us), 80 columns of 500 ns\n"
    "gpu 0: busy 70.0%, util 44% (NVML, 4 samples), 4 kernels, 2 copies, 1 memset\n"
    "gpu 1: busy 50.0%, 1 kernel, 1 copy, 0 memsets\n"
    "2 threads: 6 scopes, 1 NVTX range\n";

static void test_two_gpus_wide(void **state)
{
    (void)state;
    expect_view(session_two_gpus("view-a", true), 0, 0, false, 95, golden_wide);
}

/* Width 28: a label column of 7 (short labels where "stream 13" does not
 * fit), 20 columns of 2 us: a column half busy draws a half block, short
 * scopes lose their names, the legend its times, the footer wraps. */
static const char golden_narrow[] = "view-a\n"
                                    "        0us       20us\n"
                                    "        |---------|---------\n"
                                    "gpu 0  GPU Zero\n"
                                    "util    ▄▄▄▄▄█████▂▂▂▂▂\n"
                                    "s7       AAAAABB  AAAAA\n"
                                    "s13     >>~            CC <<\n"
                                    "gpu 1  GPU One\n"
                                    "busy      ▄█████████▄\n"
                                    "s21       AAAAAAAAAAA%%\n"
                                    "thread 100\n"
                                    "scope 0 [step-------------]\n"
                                    "scope 1 [forward][backward]\n"
                                    "scope 2  [-]\n"
                                    "nvtx 0   [ate…]\n"
                                    "thread 200\n"
                                    "scope 0 [---]     [---]\n"
                                    "kernels by time (a lowercas…\n"
                                    "  A  83.3%  gemm\n"
                                    "  B   8.3%  relu\n"
                                    "  C   8.3%  softmax\n"
                                    "> HtoD copy, < DtoH copy\n"
                                    "  % PtoP copy, ~ memset\n"
                                    "window 0s to 40us (40.00 us)\n"
                                    "  20 columns of 2.00 us\n"
                                    "gpu 0: busy 70.0%\n"
                                    "  util 44% (NVML, 4 samples)\n"
                                    "  4 kernels, 2 copies\n"
                                    "  1 memset\n"
                                    "gpu 1: busy 50.0%, 1 kernel\n"
                                    "  1 copy, 0 memsets\n"
                                    "2 threads: 6 scopes\n"
                                    "  1 NVTX range\n";

static void test_two_gpus_narrow(void **state)
{
    (void)state;
    expect_view(session_two_gpus("view-a", true), 0, 0, false, 28, golden_narrow);
}

/* --from 10us --to 30us at width 54: 40 columns of 500 ns. Rows cut by the
 * window are drawn '<' / '>' at that end; what lies wholly outside (stream
 * 13, attn, the first loader) is gone, with its lane; utilization comes
 * from the two samples whose periods fall inside; the legend and counts are
 * the window's. */
static const char golden_window[] = "view-a\n"
                                    "              10us      15us      20us      25us\n"
                                    "              |---------|---------|---------|---------\n"
                                    "gpu 0  GPU Zero\n"
                                    "  util        ████████████████████▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂▂\n"
                                    "  stream 7    AAAABBBBBBBB        AAAAAAAAAAAAAAAAAAAA\n"
                                    "gpu 1  GPU One\n"
                                    "  busy        ██████████████████████████████\n"
                                    "  stream 21   AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%%%%%%%%%%\n"
                                    "thread 100\n"
                                    "  scope 0     <step---------------------------------->\n"
                                    "  scope 1     <forward-------]  [backward------------>\n"
                                    "  nvtx 0      <ate…]\n"
                                    "thread 200\n"
                                    "  scope 0                         [loader------------]\n"
                                    "kernels by time (a lowercase letter: mostly idle)\n"
                                    "  A  87.1%   27.00 us       3x  gemm\n"
                                    "  B  12.9%    4.00 us       1x  relu\n"
                                    "% PtoP copy\n"
                                    "window 10us to 30us (20.00 us), 40 columns of 500 ns\n"
                                    "gpu 0: busy 80.0%, util 63% (NVML, 2 samples)\n"
                                    "  3 kernels, 0 copies, 0 memsets\n"
                                    "gpu 1: busy 75.0%, 1 kernel, 1 copy, 0 memsets\n"
                                    "2 threads: 4 scopes, 1 NVTX range\n";

static void test_window(void **state)
{
    (void)state;
    expect_view(session_two_gpus("view-a", true), 10 * US, 30 * US, true, 54, golden_window);
}

/* No device samples: gpu 0's row is "busy", the fraction of each column in
 * which a kernel ran on any of its streams, and the footer has no NVML. */
static const char golden_no_samples[] = "view-b\n"
                                        "              0us       10us      20us      30us\n"
                                        "              |---------|---------|---------|---------\n"
                                        "gpu 0  GPU Zero\n"
                                        "  busy          ██████████████    ██████████████\n"
                                        "  stream 7      AAAAAAAAAABBBB    AAAAAAAAAA\n"
                                        "  stream 13   >>>>~~                        CCCC  <<<<\n"
                                        "gpu 1  GPU One\n"
                                        "  busy             ████████████████████\n"
                                        "  stream 21        AAAAAAAAAAAAAAAAAAAA%%%%%\n"
                                        "thread 100\n"
                                        "  scope 0     [step--------------------------------]\n"
                                        "  scope 1      [forward--------] [backward--------]\n"
                                        "  scope 2       [attn]\n"
                                        "  nvtx 0         [aten::mm]\n"
                                        "thread 200\n"
                                        "  scope 0     [loader--]          [loader--]\n"
                                        "kernels by time (a lowercase letter: mostly idle)\n"
                                        "  A  83.3%   40.00 us       3x  gemm\n"
                                        "  B   8.3%    4.00 us       1x  relu\n"
                                        "  C   8.3%    4.00 us       1x  softmax\n"
                                        "> HtoD copy, < DtoH copy, % PtoP copy, ~ memset\n"
                                        "window 0s to 40us (40.00 us), 40 columns of 1.00 us\n"
                                        "gpu 0: busy 70.0%, 4 kernels, 2 copies, 1 memset\n"
                                        "gpu 1: busy 50.0%, 1 kernel, 1 copy, 0 memsets\n"
                                        "2 threads: 6 scopes, 1 NVTX range\n";

static void test_without_device_samples(void **state)
{
    (void)state;
    expect_view(session_two_gpus("view-b", false), 0, 0, false, 54, golden_no_samples);
}

/* ---- an empty session ------------------------------------------------------ */

static const char *session_empty(const char *name, uint64_t end_ns)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (tu_exists(path))
        return path;
    make_dir(name);
    close_log(open_log(name, "device"), name, end_ns);
    close_log(open_log(name, "scope"), name, end_ns);
    return path;
}

/* 5 ms with nothing in them at width 40: 29 columns of 172.41 us, ticks
 * every ms at the column that holds it. */
static const char golden_empty[] = "view-e\n"
                                   "           0ms  1ms   2ms   3ms   4ms\n"
                                   "           |----|-----|-----|-----|-----\n"
                                   "nothing was recorded in this window\n"
                                   "window 0s to 5ms (5.00 ms)\n"
                                   "  29 columns of 172.41 us\n";

static void test_empty_session(void **state)
{
    (void)state;
    expect_view(session_empty("view-e", 5000 * US), 0, 0, false, 40, golden_empty);
    /* one that never ended and recorded nothing is drawn over 1 s */
    char *text = render(session_empty("view-f", 0), 0, 0, false, 60);
    assert_non_null(strstr(text, "nothing was recorded in this window\n"));
    assert_non_null(strstr(text, "window 0s to 1s (1.000 s)"));
    free(text);
}

/* ---- times on the command line --------------------------------------------- */

static void test_parse_time(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t ns;
    } good[] = {{"0", 0},
                {"12345", 12345},
                {"12ns", 12},
                {"40us", 40000},
                {"250ms", 250000000},
                {"1.5s", 1500000000},
                {"2.5us", 2500},
                {"1.234us", 1234},
                {"1.2340us", 1234},
                {"0.000000001s", 1},
                {"1.000000000000s", 1000000000}, /* zeros past the ns are exact */
                {"1.0ns", 1},
                {"007ms", 7000000},
                {"18446744073709551615", UINT64_MAX},
                {"18446744073.709551615s", UINT64_MAX}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t ns = 7;
        if (gpufl__view_parse_time(good[i].text, &ns) != 0)
            fail_msg("'%s' was refused", good[i].text);
        if (ns != good[i].ns)
            fail_msg("'%s' gave %" PRIu64 ", not %" PRIu64, good[i].text, ns, good[i].ns);
    }
    static const char *const bad[] = {"",
                                      "-1",
                                      "+1",
                                      " 1",
                                      "1 ",
                                      "1.5",
                                      "1.",
                                      ".5s",
                                      "s",
                                      "1ss",
                                      "1sec",
                                      "5m",
                                      "1e3",
                                      "1 s",
                                      "1,5s",
                                      "0x10",
                                      "1.5ns",
                                      "1.2345us",
                                      "0.0000000001s",
                                      "18446744073709551616",
                                      "18446744074s",
                                      "18446744073.709551616s",
                                      "99999999999999999999999ms"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t ns = 7;
        if (gpufl__view_parse_time(bad[i], &ns) != GPUFL_EINVAL)
            fail_msg("'%s' was accepted", bad[i]);
        assert_int_equal(ns, 7); /* untouched */
    }
}

static void test_format_time(void **state)
{
    (void)state;
    static const struct {
        uint64_t ns;
        const char *text;
    } want[] = {{0, "0s"},
                {1, "1ns"},
                {999, "999ns"},
                {1000, "1us"},
                {1001, "1.001us"},
                {40000, "40us"},
                {250000000, "250ms"},
                {1500000000, "1.5s"},
                {60000000000ull, "60s"},
                {1000000001, "1.000000001s"}};
    char buf[48];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        gpufl__view_format_time(want[i].ns, buf, sizeof buf);
        assert_string_equal(buf, want[i].text);
    }
    /* what it writes reads back exactly, over every scale */
    uint64_t x = 1;
    for (int i = 0; i < 2000; i++) {
        uint64_t back = 0;
        gpufl__view_format_time(x, buf, sizeof buf);
        if (gpufl__view_parse_time(buf, &back) != 0 || back != x)
            fail_msg("%" PRIu64 " -> '%s' -> %" PRIu64, x, buf, back);
        x = x * 3 + (uint64_t)i; /* wraps: every magnitude, ragged digits */
    }
    gpufl__view_format_time(UINT64_MAX, buf, sizeof buf);
    uint64_t back = 0;
    assert_int_equal(gpufl__view_parse_time(buf, &back), 0);
    assert_true(back == UINT64_MAX);
}

/* ---- bad windows and widths ------------------------------------------------ */

static void expect_refused(const gpufl_trace *t, uint64_t from, uint64_t to, bool has_to, unsigned width,
                           const char *msg)
{
    gpufl__view_opts o = {.from_ns = from, .to_ns = to, .has_to = has_to, .width = width};
    char *text = (char *)"untouched", err[512] = "";
    assert_int_equal(gpufl__view_render(t, &o, &text, err, sizeof err), GPUFL_EINVAL);
    assert_null(text);
    if (!strstr(err, msg))
        fail_msg("error '%s' does not say '%s'", err, msg);
}

/* Every line at most width display columns (UTF-8 characters: every glyph
 * the view draws is one column), none ending in a blank, no control
 * characters; returns the widest. */
static unsigned check_lines(const char *text, unsigned width)
{
    unsigned widest = 0, line = 1;
    for (const char *p = text; *p; line++) {
        size_t n = strcspn(p, "\n");
        unsigned cols = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)p[i];
            if (c < 0x20 || c == 0x7f)
                fail_msg("line %u has control character %#x: '%.*s'", line, c, (int)n, p);
            cols += (c & 0xc0) != 0x80;
        }
        if (cols > width)
            fail_msg("line %u is %u columns wide, more than %u: '%.*s'", line, cols, width, (int)n, p);
        if (n && p[n - 1] == ' ')
            fail_msg("line %u ends in a blank: '%.*s'", line, (int)n, p);
        if (p[n] != '\n')
            fail_msg("line %u has no newline", line);
        widest = cols > widest ? cols : widest;
        p += n + 1;
    }
    return widest;
}

static void test_bad_windows_and_widths(void **state)
{
    (void)state;
    gpufl_trace *t = tu_trace_open(session_two_gpus("view-a", true));
    expect_refused(t, 0, 0, false, GPUFL__VIEW_MIN_WIDTH - 1, "the width must be 20 to 4096 columns");
    expect_refused(t, 0, 0, false, GPUFL__VIEW_MAX_WIDTH + 1, "the width must be 20 to 4096 columns");
    expect_refused(t, 40 * US, 0, false, 80, "the window is empty: --from 40us is not before the session's end, 40us");
    expect_refused(t, 3000 * US, 0, false, 80, "--from 3ms is not before the session's end, 40us");
    expect_refused(t, 10 * US, 10 * US, true, 80, "the window is empty: --from 10us is not before --to 10us");
    expect_refused(t, 0, UINT64_MAX, true, 80, "the window goes past the end of time");

    /* a window past the session's end, and one of a single ns: drawn, lines fit */
    char *text = render_trace(t, 0, 80 * US, true, 54, false);
    assert_non_null(strstr(text, "window 0s to 80us (80.00 us), 40 columns of 2.00 us\n"));
    check_lines(text, 54);
    free(text);
    for (unsigned w = GPUFL__VIEW_MIN_WIDTH; w < 64; w += 7) {
        text = render_trace(t, 10 * US, 10 * US + 1, true, w, false);
        check_lines(text, w);
        if (w >= 30) { /* the footer's items fit */
            assert_non_null(strstr(text, "window 10us to 10.001us (1 ns)"));
            char cols[64];
            unsigned ncols = w - gpufl__view_label_width(w) - 1;
            snprintf(cols, sizeof cols, "%u columns of %.2f ns\n", ncols, 1.0 / ncols);
            assert_non_null(strstr(text, cols));
        }
        free(text);
    }
    gpufl_trace_close(t);
}

/* ---- colour ------------------------------------------------------------------ */

/* Colour adds SGR escapes and nothing else. */
static void test_colour_only_adds_escapes(void **state)
{
    (void)state;
    gpufl_trace *t = tu_trace_open(session_two_gpus("view-a", true));
    unsigned widths[] = {28, 54, 95};
    for (size_t w = 0; w < 3; w++) {
        char *plain = render_trace(t, 0, 0, false, widths[w], false);
        char *color = render_trace(t, 0, 0, false, widths[w], true);
        assert_null(strchr(plain, '\x1b'));
        size_t escapes = 0, n = 0;
        for (const char *p = color; *p;) {
            if (*p == '\x1b') {
                size_t k = strspn(p + 2, "0123456789;");
                if (p[1] != '[' || p[2 + k] != 'm')
                    fail_msg("not an SGR sequence: %.12s", p);
                p += 3 + k;
                escapes++;
                continue;
            }
            color[n++] = *p++;
        }
        color[n] = '\0';
        assert_true(escapes > 20);
        expect_text(color, plain);
        free(plain);
        free(color);
    }
    gpufl_trace_close(t);
}

/* ---- names that are not plain text -------------------------------------------- */

/* Control characters in names are drawn as '?', long names are cut with an
 * ellipsis, and a scope that never ended runs to the end, drawn '>'. */
static void test_odd_names_and_open_scope(void **state)
{
    (void)state;
    const char *name = "view-odd";
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    make_dir(name);
    char longname[400];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    FILE *d = open_log(name, "device");
    kernel(d, 0, 7, "bell\\u0007kernel", 0, 10);
    kernel(d, 0, 7, longname, 10, 20);
    close_log(d, name, 0);
    FILE *s = open_log(name, "scope");
    fprintf(s,
            "{\"type\":\"scope_begin\",\"ts_ns\":%llu,\"tid\":9,\"id\":1,\"parent\":0,\"depth\":0,"
            "\"name\":\"tab\\there \\u00e9t\\u00e9\"}\n",
            T0 + 2 * US);
    close_log(s, name, 0);
    char *text = render(path, 0, 0, false, 60);
    check_lines(text, 60);
    assert_non_null(strstr(text, "bell?kernel"));
    assert_non_null(strstr(text, "xxxxxxx\xe2\x80\xa6\n")); /* the legend cuts it */
    /* 20 us in 45 columns: the open scope from column 4 (2 us) to the end */
    assert_non_null(strstr(text, "  scope 0"
                                 "          [tab?here \xc3\xa9t\xc3\xa9-"));
    assert_non_null(strstr(text, "------->\n"));
    free(text);
}

/* A stream id with high bits set and a thread of id 0 are lanes of their
 * own: a stream's id and a thread's id may take any 32-bit value. */
static void test_large_ids_keep_their_lanes(void **state)
{
    (void)state;
    const char *name = "view-ids";
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    make_dir(name);
    FILE *d = open_log(name, "device");
    kernel(d, 0, 0x10000000u, "wide", 0, 20);
    kernel(d, 0, 0xffffffffu, "wider", 20, 40);
    close_log(d, name, 40 * US);
    FILE *s = open_log(name, "scope");
    scope(s, 0, 1, 0, 0, "zero", 0, 20);
    scope(s, 0xffffffffu, 2, 0, 0, "last", 20, 40);
    close_log(s, name, 40 * US);
    char *text = render(path, 0, 0, false, 54);
    /* labels too long for the column take their short form */
    assert_non_null(strstr(text, "\ngpu 0\n  busy        ████████████████████████████████████████\n"
                                 "s268435456    AAAAAAAAAAAAAAAAAAAA\n"
                                 "s4294967295                       BBBBBBBBBBBBBBBBBBBB\n"
                                 "thread 0\n  scope 0     [zero--------------]\n"
                                 "thread 4294967295\n  scope 0                         [last--------------]\n"));
    free(text);
}

/* ---- the command ---------------------------------------------------------------- */

static int run_view(const char *const *args, char **out, char **err)
{
    return tu_run_subcommand(GFL_CLI, "view", args, out, err);
}

static void expect_usage(const char *const *args, const char *msg)
{
    char *out, *err;
    int rc = run_view(args, &out, &err);
    if (rc != 64 || !strstr(err, msg) || !strstr(err, "usage: gpufl view SESSION"))
        fail_msg("gpufl view %s: exit %d, stderr '%s' (wanted 64 and '%s')", args[0] ? args[0] : "", rc, err, msg);
    assert_string_equal(out, "");
    free(out);
    free(err);
}

static void test_command(void **state)
{
    (void)state;
    const char *a = session_two_gpus("view-a", true);
    char *out, *err;
    /* not a terminal: no colour, the width asked */
    assert_int_equal(run_view((const char *[]){a, "--width", "54", NULL}, &out, &err), 0);
    expect_text(out, golden_medium);
    assert_string_equal(err, "");
    free(out);
    free(err);
    assert_int_equal(run_view((const char *[]){"--from", "10us", "--to=30000", "--width=54", a, NULL}, &out, &err), 0);
    expect_text(out, golden_window);
    free(out);
    free(err);
    /* not a terminal and no --width: 100 columns */
    assert_int_equal(run_view((const char *[]){a, NULL}, &out, &err), 0);
    assert_int_equal(check_lines(out, 100), 100);
    free(out);
    free(err);

    expect_usage((const char *[]){NULL}, "");
    expect_usage((const char *[]){a, a, NULL}, "one SESSION only");
    expect_usage((const char *[]){a, "--width", "19", NULL}, "bad --width '19': expected 20 to 4096 columns");
    expect_usage((const char *[]){a, "--width", "-80", NULL}, "bad --width '-80'");
    expect_usage((const char *[]){a, "--width", "80x", NULL}, "bad --width '80x'");
    expect_usage((const char *[]){a, "--from", "1.5", NULL}, "bad --from '1.5': expected a time");
    expect_usage((const char *[]){a, "--to", "3 ms", NULL}, "bad --to '3 ms'");
    expect_usage((const char *[]){a, "--from", "20us", "--to", "10us", NULL}, "--to must be after --from");
    expect_usage((const char *[]){a, "--from", "41us", NULL}, "--from 41us is not before the session's end, 40us");
    expect_usage((const char *[]){a, "--colour", NULL}, "bad argument '--colour'");

    char missing[4200];
    snprintf(missing, sizeof missing, "%s/no-such-session", dir);
    assert_int_equal(run_view((const char *[]){missing, NULL}, &out, &err), 1);
    assert_non_null(strstr(err, "gpufl view: "));
    assert_non_null(strstr(err, missing));
    assert_string_equal(out, "");
    free(out);
    free(err);

    assert_int_equal(run_view((const char *[]){"--help", NULL}, &out, &err), 0);
    assert_non_null(strstr(out, "usage: gpufl view SESSION [--from T] [--to T] [--width N]"));
    free(out);
    free(err);
}

/* ---- the recorded sample ---------------------------------------------------------- */

/* The line of text that starts with prefix, or NULL. */
static const char *line_starting(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = text; *p; p += strcspn(p, "\n") + 1) {
        if (!strncmp(p, prefix, n))
            return p;
        if (!p[strcspn(p, "\n")])
            break;
    }
    return NULL;
}

/* How many lines have a label (the first lw columns) that starts with one of
 * the two prefixes. */
static size_t lanes_labelled(const char *text, const char *a, const char *b)
{
    size_t n = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        if (!strncmp(p, a, strlen(a)) || (b && !strncmp(p, b, strlen(b))))
            n++;
        p += len + (p[len] != 0);
    }
    return n;
}

/* Lines of stream lanes: labelled "  stream N", or in narrow views
 * "stream N" or "sN". */
static size_t stream_lanes(const char *text, bool full)
{
    size_t n = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        if (full ? !strncmp(p, "  stream ", 9)
                 : !strncmp(p, "stream ", 7) || (p[0] == 's' && p[1] >= '0' && p[1] <= '9'))
            n++;
        p += len + (p[len] != 0);
    }
    return n;
}

/* Time in [from, to) when some kernel of device dev ran, and how many
 * kernels overlap it: the plain way, kernels sorted by start, merged. A
 * kernel is at least 1 ns long (as the view draws it). */
static void naive_busy(const gpufl_trace *t, unsigned dev, uint64_t from, uint64_t to, uint64_t *busy, size_t *count)
{
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    uint64_t run_a = 0, run_e = 0;
    *busy = 0;
    *count = 0;
    for (size_t i = 0; i < k->n; i++) {
        if (k->streams->device[k->stream_row[i]] != dev)
            continue;
        uint64_t a = k->start_ns[i], e = gpufl_trace_kernel_end(k, i);
        if (e <= a)
            e = a + 1;
        if (a >= to || e <= from)
            continue;
        (*count)++;
        a = a < from ? from : a;
        e = e > to ? to : e;
        if (a > run_e) {
            *busy += run_e - run_a;
            run_a = a;
            run_e = e;
        } else if (e > run_e) {
            run_e = e;
        }
    }
    *busy += run_e - run_a;
}

static void check_sample_view(const gpufl_trace *t, uint64_t from, uint64_t to, unsigned width)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    char *text = render_trace(t, from - info->start_ns, to - info->start_ns, true, width, false);
    if (check_lines(text, width) != width) /* the axis spans the whole width */
        fail_msg("no line is %u columns wide:\n%s", width, text);
    unsigned lw = width >= 60 ? 14 : width / 4; /* the label column */
    bool full = lw >= 10;                       /* labels indented under their header */
    char util[32];
    snprintf(util, sizeof util, "%-*s ", (int)lw, full ? "  util" : "util");
    assert_non_null(line_starting(text, "gpu 0  NVIDIA H200\n"));
    assert_int_equal(lanes_labelled(text, util, NULL), 1); /* NVML samples every 100 ms */
    assert_true(stream_lanes(text, full) >= 1);
    assert_true(lanes_labelled(text, "thread ", NULL) >= 1);
    /* the sample's threads have NVTX ranges (PyTorch's), no gpufl scopes */
    assert_true(lanes_labelled(text, full ? "  nvtx 0 " : "nvtx 0 ", full ? NULL : "nv0 ") >= 1);
    assert_int_equal(lanes_labelled(text, full ? "  scope " : "scope ", full ? NULL : "sc"), 0);
    assert_non_null(line_starting(text, "  A "));
    if (width >= 200) { /* the footer's figures on one line each */
        uint64_t busy;
        size_t count;
        naive_busy(t, 0, from, to, &busy, &count);
        char want[128];
        snprintf(want, sizeof want, "gpu 0: busy %.1f%%, ", 100.0 * (double)busy / (double)(to - from));
        const char *line = line_starting(text, "gpu 0: busy ");
        if (!line || strncmp(line, want, strlen(want)))
            fail_msg("wanted '%s' in:\n%s", want, text);
        snprintf(want, sizeof want, ", %zu kernel%s, ", count, count == 1 ? "" : "s");
        const char *eol = strchr(line, '\n');
        char *at = strstr(line, want);
        if (!at || at > eol)
            fail_msg("wanted '%s' in '%.*s'", want, (int)(eol - line), line);
    }
    free(text);
}

static void test_recorded_sample(void **state)
{
    (void)state;
    gpufl_trace *t = tu_trace_open(GFL_SOURCE_DIR "/samples/train_sample/trace.gflt");
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    assert_true(info->end_ns > info->start_ns);
    assert_true(gpufl_trace_get_kernels(t)->n > 100);
    uint64_t start = info->start_ns, len = info->end_ns - info->start_ns;
    static const unsigned widths[] = {20, 23, 37, 40, 59, 60, 80, 133, 200, 1000, GPUFL__VIEW_MAX_WIDTH};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        check_sample_view(t, start, start + len, widths[w]);
        check_sample_view(t, start + len / 3, start + 2 * len / 3, widths[w]);
    }
    /* and the busiest stretch, a few ms, whatever the width */
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    uint64_t mid = k->start_ns[k->n / 2];
    for (unsigned w = 200; w <= 260; w += 20)
        check_sample_view(t, mid, mid + 3000000, w);
    gpufl_trace_close(t);
}

/* The flight recorder's events (flight_fixture.h): a "traced" row with a
 * block in the columns trace windows cover, a "triggers" row with a mark
 * at each trigger, and a footer line with the text report's figures (2
 * windows, 6 ms of the 10 ms session; 2 triggers). */
/* GCC 12's -Wdangling-pointer misreads cmocka's asserts over pointers into
 * a heap buffer as pointers to the local variable holding it (Release). */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
static void test_trace_windows_and_triggers(void **state)
{
    (void)state;
    char path[4096];
    ff_write(dir, "flight", path);
    /* 100 columns of 100 us each: windows 1-3 ms and 6-10 ms from the
     * start, triggers at 5 and 7 ms */
    char *text = render(path, 0, 0, false, 115);
    const char *traced = strstr(text, "\ntraced ");
    assert_non_null(traced);
    const char *triggers = strstr(text, "\ntriggers ");
    assert_non_null(triggers);
    assert_true(traced < triggers && triggers < strstr(text, "\ngpu 0"));
    /* columns: 15 of label and a blank, then one per 100 us */
    const char *tc = traced + 1 + 15, *gc = triggers + 1 + 15;
    const char *block = "\xe2\x96\x88", *mark = "\xe2\x96\xbc";
    assert_true(tc[0] == ' ' && tc[9] == ' ');
    assert_memory_equal(tc + 10, block, 3); /* column 10: 1.0 ms */
    assert_memory_equal(tc + 10 + 3 * 19, block, 3);
    assert_true(tc[10 + 3 * 20] == ' '); /* column 30: 3 ms, window 1 ended */
    assert_true(strncmp(gc, "          ", 10) == 0);
    assert_memory_equal(gc + 50, mark, 3);          /* column 50: 5 ms */
    assert_memory_equal(gc + 50 + 3 + 19, mark, 3); /* column 70: 7 ms */
    assert_non_null(strstr(text, " traced: 2 of 2 trace windows, 6.00 ms (60.0%); device work only inside them"));
    assert_non_null(strstr(text, " 2 of 2 triggers"));
    free(text);
    /* a window of the session with no trigger in it: the rows stay, empty
     * (a second buffer: GCC's dangling-pointer check would see the pointers
     * into the first one as live across a reuse of its variable) */
    char *zoomed = render(path, 1500000, 2500000, true, 115);
    assert_non_null(strstr(zoomed, " 0 of 2 triggers"));
    assert_non_null(strstr(zoomed, " traced: 1 of 2 trace windows, 1.00 ms (100.0%)"));
    free(zoomed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_gpus_medium),
        cmocka_unit_test(test_two_gpus_wide),
        cmocka_unit_test(test_two_gpus_narrow),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_without_device_samples),
        cmocka_unit_test(test_empty_session),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_format_time),
        cmocka_unit_test(test_bad_windows_and_widths),
        cmocka_unit_test(test_colour_only_adds_escapes),
        cmocka_unit_test(test_odd_names_and_open_scope),
        cmocka_unit_test(test_large_ids_keep_their_lanes),
        cmocka_unit_test(test_command),
        cmocka_unit_test(test_recorded_sample),
        cmocka_unit_test(test_trace_windows_and_triggers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
