/*
 * The synthetic session generator (see trace_gen.h).
 */
#include "trace_gen.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/intern.h"

#define MAX_KERNELS 256
#define MAX_CONFIGS 16
#define MAX_STREAMS 16
#define STEP_OPS 90           /* framework ops per training step */
#define FLUSH_NS 20000000ull  /* device activity arrives in 20 ms batches */
#define SAMPLE_NS 10000000ull /* metrics every 10 ms */
#define QUEUE 65536

typedef struct config {
    double weight;
    uint32_t grid[3];
    uint16_t block[3];
    uint16_t registers;
    uint32_t static_smem, dynamic_smem, local_mem;
    uint16_t occupancy_x10000;
    uint8_t limiter;
} config;

typedef struct kernel_kind {
    uint32_t name;
    double weight;
    int comm;              /* runs on a communication stream */
    double pct[6], dur[6]; /* duration percentiles: p0 p10 p50 p90 p99 p100 */
    config configs[MAX_CONFIGS];
    unsigned nconfigs;
    double config_total;
} kernel_kind;

struct trace_gen {
    kernel_kind kinds[MAX_KERNELS];
    unsigned nkinds;
    double weight_total;
    uint32_t compute[MAX_STREAMS], comm[MAX_STREAMS];
    unsigned ncompute, ncomm;
    uint64_t rng;
    uint64_t cpu_ns; /* the program thread's clock */
    uint64_t stream_free[MAX_STREAMS * 2];
    uint64_t next_flush, next_sample;
    uint64_t corr, ext, scope_seq, nvtx_seq, address;
    uint64_t energy_mj;
    uint32_t op_names[8], scope_names[4], nvtx_domain;
    gfl_event out[QUEUE]; /* ready, in collector order */
    size_t out_head, out_n;
    gfl_event pending[QUEUE]; /* device records not yet "flushed" by CUPTI */
    size_t npending;
};

static uint64_t next_random(trace_gen *g)
{
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return g->rng;
}

static double uniform(trace_gen *g) { return (double)(next_random(g) >> 11) / 9007199254740992.0; }

/* ---- the mix file -------------------------------------------------------- */

static uint8_t limiter_of(const char *s)
{
    for (uint8_t i = 0; i < GFL_LIMIT_COUNT; i++)
        if (s && !strcmp(s, gpufl__limiter_name(i)))
            return i;
    return 0;
}

static int load_config(json_t *c, config *out)
{
    json_t *grid = json_object_get(c, "grid"), *block = json_object_get(c, "block");
    if (json_array_size(grid) != 3 || json_array_size(block) != 3)
        return -1;
    out->weight = json_number_value(json_object_get(c, "weight"));
    for (int i = 0; i < 3; i++) {
        out->grid[i] = (uint32_t)json_integer_value(json_array_get(grid, (size_t)i));
        out->block[i] = (uint16_t)json_integer_value(json_array_get(block, (size_t)i));
    }
    out->registers = (uint16_t)json_integer_value(json_object_get(c, "registers"));
    out->static_smem = (uint32_t)json_integer_value(json_object_get(c, "static_smem"));
    out->dynamic_smem = (uint32_t)json_integer_value(json_object_get(c, "dynamic_smem"));
    out->local_mem = (uint32_t)json_integer_value(json_object_get(c, "local_mem"));
    out->occupancy_x10000 = (uint16_t)lround(json_number_value(json_object_get(c, "occupancy")) * 10000);
    out->limiter = limiter_of(json_string_value(json_object_get(c, "limiter")));
    return out->weight > 0 ? 0 : -1;
}

