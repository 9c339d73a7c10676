/*
 * Collector + writer throughput, NDJSON and .gflt: one producer thread
 * feeds a realistic mix of events (kernels with real-world names and
 * durations, copies, scopes, device metrics) as fast as the collector takes
 * them, never dropping (it waits while its ring is full: a benchmark-only
 * courtesy), and the time runs from the first event to gpufl_shutdown()
 * returning with all of them on disk.
 *
 * Baselines in the same run, on the same file system: write() of the same
 * number of bytes in calls of the size the writer made (its log and trace
 * files' write() calls, counted through core/os.h's table) and in 128 KiB
 * calls. A file system's speed depends on what ran just before (free page
 * cache, dirty pages being written back), so each of the RUNS runs measures
 * the writers and their baselines one after the other, in the opposite
 * order on every other run; figures are medians with [min-max] over runs,
 * and each ratio is taken within a run.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "core/clock.h"
#include "core/intern.h"
#include "core/os.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"

#define EVENTS 4000000ull
#define RUNS 7
#define RAW_CALL (128u << 10)

static const char *const kernel_names[] = {
    "ampere_sgemm_128x64_nn",
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"),
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
    "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4>",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>",
};
#define N_NAMES (sizeof kernel_names / sizeof kernel_names[0])

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Builds event i of the mix: 5 kernels, 1 copy, 3 scope events, 1 metric. */
static void make_event(uint64_t i, gfl_event *ev, const uint32_t *names, uint32_t scope_name)
{
    memset(ev, 0, sizeof *ev);
    uint64_t now = gpufl__now_ns();
    unsigned slot = (unsigned)(i % 10);
    ev->h.tid = 1234;
    ev->h.ts = now;
    if (slot < 5) {
        ev->h.type = GFL_EV_KERNEL;
        gfl_kernel_payload *k = &ev->u.kernel;
        /* durations: mostly a few µs, a long tail to ms, like a training step */
        uint64_t r = next_random();
        k->end_ts = now + 2000 + (r % 100 < 90 ? r % 20000 : r % 3000000);
        k->name = names[r % N_NAMES];
        k->stream = 7 + (uint32_t)(r % 4);
        k->context = 1;
        k->correlation = (uint32_t)i;
        k->grid[0] = 1 + (uint32_t)(r % 4096);
        k->grid[1] = k->grid[2] = 1;
        k->block[0] = 256;
        k->block[1] = k->block[2] = 1;
        k->registers = 64;
        k->dynamic_smem = 49152;
        k->occupancy_x10000 = 5000;
        k->limiter = GFL_LIMIT_REGISTERS;
        k->scope_id = 1099511627777ull + i / 100;
        k->external_id = 4000 + i / 7;
    } else if (slot == 5) {
        ev->h.type = GFL_EV_MEMCPY;
        ev->u.memcpy = (gfl_memcpy_payload){.end_ts = now + 5000,
                                            .bytes = 1 << 20,
                                            .stream = 7,
                                            .context = 1,
                                            .correlation = (uint32_t)i,
                                            .copy_kind = GFL_COPY_HTOD,
                                            .src_kind = GFL_MEM_PINNED,
                                            .dst_kind = GFL_MEM_DEVICE};
    } else if (slot < 9) {
        ev->h.type = slot == 8 ? GFL_EV_SCOPE_END : GFL_EV_SCOPE_BEGIN;
        ev->u.scope = (gfl_scope_payload){.id = 1099511627777ull + i,
                                          .parent_id = 1099511627776ull,
                                          .begin_ts = now - 1000,
                                          .name = scope_name,
                                          .depth = 1};
    } else {
        ev->h.type = GFL_EV_DEVICE_METRICS;
        ev->u.dev = (gfl_device_metrics_payload){.valid = GFL_DEV_GPU_UTIL | GFL_DEV_MEM | GFL_DEV_TEMP |
                                                          GFL_DEV_POWER | GFL_DEV_CLOCKS,
                                                 .gpu_util_pct = 97,
                                                 .mem_used_bytes = 80ull << 30,
                                                 .mem_total_bytes = 141ull << 30,
                                                 .temp_c = 61,
                                                 .power_mw = 512000,
                                                 .sm_clock_mhz = 1980,
                                                 .mem_clock_mhz = 2619,
                                                 .gfx_clock_mhz = 1980};
    }
}

