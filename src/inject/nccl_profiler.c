/*
 * libgpufl_nccl.so: gpufl's NCCL profiler plugin. NCCL loads it when
 * NCCL_PROFILER_PLUGIN names it (`gpufl run` sets that) and calls it for
 * the events its activation mask asks for: here only collectives and
 * point-to-point calls, which carry what the GPU kernels' names cannot,
 * the payload (count and datatype, hence bytes), the communicator and the
 * collective's sequence number. Each becomes one nccl_coll event through
 * gpufl_record_nccl_collective() of the libgpufl already in the process.
 *
 * The plugin links nothing of gpufl: it finds libgpufl by name in the
 * process (the global scope, else the library loaded under its soname,
 * whichever way it came: the CUDA injection library, Python, linked), so
 * a program that does not record with gpufl pays nothing: init answers
 * success with an activation mask of 0, and NCCL sends no events.
 *
 * Threads: NCCL calls start and stop on the threads that enqueue work
 * (the program's, for collectives), possibly several communicators at
 * once. A collective's description lives between its start and stop in a
 * slot of a fixed pool (claimed by compare-and-swap, no lock, no
 * allocation per event); stop stamps the end and records it. With every
 * slot in use (more than SLOTS collectives started and not yet stopped,
 * which NCCL's groups do not reach) the collective is recorded at its
 * start without an end, and NCCL gets no handle, so it never calls stop.
 * Nothing here may fail NCCL: every entry returns success.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpufl/gpufl.h"
#include "inject/nccl_profiler_abi.h"

#define SLOTS 1024
#define NAME_MAX_LEN 32

typedef int (*record_fn)(const gpufl_nccl_collective *);
typedef bool (*recording_fn)(void);

typedef struct slot {
    atomic_int busy; /* 1 from the claim in start to the release in stop */
    gpufl_nccl_collective c;
    char names[4][NAME_MAX_LEN];
} slot;

/* What one communicator's init told us (v4), or only the version (v2,
 * v3, whose descriptions carry the communicator themselves). */
typedef struct context {
    unsigned abi;
    uint64_t comm_hash;
    int rank, nranks;
} context;

static slot slots[SLOTS];
static atomic_uint next_slot;
/* libgpufl's entry point; written by init (rare, on NCCL's init thread),
 * read by every event: an acquire load pairs with the release store, so a
 * reader that sees the pointer sees the library it points into loaded */
static _Atomic(record_fn) record;
static context ctx_v2 = {.abi = 2, .rank = -1}, ctx_v3 = {.abi = 3, .rank = -1};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *gpufl_symbol(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (f)
        return f;
    /* loaded privately (dlopen without RTLD_GLOBAL): found by its soname,
     * never loaded by us */
    void *lib = dlopen("libgpufl.so.0", RTLD_NOLOAD | RTLD_LAZY);
    if (!lib)
        return NULL;
    f = dlsym(lib, name);
    dlclose(lib); /* drops only the reference NOLOAD took */
    return f;
}

/* Whether this process records with gpufl now; sets `record` if so. */
static int gpufl_recording(void)
{
    recording_fn is_recording = (recording_fn)gpufl_symbol("gpufl_is_recording");
    record_fn fn = (record_fn)gpufl_symbol("gpufl_record_nccl_collective");
    if (!is_recording || !fn || !is_recording())
        return 0;
    atomic_store_explicit(&record, fn, memory_order_release);
    return 1;
}

static const char *keep_name(char *dst, const char *src)
{
    if (!src || !src[0])
        return NULL;
    size_t n = strnlen(src, NAME_MAX_LEN - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
    return dst;
}

static slot *claim(void)
{
    /* relaxed: the counter only spreads claims; the CAS on busy owns the slot */
    unsigned first = atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed);
    for (unsigned i = 0; i < 16; i++) {
        slot *s = &slots[(first + i) % SLOTS];
        int expected = 0;
        /* acquire: the previous owner's release of busy happened before our writes */
        if (atomic_compare_exchange_strong_explicit(&s->busy, &expected, 1, memory_order_acquire, memory_order_relaxed))
            return s;
    }
    return NULL;
}

