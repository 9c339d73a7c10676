/*
 * `gpufl replay-check` (ana_replay.h): both traces cut into lanes, the
 * lanes paired, each pair aligned, and what a user needs to see of a
 * divergence (the ops around it, the kind of change, the counts that
 * differ) kept in the result. The lanes are freed before returning: the
 * result holds only the keys, the lines shown and the figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_replay_internal.h"
#include "core/event.h"
#include "gpufl/gpufl.h"

#define SHOWN 8        /* ops of each side shown inside a divergence */
#define KEEP_COUNTS 10 /* keys whose counts differ, listed per lane */

void gpufl__replay_options_default(gpufl__replay_options *o)
{
    memset(o, 0, sizeof *o);
    o->context = 3;
    o->window = 64;
    o->list = 10;
}

typedef struct lines {
    gpufl__rp_line *v;
    size_t n, cap;
} lines;

static int line(lines *l, char tag, const gpufl__rp_seq *q, size_t pos, uint64_t other)
{
    if (gpufl__ana_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v) != 0)
        return GPUFL_ENOMEM;
    gpufl__rp_line *x = &l->v[l->n++];
    x->tag = tag;
    x->key = q->key[pos];
    x->index_a = tag == '+' ? GPUFL__RP_NONE : q->index[pos];
    x->index_b = tag == '+' ? q->index[pos] : tag == '-' ? GPUFL__RP_NONE : other;
    return 0;
}

static uint32_t config_fields(const gpufl__rp_key *x, const gpufl__rp_key *y)
{
    uint32_t f = 0;
    for (int d = 0; d < 3; d++) {
        if (x->grid[d] != y->grid[d])
            f |= GPUFL__RP_F_GRID;
        if (x->block[d] != y->block[d])
            f |= GPUFL__RP_F_BLOCK;
    }
    if (x->registers != y->registers)
        f |= GPUFL__RP_F_REGISTERS;
    if (x->smem_static != y->smem_static)
        f |= GPUFL__RP_F_SMEM_STATIC;
    if (x->smem_dynamic != y->smem_dynamic)
        f |= GPUFL__RP_F_SMEM_DYNAMIC;
    if (x->graph != y->graph)
        f |= GPUFL__RP_F_GRAPH;
    return f;
}

/* How op x of A became op y of B, one for one. */
static uint8_t one_for_one(const gpufl__rp_key *x, const gpufl__rp_key *y, uint32_t *fields)
{
    *fields = 0;
    if (x->what != y->what)
        return GPUFL__RP_CH_OTHER;
    if (x->what == GPUFL__RP_KERNEL) {
        if (strcmp(x->name, y->name) != 0)
            return GPUFL__RP_CH_NAME;
        *fields = config_fields(x, y);
        return GPUFL__RP_CH_CONFIG;
    }
    if (x->kind != y->kind || x->src_kind != y->src_kind || x->dst_kind != y->dst_kind || x->failed != y->failed ||
        x->graph != y->graph || strcmp(x->name, y->name) != 0)
        return GPUFL__RP_CH_OTHER;
    return GPUFL__RP_CH_SIZE;
}

