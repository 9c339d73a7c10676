/*
 * The tables of distinct values of merged segments (see merge_distinct.h).
 */
#include "read/merge_distinct.h"

#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "read/work_pool.h"

static const gpufl__recset *seg_set(const gpufl__segment *g, unsigned x)
{
    return x == GFL_X_CONFIG ? &g->configs : x == GFL_X_STREAM ? &g->streams : &g->callers;
}

/* Copies segment s's records, translated, and hashes them. */
static void translate_job(void *ctx, size_t s, unsigned worker)
{
    (void)worker;
    gpufl__distinct *d = ctx;
    const gpufl__str_map *sm = &d->str[s];
    for (unsigned x = GFL_X_CONFIG; x <= GFL_X_CALLER; x++) {
        gpufl__distinct_recs *R = &d->recs[x];
        const gpufl__recset *from = seg_set(d->segs[s], x);
        for (uint32_t r = 0; r < from->n; r++) {
            size_t g = R->base[s] + r;
            void *rec = R->v + g * R->size;
            memcpy(rec, gpufl__recset_at(from, r), R->size);
            if (x == GFL_X_CONFIG) {
                gpufl__config_rec *c = rec;
                c->name = gpufl__str_map_get(sm, c->name);
                c->mangled = gpufl__str_map_get(sm, c->mangled);
            } else if (x == GFL_X_CALLER) {
                gpufl__caller_rec *c = rec;
                c->nvtx = gpufl__str_map_get(sm, c->nvtx);
            }
            R->hash[g] = gpufl__recset_hash(rec, R->size);
        }
    }
    /* copied: the segment's sets are not needed any more */
    gpufl__recset_free(&d->segs[s]->configs);
    gpufl__recset_free(&d->segs[s]->streams);
    gpufl__recset_free(&d->segs[s]->callers);
}

/* The partition of a hash: its high bits (the slot uses the low ones). */
static inline unsigned part_of(uint32_t hash, unsigned nparts) { return (unsigned)(((uint64_t)hash * nparts) >> 32); }

/* Finds the first equal record of every record of partition `part`. 0 or
 * GPUFL_ENOMEM. */
static int dedup_part(gpufl__distinct_recs *R, unsigned part, unsigned nparts)
{
    uint32_t cap = 64;
    while (cap < 4 * (R->n / nparts + 16) && cap < (1u << 31))
        cap *= 2;
    uint32_t *slots = calloc(cap, sizeof *slots), used = 0;
    if (!slots)
        return GPUFL_ENOMEM;
    for (size_t g = 0; g < R->n; g++) {
        uint32_t h = R->hash[g];
        if (part_of(h, nparts) != part)
            continue;
        const uint8_t *rec = R->v + g * R->size;
        uint32_t i = h & (cap - 1);
        for (; slots[i]; i = (i + 1) & (cap - 1)) {
            uint32_t e = slots[i] - 1;
            if (R->hash[e] == h && memcmp(R->v + (size_t)e * R->size, rec, R->size) == 0)
                break;
        }
        if (slots[i]) {
            R->first[g] = slots[i] - 1;
            continue;
        }
        R->first[g] = (uint32_t)g;
        slots[i] = (uint32_t)g + 1;
        if (++used * 2 > cap) {
            /* grow: the entries again, into twice the slots */
            uint32_t *bigger = calloc((size_t)cap * 2, sizeof *bigger);
            if (!bigger) {
                free(slots);
                return GPUFL_ENOMEM;
            }
            for (uint32_t k = 0; k < cap; k++) {
                if (!slots[k])
                    continue;
                uint32_t j = R->hash[slots[k] - 1] & (cap * 2 - 1);
                while (bigger[j])
                    j = (j + 1) & (cap * 2 - 1);
                bigger[j] = slots[k];
            }
            free(slots);
            slots = bigger;
            cap *= 2;
        }
    }
    free(slots);
    return 0;
}

static void dedup_job(void *ctx, size_t part, unsigned worker)
{
    (void)worker;
    gpufl__distinct *d = ctx;
    for (unsigned x = GFL_X_CONFIG; x <= GFL_X_CALLER && d->part_rc[part] == 0; x++)
        d->part_rc[part] = dedup_part(&d->recs[x], (unsigned)part, d->nparts);
}

int gpufl__distinct_merge(gpufl__distinct *d, gpufl_trace *t, gpufl__segment *const *segs, size_t nsegs,
                          const gpufl__str_map *str, unsigned nthreads)
{
    memset(d, 0, sizeof *d);
    d->segs = segs;
    d->nsegs = nsegs;
    d->str = str;
    gpufl__recset *into[GFL_X_COUNT] = {
        [GFL_X_CONFIG] = &t->configs, [GFL_X_STREAM] = &t->streams, [GFL_X_CALLER] = &t->callers};
    for (unsigned x = GFL_X_CONFIG; x <= GFL_X_CALLER; x++) {
        gpufl__distinct_recs *R = &d->recs[x];
        R->size = into[x]->size;
        R->base = malloc((d->nsegs + 1) * sizeof *R->base);
        if (!R->base)
            return GPUFL_ENOMEM;
        for (size_t s = 0; s < d->nsegs; s++) {
            R->base[s] = R->n;
            R->n += seg_set(d->segs[s], x)->n;
        }
        R->base[d->nsegs] = R->n;
        if (R->n >= UINT32_MAX)
            return GPUFL_ENOMEM; /* numbered by 32-bit rows */
        size_t k = R->n ? R->n : 1;
        R->v = malloc(k * R->size);
        R->hash = malloc(k * sizeof *R->hash);
        R->first = malloc(k * sizeof *R->first);
        R->row = malloc(k * sizeof *R->row);
        if (!R->v || !R->hash || !R->first || !R->row)
            return GPUFL_ENOMEM;
    }
    gpufl__parallel_for(nthreads, d->nsegs, translate_job, d);
    d->nparts = nthreads;
    d->part_rc = calloc(d->nparts, sizeof *d->part_rc);
    if (!d->part_rc)
        return GPUFL_ENOMEM;
    gpufl__parallel_for(nthreads, d->nparts, dedup_job, d);
    for (unsigned p = 0; p < d->nparts; p++)
        if (d->part_rc[p] != 0)
            return d->part_rc[p];
    for (unsigned x = GFL_X_CONFIG; x <= GFL_X_CALLER; x++) {
        gpufl__distinct_recs *R = &d->recs[x];
        uint32_t next = into[x]->n;
        for (size_t g = 0; g < R->n; g++) {
            if (R->first[g] != g) {
                R->row[g] = R->row[R->first[g]];
                continue;
            }
            if (gpufl__recset_append(into[x], R->v + g * R->size) != 0)
                return GPUFL_ENOMEM;
            R->row[g] = next++;
        }
        /* only the rows are needed from here on */
        free(R->v);
        free(R->hash);
        free(R->first);
        R->v = NULL;
        R->hash = R->first = NULL;
    }
    return 0;
}

void gpufl__distinct_free(gpufl__distinct *d)
{
    for (unsigned x = 0; x < GFL_X_COUNT; x++) {
        gpufl__distinct_recs *R = &d->recs[x];
        free(R->base);
        free(R->v);
        free(R->hash);
        free(R->first);
        free(R->row);
    }
    free(d->part_rc);
    memset(d, 0, sizeof *d);
}
