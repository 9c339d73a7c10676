/*
 * One trace's work as the lanes `gpufl replay-check` compares
 * (ana_replay_internal.h): kernels, copies and memsets per stream, in the
 * order they ran (one walk of the merged tables, gpufl__ops), and per
 * device the driver's allocations, the framework's blocks and the
 * allocator's records. Streams are listed in order of first use: the
 * start of their first op that is not left out by name.
 *
 * An op's index is its place in its lane counting every op the name
 * filter keeps, selected or not, so that the same op has the same number
 * whether a time range, an op range or a scope selects it. Kernels' keys
 * are cached per launch configuration (a few hundred per session), so a
 * kernel costs a table read; copies, memsets and allocations look their
 * key up in the hash table. Allocation events of one instant are put in
 * the order of their keys (order_ties).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_replay_internal.h"
#include "gpufl/gpufl.h"
#include "read/rows.h"

#define NO_SLOT UINT32_MAX

typedef struct build {
    gpufl__rp_side *s;
    gpufl__rp_keys *ks;
    const gpufl__replay_options *o;
    gpufl__rows r;
    uint64_t start_ns;
    uint32_t *cfg_key;    /* [graph * nconfigs + config]: key id, NO_SLOT not yet */
    uint8_t *cfg_ignored; /* per config: 0 not yet decided, 1 kept, 2 left out by name */
    uint32_t *slot;       /* per stream row (+1 for rows the trace lacks): its stream lane */
    ana_map in_scope;     /* scope ids inside the selected scope (o->scope) */
} build;

static int seq_push(gpufl__rp_seq *q, uint32_t key, uint32_t index, uint32_t row)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 256;
        uint32_t *k = realloc(q->key, cap * sizeof *k);
        if (!k)
            return GPUFL_ENOMEM;
        q->key = k;
        uint32_t *i = realloc(q->index, cap * sizeof *i);
        if (!i)
            return GPUFL_ENOMEM;
        q->index = i;
        uint32_t *r = realloc(q->row, cap * sizeof *r);
        if (!r)
            return GPUFL_ENOMEM;
        q->row = r;
        q->cap = cap;
    }
    q->key[q->n] = key;
    q->index[q->n] = index;
    q->row[q->n] = row;
    q->n++;
    return 0;
}

static void seq_free(gpufl__rp_seq *q)
{
    free(q->key);
    free(q->index);
    free(q->row);
    memset(q, 0, sizeof *q);
}

/* ---- what is selected ----------------------------------------------------------------- */

/* Whether the next op of lane q (its index taken here), which happened at
 * `at` and was called inside scope `scope`, is selected. */
static bool selected(build *b, gpufl__rp_seq *q, uint64_t at, uint64_t scope, uint32_t *index)
{
    const gpufl__replay_options *o = b->o;
    *index = q->counted++;
    if (*index < o->from_op || (o->has_to_op && *index >= o->to_op))
        return false;
    uint64_t rel = at > b->start_ns ? at - b->start_ns : 0;
    if (rel < o->from_ns || (o->has_to && rel >= o->to_ns))
        return false;
    if (o->scope) {
        uint32_t v;
        if (!scope || !gpufl__ana_map_get(&b->in_scope, scope, 0, &v))
            return false;
    }
    return true;
}

/* The ids of the scopes inside the chosen occurrence(s) of o->scope, the
 * occurrence itself included, into b->in_scope. Scopes come by begin, so
 * a parent is seen before its children. */
static int select_scopes(build *b, char *err, size_t err_len)
{
    const gpufl__replay_options *o = b->o;
    const gpufl_trace_scopes *sc = b->r.scopes;
    uint32_t occurrences = 0;
    for (size_t i = 0; i < sc->n; i++) {
        uint32_t v;
        bool named = !strcmp(gpufl__rows_str(&b->r, sc->name[i]), o->scope);
        if (named)
            occurrences++;
        bool take = named && (o->occurrence == 0 || o->occurrence == occurrences);
        if (take || (sc->parent[i] && gpufl__ana_map_get(&b->in_scope, sc->parent[i], 0, &v)))
            if (gpufl__ana_map_put(&b->in_scope, sc->id[i], 0, 1, &v) < 0)
                return GPUFL_ENOMEM;
    }
    if (occurrences == 0) {
        snprintf(err, err_len, "%s: no gpufl scope is named '%s'", b->s->label, o->scope);
        return GPUFL_EINVAL;
    }
    if (o->occurrence > occurrences) {
        snprintf(err, err_len, "%s: scope '%s' occurs %u time%s; occurrence #%u was asked for", b->s->label, o->scope,
                 occurrences, occurrences == 1 ? "" : "s", o->occurrence);
        return GPUFL_EINVAL;
    }
    return 0;
}