/* A divergence at positions sp of lanes qa and qb as the result says it. */
static gpufl__rp_div classify(const gpufl__rp_span *sp, const gpufl__rp_seq *qa, const gpufl__rp_seq *qb,
                              const gpufl__rp_keys *ks)
{
    size_t i = sp->at_a, j = sp->at_b;
    gpufl__rp_div d = {.at_a = i < qa->n ? qa->index[i] : GPUFL__RP_NONE,
                       .at_b = j < qb->n ? qb->index[j] : GPUFL__RP_NONE,
                       .span_a = sp->span_a,
                       .span_b = sp->span_b,
                       .resynced = sp->resynced,
                       .key_a = i < qa->n ? qa->key[i] : GPUFL__RP_NOKEY,
                       .key_b = j < qb->n ? qb->key[j] : GPUFL__RP_NOKEY};
    if (!sp->resynced)
        d.change = GPUFL__RP_CH_DIVERGED;
    else if (sp->span_a == 0)
        d.change = GPUFL__RP_CH_EXTRA;
    else if (sp->span_b == 0)
        d.change = GPUFL__RP_CH_MISSING;
    else if (sp->span_a == sp->span_b)
        d.change = one_for_one(&ks->v[qa->key[i]], &ks->v[qb->key[j]], &d.fields);
    else
        d.change = GPUFL__RP_CH_REPLACED;
    if (d.span_a == 0 && sp->resynced)
        d.key_a = GPUFL__RP_NOKEY;
    if (d.span_b == 0 && sp->resynced)
        d.key_b = GPUFL__RP_NOKEY;
    return d;
}

/* The divergence of an aligned pair: its kind and its lines. */
static int describe(gpufl__rp_lane *lane, const gpufl__rp_align *al, const gpufl__rp_side *a, const gpufl__rp_seq *qa,
                    const gpufl__rp_side *b, const gpufl__rp_seq *qb, const gpufl__rp_keys *ks, uint32_t context)
{
    size_t i = al->at_a, j = al->at_b;
    gpufl__rp_span first = {.at_a = i, .at_b = j, .span_a = al->span_a, .span_b = al->span_b, .resynced = al->resynced};
    gpufl__rp_div d = classify(&first, qa, qb, ks);
    lane->at_a = d.at_a;
    lane->at_b = d.at_b;
    lane->span_a = d.span_a;
    lane->span_b = d.span_b;
    lane->resynced = d.resynced;
    lane->change = d.change;
    lane->fields = d.fields;

    lines l = {0};
    size_t before = i < context ? i : context;
    if (j < before)
        before = j;
    size_t shown_a = al->resynced ? al->span_a : qa->n - i, shown_b = al->resynced ? al->span_b : qb->n - j;
    shown_a = shown_a < SHOWN ? shown_a : SHOWN;
    shown_b = shown_b < SHOWN ? shown_b : SHOWN;
    for (size_t k = before; k > 0; k--)
        if (line(&l, ' ', qa, i - k, qb->index[j - k]) != 0)
            goto nomem;
    for (size_t k = 0; k < shown_a; k++)
        if (line(&l, '-', qa, i + k, 0) != 0)
            goto nomem;
    for (size_t k = 0; k < shown_b; k++)
        if (line(&l, '+', qb, j + k, 0) != 0)
            goto nomem;
    if (al->resynced) {
        size_t x = i + al->span_a, y = j + al->span_b;
        for (size_t k = 0; k < context && x + k < qa->n && y + k < qb->n; k++)
            if (line(&l, ' ', qa, x + k, qb->index[y + k]) != 0)
                goto nomem;
    }
    /* times: common lines before (A's), then A's, B's, common after, in that order */
    {
        size_t pa = i - before, k = 0;
        for (; k < before; k++, pa++)
            l.v[k].at_ns = gpufl__rp_op_at(a->t, ks->v[l.v[k].key].what, qa->row[pa]);
        for (size_t m = 0; m < shown_a; m++, k++)
            l.v[k].at_ns = gpufl__rp_op_at(a->t, ks->v[l.v[k].key].what, qa->row[i + m]);
        for (size_t m = 0; m < shown_b; m++, k++)
            l.v[k].at_ns = gpufl__rp_op_at(b->t, ks->v[l.v[k].key].what, qb->row[j + m]);
        for (size_t x = i + al->span_a; k < l.n; k++, x++)
            l.v[k].at_ns = gpufl__rp_op_at(a->t, ks->v[l.v[k].key].what, qa->row[x]);
    }
    lane->lines = l.v;
    lane->nlines = l.n;
    return 0;
nomem:
    free(l.v);
    return GPUFL_ENOMEM;
}

