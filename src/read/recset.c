/*
 * The record set (see recset.h).
 */
#include "read/recset.h"

#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"

void gpufl__recset_init(gpufl__recset *s, uint32_t size)
{
    memset(s, 0, sizeof *s);
    s->size = size;
}

void gpufl__recset_free(gpufl__recset *s)
{
    free(s->recs);
    free(s->slots);
    uint32_t size = s->size;
    gpufl__recset_init(s, size);
}

uint32_t gpufl__recset_hash(const void *rec, uint32_t size)
{
    const uint8_t *p = rec;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ size;
    for (uint32_t i = 0; i < size; i += 4) {
        uint32_t w;
        memcpy(&w, p + i, 4);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return (uint32_t)(h >> 32);
}

/* Makes room in recs for record n, doubling the array. Refuses a record
 * n of UINT32_MAX - 1, so that n + 1 (a slot's value) fits 32 bits.
 * 0 or GPUFL_ENOMEM (s unchanged). */
static int room_for_one_more(gpufl__recset *s)
{
    if (s->n == UINT32_MAX - 1)
        return GPUFL_ENOMEM;
    if (s->n < s->cap)
        return 0;
    uint32_t cap = s->cap ? s->cap * 2 : 16;
    uint8_t *p = realloc(s->recs, (size_t)cap * s->size);
    if (!p)
        return GPUFL_ENOMEM;
    s->recs = p;
    s->cap = cap;
    return 0;
}

/* Rebuilds the slots for 4 x n records (at least 64). 0 or GPUFL_ENOMEM. */
static int rehash(gpufl__recset *s, uint32_t n)
{
    uint32_t slots = 64;
    while (slots < n * 4u)
        slots *= 2;
    uint32_t *v = calloc(slots, sizeof *v);
    if (!v)
        return GPUFL_ENOMEM;
    for (uint32_t r = 0; r < s->n; r++) {
        uint32_t i = gpufl__recset_hash(gpufl__recset_at(s, r), s->size) & (slots - 1);
        while (v[i])
            i = (i + 1) & (slots - 1);
        v[i] = r + 1;
    }
    free(s->slots);
    s->slots = v;
    s->mask = slots - 1;
    return 0;
}

int gpufl__recset_put(gpufl__recset *s, const void *rec, uint32_t *index)
{
    uint32_t h = gpufl__recset_hash(rec, s->size);
    if (s->mask) {
        for (uint32_t i = h & s->mask; s->slots[i]; i = (i + 1) & s->mask) {
            uint32_t r = s->slots[i] - 1;
            if (memcmp(gpufl__recset_at(s, r), rec, s->size) == 0) {
                *index = r;
                return 0;
            }
        }
    }
    if (room_for_one_more(s) != 0)
        return GPUFL_ENOMEM;
    if ((s->n + 1) * 2 > s->mask && rehash(s, s->n + 1) != 0)
        return GPUFL_ENOMEM;
    memcpy(s->recs + (size_t)s->n * s->size, rec, s->size);
    uint32_t i = h & s->mask;
    while (s->slots[i])
        i = (i + 1) & s->mask;
    s->slots[i] = s->n + 1;
    *index = s->n++;
    return 0;
}

int gpufl__recset_append(gpufl__recset *s, const void *rec)
{
    if (s->slots) {
        uint32_t index;
        return gpufl__recset_put(s, rec, &index);
    }
    if (room_for_one_more(s) != 0)
        return GPUFL_ENOMEM;
    memcpy(s->recs + (size_t)s->n++ * s->size, rec, s->size);
    return 0;
}

size_t gpufl__recset_memory(const gpufl__recset *s)
{
    return (size_t)s->cap * s->size + (s->mask ? ((size_t)s->mask + 1) * sizeof *s->slots : 0);
}
