/*
 * What is found across a job's ranks (ana_job.h): collectives matched
 * rank to rank, the ranks that arrive late at them, and kernels that take
 * more time on some ranks than on others.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_job.h"
#include "gpufl/gpufl.h"

static uint32_t nccl_streams(const gpufl__job_rank *r)
{
    uint32_t n = 0;
    for (size_t i = 0; i < r->ncoll; i++)
        if (r->coll[i].stream + 1 > n)
            n = r->coll[i].stream + 1;
    return n;
}

/* The positions of stream s's collectives in r->coll, in order. */
static size_t *of_stream(const gpufl__job_rank *r, uint32_t s, size_t *n)
{
    size_t *at = malloc((r->ncoll ? r->ncoll : 1) * sizeof *at);
    *n = 0;
    if (at)
        for (size_t i = 0; i < r->ncoll; i++)
            if (r->coll[i].stream == s)
                at[(*n)++] = i;
    return at;
}

/* One stream's collectives, the k-th with the k-th on every rank, for as
 * long as their kinds agree. */
static int match_stream(const gpufl__job_rank *ranks, size_t n, uint32_t s, gpufl__job_matches *out, size_t *cap)
{
    size_t **at = calloc(n, sizeof *at), *cnt = calloc(n, sizeof *cnt), common = SIZE_MAX;
    int rc = GPUFL_ENOMEM;
    if (!at || !cnt)
        goto done;
    for (size_t r = 0; r < n; r++) {
        if (!(at[r] = of_stream(&ranks[r], s, &cnt[r])))
            goto done;
        if (cnt[r] < common)
            common = cnt[r];
    }
    for (size_t k = 0; k < common; k++) {
        uint8_t kind = ranks[0].coll[at[0][k]].coll;
        for (size_t r = 1; r < n; r++)
            if (ranks[r].coll[at[r][k]].coll != kind) {
                if (!out->note[0])
                    snprintf(out->note, sizeof out->note,
                             "NCCL stream %u: collective %zu is not the same kind on rank %zu as on rank 0; "
                             "matched up to there",
                             s, k + 1, r);
                common = k;
                break;
            }
    }
    if (common == 0) { /* nothing to add: a realloc to 0 bytes would free the storage */
        rc = 0;
        goto done;
    }
    if (out->n + common > *cap) {
        size_t want = (out->n + common) * 2;
        gpufl__job_match *m = realloc(out->m, want * sizeof *m);
        if (!m)
            goto done;
        out->m = m;
        *cap = want;
    }
    for (size_t k = 0; k < common; k++) {
        gpufl__job_match *m = &out->m[out->n++];
        m->stream = s;
        m->seq = (uint32_t)k;
        m->at = NULL; /* set once storage is final: gpufl__job_match_collectives */
    }
    /* positions, rank-major per match, appended after the earlier streams' */
    size_t *st = realloc(out->storage, out->n * n * sizeof *st);
    if (!st)
        goto done;
    out->storage = st;
    for (size_t k = 0; k < common; k++)
        for (size_t r = 0; r < n; r++)
            st[(out->n - common + k) * n + r] = at[r][k];
    rc = 0;
done:
    for (size_t r = 0; at && r < n; r++)
        free(at[r]);
    free(at);
    free(cnt);
    return rc;
}

int gpufl__job_match_collectives(const gpufl__job_rank *ranks, size_t n, gpufl__job_matches *out)
{
    memset(out, 0, sizeof *out);
    out->nranks = n;
    if (n < 2)
        return 0;
    uint32_t streams = UINT32_MAX;
    for (size_t r = 0; r < n; r++) {
        uint32_t s = nccl_streams(&ranks[r]);
        if (s < streams)
            streams = s;
    }
    size_t cap = 0;
    for (uint32_t s = 0; s < streams; s++)
        if (match_stream(ranks, n, s, out, &cap) != 0) {
            gpufl__job_matches_free(out);
            return GPUFL_ENOMEM;
        }
    for (size_t k = 0; k < out->n; k++)
        out->m[k].at = &out->storage[k * n];
    return 0;
}

void gpufl__job_matches_free(gpufl__job_matches *m)
{
    free(m->m);
    free(m->storage);
    memset(m, 0, sizeof *m);
}

static int by_late(const void *a, const void *b)
{
    const gpufl__job_late *x = a, *y = b;
    return (x->late_ns < y->late_ns) - (x->late_ns > y->late_ns);
}

