/*
 * The shared timeline of the Perfetto and Chrome JSON exports (see
 * export_timeline.h for the layout and the nesting rule).
 *
 * Built for sessions of tens of millions of events: rows are assigned to
 * tracks with a hash lookup each (cached for runs of one stream or thread)
 * and bucketed by a counting sort; each track is then sorted on its own by
 * a natural merge sort, which is linear on what the reader already sorted
 * (a stream's kernels, copies and memsets are three sorted runs) and
 * n log n only on what arrives out of order (a thread's launch calls
 * across streams). Single-threaded.
 */
#include "present/export/export_timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/idmap.h"

/* Item kinds in a ref's top byte: GPUFL__XS_KERNEL..NVTX, then the
 * launching calls of kernels, copies and memsets. */
#define API_OF(src) (8u + (src))
#define REF(kind, row) ((uint64_t)(kind) << 56 | (uint64_t)(row))
#define REF_KIND(ref) ((unsigned)((ref) >> 56))
#define REF_ROW(ref) ((size_t)((ref) & ((1ull << 56) - 1)))

/* ---- the maps from a thread, device or stream key to its track --------------- */

static uint32_t map_get(const gpufl__idmap *m, uint64_t key)
{
    uint32_t v;
    return gpufl__idmap_get(m, key, &v) ? v : GPUFL__TL_NONE;
}

/* Adds key (value 0) when new. 0 or GPUFL_ENOMEM. */
static int map_add(gpufl__idmap *m, uint64_t key)
{
    uint32_t v;
    return gpufl__idmap_get(m, key, &v) ? 0 : gpufl__idmap_put(m, key, 0);
}

/* The keys of m, sorted (malloc'd; NULL when empty or out of memory). */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t *map_sorted_keys(const gpufl__idmap *m)
{
    if (!m->n)
        return NULL;
    uint64_t *k = malloc(m->n * sizeof *k);
    size_t n = 0;
    for (size_t i = 0; k && i <= m->mask; i++)
        if (m->vals[i]) /* idmap.h: 0 marks an empty slot */
            k[n++] = m->keys[i];
    if (k)
        qsort(k, n, sizeof *k, cmp_u64);
    return k;
}

/* ---- counters --------------------------------------------------------------- */

enum { C_GPU_UTIL, C_MEM_USED, C_POWER, C_TEMP, C_SM_CLOCK, C_PROC_CPU, C_SYS_CPU, C_RSS };

typedef struct counter_def {
    const char *name;
    uint32_t bit;
    uint8_t bytes;
    uint8_t field;
} counter_def;

static const counter_def dev_counters[] = {
    {"utilization (%)", GPUFL__XD_GPU_UTIL, 0, C_GPU_UTIL},
    {"memory used (bytes)", GPUFL__XD_MEMORY, 1, C_MEM_USED},
    {"power (W)", GPUFL__XD_POWER, 0, C_POWER},
    {"temperature (C)", GPUFL__XD_TEMP, 0, C_TEMP},
    {"SM clock (MHz)", GPUFL__XD_CLOCKS, 0, C_SM_CLOCK},
};
#define NDEV_COUNTERS (sizeof dev_counters / sizeof dev_counters[0])

static const counter_def host_counters[] = {
    {"host CPU, process (%)", GPUFL__XH_PROC_CPU, 0, C_PROC_CPU},
    {"host CPU, machine (%)", GPUFL__XH_SYS_CPU, 0, C_SYS_CPU},
    {"host RSS (bytes)", GPUFL__XH_RSS, 1, C_RSS},
};
#define NHOST_COUNTERS (sizeof host_counters / sizeof host_counters[0])

/* ---- the run ---------------------------------------------------------------- */

typedef struct item {
    uint64_t start, ref;
} item;

typedef struct open_slice {
    uint64_t start, end, ref;
} open_slice;

typedef struct lane {
    uint32_t track;
    open_slice *stack;
    size_t n, cap;
} lane;

typedef struct counter_track {
    uint32_t track;
    uint32_t device; /* GPUFL__TL_NONE: host */
    const counter_def *def;
} counter_track;