/* ---- keys ---------------------------------------------------------------------------- */

/* The key of config c launched as a graph node or not (graph); *ignored
 * when its name is left out. */
static int kernel_key(build *b, uint32_t c, bool graph, uint32_t *id, bool *ignored)
{
    const gpufl_trace_launch_configs *g = b->r.configs;
    size_t nc = g->n;
    if (c >= nc) { /* a row the trace lacks (damaged input): an unnamed kernel */
        gpufl__rp_key k = {.what = GPUFL__RP_KERNEL, .graph = graph};
        *ignored = false;
        return gpufl__rp_key_intern(b->ks, &k, id);
    }
    const char *name = gpufl__rows_str(&b->r, g->name[c] ? g->name[c] : g->mangled[c]);
    if (!b->cfg_ignored[c])
        b->cfg_ignored[c] = b->o->ignore_names && regexec(b->o->ignore_names, name, 0, NULL, 0) == 0 ? 2 : 1;
    *ignored = b->cfg_ignored[c] == 2;
    if (*ignored)
        return 0;
    uint32_t *cached = &b->cfg_key[(graph ? nc : 0) + c];
    if (*cached != NO_SLOT) {
        *id = *cached;
        return 0;
    }
    gpufl__rp_key k = {.what = GPUFL__RP_KERNEL, .graph = graph, .name = name};
    if (!b->o->ignore_config) {
        gpufl__config_row cr;
        gpufl__config_row_get(&b->r, c, &cr);
        for (int d = 0; d < 3; d++) {
            k.grid[d] = cr.grid[d];
            k.block[d] = cr.block[d];
        }
        k.registers = cr.registers;
        k.smem_static = cr.static_smem;
        k.smem_dynamic = cr.dynamic_smem;
    }
    int rc = gpufl__rp_key_intern(b->ks, &k, id);
    if (rc == 0)
        *cached = *id;
    return rc;
}

static int transfer_key(build *b, unsigned tbl, size_t i, uint32_t *id)
{
    const gpufl_trace_transfers *x = gpufl__rows_xfers(&b->r, tbl);
    gpufl__rp_key k = {.bytes = x->bytes[i], .graph = x->graph_id[i] != 0, .name = ""};
    if (tbl == GPUFL__TBL_COPY) {
        k.what = GPUFL__RP_COPY;
        k.kind = x->kind[i];
        k.src_kind = x->src_kind[i];
        k.dst_kind = x->dst_kind[i];
    } else {
        k.what = GPUFL__RP_MEMSET;
        k.kind = x->dst_kind[i];
        k.value = x->value[i];
    }
    return gpufl__rp_key_intern(b->ks, &k, id);
}

/* ---- lanes ------------------------------------------------------------------------- */

static int stream_slot(build *b, uint32_t sr, uint32_t *slot)
{
    gpufl__rp_side *s = b->s;
    size_t n = b->r.streams->n;
    uint32_t at = sr < n ? sr : (uint32_t)n;
    if (b->slot[at] == NO_SLOT) {
        gpufl__rp_stream *v = realloc(s->streams, (s->nstreams + 1) * sizeof *v);
        if (!v)
            return GPUFL_ENOMEM;
        s->streams = v;
        gpufl__rp_stream *st = &s->streams[s->nstreams];
        memset(st, 0, sizeof *st);
        uint32_t context;
        gpufl__stream_get(&b->r, sr, &st->device, &context, &st->stream);
        b->slot[at] = (uint32_t)s->nstreams++;
    }
    *slot = b->slot[at];
    return 0;
}

