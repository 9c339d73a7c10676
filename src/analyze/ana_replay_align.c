/*
 * Two lanes of op keys aligned (ana_replay_internal.h), for sessions of
 * millions of ops: no edit-distance matrix (quadratic), but a scan in
 * step until the keys differ, then a search of a bounded window for the
 * nearest place where they agree again, then the scan from there.
 *
 * "Nearest" is by edits: skipping da ops of A and db of B costs
 * max(da, db) (a run of changed ops counts once per op, an insertion or
 * deletion once per op), ties broken by the fewer ops skipped, so one
 * changed op is (1, 1), one inserted op (0, 1). A place agrees again when
 * the next GPUFL__RP_RUN ops of both sides are equal, or, nearer the ends
 * than that, when both sides end after the same equal ops (so a deletion
 * at the very end re-synchronises too). A divergence that finds no such
 * place within `window` ops on each side stops the alignment: the rest is
 * counted as unaligned rather than guessed at.
 *
 * Cost: linear in the ops, plus per divergence at most about 2 window^2
 * candidate places of GPUFL__RP_RUN compares each (64: about 65 000
 * compares), for at most GPUFL__RP_MAX_DIVERGENCES divergences.
 */
#include <string.h>

#include "analyze/ana_replay_internal.h"

static bool agree(const uint32_t *a, size_t na, size_t x, const uint32_t *b, size_t nb, size_t y)
{
    if (x > na || y > nb)
        return false;
    size_t ra = na - x, rb = nb - y;
    size_t k = ra < rb ? ra : rb;
    if (k < GPUFL__RP_RUN && ra != rb)
        return false; /* near an end only a common end agrees */
    if (k > GPUFL__RP_RUN)
        k = GPUFL__RP_RUN;
    for (size_t i = 0; i < k; i++)
        if (a[x + i] != b[y + i])
            return false;
    return true;
}

/* The nearest (da, db) from (i, j) where the lanes agree again. */
static bool resync(const uint32_t *a, size_t na, size_t i, const uint32_t *b, size_t nb, size_t j, uint32_t window,
                   size_t *da, size_t *db)
{
    for (size_t c = 1; c <= window; c++) {
        /* max(da, db) == c, fewer skipped first: (c,0) (0,c) (c,1) (1,c) ... (c,c) */
        for (size_t lo = 0; lo <= c; lo++) {
            if (agree(a, na, i + c, b, nb, j + lo)) {
                *da = c;
                *db = lo;
                return true;
            }
            if (lo < c && agree(a, na, i + lo, b, nb, j + c)) {
                *da = lo;
                *db = c;
                return true;
            }
        }
        if (i + c > na && j + c > nb)
            break; /* past both ends: nothing further can agree */
    }
    return false;
}

void gpufl__rp_align_keys(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t window,
                          gpufl__rp_span *spans, size_t max_spans, gpufl__rp_align *out)
{
    memset(out, 0, sizeof *out);
    out->same = true;
    size_t i = 0, j = 0;
    for (;;) {
        while (i < na && j < nb && a[i] == b[j]) {
            i++;
            j++;
        }
        if (i == na && j == nb)
            return;
        if (out->divergences == GPUFL__RP_MAX_DIVERGENCES) {
            out->capped = true;
            out->unaligned_a += na - i;
            out->unaligned_b += nb - j;
            return;
        }
        size_t da, db;
        bool found = resync(a, na, i, b, nb, j, window, &da, &db);
        if (out->same) {
            out->same = false;
            out->at_a = i;
            out->at_b = j;
            out->resynced = found;
            out->span_a = found ? da : 0;
            out->span_b = found ? db : 0;
        }
        out->divergences++;
        if (out->nspans < max_spans)
            spans[out->nspans++] = (gpufl__rp_span){
                .at_a = i, .at_b = j, .span_a = found ? da : 0, .span_b = found ? db : 0, .resynced = found};
        if (!found) {
            out->unaligned_a += na - i;
            out->unaligned_b += nb - j;
            return;
        }
        size_t common = da < db ? da : db;
        out->changed += common;
        out->only_a += da - common;
        out->only_b += db - common;
        i += da;
        j += db;
    }
}
