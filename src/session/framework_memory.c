/*
 * gpufl_record_allocator and gpufl_record_block (gpufl.h): the framework's
 * layer of memory, recorded by its package (python/gpufl/memory) from the
 * framework's own figures, through the calling thread's ring.
 *
 * A block's source stack is defined once per session, the first time it is
 * seen: the frames are hashed, the hash finds the stack's id, and a new
 * stack is pushed as GFL_EV_STACK pieces flagged GFL_F_STACK_SOURCE, with
 * ids from GFL_SOURCE_STACK_BASE up so that they never meet the CUPTI
 * plugin's CPU stacks. Two stacks share an id only if their 64-bit hashes
 * agree. The table is behind a mutex: blocks come from the framework's
 * hooks and snapshots, thousands a second at most, never from a kernel
 * launch's path.
 *
 * gpufl_report_oom and gpufl_set_framework_oom: the framework's own
 * out-of-memory, recorded as a failed allocation of its layer and dumped
 * like any "oom" trigger.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/event.h"
#include "core/idmap.h"
#include "core/intern.h"
#include "core/log.h"
#include "core/recording.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"
#include "session/dumps.h"
#include "session/session.h"

#define MAX_FRAMES 64
#define MAX_SOURCE_STACKS (GFL_SOURCE_STACK_BASE - 1) /* ids stay below 2^21 (the reader's 24 bits) */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gpufl__idmap stacks; /* frames' hash -> stack id */
static uint32_t stacks_gen; /* the session generation the table belongs to */
static uint32_t next_id;

static bool push(gfl_event *ev)
{
    gpufl__producer *p = gpufl__producer_self();
    if (!p)
        return false;
    return gpufl__ring_push(&p->ring, ev, gpufl__producer_tid(p)) == 0; /* a full ring counts it lost */
}

static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_frames(const gpufl_source_frame *f, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        const char *file = f[i].file ? f[i].file : "", *fn = f[i].function ? f[i].function : "";
        h = hash_bytes(h, file, strlen(file) + 1);
        h = hash_bytes(h, fn, strlen(fn) + 1);
        h = hash_bytes(h, &f[i].line, sizeof f[i].line);
    }
    return h ? h : 1;
}

/* Pushes the definition of stack id: its frames as "function (file:line)". */
static void define_stack(uint32_t id, const gpufl_source_frame *f, size_t n, bool truncated, uint64_t ts)
{
    for (size_t first = 0; first < n; first += GFL_STACK_FRAMES_PER_EVENT) {
        gfl_event ev = {.h = {.type = GFL_EV_STACK, .flags = GFL_F_STACK_SOURCE, .ts = ts}};
        gfl_stack_payload *s = &ev.u.stack;
        size_t count = n - first < GFL_STACK_FRAMES_PER_EVENT ? n - first : GFL_STACK_FRAMES_PER_EVENT;
        s->id = id;
        s->first = (uint16_t)first;
        s->total = (uint16_t)n;
        s->count = (uint8_t)count;
        s->truncated = truncated;
        for (size_t i = 0; i < count; i++) {
            const gpufl_source_frame *fr = &f[first + i];
            char text[1024];
            snprintf(text, sizeof text, "%s (%s:%u)", fr->function && fr->function[0] ? fr->function : "?",
                     fr->file && fr->file[0] ? fr->file : "?", fr->line);
            s->frames[i].module = gpufl__intern(text);
            s->frames[i].offset = fr->line;
        }
        (void)push(&ev);
    }
}

/* The id of the stack frames[0..n), defined now if it is new; 0 for none
 * or when the table is full. */
static uint32_t source_stack(const gpufl_source_frame *frames, size_t n, uint64_t ts)
{
    if (!frames || !n)
        return 0;
    bool truncated = n > MAX_FRAMES;
    if (truncated)
        n = MAX_FRAMES;
    uint64_t h = hash_frames(frames, n);
    uint32_t id = 0;
    pthread_mutex_lock(&lock);
    uint32_t gen = gpufl__session_generation();
    if (stacks_gen != gen) { /* a new session defines its stacks again */
        gpufl__idmap_clear(&stacks);
        stacks_gen = gen;
        next_id = 0;
    }
    bool fresh = false;
    if (!gpufl__idmap_get(&stacks, h, &id) && next_id < MAX_SOURCE_STACKS) {
        id = GFL_SOURCE_STACK_BASE + ++next_id;
        if (gpufl__idmap_put(&stacks, h, id) != 0)
            id = 0;
        fresh = id != 0;
    }
    /* defined under the lock: a second thread with the same stack must not
     * push a use of it before its definition */
    if (fresh)
        define_stack(id, frames, n, truncated, ts);
    pthread_mutex_unlock(&lock);
    return id;
}

