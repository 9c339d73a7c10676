/*
 * Collector + NDJSON writer throughput: one producer thread feeds a
 * realistic mix of events (kernels with real-world names and durations,
 * copies, scopes, device metrics) as fast as the collector takes them, never
 * dropping (it waits while its ring is full: a benchmark-only courtesy), and
 * the time runs from the first event to gpufl_shutdown() returning with all
 * of them on disk. Baseline in the same run: write() of the same number of
 * bytes to the same file system in 128 KiB calls.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "fs_util.h"
#include "core/clock.h"
#include "core/intern.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"

#define EVENTS 4000000ull

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

static uint64_t dir_bytes(const char *dir)
{
    static const char *const names[] = {"device.log", "scope.log", "system.log"};
    uint64_t total = 0;
    for (int i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0)
            total += (uint64_t)st.st_size;
    }
    return total;
}

/* Seconds to write `bytes` with 128 KiB write() calls into dir. */
static double raw_write_seconds(const char *dir, uint64_t bytes)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/raw.bin", dir);
    static char block[128 << 10];
    memset(block, 'x', sizeof block);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    uint64_t t0 = bench_now_ns();
    for (uint64_t done = 0; done < bytes; done += sizeof block)
        if (write(fd, block, sizeof block) < 0)
            break;
    close(fd);
    double s = (double)(bench_now_ns() - t0) / 1e9;
    unlink(path);
    return s;
}

/* One recorded run into a fresh session; returns seconds, sets *bytes. */
static double one_run(const char *logs, const uint32_t *unused, uint64_t *bytes)
{
    (void)unused;
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "bench_writer";
    o.log_path = logs;
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
    double secs = (double)(bench_now_ns() - t0) / 1e9;
    *bytes = dir_bytes(gpufl_session_dir());
    tu_rm_rf(gpufl_session_dir());
    return secs;
}

#define REPS 3

int main(void)
{
    char machine[512];
    bench_machine(machine, sizeof machine);
    /* BENCH_DIR picks the file system (default /tmp); the raw-write baseline
     * is measured on the same one, beside each run. */
    char *logs = bench_tmpdir();
    double eps[REPS], mbps[REPS], raw_mbps[REPS];
    uint64_t bytes = 0;
    for (int r = 0; r < REPS; r++) {
        double secs = one_run(logs, NULL, &bytes);
        eps[r] = (double)EVENTS / secs;
        mbps[r] = (double)bytes / secs / 1e6;
        raw_mbps[r] = (double)bytes / raw_write_seconds(logs, bytes) / 1e6;
    }
    double e = bench_median(eps, REPS), m = bench_median(mbps, REPS), raw = bench_median(raw_mbps, REPS);
    printf("bench_writer (%s; logs in %s)\n", machine, getenv("BENCH_DIR") ? getenv("BENCH_DIR") : "/tmp");
    printf("  events per run                %llu (%.1f MB, %.1f bytes/event), median of %d runs\n",
           (unsigned long long)EVENTS, (double)bytes / 1e6, (double)bytes / (double)EVENTS, REPS);
    printf("  collector + NDJSON writer     %.2f M events/s, %.0f MB/s (target >= 2 M events/s)\n", e / 1e6, m);
    printf("  baseline: raw write() of the same bytes, 128 KiB calls   %.0f MB/s\n", raw);
    printf("  writer speed / raw write speed                           %.2f\n", m / raw);
    tu_rm_rf(logs);
    free(logs);
    return 0;
}
