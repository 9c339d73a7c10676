/*
 * .gflt events chunk decoding (see gflt_decode.h; the encoding is
 * src/sink/gflt_encode.c's and docs/FORMAT.md's).
 */
#include "read/gflt_decode.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/uint_field.h"
#include "core/varint.h"
#include "format/gflt_format.h"
#include "format/gflt_layout.h"
#include "gpufl/gpufl.h"

void gpufl__gflt_decoder_free(gpufl__gflt_decoder *d)
{
    free(d->evs);
    free(d->order);
    free(d->hit);
    free(d->present);
    gpufl__idmap_free(&d->keys);
    gpufl__idmap_free(&d->streams);
    memset(d, 0, sizeof *d);
}

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

static int take_column(cursor *c, cursor *col)
{
    uint64_t len;
    if (gpufl__get_varint(&c->p, c->end, &len) != 0 || len > (uint64_t)(c->end - c->p))
        return -1;
    col->p = c->p;
    col->end = c->p + len;
    c->p += len;
    return 0;
}

static bool fits(uint64_t v, unsigned size) { return size >= 8 || v < (1ull << (8 * size)); }

static bool fits_signed(int64_t v, unsigned size)
{
    if (size >= 8)
        return true;
    int64_t lim = (int64_t)1 << (8 * size - 1);
    return v >= -lim && v < lim;
}

/* Reads a bitmap of n bits from col into bits[]. */
static int read_bitmap(cursor *col, uint8_t *bits, size_t n)
{
    size_t bytes = (n + 7) / 8;
    if ((size_t)(col->end - col->p) < bytes)
        return -1;
    for (size_t i = 0; i < n; i++)
        bits[i] = (col->p[i / 8] >> (i % 8)) & 1;
    /* the unused high bits of the last byte are 0 */
    if (n % 8 && col->p[bytes - 1] >> (n % 8))
        return -1;
    col->p += bytes;
    return 0;
}

/* Where one column is up to. Columns are decoded a block of events at a
 * time, all columns of a block before the next block, so the events being
 * filled stay in the cache however large the chunk. */
typedef struct column_state {
    cursor col, durs;       /* durs: the second column of a SPAN */
    uint64_t prev;          /* DELTA: the previous value; SPAN: the previous start */
    const uint8_t *present; /* OPT: per event, nonzero when in the column */
    const uint8_t *skip;    /* PRED: per event, 1 when predicted (not in the column) */
    bool active;            /* the writer wrote this column */
} column_state;

#define BLOCK 256

/* Values [i0, i1) of one column, inlined for each codec and size so that
 * the per-value work is a varint read, an add and one store. */
static inline __attribute__((always_inline)) int column_loop(const gpufl__gflt_field *f, gfl_event *evs,
                                                             const uint32_t *idx, size_t i0, size_t i1,
                                                             column_state *st, uint32_t nstrings, unsigned codec,
                                                             unsigned size)
{
    const uint8_t *present = st->present, *skip = st->skip;
    uint64_t prev = st->prev;
    for (size_t i = i0; i < i1; i++) {
        if ((skip && skip[i]) || (present && !present[i]))
            continue;
        uint64_t raw, v;
        if (gpufl__get_varint(&st->col.p, st->col.end, &raw) != 0)
            return -1;
        gfl_event *ev = &evs[idx[i]];
        switch (codec) {
        case GFLT_SVAR: {
            int64_t sv = gpufl__unzigzag(raw);
            if (!fits_signed(sv, size))
                return -1;
            v = (uint64_t)sv;
            break;
        }
        case GFLT_DELTA:
            v = prev + (uint64_t)gpufl__unzigzag(raw);
            prev = v;
            break;
        case GFLT_REF: v = gpufl__gflt_get_at(ev, f->aux, 8) + (uint64_t)gpufl__unzigzag(raw); break;
        case GFLT_STR:
            if (raw >= nstrings)
                return -1;
            v = raw;
            break;
        default: v = raw; break;
        }
        if (codec != GFLT_SVAR && !fits(v, size))
            return -1;
        /* an OPT value present in the bitmap is nonzero */
        if (present && v == 0)
            return -1;
        gpufl__uint_put((uint8_t *)ev + f->off, size, v);
    }
    st->prev = prev;
    return 0;
}