typedef struct tl {
    const gpufl__xtrace *x;
    const gpufl__tl_sink *sink;
    gpufl__tl_stats *st;
    gpufl__tl_track *tracks;
    size_t ntracks, cap;
    uint64_t flow_base[3];
    gpufl__idmap threads, streams, syncs, devices; /* key -> track id */
    counter_track *counters;
    size_t ncounters;
    /* buckets: refs of track t at refs[off[t] .. off[t + 1]) */
    size_t *off;
    uint64_t *refs;
    /* lookup caches */
    uint64_t last_key;
    uint32_t last_track;
    const gpufl__idmap *last_map;
    /* per-track scratch */
    item *items, *tmp;
    size_t items_cap;
    lane *lanes;
    size_t nlanes, lanes_cap;
    uint64_t *flows;
    size_t flows_cap;
} tl;

uint64_t gpufl__tl_flow_id(const gpufl__xtrace *x, unsigned src, size_t row)
{
    uint64_t base = 0;
    if (src >= GPUFL__XS_COPY)
        base += x->kernels->n;
    if (src >= GPUFL__XS_MEMSET)
        base += x->copies->n;
    return base + row + 1;
}

/* ---- names ----------------------------------------------------------------- */

enum {
    N_KERNEL,
    N_UNNAMED,
    N_MEMSET,
    N_MEMSET_CALL,
    N_GRAPH_LAUNCH,
    N_LAUNCH,
    N_COPY,
    N_COPY_CALL = N_COPY + 6,
    N_SYNC = N_COPY_CALL + 6,
    N_COUNT = N_SYNC + 5
};

static const char *const fixed_names[N_COUNT] = {
    [N_KERNEL] = "kernel",
    [N_UNNAMED] = "(unnamed)",
    [N_MEMSET] = "memset",
    [N_MEMSET_CALL] = "memset (call)",
    [N_GRAPH_LAUNCH] = "graph launch",
    [N_LAUNCH] = "launch",
    [N_COPY] = "memcpy",
    "memcpy HtoD",
    "memcpy DtoH",
    "memcpy DtoD",
    "memcpy HtoH",
    "memcpy PtoP",
    [N_COPY_CALL] = "memcpy (call)",
    "memcpy HtoD (call)",
    "memcpy DtoH (call)",
    "memcpy DtoD (call)",
    "memcpy HtoH (call)",
    "memcpy PtoP (call)",
    [N_SYNC] = "sync",
    "sync event",
    "sync stream_wait_event",
    "sync stream",
    "sync context",
};

const char *gpufl__xname_fixed(uint32_t fixed) { return fixed < N_COUNT ? fixed_names[fixed] : ""; }

uint32_t gpufl__xname_fixed_count(void) { return N_COUNT; }

void gpufl__xname_of(const gpufl__xtrace *x, const gpufl__tl_slice *s, gpufl__xname *n)
{
    n->fixed = GPUFL__XNAME_STRING;
    n->string = 0;
    n->launch = 0;
    unsigned src = s->src == GPUFL__XS_API ? s->op_src : s->src;
    int call = s->src == GPUFL__XS_API;
    switch (src) {
    case GPUFL__XS_KERNEL:
        if (call && s->op->graph_id) {
            n->fixed = N_GRAPH_LAUNCH;
        } else if (s->op->name) {
            n->string = s->op->name;
            n->launch = (uint8_t)call;
        } else {
            n->fixed = call ? N_LAUNCH : N_KERNEL;
        }
        return;
    case GPUFL__XS_COPY: n->fixed = (call ? N_COPY_CALL : N_COPY) + (s->op->kind < 6 ? s->op->kind : 0); return;
    case GPUFL__XS_MEMSET: n->fixed = call ? N_MEMSET_CALL : N_MEMSET; return;
    case GPUFL__XS_SYNC: n->fixed = N_SYNC + (s->op->kind < 5 ? s->op->kind : 0); return;
    default:
        if (s->range->name && *gpufl__x_str(x, s->range->name))
            n->string = s->range->name;
        else
            n->fixed = N_UNNAMED;
        return;
    }
}

static uint64_t stream_key(uint32_t device, uint32_t stream) { return (uint64_t)device << 32 | stream; }

static int has_call(const gpufl__xop *o) { return o->api_start != 0 && o->tid != 0; }

/* An end before the start (damaged input) makes a zero-length slice. A
 * scope or range that never ended comes with the trace's end for it, the
 * session's last recorded time. */
static uint64_t clip(uint64_t start, uint64_t end) { return end < start ? start : end; }

