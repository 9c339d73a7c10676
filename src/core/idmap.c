/*
 * 64-bit key -> 32-bit value map (see idmap.h).
 */
#include "core/idmap.h"

#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"

#define MIN_SLOTS 64

void gpufl__idmap_clear(gpufl__idmap *m)
{
    if (m->mask)
        memset(m->vals, 0, (m->mask + 1) * sizeof *m->vals);
    m->n = 0;
}

void gpufl__idmap_free(gpufl__idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* The slot of key, or the empty slot where it would go. */
static size_t slot_of(const uint64_t *keys, const uint32_t *vals, size_t mask, uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 32) & mask;
    while (vals[i] && keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

static int grow(gpufl__idmap *m)
{
    size_t slots = m->mask ? (m->mask + 1) * 2 : MIN_SLOTS;
    uint64_t *keys = malloc(slots * sizeof *keys);
    uint32_t *vals = calloc(slots, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return GPUFL_ENOMEM;
    }
    for (size_t i = 0; m->mask && i <= m->mask; i++)
        if (m->vals[i]) {
            size_t j = slot_of(keys, vals, slots - 1, m->keys[i]);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->mask = slots - 1;
    return 0;
}

int gpufl__idmap_put(gpufl__idmap *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->mask + 1 && grow(m) != 0)
        return GPUFL_ENOMEM;
    size_t i = slot_of(m->keys, m->vals, m->mask, key);
    if (!m->vals[i])
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val + 1;
    return 0;
}
