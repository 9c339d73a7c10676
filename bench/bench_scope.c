/*
 * Producer cost, each figure beside its baselines in the same run:
 *
 *   empty calls    two non-inlined empty calls (what any begin/end pair of
 *                  calls costs at the least);
 *   timestamp      one gpufl__now_ns(), the clock every event reads (and
 *                  one bare rdtsc where there is one);
 *   scope          GFL_SCOPE with a literal name (begin + end, the name's id
 *                  kept per call site), and gpufl_scope_begin/end with the
 *                  name looked up on each call;
 *   event push     one timestamp plus a 128-byte kernel record reserved,
 *                  copied and committed on the calling thread's ring.
 *
 * The targets are ratios: scope <= 1.6 x two timestamps, push <=
 * 1.5 x one timestamp. Each round measures every figure once, in turn, in
 * bursts of at most half a ring with the collector draining between bursts
 * (not timed), so the producer never drops: the figure is the cost of
 * really recording. ROUNDS rounds give the median and [min-max] of every
 * figure and of every ratio (ratios are taken within a round). The
 * session's disk cap is set low so tens of millions of lines don't fill
 * /tmp; lines past it are counted by the collector, after the producer's
 * work is done.
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

#define BURST 2048 /* pairs per timed burst: 112 KiB of scope records, under half the ring */
#define BURSTS 500
#define ROUNDS 7

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

typedef enum { EMPTY, CLOCK, TSC, SCOPE, SCOPE_LOOKUP, PUSH, KINDS } kind;

static gfl_event proto;

static __attribute__((noinline)) void push_one(gpufl__producer *p)
{
    /* a record is 8-byte aligned, not as a gfl_event: only its header is
     * accessed in place */
    gfl_event_header *rec = gpufl__ring_reserve(&p->ring, sizeof proto, GFL_CHANNEL_DEVICE);
    if (rec) {
        memcpy(rec, &proto, sizeof proto);
        rec->ts = gpufl__now_ns();
        gpufl__ring_commit(&p->ring);
    }
}

static volatile uint64_t sink;

/* ns per operation of `k`, over BURSTS timed bursts. */
static double run(kind k)
{
    uint64_t timed = 0, acc = 0;
    const char *volatile lookup_name = "train/step"; /* not a constant: looked up on each call */
    gpufl__producer *p = gpufl__producer_self();
    for (int b = 0; b < BURSTS; b++) {
        uint64_t t0 = bench_now_ns();
        switch (k) {
        case EMPTY:
            for (int i = 0; i < BURST; i++)
                empty_end(empty_begin("train/step"));
            break;
        case CLOCK:
            for (int i = 0; i < BURST; i++)
                acc += gpufl__now_ns();
            break;
        case TSC:
#if GFL_HAVE_TSC
            for (int i = 0; i < BURST; i++)
                acc += __rdtsc();
#endif
            break;
        case SCOPE:
            for (int i = 0; i < BURST; i++)
                GFL_SCOPE("train/step") { __asm__ volatile("" ::: "memory"); }
            break;
        case SCOPE_LOOKUP:
            for (int i = 0; i < BURST; i++)
                gpufl_scope_end(gpufl_scope_begin(lookup_name));
            break;
        case PUSH: /* 128 B records: BURST of them would fill the ring */
            for (int i = 0; i < BURST / 2; i++)
                push_one(p);
            break;
        default: break;
        }
        timed += bench_now_ns() - t0;
        if (k == SCOPE || k == SCOPE_LOOKUP || k == PUSH)
            wait_drained();
    }
    sink = acc;
    return (double)timed / ((double)BURSTS * (k == PUSH ? BURST / 2 : BURST));
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

    double t[KINDS][ROUNDS], scope_ratio[ROUNDS], lookup_ratio[ROUNDS], push_ratio[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < KINDS; k++)
            t[k][r] = run((kind)k);
        scope_ratio[r] = t[SCOPE][r] / (2 * t[CLOCK][r]);
        lookup_ratio[r] = t[SCOPE_LOOKUP][r] / (2 * t[CLOCK][r]);
        push_ratio[r] = t[PUSH][r] / t[CLOCK][r];
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

    char b[64];
    printf("bench_scope (%s; clock %s; %d rounds, ns per operation, median [min-max])\n", machine,
           gpufl__clock_source(), ROUNDS);
    printf("  baseline: two empty calls               %s\n", bench_spread(t[EMPTY], ROUNDS, 1, 2, b, sizeof b));
    printf("  baseline: one timestamp (gpufl__now_ns)  %s\n", bench_spread(t[CLOCK], ROUNDS, 1, 2, b, sizeof b));
    if (GFL_HAVE_TSC)
        printf("  baseline: one bare rdtsc                %s\n", bench_spread(t[TSC], ROUNDS, 1, 2, b, sizeof b));
    printf("  scope begin+end, GFL_SCOPE (literal)    %s\n", bench_spread(t[SCOPE], ROUNDS, 1, 2, b, sizeof b));
    printf("    / two timestamps                      %s  (target <= 1.6)\n",
           bench_spread(scope_ratio, ROUNDS, 1, 2, b, sizeof b));
    printf("  scope begin+end, name looked up         %s\n", bench_spread(t[SCOPE_LOOKUP], ROUNDS, 1, 2, b, sizeof b));
    printf("    / two timestamps                      %s\n", bench_spread(lookup_ratio, ROUNDS, 1, 2, b, sizeof b));
    printf("  event push (timestamp, 128 B record)    %s\n", bench_spread(t[PUSH], ROUNDS, 1, 2, b, sizeof b));
    printf("    / one timestamp                       %s  (target <= 1.5)\n",
           bench_spread(push_ratio, ROUNDS, 1, 2, b, sizeof b));
    printf("  events the producer dropped             %lld (must be 0)\n", drops);
    tu_rm_rf(logs);
    free(logs);
    return drops == 0 ? 0 : 1;
}
