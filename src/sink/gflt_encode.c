/*
 * .gflt payload encoding (see gflt_encode.h, gflt_layout.h and
 * docs/FORMAT.md, "Events chunk").
 *
 *   payload  = varint n, n type bytes, then per type present (ascending):
 *              varint section length, section
 *   section  = the type's columns in layout order, each: varint length, bytes
 *
 * Predictions (previous value, previous end on a stream, last launch of a
 * kernel name) start afresh in every chunk, so a chunk decodes on its own.
 */
#include "sink/gflt_encode.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/varint.h"
#include "format/gflt_format.h"
#include "format/gflt_layout.h"
#include "gpufl/gpufl.h"

void gpufl__gflt_encoder_init(gpufl__gflt_encoder *e)
{
    memset(e, 0, sizeof *e);
    e->next_file_id = 1;
}

void gpufl__gflt_encoder_free(gpufl__gflt_encoder *e)
{
    gpufl__idmap_free(&e->file_ids);
    gpufl__idmap_free(&e->keys);
    gpufl__idmap_free(&e->streams);
    free(e->pending);
    free(e->order);
    free(e->hit);
    free(e->vals);
    free(e->refs);
    gpufl__bytebuf_free(&e->col);
    gpufl__bytebuf_free(&e->sec);
    for (unsigned k = 0; k < GFLT_MAX_FIELDS; k++) {
        gpufl__bytebuf_free(&e->cols[k].bits);
        gpufl__bytebuf_free(&e->cols[k].vals);
    }
    memset(e, 0, sizeof *e);
}

/* ---- strings ------------------------------------------------------------ */

/* The file id of source string id, queueing the string when it is new. */
static int file_id(gpufl__gflt_encoder *e, uint32_t source_id, uint32_t *out)
{
    if (source_id == 0) {
        *out = 0;
        return 0;
    }
    if (gpufl__idmap_get(&e->file_ids, source_id, out))
        return 0;
    if (e->npending == e->pending_cap) {
        size_t cap = e->pending_cap ? e->pending_cap * 2 : 256;
        uint32_t *p = realloc(e->pending, cap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        e->pending = p;
        e->pending_cap = cap;
    }
    if (gpufl__idmap_put(&e->file_ids, source_id, e->next_file_id) != 0)
        return GPUFL_ENOMEM;
    e->pending[e->npending++] = source_id;
    *out = e->next_file_id++;
    return 0;
}

int gpufl__gflt_encode_strings(gpufl__gflt_encoder *e, const gpufl__string_lookup *names, gpufl__bytebuf *out)
{
    uint32_t first = e->next_file_id - (uint32_t)e->npending;
    if (gpufl__bytebuf_varint(out, first) != 0 || gpufl__bytebuf_varint(out, e->npending) != 0)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < e->npending; i++) {
        uint32_t len = 0;
        const char *s = gpufl__lookup(names, e->pending[i], &len);
        if (len > GFLT_MAX_STRING_BYTES)
            len = GFLT_MAX_STRING_BYTES;
        if (gpufl__bytebuf_varint(out, len) != 0 || gpufl__bytebuf_append(out, s, len) != 0)
            return GPUFL_ENOMEM;
    }
    e->npending = 0;
    return 0;
}

/* ---- columns ------------------------------------------------------------ */

static int64_t sign_extend(uint64_t v, unsigned size)
{
    switch (size) {
    case 1: return (int8_t)v;
    case 2: return (int16_t)v;
    case 4: return (int32_t)v;
    default: return (int64_t)v;
    }
}

/* Appends the column in e->col to e->sec, length first. */
static int end_column(gpufl__gflt_encoder *e)
{
    if (gpufl__bytebuf_varint(&e->sec, e->col.len) != 0 || gpufl__bytebuf_append(&e->sec, e->col.p, e->col.len) != 0)
        return GPUFL_ENOMEM;
    e->col.len = 0;
    return 0;
}