/* The filled description c (its names pointing into `names` of the caller)
 * becomes an event now, or at stop through a slot. */
static gpufl__nccl_result begin(void **handle, const gpufl_nccl_collective *c, const char *const names[4])
{
    record_fn fn = atomic_load_explicit(&record, memory_order_acquire);
    if (!fn)
        return GPUFL__NCCL_SUCCESS;
    const char *func = names[0] && names[0][0] ? names[0] : "unknown"; /* kept, as what NCCL did not name */
    slot *s = claim();
    if (!s) {
        gpufl_nccl_collective now = *c;
        now.func = func, now.datatype = names[1], now.algo = names[2], now.proto = names[3];
        (void)fn(&now);
        return GPUFL__NCCL_SUCCESS;
    }
    s->c = *c;
    s->c.func = keep_name(s->names[0], func);
    s->c.datatype = keep_name(s->names[1], names[1]);
    s->c.algo = keep_name(s->names[2], names[2]);
    s->c.proto = keep_name(s->names[3], names[3]);
    *handle = s;
    return GPUFL__NCCL_SUCCESS;
}

static gpufl__nccl_result stop_event(void *handle)
{
    slot *s = handle;
    if (!s || s < slots || s >= slots + SLOTS)
        return GPUFL__NCCL_SUCCESS; /* not ours: NCCL never hands one, a test may */
    s->c.end_ns = now_ns();
    record_fn fn = atomic_load_explicit(&record, memory_order_acquire);
    if (fn && s->c.func)
        (void)fn(&s->c);
    /* release: our reads of the slot happen before the next owner's writes */
    atomic_store_explicit(&s->busy, 0, memory_order_release);
    return GPUFL__NCCL_SUCCESS;
}

static gpufl__nccl_result record_state(void *handle, int state, void *args)
{
    (void)handle, (void)state, (void)args;
    return GPUFL__NCCL_SUCCESS;
}

static gpufl__nccl_result finalize(void *ctx)
{
    context *c = ctx;
    if (c && c != &ctx_v2 && c != &ctx_v3)
        free(c);
    return GPUFL__NCCL_SUCCESS;
}

static void base(gpufl_nccl_collective *c, const context *ctx)
{
    memset(c, 0, sizeof *c);
    c->struct_size = sizeof *c;
    c->start_ns = now_ns();
    c->abi = ctx->abi;
    c->comm_hash = ctx->comm_hash;
    c->rank = ctx->rank;
    c->nranks = ctx->nranks > 0 ? (uint32_t)ctx->nranks : 0;
    c->root = -1;
}

/* ---- version 4 ----------------------------------------------------------- */

static gpufl__nccl_result init_v4(void **context_out, int *mask, const char *comm_name, uint64_t comm_hash, int nnodes,
                                  int nranks, int rank, gpufl__nccl_logger log)
{
    (void)comm_name, (void)nnodes;
    if (context_out)
        *context_out = NULL;
    if (!mask)
        return GPUFL__NCCL_SUCCESS;
    *mask = 0;
    if (!context_out || !gpufl_recording())
        return GPUFL__NCCL_SUCCESS;
    context *c = malloc(sizeof *c); /* one per communicator, freed by finalize */
    if (!c)
        return GPUFL__NCCL_SUCCESS;
    *c = (context){.abi = 4, .comm_hash = comm_hash, .rank = rank, .nranks = nranks};
    *context_out = c;
    *mask = GPUFL__NCCL_PROFILE_COLL | GPUFL__NCCL_PROFILE_P2P;
    if (log)
        log(3 /* INFO */, 1 /* INIT */, __FILE__, __LINE__,
            "gpufl: recording the collectives of communicator %llx (rank %d of %d)", (unsigned long long)comm_hash,
            rank, nranks);
    return GPUFL__NCCL_SUCCESS;
}

