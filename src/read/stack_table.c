/*
 * Reading `stack` events back (see stack_table.h), from whatever the
 * session holds: the events come from an event source (event_source.h),
 * so NDJSON logs and .gflt traces go through the same code here, and the
 * source deals with torn tails and names the file and line or offset of
 * damage. Ids are dense from 1 (the recorder hands them out in order), so
 * per-id arrays index them directly.
 */
#include "read/stack_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpufl/gpufl.h"
#include "read/event_source.h"

#define MAX_ID (1u << 24)

/* Stack ids as dense slots: CPU stacks count up from 1 and source stacks
 * from GFL_SOURCE_STACK_BASE, so the two ranges are interleaved rather than
 * indexed by id, which would make a session with one source stack need a
 * million slots. */
static uint32_t slot_of(uint32_t id)
{
    return id < GFL_SOURCE_STACK_BASE ? 2 * id : 2 * (id - GFL_SOURCE_STACK_BASE) + 1;
}

typedef struct loader {
    gpufl__stack_table *t;
    const gpufl__string_lookup *strings; /* the source's: module paths */
    const char *what;                    /* the source's path, for messages */
    uint64_t event_no;                   /* events read so far, for messages */
    uint32_t *pos;                       /* id -> index in t->stacks + 1, 0 = not seen */
    uint64_t *uses;                      /* id -> device events referring to it */
    uint32_t id_cap;
    size_t stack_cap;
    char *err;
    size_t err_len;
} loader;

static int grow_ids(loader *l, uint32_t slot)
{
    if (slot < l->id_cap)
        return 0;
    uint32_t cap = l->id_cap ? l->id_cap : 1024;
    while (cap <= slot)
        cap *= 2;
    uint32_t *pos = realloc(l->pos, cap * sizeof *pos);
    if (pos)
        l->pos = pos;
    uint64_t *uses = realloc(l->uses, cap * sizeof *uses);
    if (uses)
        l->uses = uses;
    if (!pos || !uses)
        return GPUFL_ENOMEM;
    memset(l->pos + l->id_cap, 0, (cap - l->id_cap) * sizeof *pos);
    memset(l->uses + l->id_cap, 0, (cap - l->id_cap) * sizeof *uses);
    l->id_cap = cap;
    return 0;
}

static const char *intern_module(gpufl__stack_table *t, const char *path)
{
    for (size_t i = 0; i < t->nmodules; i++)
        if (!strcmp(t->modules[i], path))
            return t->modules[i];
    char **m = realloc(t->modules, (t->nmodules + 1) * sizeof *m);
    if (!m)
        return NULL;
    t->modules = m;
    char *copy = strdup(path);
    if (!copy)
        return NULL;
    t->modules[t->nmodules++] = copy;
    return copy;
}

/* The stack record for id, created with `total` frames (all missing) on
 * first sight. */
static gpufl__stack_rec *stack_for(loader *l, uint32_t id, uint32_t total)
{
    uint32_t slot = slot_of(id);
    if (grow_ids(l, slot) != 0)
        return NULL;
    gpufl__stack_table *t = l->t;
    if (l->pos[slot])
        return &t->stacks[l->pos[slot] - 1];
    if (t->n == l->stack_cap) {
        size_t cap = l->stack_cap ? 2 * l->stack_cap : 64;
        gpufl__stack_rec *s = realloc(t->stacks, cap * sizeof *s);
        if (!s)
            return NULL;
        t->stacks = s;
        l->stack_cap = cap;
    }
    gpufl__stack_rec *s = &t->stacks[t->n];
    memset(s, 0, sizeof *s);
    s->frames = calloc(total ? total : 1, sizeof *s->frames);
    if (!s->frames)
        return NULL;
    s->id = id;
    s->total = total;
    s->missing = total;
    l->pos[slot] = (uint32_t)++t->n;
    return s;
}

static int bad_piece(loader *l, const gfl_stack_payload *p, const char *why)
{
    snprintf(l->err, l->err_len, "%s: event %llu: stack %u %s", l->what, (unsigned long long)l->event_no, p->id, why);
    return GPUFL_ECORRUPT;
}

static int out_of_memory(loader *l)
{
    snprintf(l->err, l->err_len, "%s: out of memory", l->what);
    return GPUFL_ENOMEM;
}

