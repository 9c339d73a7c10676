/*
 * The critical path (ana_critpath.h): a walk back from the window's last
 * node through what set each start in the schedule. At work: its own
 * time, then the wait between its constraints allowing it and its start
 * (queue), then the constraint: its launch (launch latency, then the
 * call's start on the host), the work before it on its stream, the work
 * it waited on. At a host node: a sync that waited hands over to the work
 * it waited for (the wake-up counted as sync), a synchronous copy's call
 * to its copy; otherwise its own time, then the host's gap before it,
 * then the host node before it.
 *
 * Linear in the nodes walked. Threads: the caller's.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_critpath.h"
#include "analyze/ana_util.h"
#include "read/rows.h"

typedef struct walk {
    const gpufl__graph *g;
    gpufl__critpath *cp;
    uint64_t from;
    int rc;
} walk;

static void piece(walk *w, unsigned kind, const gpufl__gnode *n, uint64_t a, uint64_t b)
{
    gpufl__critpath *cp = w->cp;
    a = a > w->from ? a : w->from;
    if (b <= a || w->rc)
        return;
    uint8_t sub = kind == GPUFL__CP_COPY ? n->sub : 0;
    uint32_t name = kind == GPUFL__CP_KERNEL ? n->name : 0;
    uint32_t i;
    int put = gpufl__ana_map_put(&cp->index, (uint64_t)kind << 8 | sub, name, (uint32_t)cp->n, &i);
    if (put < 0) {
        w->rc = GPUFL_ENOMEM;
        return;
    }
    if (put == 0) {
        if (gpufl__ana_grow(&cp->items, &cp->cap, cp->n + 1, sizeof *cp->items) != 0) {
            gpufl__ana_map_del(&cp->index, (uint64_t)kind << 8 | sub, name);
            w->rc = GPUFL_ENOMEM;
            return;
        }
        cp->items[cp->n++] = (gpufl__cp_item){.kind = (uint8_t)kind, .sub = sub, .name = name};
    }
    cp->items[i].ns += b - a;
    cp->items[i].count++;
    cp->path_ns += b - a;
}

static void on_path(walk *w, uint32_t v)
{
    gpufl__critpath *cp = w->cp;
    if (w->rc == 0 && gpufl__ana_grow(&cp->work, &cp->wcap, cp->nwork + 1, sizeof *cp->work) != 0)
        w->rc = GPUFL_ENOMEM;
    if (w->rc == 0)
        cp->work[cp->nwork++] = v;
}

static unsigned work_kind(const gpufl__gnode *n)
{
    return n->kind == GPUFL__GN_KERNEL ? GPUFL__CP_KERNEL
           : n->kind == GPUFL__GN_COPY ? GPUFL__CP_COPY
                                       : GPUFL__CP_MEMSET;
}

int gpufl__critpath_add(const gpufl__graph *g, const gpufl__sched *s, uint32_t v, uint64_t from, gpufl__critpath *cp)
{
    walk w = {.g = g, .cp = cp, .from = from};
    if (v == GPUFL__GNONE || v >= g->n)
        return 0;
    uint64_t t = s->end[v];
    cp->window_ns += gpufl__span(from, t);
    /* every step goes to an earlier time or a node with a smaller start:
     * bound the walk anyway, for damaged input */
    for (size_t steps = 0; steps <= 2 * g->n + 2 && t > from && w.rc == 0; steps++) {
        const gpufl__gnode *n = &g->nodes[v];
        if (gpufl__gnode_is_work(n)) {
            uint64_t st = s->start[v], r = s->ready[v];
            piece(&w, work_kind(n), n, st, t);
            on_path(&w, v);
            if (st <= from || s->bind[v] == GPUFL__GNONE)
                break;
            piece(&w, GPUFL__CP_QUEUE, n, r, st);
            uint32_t p = s->bind[v];
            if (s->bind_kind[v] == GPUFL__GE_LAUNCH) {
                piece(&w, GPUFL__CP_LAUNCH, n, s->start[p], r);
                t = s->start[p];
                v = p; /* on to the call's start */
                goto host_start;
            }
            v = p;
            t = s->end[p] < r ? s->end[p] : r;
            continue;
        }
        if (n->kind == GPUFL__GN_CALL && s->end_bind[v] != GPUFL__GNONE) {
            uint32_t op = s->end_bind[v];
            piece(&w, GPUFL__CP_SYNC, n, s->end[op], t);
            v = op;
            t = s->end[op] < t ? s->end[op] : t;
            continue;
        }
        if (n->kind == GPUFL__GN_SYNC && s->bind_kind[v] == GPUFL__GE_SYNC && s->bind[v] != GPUFL__GNONE) {
            uint32_t y = s->bind[v];
            piece(&w, GPUFL__CP_SYNC, n, s->end[y], t);
            v = y;
            t = s->end[y] < t ? s->end[y] : t;
            continue;
        }
        if (n->kind != GPUFL__GN_MARK)
            piece(&w, n->kind == GPUFL__GN_CALL ? GPUFL__CP_CALL : GPUFL__CP_SYNC, n, s->start[v], t);
        t = s->start[v] < t ? s->start[v] : t;
    host_start:;
        uint32_t hp = s->host_pred[v];
        if (hp == GPUFL__GNONE)
            break;
        uint64_t he = s->end[hp];
        piece(&w, GPUFL__CP_HOST, &g->nodes[v], he, t);
        t = he < t ? he : t;
        v = hp;
    }
    return w.rc;
}

uint32_t gpufl__critpath_last_before(const gpufl__graph *g, const gpufl__sched *s, uint64_t to)
{
    uint32_t best = GPUFL__GNONE;
    for (uint32_t i = 0; i < g->n; i++)
        if (s->end[i] <= to && (best == GPUFL__GNONE || s->end[i] > s->end[best]))
            best = i;
    return best;
}

static int by_time(const void *a, const void *b, void *arg)
{
    const gpufl_trace *t = arg;
    const gpufl__cp_item *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    if (x->kind != y->kind)
        return (int)x->kind - (int)y->kind;
    if (x->sub != y->sub)
        return (int)x->sub - (int)y->sub;
    return gpufl__ana_strcmp(t, x->name, y->name);
}

void gpufl__critpath_sort(const gpufl__graph *g, gpufl__critpath *cp)
{
    qsort_r(cp->items, cp->n, sizeof *cp->items, by_time, (void *)g->t);
    gpufl__ana_map_free(&cp->index); /* the items moved: the path is complete (ana_critpath.h) */
    cp->index = (ana_map){0};
}

void gpufl__critpath_free(gpufl__critpath *cp)
{
    if (!cp)
        return;
    free(cp->items);
    free(cp->work);
    gpufl__ana_map_free(&cp->index);
    memset(cp, 0, sizeof *cp);
}

const char *gpufl__cp_kind_name(unsigned kind)
{
    static const char *const names[GPUFL__CP_KIND_COUNT] = {"kernel", "copy",           "memset", "host",
                                                            "call",   "launch latency", "queue",  "sync"};
    return kind < GPUFL__CP_KIND_COUNT ? names[kind] : "unknown";
}
