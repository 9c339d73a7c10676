/*
 * The lanes of the timeline view (see view_index.h), from the one timeline
 * (present/timeline): its stream tracks are the stream lanes, its thread
 * tracks' scopes and NVTX ranges split by depth are the thread lanes, in
 * the timeline's order. Two passes: the first finds each row's lane (a hash
 * of lane keys, core/idmap.h, with the previous row's lane tried first:
 * neighbours usually share one) and counts; the second places the rows.
 * Single-threaded.
 */
#include "present/view/view_index.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/idmap.h"
#include "gpufl/gpufl.h"
#include "present/timeline/timeline.h"

/* ---- lane keys ---------------------------------------------------------- */

typedef struct lane_map {
    gpufl__idmap lane_of;  /* lane key -> index in lanes */
    uint64_t last_key[2];  /* the last lane found, per slot: a kernel's device lane in */
    uint32_t last_lane[2]; /* slot 1, every other lane in slot 0 */
    gpufl__vlane *lanes;   /* the lanes, in order of first sight */
    size_t nlanes, lanes_cap;
} lane_map;

#define NO_KEY UINT64_MAX /* last_key before the first lookup */

/* A lane's key: its kind, its 32-bit id (stream or thread) and its small
 * one (device, 16 bits, or nesting level), in fields that cannot overlap
 * whatever the ids are (never NO_KEY). a and b as for map_lane(). */
static uint64_t lane_key(unsigned kind, uint32_t a, uint32_t b)
{
    bool thread = kind == GPUFL__VLANE_SCOPE || kind == GPUFL__VLANE_NVTX;
    uint32_t wide = thread ? a : b, small = thread ? b : a;
    return (uint64_t)kind << 56 | (uint64_t)(small & 0xffffffu) << 32 | wide;
}

/* The lane of kind for (a, b): (device, stream) for device lanes, (thread,
 * level) for thread lanes; created when new. Returns 0 with *out set, or
 * GPUFL_ENOMEM. */
static int map_lane(lane_map *m, unsigned kind, uint32_t a, uint32_t b, uint32_t *out)
{
    uint64_t k = lane_key(kind, a, b);
    unsigned slot = kind == GPUFL__VLANE_DEVICE;
    if (k == m->last_key[slot]) {
        *out = m->last_lane[slot];
        return 0;
    }
    uint32_t lane;
    if (!gpufl__idmap_get(&m->lane_of, k, &lane)) {
        if (GPUFL__GROW(m->lanes, m->nlanes, m->lanes_cap, 16) != 0)
            return GPUFL_ENOMEM;
        gpufl__vlane *l = &m->lanes[m->nlanes];
        memset(l, 0, sizeof *l);
        l->kind = kind;
        if (kind == GPUFL__VLANE_SCOPE || kind == GPUFL__VLANE_NVTX) {
            l->tid = a;
            l->level = b;
        } else {
            l->device = a;
            l->stream = b;
        }
        lane = (uint32_t)m->nlanes;
        if (gpufl__idmap_put(&m->lane_of, k, lane) != 0)
            return GPUFL_ENOMEM;
        m->nlanes++;
    }
    m->last_key[slot] = k;
    m->last_lane[slot] = lane;
    *out = lane;
    return 0;
}

static void map_free(lane_map *m)
{
    gpufl__idmap_free(&m->lane_of);
    free(m->lanes);
}

/* ---- the two passes ------------------------------------------------------ */

/* Calls visit(ctx, lane, entry) for every lane a row belongs to: the rows
 * of the timeline's stream and thread tracks (present/timeline) in its
 * order, then each device's kernels and samples in table order (start
 * order). */
typedef int (*visit_fn)(void *ctx, uint32_t lane, uint32_t entry);

typedef struct walk {
    gpufl__view_index *ix;
    lane_map *map;
    const gpufl__timeline *tl;
} walk;

/* The items of the timeline the view draws: device work, scopes and NVTX,
 * and the trace windows and triggers (where device tracing was on). */
#define DRAWN_ITEMS                                                                                                    \
    (GPUFL__TL_ITEM(GPUFL__TBL_KERNEL) | GPUFL__TL_ITEM(GPUFL__TBL_COPY) | GPUFL__TL_ITEM(GPUFL__TBL_MEMSET) |         \
     GPUFL__TL_ITEM(GPUFL__TBL_SCOPE) | GPUFL__TL_ITEM(GPUFL__TBL_NVTX) | GPUFL__TL_ITEM(GPUFL__TL_WINDOW) |           \
     GPUFL__TL_ITEM(GPUFL__TL_TRIGGER))

/* Copies the "gpufl" track's windows and triggers out of the timeline.
 * Returns 0 or GPUFL_ENOMEM. */