/* A lane that one side lacks: its first ops, all one-sided. */
static int describe_alone(gpufl__rp_lane *lane, const gpufl__rp_side *s, const gpufl__rp_seq *q, bool is_a,
                          const gpufl__rp_keys *ks)
{
    lane->change = is_a ? GPUFL__RP_CH_ONLY_A : GPUFL__RP_CH_ONLY_B;
    lane->at_a = is_a && q->n ? q->index[0] : GPUFL__RP_NONE;
    lane->at_b = !is_a && q->n ? q->index[0] : GPUFL__RP_NONE;
    lane->divergences = 1;
    if (is_a)
        lane->only_a = q->n;
    else
        lane->only_b = q->n;
    lines l = {0};
    for (size_t k = 0; k < q->n && k < SHOWN; k++) {
        if (line(&l, is_a ? '-' : '+', q, k, 0) != 0) {
            free(l.v);
            return GPUFL_ENOMEM;
        }
        l.v[k].at_ns = gpufl__rp_op_at(s->t, ks->v[q->key[k]].what, q->row[k]);
    }
    lane->lines = l.v;
    lane->nlines = l.n;
    return 0;
}

/* A stream of B, other than the lane's own, whose first ops are the
 * lane's A ops: the streams started in another order. */
static void look_alike(gpufl__rp_lane *lane, const gpufl__rp_match *m, const gpufl__rp_side *b)
{
    const gpufl__rp_seq *qa = m->a;
    size_t k = qa->n < GPUFL__RP_RUN ? qa->n : GPUFL__RP_RUN;
    if (k == 0)
        return;
    for (size_t s = 0; s < b->nstreams; s++) {
        const gpufl__rp_stream *sb = &b->streams[s];
        if (sb == m->sb || sb->device != m->device || sb->seq.n < k ||
            memcmp(sb->seq.key, qa->key, k * sizeof *qa->key) != 0)
            continue;
        lane->looks_like = true;
        lane->looks_like_b = sb->stream;
        return;
    }
}

static int compare(gpufl__rp_lane *lane, const gpufl__rp_match *m, const gpufl__rp_side *a, const gpufl__rp_side *b,
                   const gpufl__rp_keys *ks, const gpufl__replay_options *o)
{
    lane->kind = m->kind;
    lane->device = m->sa ? m->sa->device : m->device;
    lane->device_b = m->sb ? m->sb->device : m->device;
    lane->has_a = m->a != NULL;
    lane->has_b = m->b != NULL;
    lane->stream_a = m->sa ? m->sa->stream : 0;
    lane->stream_b = m->sb ? m->sb->stream : 0;
    lane->mapped = m->mapped;
    lane->n_a = m->a ? m->a->n : 0;
    lane->n_b = m->b ? m->b->n : 0;
    lane->at_a = lane->at_b = GPUFL__RP_NONE;
    if (!m->a || !m->b) {
        /* a lane only one side has, with nothing selected in it, is no difference */
        const gpufl__rp_seq *q = m->a ? m->a : m->b;
        if (q->n == 0) {
            lane->same = true;
            return 0;
        }
        if (describe_alone(lane, m->a ? a : b, q, m->a != NULL, ks) != 0)
            return GPUFL_ENOMEM;
        return gpufl__rp_count_keys(m->a, m->b, ks->n, KEEP_COUNTS, lane);
    }
    gpufl__rp_align al;
    gpufl__rp_span *spans = o->list ? malloc(o->list * sizeof *spans) : NULL;
    if (o->list && !spans)
        return GPUFL_ENOMEM;
    gpufl__rp_align_keys(m->a->key, m->a->n, m->b->key, m->b->n, o->window, spans, o->list, &al);
    lane->same = al.same;
    if (al.nspans && !(lane->divs = malloc(al.nspans * sizeof *lane->divs))) {
        free(spans);
        return GPUFL_ENOMEM;
    }
    for (size_t k = 0; k < al.nspans; k++)
        lane->divs[k] = classify(&spans[k], m->a, m->b, ks);
    lane->ndivs = al.nspans;
    free(spans);
    if (al.same)
        return 0;
    lane->divergences = al.divergences;
    lane->only_a = al.only_a;
    lane->only_b = al.only_b;
    lane->changed = al.changed;
    lane->unaligned_a = al.unaligned_a;
    lane->unaligned_b = al.unaligned_b;
    lane->capped = al.capped;
    if (describe(lane, &al, a, m->a, b, m->b, ks, o->context) != 0)
        return GPUFL_ENOMEM;
    if (m->kind == GPUFL__RP_LANE_STREAM && al.at_a == 0 && al.at_b == 0)
        look_alike(lane, m, b);
    return gpufl__rp_count_keys(m->a, m->b, ks->n, KEEP_COUNTS, lane);
}