static int load_kind(json_t *k, kernel_kind *out)
{
    static const char *const keys[6] = {"p0", "p10", "p50", "p90", "p99", "p100"};
    static const double pct[6] = {0, 0.10, 0.50, 0.90, 0.99, 1.0};
    const char *name = json_string_value(json_object_get(k, "name"));
    json_t *dur = json_object_get(k, "duration_ns"), *configs = json_object_get(k, "configs");
    if (!name || !json_is_object(dur) || !json_array_size(configs))
        return -1;
    out->name = gpufl__intern(name);
    out->weight = json_number_value(json_object_get(k, "weight"));
    const char *stream = json_string_value(json_object_get(k, "stream"));
    out->comm = stream && !strcmp(stream, "comm");
    for (int i = 0; i < 6; i++) {
        out->pct[i] = pct[i];
        out->dur[i] = json_number_value(json_object_get(dur, keys[i]));
        if (out->dur[i] <= 0 || (i && out->dur[i] < out->dur[i - 1]))
            return -1;
    }
    for (size_t i = 0; i < json_array_size(configs) && out->nconfigs < MAX_CONFIGS; i++) {
        if (load_config(json_array_get(configs, i), &out->configs[out->nconfigs]) != 0)
            return -1;
        out->config_total += out->configs[out->nconfigs++].weight;
    }
    return out->weight > 0 ? 0 : -1;
}

static unsigned load_streams(json_t *a, uint32_t *out)
{
    unsigned n = 0;
    for (size_t i = 0; i < json_array_size(a) && n < MAX_STREAMS; i++)
        out[n++] = (uint32_t)json_integer_value(json_array_get(a, i));
    return n;
}

int trace_gen_open(const char *mix_path, uint64_t seed, trace_gen **out, char *err, size_t err_len)
{
    json_error_t jerr;
    json_t *root = json_load_file(mix_path, 0, &jerr);
    if (!root) {
        snprintf(err, err_len, "%s: %s (line %d)", mix_path, jerr.text, jerr.line);
        return -1;
    }
    trace_gen *g = calloc(1, sizeof *g);
    json_t *kinds = json_object_get(root, "kernels"), *streams = json_object_get(root, "streams");
    int rc = g ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < json_array_size(kinds) && g->nkinds < MAX_KERNELS; i++) {
        rc = load_kind(json_array_get(kinds, i), &g->kinds[g->nkinds]);
        if (rc == 0)
            g->weight_total += g->kinds[g->nkinds++].weight;
    }
    if (rc == 0) {
        g->ncompute = load_streams(json_object_get(streams, "compute"), g->compute);
        g->ncomm = load_streams(json_object_get(streams, "comm"), g->comm);
    }
    json_decref(root);
    if (rc != 0 || !g->nkinds || !g->ncompute || !g->ncomm) {
        snprintf(err, err_len, "%s: not a kernel mix (see the \"about\" field of bench/data/kernel_mix.json)",
                 mix_path);
        free(g);
        return -1;
    }
    static const char *const ops[8] = {
        "aten::addmm", "aten::add_",      "aten::mm",     "aten::relu", "aten::native_batch_norm",
        "aten::copy_", "nccl:all_reduce", "aten::normal_"};
    for (int i = 0; i < 8; i++)
        g->op_names[i] = gpufl__intern(ops[i]);
    static const char *const scopes[4] = {"train/step", "forward", "backward", "optimizer"};
    for (int i = 0; i < 4; i++)
        g->scope_names[i] = gpufl__intern(scopes[i]);
    g->nvtx_domain = 0;
    g->rng = seed ? seed : 88172645463325252ull;
    g->cpu_ns = 1000000000000ull;
    g->next_flush = g->cpu_ns + FLUSH_NS;
    g->next_sample = g->cpu_ns;
    g->address = 0x7f0000000000ull;
    g->energy_mj = 123456789;
    *out = g;
    return 0;
}

void trace_gen_close(trace_gen *g) { free(g); }

/* ---- events --------------------------------------------------------------- */

static gfl_event *emit(trace_gen *g, uint8_t type, uint64_t ts, uint32_t tid)
{
    gfl_event *ev = &g->out[(g->out_head + g->out_n++) % QUEUE];
    memset(ev, 0, sizeof *ev);
    ev->h.type = type;
    ev->h.ts = ts;
    ev->h.tid = tid;
    return ev;
}

static gfl_event *device_record(trace_gen *g, uint8_t type, uint64_t ts)
{
    gfl_event *ev = &g->pending[g->npending++];
    memset(ev, 0, sizeof *ev);
    ev->h.type = type;
    ev->h.ts = ts;
    ev->h.tid = 4242;
    return ev;
}