static uint64_t stamp(uint64_t ts_ns)
{
    uint64_t start = gpufl__session_start_ns();
    if (!ts_ns)
        return gpufl__now_ns();
    /* a block the framework handed out before the session began is live in
     * it from its start */
    return ts_ns < start ? start : ts_ns;
}

GPUFL_API int gpufl_record_allocator(const gpufl_allocator_state *st)
{
    if (!st || st->struct_size < offsetof(gpufl_allocator_state, ooms) + sizeof st->ooms)
        return GPUFL_EINVAL;
    if (!gpufl__is_recording())
        return GPUFL_ESTATE;
    bool has_ts = st->struct_size >= offsetof(gpufl_allocator_state, ts_ns) + sizeof st->ts_ns;
    gfl_event ev = {
        .h = {.type = GFL_EV_ALLOCATOR, .device = (uint16_t)st->device, .ts = stamp(has_ts ? st->ts_ns : 0)}};
    gfl_allocator_payload *p = &ev.u.allocator;
    p->allocated = st->allocated_bytes;
    p->reserved = st->reserved_bytes;
    p->active = st->active_bytes;
    p->inactive_split = st->inactive_split_bytes;
    p->largest_free = st->largest_free_bytes;
    p->peak_allocated = st->peak_allocated_bytes;
    p->peak_reserved = st->peak_reserved_bytes;
    p->requested = st->requested_bytes;
    p->device_free = st->device_free_bytes;
    p->alloc_retries = st->alloc_retries;
    p->ooms = st->ooms;
    p->scope_id = gpufl__producer_innermost_scope();
    p->framework = gpufl__intern(st->framework && st->framework[0] ? st->framework : "framework");
    p->reason = gpufl__intern(st->reason && st->reason[0] ? st->reason : "sample");
    return push(&ev) ? 0 : GPUFL_ENOMEM;
}

GPUFL_API int gpufl_record_block(uint32_t device, uint64_t address, uint64_t bytes, int is_free, uint64_t stream,
                                 uint64_t ts_ns, const gpufl_source_frame *frames, size_t nframes)
{
    if (!address)
        return GPUFL_EINVAL;
    if (!gpufl__is_recording())
        return GPUFL_ESTATE;
    uint64_t ts = stamp(ts_ns);
    gfl_event ev = {.h = {.type = is_free ? GFL_EV_MEM_FREE : GFL_EV_MEM_ALLOC,
                          .flags = GFL_F_MEM_FRAMEWORK,
                          .device = (uint16_t)device,
                          .ts = ts}};
    gfl_mem_payload *m = &ev.u.mem;
    m->address = address;
    m->bytes = bytes;
    m->mem_kind = GFL_MEM_DEVICE;
    m->is_async = 0;
    m->stream = (uint32_t)stream; /* the framework's handle, as a number to tell streams apart */
    m->scope_id = gpufl__producer_innermost_scope();
    if (!is_free)
        m->stack_id = source_stack(frames, nframes, ts);
    return push(&ev) ? 0 : GPUFL_ENOMEM;
}

GPUFL_API int gpufl_report_oom(uint32_t device, uint64_t requested_bytes, const char *detail)
{
    if (!gpufl__is_recording()) {
        gpufl__set_error("gpufl_report_oom: no session; call gpufl_init first");
        return GPUFL_ESTATE;
    }
    /* what the dump's diagnosis reads the request and its device from, on
     * this thread's ring ahead of the trigger, which the collector fires
     * only after draining every ring again */
    gfl_event ev = {.h = {.type = GFL_EV_MEM_ALLOC,
                          .flags = GFL_F_MEM_FAILED | GFL_F_MEM_FRAMEWORK,
                          .device = (uint16_t)device,
                          .ts = gpufl__now_ns()}};
    ev.u.mem.bytes = requested_bytes;
    ev.u.mem.mem_kind = GFL_MEM_DEVICE;
    ev.u.mem.scope_id = gpufl__producer_innermost_scope();
    (void)push(&ev); /* a full ring counts it lost; the trigger still says what happened */
    char text[256];
    if (!detail || !detail[0]) {
        snprintf(text, sizeof text, "the framework could not allocate %llu bytes on GPU %u",
                 (unsigned long long)requested_bytes, device);
        detail = text;
    }
    return gpufl__session_dump("gpufl_report_oom", "oom", detail);
}

GPUFL_API int gpufl_set_framework_oom(int on)
{
    gpufl__dumps_framework_oom(on != 0);
    return 0;
}