static int copy_flight(gpufl__view_index *ix, const gpufl__timeline *tl)
{
    if (tl->flight == GPUFL__TL_NONE)
        return 0;
    size_t n;
    const uint64_t *item = gpufl__tl_items(tl, tl->flight, &n);
    ix->window = malloc((n ? n : 1) * sizeof *ix->window);
    ix->trigger_ns = malloc((n ? n : 1) * sizeof *ix->trigger_ns);
    if (!ix->window || !ix->trigger_ns)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        uint64_t start = gpufl__tl_item_start(&ix->src, item[i]);
        if (GPUFL__TL_REF_KIND(item[i]) == GPUFL__TL_WINDOW) {
            ix->window[ix->nwindows][0] = start;
            ix->window[ix->nwindows++][1] = gpufl__tl_item_end(&ix->src, item[i]);
        } else {
            ix->trigger_ns[ix->ntriggers++] = start;
        }
    }
    return 0;
}

static uint32_t entry_of(unsigned table, size_t i) { return (uint32_t)table << GPUFL__VROW_BITS | (uint32_t)i; }

static int visit_row(walk *w, unsigned table, size_t i, visit_fn visit, void *ctx)
{
    const gpufl__rows *s = &w->ix->src;
    uint32_t lane;
    int rc;
    switch (table) {
    case GPUFL__TBL_KERNEL:
    case GPUFL__TBL_COPY:
    case GPUFL__TBL_MEMSET:
        if ((rc = map_lane(w->map, GPUFL__VLANE_STREAM, gpufl__row_device(s, table, i), gpufl__row_stream(s, table, i),
                           &lane)) != 0)
            return rc;
        return visit(ctx, lane, entry_of(table, i));
    case GPUFL__TBL_SCOPE:
    case GPUFL__TBL_NVTX: {
        if (gpufl__row_instant(s, table, i)) {
            w->ix->marks++;
            return 0;
        }
        unsigned depth = gpufl__row_depth(s, table, i);
        if (depth >= GPUFL__VIEW_MAX_LEVELS) {
            w->ix->deep++;
            return 0;
        }
        unsigned kind = table == GPUFL__TBL_SCOPE ? GPUFL__VLANE_SCOPE : GPUFL__VLANE_NVTX;
        if ((rc = map_lane(w->map, kind, gpufl__row_tid(s, table, i), depth, &lane)) != 0)
            return rc;
        return visit(ctx, lane, entry_of(table, i));
    }
    default: return 0;
    }
}

static int walk_all(walk *w, visit_fn visit, void *ctx)
{
    const gpufl__rows *s = &w->ix->src;
    int rc = 0;
    for (uint32_t tr = 0; tr < w->tl->ntracks && !rc; tr++) {
        size_t n;
        const uint64_t *item = gpufl__tl_items(w->tl, tr, &n);
        for (size_t k = 0; k < n && !rc; k++)
            rc = visit_row(w, GPUFL__TL_REF_KIND(item[k]), GPUFL__TL_REF_ROW(item[k]), visit, ctx);
    }
    uint32_t lane;
    for (size_t i = 0, n = gpufl__rows_n(s, GPUFL__TBL_KERNEL); i < n && !rc; i++)
        if ((rc = map_lane(w->map, GPUFL__VLANE_DEVICE, gpufl__row_device(s, GPUFL__TBL_KERNEL, i), 0, &lane)) == 0)
            rc = visit(ctx, lane, entry_of(GPUFL__TBL_KERNEL, i));
    for (size_t i = 0, n = gpufl__rows_n(s, GPUFL__TBL_DEVICE_SAMPLE); i < n && !rc; i++) {
        if (gpufl__d_util_or_none(s, i) < 0)
            continue;
        if ((rc = map_lane(w->map, GPUFL__VLANE_SAMPLES, gpufl__row_device(s, GPUFL__TBL_DEVICE_SAMPLE, i), 0,
                           &lane)) == 0)
            rc = visit(ctx, lane, entry_of(GPUFL__TBL_DEVICE_SAMPLE, i));
    }
    return rc;
}

static int count_entry(void *ctx, uint32_t lane, uint32_t entry)
{
    (void)entry;
    ((lane_map *)ctx)->lanes[lane].n++;
    return 0;
}

static int place_entry(void *ctx, uint32_t lane, uint32_t entry)
{
    walk *w = ctx;
    gpufl__vlane *l = &w->map->lanes[lane];
    w->ix->row[l->first + l->n++] = entry;
    return 0;
}

