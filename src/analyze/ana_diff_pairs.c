/*
 * Launches of one configuration matched between two sessions by program
 * point (ana_diff_pairs.h says why and how). Each round numbers its keys
 * with a hash map, buckets both sides' unmatched launches by key with a
 * counting sort (stable, so each bucket stays in start order) and pairs
 * the buckets' heads.
 */
#include "analyze/ana_diff_pairs.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "gpufl/gpufl.h"

#define PAIRED UINT32_MAX        /* a launch matched in an earlier round */
#define UNKEYED (UINT32_MAX - 1) /* a candidate launch whose key the baseline lacks */
#define RATIO_MAX (1ull << 62)   /* far beyond any real ratio; keeps sums in range */

/* The part of a program point each round matches on. */
static const uint64_t round_mask[] = {UINT64_MAX, 0xffffffff00000000ull, 0x00000000ffffffffull};
#define ROUNDS (sizeof round_mask / sizeof round_mask[0])

void gpufl__diff_pairs_free(gpufl__diff_pairs *p)
{
    free(p->ratio);
    free(p->at);
    free(p->weight);
    free(p->scratch);
    memset(p, 0, sizeof *p);
}

static uint64_t ratio_of(uint64_t base, uint64_t cand)
{
    double r = (double)(cand ? cand : 1) / (double)(base ? base : 1) * (double)GPUFL__DIFF_RATIO_ONE;
    return r < (double)RATIO_MAX ? (uint64_t)llround(r) : RATIO_MAX;
}

/* The scratch of one call: per launch its key number this round (or
 * PAIRED, UNKEYED), the launches in key order, and per key the ends of
 * its bucket. */
typedef struct scratch {
    uint32_t *gb, *gc; /* nb, nc */
    uint32_t *ob, *oc; /* nb, nc */
    uint32_t *eb, *ec; /* nb + 1 each: keys number at most nb */
} scratch;

/* Counting sort of the n launches whose key number g[i] is below ng into
 * o, by key, in start order; e[k] becomes the end of key k's bucket (its
 * start is e[k - 1], or 0). */
static void bucket(const uint32_t *g, size_t n, uint32_t ng, uint32_t *o, uint32_t *e)
{
    memset(e, 0, ((size_t)ng + 1) * sizeof *e);
    for (size_t i = 0; i < n; i++)
        if (g[i] < ng)
            e[g[i] + 1]++;
    for (uint32_t k = 0; k < ng; k++)
        e[k + 1] += e[k];
    for (size_t i = 0; i < n; i++)
        if (g[i] < ng)
            o[e[g[i]]++] = (uint32_t)i;
}

/* One round with mask: numbers the keys of the baseline's unmatched
 * launches, keys the candidate's, pairs each key's buckets in order. */
static int match_round(gpufl__diff_pairs *p, scratch *s, uint64_t mask, const gpufl__diff_launch *b, size_t nb,
                       const gpufl__diff_launch *c, size_t nc)
{
    ana_map m = {0};
    uint32_t ng = 0;
    for (size_t i = 0; i < nb; i++) {
        if (s->gb[i] == PAIRED)
            continue;
        int rc = gpufl__ana_map_put(&m, 0, b[i].point & mask, ng, &s->gb[i]);
        if (rc < 0) {
            gpufl__ana_map_free(&m);
            return rc;
        }
        ng += rc == 0;
    }
    for (size_t j = 0; j < nc; j++)
        if (s->gc[j] != PAIRED && !gpufl__ana_map_get(&m, 0, c[j].point & mask, &s->gc[j]))
            s->gc[j] = UNKEYED;
    gpufl__ana_map_free(&m);
    bucket(s->gb, nb, ng, s->ob, s->eb);
    bucket(s->gc, nc, ng, s->oc, s->ec);
    for (uint32_t k = 0; k < ng; k++) {
        uint32_t b0 = k ? s->eb[k - 1] : 0, c0 = k ? s->ec[k - 1] : 0;
        uint32_t nk = s->eb[k] - b0 < s->ec[k] - c0 ? s->eb[k] - b0 : s->ec[k] - c0;
        if (nk == 0)
            continue;
        uint64_t w = 0;
        for (uint32_t t = 0; t < nk; t++) {
            uint32_t i = s->ob[b0 + t], j = s->oc[c0 + t];
            p->ratio[p->n++] = ratio_of(b[i].dur, c[j].dur);
            w += b[i].dur;
            s->gb[i] = s->gc[j] = PAIRED;
        }
        p->weight[p->ngroups++] = w;
        p->at[p->ngroups] = p->n;
    }
    return 0;
}

int gpufl__diff_pairs_match(gpufl__diff_pairs *p, const gpufl__diff_launch *b, size_t nb, const gpufl__diff_launch *c,
                            size_t nc)
{
    p->n = p->ngroups = 0;
    size_t most = nb < nc ? nb : nc;
    /* the counting sort's indices are 32-bit: a configuration launched 4 G
     * times in one session is not paired (it is compared by medians) */
    if (most == 0 || nb >= UINT32_MAX - 1 || nc >= UINT32_MAX - 1)
        return 0;
    if (gpufl__ana_grow(&p->scratch, &p->cap_scratch, 4 * nb + 2 * nc + 2, sizeof *p->scratch) != 0 ||
        gpufl__ana_grow(&p->ratio, &p->cap_pairs, most, sizeof *p->ratio) != 0 ||
        gpufl__ana_grow(&p->weight, &p->cap_groups, most, sizeof *p->weight) != 0)
        return GPUFL_ENOMEM;
    /* at has one more than weight: grown to the same capacity plus one */
    size_t *at = realloc(p->at, (p->cap_groups + 1) * sizeof *at);
    if (!at)
        return GPUFL_ENOMEM;
    p->at = at;
    p->at[0] = 0;
    scratch s = {p->scratch,
                 p->scratch + nb,
                 p->scratch + nb + nc,
                 p->scratch + 2 * nb + nc,
                 p->scratch + 2 * nb + 2 * nc,
                 p->scratch + 3 * nb + 2 * nc + 1};
    memset(s.gb, 0, nb * sizeof *s.gb);
    memset(s.gc, 0, nc * sizeof *s.gc);
    for (size_t r = 0; r < ROUNDS && p->n < most; r++) {
        int rc = match_round(p, &s, round_mask[r], b, nb, c, nc);
        if (rc != 0) {
            p->n = p->ngroups = 0;
            return rc;
        }
    }
    return 0;
}