static int value_block(const gpufl__gflt_field *f, gfl_event *evs, const uint32_t *idx, size_t i0, size_t i1,
                       column_state *st, uint32_t nstrings)
{
#define CASE(codec, size)                                                                                              \
    case codec * 16 + size:                                                                                            \
        return column_loop(f, evs, idx, i0, i1, st, nstrings, codec, size);
#define SIZES(codec) CASE(codec, 1) CASE(codec, 2) CASE(codec, 4) CASE(codec, 8)
    switch (f->codec * 16 + f->size) {
        SIZES(GFLT_VAR)
        SIZES(GFLT_SVAR)
        SIZES(GFLT_DELTA)
        SIZES(GFLT_REF)
        SIZES(GFLT_STR)
    }
#undef SIZES
#undef CASE
    return -1;
}

/* A SPAN's start (against the previous end on the same device and stream)
 * and end, for events [i0, i1). */
static int span_block(gpufl__gflt_decoder *d, const gpufl__gflt_field *f, gfl_event *evs, const uint32_t *idx,
                      size_t i0, size_t i1, column_state *st)
{
    gpufl__gflt_field end = {f->aux, 8, 0, 0, 0, 0};
    for (size_t i = i0; i < i1; i++) {
        gfl_event *ev = &evs[idx[i]];
        uint64_t a, b;
        if (gpufl__get_varint(&st->col.p, st->col.end, &a) != 0 ||
            gpufl__get_varint(&st->durs.p, st->durs.end, &b) != 0)
            return -1;
        uint64_t key = (uint64_t)ev->h.device << 32 | gpufl__gflt_get_at(ev, f->aux2, 4);
        uint32_t j;
        uint64_t pred = gpufl__idmap_get(&d->streams, key, &j) ? gpufl__gflt_get(&evs[idx[j]], &end) : st->prev;
        uint64_t start = pred + (uint64_t)gpufl__unzigzag(a);
        gpufl__gflt_put(ev, f, start);
        gpufl__gflt_put(ev, &end, start + (uint64_t)gpufl__unzigzag(b));
        st->prev = start;
        if (gpufl__idmap_put(&d->streams, key, (uint32_t)i) != 0)
            return GPUFL_ENOMEM;
    }
    return 0;
}

/* PRED hits take their predicted fields from the last earlier event with
 * the same key. */
static int apply_predictions(gpufl__gflt_decoder *d, const gpufl__gflt_layout *l, gfl_event *evs, const uint32_t *idx,
                             size_t n)
{
    gpufl__idmap_clear(&d->keys);
    for (size_t i = 0; i < n; i++) {
        gfl_event *ev = &evs[idx[i]];
        uint64_t key = gpufl__gflt_get_at(ev, l->key, 4);
        uint32_t j;
        bool known = gpufl__idmap_get(&d->keys, key, &j);
        if (d->hit[i]) {
            if (!known)
                return -1;
            for (unsigned k = 0; k < l->nfields; k++)
                if (l->fields[k].flags & GFLT_PRED)
                    gpufl__gflt_put(ev, &l->fields[k], gpufl__gflt_get(&evs[idx[j]], &l->fields[k]));
        }
        if (gpufl__idmap_put(&d->keys, key, (uint32_t)i) != 0)
            return GPUFL_ENOMEM;
    }
    return 0;
}

/* Finds the section's columns and reads their bitmaps. present is scratch
 * of n bytes per field. */
static int open_columns(gpufl__gflt_decoder *d, const gpufl__gflt_layout *l, size_t n, cursor sec, uint8_t *present,
                        column_state *st, bool *predicted)
{
    *predicted = false;
    for (unsigned k = 0; k < l->nfields; k++) {
        const gpufl__gflt_field *f = &l->fields[k];
        memset(&st[k], 0, sizeof st[k]);
        if (sec.p == sec.end)
            continue; /* an older writer: the fields it did not have stay 0 */
        st[k].active = true;
        if (take_column(&sec, &st[k].col) != 0)
            return -1;
        if (f->codec == GFLT_SPAN && take_column(&sec, &st[k].durs) != 0)
            return -1;
        if (f->flags & GFLT_PRED) {
            if (!*predicted) {
                /* the hit bitmap is the column before the first PRED field's */
                if (read_bitmap(&st[k].col, d->hit, n) != 0 || st[k].col.p != st[k].col.end ||
                    take_column(&sec, &st[k].col) != 0)
                    return -1;
                *predicted = true;
            }
            st[k].skip = d->hit;
        }
        if (f->flags & GFLT_OPT) {
            if (read_bitmap(&st[k].col, present + (size_t)k * n, n) != 0)
                return -1;
            st[k].present = present + (size_t)k * n;
        }
    }
    /* columns past the ones this build knows (a newer writer) are ignored */
    return 0;
}

