/*
 * Building the timeline (timeline.h): which threads, devices and streams
 * there are, their tracks, and each track's items in order.
 */
#include "present/timeline/timeline.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "gpufl/gpufl.h"

#define CALLS GPUFL__TL_CALLS
#define REF GPUFL__TL_REF
#define REF_KIND GPUFL__TL_REF_KIND
#define REF_ROW GPUFL__TL_REF_ROW

/* What building needs besides the timeline itself. */
typedef struct builder {
    gpufl__timeline *t;
    const gpufl__rows *x;
    uint32_t items;       /* GPUFL__TL_ITEM bits of the kinds held */
    gpufl__idmap devices; /* the devices seen */
    /* lookup cache */
    uint64_t last_key;
    uint32_t last_track;
    const gpufl__idmap *last_map;
} builder;
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

static uint64_t stream_key(uint32_t device, uint32_t stream) { return (uint64_t)device << 32 | stream; }

size_t gpufl__tl_kind_rows(const gpufl__rows *x, unsigned kind)
{
    if (kind == GPUFL__TL_WINDOW)
        return x->windows->n;
    if (kind == GPUFL__TL_TRIGGER)
        return x->triggers->n;
    return gpufl__rows_n(x, kind >= CALLS ? kind - CALLS : kind);
}

/* A window's or trigger's start and end (a trigger is an instant). */
static bool flight_item(const gpufl__rows *x, unsigned kind, size_t row, uint64_t *start, uint64_t *end)
{
    if (kind == GPUFL__TL_WINDOW) {
        gpufl__window_row w;
        gpufl__window_row_get(x, row, &w);
        *start = w.begin;
        *end = w.end;
        return true;
    }
    if (kind == GPUFL__TL_TRIGGER) {
        *start = *end = x->triggers->ts_ns[row];
        return true;
    }
    return false;
}

uint64_t gpufl__tl_item_start(const gpufl__rows *x, uint64_t ref)
{
    unsigned kind = REF_KIND(ref);
    size_t row = REF_ROW(ref);
    uint64_t start, end;
    if (flight_item(x, kind, row, &start, &end))
        return start;
    if (kind < CALLS)
        return gpufl__row_start(x, kind, row);
    uint64_t api_start = 0, api_end;
    uint32_t tid;
    gpufl__row_call(x, kind - CALLS, row, &api_start, &api_end, &tid);
    return api_start;
}

uint64_t gpufl__tl_item_end(const gpufl__rows *x, uint64_t ref)
{
    unsigned kind = REF_KIND(ref);
    size_t row = REF_ROW(ref);
    uint64_t start, end;
    if (flight_item(x, kind, row, &start, &end))
        return end;
    if (kind == GPUFL__TBL_SCOPE || kind == GPUFL__TBL_NVTX) {
        gpufl__range_row r;
        gpufl__range_row_get(x, kind, row, &r);
        return r.instant ? r.start : gpufl__tl_clip(r.start, r.end);
    }
    if (kind < CALLS)
        return gpufl__tl_clip(gpufl__row_start(x, kind, row), gpufl__row_end(x, kind, row));
    uint64_t api_start = 0, api_end = 0;
    uint32_t tid;
    gpufl__row_call(x, kind - CALLS, row, &api_start, &api_end, &tid);
    return gpufl__tl_call_end(api_start, api_end);
}