/* Pass 1: which threads, devices and streams there are. */
static int collect(tl *t)
{
    const gpufl__xtrace *x = t->x;
    int rc = 0;
    for (uint32_t d = 0; d < x->info->ndevices && !rc; d++)
        rc = map_add(&t->devices, x->info->devices[d].index);
    for (unsigned src = GPUFL__XS_KERNEL; src <= GPUFL__XS_SYNC && !rc; src++) {
        size_t n = gpufl__x_rows(x, src);
        uint64_t last = UINT64_MAX;
        uint32_t last_tid = 0;
        gpufl__idmap *m = src == GPUFL__XS_SYNC ? &t->syncs : &t->streams;
        for (size_t i = 0; i < n && !rc; i++) {
            uint32_t device, stream;
            gpufl__x_op_where(x, src, i, &device, &stream);
            uint64_t key = stream_key(device, stream);
            if (key != last) {
                rc = map_add(m, key);
                if (!rc)
                    rc = map_add(&t->devices, device);
                last = key;
            }
            uint64_t api_start, api_end;
            uint32_t tid;
            if (gpufl__x_op_call(x, src, i, &api_start, &api_end, &tid)) {
                if (tid != last_tid && !rc) {
                    rc = map_add(&t->threads, tid);
                    last_tid = tid;
                }
            }
        }
    }
    for (unsigned src = GPUFL__XS_SCOPE; src <= GPUFL__XS_NVTX && !rc; src++) {
        size_t n = gpufl__x_rows(x, src);
        uint32_t last_tid = UINT32_MAX;
        for (size_t i = 0; i < n && !rc; i++) {
            gpufl__xrange r;
            gpufl__x_range(x, src, i, &r);
            if (r.tid != last_tid) {
                rc = map_add(&t->threads, r.tid);
                last_tid = r.tid;
            }
        }
    }
    for (size_t i = 0; i < gpufl__x_dev_rows(x) && !rc; i++) {
        gpufl__xdev_sample s;
        gpufl__x_dev(x, i, &s);
        rc = map_add(&t->devices, s.device);
    }
    return rc;
}

static gpufl__tl_track *add_track(tl *t, uint8_t kind, uint32_t parent)
{
    if (t->ntracks == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        gpufl__tl_track *p = realloc(t->tracks, cap * sizeof *p);
        if (!p)
            return NULL;
        t->tracks = p;
        t->cap = cap;
    }
    gpufl__tl_track *tr = &t->tracks[t->ntracks];
    memset(tr, 0, sizeof *tr);
    tr->id = (uint32_t)t->ntracks++;
    tr->parent = parent;
    tr->kind = kind;
    tr->device = tr->stream = GPUFL__TL_NONE;
    tr->of = GPUFL__TL_NONE;
    tr->lane = 1;
    return tr;
}

static const char *device_name(const gpufl__xtrace *x, uint32_t device)
{
    for (uint32_t d = 0; d < x->info->ndevices; d++)
        if (x->info->devices[d].index == device)
            return gpufl__x_str(x, x->info->devices[d].name);
    return "";
}

static int add_counter(tl *t, uint32_t parent, uint32_t device, const counter_def *def)
{
    gpufl__tl_track *tr = add_track(t, GPUFL__TL_COUNTER, parent);
    counter_track *c = realloc(t->counters, (t->ncounters + 1) * sizeof *c);
    if (!tr || !c) {
        if (c)
            t->counters = c;
        return GPUFL_ENOMEM;
    }
    t->counters = c;
    tr->device = device;
    tr->bytes = def->bytes;
    if (device == GPUFL__TL_NONE)
        snprintf(tr->name, sizeof tr->name, "%s", def->name);
    else
        snprintf(tr->name, sizeof tr->name, "GPU %u %s", device, def->name);
    t->counters[t->ncounters++] = (counter_track){tr->id, device, def};
    return 0;
}

/* Which counters the samples have: per device a mask of dev_counters
 * indexes, for the host one of host_counters. */
static uint32_t host_counter_mask(const gpufl__xtrace *x)
{
    uint32_t mask = 0;
    for (size_t i = 0; i < gpufl__x_host_rows(x); i++) {
        gpufl__xhost_sample s;
        gpufl__x_host(x, i, &s);
        for (size_t c = 0; c < NHOST_COUNTERS; c++)
            if (s.valid & host_counters[c].bit)
                mask |= 1u << c;
    }
    return mask;
}

/* The tracks of device dev's streams (kind GPUFL__TL_STREAM: kernels,
 * copies, memsets) or of their syncs (GPUFL__TL_SYNCS), under parent: one
 * per key keys[*next..] on dev (keys: m's, sorted, so by device), each
 * recorded in m as the key's track. 0 or GPUFL_ENOMEM. */