static void put_bitmap(uint8_t *p, const uint8_t *bits, size_t n)
{
    memset(p, 0, (n + 7) / 8);
    for (size_t i = 0; i < n; i++)
        p[i / 8] |= (uint8_t)(bits[i] << (i % 8));
}

/* v[i] = the size-byte field at byte off of event idx[i], zero-extended:
 * one pass per column with the field's size known, so that coding runs
 * over a plain array instead of reaching into 128-byte events through a
 * switch per value. */
static void gather(uint64_t *v, const gfl_event *evs, const uint32_t *idx, size_t n, unsigned off, unsigned size)
{
    const uint8_t *at = (const uint8_t *)evs + off;
    switch (size) {
    case 1:
        for (size_t i = 0; i < n; i++)
            v[i] = gpufl__uint_get(at + (size_t)idx[i] * sizeof *evs, 1);
        break;
    case 2:
        for (size_t i = 0; i < n; i++)
            v[i] = gpufl__uint_get(at + (size_t)idx[i] * sizeof *evs, 2);
        break;
    case 4:
        for (size_t i = 0; i < n; i++)
            v[i] = gpufl__uint_get(at + (size_t)idx[i] * sizeof *evs, 4);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            v[i] = gpufl__uint_get(at + (size_t)idx[i] * sizeof *evs, 8);
        break;
    }
}

/* Room for n values in e->vals and e->refs. */
static int have_values(gpufl__gflt_encoder *e, size_t n)
{
    if (e->vals_cap >= n)
        return 0;
    uint64_t *v = realloc(e->vals, n * sizeof *v), *r = v ? realloc(e->refs, n * sizeof *r) : NULL;
    if (v)
        e->vals = v;
    if (!r)
        return GPUFL_ENOMEM;
    e->refs = r;
    e->vals_cap = n;
    return 0;
}

/* Keeps the rows written (not a PRED hit when skip is given, not a zero of
 * an OPT column) at the front of v, and of r when given; returns their
 * count. No branch per row, and a loop per case, so that coding then runs
 * over just the rows it writes. */
static size_t keep_rows(uint64_t *v, uint64_t *r, size_t n, const uint8_t *skip, bool opt)
{
    size_t m = 0;
    if (skip && !opt && !r) {
        for (size_t i = 0; i < n; i++) {
            v[m] = v[i];
            m += !skip[i];
        }
    } else if (!skip && opt && !r) {
        for (size_t i = 0; i < n; i++) {
            v[m] = v[i];
            m += v[i] != 0;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            bool keep = !(skip && skip[i]) && !(opt && v[i] == 0);
            v[m] = v[i];
            if (r)
                r[m] = r[i];
            m += keep;
        }
    }
    return m;
}

/* Rows per block of the value columns: their events, 256 KiB, stay in the
 * CPU's L2 cache while every column takes its values from them, where
 * whole-section passes fetched each event once per column from further
 * out (16384-event chunks hold 2 MiB of events). */
#define BLOCK_ROWS 2048
_Static_assert(BLOCK_ROWS % 8 == 0, "blocks start on a byte of the OPT bitmaps");

/* Codes rows [row0, row0 + nrows) of the column of field f (of a section
 * of n rows) onto c: OPT bits at their rows, the values of the rows
 * written (skip[i] == 0 when skip is given: the PRED misses) after the
 * ones before. */