/* CUPTI hands over its buffer: the device records join the stream. */
static void flush_device(trace_gen *g)
{
    for (size_t i = 0; i < g->npending; i++)
        g->out[(g->out_head + g->out_n++) % QUEUE] = g->pending[i];
    g->npending = 0;
}

static uint64_t duration(trace_gen *g, const kernel_kind *k)
{
    double u = uniform(g);
    int i = 0;
    while (i < 4 && u > k->pct[i + 1])
        i++;
    double f = (u - k->pct[i]) / (k->pct[i + 1] - k->pct[i]);
    return (uint64_t)exp(log(k->dur[i]) + f * (log(k->dur[i + 1]) - log(k->dur[i])));
}

static void metrics(trace_gen *g)
{
    while (g->cpu_ns >= g->next_sample) {
        uint64_t ts = g->next_sample;
        gfl_event *ev = emit(g, GFL_EV_DEVICE_METRICS, ts, 4300);
        gfl_device_metrics_payload *m = &ev->u.dev;
        m->valid = GFL_DEV_GPU_UTIL | GFL_DEV_MEM_UTIL | GFL_DEV_MEM | GFL_DEV_TEMP | GFL_DEV_POWER |
                   GFL_DEV_POWER_LIMIT | GFL_DEV_ENERGY | GFL_DEV_CLOCKS | GFL_DEV_THROTTLE | GFL_DEV_PROC_MEM;
        m->gpu_util_pct = (uint8_t)(90 + next_random(g) % 11);
        m->mem_util_pct = (uint8_t)(40 + next_random(g) % 20);
        m->mem_total_bytes = 150754820096ull;
        m->mem_used_bytes = 80000000000ull + (next_random(g) % 64) * 2097152;
        m->mem_free_bytes = m->mem_total_bytes - m->mem_used_bytes - 600000000;
        m->proc_mem_bytes = m->mem_used_bytes - 500000000;
        m->temp_c = (int16_t)(55 + next_random(g) % 8);
        m->power_mw = 450000 + (uint32_t)(next_random(g) % 150000);
        m->power_limit_mw = 700000;
        g->energy_mj += m->power_mw / 100;
        m->energy_mj = g->energy_mj;
        m->sm_clock_mhz = m->gfx_clock_mhz = 1980;
        m->mem_clock_mhz = 3201;
        ev = emit(g, GFL_EV_HOST_METRICS, ts + 15000, 4300);
        gfl_host_metrics_payload *h = &ev->u.host;
        h->valid = GFL_HOST_PROC_CPU | GFL_HOST_SYS_CPU | GFL_HOST_RAM | GFL_HOST_RSS;
        h->cpu_count = 64;
        h->proc_cpu_pct_x100 = 10000 + (uint32_t)(next_random(g) % 5000);
        h->sys_cpu_pct_x100 = 300 + (uint32_t)(next_random(g) % 200);
        h->ram_total_bytes = 540000000000ull;
        h->ram_used_bytes = 120000000000ull + (next_random(g) % 1000) * 4096;
        h->proc_rss_bytes = 9000000000ull + (next_random(g) % 1000) * 4096;
        g->next_sample += SAMPLE_NS;
    }
    if (g->cpu_ns >= g->next_flush) {
        flush_device(g);
        g->next_flush = g->cpu_ns + FLUSH_NS;
    }
}

static uint64_t scope_event(trace_gen *g, uint8_t type, uint64_t id, uint64_t parent, unsigned depth, unsigned name,
                            uint64_t begin)
{
    gfl_event *ev = emit(g, type, g->cpu_ns, 4242);
    ev->u.scope =
        (gfl_scope_payload){id, parent, type == GFL_EV_SCOPE_END ? begin : 0, g->scope_names[name], (uint16_t)depth};
    g->cpu_ns += 300;
    return g->cpu_ns - 300;
}

static const kernel_kind *pick_kind(trace_gen *g)
{
    double w = uniform(g) * g->weight_total;
    for (unsigned i = 0; i < g->nkinds; i++)
        if ((w -= g->kinds[i].weight) <= 0)
            return &g->kinds[i];
    return &g->kinds[g->nkinds - 1];
}