/* Pass 1: which threads, devices and streams there are. */
static int collect(builder *b)
{
    const gpufl__rows *x = b->x;
    int rc = 0;
    for (uint32_t d = 0; d < x->info->ndevices && !rc; d++)
        rc = map_add(&b->devices, x->info->devices[d].index);
    for (unsigned src = GPUFL__TBL_KERNEL; src <= GPUFL__TBL_SYNC && !rc; src++) {
        bool rows = b->items & GPUFL__TL_ITEM(src);
        bool calls = src != GPUFL__TBL_SYNC && (b->items & GPUFL__TL_ITEM(GPUFL__TL_CALL_OF(src)));
        size_t n = rows || calls ? gpufl__rows_n(x, src) : 0;
        uint64_t last = UINT64_MAX;
        uint32_t last_tid = 0;
        gpufl__idmap *m = src == GPUFL__TBL_SYNC ? &b->t->syncs : &b->t->streams;
        if (src == GPUFL__TBL_SYNC && (b->items & GPUFL__TL_SYNCS_BY_THREAD)) {
            for (size_t i = 0; i < n && !rc; i++)
                rc = map_add(&b->t->threads, gpufl__row_tid(x, src, i));
            continue;
        }
        for (size_t i = 0; i < n && !rc; i++) {
            uint32_t device, stream;
            gpufl__row_where(x, src, i, &device, &stream);
            uint64_t key = stream_key(device, stream);
            if (key != last && rows) {
                rc = map_add(m, key);
                if (!rc)
                    rc = map_add(&b->devices, device);
                last = key;
            }
            uint64_t api_start, api_end;
            uint32_t tid;
            if (calls && gpufl__row_call(x, src, i, &api_start, &api_end, &tid)) {
                if (tid != last_tid && !rc) {
                    rc = map_add(&b->t->threads, tid);
                    last_tid = tid;
                }
            }
        }
    }
    for (unsigned src = GPUFL__TBL_SCOPE; src <= GPUFL__TBL_NVTX && !rc; src++) {
        size_t n = b->items & GPUFL__TL_ITEM(src) ? gpufl__rows_n(x, src) : 0;
        uint32_t last_tid = UINT32_MAX;
        for (size_t i = 0; i < n && !rc; i++) {
            gpufl__range_row r;
            gpufl__range_row_get(x, src, i, &r);
            if (r.tid != last_tid) {
                rc = map_add(&b->t->threads, r.tid);
                last_tid = r.tid;
            }
        }
    }
    for (size_t i = 0; i < gpufl__d_n(x) && !rc; i++) {
        gpufl__dev_row s;
        gpufl__dev_row_get(x, i, &s);
        rc = map_add(&b->devices, s.device);
    }
    /* PM samples draw counters under their device (map_add takes a device
     * once; the check only skips runs of one device's rows) */
    uint32_t last_pm = UINT32_MAX;
    for (size_t i = 0; i < x->pm_samples->n && !rc; i++)
        if (x->pm_samples->device[i] != last_pm) {
            last_pm = x->pm_samples->device[i];
            rc = map_add(&b->devices, last_pm);
        }
    return rc;
}

