/*
 * A small hash map from 64-bit keys to 32-bit values, for the bookkeeping
 * of the .gflt codec (per chunk: last launch configuration of each kernel
 * name, last end time of each stream), of the trace builder (open scopes
 * by id), and of the exports' timeline, the view and the HTML report (the
 * track or lane of a thread or stream). Open addressing, linear probing,
 * grows at half full; no removal.
 *
 * Single-threaded: each user owns its map.
 */
#ifndef GPUFL_CORE_IDMAP_H
#define GPUFL_CORE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct gpufl__idmap {
    uint64_t *keys;
    uint32_t *vals; /* value + 1; 0 marks an empty slot */
    size_t mask;    /* slots - 1; 0 with no slots yet */
    size_t n;
} gpufl__idmap;

/* Empties the map, keeping its memory. */
void gpufl__idmap_clear(gpufl__idmap *m);
void gpufl__idmap_free(gpufl__idmap *m);

/* The value of key in *val: 1 found, 0 not. */
static inline int gpufl__idmap_get(const gpufl__idmap *m, uint64_t key, uint32_t *val)
{
    if (!m->mask)
        return 0;
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    for (size_t i = (size_t)(h >> 32) & m->mask;; i = (i + 1) & m->mask) {
        if (!m->vals[i])
            return 0;
        if (m->keys[i] == key) {
            *val = m->vals[i] - 1;
            return 1;
        }
    }
}

/* Sets key to val (val < UINT32_MAX). Returns 0, or GPUFL_ENOMEM with the
 * map unchanged. */
int gpufl__idmap_put(gpufl__idmap *m, uint64_t key, uint32_t val) __attribute__((warn_unused_result));

#endif /* GPUFL_CORE_IDMAP_H */