static int add_stream_tracks(tl *t, uint8_t kind, uint32_t dev, uint32_t parent, gpufl__idmap *m, const uint64_t *keys,
                             size_t *next)
{
    for (; *next < m->n && keys[*next] >> 32 == dev; (*next)++) {
        gpufl__tl_track *st = add_track(t, kind, parent);
        if (!st)
            return GPUFL_ENOMEM;
        st->device = dev;
        st->stream = (uint32_t)keys[*next];
        snprintf(st->name, sizeof st->name, "GPU %u stream %u%s", dev, st->stream,
                 kind == GPUFL__TL_SYNCS ? " syncs" : "");
        if (gpufl__idmap_put(m, keys[*next], st->id) != 0)
            return GPUFL_ENOMEM;
    }
    return 0;
}

/* The tracks, in their order (see export_timeline.h). */
static int make_tracks(tl *t)
{
    const gpufl__xtrace *x = t->x;
    gpufl__tl_track *proc = add_track(t, GPUFL__TL_PROCESS, GPUFL__TL_NONE);
    if (!proc)
        return GPUFL_ENOMEM;
    const char *app = gpufl__x_str(x, x->info->app_name);
    snprintf(proc->name, sizeof proc->name, "%s", *app ? app : "gpufl session");

    uint64_t *tids = map_sorted_keys(&t->threads);
    if (t->threads.n && !tids)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < t->threads.n; i++) {
        gpufl__tl_track *tr = add_track(t, GPUFL__TL_THREAD, 0);
        if (!tr) {
            free(tids);
            return GPUFL_ENOMEM;
        }
        tr->tid = (uint32_t)tids[i];
        snprintf(tr->name, sizeof tr->name, "thread %u", tr->tid);
        if (gpufl__idmap_put(&t->threads, tids[i], tr->id) != 0) {
            free(tids);
            return GPUFL_ENOMEM;
        }
    }
    free(tids);

    /* counters each device's samples have */
    uint32_t *dev_mask = calloc(65536, sizeof *dev_mask);
    if (!dev_mask)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < gpufl__x_dev_rows(x); i++) {
        gpufl__xdev_sample s;
        gpufl__x_dev(x, i, &s);
        for (size_t c = 0; c < NDEV_COUNTERS; c++)
            if (s.valid & dev_counters[c].bit)
                dev_mask[s.device & 0xffff] |= 1u << c;
    }

    uint64_t *devs = map_sorted_keys(&t->devices);
    uint64_t *streams = map_sorted_keys(&t->streams), *syncs = map_sorted_keys(&t->syncs);
    int rc = (t->devices.n && !devs) || (t->streams.n && !streams) || (t->syncs.n && !syncs) ? GPUFL_ENOMEM : 0;
    size_t si = 0, yi = 0;
    for (size_t d = 0; d < t->devices.n && !rc; d++) {
        uint32_t dev = (uint32_t)devs[d];
        gpufl__tl_track *dt = add_track(t, GPUFL__TL_DEVICE, 0);
        if (!dt) {
            rc = GPUFL_ENOMEM;
            break;
        }
        dt->device = dev;
        const char *dn = device_name(x, dev);
        if (*dn)
            snprintf(dt->name, sizeof dt->name, "GPU %u (%s)", dev, dn);
        else
            snprintf(dt->name, sizeof dt->name, "GPU %u", dev);
        uint32_t parent = dt->id;
        rc = add_stream_tracks(t, GPUFL__TL_STREAM, dev, parent, &t->streams, streams, &si);
        if (!rc)
            rc = add_stream_tracks(t, GPUFL__TL_SYNCS, dev, parent, &t->syncs, syncs, &yi);
        for (size_t c = 0; c < NDEV_COUNTERS && !rc; c++)
            if (dev_mask[dev & 0xffff] & (1u << c))
                rc = add_counter(t, parent, dev, &dev_counters[c]);
    }
    uint32_t hmask = host_counter_mask(x);
    for (size_t c = 0; c < NHOST_COUNTERS && !rc; c++)
        if (hmask & (1u << c))
            rc = add_counter(t, 0, GPUFL__TL_NONE, &host_counters[c]);
    free(devs);
    free(streams);
    free(syncs);
    free(dev_mask);
    return rc;
}