static int column_rows(gpufl__gflt_encoder *e, const gpufl__gflt_field *f, gpufl__gflt_colbuf *c, const gfl_event *evs,
                       const uint32_t *idx, size_t row0, size_t nrows, const uint8_t *skip)
{
    bool opt = (f->flags & GFLT_OPT) != 0;
    if (have_values(e, nrows) != 0 || gpufl__bytebuf_reserve(&c->vals, nrows * GFL_VARINT_MAX) != 0)
        return GPUFL_ENOMEM;
    uint64_t *v = e->vals, *r = e->refs;
    size_t n = nrows;
    idx += row0;
    if (skip)
        skip += row0;
    gather(v, evs, idx, n, f->off, f->size);
    if (f->codec == GFLT_REF)
        gather(r, evs, idx, n, f->aux, 8);
    if (opt) {
        /* blocks start on a byte (BLOCK_ROWS % 8 == 0): whole bytes, then
         * the last one's rows */
        uint8_t *bits = c->bits.p + row0 / 8;
        size_t i = 0;
        for (; i + 8 <= n; i += 8)
            *bits++ =
                (uint8_t)((v[i] != 0) | (v[i + 1] != 0) << 1 | (v[i + 2] != 0) << 2 | (v[i + 3] != 0) << 3 |
                          (v[i + 4] != 0) << 4 | (v[i + 5] != 0) << 5 | (v[i + 6] != 0) << 6 | (v[i + 7] != 0) << 7);
        for (; i < n; i++)
            *bits |= (uint8_t)((v[i] != 0) << (i % 8));
    }
    size_t m = skip || opt ? keep_rows(v, f->codec == GFLT_REF ? r : NULL, n, skip, opt) : n;
    uint8_t *p = c->vals.p + c->vals.len;
    switch (f->codec) {
    case GFLT_SVAR:
        for (size_t i = 0; i < m; i++)
            p = gpufl__put_varint(p, gpufl__zigzag(sign_extend(v[i], f->size)));
        break;
    case GFLT_DELTA:
        for (size_t i = 0; i < m; i++) {
            p = gpufl__put_varint(p, gpufl__zigzag((int64_t)(v[i] - c->prev)));
            c->prev = v[i];
        }
        break;
    case GFLT_REF:
        for (size_t i = 0; i < m; i++)
            p = gpufl__put_varint(p, gpufl__zigzag((int64_t)(v[i] - r[i])));
        break;
    case GFLT_STR:
        for (size_t i = 0; i < m; i++) {
            uint32_t id;
            if (file_id(e, (uint32_t)v[i], &id) != 0)
                return GPUFL_ENOMEM;
            p = gpufl__put_varint(p, id);
        }
        break;
    default:
        for (size_t i = 0; i < m; i++)
            p = gpufl__put_varint(p, v[i]);
        break;
    }
    c->vals.len = (size_t)(p - c->vals.p);
    return 0;
}

/* An empty column of field f over n rows: OPT bits all clear. */
static int column_start(const gpufl__gflt_field *f, gpufl__gflt_colbuf *c, size_t n)
{
    size_t bitmap = (f->flags & GFLT_OPT) ? (n + 7) / 8 : 0;
    c->vals.len = 0;
    c->bits.len = 0;
    c->prev = 0;
    if (gpufl__bytebuf_reserve(&c->bits, bitmap) != 0)
        return GPUFL_ENOMEM;
    if (bitmap)
        memset(c->bits.p, 0, bitmap);
    c->bits.len = bitmap;
    return 0;
}

/* Appends column c to e->sec: its length, the OPT bitmap, the values. */
static int column_end(gpufl__gflt_encoder *e, const gpufl__gflt_colbuf *c)
{
    if (gpufl__bytebuf_varint(&e->sec, c->bits.len + c->vals.len) != 0 ||
        gpufl__bytebuf_append(&e->sec, c->bits.p, c->bits.len) != 0 ||
        gpufl__bytebuf_append(&e->sec, c->vals.p, c->vals.len) != 0)
        return GPUFL_ENOMEM;
    return 0;
}

/* The two columns of a SPAN field: start against the previous end on the
 * same device and stream, then the duration. */