/* ---- the writer's write() calls ------------------------------------------
 * Counted on the files that hold events (*.log, *.gflt), not session.json:
 * the collector thread writes them, and main reads the counts after
 * gpufl_shutdown() has joined it. */

#define MAX_FD 4096
static bool data_fd[MAX_FD];
static uint64_t write_calls, write_bytes;

static int counting_open(const char *path, int flags, mode_t mode)
{
    int fd = gpufl__os_real.open(path, flags, mode);
    size_t n = strlen(path);
    if (fd >= 0 && fd < MAX_FD)
        data_fd[fd] = (n > 4 && !strcmp(path + n - 4, ".log")) || (n > 5 && !strcmp(path + n - 5, ".gflt"));
    return fd;
}

static ssize_t counting_write(int fd, const void *buf, size_t n)
{
    ssize_t w = gpufl__os_real.write(fd, buf, n);
    if (w > 0 && fd >= 0 && fd < MAX_FD && data_fd[fd]) {
        write_calls++;
        write_bytes += (uint64_t)w;
    }
    return w;
}

static gpufl__os_ops counting_os;

/* ---- one measurement -------------------------------------------------- */

typedef struct figure {
    double secs;
    uint64_t bytes, calls;
} figure;

/* One recorded session of EVENTS events in format fmt into logs. */
static figure record(const char *logs, gpufl_log_format fmt)
{
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "bench_writer";
    o.log_path = logs;
    o.log_format = fmt;
    o.ring_events = 1 << 16;
    o.log_rotate_bytes = 1ull << 40; /* one file per channel: measure writing, not renames */
    o.min_free_bytes = 0;
    if (!gpufl_init(&o)) {
        fprintf(stderr, "bench_writer: %s\n", gpufl_last_error());
        exit(1);
    }
    uint32_t names[N_NAMES];
    for (size_t i = 0; i < N_NAMES; i++)
        names[i] = gpufl__intern(kernel_names[i]);
    uint32_t scope_name = gpufl__intern("train/step/forward");
    gpufl__producer *p = gpufl__producer_self();
    write_calls = write_bytes = 0;

    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < EVENTS; i++) {
        gfl_event ev;
        make_event(i, &ev, names, scope_name);
        bool scope = ev.h.type == GFL_EV_SCOPE_BEGIN || ev.h.type == GFL_EV_SCOPE_END;
        /* scopes travel packed, as scope.c writes them: sequence i + 1 of
         * this producer, outermost */
        size_t len = scope ? gpufl__scope_record_len(ev.h.type, i + 1, 0) : gpufl__record_len_of(&ev);
        /* wait for room instead of dropping (benchmark only) */
        while (!gpufl__ring_has_room(&p->ring, len))
            sched_yield();
        void *rec = gpufl__ring_reserve(&p->ring, len, GFL_CHANNEL_DEVICE);
        if (scope)
            gpufl__scope_record_put(rec, ev.h.type, 0, ev.u.scope.depth, ev.u.scope.name, ev.h.ts, ev.u.scope.begin_ts,
                                    i + 1, 0);
        else
            memcpy(rec, &ev, len);
        gpufl__ring_commit(&p->ring);
    }
    gpufl_shutdown();
    figure f = {(double)(bench_now_ns() - t0) / 1e9, write_bytes, write_calls};
    tu_rm_rf(gpufl_session_dir());
    return f;
}