static gpufl__nccl_result start_v4(void *ctx, void **handle, gpufl__nccl_descr_v4 *d)
{
    if (handle)
        *handle = NULL;
    if (!ctx || !handle || !d)
        return GPUFL__NCCL_SUCCESS;
    gpufl_nccl_collective c;
    base(&c, ctx);
    if (d->rank >= 0)
        c.rank = d->rank;
    if (d->type == GPUFL__NCCL_PROFILE_COLL) {
        c.seq = d->coll.seq, c.count = d->coll.count, c.root = d->coll.root, c.channels = d->coll.channels;
        const char *names[4] = {d->coll.func, d->coll.datatype, d->coll.algo, d->coll.proto};
        return begin(handle, &c, names);
    }
    if (d->type == GPUFL__NCCL_PROFILE_P2P) {
        c.count = d->p2p.count, c.root = d->p2p.peer, c.channels = d->p2p.channels, c.is_p2p = 1;
        const char *names[4] = {d->p2p.func, d->p2p.datatype, NULL, NULL};
        return begin(handle, &c, names);
    }
    return GPUFL__NCCL_SUCCESS;
}

/* ---- versions 2 and 3 ------------------------------------------------------ */

static gpufl__nccl_result init_v23(void **context_out, int *mask, context *ctx)
{
    if (context_out)
        *context_out = NULL;
    if (!mask)
        return GPUFL__NCCL_SUCCESS;
    *mask = 0;
    if (!context_out || !gpufl_recording())
        return GPUFL__NCCL_SUCCESS;
    *context_out = ctx;
    *mask = GPUFL__NCCL_PROFILE_COLL | GPUFL__NCCL_PROFILE_P2P;
    return GPUFL__NCCL_SUCCESS;
}

static gpufl__nccl_result init_v2(void **context_out, int *mask) { return init_v23(context_out, mask, &ctx_v2); }
static gpufl__nccl_result init_v3(void **context_out, int *mask) { return init_v23(context_out, mask, &ctx_v3); }

/* v2 and v3 differ only past the datatype of a collective (v2 has
 * traffic_bytes there), so both read through their own struct. */
#define START_V23(V)                                                                                                   \
    static gpufl__nccl_result start_v##V(void *ctx, void **handle, void *descr)                                        \
    {                                                                                                                  \
        gpufl__nccl_descr_v##V *d = descr;                                                                             \
        if (handle)                                                                                                    \
            *handle = NULL;                                                                                            \
        if (!ctx || !handle || !d)                                                                                     \
            return GPUFL__NCCL_SUCCESS;                                                                                \
        gpufl_nccl_collective c;                                                                                       \
        base(&c, ctx);                                                                                                 \
        c.rank = d->rank;                                                                                              \
        if (d->type == GPUFL__NCCL_PROFILE_COLL) {                                                                     \
            c.comm_hash = d->coll.comm_hash, c.seq = d->coll.seq, c.count = d->coll.count, c.root = d->coll.root;      \
            c.channels = d->coll.max_channels;                                                                         \
            const char *names[4] = {d->coll.func, d->coll.datatype, d->coll.algo, d->coll.proto};                      \
            return begin(handle, &c, names);                                                                           \
        }                                                                                                              \
        if (d->type == GPUFL__NCCL_PROFILE_P2P) {                                                                      \
            c.comm_hash = d->p2p.comm_hash, c.count = d->p2p.count, c.root = d->p2p.peer, c.is_p2p = 1;                \
            const char *names[4] = {d->p2p.func, d->p2p.datatype, NULL, NULL};                                         \
            return begin(handle, &c, names);                                                                           \
        }                                                                                                              \
        return GPUFL__NCCL_SUCCESS;                                                                                    \
    }
START_V23(2)
START_V23(3)

/* ---- the exported tables ---------------------------------------------------- */

#define EXPORT __attribute__((visibility("default")))

EXPORT const gpufl__nccl_profiler_v4 ncclProfiler_v4 = {"gpufl", init_v4, start_v4, stop_event, record_state, finalize};
EXPORT const gpufl__nccl_profiler_v3 ncclProfiler_v3 = {"gpufl", init_v3, start_v3, stop_event, record_state, finalize};
EXPORT const gpufl__nccl_profiler_v3 ncclProfiler_v2 = {"gpufl", init_v2, start_v2, stop_event, record_state, finalize};