static int span_columns(gpufl__gflt_encoder *e, const gpufl__gflt_field *f, const gfl_event *evs, const uint32_t *idx,
                        size_t n)
{
    gpufl__idmap_clear(&e->streams);
    if (gpufl__bytebuf_reserve(&e->col, n * GFL_VARINT_MAX) != 0)
        return GPUFL_ENOMEM;
    uint8_t *p = e->col.p;
    uint64_t prev_start = 0;
    for (size_t i = 0; i < n; i++) {
        const gfl_event *ev = &evs[idx[i]];
        uint64_t start = gpufl__gflt_get(ev, f);
        uint64_t key = (uint64_t)ev->h.device << 32 | gpufl__gflt_get_at(ev, f->aux2, 4);
        uint32_t j;
        uint64_t pred =
            gpufl__idmap_get(&e->streams, key, &j) ? gpufl__gflt_get_at(&evs[idx[j]], f->aux, 8) : prev_start;
        p = gpufl__put_varint(p, gpufl__zigzag((int64_t)(start - pred)));
        prev_start = start;
        if (gpufl__idmap_put(&e->streams, key, (uint32_t)i) != 0)
            return GPUFL_ENOMEM;
    }
    e->col.len = (size_t)(p - e->col.p);
    if (end_column(e) != 0 || gpufl__bytebuf_reserve(&e->col, n * GFL_VARINT_MAX) != 0)
        return GPUFL_ENOMEM;
    p = e->col.p;
    for (size_t i = 0; i < n; i++) {
        const gfl_event *ev = &evs[idx[i]];
        p = gpufl__put_varint(p, gpufl__zigzag((int64_t)(gpufl__gflt_get_at(ev, f->aux, 8) - gpufl__gflt_get(ev, f))));
    }
    e->col.len = (size_t)(p - e->col.p);
    return end_column(e);
}

static int pred_equal(const gpufl__gflt_layout *l, const gfl_event *a, const gfl_event *b)
{
    for (unsigned k = 0; k < l->nfields; k++) {
        const gpufl__gflt_field *f = &l->fields[k];
        if ((f->flags & GFLT_PRED) && gpufl__gflt_get(a, f) != gpufl__gflt_get(b, f))
            return 0;
    }
    return 1;
}

/* The PRED hits: hit[i] = 1 when event i's predicted fields equal those
 * of the last earlier event with its key. */
static int pred_hits(gpufl__gflt_encoder *e, const gpufl__gflt_layout *l, const gfl_event *evs, const uint32_t *idx,
                     size_t n)
{
    gpufl__idmap_clear(&e->keys);
    for (size_t i = 0; i < n; i++) {
        const gfl_event *ev = &evs[idx[i]];
        uint64_t key = gpufl__gflt_get_at(ev, l->key, 4);
        uint32_t j;
        e->hit[i] = gpufl__idmap_get(&e->keys, key, &j) && pred_equal(l, ev, &evs[idx[j]]);
        if (gpufl__idmap_put(&e->keys, key, (uint32_t)i) != 0)
            return GPUFL_ENOMEM;
    }
    return 0;
}

/* The PRED bitmap column, from hit[]. */
static int pred_column(gpufl__gflt_encoder *e, size_t n)
{
    if (gpufl__bytebuf_reserve(&e->col, (n + 7) / 8) != 0)
        return GPUFL_ENOMEM;
    put_bitmap(e->col.p, e->hit, n);
    e->col.len = (n + 7) / 8;
    return end_column(e);
}

/* Whether field f's column is coded block by block: not a SPAN (its own
 * pass, with its map of streams), not a string: file ids are handed out in
 * the order strings are first used, column after column, and blocks would
 * change that order (a valid file still, but other bytes than before). */
static bool blocked(const gpufl__gflt_field *f) { return f->codec != GFLT_SPAN && f->codec != GFLT_STR; }

