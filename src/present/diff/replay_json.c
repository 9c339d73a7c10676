/*
 * `gpufl replay-check --json` (replay_json.h). Every set is checked: an
 * object that could not be built makes the whole document NULL.
 */
#include "present/diff/replay_json.h"

#include "core/names.h"
#include "present/diff/replay_op.h"

typedef struct jb {
    bool failed;
} jb;

static void set(jb *b, json_t *o, const char *k, json_t *v)
{
    if (!v || !o || json_object_set_new(o, k, v) != 0)
        b->failed = true;
}

static void push(jb *b, json_t *a, json_t *v)
{
    if (!v || !a || json_array_append_new(a, v) != 0)
        b->failed = true;
}

static json_t *u64(uint64_t v) { return json_integer((json_int_t)v); }
static json_t *index_or_null(uint64_t v) { return v == GPUFL__RP_NONE ? json_null() : u64(v); }

static json_t *triple(jb *b, const uint32_t v[3])
{
    json_t *a = json_array();
    for (int d = 0; d < 3; d++)
        push(b, a, json_integer(v[d]));
    return a;
}

static json_t *op_json(jb *b, const gpufl__rp_key *k)
{
    json_t *o = json_object();
    char text[1024];
    gpufl__replay_op_text(k, 0, text, sizeof text);
    set(b, o, "op", json_string(gpufl__replay_op_word(k->what)));
    set(b, o, "text", json_string(text));
    switch (k->what) {
    case GPUFL__RP_KERNEL:
        set(b, o, "name", json_string(k->name));
        set(b, o, "grid", triple(b, k->grid));
        set(b, o, "block", triple(b, k->block));
        set(b, o, "registers", json_integer(k->registers));
        set(b, o, "smem_static", json_integer(k->smem_static));
        set(b, o, "smem_dynamic", json_integer(k->smem_dynamic));
        set(b, o, "graph", json_boolean(k->graph));
        break;
    case GPUFL__RP_COPY:
        set(b, o, "kind", json_string(gpufl__copy_kind(k->kind)->key));
        set(b, o, "src_kind", json_string(gpufl__mem_kind(k->src_kind)->key));
        set(b, o, "dst_kind", json_string(gpufl__mem_kind(k->dst_kind)->key));
        set(b, o, "bytes", u64(k->bytes));
        set(b, o, "graph", json_boolean(k->graph));
        break;
    case GPUFL__RP_MEMSET:
        set(b, o, "kind", json_string(gpufl__mem_kind(k->kind)->key));
        set(b, o, "bytes", u64(k->bytes));
        set(b, o, "value", json_integer(k->value));
        set(b, o, "graph", json_boolean(k->graph));
        break;
    case GPUFL__RP_ALLOC:
    case GPUFL__RP_FREE:
        set(b, o, "kind", json_string(gpufl__mem_kind(k->kind)->key));
        set(b, o, "bytes", u64(k->bytes));
        set(b, o, "failed", json_boolean(k->failed));
        break;
    case GPUFL__RP_ALLOCATOR:
        set(b, o, "reason", json_string(k->name));
        set(b, o, "allocated", u64(k->bytes));
        set(b, o, "reserved", u64(k->reserved));
        break;
    default: break;
    }
    return o;
}

/* What a divergence says wherever it is written (the lane's first, each of
 * its list): what changed, which fields, where, how long, whether the
 * lanes met again. Into o. */
static void div_head(jb *b, json_t *o, const gpufl__rp_div *d)
{
    set(b, o, "change", json_string(gpufl__replay_change_key(d->change)));
    json_t *fields = json_array();
    for (unsigned bit = 1; bit <= GPUFL__RP_F_GRAPH; bit <<= 1)
        if (d->fields & bit)
            push(b, fields, json_string(gpufl__replay_field_key(bit)));
    set(b, o, "fields", fields);
    set(b, o, "index_a", index_or_null(d->at_a));
    set(b, o, "index_b", index_or_null(d->at_b));
    set(b, o, "span_a", u64(d->span_a));
    set(b, o, "span_b", u64(d->span_b));
    set(b, o, "resynced", json_boolean(d->resynced));
}

