/*
 * The synthetic job of bench_job (see job_gen.h).
 */
#include "job_gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_session.h"
#include "core/intern.h"

#define COLLS_PER_STEP 24            /* NCCL kernels per step, ~2.7 % of its ~900 kernels */
#define NCCL_STREAM 13               /* the kernel mix's communication stream */
#define HOST_B_MONO 3600000000000ull /* host B booted an hour after host A */
#define HOST_B_WALL_ERR 180000ull    /* host B's CLOCK_REALTIME is 180 us ahead */
#define NTP_MAXERROR 500000ull       /* both hosts' bound: 500 us */
#define CLOCK_EVERY 10000000000ull   /* a clock pair every 10 s, as the session takes them */

static void die(const char *what, const char *path)
{
    fprintf(stderr, "bench_job: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int job_gen_late_rank(int ranks) { return ranks > 1 ? ranks * 3 / 5 : 0; }

/* When rank r's collective c reaches the NCCL kernel (the job's time line,
 * host A's clock), nominal at n, not before the previous one ended. */
static uint64_t arrival(int r, int ranks, uint64_t c, uint64_t n, uint64_t prev_end)
{
    uint64_t h = mix64(((uint64_t)r << 40) ^ c);
    uint64_t a = n + h % 20000; /* a few us apart */
    if (r == job_gen_late_rank(ranks) && c % JOB_GEN_LATE_EVERY == 13)
        a += 2000000 + h % 1000000; /* 2-3 ms late */
    return a > prev_end + 500 ? a : prev_end + 500;
}

static const char *nccl_name(unsigned i)
{
    if (i == 0)
        return "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    if (i == COLLS_PER_STEP - 1)
        return "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    return "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
}

/* Host B's session clock is its CLOCK_MONOTONIC: every time moves by its offset. */
static void shift(gfl_event *ev, uint64_t by)
{
    ev->h.ts += by;
    switch (ev->h.type) {
    case GFL_EV_KERNEL:
        ev->u.kernel.end_ts += by;
        ev->u.kernel.api_start_ts += by;
        ev->u.kernel.api_end_ts += by;
        break;
    case GFL_EV_MEMCPY:
        ev->u.memcpy.end_ts += by;
        ev->u.memcpy.api_start_ts += by;
        ev->u.memcpy.api_end_ts += by;
        break;
    case GFL_EV_MEMSET:
        ev->u.memset.end_ts += by;
        ev->u.memset.api_start_ts += by;
        ev->u.memset.api_end_ts += by;
        break;
    case GFL_EV_SYNC: ev->u.sync.end_ts += by; break;
    case GFL_EV_NVTX_RANGE: ev->u.nvtx.end_ts += by; break;
    case GFL_EV_SCOPE_END: ev->u.scope.begin_ts += by; break;
    default: break;
    }
}

typedef struct rank_out {
    bench_gflt_file f;
    job_gen_stats *st;
    uint64_t left, last_ts;
    uint64_t mono_shift, wall_offset; /* wall = session + wall_offset */
} rank_out;

static void put(rank_out *o, const gfl_event *ev)
{
    if (gpufl__gflt_writer_add(&o->f.w, ev) != 0) {
        errno = EIO;
        die("writing", "a rank's trace.gflt");
    }
    o->left--;
    o->st->events++;
    o->st->kernels += ev->h.type == GFL_EV_KERNEL;
    if (ev->h.ts > o->last_ts)
        o->last_ts = ev->h.ts;
}

static void clock_event(rank_out *o, uint64_t ts, const char *point)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_CLOCK;
    ev.h.tid = 4300;
    ev.h.ts = ts;
    ev.u.clock = (gfl_clock_payload){.mono_ns = ts,
                                     .wall_ns = ts + o->wall_offset,
                                     .ntp_offset_ns = 20000,
                                     .ntp_maxerror_ns = NTP_MAXERROR,
                                     .ntp_esterror_ns = 50000,
                                     .uncertainty_ns = 60,
                                     .point = gpufl__intern(point),
                                     .ntp = gpufl__intern("synchronised"),
                                     .ntp_status = 0x2001};
    put(o, &ev);
    o->st->clocks++;
}

static void write_session_json(const char *dir, const gpufl__session_meta *m, int rank, int ranks, int local)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/session.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write", path);
    fprintf(f,
            "{\"session_id\":\"%s\",\"app_name\":\"%s\",\"host\":\"%s\",\"pid\":%d,\"format_version\":1,"
            "\"job\":{\"launcher\":\"torchrun\",\"rank\":%d,\"local_rank\":%d,\"world_size\":%d,"
            "\"local_world_size\":%d,\"id\":\"bench-job-1\",\"id_from\":\"TORCHELASTIC_RUN_ID\","
            "\"master\":\"node-a:29500\",\"host\":\"%s\"}}\n",
            m->session_id, m->app_name, m->host, (int)m->pid, rank, local, ranks, (ranks + 1) / 2, m->host);
    if (fclose(f) != 0)
        die("cannot write", path);
}

