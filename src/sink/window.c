/*
 * The flight window (see window.h).
 */
#include "sink/window.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/idmap.h"
#include "core/intern.h"
#include "core/log.h"
#include "format/gflt_format.h"
#include "gpufl/gpufl.h"
#include "sink/gflt_writer.h"
#include "sink/session_sinks.h"

/* Smaller chunks than a file's: the window drops whole chunks, so a chunk
 * is the grain of its time span, and the writer's buffer (128 bytes an
 * event) counts against the limit. */
#define WINDOW_CHUNK_EVENTS 4096
/* zstd's fastest level: the collector compresses every chunk as it fills. */
#define WINDOW_ZSTD_LEVEL 1
#define FLUSH_AGE_NS 1000000000ull /* no event waits longer to become a chunk */
#define DEAD UINT32_MAX - 1        /* an idmap value: the key's event has ended */

/* An event kept aside with the sequence number of the chunk that holds it:
 * once that chunk is dropped, a dump writes the event before the window. */
typedef struct kept {
    gfl_event ev;
    uint64_t seq;
} kept;

typedef struct kept_list {
    kept *v;
    size_t n, cap, dead;
} kept_list;

struct gpufl__window {
    gpufl__gflt_writer w;
    gpufl__session_meta meta;
    bool open;          /* the writer has written its header: chunks from now on are ours */
    uint64_t window_ns; /* 0: bounded by bytes alone */
    uint64_t max_bytes;

    gpufl__window_chunk **strings;
    size_t nstrings, strings_cap;
    uint64_t strings_bytes;

    gpufl__window_chunk **fifo; /* events chunks, a ring, oldest at head */
    size_t head, count, cap;
    uint64_t fifo_bytes, fifo_events;
    uint64_t next_seq;    /* sequence number of the chunk being filled */
    uint64_t dropped_seq; /* chunks below this number are gone */

    /* while a snapshot encodes the events kept aside, their chunks go here */
    bool capturing;
    gpufl__window_chunk **captured;
    size_t ncaptured, captured_cap;

    kept_list defs;                        /* device info, engine, stacks */
    kept_list live;                        /* allocations not freed, scopes not ended */
    gpufl__idmap live_allocs, live_scopes; /* address / scope id -> index in live */

    uint64_t first_pending_ns; /* when the oldest buffered event came */
    uint64_t newest_ns;        /* the latest time seen, events or ticks */
    uint64_t dropped_chunks;
    bool failed; /* out of memory once: said once */
};

/* ---- chunks ------------------------------------------------------------- */

static gpufl__window_chunk *chunk_new(const void *data, size_t n, const gpufl__gflt_index_entry *e)
{
    gpufl__window_chunk *c = malloc(sizeof *c + n);
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->type = e->type;
    c->count = e->count;
    c->min_ts = e->min_ts;
    c->max_ts = e->max_ts;
    c->n = n;
    memcpy(c->data, data, n);
    return c;
}

static gpufl__window_chunk *chunk_ref(gpufl__window_chunk *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

static void chunk_unref(gpufl__window_chunk *c)
{
    if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
        free(c);
}

static int push_ptr(gpufl__window_chunk ***v, size_t *n, size_t *cap, gpufl__window_chunk *c)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        gpufl__window_chunk **p = realloc(*v, ncap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        *v = p;
        *cap = ncap;
    }
    (*v)[(*n)++] = c;
    return 0;
}

