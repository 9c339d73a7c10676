/*
 * The expectations of test_trace_known_work.cu: what its script did, and
 * the checks that compare a session's records with it. Included once, by
 * that test; split out only to keep each file readable.
 */
#ifndef GPUFL_TRACE_KNOWN_WORK_CUH
#define GPUFL_TRACE_KNOWN_WORK_CUH

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpu_skip.h"
#include "test_util.h"

/* ---- reporting: every failure is printed, the test goes on ------------- */

static int failures;

static void fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(int line, const char *fmt, ...)
{
    if (++failures <= 300) { /* enough to see a pattern, not a flood */
        va_list ap;
        va_start(ap, fmt);
        std::fprintf(stderr, "FAIL (line %d): ", line);
        std::vfprintf(stderr, fmt, ap);
        std::fputc('\n', stderr);
        va_end(ap);
    }
}
#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            fail(__LINE__, __VA_ARGS__);                                                                               \
    } while (0)

enum { K_FILL, K_SMEM, K_LOCAL, K_GRAPH_A, K_GRAPH_B, K_COUNT };

/* What each kernel is launched with, and what CUDA says about it. */
struct kspec {
    const char *base;    /* name up to the '(' of the demangled signature */
    const char *mangled; /* the Itanium name nvcc gives it */
    const void *fn;
    dim3 grid, block;
    unsigned dyn_smem; /* bytes */
    cudaFuncAttributes attr;
    int blocks_per_sm; /* cudaOccupancyMaxActiveBlocksPerMultiprocessor */
    long occ_x10000;
};

#define MiB (1u << 20)
#define KiB (1u << 10)
enum { N_STREAMS = 3 };

/* One planned launch outside the graph: what its record must say. */
struct planned {
    int kernel, stream;
    std::string scope, nvtx; /* "" = none */
};

/* One allocation the script makes, to find in mem_alloc and mem_free. */
struct alloc_rec {
    void *ptr;
    size_t bytes;
    bool async;
};

struct script {
    std::vector<planned> launches;
    std::vector<alloc_rec> allocs;
    std::map<std::string, int> syncs; /* kind -> explicit calls */
};

/* What the checks compare the records with. */
struct context {
    const kspec *specs; /* K_COUNT of them */
    int max_warps_per_sm, max_blocks_per_sm;
    long long t0, t1;                          /* session start and end, from session.json */
    long long tid;                             /* the thread that ran the script */
    std::map<std::string, long long> scope_id; /* scope name -> id, from scope.log */
};

/* ---- reading the records ------------------------------------------------- */

