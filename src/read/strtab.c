/*
 * A reader's string table (see strtab.h).
 */
#include "read/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"

/* A fast non-cryptographic hash over the bytes, 8 at a time. */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    if (n)
        memcpy(&w, s, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

static int add_text(gpufl__strtab *t, const char *s, size_t n)
{
    if (t->n + 1 >= t->cap_ids) {
        uint32_t cap = t->cap_ids ? t->cap_ids * 2 : 256;
        size_t *p = realloc(t->start, (size_t)cap * sizeof *p);
        if (!p)
            return GPUFL_ENOMEM;
        t->start = p;
        t->cap_ids = cap;
    }
    if (t->cap - t->len < n + 1) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap - t->len < n + 1)
            cap *= 2;
        char *b = realloc(t->bytes, cap);
        if (!b)
            return GPUFL_ENOMEM;
        t->bytes = b;
        t->cap = cap;
    }
    if (n)
        memcpy(t->bytes + t->len, s, n);
    t->bytes[t->len + n] = '\0';
    t->start[t->n] = t->len;
    t->len += n + 1;
    t->n++;
    t->start[t->n] = t->len;
    return 0;
}

int gpufl__strtab_init(gpufl__strtab *t)
{
    memset(t, 0, sizeof *t);
    return add_text(t, "", 0);
}

void gpufl__strtab_free(gpufl__strtab *t)
{
    free(t->bytes);
    free(t->start);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static uint32_t *find_slot(const gpufl__strtab *t, const char *s, size_t n, uint64_t h)
{
    for (uint32_t i = (uint32_t)h & t->mask;; i = (i + 1) & t->mask) {
        uint32_t id1 = t->slots[i];
        if (!id1)
            return &t->slots[i];
        uint32_t len;
        const char *x = gpufl__strtab_str(t, id1 - 1, &len);
        if (len == n && memcmp(x, s, n) == 0)
            return &t->slots[i];
    }
}

/* Rebuilds the hash slots for twice the strings (and for every string
 * appended without lookup so far). */
static int rehash(gpufl__strtab *t)
{
    uint32_t slots = 64;
    while (slots < t->n * 4u)
        slots *= 2;
    uint32_t *p = calloc(slots, sizeof *p);
    if (!p)
        return GPUFL_ENOMEM;
    free(t->slots);
    t->slots = p;
    t->mask = slots - 1;
    for (uint32_t id = 0; id < t->n; id++) {
        uint32_t len;
        const char *x = gpufl__strtab_str(t, id, &len);
        uint32_t *slot = find_slot(t, x, len, hash_bytes(x, len));
        if (!*slot)
            *slot = id + 1;
    }
    return 0;
}

int gpufl__strtab_intern(gpufl__strtab *t, const char *s, size_t n, uint32_t *id)
{
    if (!t->slots && rehash(t) != 0)
        return GPUFL_ENOMEM;
    uint64_t h = hash_bytes(s, n);
    uint32_t *slot = find_slot(t, s, n, h);
    if (*slot) {
        *id = *slot - 1;
        return 0;
    }
    if (add_text(t, s, n) != 0)
        return GPUFL_ENOMEM;
    *id = t->n - 1;
    *slot = t->n;
    if ((uint64_t)t->n * 2 > (uint64_t)t->mask + 1 && rehash(t) != 0) {
        /* the string is in; only the lookup structure could not grow */
        free(t->slots);
        t->slots = NULL;
    }
    return 0;
}

int gpufl__strtab_append(gpufl__strtab *t, const char *s, size_t n)
{
    if (add_text(t, s, n) != 0)
        return GPUFL_ENOMEM;
    free(t->slots); /* interning after appends rebuilds the slots */
    t->slots = NULL;
    return 0;
}

static const char *lookup_str(const void *ctx, uint32_t id, uint32_t *len) { return gpufl__strtab_str(ctx, id, len); }

gpufl__string_lookup gpufl__strtab_lookup(const gpufl__strtab *t) { return (gpufl__string_lookup){lookup_str, t}; }

const gpufl__strtab *gpufl__strtab_of(const gpufl__string_lookup *l) { return l->str == lookup_str ? l->ctx : NULL; }

size_t gpufl__strtab_memory(const gpufl__strtab *t)
{
    return t->cap + (size_t)t->cap_ids * sizeof *t->start + (t->slots ? ((size_t)t->mask + 1) * 4 : 0);
}