static int fifo_push(gpufl__window *win, gpufl__window_chunk *c)
{
    if (win->count == win->cap) {
        size_t ncap = win->cap ? win->cap * 2 : 64;
        gpufl__window_chunk **p = malloc(ncap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        for (size_t i = 0; i < win->count; i++)
            p[i] = win->fifo[(win->head + i) % win->cap];
        free(win->fifo);
        win->fifo = p;
        win->head = 0;
        win->cap = ncap;
    }
    win->fifo[(win->head + win->count) % win->cap] = c;
    win->count++;
    win->fifo_bytes += c->n;
    win->fifo_events += c->count;
    return 0;
}

static gpufl__window_chunk *fifo_at(const gpufl__window *win, size_t i)
{
    return win->fifo[(win->head + i) % win->cap];
}

static void fifo_drop_oldest(gpufl__window *win)
{
    gpufl__window_chunk *c = fifo_at(win, 0);
    win->head = (win->head + 1) % win->cap;
    win->count--;
    win->fifo_bytes -= c->n;
    win->fifo_events -= c->count;
    win->dropped_seq++;
    win->dropped_chunks++;
    chunk_unref(c);
}

/* The writer's output: after its header, every write is one whole chunk,
 * and the writer has indexed it just before (its last index entry). */
static int window_out(void *ctx, const void *data, size_t n, bool final)
{
    (void) final;
    gpufl__window *win = ctx;
    if (!win->open)
        return 0; /* the file header and meta chunk: a dump writes its own */
    gpufl__gflt_writer *w = &win->w;
    if (w->nindex == 0)
        return GPUFL_EIO; /* not a chunk the window keeps */
    gpufl__window_chunk *c = chunk_new(data, n, &w->index[w->nindex - 1]);
    gpufl__gflt_writer_forget_index(w);
    if (!c)
        return GPUFL_ENOMEM;
    int rc;
    if (c->type == GFLT_CHUNK_STRINGS) {
        rc = push_ptr(&win->strings, &win->nstrings, &win->strings_cap, c);
        if (rc == 0)
            win->strings_bytes += n;
    } else if (win->capturing) {
        rc = push_ptr(&win->captured, &win->ncaptured, &win->captured_cap, c);
    } else {
        rc = fifo_push(win, c);
        if (rc == 0)
            win->next_seq++;
    }
    if (rc != 0)
        chunk_unref(c);
    return rc;
}

/* ---- what is kept aside ------------------------------------------------- */

static int keep(kept_list *l, const gfl_event *ev, uint64_t seq, uint32_t *index)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64;
        kept *p = realloc(l->v, ncap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        l->v = p;
        l->cap = ncap;
    }
    if (index)
        *index = (uint32_t)l->n;
    l->v[l->n++] = (kept){*ev, seq};
    return 0;
}

/* Where a kept-aside event is found again: an allocation by its address,
 * a framework block's with bit 0 set (blocks are aligned, and the first
 * block of a segment has the segment's address); a scope by its id; a
 * device's last allocator state by the device, and the last clock pair
 * under a key of its own, among the scopes (scope ids never come near the
 * top of the range). */
static uint64_t live_key(gpufl__window *win, const gfl_event *ev, gpufl__idmap **m)
{
    switch (ev->h.type) {
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE:
        *m = &win->live_allocs;
        return ev->u.mem.address | ((ev->h.flags & GFL_F_MEM_FRAMEWORK) ? 1u : 0u);
    case GFL_EV_ALLOCATOR: *m = &win->live_scopes; return UINT64_MAX - ev->h.device;
    case GFL_EV_CLOCK: *m = &win->live_scopes; return UINT64_MAX - 0x10000; /* past every device */
    default: *m = &win->live_scopes; return ev->u.scope.id;
    }
}

/* Rebuilds the live list without its ended events once they are most of
 * it, so that it holds what is live, not everything that ever was. */
static int compact_live(gpufl__window *win)
{
    kept_list *l = &win->live;
    if (l->dead < 1024 || l->dead * 2 < l->n)
        return 0;
    gpufl__idmap_clear(&win->live_allocs);
    gpufl__idmap_clear(&win->live_scopes);
    size_t out = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].ev.h.type == GFL_EV_NONE)
            continue;
        l->v[out] = l->v[i];
        const gfl_event *ev = &l->v[out].ev;
        gpufl__idmap *m;
        uint64_t key = live_key(win, ev, &m);
        int rc = gpufl__idmap_put(m, key, (uint32_t)out);
        if (rc != 0)
            return rc;
        out++;
    }
    l->n = out;
    l->dead = 0;
    return 0;
}

static void end_live(gpufl__window *win, gpufl__idmap *m, uint64_t key)
{
    uint32_t i;
    if (!gpufl__idmap_get(m, key, &i) || i == DEAD)
        return;
    win->live.v[i].ev.h.type = GFL_EV_NONE;
    win->live.dead++;
    int rc = gpufl__idmap_put(m, key, DEAD); /* the key exists: no growth, cannot fail */
    (void)rc;
}

static int start_live(gpufl__window *win, gpufl__idmap *m, uint64_t key, const gfl_event *ev)
{
    uint32_t i;
    end_live(win, m, key); /* an address reused without its free seen */
    int rc = keep(&win->live, ev, win->next_seq, &i);
    if (rc == 0 && (rc = gpufl__idmap_put(m, key, i)) != 0)
        win->live.n--;
    return rc ? rc : compact_live(win);
}

