/*
 * NVTX ranges and marks (see nvtx_ranges.h).
 */
#include "backend/cupti/nvtx_ranges.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>
#include <generated_nvtx_meta.h>

#include "backend/cupti/api_hooks.h"
#include "backend/cupti/engines.h"
#include "backend/cupti/torch_nvtx.h"

#define MAX_DEPTH 64
#define HANDLE_SLOTS 4096 /* domains and registered strings, all threads */
#define OPEN_SLOTS 4096   /* start/end ranges open at once */
#define PROBES 32

static const gpufl_plugin_host *host;
/* Bumped per session: a thread's stack from an earlier session is stale. */
static _Atomic uint32_t generation;
static _Atomic uint64_t next_id;
static _Atomic uint64_t unmatched;

/* ---- per-thread push/pop stack ----------------------------------------- */

typedef struct open_range {
    uint64_t start;
    uint32_t name, domain;
    bool has_seq;
    uint64_t seq; /* PyTorch's sequence number of the op (torch_nvtx.h) */
} open_range;

typedef struct thread_ranges {
    uint32_t generation;
    uint32_t depth; /* may exceed MAX_DEPTH: the deeper frames are only counted */
    open_range frames[MAX_DEPTH];
} thread_ranges;

static __thread thread_ranges mine;

static thread_ranges *my_ranges(void)
{
    uint32_t gen = atomic_load_explicit(&generation, memory_order_relaxed);
    if (mine.generation != gen) {
        mine.generation = gen;
        mine.depth = 0;
    }
    return &mine;
}

/* ---- handle → string id maps (domains, registered strings) ------------- */

typedef struct handle_slot {
    _Atomic uintptr_t key; /* 0 = empty; never removed */
    _Atomic uint32_t value;
} handle_slot;

static handle_slot handles[HANDLE_SLOTS];

static size_t slot_of(uint64_t key, size_t slots)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)(key & (slots - 1));
}

static void handle_put(const void *handle, uint32_t value)
{
    uintptr_t key = (uintptr_t)handle;
    if (!key)
        return;
    for (size_t i = 0, s = slot_of(key, HANDLE_SLOTS); i < PROBES; i++, s = (s + 1) & (HANDLE_SLOTS - 1)) {
        uintptr_t seen = atomic_load_explicit(&handles[s].key, memory_order_acquire);
        if (seen == 0 && atomic_compare_exchange_strong(&handles[s].key, &seen, key)) {
            atomic_store_explicit(&handles[s].value, value, memory_order_release);
            return;
        }
        if (seen == key) { /* a handle reused after destroy: the new name wins */
            atomic_store_explicit(&handles[s].value, value, memory_order_release);
            return;
        }
    }
    atomic_fetch_add_explicit(&unmatched, 1, memory_order_relaxed);
}

static uint32_t handle_get(const void *handle)
{
    uintptr_t key = (uintptr_t)handle;
    if (!key)
        return 0;
    for (size_t i = 0, s = slot_of(key, HANDLE_SLOTS); i < PROBES; i++, s = (s + 1) & (HANDLE_SLOTS - 1)) {
        uintptr_t seen = atomic_load_explicit(&handles[s].key, memory_order_acquire);
        if (seen == key)
            return atomic_load_explicit(&handles[s].value, memory_order_acquire);
        if (seen == 0)
            return 0;
    }
    return 0;
}

/* ---- start/end ranges open across threads -------------------------------- */

#define OPEN_FREE 0
#define OPEN_BUSY UINT64_MAX /* being filled or emptied */

typedef struct open_slot {
    _Atomic uint64_t key; /* the nvtxRangeId_t, or OPEN_FREE / OPEN_BUSY */
    uint64_t start;
    uint32_t name, domain, tid;
} open_slot;

static open_slot open_ranges[OPEN_SLOTS];

static void open_put(uint64_t id, uint64_t start, uint32_t name, uint32_t domain, uint32_t tid)
{
    if (id == OPEN_FREE || id == OPEN_BUSY)
        return;
    for (size_t i = 0, s = slot_of(id, OPEN_SLOTS); i < PROBES; i++, s = (s + 1) & (OPEN_SLOTS - 1)) {
        uint64_t expect = OPEN_FREE;
        if (atomic_compare_exchange_strong(&open_ranges[s].key, &expect, OPEN_BUSY)) {
            open_ranges[s].start = start;
            open_ranges[s].name = name;
            open_ranges[s].domain = domain;
            open_ranges[s].tid = tid;
            /* release: whoever takes the slot by its id sees the fields */
            atomic_store_explicit(&open_ranges[s].key, id, memory_order_release);
            return;
        }
    }
    atomic_fetch_add_explicit(&unmatched, 1, memory_order_relaxed);
}