static int decode_section(gpufl__gflt_decoder *d, const gpufl__gflt_layout *l, const uint32_t *idx, size_t n,
                          cursor sec, uint32_t nstrings)
{
    column_state st[GFLT_MAX_FIELDS];
    bool predicted;
    if (open_columns(d, l, n, sec, d->present, st, &predicted) != 0)
        return -1;
    gpufl__idmap_clear(&d->streams);
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t i1 = n - i0 < BLOCK ? n : i0 + BLOCK;
        for (unsigned k = 0; k < l->nfields; k++) {
            const gpufl__gflt_field *f = &l->fields[k];
            if (!st[k].active)
                continue;
            int rc = f->codec == GFLT_SPAN ? span_block(d, f, d->evs, idx, i0, i1, &st[k])
                                           : value_block(f, d->evs, idx, i0, i1, &st[k], nstrings);
            if (rc != 0)
                return rc;
        }
    }
    for (unsigned k = 0; k < l->nfields; k++)
        if (st[k].col.p != st[k].col.end || st[k].durs.p != st[k].durs.end)
            return -1; /* a column longer than its values */
    return predicted ? apply_predictions(d, l, d->evs, idx, n) : 0;
}

static int reserve(gpufl__gflt_decoder *d, size_t n)
{
    if (d->cap < n) {
        gfl_event *e = realloc(d->evs, n * sizeof *e);
        if (!e)
            return GPUFL_ENOMEM;
        d->evs = e;
        d->cap = n;
    }
    if (d->order_cap < n) {
        uint32_t *o = realloc(d->order, n * sizeof *o);
        if (!o)
            return GPUFL_ENOMEM;
        d->order = o;
        d->order_cap = n;
    }
    if (d->hit_cap < n) {
        uint8_t *h = realloc(d->hit, n);
        uint8_t *p = h ? realloc(d->present, n * GFLT_MAX_FIELDS) : NULL;
        if (h)
            d->hit = h;
        if (!p)
            return GPUFL_ENOMEM;
        d->present = p;
        d->hit_cap = n;
    }
    return 0;
}

int gpufl__gflt_decode_events(gpufl__gflt_decoder *d, const uint8_t *payload, size_t len, uint32_t nstrings,
                              uint64_t *skipped, const char **why)
{
    cursor c = {payload, payload + len};
    uint64_t n64;
    d->n = 0;
    *skipped = 0;
    *why = "the events chunk is damaged";
    /* every event takes at least its type byte */
    if (gpufl__get_varint(&c.p, c.end, &n64) != 0 || n64 > (uint64_t)(c.end - c.p) || n64 > GFLT_MAX_CHUNK_EVENTS)
        return GPUFL_ECORRUPT;
    size_t n = (size_t)n64;
    if (reserve(d, n ? n : 1) != 0)
        return GPUFL_ENOMEM;
    const uint8_t *types = c.p;
    c.p += n;
    size_t count[256] = {0}, start[256];
    memset(d->evs, 0, n * sizeof *d->evs);
    for (size_t i = 0; i < n; i++) {
        d->evs[i].h.type = types[i];
        count[types[i]]++;
    }
    size_t at = 0;
    for (unsigned t = 0; t < 256; t++) {
        start[t] = at;
        at += count[t];
    }
    for (size_t i = 0; i < n; i++)
        d->order[start[types[i]]++] = (uint32_t)i;
    at = 0;
    for (unsigned t = 0; t < 256; t++) {
        if (!count[t])
            continue;
        cursor sec;
        if (t == GFL_EV_NONE || take_column(&c, &sec) != 0)
            return GPUFL_ECORRUPT;
        const gpufl__gflt_layout *l = gpufl__gflt_layout_of((uint8_t)t);
        if (l) {
            int rc = decode_section(d, l, d->order + at, count[t], sec, nstrings);
            if (rc != 0)
                return rc == GPUFL_ENOMEM ? GPUFL_ENOMEM : GPUFL_ECORRUPT;
        } else {
            *skipped += count[t];
        }
        at += count[t];
    }
    if (c.p != c.end)
        return GPUFL_ECORRUPT;
    /* drop the events of unknown types, keeping the order of the rest */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (gpufl__gflt_layout_of(d->evs[i].h.type))
            d->evs[kept++] = d->evs[i];
    d->n = kept;
    return 0;
}