void job_gen_rank(const char *dir, int rank, int ranks, uint64_t events, job_gen_stats *st)
{
    memset(st, 0, sizeof *st);
    if (mkdir(dir, 0755) != 0)
        die("cannot create", dir);
    bool host_b = rank >= (ranks + 1) / 2;
    char sid[96];
    snprintf(sid, sizeof sid, "bench_job-20261127-000000-%d-%016llx", 1000 + rank,
             (unsigned long long)mix64((uint64_t)rank));
    gpufl__session_meta meta;
    bench_session_meta(&meta, sid, "bench_job");
    meta.host = host_b ? "node-b" : "node-a";
    meta.pid = 1000 + rank;
    rank_out o = {.st = st, .left = events, .mono_shift = host_b ? HOST_B_MONO : 0};
    uint64_t wall0 = meta.start_wall_ns - meta.start_ns; /* host A's */
    o.wall_offset = wall0 - o.mono_shift + (host_b ? HOST_B_WALL_ERR : 0);
    meta.start_ns += o.mono_shift;
    meta.start_wall_ns = meta.start_ns + o.wall_offset;
    write_session_json(dir, &meta, rank, ranks, host_b ? rank - (ranks + 1) / 2 : rank);

    char path[4200];
    snprintf(path, sizeof path, "%s/trace.gflt", dir);
    bench_gflt_open(&o.f, path, &meta);
    trace_gen *g = bench_gen_open("bench_job");
    uint32_t backward = gpufl__intern("backward");
    uint32_t names[COLLS_PER_STEP];
    for (unsigned i = 0; i < COLLS_PER_STEP; i++)
        names[i] = gpufl__intern(nccl_name(i));
    uint64_t next_clock = meta.start_ns + CLOCK_EVERY, coll = 0, prev_end = 0;
    clock_event(&o, meta.start_ns, "start");
    while (o.left > 1) { /* the end clock last */
        gfl_event ev;
        trace_gen_next(g, &ev);
        shift(&ev, o.mono_shift);
        if (ev.h.type == GFL_EV_HOST_METRICS && ev.h.ts >= next_clock && o.left > 2) {
            clock_event(&o, ev.h.ts, "periodic");
            next_clock += CLOCK_EVERY;
        }
        put(&o, &ev);
        if (ev.h.type != GFL_EV_SCOPE_END || ev.u.scope.depth != 1 || ev.u.scope.name != backward)
            continue;
        /* the gradients' collectives, spread over the backward pass (times on host A's clock) */
        uint64_t b = ev.u.scope.begin_ts - o.mono_shift, e = ev.h.ts - o.mono_shift;
        for (unsigned i = 0; i < COLLS_PER_STEP && o.left > 1; i++, coll++) {
            uint64_t n = b + (e - b) * (i + 1) / (COLLS_PER_STEP + 1), last = 0, mine = 0;
            for (int r = 0; r < ranks; r++) {
                uint64_t a = arrival(r, ranks, coll, n, prev_end);
                if (a > last)
                    last = a;
                if (r == rank)
                    mine = a;
            }
            uint64_t end = last + 30000 + mix64(coll) % 50000;
            prev_end = end;
            gfl_event k;
            memset(&k, 0, sizeof k);
            k.h.type = GFL_EV_KERNEL;
            k.h.tid = 4242;
            k.h.ts = mine + o.mono_shift;
            k.u.kernel = (gfl_kernel_payload){.end_ts = end + o.mono_shift,
                                              .name = names[i],
                                              .context = 1,
                                              .stream = NCCL_STREAM,
                                              .correlation = (uint32_t)(0x80000000u + coll),
                                              .grid = {24, 1, 1},
                                              .block = {512, 1, 1},
                                              .registers = 96,
                                              .scope_id = ev.u.scope.id,
                                              .api_start_ts = n - 9000 + o.mono_shift,
                                              .api_end_ts = n - 5000 + o.mono_shift};
            put(&o, &k);
            st->nccl_kernels++;
        }
    }
    clock_event(&o, o.last_ts + 500, "end");
    bench_session_end(&meta, o.last_ts);
    bench_gflt_close(&o.f, &meta);
    trace_gen_close(g);
    struct stat sb;
    if (stat(path, &sb) == 0)
        st->gflt_bytes = (uint64_t)sb.st_size;
}