/* The section of one type: its columns, in layout order. */
static int encode_section(gpufl__gflt_encoder *e, const gpufl__gflt_layout *l, const gfl_event *evs,
                          const uint32_t *idx, size_t n)
{
    if (e->hit_cap < n) {
        uint8_t *h = realloc(e->hit, n);
        if (!h)
            return GPUFL_ENOMEM;
        e->hit = h;
        e->hit_cap = n;
    }
    bool predicted = false;
    for (unsigned k = 0; k < l->nfields; k++)
        if ((l->fields[k].flags & GFLT_PRED) && !predicted) {
            if (pred_hits(e, l, evs, idx, n) != 0)
                return GPUFL_ENOMEM;
            predicted = true;
        }
    for (unsigned k = 0; k < l->nfields; k++)
        if (blocked(&l->fields[k]) && column_start(&l->fields[k], &e->cols[k], n) != 0)
            return GPUFL_ENOMEM;
    for (size_t row0 = 0; row0 < n; row0 += BLOCK_ROWS) {
        size_t rows = n - row0 < BLOCK_ROWS ? n - row0 : BLOCK_ROWS;
        for (unsigned k = 0; k < l->nfields; k++) {
            const gpufl__gflt_field *f = &l->fields[k];
            if (blocked(f) &&
                column_rows(e, f, &e->cols[k], evs, idx, row0, rows, (f->flags & GFLT_PRED) ? e->hit : NULL) != 0)
                return GPUFL_ENOMEM;
        }
    }
    int rc = 0;
    predicted = false;
    for (unsigned k = 0; k < l->nfields && rc == 0; k++) {
        const gpufl__gflt_field *f = &l->fields[k];
        if ((f->flags & GFLT_PRED) && !predicted) {
            if ((rc = pred_column(e, n)) != 0)
                break;
            predicted = true;
        }
        if (f->codec == GFLT_SPAN) {
            rc = span_columns(e, f, evs, idx, n);
        } else if (f->codec == GFLT_STR) {
            gpufl__gflt_colbuf *c = &e->cols[k];
            if ((rc = column_start(f, c, n)) == 0 &&
                (rc = column_rows(e, f, c, evs, idx, 0, n, (f->flags & GFLT_PRED) ? e->hit : NULL)) == 0)
                rc = column_end(e, c);
        } else {
            rc = column_end(e, &e->cols[k]);
        }
    }
    return rc;
}

int gpufl__gflt_encode_events(gpufl__gflt_encoder *e, const gfl_event *evs, size_t n, gpufl__bytebuf *out)
{
    size_t count[GFL_EV_TYPE_COUNT] = {0}, start[GFL_EV_TYPE_COUNT];
    for (size_t i = 0; i < n; i++) {
        if (!gpufl__gflt_layout_of(evs[i].h.type))
            return GPUFL_EINVAL;
        count[evs[i].h.type]++;
    }
    if (e->order_cap < n) {
        uint32_t *o = realloc(e->order, n * sizeof *o);
        if (!o)
            return GPUFL_ENOMEM;
        e->order = o;
        e->order_cap = n;
    }
    size_t at = 0;
    for (unsigned t = 0; t < GFL_EV_TYPE_COUNT; t++) {
        start[t] = at;
        at += count[t];
    }
    for (size_t i = 0; i < n; i++)
        e->order[start[evs[i].h.type]++] = (uint32_t)i;

    if (gpufl__bytebuf_varint(out, n) != 0 || gpufl__bytebuf_reserve(out, n) != 0)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < n; i++)
        out->p[out->len++] = evs[i].h.type;
    at = 0;
    for (unsigned t = 0; t < GFL_EV_TYPE_COUNT; t++) {
        if (!count[t])
            continue;
        e->sec.len = 0;
        int rc = encode_section(e, gpufl__gflt_layout_of((uint8_t)t), evs, e->order + at, count[t]);
        if (rc != 0)
            return rc;
        if (gpufl__bytebuf_varint(out, e->sec.len) != 0 || gpufl__bytebuf_append(out, e->sec.p, e->sec.len) != 0)
            return GPUFL_ENOMEM;
        at += count[t];
    }
    return 0;
}
