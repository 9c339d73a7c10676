/*
 * The timeline walked as nested slices (timeline_walk.h).
 */
#include "present/timeline/timeline_walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "gpufl/gpufl.h"

#define CALLS GPUFL__TL_CALLS
#define REF_KIND GPUFL__TL_REF_KIND
#define REF_ROW GPUFL__TL_REF_ROW

typedef struct open_slice {
    uint64_t start, end, ref;
} open_slice;

typedef struct lane {
    uint32_t track;
    open_slice *stack;
    size_t n, cap;
} lane;

typedef struct walk {
    const gpufl__timeline *tl;
    const gpufl__rows *x;
    const gpufl__tl_sink *sink;
    gpufl__tl_stats *st;
    /* overflow lanes' tracks, ids from tl->ntracks on */
    gpufl__tl_track *extra;
    size_t nextra, extra_cap;
    /* the lanes of the track being walked */
    lane *lanes;
    size_t nlanes, lanes_cap;
    uint64_t *flows;
    size_t flows_cap;
} walk;

uint64_t gpufl__tl_flow_id(const gpufl__rows *x, unsigned src, size_t row)
{
    uint64_t base = 0;
    if (src >= GPUFL__TBL_COPY)
        base += x->kernels->n;
    if (src >= GPUFL__TBL_MEMSET)
        base += x->copies->n;
    return base + row + 1;
}

uint64_t gpufl__tl_flow_ids(const gpufl__rows *x) { return (uint64_t)x->kernels->n + x->copies->n + x->memsets->n; }

void gpufl__tl_stats_add(gpufl__tl_stats *a, const gpufl__tl_stats *b)
{
    a->tracks += b->tracks;
    a->lanes += b->lanes;
    a->slices += b->slices;
    a->instants += b->instants;
    a->api_calls += b->api_calls;
    a->flows += b->flows;
    a->counters += b->counters;
    a->overlapped += b->overlapped;
    a->unended += b->unended;
    a->events += b->events;
}

static const gpufl__tl_track *track_of(const walk *w, uint32_t id)
{
    return id < w->tl->ntracks ? &w->tl->tracks[id] : &w->extra[id - w->tl->ntracks];
}

static int has_call(const gpufl__work_row *o) { return o->api_start != 0 && o->tid != 0; }

static void slice_of(const open_slice *o, gpufl__tl_slice *s)
{
    memset(s, 0, sizeof *s);
    unsigned kind = REF_KIND(o->ref);
    s->start = o->start;
    s->end = o->end;
    if (kind == GPUFL__TL_WINDOW || kind == GPUFL__TL_TRIGGER) {
        s->src = kind == GPUFL__TL_WINDOW ? GPUFL__TL_SRC_WINDOW : GPUFL__TL_SRC_TRIGGER;
        s->instant = kind == GPUFL__TL_TRIGGER;
    } else {
        s->src = kind >= CALLS ? GPUFL__TL_API : (uint8_t)kind;
        s->op_src = kind >= CALLS ? (uint8_t)(kind - CALLS) : 0;
    }
    s->row = REF_ROW(o->ref);
}