int gpufl__job_find_stragglers(const gpufl__job_rank *ranks, size_t n, const gpufl__job_matches *m,
                               uint64_t threshold_ns, gpufl__job_stragglers *out)
{
    memset(out, 0, sizeof *out);
    out->threshold_ns = threshold_ns;
    if (!(out->per_rank = calloc(n ? n : 1, sizeof *out->per_rank)))
        return GPUFL_ENOMEM;
    size_t cap = 0;
    for (size_t k = 0; k < m->n; k++) {
        int64_t first = INT64_MAX, last = INT64_MIN, second = INT64_MIN;
        size_t who = 0;
        for (size_t r = 0; r < n; r++) {
            int64_t a = (int64_t)ranks[r].coll[m->m[k].at[r]].start_ns + ranks[r].shift_ns;
            if (a < first)
                first = a;
            if (a > last) {
                second = last;
                last = a;
                who = r;
            } else if (a > second) {
                second = a;
            }
        }
        for (size_t r = 0; r < n; r++)
            out->per_rank[r].waited_ns +=
                (uint64_t)(last - ((int64_t)ranks[r].coll[m->m[k].at[r]].start_ns + ranks[r].shift_ns));
        uint64_t late = (uint64_t)(last - second);
        if (late < threshold_ns)
            continue;
        gpufl__job_rank_lateness *pr = &out->per_rank[who];
        pr->times_late++;
        pr->total_late_ns += late;
        if (late > pr->max_late_ns)
            pr->max_late_ns = late;
        if (out->nlate == cap) {
            size_t want = cap ? cap * 2 : 64;
            gpufl__job_late *q = realloc(out->late, want * sizeof *q);
            if (!q) {
                gpufl__job_stragglers_free(out);
                return GPUFL_ENOMEM;
            }
            out->late = q;
            cap = want;
        }
        /* the same comparison on the launch calls, when every rank's is known */
        int64_t launch_last = INT64_MIN, launch_second = INT64_MIN;
        bool known = true;
        for (size_t r = 0; r < n && known; r++) {
            const gpufl__job_coll *c = &ranks[r].coll[m->m[k].at[r]];
            known = c->api_ns != 0;
            int64_t a = (int64_t)c->api_ns + ranks[r].shift_ns;
            if (r == who)
                launch_last = a;
            else if (a > launch_second)
                launch_second = a;
        }
        uint64_t launch_late = known && launch_last > launch_second ? (uint64_t)(launch_last - launch_second) : 0;
        out->late[out->nlate++] = (gpufl__job_late){.match = k,
                                                    .rank = who,
                                                    .late_ns = late,
                                                    .wait_ns = (uint64_t)(last - first),
                                                    .step = ranks[who].coll[m->m[k].at[who]].step,
                                                    .launch_late_ns = launch_late};
    }
    if (out->nlate)
        qsort(out->late, out->nlate, sizeof *out->late, by_late);
    return 0;
}

void gpufl__job_stragglers_free(gpufl__job_stragglers *s)
{
    free(s->late);
    free(s->per_rank);
    memset(s, 0, sizeof *s);
}

typedef struct name_time {
    const char *name;
    size_t rank;
    uint64_t ns;
} name_time;

static int by_name(const void *a, const void *b)
{
    const name_time *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

static int by_excess(const void *a, const void *b)
{
    const gpufl__job_imbalance_row *x = a, *y = b;
    uint64_t ex = x->max_ns - x->mean_ns, ey = y->max_ns - y->mean_ns;
    return (ex < ey) - (ex > ey);
}

int gpufl__job_find_imbalance(const gpufl__job_rank *ranks, size_t n, gpufl__job_imbalance *out)
{
    memset(out, 0, sizeof *out);
    size_t total = 0;
    for (size_t r = 0; r < n; r++)
        total += ranks[r].nkt;
    if (!total || n < 2)
        return 0;
    name_time *v = malloc(total * sizeof *v);
    if (!v || !(out->row = malloc(total * sizeof *out->row))) {
        free(v);
        return GPUFL_ENOMEM;
    }
    size_t k = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; i < ranks[r].nkt; i++)
            v[k++] = (name_time){ranks[r].str[ranks[r].kt[i].name], r, ranks[r].kt[i].total_ns};
    qsort(v, total, sizeof *v, by_name);
    for (size_t i = 0; i < total;) {
        size_t j = i;
        uint64_t sum = 0, max = 0, min = UINT64_MAX;
        size_t max_rank = 0, min_rank = 0;
        for (; j < total && !strcmp(v[j].name, v[i].name); j++) {
            sum += v[j].ns;
            if (v[j].ns > max) {
                max = v[j].ns;
                max_rank = v[j].rank;
            }
            if (v[j].ns < min) {
                min = v[j].ns;
                min_rank = v[j].rank;
            }
        }
        size_t on = j - i;
        if (on < n) { /* ranks that never ran it ran it for 0 ns */
            min = 0;
            for (size_t r = 0, q = i; r < n; r++, q++)
                if (q >= j || v[q].rank != r) {
                    min_rank = r;
                    break;
                }
        }
        out->row[out->n++] = (gpufl__job_imbalance_row){.name = v[i].name,
                                                        .mean_ns = sum / n,
                                                        .max_ns = max,
                                                        .min_ns = min,
                                                        .max_rank = max_rank,
                                                        .min_rank = min_rank,
                                                        .on_ranks = on};
        i = j;
    }
    free(v);
    qsort(out->row, out->n, sizeof *out->row, by_excess);
    return 0;
}

void gpufl__job_imbalance_free(gpufl__job_imbalance *b)
{
    free(b->row);
    memset(b, 0, sizeof *b);
}