static void kernel(trace_gen *g, uint64_t scope, uint64_t ext, uint32_t nvtx)
{
    const kernel_kind *k = pick_kind(g);
    double w = uniform(g) * k->config_total;
    const config *c = &k->configs[k->nconfigs - 1];
    for (unsigned i = 0; i < k->nconfigs; i++)
        if ((w -= k->configs[i].weight) <= 0) {
            c = &k->configs[i];
            break;
        }
    /* compute kernels: most on the main stream, one in eight on a side stream */
    unsigned s;
    if (k->comm)
        s = g->ncompute + (unsigned)(next_random(g) % g->ncomm);
    else if (g->ncompute == 1 || next_random(g) % 8)
        s = 0;
    else
        s = 1 + (unsigned)(next_random(g) % (g->ncompute - 1));
    uint32_t stream = s < g->ncompute ? g->compute[s] : g->comm[s - g->ncompute];
    uint64_t api_start = g->cpu_ns, api_end = api_start + 3000 + next_random(g) % 2000;
    uint64_t ready = api_end + 1500;
    uint64_t start = g->stream_free[s] + 800 + next_random(g) % 1500;
    if (start < ready)
        start = ready;
    uint64_t end = start + duration(g, k);
    g->stream_free[s] = end;
    g->corr += 1 + next_random(g) % 3;
    gfl_event *ev = device_record(g, GFL_EV_KERNEL, start);
    gfl_kernel_payload *p = &ev->u.kernel;
    p->end_ts = end;
    p->name = k->name;
    p->context = 1;
    p->stream = stream;
    p->correlation = (uint32_t)g->corr;
    memcpy(p->grid, c->grid, sizeof p->grid);
    memcpy(p->block, c->block, sizeof p->block);
    p->registers = c->registers;
    p->static_smem = c->static_smem;
    p->dynamic_smem = c->dynamic_smem;
    p->local_mem = c->local_mem;
    p->occupancy_x10000 = c->occupancy_x10000;
    p->limiter = c->limiter;
    p->scope_id = scope;
    p->external_id = ext;
    p->external_kind = 2;
    p->api_start_ts = api_start;
    p->api_end_ts = api_end;
    p->nvtx = nvtx;
    g->cpu_ns = api_end + 1500 + next_random(g) % 3000;
    metrics(g);
}

static void copy(trace_gen *g, uint8_t kind, uint64_t bytes, uint64_t scope)
{
    uint64_t api_start = g->cpu_ns, start = g->stream_free[0] + 1000;
    if (start < api_start + 4000)
        start = api_start + 4000;
    uint64_t end = start + 1000 + bytes / 20; /* ~20 GB/s */
    g->stream_free[0] = end;
    g->corr += 1;
    gfl_event *ev = device_record(g, GFL_EV_MEMCPY, start);
    ev->u.memcpy = (gfl_memcpy_payload){.end_ts = end,
                                        .bytes = bytes,
                                        .scope_id = scope,
                                        .api_start_ts = api_start,
                                        .api_end_ts = api_start + 5000,
                                        .context = 1,
                                        .stream = g->compute[0],
                                        .correlation = (uint32_t)g->corr,
                                        .copy_kind = kind,
                                        .src_kind = kind == GFL_COPY_HTOD ? GFL_MEM_PINNED : GFL_MEM_DEVICE,
                                        .dst_kind = kind == GFL_COPY_HTOD ? GFL_MEM_DEVICE : GFL_MEM_PINNED};
    g->cpu_ns += 7000;
}