static int track(gpufl__window *win, const gfl_event *ev)
{
    switch (ev->h.type) {
    case GFL_EV_DEVICE_INFO:
    case GFL_EV_ENGINE:
    case GFL_EV_STACK: return keep(&win->defs, ev, win->next_seq, NULL);
    case GFL_EV_MEM_ALLOC:
        if (ev->h.flags & GFL_F_MEM_FAILED)
            return 0; /* never live */
        /* fall through */
    case GFL_EV_SCOPE_BEGIN:
    case GFL_EV_CLOCK:       /* a dump maps to wall time however old its window */
    case GFL_EV_ALLOCATOR: { /* the latest state replaces the one kept */
        gpufl__idmap *m;
        uint64_t key = live_key(win, ev, &m);
        return start_live(win, m, key, ev);
    }
    case GFL_EV_MEM_FREE:
    case GFL_EV_SCOPE_END: {
        gpufl__idmap *m;
        uint64_t key = live_key(win, ev, &m);
        end_live(win, m, key);
        return 0;
    }
    default: return 0;
    }
}

/* ---- bounds ------------------------------------------------------------- */

static uint64_t kept_bytes(const kept_list *l) { return l->cap * sizeof(kept); }

static uint64_t held_bytes(const gpufl__window *win)
{
    return win->fifo_bytes + win->strings_bytes + kept_bytes(&win->defs) + kept_bytes(&win->live) +
           (uint64_t)win->w.chunk_events * sizeof(gfl_event) + win->w.raw.cap + win->w.chunk.cap +
           (win->live_allocs.mask + win->live_scopes.mask) * (sizeof(uint64_t) + sizeof(uint32_t));
}

/* Drops the oldest chunks while they are older than the window's span or
 * it is over its bytes; for the bytes, the newest chunk stays whatever its
 * size. */
static void trim(gpufl__window *win)
{
    while (win->count > 0) {
        const gpufl__window_chunk *c = fifo_at(win, 0);
        bool too_old = win->window_ns && c->max_ts + win->window_ns < win->newest_ns;
        bool too_big = win->count > 1 && held_bytes(win) > win->max_bytes;
        if (!too_old && !too_big)
            break;
        fifo_drop_oldest(win);
    }
}

/* The writer stops for good after a failed write, as a file's should; the
 * window's output fails only for lack of memory, and then loses that chunk
 * alone: the writer goes on with the next one. */
static void writer_resume(gpufl__window *win) { win->w.stopped = false; }

static void note_failure(gpufl__window *win)
{
    if (!win->failed)
        gpufl__log(GFL_LOG_WARN, "the flight window ran out of memory: it keeps what it had, events go on to the logs");
    win->failed = true;
}

/* ---- the sink ----------------------------------------------------------- */

static int sink_event(void *self, const gfl_event *ev, uint64_t now_ns)
{
    gpufl__window *win = self;
    if (gpufl__gflt_writer_pending(&win->w) == 0)
        win->first_pending_ns = now_ns;
    if (ev->h.ts > win->newest_ns)
        win->newest_ns = ev->h.ts;
    uint64_t before = win->count;
    if (track(win, ev) != 0)
        note_failure(win);
    int rc = gpufl__gflt_writer_add(&win->w, ev);
    if (rc == GPUFL_EIO) { /* a chunk could not be kept (memory) */
        note_failure(win);
        writer_resume(win);
    }
    if (win->count != before)
        trim(win);
    return 0;
}

static void sink_tick(void *self, uint64_t now_ns)
{
    gpufl__window *win = self;
    if (now_ns > win->newest_ns)
        win->newest_ns = now_ns;
    if (gpufl__gflt_writer_pending(&win->w) && now_ns - win->first_pending_ns >= FLUSH_AGE_NS) {
        if (gpufl__gflt_writer_flush(&win->w) != 0) {
            note_failure(win);
            writer_resume(win);
        }
    }
    trim(win);
}

static void sink_status(void *self, gpufl__sink_status *out)
{
    (void)self;
    memset(out, 0, sizeof *out); /* nothing on disk, nothing lost: what leaves the window was kept */
}

static void sink_close(void *self, const gpufl__session_end *end)
{
    (void)end;
    gpufl__window *win = self;
    gpufl__gflt_writer_forget_index(&win->w);
    win->open = false;
    /* nothing to write: the writer's closing chunks go nowhere */
    win->w.stopped = true;
    (void)gpufl__gflt_writer_close(&win->w, NULL);
    for (size_t i = 0; i < win->nstrings; i++)
        chunk_unref(win->strings[i]);
    while (win->count)
        fifo_drop_oldest(win);
    free(win->strings);
    free(win->fifo);
    free(win->captured);
    free(win->defs.v);
    free(win->live.v);
    gpufl__idmap_free(&win->live_allocs);
    gpufl__idmap_free(&win->live_scopes);
    free(win);
}