static bool whole_sessions(const gpufl__replay_options *o)
{
    return !o->from_ns && !o->has_to && !o->from_op && !o->has_to_op && !o->scope;
}

int gpufl__replay_check(const gpufl_trace *ta, const gpufl_trace *tb, const gpufl__replay_options *opt,
                        gpufl__replay *out, char *err, size_t err_len)
{
    if (!out)
        return GPUFL_EINVAL;
    memset(out, 0, sizeof *out);
    if (err_len)
        err[0] = '\0';
    if (!ta || !tb)
        return GPUFL_EINVAL;
    gpufl__replay_options def;
    if (!opt) {
        gpufl__replay_options_default(&def);
        opt = &def;
    }
    gpufl__rp_keys ks = {0};
    gpufl__rp_side a = {.t = ta, .label = "A"}, b = {.t = tb, .label = "B"};
    gpufl__rp_match *m = NULL;
    size_t nm = 0;
    int rc = gpufl__rp_side_build(&a, &ks, opt, err, err_len);
    if (rc == 0)
        rc = gpufl__rp_side_build(&b, &ks, opt, err, err_len);
    if (rc == 0)
        rc = gpufl__rp_match_lanes(&a, &b, opt, &m, &nm, err, err_len);
    if (rc == 0 && nm && !(out->lanes = calloc(nm, sizeof *out->lanes)))
        rc = GPUFL_ENOMEM;
    for (size_t i = 0; rc == 0 && i < nm; i++) {
        gpufl__rp_lane *lane = &out->lanes[out->nlanes++];
        rc = compare(lane, &m[i], &a, &b, &ks, opt);
        out->ops_a += lane->n_a;
        out->ops_b += lane->n_b;
        out->ndiffer += !lane->same;
    }
    if (rc == 0) {
        out->graphs_compared = whole_sessions(opt);
        out->graphs_a = gpufl_trace_event_count(ta, GFL_EV_GRAPH_LAUNCH);
        out->graphs_b = gpufl_trace_event_count(tb, GFL_EV_GRAPH_LAUNCH);
        out->same = out->ndiffer == 0 && (!out->graphs_compared || out->graphs_a == out->graphs_b);
        gpufl__rp_keys_give(&ks, out);
    }
    if (rc == GPUFL_ENOMEM && err_len && !err[0])
        snprintf(err, err_len, "out of memory comparing the sessions");
    free(m);
    gpufl__rp_side_free(&a);
    gpufl__rp_side_free(&b);
    gpufl__rp_keys_free(&ks);
    if (rc != 0)
        gpufl__replay_free(out);
    return rc;
}

void gpufl__replay_free(gpufl__replay *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nlanes; i++) {
        free(r->lanes[i].lines);
        free(r->lanes[i].counts);
        free(r->lanes[i].divs);
    }
    free(r->lanes);
    gpufl__rp_keys_free_array(r->keys, r->nkeys);
    memset(r, 0, sizeof *r);
}
