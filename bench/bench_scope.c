/*
 * Producer cost: one scope (gpufl_scope_begin + gpufl_scope_end) and one
 * event push (reserve, fill 128 bytes, commit on the calling thread's ring),
 * each against an empty-loop baseline of two non-inlined empty calls, all in
 * the same run. Measured in bursts of half a ring, with the collector
 * draining between bursts (not timed), so the producer never drops: the
 * figure is the cost of really recording, not of dropping. The session's
 * disk cap is set low so tens of millions of lines don't fill /tmp; lines
 * past it are counted by the collector, after the producer's work is done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "fs_util.h"
#include "core/clock.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"

#define BURST 2048 /* pairs per timed burst: 4096 events, half the ring */
#define BURSTS 1000
#define REPS 7

static __attribute__((noinline)) gpufl_scope empty_begin(const char *name)
{
    __asm__ volatile("" : : "r"(name) : "memory");
    return 1;
}

static __attribute__((noinline)) void empty_end(gpufl_scope s) { __asm__ volatile("" : : "r"(s) : "memory"); }

static void wait_drained(void)
{
    gpufl__producer *p = gpufl__tls_producer;
    struct timespec pause = {0, 200000};
    while (p && atomic_load(&p->ring.tail) != atomic_load(&p->ring.head))
        nanosleep(&pause, NULL);
}

typedef enum { BASELINE, SCOPE, PUSH } kind;

static gfl_event proto;

static __attribute__((noinline)) void push_one(gpufl__producer *p)
{
    gfl_event *rec = gpufl__ring_reserve(&p->ring, sizeof proto, GFL_CHANNEL_DEVICE);
    if (rec) {
        memcpy(rec, &proto, sizeof proto);
        rec->h.ts = gpufl__now_ns();
        gpufl__ring_commit(&p->ring);
    }
}

/* ns per iteration of `k`, over BURSTS timed bursts. */
static double run(kind k)
{
    uint64_t timed = 0;
    gpufl__producer *p = gpufl__producer_self();
    for (int b = 0; b < BURSTS; b++) {
        uint64_t t0 = bench_now_ns();
        switch (k) {
        case BASELINE:
            for (int i = 0; i < BURST; i++)
                empty_end(empty_begin("train/step"));
            break;
        case SCOPE:
            for (int i = 0; i < BURST; i++)
                gpufl_scope_end(gpufl_scope_begin("train/step"));
            break;
        case PUSH:
            for (int i = 0; i < 2 * BURST; i++)
                push_one(p);
            break;
        }
        timed += bench_now_ns() - t0;
        if (k != BASELINE)
            wait_drained();
    }
    return (double)timed / ((double)BURSTS * (k == PUSH ? 2 * BURST : BURST));
}

int main(void)
{
    char machine[512];
    bench_machine(machine, sizeof machine);
    char *logs = bench_tmpdir();
    gpufl_options o;
    gpufl_options_init(&o);
    o.app_name = "bench_scope";
    o.log_path = logs;
    o.session_max_bytes = 256ull << 20;
    if (!gpufl_init(&o)) {
        fprintf(stderr, "bench_scope: %s\n", gpufl_last_error());
        return 1;
    }
    memset(&proto, 0, sizeof proto);
    proto.h.type = GFL_EV_KERNEL;
    proto.u.kernel.name = 2;
    /* let the clock calibration settle onto the TSC first */
    struct timespec settle = {0, 300000000};
    nanosleep(&settle, NULL);

    double base[REPS], scope[REPS], push[REPS];
    for (int r = 0; r < REPS; r++) {
        base[r] = run(BASELINE);
        scope[r] = run(SCOPE);
        push[r] = run(PUSH);
    }
    gpufl_shutdown();

    /* every event must have been written: a drop would flatter the figure */
    char summary_path[4200];
    snprintf(summary_path, sizeof summary_path, "%s/session.json", gpufl_session_dir());
    FILE *f = fopen(summary_path, "r");
    char text[1 << 16] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    const char *dropped = strstr(text, "\"ring_full\":");
    long long drops = dropped ? atoll(dropped + 12) : -1;

    double b = bench_median(base, REPS), s = bench_median(scope, REPS), p = bench_median(push, REPS);
    printf("bench_scope (%s; clock %s)\n", machine, gpufl__clock_source());
    printf("  empty-loop baseline (2 empty calls)   %7.2f ns\n", b);
    printf("  scope begin+end pair                  %7.2f ns  (%.2f ns above baseline; target <= 50)\n", s, s - b);
    printf("  event push (reserve, 128 B, commit)   %7.2f ns\n", p);
    printf("  events the producer dropped           %lld (must be 0)\n", drops);
    tu_rm_rf(logs);
    free(logs);
    return drops == 0 ? 0 : 1;
}
