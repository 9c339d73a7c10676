/*
 * NCCL in one session (ana_nccl.h): the NCCL kernels of a trace, time per
 * collective, and communication against computation per device.
 *
 * Kernel names are classified once per launch configuration (the configs
 * table: a few hundred rows where kernels are millions). The overlap is one
 * walk over the kernels in start order that keeps, per device, the open
 * stretch of the union of NCCL kernels and that of the other kernels: a
 * stretch closes when a kernel of its kind starts after its end, and adds
 * its intersection with the other kind's open stretch. Every intersecting
 * pair of stretches is counted exactly once that way: whichever closes
 * first finds the other still open (it began before the first ended, and
 * closes later), and a stretch that is open cannot grow into one that has
 * closed, since kernels arrive in start order. Memory: per device.
 *
 * Threads: any; only reads the trace.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_nccl.h"
#include "analyze/ana_util.h"
#include "read/rows.h"

/* ---- ops ------------------------------------------------------------------- */

/* Per launch configuration: is it NCCL's, and its kind. */
typedef struct cfg_kind {
    gpufl__nccl_kind kind;
    bool nccl;
} cfg_kind;

/* The kinds of every configuration; *any: whether one is NCCL's. NULL when out of memory. */
static cfg_kind *classify_configs(const gpufl__rows *a, bool *any)
{
    size_t n = a->configs->n;
    cfg_kind *c = calloc(n ? n : 1, sizeof *c);
    if (!c)
        return NULL;
    *any = false;
    for (size_t i = 0; i < n; i++) {
        c[i].nccl = gpufl__nccl_classify(gpufl__rows_str(a, gpufl__cfg_name(a, (uint32_t)i)), &c[i].kind);
        uint32_t mangled = gpufl__cfg_mangled(a, (uint32_t)i);
        if (!c[i].nccl && mangled)
            c[i].nccl = gpufl__nccl_classify(gpufl__rows_str(a, mangled), &c[i].kind);
        *any |= c[i].nccl;
    }
    return c;
}

static bool config_nccl(const gpufl__rows *a, const cfg_kind *c, size_t i)
{
    uint32_t cfg = gpufl__k_config(a, i);
    return cfg < a->configs->n && c[cfg].nccl;
}

/* A kernel whose name does not tell the collective (Generic), or tells only that it is point-to-point
 * (SendRecv), launched inside one of NCCL's API ranges: the range's collective. */
static void refine(const gpufl__rows *a, size_t i, gpufl__nccl_op *op)
{
    uint8_t coll = op->kind.coll;
    if (coll != GFL_NCCL_OTHER && coll != GFL_NCCL_SEND_RECV)
        return;
    uint32_t caller = gpufl__k_caller(a, i);
    if (caller >= a->callers->n)
        return;
    unsigned api = gpufl__nccl_coll_of_api(gpufl__rows_str(a, gpufl__caller_nvtx(a, caller)));
    bool p2p = api == GFL_NCCL_SEND || api == GFL_NCCL_RECV;
    /* A SendRecv kernel runs sends and receives, never a collective; Generic may run either. */
    if (api == GFL_NCCL_NONE || (coll == GFL_NCCL_SEND_RECV && !p2p))
        return;
    op->kind.coll = (uint8_t)api;
    op->coll_from_nvtx = 1;
}

int gpufl__nccl_ops_of(const gpufl_trace *t, gpufl__nccl_ops *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    bool any;
    cfg_kind *c = classify_configs(&a, &any);
    if (!c)
        return GPUFL_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; any && i < gpufl__k_n(&a); i++) /* a session without NCCL skips the kernels */
        n += config_nccl(&a, c, i);
    if (n) {
        out->op = calloc(n, sizeof *out->op);
        if (!out->op) {
            free(c);
            return GPUFL_ENOMEM;
        }
    }
    for (size_t i = 0; i < gpufl__k_n(&a) && out->n < n; i++) {
        if (!config_nccl(&a, c, i))
            continue;
        gpufl__nccl_op *op = &out->op[out->n++];
        uint64_t s = gpufl__k_start(&a, i), e = gpufl__k_end(&a, i);
        op->start_ns = s;
        op->end_ns = e > s ? e : s;
        op->kernel_row = (uint32_t)i;
        op->stream_row = gpufl__k_stream_row(&a, i);
        op->device = (uint16_t)gpufl__k_device(&a, i);
        op->kind = c[gpufl__k_config(&a, i)].kind;
        refine(&a, i, op);
    }
    free(c);
    int rc = gpufl__nccl_bytes_attach(t, out);
    if (rc != 0)
        gpufl__nccl_ops_free(out);
    return rc;
}