/* Ends every open slice that ended by ts, innermost first. */
static int drain(walk *t, uint64_t ts)
{
    for (size_t l = 0; l < t->nlanes; l++) {
        lane *ln = &t->lanes[l];
        while (ln->n && ln->stack[ln->n - 1].end <= ts) {
            gpufl__tl_slice s;
            slice_of(&ln->stack[--ln->n], &s);
            int rc = t->sink->end(t->sink->ctx, track_of(t, ln->track), &s);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* A new overflow lane of track, lane number `number`; NULL out of memory. */
static gpufl__tl_track *add_lane_track(walk *t, uint32_t track, uint32_t number)
{
    if (GPUFL__GROW(t->extra, t->nextra, t->extra_cap, 16) != 0)
        return NULL;
    const gpufl__tl_track *of = track_of(t, track);
    gpufl__tl_track *tr = &t->extra[t->nextra];
    memset(tr, 0, sizeof *tr);
    tr->id = (uint32_t)(t->tl->ntracks + t->nextra++);
    tr->parent = track;
    tr->kind = GPUFL__TL_LANE;
    tr->tid = of->tid;
    tr->device = of->device;
    tr->stream = of->stream;
    tr->of = track;
    tr->of_kind = of->kind;
    tr->lane = number;
    snprintf(tr->name, sizeof tr->name, "%s #%u", of->name, tr->lane);
    return tr;
}

/* The first lane where a slice ending at `end` nests; a new one when none. */
static int pick_lane(walk *t, uint32_t track, uint64_t end, lane **out)
{
    for (size_t l = 0; l < t->nlanes; l++) {
        lane *ln = &t->lanes[l];
        if (ln->n == 0 || ln->stack[ln->n - 1].end >= end) {
            *out = ln;
            return 0;
        }
    }
    if (GPUFL__GROW(t->lanes, t->nlanes, t->lanes_cap, 4) != 0)
        return GPUFL_ENOMEM;
    lane *ln = &t->lanes[t->nlanes];
    memset(ln, 0, sizeof *ln);
    if (t->nlanes == 0) {
        ln->track = track;
    } else {
        gpufl__tl_track *tr = add_lane_track(t, track, (uint32_t)t->nlanes + 1);
        if (!tr)
            return GPUFL_ENOMEM;
        ln->track = tr->id;
        t->st->lanes++;
        int rc = t->sink->track(t->sink->ctx, tr);
        if (rc)
            return rc;
    }
    t->nlanes++;
    *out = ln;
    return 0;
}

static int push(lane *ln, uint64_t start, uint64_t end, uint64_t ref)
{
    if (GPUFL__GROW(ln->stack, ln->n, ln->cap, 16) != 0)
        return GPUFL_ENOMEM;
    ln->stack[ln->n++] = (open_slice){start, end, ref};
    return 0;
}

static int add_flow(walk *t, size_t n, uint64_t id)
{
    if (GPUFL__GROW(t->flows, n, t->flows_cap, 16) != 0)
        return GPUFL_ENOMEM;
    t->flows[n] = id;
    return 0;
}

/* Emits item a[*i] (and, for a graph launch, the calls that share its
 * slice, advancing *i past them). */
static int emit_item(walk *t, uint32_t track, const uint64_t *a, size_t n, size_t *i)
{
    const gpufl__rows *x = t->x;
    uint64_t ref = a[*i];
    unsigned kind = REF_KIND(ref);
    size_t row = REF_ROW(ref);
    gpufl__tl_slice s;
    memset(&s, 0, sizeof s);
    gpufl__work_row op;
    gpufl__range_row range;
    gpufl__tl_torch_op torch;
    gpufl__window_row window;
    gpufl__trigger_row trigger;
    s.row = row;
    s.start = gpufl__tl_item_start(x, ref);
    if (kind == GPUFL__TL_WINDOW) {
        gpufl__window_row_get(x, row, &window);
        s.src = GPUFL__TL_SRC_WINDOW;
        s.window = &window;
        s.end = window.end;
    } else if (kind == GPUFL__TL_TRIGGER) {
        gpufl__trigger_row_get(x, row, &trigger);
        s.src = GPUFL__TL_SRC_TRIGGER;
        s.trigger = &trigger;
        s.instant = 1;
        s.end = s.start;
    } else if (kind == GPUFL__TBL_SCOPE || kind == GPUFL__TBL_NVTX) {
        gpufl__range_row_get(x, kind, row, &range);
        s.src = (uint8_t)kind;
        s.range = &range;
        s.instant = range.instant;
        s.end = range.instant ? s.start : gpufl__tl_clip(range.start, range.end);
        t->st->unended += range.unended;
        const gpufl__ana_op_rows *ops = &t->tl->ops;
        if (kind == GPUFL__TBL_NVTX && ops->flags && (ops->flags[row] & GPUFL__ANA_OPROW_OP)) {
            uint32_t fwd = ops->forward[row], mod = ops->module[row];
            torch.backward = (ops->flags[row] & GPUFL__ANA_OPROW_BACKWARD) != 0;
            torch.forward_op = fwd == GPUFL__ANA_NONE ? 0 : x->nvtx->name[fwd];
            torch.module = mod == GPUFL__ANA_NONE ? 0 : x->nvtx->name[mod];
            s.torch = &torch;
        }
    } else if (kind < CALLS) {
        gpufl__work_row_get(x, kind, row, &op);
        s.src = (uint8_t)kind;
        s.op = &op;
        s.end = gpufl__tl_clip(op.start, op.end);
        if (kind != GPUFL__TBL_SYNC && has_call(&op))
            s.flow = gpufl__tl_flow_id(x, kind, row);
    } else {
        gpufl__work_row_get(x, kind - CALLS, row, &op);
        s.src = GPUFL__TL_API;
        s.op_src = (uint8_t)(kind - CALLS);
        s.op = &op;
        s.end = gpufl__tl_call_end(op.api_start, op.api_end);
        size_t nf = 0;
        if (add_flow(t, nf++, gpufl__tl_flow_id(x, kind - CALLS, row)) != 0)
            return GPUFL_ENOMEM;
        /* the kernels of one graph launch: one call, a flow to each */
        while (*i + 1 < n && REF_KIND(a[*i + 1]) >= CALLS && gpufl__tl_item_start(x, a[*i + 1]) == s.start) {
            uint64_t r2 = a[*i + 1];
            unsigned src2 = REF_KIND(r2) - CALLS;
            uint64_t start2 = 0, end2 = 0;
            uint32_t tid2;
            gpufl__row_call(x, src2, REF_ROW(r2), &start2, &end2, &tid2);
            if (end2 != op.api_end || gpufl__row_correlation(x, src2, REF_ROW(r2)) != op.correlation)
                break;
            if (add_flow(t, nf++, gpufl__tl_flow_id(x, REF_KIND(r2) - CALLS, REF_ROW(r2))) != 0)
                return GPUFL_ENOMEM;
            ++*i;
        }
        s.flows = t->flows;
        s.nflows = nf;
        t->st->api_calls++;
        t->st->flows += nf;
    }
    int rc = drain(t, s.start);
    if (rc)
        return rc;
    lane *ln;
    if (s.instant) {
        /* instants nest anywhere: always on the track itself */
        if (t->nlanes == 0 && (rc = pick_lane(t, track, s.start, &ln)) != 0)
            return rc;
        ln = &t->lanes[0];
        t->st->instants++;
        return t->sink->begin(t->sink->ctx, track_of(t, ln->track), &s);
    }
    if ((rc = pick_lane(t, track, s.end, &ln)) != 0)
        return rc;
    if (ln != &t->lanes[0])
        t->st->overlapped++;
    if (push(ln, s.start, s.end, ref) != 0)
        return GPUFL_ENOMEM;
    t->st->slices++;
    return t->sink->begin(t->sink->ctx, track_of(t, ln->track), &s);
}

static int emit_track(walk *t, uint32_t track)
{
    size_t n;
    const uint64_t *a = gpufl__tl_items(t->tl, track, &n);
    for (size_t l = 0; l < t->nlanes; l++)
        free(t->lanes[l].stack);
    t->nlanes = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = emit_item(t, track, a, n, &i);
    return rc ? rc : drain(t, UINT64_MAX);
}

static int emit_counters(walk *t)
{
    const gpufl__rows *x = t->x;
    for (size_t c = 0; c < t->tl->ncounters; c++) {
        const gpufl__tl_counter *ct = &t->tl->counters[c];
        const gpufl__tl_track *tr = &t->tl->tracks[ct->track];
        if (ct->metric) {
            const gpufl_trace_pm_samples *p = x->pm_samples;
            for (size_t i = 0; i < p->n; i++) {
                if (p->metric[i] != ct->metric || p->device[i] != ct->device)
                    continue;
                t->st->counters++;
                int rc = t->sink->counter(t->sink->ctx, tr, p->ts_ns[i], p->value[i]);
                if (rc)
                    return rc;
            }
        } else if (ct->device != GPUFL__TL_NONE) {
            for (size_t i = 0; i < gpufl__d_n(x); i++) {
                if (gpufl__d_device(x, i) != ct->device)
                    continue;
                gpufl__dev_row s;
                gpufl__dev_row_get(x, i, &s);
                if (!(s.valid & ct->def->bit))
                    continue;
                t->st->counters++;
                int rc = t->sink->counter(t->sink->ctx, tr, s.ts, gpufl__tl_counter_value(ct->def, &s, NULL));
                if (rc)
                    return rc;
            }
        } else {
            for (size_t i = 0; i < gpufl__h_n(x); i++) {
                gpufl__host_row s;
                gpufl__host_row_get(x, i, &s);
                if (!(s.valid & ct->def->bit))
                    continue;
                t->st->counters++;
                int rc = t->sink->counter(t->sink->ctx, tr, s.ts, gpufl__tl_counter_value(ct->def, NULL, &s));
                if (rc)
                    return rc;
            }
        }
    }
    return 0;
}

int gpufl__timeline_walk(const gpufl__timeline *tl, const gpufl__tl_sink *sink, gpufl__tl_stats *stats)
{
    const gpufl__rows *x = tl->x;
    walk t = {.tl = tl, .x = x, .sink = sink, .st = stats};
    memset(stats, 0, sizeof *stats);
    int rc = 0;
    for (size_t i = 0; i < tl->ntracks && !rc; i++)
        rc = sink->track(sink->ctx, &tl->tracks[i]);
    for (size_t i = 0; i < tl->ntracks && !rc; i++) {
        uint8_t kind = tl->tracks[i].kind;
        if (kind == GPUFL__TL_THREAD || kind == GPUFL__TL_STREAM || kind == GPUFL__TL_SYNCS || kind == GPUFL__TL_FLIGHT)
            rc = emit_track(&t, (uint32_t)i);
    }
    if (!rc)
        rc = emit_counters(&t);
    stats->tracks = tl->ntracks + t.nextra;
    for (unsigned src = GPUFL__TBL_KERNEL; src <= GPUFL__TBL_NVTX; src++)
        stats->events += gpufl__rows_n(x, src);
    stats->events += gpufl__d_n(x) + gpufl__h_n(x);
    if (tl->flight != GPUFL__TL_NONE) {
        size_t n;
        gpufl__tl_items(tl, tl->flight, &n);
        stats->events += n;
    }
    for (size_t l = 0; l < t.nlanes; l++)
        free(t.lanes[l].stack);
    free(t.lanes);
    free(t.flows);
    free(t.extra);
    return rc;
}

int gpufl__timeline_run(const gpufl__rows *x, const gpufl__tl_sink *sink, gpufl__tl_stats *stats)
{
    gpufl__timeline tl;
    int rc = gpufl__timeline_build(&tl, x, GPUFL__TL_ALL);
    if (rc) {
        memset(stats, 0, sizeof *stats);
        return rc;
    }
    rc = gpufl__timeline_walk(&tl, sink, stats);
    gpufl__timeline_free(&tl);
    return rc;
}
