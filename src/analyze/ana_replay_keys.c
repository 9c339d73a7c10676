/*
 * Op descriptions of `gpufl replay-check` interned across two traces
 * (ana_replay_internal.h): string ids differ between traces, so a kernel's
 * name is hashed and compared as text, once per distinct description;
 * lanes then compare 32-bit ids. A training step has a few hundred
 * distinct kernels and sizes, so the table stays small; it grows by one
 * entry per distinct description, never per op looked up.
 *
 * The hash map holds (hash, probe) pairs: a key whose hash is taken by
 * another description tries probe 1, 2, ... so that equality is always
 * checked on the fields and the text, never assumed from the hash.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_replay_internal.h"
#include "gpufl/gpufl.h"

static const char empty_name[] = "";

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t key_hash(const gpufl__rp_key *k)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = mix(h, (uint64_t)k->what | (uint64_t)k->kind << 8 | (uint64_t)k->src_kind << 16 | (uint64_t)k->dst_kind << 24 |
                   (uint64_t)k->graph << 32 | (uint64_t)k->failed << 40);
    for (int d = 0; d < 3; d++)
        h = mix(h, (uint64_t)k->grid[d] << 32 | k->block[d]);
    h = mix(h, (uint64_t)k->registers << 32 | k->value);
    h = mix(h, (uint64_t)k->smem_static << 32 | k->smem_dynamic);
    h = mix(h, k->bytes);
    h = mix(h, k->reserved);
    for (const unsigned char *p = (const unsigned char *)(k->name ? k->name : ""); *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

static bool key_equal(const gpufl__rp_key *x, const gpufl__rp_key *y)
{
    if (x->what != y->what || x->kind != y->kind || x->src_kind != y->src_kind || x->dst_kind != y->dst_kind ||
        x->graph != y->graph || x->failed != y->failed || x->registers != y->registers || x->value != y->value ||
        x->smem_static != y->smem_static || x->smem_dynamic != y->smem_dynamic || x->bytes != y->bytes ||
        x->reserved != y->reserved)
        return false;
    for (int d = 0; d < 3; d++)
        if (x->grid[d] != y->grid[d] || x->block[d] != y->block[d])
            return false;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "") == 0;
}

int gpufl__rp_key_intern(gpufl__rp_keys *ks, const gpufl__rp_key *k, uint32_t *id)
{
    uint64_t h = key_hash(k);
    for (uint64_t probe = 0;; probe++) {
        uint32_t v;
        if (!gpufl__ana_map_get(&ks->map, h, probe, &v))
            break;
        if (key_equal(&ks->v[v], k)) {
            *id = v;
            return 0;
        }
    }
    if (ks->n >= UINT32_MAX - 1)
        return GPUFL_ENOMEM;
    if (gpufl__ana_grow(&ks->v, &ks->cap, ks->n + 1, sizeof *ks->v) != 0)
        return GPUFL_ENOMEM;
    gpufl__rp_key copy = *k;
    copy.name = empty_name;
    if (k->name && *k->name && !(copy.name = strdup(k->name)))
        return GPUFL_ENOMEM;
    uint64_t probe = 0;
    uint32_t got;
    for (;; probe++) {
        int rc = gpufl__ana_map_put(&ks->map, h, probe, (uint32_t)ks->n, &got);
        if (rc < 0) {
            if (copy.name != empty_name)
                free((char *)copy.name);
            return GPUFL_ENOMEM;
        }
        if (rc == 0)
            break;
    }
    ks->v[ks->n] = copy;
    *id = (uint32_t)ks->n++;
    return 0;
}

void gpufl__rp_keys_free_array(gpufl__rp_key *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].name != empty_name)
            free((char *)v[i].name);
    free(v);
}

void gpufl__rp_keys_give(gpufl__rp_keys *ks, gpufl__replay *r)
{
    r->keys = ks->v;
    r->nkeys = ks->n;
    gpufl__ana_map_free(&ks->map);
    memset(ks, 0, sizeof *ks);
}

void gpufl__rp_keys_free(gpufl__rp_keys *ks)
{
    gpufl__rp_keys_free_array(ks->v, ks->n);
    gpufl__ana_map_free(&ks->map);
    memset(ks, 0, sizeof *ks);
}