static const char *type_of(json_t *o) { return json_string_value(json_object_get(o, "type")); }
static bool has(json_t *o, const char *k) { return json_object_get(o, k) != nullptr; }
static const char *sval(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* An integer field that must be there; -1 (and a failure) when it is not. */
static long long need(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (json_is_integer(v))
        return json_integer_value(v);
    fail(__LINE__, "%s line without integer \"%s\" (corr %lld)", type_of(o), k,
         (long long)json_integer_value(json_object_get(o, "corr")));
    return -1;
}

static unsigned long long address(json_t *o) { return std::strtoull(sval(o, "address"), nullptr, 16); }

static bool dims_are(json_t *o, const char *k, dim3 d)
{
    json_t *a = json_object_get(o, k);
    return json_array_size(a) == 3 && json_integer_value(json_array_get(a, 0)) == d.x &&
           json_integer_value(json_array_get(a, 1)) == d.y && json_integer_value(json_array_get(a, 2)) == d.z;
}

/* Which kernel a record names: its demangled name starts with "base(", or is
 * just base (a demangler that drops the signature). */
static int kernel_named(const context &c, const char *name)
{
    for (int k = 0; k < K_COUNT; k++) {
        size_t n = std::strlen(c.specs[k].base);
        if (!std::strncmp(name, c.specs[k].base, n) && (name[n] == '(' || name[n] == 0))
            return k;
    }
    return -1;
}

/* start/end/dur and thread of an interval record. */
static void check_interval(const context &c, json_t *o)
{
    long long s = need(o, "start_ns"), e = need(o, "end_ns"), d = need(o, "dur_ns");
    EXPECT(s > 0 && e >= s && d == e - s, "%s corr %lld: start %lld end %lld dur %lld", type_of(o),
           (long long)json_integer_value(json_object_get(o, "corr")), s, e, d);
    EXPECT(s >= c.t0 && e <= c.t1, "%s corr %lld: [%lld, %lld] outside the session [%lld, %lld]", type_of(o),
           (long long)json_integer_value(json_object_get(o, "corr")), s, e, c.t0, c.t1);
}

/* Scope and NVTX attribution: must be exactly what was open at the call
 * ("" = nothing). Strict: when a record carries nothing, that is a failure. */
static void check_attribution(const context &c, json_t *o, const std::string &scope, const std::string &nvtx)
{
    long long want = scope.empty() ? 0 : c.scope_id.at(scope);
    long long got = has(o, "scope") ? json_integer_value(json_object_get(o, "scope")) : 0;
    EXPECT(got == want, "%s %s corr %lld: scope %lld, expected %lld (%s)", type_of(o), sval(o, "name"),
           (long long)json_integer_value(json_object_get(o, "corr")), got, want,
           scope.empty() ? "none" : scope.c_str());
    EXPECT(nvtx == sval(o, "nvtx"), "%s %s corr %lld: nvtx \"%s\", expected \"%s\"", type_of(o), sval(o, "name"),
           (long long)json_integer_value(json_object_get(o, "corr")), sval(o, "nvtx"), nvtx.c_str());
    EXPECT(need(o, "tid") == c.tid, "%s corr %lld: tid %lld, the launching thread is %lld", type_of(o),
           (long long)json_integer_value(json_object_get(o, "corr")),
           (long long)json_integer_value(json_object_get(o, "tid")), c.tid);
}

/* Everything a kernel record says about the kernel itself. */
static void check_kernel(const context &c, json_t *o, int k)
{
    const kspec &sp = c.specs[k];
    long long corr = need(o, "corr");
    check_interval(c, o);
    EXPECT(corr > 0, "kernel %s: corr %lld", sp.base, corr);
    EXPECT(!std::strcmp(sval(o, "mangled"), sp.mangled), "kernel %s corr %lld: mangled \"%s\", expected %s", sp.base,
           corr, sval(o, "mangled"), sp.mangled);
    EXPECT(dims_are(o, "grid", sp.grid), "kernel %s corr %lld: grid differs from [%u,%u,%u]", sp.base, corr, sp.grid.x,
           sp.grid.y, sp.grid.z);
    EXPECT(dims_are(o, "block", sp.block), "kernel %s corr %lld: block differs from [%u,%u,%u]", sp.base, corr,
           sp.block.x, sp.block.y, sp.block.z);
    EXPECT(need(o, "smem_dynamic") == sp.dyn_smem, "kernel %s corr %lld: smem_dynamic %lld, launched with %u", sp.base,
           corr, (long long)json_integer_value(json_object_get(o, "smem_dynamic")), sp.dyn_smem);
    /* CUPTI reports the registers the hardware allocated per thread: the
     * compiler's count rounded up to 8, and never fewer than 16 (seen on an
     * H200 with CUDA 13: 8 -> 16, 10 -> 16, 14 -> 16, 40 -> 40). Occupancy
     * is the same either way (warps get registers in units of 256). */
    int allocated = sp.attr.numRegs < 16 ? 16 : (sp.attr.numRegs + 7) / 8 * 8;
    EXPECT(need(o, "regs") == allocated,
           "kernel %s corr %lld: regs %lld, expected %d (cudaFuncGetAttributes %d, allocated)", sp.base, corr,
           (long long)json_integer_value(json_object_get(o, "regs")), allocated, sp.attr.numRegs);
    EXPECT(need(o, "smem_static") == (long long)sp.attr.sharedSizeBytes,
           "kernel %s corr %lld: smem_static %lld, cudaFuncGetAttributes %zu", sp.base, corr,
           (long long)json_integer_value(json_object_get(o, "smem_static")), sp.attr.sharedSizeBytes);
    /* CUPTI's per-thread local memory reservation of the launch: the
     * function's local size, or 0 (CUDA 13 reported 0 for a kernel with a
     * 256-byte local array on an H200) — never anything else. */
    long long local = need(o, "local_mem");
    EXPECT(local == 0 || local == (long long)sp.attr.localSizeBytes,
           "kernel %s corr %lld: local_mem %lld, cudaFuncGetAttributes %zu", sp.base, corr, local,
           sp.attr.localSizeBytes);

    json_t *occ = json_object_get(o, "occupancy");
    long got = json_is_number(occ) ? std::lround(json_number_value(occ) * 10000.0) : -1;
    EXPECT(got >= sp.occ_x10000 - 1 && got <= sp.occ_x10000 + 1,
           "kernel %s corr %lld: occupancy %.4f, occupancy calculator %.4f", sp.base, corr, got / 10000.0,
           sp.occ_x10000 / 10000.0);
    /* The limiter must explain the block count: warps and blocks limits are
     * exact; registers or shared memory can only lower it further. */
    int warps = (int)((sp.block.x * sp.block.y * sp.block.z + 31) / 32);
    int by_warps = c.max_warps_per_sm / warps, n = sp.blocks_per_sm;
    std::string lim = sval(o, "limiter");
    bool ok = (lim == "warps" && n == by_warps) || (lim == "blocks" && n == c.max_blocks_per_sm) ||
              ((lim == "registers" || lim == "shared_memory") && n <= std::min(by_warps, c.max_blocks_per_sm));
    EXPECT(ok, "kernel %s corr %lld: limiter \"%s\" does not explain %d blocks/SM (warps allow %d, blocks %d)", sp.base,
           corr, lim.c_str(), n, by_warps, c.max_blocks_per_sm);
    if (has(o, "api_start_ns") || !has(o, "graph_id")) {
        long long a0 = need(o, "api_start_ns"), a1 = need(o, "api_end_ns");
        EXPECT(a0 > 0 && a0 <= a1 && a0 <= need(o, "start_ns"),
               "kernel %s corr %lld: API call [%lld, %lld] vs start %lld (must begin before the kernel)", sp.base, corr,
               a0, a1, (long long)json_integer_value(json_object_get(o, "start_ns")));
    }
}

static bool by_start(json_t *a, json_t *b)
{
    return json_integer_value(json_object_get(a, "start_ns")) < json_integer_value(json_object_get(b, "start_ns"));
}

/* Kernels outside the graph, per stream: matched to the script's streams by
 * their number of launches, then record i against planned launch i. */
static void check_streams(const context &c, const script &sc, const std::vector<json_t *> &kernels)
{
    std::map<long long, std::vector<json_t *>> recorded;
    for (json_t *k : kernels)
        recorded[json_integer_value(json_object_get(k, "stream"))].push_back(k);
    EXPECT(recorded.size() == N_STREAMS, "non-graph kernels on %zu streams, launched on %d", recorded.size(),
           N_STREAMS);
    for (int s = 0; s < N_STREAMS; s++) {
        std::vector<const planned *> plan;
        for (const planned &p : sc.launches)
            if (p.stream == s)
                plan.push_back(&p);
        std::vector<json_t *> *rec = nullptr;
        for (auto &r : recorded)
            if (r.second.size() == plan.size())
                rec = &r.second;
        EXPECT(rec, "no recorded stream has the %zu kernels launched on stream %d", plan.size(), s);
        if (!rec)
            continue;
        std::sort(rec->begin(), rec->end(), by_start);
        for (size_t i = 0; i < plan.size(); i++) {
            json_t *o = (*rec)[i];
            long long corr = json_integer_value(json_object_get(o, "corr"));
            EXPECT(kernel_named(c, sval(o, "name")) == plan[i]->kernel,
                   "stream %d, kernel %zu in start order is %s (corr %lld), launched as %s", s, i, sval(o, "name"),
                   corr, c.specs[plan[i]->kernel].base);
            check_attribution(c, o, plan[i]->scope, plan[i]->nvtx);
            if (i == 0)
                continue;
            json_t *prev = (*rec)[i - 1];
            EXPECT(json_integer_value(json_object_get(prev, "end_ns")) <=
                       json_integer_value(json_object_get(o, "start_ns")),
                   "stream %d: kernel corr %lld starts before corr %lld ends", s, corr,
                   (long long)json_integer_value(json_object_get(prev, "corr")));
            EXPECT(json_integer_value(json_object_get(prev, "corr")) < corr &&
                       json_integer_value(json_object_get(prev, "api_start_ns")) <
                           json_integer_value(json_object_get(o, "api_start_ns")),
                   "stream %d: kernel corr %lld started before corr %lld but was launched after it", s,
                   (long long)json_integer_value(json_object_get(prev, "corr")), corr);
        }
    }
}

static void check_kernels(const context &c, const script &sc, const tu_ndjson &dev,
                          const std::vector<json_t *> &launches, std::set<long long> &corrs)
{
    int want[K_COUNT] = {0}, got[K_COUNT] = {0};
    for (const planned &p : sc.launches)
        want[p.kernel]++;
    want[K_GRAPH_A] = want[K_GRAPH_B] = 3;
    std::vector<json_t *> plain;
    std::map<long long, std::vector<int>> graph_kernels; /* corr -> kernels */
    std::set<long long> graph_ids;
    std::set<long long> launch_corrs;
    for (json_t *g : launches)
        launch_corrs.insert(json_integer_value(json_object_get(g, "corr")));
    for (size_t i = 0; i < dev.n; i++) {
        json_t *o = dev.lines[i];
        if (std::strcmp(type_of(o), "kernel"))
            continue;
        int k = kernel_named(c, sval(o, "name"));
        EXPECT(k >= 0, "a kernel nobody launched: %s", sval(o, "name"));
        if (k < 0)
            continue;
        got[k]++;
        check_kernel(c, o, k);
        long long corr = json_integer_value(json_object_get(o, "corr"));
        bool in_graph = k == K_GRAPH_A || k == K_GRAPH_B;
        EXPECT(in_graph == has(o, "graph_id"), "kernel %s corr %lld: graph_id %s", c.specs[k].base, corr,
               in_graph ? "missing" : "on a kernel launched outside a graph");
        if (!in_graph) {
            plain.push_back(o);
            EXPECT(corrs.insert(corr).second, "correlation id %lld used by two records", corr);
            continue;
        }
        graph_ids.insert(json_integer_value(json_object_get(o, "graph_id")));
        graph_kernels[corr].push_back(k);
        EXPECT(launch_corrs.count(corr), "graph kernel %s corr %lld matches no graph_launch", c.specs[k].base, corr);
        check_attribution(c, o, "graph", "nvtx_graph");
    }
    for (int k = 0; k < K_COUNT; k++)
        EXPECT(got[k] == want[k], "%d %s kernels recorded, %d launched", got[k], c.specs[k].base, want[k]);
    EXPECT(graph_ids.size() == 1 && *graph_ids.begin() > 0, "graph kernels carry %zu distinct graph ids (first %lld)",
           graph_ids.size(), graph_ids.empty() ? 0LL : *graph_ids.begin());
    for (long long corr : launch_corrs) {
        std::vector<int> ks = graph_kernels[corr];
        std::sort(ks.begin(), ks.end());
        EXPECT(ks == std::vector<int>({K_GRAPH_A, K_GRAPH_B}),
               "graph launch corr %lld ran %zu kernels, expected "
               "k_graph_a and k_graph_b",
               corr, ks.size());
    }
    check_streams(c, sc, plain);
}

static void check_copies(const context &c, const tu_ndjson &dev, const std::vector<json_t *> &launches,
                         std::set<long long> &corrs)
{
    /* kind src dst bytes graph -> count */
    std::map<std::string, int> want = {
        {"HtoD pageable device 1048576 -", 2}, {"HtoD pinned device 2097152 -", 2},
        {"DtoH device pinned 524288 -", 2},    {"DtoD device device 3145728 -", 1},
        {"DtoD device device 65536 graph", 3},
    };
    std::map<std::string, int> got;
    std::set<long long> launch_corrs;
    for (json_t *g : launches)
        launch_corrs.insert(json_integer_value(json_object_get(g, "corr")));
    int memsets = 0;
    std::map<long long, int> graph_copies; /* graph launch corr -> copies */
    for (size_t i = 0; i < dev.n; i++) {
        json_t *o = dev.lines[i];
        bool is_copy = !std::strcmp(type_of(o), "memcpy");
        if (!is_copy && std::strcmp(type_of(o), "memset"))
            continue;
        check_interval(c, o);
        long long corr = need(o, "corr");
        if (has(o, "graph_id"))
            EXPECT(launch_corrs.count(corr) && ++graph_copies[corr] == 1,
                   "graph %s corr %lld: no graph_launch, or a second copy for one launch", type_of(o), corr);
        else
            EXPECT(corrs.insert(corr).second, "correlation id %lld used by two records", corr);
        if (has(o, "tid"))
            EXPECT(need(o, "tid") == c.tid, "%s corr %lld: tid %lld", type_of(o), corr,
                   (long long)json_integer_value(json_object_get(o, "tid")));
        if (!is_copy) {
            memsets++;
            EXPECT(need(o, "bytes") == 768 * KiB && need(o, "value") == 0x5A &&
                       !std::strcmp(sval(o, "mem_kind"), "device"),
                   "memset corr %lld: %lld bytes of %lld in %s memory, expected 786432 of 90 in device", corr,
                   (long long)json_integer_value(json_object_get(o, "bytes")),
                   (long long)json_integer_value(json_object_get(o, "value")), sval(o, "mem_kind"));
            continue;
        }
        char key[160];
        std::snprintf(key, sizeof key, "%s %s %s %lld %s", sval(o, "kind"), sval(o, "src_kind"), sval(o, "dst_kind"),
                      need(o, "bytes"), has(o, "graph_id") ? "graph" : "-");
        got[key]++;
    }
    EXPECT(memsets == 1, "%d memset records, 1 made", memsets);
    for (auto &w : want)
        EXPECT(got[w.first] == w.second, "memcpy [%s]: %d records, %d made", w.first.c_str(), got[w.first], w.second);
    for (auto &g : got)
        EXPECT(want.count(g.first), "memcpy [%s]: %d records, none made", g.first.c_str(), g.second);
}

static void check_syncs(const context &c, const script &sc, const tu_ndjson &dev, std::set<long long> &corrs)
{
    std::map<std::string, int> got;
    for (size_t i = 0; i < dev.n; i++) {
        json_t *o = dev.lines[i];
        if (std::strcmp(type_of(o), "sync"))
            continue;
        check_interval(c, o);
        std::string kind = sval(o, "kind");
        long long corr = need(o, "corr");
        got[kind]++;
        EXPECT(corrs.insert(corr).second, "correlation id %lld used by two records", corr);
        if (kind == "event" || kind == "stream_wait_event")
            EXPECT(has(o, "cuda_event"), "sync %s corr %lld without cuda_event", kind.c_str(), corr);
    }
    /* At least the explicit calls: the runtime may add syncs of its own. */
    for (auto &w : sc.syncs)
        EXPECT(got[w.first] >= w.second, "%d sync records of kind %s, %d calls made", got[w.first], w.first.c_str(),
               w.second);
    for (auto &g : got)
        std::printf("sync %-18s %d\n", g.first.c_str(), g.second);
}

static void check_memory(const context &c, const script &sc, const tu_ndjson &dev)
{
    std::vector<json_t *> allocs, frees;
    for (size_t i = 0; i < dev.n; i++) {
        json_t *o = dev.lines[i];
        bool a = !std::strcmp(type_of(o), "mem_alloc");
        if (!a && std::strcmp(type_of(o), "mem_free"))
            continue;
        long long ts = need(o, "ts_ns");
        EXPECT(ts >= c.t0 && ts <= c.t1, "%s %s at %lld outside the session", type_of(o), sval(o, "address"), ts);
        (a ? allocs : frees).push_back(o);
    }
    for (const alloc_rec &r : sc.allocs) {
        int na = 0, nf = 0;
        for (json_t *o : allocs)
            if (address(o) == (uintptr_t)r.ptr) {
                na++;
                EXPECT(need(o, "bytes") == (long long)r.bytes && !std::strcmp(sval(o, "kind"), "device") &&
                           json_is_true(json_object_get(o, "async")) == r.async,
                       "mem_alloc %p: %lld bytes of %s%s, made %zu bytes of device%s", r.ptr,
                       (long long)json_integer_value(json_object_get(o, "bytes")), sval(o, "kind"),
                       json_is_true(json_object_get(o, "async")) ? " (async)" : "", r.bytes, r.async ? " (async)" : "");
            }
        for (json_t *o : frees)
            if (address(o) == (uintptr_t)r.ptr) {
                nf++;
                EXPECT(need(o, "bytes") == (long long)r.bytes, "mem_free %p: %lld bytes, %zu allocated", r.ptr,
                       (long long)json_integer_value(json_object_get(o, "bytes")), r.bytes);
            }
        EXPECT(na == 1 && nf == 1, "allocation %p of %zu bytes%s: %d mem_alloc and %d mem_free records", r.ptr, r.bytes,
               r.async ? " (async)" : "", na, nf);
    }
    /* Every free pairs with the latest earlier unmatched alloc of its address. */
    std::vector<json_t *> all(allocs);
    all.insert(all.end(), frees.begin(), frees.end());
    std::stable_sort(all.begin(), all.end(), [](json_t *a, json_t *b) {
        return json_integer_value(json_object_get(a, "ts_ns")) < json_integer_value(json_object_get(b, "ts_ns"));
    });
    std::map<unsigned long long, std::vector<long long>> open; /* address -> bytes of open allocations */
    for (json_t *o : all) {
        long long bytes = json_integer_value(json_object_get(o, "bytes"));
        std::vector<long long> &v = open[address(o)];
        if (!std::strcmp(type_of(o), "mem_alloc")) {
            v.push_back(bytes);
            continue;
        }
        EXPECT(!v.empty() && v.back() == bytes, "mem_free %s of %lld bytes frees no allocation of that size",
               sval(o, "address"), bytes);
        if (!v.empty())
            v.pop_back();
    }
    size_t left = 0;
    for (auto &a : open)
        left += a.second.size();
    std::printf("%zu mem_alloc, %zu mem_free; %zu allocations never freed (pools, the runtime's own)\n", allocs.size(),
                frees.size(), left);
}

static void check_graph_launches(const context &c, const std::vector<json_t *> &launches, std::set<long long> &corrs)
{
    EXPECT(launches.size() == 3, "%zu graph_launch records, 3 launches made", launches.size());
    for (json_t *g : launches) {
        long long ts = need(g, "ts_ns"), end = need(g, "end_ns"), corr = need(g, "corr");
        EXPECT(ts > 0 && ts <= end && ts >= c.t0 && end <= c.t1, "graph_launch corr %lld: [%lld, %lld]", corr, ts, end);
        EXPECT(corrs.insert(corr).second, "correlation id %lld used by two records", corr);
        check_attribution(c, g, "graph", "nvtx_graph");
    }
}

static void check_scope_log(const context &c, const tu_ndjson &scope)
{
    const char *ranges[] = {"nvtx_kernels", "nvtx_inner",   "nvtx_copies", "nvtx_sync",
                            "nvtx_memory",  "nvtx_capture", "nvtx_graph"};
    for (const char *name : ranges) {
        int n = 0;
        for (size_t i = 0; i < scope.n; i++) {
            json_t *o = scope.lines[i];
            if (std::strcmp(type_of(o), "nvtx_range") || std::strcmp(sval(o, "name"), name))
                continue;
            n++;
            long long s = need(o, "start_ns"), e = need(o, "end_ns");
            EXPECT(s >= c.t0 && s <= e && e <= c.t1 && need(o, "tid") == c.tid && !has(o, "domain"),
                   "nvtx_range %s: [%lld, %lld], tid %lld, domain \"%s\"", name, s, e,
                   (long long)json_integer_value(json_object_get(o, "tid")), sval(o, "domain"));
        }
        EXPECT(n == 1, "%d nvtx_range records named %s, 1 pushed", n, name);
    }
}

static void check_no_losses(const char *dir, json_t *session)
{
    const char *channels[] = {"device", "scope", "system"};
    for (const char *ch : channels) {
        tu_ndjson f;
        EXPECT(tu_ndjson_load_channel(dir, ch, &f) == 0, "%s.log does not read back", ch);
        for (size_t i = 0; i < f.n; i++) {
            json_t *o = f.lines[i];
            if (!std::strcmp(type_of(o), "dropped"))
                fail(__LINE__, "%s.log: dropped %lld (%s)", ch,
                     (long long)json_integer_value(json_object_get(o, "count")), sval(o, "reason"));
            if (!std::strcmp(type_of(o), "log") && std::strcmp(sval(o, "level"), "info") &&
                std::strcmp(sval(o, "level"), "debug"))
                std::printf("gpufl %s: %s\n", sval(o, "level"), sval(o, "message"));
        }
        tu_ndjson_free(&f);
    }
    json_t *total = json_object_get(json_object_get(session, "summary"), "dropped_total");
    EXPECT(json_integer_value(total) == 0, "session.json summary.dropped_total %lld",
           (long long)json_integer_value(total));
}

/* Reads the session in dir and runs every check against the script; c
 * arrives with specs, limits and tid filled in. Returns the failures. */
static int check_session(const char *dir, const script &sc, context &c)
{
    json_t *session = tu_session_json(dir);
    c.t0 = json_integer_value(json_object_get(session, "start_ns"));
    c.t1 = json_integer_value(json_object_get(session, "end_ns"));
    CHECK(c.t0 > 0 && c.t1 > c.t0, "session.json start_ns %lld, end_ns %lld", c.t0, c.t1);
    tu_ndjson dev, scope;
    CHECK(tu_ndjson_load_channel(dir, "device", &dev) == 0, "device.log");
    CHECK(tu_ndjson_load_channel(dir, "scope", &scope) == 0, "scope.log");
    for (size_t i = 0; i < scope.n; i++)
        if (!std::strcmp(type_of(scope.lines[i]), "scope_begin"))
            c.scope_id[sval(scope.lines[i], "name")] = json_integer_value(json_object_get(scope.lines[i], "id"));
    const char *scopes[] = {"setup",  "kernels", "kernels_inner", "copies",  "sync",
                            "memory", "capture", "graph",         "teardown"};
    for (const char *s : scopes)
        CHECK(c.scope_id.count(s), "no scope_begin for %s in scope.log", s);
    std::vector<json_t *> launches;
    for (size_t i = 0; i < dev.n; i++)
        if (!std::strcmp(type_of(dev.lines[i]), "graph_launch"))
            launches.push_back(dev.lines[i]);

    std::set<long long> corrs; /* one record per API call outside graphs */
    check_graph_launches(c, launches, corrs);
    check_kernels(c, sc, dev, launches, corrs);
    check_copies(c, dev, launches, corrs);
    check_syncs(c, sc, dev, corrs);
    check_memory(c, sc, dev);
    check_scope_log(c, scope);
    check_no_losses(dir, session);
    std::printf("%zu device records, %zu scope records\n", dev.n, scope.n);
    json_decref(session);
    tu_ndjson_free(&dev);
    tu_ndjson_free(&scope);
    return failures;
}

#endif