static bool open_take(uint64_t id, open_slot *out)
{
    if (id == OPEN_FREE || id == OPEN_BUSY)
        return false;
    for (size_t i = 0, s = slot_of(id, OPEN_SLOTS); i < PROBES; i++, s = (s + 1) & (OPEN_SLOTS - 1)) {
        uint64_t expect = id;
        if (atomic_compare_exchange_strong_explicit(&open_ranges[s].key, &expect, OPEN_BUSY, memory_order_acquire,
                                                    memory_order_relaxed)) {
            out->start = open_ranges[s].start;
            out->name = open_ranges[s].name;
            out->domain = open_ranges[s].domain;
            out->tid = open_ranges[s].tid;
            atomic_store_explicit(&open_ranges[s].key, OPEN_FREE, memory_order_release);
            return true;
        }
    }
    return false;
}

/* ---- messages ------------------------------------------------------------ */

/* A range's text as interned: PyTorch's per-call numbers are cut off
 * (torch_nvtx.h), so that the string table stays bounded, and the op's
 * sequence number kept. */
typedef struct text_id {
    uint32_t name;
    bool has_seq;
    uint64_t seq;
} text_id;

static text_id op_text(const char *s)
{
    text_id t = {0, false, 0};
    if (s)
        t.name = host->intern(s, gpufl__torch_nvtx_split(s, strlen(s), &t.has_seq, &t.seq));
    return t;
}

static uint32_t intern_text(const char *s) { return op_text(s).name; }

/* NVTX's wide strings are wchar_t (UTF-32 on Linux): encode to UTF-8 into a
 * stack buffer, cut at 255 bytes. */
static uint32_t intern_wide(const wchar_t *w)
{
    if (!w)
        return 0;
    char buf[256];
    size_t n = 0;
    for (; *w && n + 4 < sizeof buf; w++) {
        uint32_t c = (uint32_t)*w;
        if (c < 0x80) {
            buf[n++] = (char)c;
        } else if (c < 0x800) {
            buf[n++] = (char)(0xC0 | c >> 6);
            buf[n++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            buf[n++] = (char)(0xE0 | c >> 12);
            buf[n++] = (char)(0x80 | (c >> 6 & 0x3F));
            buf[n++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x110000) {
            buf[n++] = (char)(0xF0 | c >> 18);
            buf[n++] = (char)(0x80 | (c >> 12 & 0x3F));
            buf[n++] = (char)(0x80 | (c >> 6 & 0x3F));
            buf[n++] = (char)(0x80 | (c & 0x3F));
        }
    }
    return host->intern(buf, n);
}

static text_id attributes_text(const nvtxEventAttributes_t *a)
{
    text_id t = {0, false, 0};
    if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message)
        return t;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return op_text(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE: t.name = intern_wide(a->message.unicode); return t;
    case NVTX_MESSAGE_TYPE_REGISTERED: t.name = handle_get(a->message.registered); return t;
    default: return t;
    }
}

static uint32_t intern_attributes(const nvtxEventAttributes_t *a) { return attributes_text(a).name; }

static text_id wide_text(const wchar_t *w) { return (text_id){intern_wide(w), false, 0}; }

/* ---- events -------------------------------------------------------------- */

static void emit_seq(uint8_t type, uint8_t flags, uint32_t tid, uint64_t start, uint64_t end, uint32_t name,
                     uint32_t domain, uint16_t depth, bool has_seq, uint64_t seq)
{
    gfl_event ev;
    memset(&ev, 0, sizeof ev);
    ev.h.type = type;
    ev.h.flags = flags;
    ev.h.tid = tid; /* 0: the pushing thread's own */
    ev.h.ts = start;
    ev.u.nvtx.end_ts = end;
    ev.u.nvtx.id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed) + 1;
    ev.u.nvtx.name = name;
    ev.u.nvtx.domain = domain;
    ev.u.nvtx.depth = depth;
    if (has_seq) {
        ev.h.flags |= GFL_F_NVTX_SEQ;
        ev.u.nvtx.seq = seq;
    }
    (void)host->push(&ev); /* a full ring counts the loss itself */
}

static void emit(uint8_t type, uint8_t flags, uint32_t tid, uint64_t start, uint64_t end, uint32_t name,
                 uint32_t domain, uint16_t depth)
{
    emit_seq(type, flags, tid, start, end, name, domain, depth, false, 0);
}

static void push_range(text_id text, uint32_t domain)
{
    thread_ranges *t = my_ranges();
    if (t->depth < MAX_DEPTH)
        t->frames[t->depth] = (open_range){host->now_ns(), text.name, domain, text.has_seq, text.seq};
    t->depth++;
    gfl_engines_nvtx(true, text.name);
}

/* NVTX keeps one push/pop stack per domain: a pop ends the innermost open
 * range of its own domain, which is not the thread's innermost when ranges
 * of two domains interleave (push A, push B in another domain, pop A).
 * Taking the thread's innermost would end B at A's pop and A at B's. The
 * ranges above the one ended move down a level. Past MAX_DEPTH the deepest
 * ranges are only counted, their domains unknown: the innermost goes. */