uint64_t gpufl__view_entry_end(const gpufl__view_index *ix, uint32_t e)
{
    unsigned table = GPUFL__VROW_TABLE(e);
    size_t i = GPUFL__VROW_INDEX(e);
    uint64_t start = gpufl__row_start(&ix->src, table, i);
    uint64_t end = gpufl__row_end(&ix->src, table, i);
    if (table == GPUFL__TBL_DEVICE_SAMPLE)
        return start;
    return end > start ? end : start + 1;
}

static int lane_order(const void *pa, const void *pb)
{
    const gpufl__vlane *a = pa, *b = pb;
    bool ta = a->kind >= GPUFL__VLANE_SCOPE, tb = b->kind >= GPUFL__VLANE_SCOPE;
    uint64_t ka[4] = {ta, ta ? a->tid : a->device, a->kind, ta ? a->level : a->stream};
    uint64_t kb[4] = {tb, tb ? b->tid : b->device, b->kind, tb ? b->level : b->stream};
    for (int i = 0; i < 4; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

/* The session's last recorded time (the trace's, which every output
 * shares), and the largest kernel name id. */
static void scan_extent(gpufl__view_index *ix)
{
    const gpufl__rows *s = &ix->src;
    ix->last_ns = gpufl_trace_get_info(s->t)->last_ns;
    for (size_t i = 0, n = gpufl__rows_n(s, GPUFL__TBL_KERNEL); i < n; i++)
        if (gpufl__row_name(s, GPUFL__TBL_KERNEL, i) >= ix->max_name)
            ix->max_name = gpufl__row_name(s, GPUFL__TBL_KERNEL, i) + 1;
}

int gpufl__view_index_build(gpufl__view_index *ix, const gpufl_trace *t)
{
    memset(ix, 0, sizeof *ix);
    gpufl__rows_open(&ix->src, t);
    for (unsigned table = GPUFL__TBL_KERNEL; table <= GPUFL__TBL_DEVICE_SAMPLE; table++)
        if (gpufl__rows_n(&ix->src, table) >= (1u << GPUFL__VROW_BITS))
            return GPUFL_EUNSUPPORTED;
    scan_extent(ix);
    lane_map map;
    memset(&map, 0, sizeof map);
    map.last_key[0] = map.last_key[1] = NO_KEY;
    gpufl__timeline tl;
    int rc = gpufl__timeline_build(&tl, &ix->src, DRAWN_ITEMS);
    if (rc != 0) {
        gpufl__view_index_free(ix);
        return rc;
    }
    if ((rc = copy_flight(ix, &tl)) != 0)
        goto fail;
    walk w = {ix, &map, &tl};
    rc = walk_all(&w, count_entry, &map);
    if (rc != 0)
        goto fail;
    size_t total = 0;
    for (size_t l = 0; l < map.nlanes; l++) {
        map.lanes[l].first = total;
        total += map.lanes[l].n;
        map.lanes[l].n = 0;
    }
    ix->row = malloc((total ? total : 1) * sizeof *ix->row);
    ix->max_end = malloc((total ? total : 1) * sizeof *ix->max_end);
    rc = GPUFL_ENOMEM;
    if (!ix->row || !ix->max_end)
        goto fail;
    ix->marks = ix->deep = 0; /* the second walk counts them again */
    if ((rc = walk_all(&w, place_entry, &w)) != 0)
        goto fail;
    for (size_t l = 0; l < map.nlanes; l++) {
        uint64_t m = 0;
        for (size_t i = map.lanes[l].first; i < map.lanes[l].first + map.lanes[l].n; i++) {
            uint64_t e = gpufl__view_entry_end(ix, ix->row[i]);
            m = e > m ? e : m;
            ix->max_end[i] = m;
        }
    }
    if (map.nlanes) /* an empty session has no lanes, and lanes NULL */
        qsort(map.lanes, map.nlanes, sizeof *map.lanes, lane_order);
    ix->lane = map.lanes;
    ix->nlanes = map.nlanes;
    map.lanes = NULL;
    map_free(&map);
    gpufl__timeline_free(&tl);
    return 0;
fail:
    map_free(&map);
    gpufl__timeline_free(&tl);
    gpufl__view_index_free(ix);
    return rc;
}

void gpufl__view_index_free(gpufl__view_index *ix)
{
    free(ix->row);
    free(ix->max_end);
    free(ix->lane);
    free(ix->window);
    free(ix->trigger_ns);
    ix->window = NULL;
    ix->trigger_ns = NULL;
    ix->nwindows = ix->ntriggers = 0;
    ix->row = NULL;
    ix->max_end = NULL;
    ix->lane = NULL;
    ix->nlanes = 0;
}

size_t gpufl__view_lane_seek(const gpufl__view_index *ix, const gpufl__vlane *l, uint64_t from)
{
    const uint64_t *m = ix->max_end + l->first;
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m[mid] <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