static int walk_work(build *b)
{
    gpufl__ops it;
    gpufl__op op;
    gpufl__ops_begin(&it, &b->r);
    while (gpufl__ops_next(&it, &op)) {
        uint32_t key = 0, slot, index;
        int rc = 0;
        if (op.table == GPUFL__TBL_KERNEL) { /* its key says whether its name is left out */
            bool ignored;
            const gpufl_trace_kernels *k = b->r.kernels;
            rc = kernel_key(b, k->config_row[op.row], k->graph_id[op.row] != 0, &key, &ignored);
            if (rc == 0 && ignored)
                continue;
        }
        if (rc == 0)
            rc = stream_slot(b, op.stream_row, &slot);
        if (rc != 0)
            return rc;
        gpufl__rp_seq *q = &b->s->streams[slot].seq;
        if (q->counted == UINT32_MAX || op.row > UINT32_MAX)
            return GPUFL_ENOMEM; /* indices are 32-bit: 4 G ops on one stream */
        if (!selected(b, q, op.start, gpufl__caller_scope(&b->r, op.caller), &index))
            continue;
        if (op.table != GPUFL__TBL_KERNEL && transfer_key(b, op.table, op.row, &key) != 0)
            return GPUFL_ENOMEM;
        if (seq_push(q, key, index, (uint32_t)op.row) != 0)
            return GPUFL_ENOMEM;
    }
    return 0;
}

static int device_lanes(build *b, uint32_t device, gpufl__rp_dev **out)
{
    gpufl__rp_side *s = b->s;
    if (device >= s->ndevs) {
        gpufl__rp_dev *v = realloc(s->devs, (device + 1) * sizeof *v);
        if (!v)
            return GPUFL_ENOMEM;
        memset(v + s->ndevs, 0, (device + 1 - s->ndevs) * sizeof *v);
        s->devs = v;
        s->ndevs = device + 1;
    }
    *out = &s->devs[device];
    (*out)->present = true;
    return 0;
}

typedef struct keyed_row {
    uint32_t key, row;
} keyed_row;

static int by_key_row(const void *x, const void *y)
{
    const keyed_row *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

/* Ops of lane q recorded at the same instant (ts by row) have no order
 * between them: a framework's snapshot records every block it finds
 * freed at one time, in the order of its own table, which follows
 * addresses that move between runs. Each such run is put in the order of
 * its keys, which both traces share, so the same ops compare equal. */
static int order_ties(gpufl__rp_seq *q, const uint64_t *ts)
{
    keyed_row *tmp = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < q->n;) {
        size_t j = i + 1;
        while (j < q->n && ts[q->row[j]] == ts[q->row[i]])
            j++;
        if (j - i > 1) {
            if (j - i > cap) {
                keyed_row *t = realloc(tmp, (j - i) * sizeof *t);
                if (!t) {
                    free(tmp);
                    return GPUFL_ENOMEM;
                }
                tmp = t;
                cap = j - i;
            }
            for (size_t k = i; k < j; k++)
                tmp[k - i] = (keyed_row){q->key[k], q->row[k]};
            qsort(tmp, j - i, sizeof *tmp, by_key_row);
            for (size_t k = i; k < j; k++) {
                q->key[k] = tmp[k - i].key;
                q->row[k] = tmp[k - i].row;
            }
        }
        i = j;
    }
    free(tmp);
    return 0;
}

static int walk_memory(build *b)
{
    const gpufl_trace_memory *m = b->r.memory;
    if (m->n > UINT32_MAX)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < m->n; i++) {
        gpufl__rp_dev *d;
        uint32_t key, index;
        if (device_lanes(b, gpufl__m_device(&b->r, i), &d) != 0)
            return GPUFL_ENOMEM;
        gpufl__rp_key k = {.what = m->is_free[i] ? GPUFL__RP_FREE : GPUFL__RP_ALLOC,
                           .kind = m->kind[i],
                           .failed = m->failed[i],
                           .bytes = m->bytes[i],
                           .name = ""};
        gpufl__rp_seq *q = m->framework[i] ? &d->blocks : &d->allocs;
        if (!selected(b, q, m->ts_ns[i], gpufl__caller_scope(&b->r, m->caller_row[i]), &index))
            continue;
        if (gpufl__rp_key_intern(b->ks, &k, &key) != 0 || seq_push(q, key, index, (uint32_t)i) != 0)
            return GPUFL_ENOMEM;
    }
    for (size_t d = 0; d < b->s->ndevs; d++)
        if (order_ties(&b->s->devs[d].allocs, m->ts_ns) != 0 || order_ties(&b->s->devs[d].blocks, m->ts_ns) != 0)
            return GPUFL_ENOMEM;
    return 0;
}