static void pop_range(uint32_t domain)
{
    thread_ranges *t = my_ranges();
    if (t->depth > MAX_DEPTH) {
        t->depth--;
        return;
    }
    uint32_t i = t->depth;
    while (i > 0 && t->frames[i - 1].domain != domain)
        i--;
    if (i == 0) {
        /* pushed before this session began, or an unbalanced pop */
        atomic_fetch_add_explicit(&unmatched, 1, memory_order_relaxed);
        return;
    }
    open_range r = t->frames[--i];
    memmove(&t->frames[i], &t->frames[i + 1], (t->depth - 1 - i) * sizeof *t->frames);
    t->depth--;
    emit_seq(GFL_EV_NVTX_RANGE, 0, 0, r.start, host->now_ns(), r.name, r.domain, (uint16_t)i, r.has_seq, r.seq);
    gfl_engines_nvtx(false, r.name);
}

static void start_range(const CUpti_NvtxData *d, uint32_t name, uint32_t domain)
{
    /* the range id is the NVTX function's return value */
    const nvtxRangeId_t *id = d->functionReturnValue;
    /* The starting thread's id goes with the range: a tid of 0 would be
     * filled in by push() on the thread that ends it, which may be another
     * one (nvtx_range lines of start/end ranges carry the starting thread). */
    if (id && *id)
        open_put(*id, host->now_ns(), name, domain, gfl_api_thread_id());
}

static void end_range(nvtxRangeId_t id)
{
    open_slot r;
    if (!open_take(id, &r)) {
        atomic_fetch_add_explicit(&unmatched, 1, memory_order_relaxed);
        return;
    }
    emit(GFL_EV_NVTX_RANGE, GFL_F_NVTX_START_END, r.tid, r.start, host->now_ns(), r.name, r.domain, 0);
}

static void mark(uint32_t name, uint32_t domain) { emit(GFL_EV_NVTX_MARK, 0, 0, host->now_ns(), 0, name, domain, 0); }

void gfl_nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
    const void *p = d->functionParams;
    if (!host || !p)
        return;
    switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: push_range(op_text(((const nvtxRangePushA_params *)p)->message), 0); break;
    case CUPTI_CBID_NVTX_nvtxRangePushW: push_range(wide_text(((const nvtxRangePushW_params *)p)->message), 0); break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
        push_range(attributes_text(((const nvtxRangePushEx_params *)p)->eventAttrib), 0);
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
        const nvtxDomainRangePushEx_params *dp = p;
        push_range(attributes_text(dp->core.eventAttrib), handle_get(dp->domain));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop: pop_range(0); break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
        pop_range(handle_get(((const nvtxDomainRangePop_params *)p)->domain));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
        start_range(d, intern_text(((const nvtxRangeStartA_params *)p)->message), 0);
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
        start_range(d, intern_wide(((const nvtxRangeStartW_params *)p)->message), 0);
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        start_range(d, intern_attributes(((const nvtxRangeStartEx_params *)p)->eventAttrib), 0);
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
        const nvtxDomainRangeStartEx_params *dp = p;
        start_range(d, intern_attributes(dp->core.eventAttrib), handle_get(dp->domain));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd: end_range(((const nvtxRangeEnd_params *)p)->id); break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: end_range(((const nvtxDomainRangeEnd_params *)p)->core.id); break;
    case CUPTI_CBID_NVTX_nvtxMarkA: mark(intern_text(((const nvtxMarkA_params *)p)->message), 0); break;
    case CUPTI_CBID_NVTX_nvtxMarkW: mark(intern_wide(((const nvtxMarkW_params *)p)->message), 0); break;
    case CUPTI_CBID_NVTX_nvtxMarkEx: mark(intern_attributes(((const nvtxMarkEx_params *)p)->eventAttrib), 0); break;
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
        const nvtxDomainMarkEx_params *dp = p;
        mark(intern_attributes(dp->core.eventAttrib), handle_get(dp->domain));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
        const nvtxDomainHandle_t *h = d->functionReturnValue;
        if (h)
            handle_put(*h, intern_text(((const nvtxDomainCreateA_params *)p)->name));
        break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
        const nvtxStringHandle_t *h = d->functionReturnValue;
        if (h)
            handle_put(*h, intern_text(((const nvtxDomainRegisterStringA_params *)p)->string));
        break;
    }
    default: break;
    }
}

uint32_t gfl_nvtx_current(void)
{
    thread_ranges *t = &mine;
    if (t->generation != atomic_load_explicit(&generation, memory_order_relaxed) || t->depth == 0)
        return 0;
    return t->depth <= MAX_DEPTH ? t->frames[t->depth - 1].name : t->frames[MAX_DEPTH - 1].name;
}

uint64_t gfl_nvtx_unmatched(void) { return atomic_load_explicit(&unmatched, memory_order_relaxed); }

int gfl_nvtx_start(const gpufl_plugin_host *h)
{
    host = h;
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    atomic_store_explicit(&unmatched, 0, memory_order_relaxed);
    /* start/end ranges of an earlier session are not this one's */
    for (size_t i = 0; i < OPEN_SLOTS; i++)
        atomic_store_explicit(&open_ranges[i].key, OPEN_FREE, memory_order_relaxed);
    return 0;
}

void gfl_nvtx_stop(void) { atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed); }
