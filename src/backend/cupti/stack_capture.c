/*
 * CPU call stacks (stack_capture.h says who calls it and how often).
 *
 * Fast path, every capture: unw_backtrace() into a buffer on the stack, a
 * 64-bit hash of the return addresses, and a probe of a table allocated at
 * init (open addressing, linear probing, at most half full, no removal
 * during a session). A hit returns the id. Nothing is locked, allocated or
 * called in the kernel; the only shared store is a counter in one of 32
 * cache-line stripes picked by the stack address, so threads rarely share
 * one.
 *
 * Slow path, once per distinct stack: reserve an id from an atomic counter,
 * then claim an empty slot with one compare-and-swap of a word that holds
 * both the hash tag and the id, so a thread that finds the slot an instant
 * later already has the id and never waits. The winner defines the stack:
 * dladdr() per frame (it takes the loader's lock: slow, but once per stack),
 * the module path interned, GFL_EV_STACK pieces pushed. A push that fails
 * (ring full) leaves the entry PENDING with the pieces already pushed; the
 * next capture of the same stack after RETRY_DELAY_NS takes the definition
 * over and pushes the rest. So a definition is late, never lost.
 *
 * Identity is the hash: the hash covers every frame from the caller of
 * gpufl__stack_capture() outwards, CUPTI and driver frames included (telling
 * them apart needs dladdr, too slow here; they are the same for every call
 * through one API, so a call site keeps one id per API). Two stacks get the
 * same id only if 40 tag bits and the probe position agree: about 1e-12 per
 * new stack. Definitions leave the CUPTI/driver frames out.
 */
#include "backend/cupti/stack_capture.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libunwind is loaded when stacks are asked for, not linked: the plugin
 * must load on machines without it, where only this feature is missing.
 * unw_backtrace() is its one function we call (libunwind-common.h). */
typedef int (*unw_backtrace_fn)(void **buffer, int size);
static unw_backtrace_fn unw_backtrace;

/* Frames unwound: the kept ones plus room for the CUPTI and driver frames
 * that definitions leave out. A buffer that fills up means "truncated". */
#define RAW_FRAMES (GFL_STACK_MAX_FRAMES + 32)
#define ID_BITS 24
#define ID_MASK ((1ull << ID_BITS) - 1)
/* After a definition push failed, the ring is full: give the collector
 * this long before trying again, so a backlog does not turn every capture
 * into a slow one. */
#define RETRY_DELAY_NS 1000000ull
#define N_STRIPES 32

/* Definition states (entry.def); PENDING carries the pieces pushed. */
enum { DEF_OWNED = 0, DEF_PENDING = 1, DEF_DONE = 2 };
#define DEF_STATE(d) ((d)&0xffu)
#define DEF_PIECES(d) ((d) >> 8)

_Static_assert(GFL_STACK_MAX_STACKS == ID_MASK, "ids fit in the key's low bits");
_Static_assert(RAW_FRAMES < 0xffff, "frame counts fit the payload's 16-bit fields");

typedef struct entry {
    /* 0 = empty; otherwise the hash's tag bits | the id. Written once, by
     * the compare-and-swap that claims the slot. */
    _Atomic uint64_t key;
    /* DEF_OWNED (0, so a claimed slot starts owned by its claimer),
     * DEF_PENDING | pieces << 8, DEF_DONE. */
    _Atomic uint32_t def;
    uint32_t reserved;
} entry;

typedef struct table {
    /* Set at init, read by every capture. */
    entry *slots;
    uint32_t mask; /* slots - 1; slots a power of two >= 2 * max_stacks */
    uint32_t max_stacks;
    const gpufl_plugin_host *host;
    /* Written once per new stack or failed definition: own cache line. */
    _Atomic uint32_t next_id __attribute__((aligned(64)));
    _Atomic uint64_t retry_after_ns;
} table;

typedef struct stripe {
    _Atomic uint64_t captures, failures, table_full;
} __attribute__((aligned(64))) stripe;

typedef struct rare_counters {
    _Atomic uint64_t unique, defined, define_retries;
} rare_counters;

/* Published with release by init, read with acquire by captures, so every
 * field of the table (and exe_path) is seen initialised. */
static _Atomic(table *) current;
/* The last session's table: freed by the next init, never by shutdown
 * (a capture may still be probing it). Init/shutdown only. */
static table *retired;
static stripe stripes[N_STRIPES];
static rare_counters rare;
/* The program's own path: dladdr names it by argv[0], which may be relative. */
static char exe_path[4096];

/* Internal modules, by file name prefix: their innermost frames are left
 * out of definitions. */
static const char *const internal_modules[] = {"libgpufl", "libcupti.", "libcuda."};

