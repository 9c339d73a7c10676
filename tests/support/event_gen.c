/*
 * Random events and comparisons for the trace format tests (see
 * event_gen.h).
 */
#include "event_gen.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/gflt_layout.h"
#include "format/ndjson_format.h"
#include "read/event_source.h"
#include "read/ndjson_parse.h"

uint64_t tu_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void put(gfl_event *ev, uint8_t off, uint8_t size, uint64_t v)
{
    uint8_t *p = (uint8_t *)ev + off;
    memcpy(p, &v, size); /* little-endian: the low bytes */
}

/* Random, but often small or a round number: real values are. */
static uint64_t value(uint64_t *rng, unsigned size)
{
    uint64_t r = tu_rand(rng);
    switch (r % 4) {
    case 0: r = r >> 60; break;
    case 1: r = r >> 48; break;
    case 2: r = (r >> 40) * 1000; break;
    default: break;
    }
    return size >= 8 ? r : r & ((1ull << (8 * size)) - 1);
}

bool tu_event_type_built(unsigned type) { return type < GFL_EV_TYPE_COUNT && gpufl__gflt_layout_of((uint8_t)type); }

void tu_random_event(uint64_t *rng, uint8_t type, double absent, const uint32_t *names, size_t nnames, gfl_event *ev)
{
    /* A number kept for another branch's event type (core/event.h) has
     * no layout here: the next type that has one stands in. */
    for (unsigned k = 0; k < GFL_EV_TYPE_COUNT && type && !tu_event_type_built(type); k++)
        type = (uint8_t)(type + 1 < GFL_EV_TYPE_COUNT ? type + 1 : 1);
    memset(ev, 0, sizeof *ev);
    /* numbers held for event types of other branches (core/event.h) have
     * no layout yet: the nearest type below that has one stands in */
    while (type > 1 && !gpufl__gflt_layout_of(type))
        type--;
    ev->h.type = type;
    const gpufl__gflt_layout *l = gpufl__gflt_layout_of(type);
    assert_non_null(l);
    for (unsigned k = 0; k < l->nfields; k++) {
        const gpufl__gflt_field *f = &l->fields[k];
        if ((f->flags & GFLT_OPT) && (double)(tu_rand(rng) % 1000) < absent * 1000)
            continue;
        uint64_t v;
        if (f->codec == GFLT_STR)
            v = names[tu_rand(rng) % nnames];
        else if (f->off == offsetof(gfl_event, h.ts))
            v = 1000000000000ull + (tu_rand(rng) >> 24);
        else
            v = value(rng, f->size);
        if ((f->flags & GFLT_OPT) && v == 0)
            v = 1;
        put(ev, f->off, f->size, v);
        if (f->codec == GFLT_SPAN) /* the end: after the start, mostly */
            put(ev, f->aux, 8, v + (tu_rand(rng) % 7 ? tu_rand(rng) % 100000 : 0));
    }
}

static uint64_t get(const gfl_event *ev, uint8_t off, uint8_t size)
{
    uint64_t v = 0;
    memcpy(&v, (const uint8_t *)ev + off, size);
    return v;
}

const char *tu_event_diff(const gfl_event *a, const gpufl__string_lookup *la, const gfl_event *b,
                          const gpufl__string_lookup *lb)
{
    static char msg[1024];
    if (a->h.type != b->h.type) {
        snprintf(msg, sizeof msg, "type %u != %u", a->h.type, b->h.type);
        return msg;
    }
    const gpufl__gflt_layout *l = gpufl__gflt_layout_of(a->h.type);
    if (!l) {
        snprintf(msg, sizeof msg, "type %u has no layout", a->h.type);
        return msg;
    }
    for (unsigned k = 0; k < l->nfields; k++) {
        const gpufl__gflt_field *f = &l->fields[k];
        for (int part = 0; part < (f->codec == GFLT_SPAN ? 2 : 1); part++) {
            uint8_t off = part ? f->aux : f->off, size = part ? 8 : f->size;
            uint64_t x = get(a, off, size), y = get(b, off, size);
            if (f->codec == GFLT_STR) {
                const char *sx = gpufl__lookup(la, (uint32_t)x, NULL);
                const char *sy = gpufl__lookup(lb, (uint32_t)y, NULL);
                if (strcmp(sx, sy) != 0) {
                    snprintf(msg, sizeof msg, "%s: string at offset %u: \"%.200s\" != \"%.200s\"",
                             gpufl__event_type_name(a->h.type), off, sx, sy);
                    return msg;
                }
            } else if (x != y) {
                snprintf(msg, sizeof msg, "%s: field at offset %u (%u bytes): %llu != %llu",
                         gpufl__event_type_name(a->h.type), off, size, (unsigned long long)x, (unsigned long long)y);
                return msg;
            }
        }
    }
    return NULL;
}

long tu_read_events(const void *data, size_t n, const char *name, const gfl_event *expect, size_t nexpect,
                    const gpufl__string_lookup *lookup, gpufl__event_source **keep, char *err, size_t err_len)
{
    gpufl__event_source *s;
    int rc = gpufl__source_open_memory(data, n, name, &s, err, err_len);
    if (rc != 0)
        return rc;
    const gfl_event *ev;
    long count = 0;
    while ((rc = gpufl__source_next(s, &ev)) == 1) {
        if (expect && (size_t)count < nexpect) {
            const char *diff = tu_event_diff(&expect[count], lookup, ev, &s->strings);
            if (diff)
                fail_msg("event %ld: %s", count, diff);
        }
        count++;
    }
    if (rc < 0) {
        snprintf(err, err_len, "%s", s->err);
        gpufl__source_close(s);
        return rc;
    }
    if (keep)
        *keep = s;
    else
        gpufl__source_close(s);
    return count;
}

void tu_ndjson_roundtrip(const gfl_event *ev, const gpufl__string_lookup *names, gpufl__strtab *into, gfl_event *out)
{
    char *line = malloc(gpufl__ndjson_bound(ev, names));
    assert_non_null(line);
    size_t n = gpufl__ndjson_format(ev, names, line);
    gpufl__ndjson_parser p;
    gpufl__ndjson_parser_init(&p, into);
    gpufl__meta_line meta;
    char why[512];
    int kind = gpufl__ndjson_parse_line(&p, line, n - 1, out, &meta, why, sizeof why);
    if (kind != GFL_LINE_EVENT)
        fail_msg("%.*s does not parse back (%d): %s", (int)(n > 300 ? 300 : n), line, kind, why);
    gpufl__ndjson_parser_free(&p);
    free(line);
}