/* One piece of a stack definition: its frames go to their places. */
static int stack_piece(loader *l, const gfl_stack_payload *p, bool source)
{
    if (p->id == 0 || p->id >= MAX_ID)
        return bad_piece(l, p, "has a bad id");
    if (p->count > GFL_STACK_FRAMES_PER_EVENT || (uint32_t)p->first + p->count > p->total)
        return bad_piece(l, p, "has frames past its frame count");
    gpufl__stack_rec *s = stack_for(l, p->id, p->total);
    if (!s)
        return out_of_memory(l);
    if (s->total != p->total)
        return bad_piece(l, p, "disagrees with an earlier piece on the frame count");
    if (p->truncated)
        s->truncated = true;
    if (source)
        s->source = true;
    for (uint32_t i = 0; i < p->count; i++) {
        const gfl_stack_frame *f = &p->frames[i];
        gpufl__stack_frame_rec *r = &s->frames[p->first + i];
        if (f->module) {
            uint32_t len;
            const char *path = gpufl__lookup(l->strings, f->module, &len);
            if (!(r->module = intern_module(l->t, path)))
                return out_of_memory(l);
        } else {
            r->module = NULL;
        }
        r->offset = f->offset;
        r->source = source;
        if (!r->present) {
            r->present = true;
            s->missing--;
        }
    }
    return 0;
}

/* The stack id a device event was made under, 0 = none. */
static uint32_t stack_of(const gfl_event *ev)
{
    switch (ev->h.type) {
    case GFL_EV_KERNEL: return ev->u.kernel.stack_id;
    case GFL_EV_MEMCPY: return ev->u.memcpy.stack_id;
    case GFL_EV_SYNC: return ev->u.sync.stack_id;
    case GFL_EV_MEM_ALLOC:
    case GFL_EV_MEM_FREE: return ev->u.mem.stack_id;
    case GFL_EV_GRAPH_LAUNCH: return ev->u.graph.stack_id;
    default: return 0;
    }
}

static int count_use(loader *l, uint32_t id)
{
    if (!id || id >= MAX_ID)
        return 0;
    uint32_t slot = slot_of(id);
    if (grow_ids(l, slot) != 0)
        return out_of_memory(l);
    l->uses[slot]++;
    return 0;
}

static int load_events(loader *l, gpufl__event_source *src)
{
    const gfl_event *ev;
    int rc;
    while ((rc = gpufl__source_next(src, &ev)) == 1) {
        l->event_no++;
        rc = ev->h.type == GFL_EV_STACK ? stack_piece(l, &ev->u.stack, (ev->h.flags & GFL_F_STACK_SOURCE) != 0)
                                        : count_use(l, stack_of(ev));
        if (rc != 0)
            return rc;
    }
    if (rc < 0)
        snprintf(l->err, l->err_len, "%s", src->err);
    return rc;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const gpufl__stack_rec *)a)->id, y = ((const gpufl__stack_rec *)b)->id;
    return x < y ? -1 : x > y;
}

/* A session's session.json stands for its directory; anything else (a
 * directory, a log, a .gflt file) is opened as it is. */
static void session_path(const char *path, char *out, size_t len)
{
    snprintf(out, len, "%s", path);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    struct stat st;
    if (strcmp(base, "session.json") != 0 || stat(path, &st) != 0 || S_ISDIR(st.st_mode))
        return;
    if (base == path)
        snprintf(out, len, ".");
    else
        out[base - 1 - path] = '\0';
}

int gpufl__stack_table_load(const char *path, gpufl__stack_table *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    char where[4096];
    session_path(path, where, sizeof where);
    gpufl__event_source *src;
    int rc = gpufl__source_open(where, &src, err, err_len);
    if (rc != 0)
        return rc;
    loader l = {.t = out, .strings = &src->strings, .what = src->path, .err = err, .err_len = err_len};
    rc = load_events(&l, src);
    if (rc == 0) {
        for (size_t i = 0; i < out->n; i++)
            out->stacks[i].uses = l.uses[slot_of(out->stacks[i].id)];
        for (uint32_t slot = 0; slot < l.id_cap; slot++)
            if (l.uses[slot] && !l.pos[slot])
                out->unknown_uses += l.uses[slot];
        if (out->n)
            qsort(out->stacks, out->n, sizeof *out->stacks, by_id);
    }
    snprintf(out->read_files, sizeof out->read_files, "%s", src->read_files);
    snprintf(out->read_why, sizeof out->read_why, "%s", src->read_why);
    out->copies = src->copies;
    gpufl__source_close(src);
    free(l.pos);
    free(l.uses);
    if (rc != 0)
        gpufl__stack_table_free(out);
    return rc;
}

void gpufl__stack_table_free(gpufl__stack_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->stacks[i].frames);
    free(t->stacks);
    for (size_t i = 0; i < t->nmodules; i++)
        free(t->modules[i]);
    free(t->modules);
    memset(t, 0, sizeof *t);
}

const gpufl__stack_rec *gpufl__stack_table_find(const gpufl__stack_table *t, uint32_t id)
{
    if (!t) /* a report made without the session's stacks */
        return NULL;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->stacks[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->stacks[lo].id == id ? &t->stacks[lo] : NULL;
}