/* ---- counters -------------------------------------------------------------- */

/* Threads' stacks are megabytes apart, so the stack address spreads threads
 * over the stripes without thread-local storage. */
static inline stripe *my_stripe(void)
{
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0) >> 16;
    return &stripes[(sp * 0x9E3779B97F4A7C15ull) >> 59];
}

/* Relaxed: counters order nothing; readers sum them after the fact. */
static inline void count(_Atomic uint64_t *c) { atomic_fetch_add_explicit(c, 1, memory_order_relaxed); }

void gpufl__stack_stats_get(gfl_stack_stats *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < N_STRIPES; i++) {
        out->captures += atomic_load_explicit(&stripes[i].captures, memory_order_relaxed);
        out->failures += atomic_load_explicit(&stripes[i].failures, memory_order_relaxed);
        out->table_full += atomic_load_explicit(&stripes[i].table_full, memory_order_relaxed);
    }
    out->unique = atomic_load_explicit(&rare.unique, memory_order_relaxed);
    out->defined = atomic_load_explicit(&rare.defined, memory_order_relaxed);
    out->define_retries = atomic_load_explicit(&rare.define_retries, memory_order_relaxed);
}

static void reset_counters(void)
{
    for (unsigned i = 0; i < N_STRIPES; i++) {
        atomic_store_explicit(&stripes[i].captures, 0, memory_order_relaxed);
        atomic_store_explicit(&stripes[i].failures, 0, memory_order_relaxed);
        atomic_store_explicit(&stripes[i].table_full, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&rare.unique, 0, memory_order_relaxed);
    atomic_store_explicit(&rare.defined, 0, memory_order_relaxed);
    atomic_store_explicit(&rare.define_retries, 0, memory_order_relaxed);
}

/* ---- definitions (slow path) ------------------------------------------------ */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static bool is_internal(const void *ip)
{
    Dl_info info;
    if (!dladdr(ip, &info) || !info.dli_fname)
        return false;
    const char *name = base_name(info.dli_fname);
    for (size_t i = 0; i < sizeof internal_modules / sizeof internal_modules[0]; i++)
        if (!strncmp(name, internal_modules[i], strlen(internal_modules[i])))
            return true;
    return false;
}

/* Module and offset of one return address. The offset is the address in
 * the module's ELF file (runtime address minus the load bias), which is what
 * addr2line and the symbolizer take. Code in no module (JIT) keeps the low
 * 32 bits of its address under module 0. */
static gfl_stack_frame resolve(const table *t, const void *ip)
{
    gfl_stack_frame f = {0, (uint32_t)(uintptr_t)ip};
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(ip, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        return f;
    uintptr_t offset = (uintptr_t)ip - (uintptr_t)lm->l_addr;
    if (offset > UINT32_MAX)
        return f;
    const char *path = lm->l_name && lm->l_name[0] ? lm->l_name : NULL;
    if (!path)
        path = exe_path[0] ? exe_path : info.dli_fname;
    if (!path || !path[0])
        return f;
    f.module = t->host->intern(path, strlen(path));
    f.offset = (uint32_t)offset;
    return f;
}

static bool push_piece(const table *t, uint32_t id, const void *const *frames, unsigned first, unsigned total,
                       bool truncated)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = GFL_EV_STACK;
    ev.h.ts = t->host->now_ns();
    gfl_stack_payload *s = &ev.u.stack;
    unsigned count = total - first < GFL_STACK_FRAMES_PER_EVENT ? total - first : GFL_STACK_FRAMES_PER_EVENT;
    s->id = id;
    s->first = (uint16_t)first;
    s->total = (uint16_t)total;
    s->count = (uint8_t)count;
    s->truncated = truncated;
    for (unsigned i = 0; i < count; i++)
        s->frames[i] = resolve(t, frames[first + i]);
    return t->host->push(&ev) == 0;
}

/* Pushes the pieces of stack `id` from piece `done` on; frames are resolved
 * piece by piece, so a full ring wastes the dladdr() calls of one piece at
 * most. Returns the pieces pushed so far; *all says whether that is all. */
static unsigned push_definition(const table *t, uint32_t id, const void *const *raw, unsigned nraw, bool truncated,
                                unsigned done, bool *all)
{
    unsigned skip = 0;
    while (skip < nraw && is_internal(raw[skip]))
        skip++;
    unsigned total = nraw - skip;
    if (total > GFL_STACK_MAX_FRAMES) {
        total = GFL_STACK_MAX_FRAMES;
        truncated = true;
    }
    unsigned pieces = total ? (total + GFL_STACK_FRAMES_PER_EVENT - 1) / GFL_STACK_FRAMES_PER_EVENT : 1;
    unsigned p = done;
    while (p < pieces && push_piece(t, id, raw + skip, p * GFL_STACK_FRAMES_PER_EVENT, total, truncated))
        p++;
    *all = p == pieces;
    return p;
}

/* Runs with the entry owned (DEF_OWNED) by this thread; leaves it DONE or
 * PENDING. Release: the next owner, who takes over with an acquiring
 * compare-and-swap, sees the pieces this thread recorded as pushed. */
static void define(table *t, entry *e, uint32_t id, const void *const *raw, unsigned nraw, bool truncated,
                   unsigned done)
{
    bool all;
    unsigned pushed = push_definition(t, id, raw, nraw, truncated, done, &all);
    if (all) {
        atomic_store_explicit(&e->def, DEF_DONE, memory_order_release);
        count(&rare.defined);
        return;
    }
    /* Relaxed: a hint for when to retry, ordering nothing. */
    atomic_store_explicit(&t->retry_after_ns, t->host->now_ns() + RETRY_DELAY_NS, memory_order_relaxed);
    atomic_store_explicit(&e->def, DEF_PENDING | pushed << 8, memory_order_release);
    count(&rare.define_retries);
}

/* A known stack whose definition was cut short: take it over when the
 * retry delay has passed and no one else has. */
static void retry_definition(table *t, entry *e, uint32_t id, const void *const *raw, unsigned nraw, bool truncated)
{
    uint32_t d = atomic_load_explicit(&e->def, memory_order_relaxed);
    if (DEF_STATE(d) != DEF_PENDING)
        return;
    if (t->host->now_ns() < atomic_load_explicit(&t->retry_after_ns, memory_order_relaxed))
        return;
    /* Acquire pairs with define()'s release; only one thread wins. */
    if (!atomic_compare_exchange_strong_explicit(&e->def, &d, DEF_OWNED, memory_order_acquire, memory_order_relaxed))
        return;
    define(t, e, id, raw, nraw, truncated, DEF_PIECES(d));
}

/* ---- capture (fast path) ---------------------------------------------------- */

/* Four independent multiply-add lanes, so the multiplications overlap
 * instead of forming one chain as long as the stack; then a final mix so
 * that both the low bits (the probe position) and the high bits (the tag)
 * depend on every frame. */
static inline uint64_t hash_frames(void *const *f, unsigned n, bool truncated)
{
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t l0 = 0x243F6A8885A308D3ull ^ ((uint64_t)n << 1 | truncated), l1 = 0x13198A2E03707344ull,
             l2 = 0xA4093822299F31D0ull, l3 = 0x082EFA98EC4E6C89ull;
    unsigned i = 0;
    for (; i + 4 <= n; i += 4) {
        l0 = (l0 + (uint64_t)(uintptr_t)f[i]) * k;
        l1 = (l1 + (uint64_t)(uintptr_t)f[i + 1]) * k;
        l2 = (l2 + (uint64_t)(uintptr_t)f[i + 2]) * k;
        l3 = (l3 + (uint64_t)(uintptr_t)f[i + 3]) * k;
    }
    for (; i < n; i++)
        l0 = (l0 + (uint64_t)(uintptr_t)f[i]) * k;
    uint64_t h = l0 ^ (l1 << 17 | l1 >> 47) ^ (l2 << 31 | l2 >> 33) ^ (l3 << 47 | l3 >> 17);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/* An id for a new stack, or 0 when max_stacks are taken. The relaxed load
 * keeps the counter from running on once full; the fetch-add is the
 * authority. Relaxed: the id is published by the slot's compare-and-swap. */
static uint32_t reserve_id(table *t)
{
    if (atomic_load_explicit(&t->next_id, memory_order_relaxed) >= t->max_stacks)
        return 0;
    uint32_t id = atomic_fetch_add_explicit(&t->next_id, 1, memory_order_relaxed) + 1;
    return id <= t->max_stacks ? id : 0;
}

/* The id of raw[0..nraw), inserting and defining it when new; 0 when the
 * table is full. */
static uint32_t lookup(table *t, stripe *st, void *const *raw, unsigned nraw, bool truncated)
{
    uint64_t h = hash_frames(raw, nraw, truncated);
    uint64_t tag = h & ~ID_MASK;
    if (!tag)
        tag = 1ull << ID_BITS;
    uint32_t reserved = 0; /* an id this thread took for the stack */
    uint32_t i = (uint32_t)h & t->mask;
    for (uint32_t probes = 0; probes <= t->mask; probes++, i = (i + 1) & t->mask) {
        entry *e = &t->slots[i];
        /* Relaxed: the key is self-contained (tag and id in one word), and
         * the entry's state word was zeroed before the table was published. */
        uint64_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
        while (k == 0) {
            if (!reserved && !(reserved = reserve_id(t))) {
                count(&st->table_full);
                return 0;
            }
            if (atomic_compare_exchange_strong_explicit(&e->key, &k, tag | reserved, memory_order_relaxed,
                                                        memory_order_relaxed)) {
                count(&rare.unique);
                define(t, e, reserved, (const void *const *)raw, nraw, truncated, 0);
                return reserved;
            }
            /* another thread took the slot: k is its key, look at it */
        }
        if ((k & ~ID_MASK) == tag) {
            /* A reserved id is wasted only when two threads meet the same
             * new stack at once: ids have a gap, nothing else. */
            uint32_t id = (uint32_t)(k & ID_MASK);
            if (DEF_STATE(atomic_load_explicit(&e->def, memory_order_relaxed)) == DEF_PENDING)
                retry_definition(t, e, id, (const void *const *)raw, nraw, truncated);
            return id;
        }
    }
    return 0; /* not reached: at most half the slots are ever taken */
}

__attribute__((noinline)) uint32_t gpufl__stack_capture(void)
{
    /* Acquire pairs with init's release: the table is initialised. */
    table *t = atomic_load_explicit(&current, memory_order_acquire);
    if (!t)
        return 0;
    stripe *st = my_stripe();
    count(&st->captures);
    void *raw[RAW_FRAMES];
    int n = unw_backtrace(raw, RAW_FRAMES);
    /* raw[] starts inside this function; the caller's frame is the one
     * whose return address is ours. */
    void *ret = __builtin_return_address(0);
    int first = 0;
    while (first < n && first < 4 && raw[first] != ret)
        first++;
    if (first == n || first == 4)
        first = 1;
    uint32_t id = 0;
    if (n > first)
        id = lookup(t, st, raw + first, (unsigned)(n - first), n == RAW_FRAMES);
    if (!id)
        count(&st->failures);
    return id;
}

/* ---- lifecycle ------------------------------------------------------------------ */

int gpufl__stack_init(const gpufl_plugin_host *host, uint32_t max_stacks)
{
    if (!host || !host->push || !host->intern || !host->now_ns || !max_stacks || max_stacks > GFL_STACK_MAX_STACKS)
        return GPUFL_EINVAL;
    if (!unw_backtrace) {
        void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            lib = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
        unw_backtrace = lib ? (unw_backtrace_fn)dlsym(lib, "unw_backtrace") : NULL;
        if (!unw_backtrace)
            return GPUFL_EUNSUPPORTED;
    }
    /* The table before last has been idle for a whole session; the last
     * one (if this session was not shut down) becomes the retired one. */
    if (retired) {
        free(retired->slots);
        free(retired);
        retired = NULL;
    }
    gpufl__stack_shutdown();
    uint32_t slots = 2;
    while (slots < 2 * max_stacks)
        slots <<= 1;
    table *t = aligned_alloc(64, (sizeof *t + 63) & ~(size_t)63);
    entry *e = calloc(slots, sizeof *e);
    if (!t || !e) {
        free(t);
        free(e);
        return GPUFL_ENOMEM;
    }
    memset(t, 0, sizeof *t);
    t->slots = e;
    t->mask = slots - 1;
    t->max_stacks = max_stacks;
    t->host = host;
    if (!exe_path[0]) {
        ssize_t len = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
        exe_path[len > 0 ? len : 0] = '\0';
    }
    reset_counters();
    /* Release: captures that see t see it whole. */
    atomic_store_explicit(&current, t, memory_order_release);
    return 0;
}

void gpufl__stack_shutdown(void)
{
    /* Acquire: t's fields were written by init, maybe on another thread;
     * release: nothing (the pointer is all that is published). */
    table *t = atomic_exchange_explicit(&current, NULL, memory_order_acq_rel);
    if (!t)
        return;
    gfl_stack_stats s;
    gpufl__stack_stats_get(&s);
    if (t->host->log) {
        char msg[256];
        bool bad = s.table_full || s.unique > s.defined;
        snprintf(msg, sizeof msg,
                 "stack traces: %llu captures, %llu distinct stacks (%llu defined), %llu failed "
                 "(%llu with the table full at %u stacks)",
                 (unsigned long long)s.captures, (unsigned long long)s.unique, (unsigned long long)s.defined,
                 (unsigned long long)s.failures, (unsigned long long)s.table_full, t->max_stacks);
        t->host->log(bad ? GFL_LOG_WARN : GFL_LOG_DEBUG, msg);
    }
    if (retired) { /* cannot happen (init frees it first); never leak it */
        free(retired->slots);
        free(retired);
    }
    retired = t;
}