/* The track of item kind/row, GPUFL__TL_NONE for none (a call without a
 * thread). Caches the last lookup: rows of one stream or thread come in
 * runs. */
static uint32_t lookup(tl *t, const gpufl__idmap *m, uint64_t key)
{
    if (m == t->last_map && key == t->last_key)
        return t->last_track;
    t->last_map = m;
    t->last_key = key;
    return t->last_track = map_get(m, key);
}

static uint32_t item_track(tl *t, unsigned kind, size_t row)
{
    const gpufl__xtrace *x = t->x;
    if (kind == GPUFL__XS_SCOPE || kind == GPUFL__XS_NVTX)
        return lookup(t, &t->threads, gpufl__x_range_tid(x, kind, row));
    if (kind >= 8) {
        uint64_t api_start, api_end;
        uint32_t tid;
        if (!gpufl__x_op_call(x, kind - 8, row, &api_start, &api_end, &tid))
            return GPUFL__TL_NONE;
        return lookup(t, &t->threads, tid);
    }
    uint32_t device, stream;
    gpufl__x_op_where(x, kind, row, &device, &stream);
    return lookup(t, kind == GPUFL__XS_SYNC ? &t->syncs : &t->streams, stream_key(device, stream));
}

/* Every item kind with its table. */
static const unsigned item_kinds[] = {GPUFL__XS_KERNEL,         GPUFL__XS_COPY,         GPUFL__XS_MEMSET,
                                      GPUFL__XS_SYNC,           GPUFL__XS_SCOPE,        GPUFL__XS_NVTX,
                                      API_OF(GPUFL__XS_KERNEL), API_OF(GPUFL__XS_COPY), API_OF(GPUFL__XS_MEMSET)};
#define NITEM_KINDS (sizeof item_kinds / sizeof item_kinds[0])

/* Pass 2: the items of each track, in table order, bucketed by a counting
 * sort. */
static int bucket(tl *t)
{
    size_t total = 0;
    t->off = calloc(t->ntracks + 1, sizeof *t->off);
    if (!t->off)
        return GPUFL_ENOMEM;
    for (size_t k = 0; k < NITEM_KINDS; k++) {
        unsigned kind = item_kinds[k];
        size_t n = gpufl__x_rows(t->x, kind >= 8 ? kind - 8 : kind);
        for (size_t i = 0; i < n; i++) {
            uint32_t tr = item_track(t, kind, i);
            if (tr != GPUFL__TL_NONE) {
                t->off[tr + 1]++;
                total++;
            }
        }
    }
    for (size_t i = 1; i <= t->ntracks; i++)
        t->off[i] += t->off[i - 1];
    t->refs = malloc((total ? total : 1) * sizeof *t->refs);
    size_t *fill = malloc((t->ntracks ? t->ntracks : 1) * sizeof *fill);
    if (!t->refs || !fill) {
        free(fill);
        return GPUFL_ENOMEM;
    }
    memcpy(fill, t->off, t->ntracks * sizeof *fill);
    for (size_t k = 0; k < NITEM_KINDS; k++) {
        unsigned kind = item_kinds[k];
        size_t n = gpufl__x_rows(t->x, kind >= 8 ? kind - 8 : kind);
        for (size_t i = 0; i < n; i++) {
            uint32_t tr = item_track(t, kind, i);
            if (tr != GPUFL__TL_NONE)
                t->refs[fill[tr]++] = REF(kind, i);
        }
    }
    free(fill);
    return 0;
}

/* Start and (clipped) end of an item. */
static uint64_t item_start(tl *t, uint64_t ref)
{
    unsigned kind = REF_KIND(ref);
    size_t row = REF_ROW(ref);
    if (kind == GPUFL__XS_SCOPE || kind == GPUFL__XS_NVTX)
        return gpufl__x_range_start(t->x, kind, row);
    if (kind < 8)
        return gpufl__x_op_start(t->x, kind, row);
    uint64_t api_start = 0, api_end;
    uint32_t tid;
    gpufl__x_op_call(t->x, kind - 8, row, &api_start, &api_end, &tid);
    return api_start;
}

static uint64_t call_end(uint64_t api_start, uint64_t api_end)
{
    return api_end > api_start ? api_end : api_start; /* calls return */
}