static gpufl__tl_track *add_track(gpufl__timeline *t, uint8_t kind, uint32_t parent)
{
    if (GPUFL__GROW(t->tracks, t->ntracks, t->cap, 64) != 0)
        return NULL;
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

static const char *device_name(const gpufl__rows *x, uint32_t device)
{
    for (uint32_t d = 0; d < x->info->ndevices; d++)
        if (x->info->devices[d].index == device)
            return gpufl__rows_str(x, x->info->devices[d].name);
    return "";
}

static int add_counter(gpufl__timeline *t, uint32_t parent, uint32_t device, const gpufl__tl_counter_def *def,
                       uint32_t metric)
{
    gpufl__tl_track *tr = add_track(t, GPUFL__TL_COUNTER, parent);
    gpufl__tl_counter *c = realloc(t->counters, (t->ncounters + 1) * sizeof *c);
    if (!tr || !c) {
        if (c)
            t->counters = c;
        return GPUFL_ENOMEM;
    }
    t->counters = c;
    tr->device = device;
    tr->bytes = def->bytes;
    if (metric)
        snprintf(tr->name, sizeof tr->name, "GPU %u %s", device, gpufl__rows_str(t->x, metric));
    else if (device == GPUFL__TL_NONE)
        snprintf(tr->name, sizeof tr->name, "%s", def->name);
    else
        snprintf(tr->name, sizeof tr->name, "GPU %u %s", device, def->name);
    t->counters[t->ncounters++] = (gpufl__tl_counter){tr->id, device, def, metric};
    return 0;
}

/* One counter track per PM sampling metric of device, in the order the
 * metrics first appear. */
static int add_pm_counters(gpufl__timeline *t, uint32_t parent, uint32_t device)
{
    const gpufl_trace_pm_samples *p = t->x->pm_samples;
    uint32_t seen[64];
    size_t nseen = 0;
    for (size_t i = 0; i < p->n && nseen < 64; i++) {
        if (p->device[i] != device)
            continue;
        size_t k = 0;
        while (k < nseen && seen[k] != p->metric[i])
            k++;
        if (k < nseen)
            continue;
        seen[nseen++] = p->metric[i];
        int rc = add_counter(t, parent, device, &gpufl__tl_pm_counter, p->metric[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* Which counters the samples have: per device a mask of
 * gpufl__tl_device_counters indexes, for the host one of
 * gpufl__tl_host_counters. */
static uint32_t host_counter_mask(const gpufl__rows *x)
{
    uint32_t mask = 0;
    for (size_t i = 0; i < gpufl__h_n(x); i++) {
        gpufl__host_row s;
        gpufl__host_row_get(x, i, &s);
        for (size_t c = 0; c < gpufl__tl_nhost_counters; c++)
            if (s.valid & gpufl__tl_host_counters[c].bit)
                mask |= 1u << c;
    }
    return mask;
}

/* The tracks of device dev's streams (kind GPUFL__TL_STREAM: kernels,
 * copies, memsets) or of their syncs (GPUFL__TL_SYNCS), under parent: one
 * per key keys[*next..] on dev (keys: m's, sorted, so by device), each
 * recorded in m as the key's track. 0 or GPUFL_ENOMEM. */
static int add_stream_tracks(builder *b, uint8_t kind, uint32_t dev, uint32_t parent, gpufl__idmap *m,
                             const uint64_t *keys, size_t *next)
{
    for (; *next < m->n && keys[*next] >> 32 == dev; (*next)++) {
        gpufl__tl_track *st = add_track(b->t, kind, parent);
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

/* The tracks, in their order (see timeline.h). */
static int make_tracks(builder *b)
{
    const gpufl__rows *x = b->x;
    gpufl__tl_track *proc = add_track(b->t, GPUFL__TL_PROCESS, GPUFL__TL_NONE);
    if (!proc)
        return GPUFL_ENOMEM;
    const char *app = gpufl__rows_str(x, x->info->app_name);
    snprintf(proc->name, sizeof proc->name, "%s", *app ? app : "gpufl session");

    if (((b->items & GPUFL__TL_ITEM(GPUFL__TL_WINDOW)) && x->windows->n) ||
        ((b->items & GPUFL__TL_ITEM(GPUFL__TL_TRIGGER)) && x->triggers->n)) {
        gpufl__tl_track *fl = add_track(b->t, GPUFL__TL_FLIGHT, 0);
        if (!fl)
            return GPUFL_ENOMEM;
        snprintf(fl->name, sizeof fl->name, "gpufl");
        b->t->flight = fl->id;
    }

    uint64_t *tids = map_sorted_keys(&b->t->threads);
    if (b->t->threads.n && !tids)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < b->t->threads.n; i++) {
        gpufl__tl_track *tr = add_track(b->t, GPUFL__TL_THREAD, 0);
        if (!tr) {
            free(tids);
            return GPUFL_ENOMEM;
        }
        tr->tid = (uint32_t)tids[i];
        snprintf(tr->name, sizeof tr->name, "thread %u", tr->tid);
        if (gpufl__idmap_put(&b->t->threads, tids[i], tr->id) != 0) {
            free(tids);
            return GPUFL_ENOMEM;
        }
    }
    free(tids);

    /* counters each device's samples have */
    uint32_t *dev_mask = calloc(65536, sizeof *dev_mask);
    if (!dev_mask)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < gpufl__d_n(x); i++) {
        gpufl__dev_row s;
        gpufl__dev_row_get(x, i, &s);
        for (size_t c = 0; c < gpufl__tl_ndevice_counters; c++)
            if (s.valid & gpufl__tl_device_counters[c].bit)
                dev_mask[s.device & 0xffff] |= 1u << c;
    }

    uint64_t *devs = map_sorted_keys(&b->devices);
    uint64_t *streams = map_sorted_keys(&b->t->streams), *syncs = map_sorted_keys(&b->t->syncs);
    int rc = (b->devices.n && !devs) || (b->t->streams.n && !streams) || (b->t->syncs.n && !syncs) ? GPUFL_ENOMEM : 0;
    size_t si = 0, yi = 0;
    for (size_t d = 0; d < b->devices.n && !rc; d++) {
        uint32_t dev = (uint32_t)devs[d];
        gpufl__tl_track *dt = add_track(b->t, GPUFL__TL_DEVICE, 0);
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
        rc = add_stream_tracks(b, GPUFL__TL_STREAM, dev, parent, &b->t->streams, streams, &si);
        if (!rc)
            rc = add_stream_tracks(b, GPUFL__TL_SYNCS, dev, parent, &b->t->syncs, syncs, &yi);
        for (size_t c = 0; c < gpufl__tl_ndevice_counters && !rc; c++)
            if (dev_mask[dev & 0xffff] & (1u << c))
                rc = add_counter(b->t, parent, dev, &gpufl__tl_device_counters[c], 0);
        if (!rc)
            rc = add_pm_counters(b->t, parent, dev);
    }
    uint32_t hmask = host_counter_mask(x);
    for (size_t c = 0; c < gpufl__tl_nhost_counters && !rc; c++)
        if (hmask & (1u << c))
            rc = add_counter(b->t, 0, GPUFL__TL_NONE, &gpufl__tl_host_counters[c], 0);
    free(devs);
    free(streams);
    free(syncs);
    free(dev_mask);
    return rc;
}

/* The track of item kind/row, GPUFL__TL_NONE for none (a call without a
 * thread). Caches the last lookup: rows of one stream or thread come in
 * runs. */
static uint32_t lookup(builder *b, const gpufl__idmap *m, uint64_t key)
{
    if (m == b->last_map && key == b->last_key)
        return b->last_track;
    b->last_map = m;
    b->last_key = key;
    return b->last_track = map_get(m, key);
}

static uint32_t item_track(builder *b, unsigned kind, size_t row)
{
    const gpufl__rows *x = b->x;
    if (kind == GPUFL__TL_WINDOW || kind == GPUFL__TL_TRIGGER)
        return b->t->flight;
    if (kind == GPUFL__TBL_SCOPE || kind == GPUFL__TBL_NVTX ||
        (kind == GPUFL__TBL_SYNC && (b->items & GPUFL__TL_SYNCS_BY_THREAD)))
        return lookup(b, &b->t->threads, gpufl__row_tid(x, kind, row));
    if (kind >= CALLS) {
        uint64_t api_start, api_end;
        uint32_t tid;
        if (!gpufl__row_call(x, kind - CALLS, row, &api_start, &api_end, &tid))
            return GPUFL__TL_NONE;
        return lookup(b, &b->t->threads, tid);
    }
    uint32_t device, stream;
    gpufl__row_where(x, kind, row, &device, &stream);
    return lookup(b, kind == GPUFL__TBL_SYNC ? &b->t->syncs : &b->t->streams, stream_key(device, stream));
}

/* Every item kind, in the order ties keep. */
static const unsigned item_kinds[] = {GPUFL__TBL_KERNEL,
                                      GPUFL__TBL_COPY,
                                      GPUFL__TBL_MEMSET,
                                      GPUFL__TBL_SYNC,
                                      GPUFL__TBL_SCOPE,
                                      GPUFL__TBL_NVTX,
                                      GPUFL__TL_CALL_OF(GPUFL__TBL_KERNEL),
                                      GPUFL__TL_CALL_OF(GPUFL__TBL_COPY),
                                      GPUFL__TL_CALL_OF(GPUFL__TBL_MEMSET),
                                      GPUFL__TL_WINDOW,
                                      GPUFL__TL_TRIGGER};
#define NITEM_KINDS (sizeof item_kinds / sizeof item_kinds[0])

/* Pass 2: the items of each track, in table order, bucketed by a counting
 * sort. */
static int bucket(builder *b)
{
    gpufl__timeline *t = b->t;
    size_t total = 0;
    t->off = calloc(t->ntracks + 1, sizeof *t->off);
    if (!t->off)
        return GPUFL_ENOMEM;
    for (size_t k = 0; k < NITEM_KINDS; k++) {
        unsigned kind = item_kinds[k];
        size_t n = b->items & GPUFL__TL_ITEM(kind) ? gpufl__tl_kind_rows(b->x, kind) : 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t tr = item_track(b, kind, i);
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
        size_t n = b->items & GPUFL__TL_ITEM(kind) ? gpufl__tl_kind_rows(b->x, kind) : 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t tr = item_track(b, kind, i);
            if (tr != GPUFL__TL_NONE)
                t->refs[fill[tr]++] = REF(kind, i);
        }
    }
    free(fill);
    return 0;
}

/* ---- pass 3: each track in order ------------------------------------------ */

typedef struct item {
    uint64_t start, ref;
} item;

/* a goes strictly before b: earlier start, or the same start and a later end */
static int before(const gpufl__rows *x, const item *a, const item *b)
{
    if (a->start != b->start)
        return a->start < b->start;
    return gpufl__tl_item_end(x, a->ref) > gpufl__tl_item_end(x, b->ref);
}

static size_t run_end(const gpufl__rows *x, const item *a, size_t i, size_t n)
{
    while (i + 1 < n && !before(x, &a[i + 1], &a[i]))
        i++;
    return i + 1;
}

/* Stable natural merge sort of a[0..n) with tmp of the same size; returns
 * whichever of the two holds the result. */
static item *sort_items(const gpufl__rows *x, item *a, item *tmp, size_t n)
{
    if (run_end(x, a, 0, n) >= n)
        return a;
    for (;;) {
        size_t runs = 0, i = 0;
        while (i < n) {
            size_t m = run_end(x, a, i, n);
            size_t e = m < n ? run_end(x, a, m, n) : n;
            size_t l = i, r = m, o = i;
            while (l < m && r < e)
                tmp[o++] = before(x, &a[r], &a[l]) ? a[r++] : a[l++];
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

static int sort_tracks(builder *b)
{
    gpufl__timeline *t = b->t;
    size_t largest = 0;
    for (size_t tr = 0; tr < t->ntracks; tr++)
        if (t->off[tr + 1] - t->off[tr] > largest)
            largest = t->off[tr + 1] - t->off[tr];
    if (largest < 2)
        return 0;
    item *items = malloc(largest * sizeof *items), *tmp = malloc(largest * sizeof *tmp);
    if (!items || !tmp) {
        free(items);
        free(tmp);
        return GPUFL_ENOMEM;
    }
    for (size_t tr = 0; tr < t->ntracks; tr++) {
        size_t n = t->off[tr + 1] - t->off[tr];
        uint64_t *refs = t->refs + t->off[tr];
        for (size_t i = 0; i < n; i++)
            items[i] = (item){gpufl__tl_item_start(b->x, refs[i]), refs[i]};
        const item *a = sort_items(b->x, items, tmp, n);
        for (size_t i = 0; i < n; i++)
            refs[i] = a[i].ref;
    }
    free(items);
    free(tmp);
    return 0;
}

/* ---- the timeline ------------------------------------------------------------ */

int gpufl__timeline_build(gpufl__timeline *t, const gpufl__rows *x, uint32_t items)
{
    memset(t, 0, sizeof *t);
    t->x = x;
    t->flight = GPUFL__TL_NONE;
    builder b = {.t = t, .x = x, .items = items, .last_track = GPUFL__TL_NONE};
    int rc = collect(&b);
    if (!rc)
        rc = make_tracks(&b);
    if (!rc)
        rc = bucket(&b);
    if (!rc)
        rc = sort_tracks(&b);
    if (!rc && (items & GPUFL__TL_TORCH_OPS) && (items & GPUFL__TL_ITEM(GPUFL__TBL_NVTX)))
        rc = gpufl__analyze_op_rows(x->t, &t->ops);
    gpufl__idmap_free(&b.devices);
    if (rc)
        gpufl__timeline_free(t);
    return rc;
}

void gpufl__timeline_free(gpufl__timeline *t)
{
    free(t->tracks);
    free(t->off);
    free(t->refs);
    free(t->counters);
    gpufl__idmap_free(&t->threads);
    gpufl__idmap_free(&t->streams);
    gpufl__idmap_free(&t->syncs);
    gpufl__ana_op_rows_free(&t->ops);
    const gpufl__rows *x = t->x;
    memset(t, 0, sizeof *t);
    t->x = x;
    t->flight = GPUFL__TL_NONE;
}

uint32_t gpufl__tl_thread_track(const gpufl__timeline *t, uint32_t tid) { return map_get(&t->threads, tid); }

uint32_t gpufl__tl_stream_track(const gpufl__timeline *t, uint8_t kind, uint32_t device, uint32_t stream)
{
    return map_get(kind == GPUFL__TL_SYNCS ? &t->syncs : &t->streams, stream_key(device, stream));
}