/* write() of `bytes` into a new file in dir, in calls of `call` bytes. */
static double raw_write(const char *dir, uint64_t bytes, size_t call)
{
    static char *block;
    static size_t block_len;
    if (call > block_len) {
        free(block);
        block = malloc(call);
        if (!block) {
            fprintf(stderr, "bench_writer: out of memory\n");
            exit(1);
        }
        memset(block, 'x', call);
        block_len = call;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/raw.bin", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    uint64_t t0 = bench_now_ns();
    for (uint64_t done = 0; fd >= 0 && done < bytes;) {
        size_t n = bytes - done < call ? (size_t)(bytes - done) : call;
        if (write(fd, block, n) != (ssize_t)n)
            break;
        done += n;
    }
    if (fd >= 0)
        close(fd);
    double s = (double)(bench_now_ns() - t0) / 1e9;
    unlink(path);
    return s;
}

/* ---- a writer and its baselines over the runs ------------------------- */

typedef struct series {
    const char *name;
    gpufl_log_format fmt;
    double eps[RUNS], mbps[RUNS], raw_same[RUNS], raw_128k[RUNS], ratio_same[RUNS], ratio_128k[RUNS];
    uint64_t bytes, calls;
} series;

static void measure_writer(const char *logs, series *s, int run)
{
    figure f = record(logs, s->fmt);
    s->bytes = f.bytes;
    s->calls = f.calls;
    s->eps[run] = (double)EVENTS / f.secs;
    s->mbps[run] = (double)f.bytes / f.secs / 1e6;
}

static void measure_raw(const char *logs, series *s, int run, bool same_size)
{
    size_t call = same_size ? (size_t)(s->bytes / (s->calls ? s->calls : 1)) : RAW_CALL;
    double mbps = (double)s->bytes / raw_write(logs, s->bytes, call ? call : 1) / 1e6;
    if (same_size)
        s->raw_same[run] = mbps;
    else
        s->raw_128k[run] = mbps;
}

/* "median [min-max]" of v[0..RUNS) scaled by `scale`, with `fmt` digits. */
static const char *spread(const double *v, double scale, int decimals)
{
    static char bufs[8][96]; /* several in one printf */
    static int next;
    return bench_spread(v, RUNS, scale, decimals, bufs[next++ % 8], sizeof bufs[0]);
}

static void print_series(const series *s, const char *target)
{
    printf("  %s: %.1f MB per run, %.1f bytes/event, write() calls of %.1f KiB on average\n", s->name,
           (double)s->bytes / 1e6, (double)s->bytes / (double)EVENTS,
           (double)s->bytes / (double)(s->calls ? s->calls : 1) / 1024.0);
    printf("    collector + %-6s writer          %s M events/s, %s MB/s (%s)\n", s->name, spread(s->eps, 1e6, 2),
           spread(s->mbps, 1, 0), target);
    printf("    baseline: write(), same-size calls  %s MB/s; writer / raw %s\n", spread(s->raw_same, 1, 0),
           spread(s->ratio_same, 1, 2));
    printf("    baseline: write(), 128 KiB calls    %s MB/s; writer / raw %s\n", spread(s->raw_128k, 1, 0),
           spread(s->ratio_128k, 1, 2));
}

int main(void)
{
    char machine[512], fs[64];
    bench_machine(machine, sizeof machine);
    /* BENCH_DIR picks the file system (default /tmp); the raw-write
     * baselines are measured on the same one. */
    char *logs = bench_tmpdir();
    bench_fs_type(logs, fs, sizeof fs);
    counting_os = gpufl__os_real;
    counting_os.open = counting_open;
    counting_os.write = counting_write;
    gpufl__os = &counting_os;

    series sv[2] = {{.name = "NDJSON", .fmt = GPUFL_LOG_NDJSON}, {.name = ".gflt", .fmt = GPUFL_LOG_GFLT}};
    /* per run: each writer, then its two baselines; backwards on odd runs,
     * whose baselines, coming first, take the writer's bytes and call size
     * from the run before (the same from run to run) */
    enum { STEPS = 6 };
    for (int run = 0; run < RUNS; run++) {
        for (int k = 0; k < STEPS; k++) {
            int step = run % 2 ? STEPS - 1 - k : k;
            series *s = &sv[step / 3];
            if (step % 3 == 0)
                measure_writer(logs, s, run);
            else
                measure_raw(logs, s, run, step % 3 == 1);
        }
        for (int i = 0; i < 2; i++) {
            sv[i].ratio_same[run] = sv[i].mbps[run] / sv[i].raw_same[run];
            sv[i].ratio_128k[run] = sv[i].mbps[run] / sv[i].raw_128k[run];
        }
    }
    gpufl__os = &gpufl__os_real;

    printf("bench_writer (%s; logs in %s, %s)\n", machine, getenv("BENCH_DIR") ? getenv("BENCH_DIR") : "/tmp", fs);
    printf("  %llu events per run (in every 10: 5 kernels, 1 copy, 3 scope events, 1 device metric); %d runs,"
           " writers and baselines alternating; median [min-max]\n",
           (unsigned long long)EVENTS, RUNS);
    print_series(&sv[0], "target >= 3 M events/s and >= 1.0 x raw write()");
    print_series(&sv[1], "target >= 6 M events/s");
    tu_rm_rf(logs);
    free(logs);
    return 0;
}