static uint64_t item_end(tl *t, uint64_t ref)
{
    unsigned kind = REF_KIND(ref);
    size_t row = REF_ROW(ref);
    if (kind == GPUFL__XS_SCOPE || kind == GPUFL__XS_NVTX) {
        gpufl__xrange r;
        gpufl__x_range(t->x, kind, row, &r);
        return r.instant ? r.start : clip(r.start, r.end);
    }
    if (kind < 8)
        return clip(gpufl__x_op_start(t->x, kind, row), gpufl__x_op_end(t->x, kind, row));
    uint64_t api_start = 0, api_end = 0;
    uint32_t tid;
    gpufl__x_op_call(t->x, kind - 8, row, &api_start, &api_end, &tid);
    return call_end(api_start, api_end);
}

/* a goes strictly before b: earlier start, or the same start and a later end */
static int before(tl *t, const item *a, const item *b)
{
    if (a->start != b->start)
        return a->start < b->start;
    return item_end(t, a->ref) > item_end(t, b->ref);
}

static size_t run_end(tl *t, const item *a, size_t i, size_t n)
{
    while (i + 1 < n && !before(t, &a[i + 1], &a[i]))
        i++;
    return i + 1;
}

/* Stable natural merge sort of a[0..n) with tmp of the same size; returns
 * whichever of the two holds the result. */
static item *sort_items(tl *t, item *a, item *tmp, size_t n)
{
    if (run_end(t, a, 0, n) >= n)
        return a;
    for (;;) {
        size_t runs = 0, i = 0;
        while (i < n) {
            size_t m = run_end(t, a, i, n);
            size_t e = m < n ? run_end(t, a, m, n) : n;
            size_t l = i, r = m, o = i;
            while (l < m && r < e)
                tmp[o++] = before(t, &a[r], &a[l]) ? a[r++] : a[l++];
            while (l < m)
                tmp[o++] = a[l++];
            while (r < e)
                tmp[o++] = a[r++];
            i = e;
            runs++;
        }
        item *s = a;
        a = tmp;
        tmp = s;
        if (runs <= 1)
            return a;
    }
}

static void slice_of(const open_slice *o, gpufl__tl_slice *s)
{
    memset(s, 0, sizeof *s);
    unsigned kind = REF_KIND(o->ref);
    s->start = o->start;
    s->end = o->end;
    s->src = kind >= 8 ? GPUFL__XS_API : (uint8_t)kind;
    s->op_src = kind >= 8 ? (uint8_t)(kind - 8) : 0;
    s->row = REF_ROW(o->ref);
}