void gpufl__nccl_ops_free(gpufl__nccl_ops *o)
{
    if (!o)
        return;
    free(o->op);
    memset(o, 0, sizeof *o);
}

/* ---- overlap ------------------------------------------------------------------- */

enum { COMM = 0, COMPUTE = 1 };

typedef struct stretch {
    uint64_t s, e;
    bool open;
} stretch;

typedef struct dev_walk {
    gpufl__nccl_overlap o;
    stretch x[2]; /* COMM, COMPUTE */
    uint64_t first, last;
    bool has_comm;
} dev_walk;

static void close_stretch(dev_walk *d, int kind)
{
    stretch *x = &d->x[kind], *y = &d->x[!kind];
    if (!x->open)
        return;
    uint64_t *len = kind == COMM ? &d->o.comm_ns : &d->o.compute_ns;
    *len += x->e - x->s;
    if (y->open) {
        uint64_t s = x->s > y->s ? x->s : y->s, e = x->e < y->e ? x->e : y->e;
        if (e > s)
            d->o.overlap_ns += e - s;
    }
    x->open = false;
}

static void add_kernel(dev_walk *d, int kind, uint64_t s, uint64_t e)
{
    stretch *x = &d->x[kind];
    if (x->open && s <= x->e) {
        if (e > x->e)
            x->e = e;
    } else {
        close_stretch(d, kind);
        *x = (stretch){s, e, true};
    }
    if (e > d->last)
        d->last = e;
    d->has_comm |= kind == COMM;
}

static int cmp_device(const void *pa, const void *pb)
{
    const gpufl__nccl_overlap *a = pa, *b = pb;
    return (a->device > b->device) - (a->device < b->device);
}

int gpufl__nccl_overlap_of(const gpufl_trace *t, const gpufl__nccl_ops *ops, gpufl__nccl_overlap **out, size_t *n)
{
    if (!out || !n)
        return GPUFL_EINVAL;
    *out = NULL;
    *n = 0;
    if (!t || !ops || (ops->n && !ops->op))
        return GPUFL_EINVAL;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    for (size_t j = 0; j < ops->n; j++)
        if (ops->op[j].kernel_row >= gpufl__k_n(&a) || (j && ops->op[j].kernel_row <= ops->op[j - 1].kernel_row))
            return GPUFL_EINVAL;
    if (!ops->n)
        return 0;
    dev_walk *devs = NULL;
    size_t ndevs = 0, cap = 0;
    ana_map slot_of = {0};
    int rc = 0;
    size_t j = 0;
    uint32_t last_device = UINT32_MAX, slot = 0; /* runs of one device's kernels skip the map */
    for (size_t i = 0; i < gpufl__k_n(&a) && rc == 0; i++) {
        uint32_t device = gpufl__k_device(&a, i);
        uint64_t s = gpufl__k_start(&a, i), e = gpufl__k_end(&a, i);
        e = e > s ? e : s;
        if (device != last_device) {
            int found = gpufl__ana_map_put(&slot_of, device, 0, (uint32_t)ndevs, &slot);
            if (found < 0 || (found == 0 && gpufl__ana_grow(&devs, &cap, ndevs + 1, sizeof *devs) != 0)) {
                rc = GPUFL_ENOMEM;
                break;
            }
            if (found == 0)
                devs[ndevs++] = (dev_walk){.o.device = (uint16_t)device, .first = s, .last = e};
            last_device = device;
        }
        bool comm = j < ops->n && ops->op[j].kernel_row == i;
        j += comm;
        add_kernel(&devs[slot], comm ? COMM : COMPUTE, s, e);
    }
    gpufl__ana_map_free(&slot_of);
    gpufl__nccl_overlap *res = rc == 0 ? calloc(ndevs ? ndevs : 1, sizeof *res) : NULL;
    if (!res) {
        free(devs);
        return GPUFL_ENOMEM;
    }
    size_t m = 0;
    for (size_t d = 0; d < ndevs; d++) {
        dev_walk *w = &devs[d];
        if (!w->has_comm)
            continue;
        close_stretch(w, COMM); /* then COMPUTE, which finds COMM closed: their overlap counted once */
        close_stretch(w, COMPUTE);
        w->o.span_ns = w->last - w->first;
        res[m++] = w->o;
    }
    free(devs);
    qsort(res, m, sizeof *res, cmp_device);
    *out = res;
    *n = m;
    return 0;
}

/* ---- time per collective ------------------------------------------------------------ */