static json_t *divergence_json(jb *b, const gpufl__replay *r, const gpufl__rp_lane *l)
{
    json_t *d = json_object();
    const gpufl__rp_div first = {.change = l->change,
                                 .fields = l->fields,
                                 .at_a = l->at_a,
                                 .at_b = l->at_b,
                                 .span_a = l->span_a,
                                 .span_b = l->span_b,
                                 .resynced = l->resynced};
    div_head(b, d, &first);
    json_t *lines = json_array();
    for (size_t k = 0; k < l->nlines; k++) {
        const gpufl__rp_line *x = &l->lines[k];
        json_t *o = json_object();
        char tag[2] = {x->tag, 0};
        set(b, o, "tag", json_string(tag));
        set(b, o, "index_a", index_or_null(x->index_a));
        set(b, o, "index_b", index_or_null(x->index_b));
        set(b, o, "at_ns", u64(x->at_ns));
        set(b, o, "op", op_json(b, &r->keys[x->key]));
        push(b, lines, o);
    }
    set(b, d, "lines", lines);
    return d;
}

static json_t *lane_json(jb *b, const gpufl__replay *r, const gpufl__rp_lane *l)
{
    json_t *o = json_object();
    bool stream = l->kind == GPUFL__RP_LANE_STREAM;
    set(b, o, "lane", json_string(gpufl__replay_lane_key(l->kind)));
    set(b, o, "device", json_integer(l->device));
    set(b, o, "device_b", json_integer(l->device_b));
    set(b, o, "stream_a", stream && l->has_a ? json_integer(l->stream_a) : json_null());
    set(b, o, "stream_b", stream && l->has_b ? json_integer(l->stream_b) : json_null());
    set(b, o, "mapped", json_boolean(l->mapped));
    set(b, o, "ops_a", u64(l->n_a));
    set(b, o, "ops_b", u64(l->n_b));
    set(b, o, "same", json_boolean(l->same));
    set(b, o, "first_divergence", l->same ? json_null() : divergence_json(b, r, l));
    set(b, o, "divergences", u64(l->divergences));
    set(b, o, "changed", u64(l->changed));
    set(b, o, "only_a", u64(l->only_a));
    set(b, o, "only_b", u64(l->only_b));
    set(b, o, "unaligned_a", u64(l->unaligned_a));
    set(b, o, "unaligned_b", u64(l->unaligned_b));
    set(b, o, "capped", json_boolean(l->capped));
    json_t *divs = json_array();
    for (size_t k = 0; k < l->ndivs; k++) {
        const gpufl__rp_div *d = &l->divs[k];
        json_t *x = json_object();
        div_head(b, x, d);
        set(b, x, "op_a", d->key_a == GPUFL__RP_NOKEY ? json_null() : op_json(b, &r->keys[d->key_a]));
        set(b, x, "op_b", d->key_b == GPUFL__RP_NOKEY ? json_null() : op_json(b, &r->keys[d->key_b]));
        push(b, divs, x);
    }
    set(b, o, "divergence_list", divs);
    json_t *counts = json_array();
    for (size_t k = 0; k < l->ncounts; k++) {
        json_t *c = json_object();
        set(b, c, "op", op_json(b, &r->keys[l->counts[k].key]));
        set(b, c, "a", u64(l->counts[k].n_a));
        set(b, c, "b", u64(l->counts[k].n_b));
        push(b, counts, c);
    }
    set(b, o, "counts", counts);
    set(b, o, "counts_total", u64(l->counts_total));
    set(b, o, "looks_like_b", l->looks_like ? json_integer(l->looks_like_b) : json_null());
    return o;
}

json_t *gpufl__replay_json(const gpufl__replay *r, const char *a, const char *b, const char *selection)
{
    jb jb = {0};
    json_t *root = json_object();
    set(&jb, root, "a", json_string(a ? a : ""));
    set(&jb, root, "b", json_string(b ? b : ""));
    set(&jb, root, "same", json_boolean(r->same));
    set(&jb, root, "selection", json_string(selection ? selection : "whole sessions"));
    set(&jb, root, "stream_pairing", json_string("order_of_first_use"));
    set(&jb, root, "lanes_compared", u64(r->nlanes));
    set(&jb, root, "lanes_differ", u64(r->ndiffer));
    set(&jb, root, "ops_a", u64(r->ops_a));
    set(&jb, root, "ops_b", u64(r->ops_b));
    json_t *g = json_object();
    set(&jb, g, "compared", json_boolean(r->graphs_compared));
    set(&jb, g, "a", u64(r->graphs_a));
    set(&jb, g, "b", u64(r->graphs_b));
    set(&jb, root, "graph_launches", g);
    json_t *lanes = json_array();
    for (size_t i = 0; i < r->nlanes; i++)
        push(&jb, lanes, lane_json(&jb, r, &r->lanes[i]));
    set(&jb, root, "lanes", lanes);
    if (jb.failed) {
        json_decref(root);
        return NULL;
    }
    return root;
}