static void step(trace_gen *g)
{
    uint64_t step_id = (1ull << 40) | ++g->scope_seq;
    uint64_t step_begin = scope_event(g, GFL_EV_SCOPE_BEGIN, step_id, 0, 0, 0, 0);
    for (int i = 0; i < 4; i++)
        copy(g, GFL_COPY_HTOD, 4u << 20, step_id);
    for (unsigned phase = 1; phase <= 3; phase++) {
        uint64_t id = (1ull << 40) | ++g->scope_seq;
        uint64_t begin = scope_event(g, GFL_EV_SCOPE_BEGIN, id, step_id, 1, phase, 0);
        unsigned ops = phase == 1 ? STEP_OPS * 4 / 10 : phase == 2 ? STEP_OPS / 2 : STEP_OPS / 10;
        for (unsigned op = 0; op < ops; op++) {
            uint32_t name = g->op_names[next_random(g) % 8];
            uint64_t op_start = g->cpu_ns;
            g->ext++;
            unsigned kernels = 5 + (unsigned)(next_random(g) % 11);
            for (unsigned k = 0; k < kernels; k++)
                kernel(g, id, g->ext, name);
            if (phase == 2 && op % 5 == 0) {
                gfl_event *ev = device_record(g, GFL_EV_MEMSET, g->stream_free[0] + 900);
                ev->u.memset = (gfl_memset_payload){.end_ts = g->stream_free[0] + 2900,
                                                    .bytes = 1u << 20,
                                                    .scope_id = id,
                                                    .api_start_ts = g->cpu_ns,
                                                    .api_end_ts = g->cpu_ns + 2500,
                                                    .context = 1,
                                                    .stream = g->compute[0],
                                                    .correlation = (uint32_t)++g->corr,
                                                    .mem_kind = GFL_MEM_DEVICE};
                g->stream_free[0] += 2900;
                g->cpu_ns += 3000;
            }
            if (phase == 1 && op % 8 == 0) {
                gfl_event *ev = emit(g, GFL_EV_MEM_ALLOC, g->cpu_ns, 4242);
                ev->u.mem = (gfl_mem_payload){.address = g->address,
                                              .bytes = 2u << 20,
                                              .scope_id = id,
                                              .context = 1,
                                              .stream = g->compute[0],
                                              .correlation = (uint32_t)++g->corr,
                                              .mem_kind = GFL_MEM_DEVICE};
                g->address += 2u << 20;
                g->cpu_ns += 2000;
            }
            if (phase == 2 && op % 9 == 0) {
                g->address -= 2u << 20;
                gfl_event *ev = emit(g, GFL_EV_MEM_FREE, g->cpu_ns, 4242);
                ev->u.mem = (gfl_mem_payload){.address = g->address,
                                              .bytes = 2u << 20,
                                              .scope_id = id,
                                              .context = 1,
                                              .stream = g->compute[0],
                                              .correlation = (uint32_t)++g->corr,
                                              .mem_kind = GFL_MEM_DEVICE};
                g->cpu_ns += 2000;
            }
            gfl_event *ev = emit(g, GFL_EV_NVTX_RANGE, op_start, 4242);
            ev->u.nvtx = (gfl_nvtx_payload){
                .end_ts = g->cpu_ns, .id = ++g->nvtx_seq, .name = name, .domain = g->nvtx_domain, .depth = 0};
        }
        scope_event(g, GFL_EV_SCOPE_END, id, step_id, 1, phase, begin);
    }
    copy(g, GFL_COPY_DTOH, 4096, step_id);
    /* the step ends with the host waiting for the device */
    uint64_t done = 0;
    for (unsigned s = 0; s < g->ncompute + g->ncomm; s++)
        if (g->stream_free[s] > done)
            done = g->stream_free[s];
    gfl_event *ev = device_record(g, GFL_EV_SYNC, g->cpu_ns);
    ev->u.sync = (gfl_sync_payload){.end_ts = done > g->cpu_ns ? done : g->cpu_ns + 1000,
                                    .scope_id = step_id,
                                    .context = 1,
                                    .stream = g->compute[0],
                                    .correlation = (uint32_t)++g->corr,
                                    .sync_kind = GFL_SYNC_STREAM};
    if (done > g->cpu_ns)
        g->cpu_ns = done;
    g->cpu_ns += 2000;
    scope_event(g, GFL_EV_SCOPE_END, step_id, 0, 0, 0, step_begin);
    flush_device(g);
    metrics(g);
}

void trace_gen_next(trace_gen *g, gfl_event *ev)
{
    while (g->out_n == 0)
        step(g);
    *ev = g->out[g->out_head];
    g->out_head = (g->out_head + 1) % QUEUE;
    g->out_n--;
}