static int cmp_row(const void *pa, const void *pb)
{
    const gpufl__nccl_row *a = pa, *b = pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    if (a->coll != b->coll)
        return a->coll < b->coll ? -1 : 1;
    if (a->algo != b->algo)
        return a->algo < b->algo ? -1 : 1;
    return (a->proto > b->proto) - (a->proto < b->proto);
}

int gpufl__nccl_summary_of(const gpufl__nccl_ops *ops, gpufl__nccl_row **out, size_t *n)
{
    if (!out || !n)
        return GPUFL_EINVAL;
    *out = NULL;
    *n = 0;
    if (!ops || (ops->n && !ops->op))
        return GPUFL_EINVAL;
    gpufl__nccl_row *rows = NULL;
    size_t nrows = 0, cap = 0;
    ana_map row_of = {0};
    int rc = 0;
    for (size_t j = 0; j < ops->n; j++) {
        const gpufl__nccl_op *op = &ops->op[j];
        uint64_t key = (uint64_t)op->kind.coll << 16 | (uint64_t)op->kind.algo << 8 | op->kind.proto;
        uint32_t r;
        int found = gpufl__ana_map_put(&row_of, op->device, key, (uint32_t)nrows, &r);
        if (found < 0 || (found == 0 && gpufl__ana_grow(&rows, &cap, nrows + 1, sizeof *rows) != 0)) {
            rc = GPUFL_ENOMEM;
            break;
        }
        if (found == 0)
            rows[nrows++] = (gpufl__nccl_row){
                .device = op->device, .coll = op->kind.coll, .algo = op->kind.algo, .proto = op->kind.proto};
        gpufl__nccl_row *w = &rows[r];
        uint64_t dur = op->end_ns - op->start_ns;
        w->flags |= op->kind.flags;
        w->count++;
        w->total_ns += dur;
        if (dur > w->max_ns)
            w->max_ns = dur;
        if (op->has_bytes) {
            w->bytes += op->bytes;
            w->bytes_known++;
            double alg, bus;
            /* the collective the event names: a SendRecv kernel's is Send or Recv */
            if (gpufl__nccl_bw_bytes(op->api_coll ? op->api_coll : op->kind.coll, op->bytes, op->nranks, &alg, &bus)) {
                w->bw_ns += dur;
                w->alg_bytes += alg;
                w->bus_bytes += bus;
            }
        }
    }
    gpufl__ana_map_free(&row_of);
    if (rc != 0) {
        free(rows);
        return rc;
    }
    if (nrows)
        qsort(rows, nrows, sizeof *rows, cmp_row);
    *out = rows;
    *n = nrows;
    return 0;
}

/* ---- the report's section ------------------------------------------------------------ */

static uint64_t busy_of(const gpufl__ana_summary *s, uint16_t device)
{
    for (uint32_t i = 0; s && i < s->ndevices; i++)
        if (s->devices[i].device == device)
            return s->devices[i].busy_ns;
    return 0;
}

void gpufl__nccl_report_free(gpufl__nccl_report *r)
{
    if (!r)
        return;
    gpufl__nccl_ops_free(&r->ops);
    free(r->rows);
    free(r->overlap);
    free(r);
}

int gpufl__nccl_report_of(const gpufl_trace *t, const gpufl__ana_summary *s, gpufl__nccl_report **out)
{
    if (!out)
        return GPUFL_EINVAL;
    *out = NULL;
    if (!t)
        return GPUFL_EINVAL;
    gpufl__nccl_report *r = calloc(1, sizeof *r);
    if (!r)
        return GPUFL_ENOMEM;
    int rc = gpufl__nccl_ops_of(t, &r->ops);
    if (rc == 0 && r->ops.n == 0) {
        gpufl__nccl_report_free(r);
        return 0;
    }
    if (rc == 0)
        rc = gpufl__nccl_summary_of(&r->ops, &r->rows, &r->nrows);
    if (rc == 0)
        rc = gpufl__nccl_overlap_of(t, &r->ops, &r->overlap, &r->noverlap);
    if (rc != 0) {
        gpufl__nccl_report_free(r);
        return rc;
    }
    for (size_t i = 0; i < r->noverlap; i++)
        r->overlap[i].busy_ns = busy_of(s, r->overlap[i].device);
    for (size_t i = 0; i < r->nrows; i++) {
        uint64_t busy = busy_of(s, r->rows[i].device);
        r->rows[i].busy_pct = busy ? (double)r->rows[i].total_ns * 100.0 / (double)busy : 0;
    }
    *out = r;
    return 0;
}