int gpufl__window_open(gpufl__sink *out, gpufl__window **winp, const gpufl__session_info *info, char *err,
                       size_t err_len)
{
    gpufl__window *win = calloc(1, sizeof *win);
    if (!win) {
        snprintf(err, err_len, "out of memory creating the flight window");
        return GPUFL_ENOMEM;
    }
    const gpufl_options *o = &info->config->o;
    win->window_ns = (uint64_t)o->flight_window_s * 1000000000ull;
    win->max_bytes = o->flight_window_bytes;
    gpufl__session_meta_of(info, &win->meta);
    gpufl__gflt_out go = {window_out, win};
    int rc =
        gpufl__gflt_writer_open(&win->w, go, &gpufl__intern_lookup, &win->meta, WINDOW_CHUNK_EVENTS, WINDOW_ZSTD_LEVEL);
    if (rc != 0) {
        snprintf(err, err_len, "out of memory creating the flight window");
        free(win);
        return rc;
    }
    win->open = true;
    *winp = win;
    *out = (gpufl__sink){"window", win, sink_event, sink_tick, sink_status, sink_close, NULL};
    return 0;
}

/* ---- snapshots ---------------------------------------------------------- */

/* Encodes the events kept aside whose chunks were dropped into captured
 * chunks: the definitions first, then what is live. */
static int capture_kept(gpufl__window *win)
{
    win->capturing = true;
    int rc = 0;
    const kept_list *lists[] = {&win->defs, &win->live};
    for (size_t k = 0; k < 2 && rc == 0; k++)
        for (size_t i = 0; i < lists[k]->n && rc == 0; i++) {
            const kept *e = &lists[k]->v[i];
            if (e->ev.h.type != GFL_EV_NONE && e->seq < win->dropped_seq)
                rc = gpufl__gflt_writer_add(&win->w, &e->ev);
        }
    if (rc == 0)
        rc = gpufl__gflt_writer_flush(&win->w);
    win->capturing = false;
    writer_resume(win);
    return rc ? GPUFL_ENOMEM : 0;
}

int gpufl__window_snapshot_take(gpufl__window *win, gpufl__window_snapshot *out)
{
    memset(out, 0, sizeof *out);
    win->ncaptured = 0;
    uint64_t now = gpufl__now_ns();
    if (now > win->newest_ns)
        win->newest_ns = now;
    if (gpufl__gflt_writer_flush(&win->w) != 0) {
        writer_resume(win);
        return GPUFL_ENOMEM;
    }
    trim(win);
    if (capture_kept(win) != 0) { /* which has resumed the writer */
        for (size_t i = 0; i < win->ncaptured; i++)
            chunk_unref(win->captured[i]);
        return GPUFL_ENOMEM;
    }
    size_t n = win->nstrings + win->ncaptured + win->count;
    out->chunks = malloc((n ? n : 1) * sizeof *out->chunks);
    if (!out->chunks) {
        for (size_t i = 0; i < win->ncaptured; i++)
            chunk_unref(win->captured[i]);
        return GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < win->nstrings; i++)
        out->chunks[out->n++] = chunk_ref(win->strings[i]);
    for (size_t i = 0; i < win->ncaptured; i++)
        out->chunks[out->n++] = win->captured[i]; /* the window keeps no reference */
    for (size_t i = 0; i < win->count; i++)
        out->chunks[out->n++] = chunk_ref(fifo_at(win, i));
    size_t first_window_chunk = out->n - win->count;
    for (size_t i = 0; i < out->n; i++) {
        const gpufl__window_chunk *c = out->chunks[i];
        out->bytes += c->n;
        if (c->type != GFLT_CHUNK_EVENTS)
            continue;
        out->events += c->count;
        if (i < first_window_chunk)
            continue; /* kept from before the window: not its span */
        if (!out->from_ns || c->min_ts < out->from_ns)
            out->from_ns = c->min_ts;
        if (c->max_ts > out->to_ns)
            out->to_ns = c->max_ts;
    }
    win->ncaptured = 0;
    return 0;
}

void gpufl__window_snapshot_free(gpufl__window_snapshot *s)
{
    for (size_t i = 0; i < s->n; i++)
        chunk_unref(s->chunks[i]);
    free(s->chunks);
    memset(s, 0, sizeof *s);
}

void gpufl__window_stats_of(const gpufl__window *win, gpufl__window_stats *out)
{
    memset(out, 0, sizeof *out);
    out->bytes = held_bytes(win);
    out->chunk_bytes = win->fifo_bytes;
    out->chunks = win->count;
    out->events = win->fifo_events;
    out->dropped_chunks = win->dropped_chunks;
    if (win->count) {
        out->from_ns = fifo_at(win, 0)->min_ts;
        for (size_t i = 0; i < win->count; i++)
            if (fifo_at(win, i)->max_ts > out->to_ns)
                out->to_ns = fifo_at(win, i)->max_ts;
    }
}
