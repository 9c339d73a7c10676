/*
 * Scopes: gpufl_scope_begin / gpufl_scope_end / gpufl_monitor.
 *
 * This is the library's hottest public path (a training loop may open
 * millions of scopes), so it is one timestamp and one packed ring record
 * (core/record.h: 24 bytes) to begin, the same to end (32 bytes), all on
 * the calling thread's own producer: no lock, no allocation after the first
 * call on a thread, no system call. The name is interned once per call site
 * where the caller keeps the id (gpufl_scope_begin_cached, which the
 * GFL_SCOPE macros use for literal names).
 *
 * The scope stack lives in the producer. A token is the scope's id, unique
 * in the session; ending a token closes it and any scope opened inside it,
 * and a token that is no longer on the stack (ended twice, or from an
 * earlier session) is ignored.
 */
#include <stdatomic.h>

#include "core/clock.h"
#include "core/intern.h"
#include "core/record.h"
#include "gpufl/gpufl.h"
#include "ring/producer.h"
#include "session/plugin.h"
#include "session/session.h"
#include "session/trace_windows.h"

/* One scope record of frame f at nesting `depth` (its parent below it). */
static inline void push_scope(gpufl__producer *p, uint8_t type, uint8_t flags, uint64_t ts, const gpufl__scope_frame *f,
                              uint32_t depth)
{
    uint64_t seq = f->id & GFL_SCOPE_SEQ_MASK;
    uint64_t parent_seq = depth ? p->stack[depth - 1].id & GFL_SCOPE_SEQ_MASK : 0;
    void *rec = gpufl__ring_reserve(&p->ring, gpufl__scope_record_len(type, seq, parent_seq), GFL_CHANNEL_SCOPE);
    if (!rec)
        return;
    gpufl__scope_record_put(rec, type, flags, (uint16_t)depth, f->name, ts, f->begin_ts, seq, parent_seq);
    gpufl__ring_commit(&p->ring);
}

/* A stack left from an earlier session belongs to no scope of this one. */
static inline void sync_generation(gpufl__producer *p)
{
    uint32_t gen = gpufl__session_generation();
    if (__builtin_expect(p->scope_gen != gen, 0)) {
        p->scope_gen = gen;
        p->depth = 0;
        atomic_store_explicit(&p->in_scope, 0, memory_order_relaxed);
    }
}

static inline gpufl_scope begin_named(const char *name, uint32_t *cache)
{
    if (!gpufl__is_recording())
        return 0;
    gpufl__producer *p = gpufl__producer_self();
    if (!p)
        return 0;
    sync_generation(p);
    if (p->depth >= GFL_SCOPE_MAX_DEPTH) {
        gpufl__producer_count_lost(p, GFL_DROP_SCOPE_DEPTH, GFL_CHANNEL_SCOPE, 2);
        return 0;
    }
    gpufl__scope_frame *f = &p->stack[p->depth];
    /* relaxed: racing first calls of one site store the same id */
    uint32_t id = cache ? __atomic_load_n(cache, __ATOMIC_RELAXED) : 0;
    if (!id) {
        id = gpufl__intern(name && name[0] ? name : "(unnamed)");
        if (cache)
            __atomic_store_n(cache, id, __ATOMIC_RELAXED);
    }
    /* before the begin time: a step window's tracing covers the whole step */
    gpufl__trace_step_begin_check(id);
    f->name = id;
    f->id = ((uint64_t)p->index << GFL_SCOPE_SEQ_BITS) | ++p->scope_seq;
    uint32_t depth = p->depth++;
    /* Last, so the scope's time excludes our own bookkeeping; and before
     * in_scope is set, so no sample of this window predates the scope. */
    f->begin_ts = gpufl__now_ns();
    if (depth == 0) {
        atomic_signal_fence(memory_order_seq_cst);
        atomic_store_explicit(&p->in_scope, 1, memory_order_relaxed);
    }
    push_scope(p, GFL_EV_SCOPE_BEGIN, 0, f->begin_ts, f, depth);
    gpufl__scope_hook_call(1, f->id, id);
    return f->id;
}

GPUFL_API gpufl_scope gpufl_scope_begin(const char *name) { return begin_named(name, NULL); }

GPUFL_API gpufl_scope gpufl_scope_begin_cached(const char *name, uint32_t *name_cache)
{
    return begin_named(name, name_cache);
}

/*
 * The end time of a scope that leaves the thread outside every scope is
 * read after in_scope is cleared. With the sampler's membarrier() (see
 * sampler.c) that makes "every sample lies inside a window" exact: a sample
 * kept because in_scope still read 1 was taken before this clock read.
 */
static uint64_t end_time(gpufl__producer *p, uint32_t level)
{
    if (level == 0) {
        atomic_store_explicit(&p->in_scope, 0, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst); /* keep the store before the clock read */
    }
    return gpufl__now_ns();
}

/* Closes frames [level, depth) of p, innermost first. */
static void close_from(gpufl__producer *p, uint32_t level, uint8_t flags)
{
    uint64_t ts = end_time(p, level);
    for (uint32_t d = p->depth; d-- > level;)
        push_scope(p, GFL_EV_SCOPE_END, d > level ? GFL_F_SCOPE_IMPLICIT : flags, ts, &p->stack[d], d);
    /* the outermost closed is enough: it ends the ones inside it too */
    if (p->depth > level)
        gpufl__scope_hook_call(0, p->stack[level].id, p->stack[level].name);
    p->depth = level;
}

GPUFL_API void gpufl_scope_end(gpufl_scope scope)
{
    gpufl__producer *p = gpufl__tls_producer;
    if (!scope || !p || !gpufl__is_recording())
        return;
    sync_generation(p);
    uint32_t level = p->depth;
    while (level > 0 && p->stack[level - 1].id != scope)
        level--;
    if (level == 0)
        return; /* not open: ended twice, or never began in this session */
    uint32_t name = p->stack[level - 1].name;
    close_from(p, level - 1, 0);
    /* after the end time: a step window's tracing covers the whole step */
    gpufl__trace_step_end_check(name);
}

GPUFL_API void gpufl_monitor(const char *name, void (*fn)(void *arg), void *arg)
{
    gpufl_scope s = gpufl_scope_begin(name);
    if (fn)
        fn(arg);
    gpufl_scope_end(s);
}

/* Thread exit: close whatever the thread left open, as implicit ends. */
void gpufl__scope_thread_exit(gpufl__producer *p)
{
    if (p->depth && p->scope_gen == gpufl__session_generation() && gpufl__is_recording())
        close_from(p, 0, GFL_F_SCOPE_IMPLICIT);
    p->depth = 0;
    atomic_store_explicit(&p->in_scope, 0, memory_order_relaxed);
}