/* Ends every open slice that ended by ts, innermost first. */
static int drain(tl *t, uint64_t ts)
{
    for (size_t l = 0; l < t->nlanes; l++) {
        lane *ln = &t->lanes[l];
        while (ln->n && ln->stack[ln->n - 1].end <= ts) {
            gpufl__tl_slice s;
            slice_of(&ln->stack[--ln->n], &s);
            int rc = t->sink->end(t->sink->ctx, &t->tracks[ln->track], &s);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* The first lane where a slice ending at `end` nests; a new one when none. */
static int pick_lane(tl *t, uint32_t track, uint64_t end, lane **out)
{
    for (size_t l = 0; l < t->nlanes; l++) {
        lane *ln = &t->lanes[l];
        if (ln->n == 0 || ln->stack[ln->n - 1].end >= end) {
            *out = ln;
            return 0;
        }
    }
    if (t->nlanes == t->lanes_cap) {
        size_t cap = t->lanes_cap ? t->lanes_cap * 2 : 4;
        lane *p = realloc(t->lanes, cap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        t->lanes = p;
        t->lanes_cap = cap;
    }
    lane *ln = &t->lanes[t->nlanes];
    memset(ln, 0, sizeof *ln);
    if (t->nlanes == 0) {
        ln->track = track;
    } else {
        gpufl__tl_track *tr = add_track(t, GPUFL__TL_LANE, track);
        if (!tr)
            return GPUFL_ENOMEM;
        const gpufl__tl_track *of = &t->tracks[track];
        tr->tid = of->tid;
        tr->device = of->device;
        tr->stream = of->stream;
        tr->of = track;
        tr->of_kind = of->kind;
        tr->lane = (uint32_t)t->nlanes + 1;
        snprintf(tr->name, sizeof tr->name, "%s #%u", of->name, tr->lane);
        ln->track = tr->id;
        t->st->lanes++;
        int rc = t->sink->track(t->sink->ctx, tr);
        if (rc)
            return rc;
    }
    t->nlanes++;
    *out = ln;
    return 0;
}

static int push(lane *ln, uint64_t start, uint64_t end, uint64_t ref)
{
    if (ln->n == ln->cap) {
        size_t cap = ln->cap ? ln->cap * 2 : 16;
        open_slice *p = realloc(ln->stack, cap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        ln->stack = p;
        ln->cap = cap;
    }
    ln->stack[ln->n++] = (open_slice){start, end, ref};
    return 0;
}

static int add_flow(tl *t, size_t n, uint64_t id)
{
    if (n == t->flows_cap) {
        size_t cap = t->flows_cap ? t->flows_cap * 2 : 16;
        uint64_t *p = realloc(t->flows, cap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        t->flows = p;
        t->flows_cap = cap;
    }
    t->flows[n] = id;
    return 0;
}

/* Emits item a[*i] (and, for a graph launch, the calls that share its
 * slice, advancing *i past them). */
static int emit_item(tl *t, uint32_t track, const item *a, size_t n, size_t *i)
{
    const gpufl__xtrace *x = t->x;
    uint64_t ref = a[*i].ref;
    unsigned kind = REF_KIND(ref);
    size_t row = REF_ROW(ref);
    gpufl__tl_slice s;
    memset(&s, 0, sizeof s);
    gpufl__xop op;
    gpufl__xrange range;
    s.row = row;
    s.start = a[*i].start;
    if (kind == GPUFL__XS_SCOPE || kind == GPUFL__XS_NVTX) {
        gpufl__x_range(x, kind, row, &range);
        s.src = (uint8_t)kind;
        s.range = &range;
        s.instant = range.instant;
        s.end = range.instant ? s.start : clip(range.start, range.end);
        t->st->unended += range.unended;
    } else if (kind < 8) {
        gpufl__x_op(x, kind, row, &op);
        s.src = (uint8_t)kind;
        s.op = &op;
        s.end = clip(op.start, op.end);
        if (kind != GPUFL__XS_SYNC && has_call(&op))
            s.flow = gpufl__tl_flow_id(x, kind, row);
    } else {
        gpufl__x_op(x, kind - 8, row, &op);
        s.src = GPUFL__XS_API;
        s.op_src = (uint8_t)(kind - 8);
        s.op = &op;
        s.end = call_end(op.api_start, op.api_end);
        size_t nf = 0;
        if (add_flow(t, nf++, gpufl__tl_flow_id(x, kind - 8, row)) != 0)
            return GPUFL_ENOMEM;
        /* the kernels of one graph launch: one call, a flow to each */
        while (*i + 1 < n && REF_KIND(a[*i + 1].ref) >= 8 && a[*i + 1].start == s.start) {
            uint64_t r2 = a[*i + 1].ref;
            unsigned src2 = REF_KIND(r2) - 8;
            uint64_t start2 = 0, end2 = 0;
            uint32_t tid2;
            gpufl__x_op_call(x, src2, REF_ROW(r2), &start2, &end2, &tid2);
            if (end2 != op.api_end || gpufl__x_op_correlation(x, src2, REF_ROW(r2)) != op.correlation)
                break;
            if (add_flow(t, nf++, gpufl__tl_flow_id(x, REF_KIND(r2) - 8, REF_ROW(r2))) != 0)
                return GPUFL_ENOMEM;
            ++*i;
        }
        s.flows = t->flows;
        s.nflows = nf;
        t->st->api_calls++;
        t->st->flows += nf;
    }
    int rc = drain(t, s.start);
    if (rc)
        return rc;
    lane *ln;
    if (s.instant) {
        /* instants nest anywhere: always on the track itself */
        if (t->nlanes == 0 && (rc = pick_lane(t, track, s.start, &ln)) != 0)
            return rc;
        ln = &t->lanes[0];
        t->st->instants++;
        return t->sink->begin(t->sink->ctx, &t->tracks[ln->track], &s);
    }
    if ((rc = pick_lane(t, track, s.end, &ln)) != 0)
        return rc;
    if (ln != &t->lanes[0])
        t->st->overlapped++;
    if (push(ln, s.start, s.end, ref) != 0)
        return GPUFL_ENOMEM;
    t->st->slices++;
    return t->sink->begin(t->sink->ctx, &t->tracks[ln->track], &s);
}

static int emit_track(tl *t, uint32_t track)
{
    size_t n = t->off[track + 1] - t->off[track];
    if (n == 0)
        return 0;
    if (n > t->items_cap) {
        free(t->items);
        free(t->tmp);
        t->items = malloc(n * sizeof *t->items);
        t->tmp = malloc(n * sizeof *t->tmp);
        t->items_cap = n;
        if (!t->items || !t->tmp) {
            t->items_cap = 0;
            return GPUFL_ENOMEM;
        }
    }
    const uint64_t *refs = t->refs + t->off[track];
    for (size_t i = 0; i < n; i++)
        t->items[i] = (item){item_start(t, refs[i]), refs[i]};
    item *a = sort_items(t, t->items, t->tmp, n);
    for (size_t l = 0; l < t->nlanes; l++)
        free(t->lanes[l].stack);
    t->nlanes = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = emit_item(t, track, a, n, &i);
    return rc ? rc : drain(t, UINT64_MAX);
}

static double counter_value(const counter_def *def, const gpufl__xdev_sample *d, const gpufl__xhost_sample *h)
{
    switch (def->field) {
    case C_GPU_UTIL: return d->gpu_util_pct;
    case C_MEM_USED: return (double)d->mem_used_bytes;
    case C_POWER: return d->power_mw / 1000.0;
    case C_TEMP: return d->temp_c;
    case C_SM_CLOCK: return d->sm_clock_mhz;
    case C_PROC_CPU: return h->proc_cpu_pct_x100 / 100.0;
    case C_SYS_CPU: return h->sys_cpu_pct_x100 / 100.0;
    default: return (double)h->proc_rss_bytes;
    }
}

static int emit_counters(tl *t)
{
    const gpufl__xtrace *x = t->x;
    for (size_t c = 0; c < t->ncounters; c++) {
        const counter_track *ct = &t->counters[c];
        const gpufl__tl_track *tr = &t->tracks[ct->track];
        if (ct->device != GPUFL__TL_NONE) {
            for (size_t i = 0; i < gpufl__x_dev_rows(x); i++) {
                if (gpufl__x_dev_device(x, i) != ct->device)
                    continue;
                gpufl__xdev_sample s;
                gpufl__x_dev(x, i, &s);
                if (!(s.valid & ct->def->bit))
                    continue;
                t->st->counters++;
                int rc = t->sink->counter(t->sink->ctx, tr, s.ts, counter_value(ct->def, &s, NULL));
                if (rc)
                    return rc;
            }
        } else {
            for (size_t i = 0; i < gpufl__x_host_rows(x); i++) {
                gpufl__xhost_sample s;
                gpufl__x_host(x, i, &s);
                if (!(s.valid & ct->def->bit))
                    continue;
                t->st->counters++;
                int rc = t->sink->counter(t->sink->ctx, tr, s.ts, counter_value(ct->def, NULL, &s));
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

int gpufl__timeline_run(const gpufl__xtrace *x, const gpufl__tl_sink *sink, gpufl__tl_stats *stats)
{
    tl t;
    memset(&t, 0, sizeof t);
    memset(stats, 0, sizeof *stats);
    t.x = x;
    t.sink = sink;
    t.st = stats;
    t.last_track = GPUFL__TL_NONE;
    int rc = collect(&t);
    if (!rc)
        rc = make_tracks(&t);
    size_t nstatic = t.ntracks;
    for (size_t i = 0; i < nstatic && !rc; i++)
        rc = sink->track(sink->ctx, &t.tracks[i]);
    if (!rc)
        rc = bucket(&t);
    for (size_t i = 0; i < nstatic && !rc; i++) {
        uint8_t kind = t.tracks[i].kind;
        if (kind == GPUFL__TL_THREAD || kind == GPUFL__TL_STREAM || kind == GPUFL__TL_SYNCS)
            rc = emit_track(&t, (uint32_t)i);
    }
    if (!rc)
        rc = emit_counters(&t);
    stats->tracks = t.ntracks;
    for (unsigned src = GPUFL__XS_KERNEL; src <= GPUFL__XS_NVTX; src++)
        stats->events += gpufl__x_rows(x, src);
    stats->events += gpufl__x_dev_rows(x) + gpufl__x_host_rows(x);
    for (size_t l = 0; l < t.nlanes; l++)
        free(t.lanes[l].stack);
    free(t.lanes);
    free(t.items);
    free(t.tmp);
    free(t.flows);
    free(t.off);
    free(t.refs);
    free(t.tracks);
    free(t.counters);
    gpufl__idmap_free(&t.threads);
    gpufl__idmap_free(&t.streams);
    gpufl__idmap_free(&t.syncs);
    gpufl__idmap_free(&t.devices);
    return rc;
}