static int walk_allocator(build *b)
{
    const gpufl_trace_allocator *a = b->r.allocator;
    if (a->n > UINT32_MAX)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < a->n; i++) {
        const char *reason = gpufl__rows_str(&b->r, a->reason[i]);
        if (!strcmp(reason, "sample")) /* taken at an interval: their number follows the run's speed */
            continue;
        gpufl__rp_dev *d;
        uint32_t key, index;
        if (device_lanes(b, a->device[i], &d) != 0)
            return GPUFL_ENOMEM;
        gpufl__rp_key k = {
            .what = GPUFL__RP_ALLOCATOR, .bytes = a->allocated[i], .reserved = a->reserved[i], .name = reason};
        uint64_t scope = a->caller_row[i] < b->r.callers->n ? b->r.callers->scope[a->caller_row[i]] : 0;
        if (!selected(b, &d->allocator, a->ts_ns[i], scope, &index))
            continue;
        if (gpufl__rp_key_intern(b->ks, &k, &key) != 0 || seq_push(&d->allocator, key, index, (uint32_t)i) != 0)
            return GPUFL_ENOMEM;
    }
    for (size_t d = 0; d < b->s->ndevs; d++)
        if (order_ties(&b->s->devs[d].allocator, a->ts_ns) != 0)
            return GPUFL_ENOMEM;
    return 0;
}

int gpufl__rp_side_build(gpufl__rp_side *s, gpufl__rp_keys *ks, const gpufl__replay_options *o, char *err,
                         size_t err_len)
{
    build b = {.s = s, .ks = ks, .o = o};
    gpufl__rows_open(&b.r, s->t);
    b.start_ns = b.r.info->start_ns;
    size_t nc = b.r.configs->n, ns = b.r.streams->n;
    b.cfg_key = malloc((2 * nc + 1) * sizeof *b.cfg_key);
    b.cfg_ignored = calloc(nc + 1, 1);
    b.slot = malloc((ns + 1) * sizeof *b.slot);
    int rc = GPUFL_ENOMEM;
    if (!b.cfg_key || !b.cfg_ignored || !b.slot)
        goto out;
    memset(b.cfg_key, 0xff, (2 * nc + 1) * sizeof *b.cfg_key);
    memset(b.slot, 0xff, (ns + 1) * sizeof *b.slot);
    for (uint32_t d = 0; d < b.r.info->ndevices; d++) {
        gpufl__rp_dev *dev;
        if (device_lanes(&b, b.r.info->devices[d].index, &dev) != 0)
            goto out;
    }
    if (o->scope && (rc = select_scopes(&b, err, err_len)) != 0)
        goto out;
    if ((rc = walk_work(&b)) != 0)
        goto out;
    if (!o->ignore_allocs && ((rc = walk_memory(&b)) != 0 || (rc = walk_allocator(&b)) != 0))
        goto out;
    rc = 0;
out:
    if (rc == GPUFL_ENOMEM && err_len)
        snprintf(err, err_len, "%s: out of memory cutting the session into lanes", s->label);
    gpufl__ana_map_free(&b.in_scope);
    free(b.cfg_key);
    free(b.cfg_ignored);
    free(b.slot);
    return rc;
}

void gpufl__rp_side_free(gpufl__rp_side *s)
{
    for (size_t i = 0; i < s->nstreams; i++)
        seq_free(&s->streams[i].seq);
    free(s->streams);
    for (size_t d = 0; d < s->ndevs; d++) {
        seq_free(&s->devs[d].allocs);
        seq_free(&s->devs[d].blocks);
        seq_free(&s->devs[d].allocator);
    }
    free(s->devs);
    s->streams = NULL;
    s->devs = NULL;
    s->nstreams = s->ndevs = 0;
}

uint64_t gpufl__rp_op_at(const gpufl_trace *t, unsigned what, uint32_t row)
{
    gpufl__rows r;
    gpufl__rows_open(&r, t);
    uint64_t at = 0;
    switch (what) {
    case GPUFL__RP_KERNEL: at = row < r.kernels->n ? r.kernels->start_ns[row] : 0; break;
    case GPUFL__RP_COPY: at = row < r.copies->n ? r.copies->start_ns[row] : 0; break;
    case GPUFL__RP_MEMSET: at = row < r.memsets->n ? r.memsets->start_ns[row] : 0; break;
    case GPUFL__RP_ALLOC:
    case GPUFL__RP_FREE: at = row < r.memory->n ? r.memory->ts_ns[row] : 0; break;
    case GPUFL__RP_ALLOCATOR: at = row < r.allocator->n ? r.allocator->ts_ns[row] : 0; break;
    default: break;
    }
    return at > r.info->start_ns ? at - r.info->start_ns : 0;
}
