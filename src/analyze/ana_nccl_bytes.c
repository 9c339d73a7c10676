/*
 * NCCL kernels' bytes from the nccl_coll events of NCCL's profiler plugin
 * (ana_nccl.h, gpufl__nccl_bytes_attach), and the bandwidths nccl-tests
 * reports from bytes and time.
 *
 * One pass over each table: communicators by order of first use (a few),
 * NCCL streams by order of first use (a few), then the k-th event of a
 * communicator against the k-th kernel of its stream.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_nccl.h"
#include "gpufl/gpufl.h"

#define MAX_LANES 64 /* communicators or NCCL streams told apart; more is not matched */

unsigned gpufl__nccl_coll_of_func(const char *func)
{
    if (!func || !func[0])
        return GFL_NCCL_NONE;
    for (unsigned c = 1; c < GFL_NCCL_COLL_COUNT; c++)
        if (c != GFL_NCCL_OTHER && !strcmp(func, gpufl__nccl_coll_name(c)))
            return c;
    return GFL_NCCL_OTHER;
}

bool gpufl__nccl_bw_bytes(unsigned coll, uint64_t bytes, uint32_t n, double *alg_bytes, double *bus_bytes)
{
    double s = (double)bytes, f;
    switch (coll) {
    case GFL_NCCL_ALL_REDUCE:
        if (!n)
            return false;
        f = 2.0 * (n - 1) / n;
        break;
    case GFL_NCCL_ALL_GATHER:
    case GFL_NCCL_REDUCE_SCATTER:
        if (!n)
            return false;
        s *= n;
        f = (double)(n - 1) / n;
        break;
    case GFL_NCCL_BROADCAST:
    case GFL_NCCL_REDUCE:
    case GFL_NCCL_SEND:
    case GFL_NCCL_RECV:
    case GFL_NCCL_SEND_RECV: f = 1.0; break;
    default: return false;
    }
    *alg_bytes = s;
    *bus_bytes = s * f;
    return true;
}

static void note(gpufl__nccl_ops *ops, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(gpufl__nccl_ops *ops, const char *fmt, ...)
{
    size_t used = strlen(ops->bytes_note), cap = sizeof ops->bytes_note;
    if (used + 3 >= cap)
        return;
    if (used) {
        memcpy(ops->bytes_note + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ops->bytes_note + used, cap - used, fmt, ap);
    va_end(ap);
}

/* Whether an event naming collective `api` can be a kernel classified `k`. */
static bool agrees(unsigned api, unsigned k)
{
    if (api == k || k == GFL_NCCL_OTHER || k == GFL_NCCL_NONE || api == GFL_NCCL_OTHER)
        return true;
    bool p2p_api = api == GFL_NCCL_SEND || api == GFL_NCCL_RECV;
    return p2p_api && (k == GFL_NCCL_SEND_RECV || k == GFL_NCCL_SEND || k == GFL_NCCL_RECV);
}

int gpufl__nccl_bytes_attach(const gpufl_trace *t, gpufl__nccl_ops *ops)
{
    const gpufl_trace_nccl_collectives *nc = gpufl_trace_get_nccl_collectives(t);
    ops->recorded = nc ? nc->n : 0;
    ops->matched = 0;
    ops->bytes_note[0] = '\0';
    if (!ops->recorded) {
        if (ops->n)
            note(ops, "bytes: not recorded (run under gpufl run, which sets NCCL_PROFILER_PLUGIN, or set it "
                      "yourself)");
        return 0;
    }
    /* lanes: communicators and NCCL streams, each numbered by first use */
    uint64_t comm[MAX_LANES];
    uint32_t stream[MAX_LANES];
    size_t ncomm = 0, nstream = 0, comm_events[MAX_LANES] = {0}, stream_ops[MAX_LANES] = {0};
    for (size_t i = 0; i < nc->n; i++) {
        size_t c = 0;
        while (c < ncomm && comm[c] != nc->comm_hash[i])
            c++;
        if (c == MAX_LANES) {
            note(ops, "bytes: more than %d NCCL communicators, not matched", MAX_LANES);
            return 0;
        }
        if (c == ncomm)
            comm[ncomm++] = nc->comm_hash[i];
        comm_events[c]++;
    }
    for (size_t j = 0; j < ops->n; j++) {
        size_t s = 0;
        while (s < nstream && stream[s] != ops->op[j].stream_row)
            s++;
        if (s == MAX_LANES) {
            note(ops, "bytes: more than %d NCCL streams, not matched", MAX_LANES);
            return 0;
        }
        if (s == nstream)
            stream[nstream++] = ops->op[j].stream_row;
        stream_ops[s]++;
    }
    if (ncomm != nstream) {
        note(ops, "bytes: %zu NCCL communicator(s) recorded but %zu NCCL stream(s) ran kernels: not matched", ncomm,
             nstream);
        return 0;
    }
    if (ncomm > 1)
        note(ops, "bytes: %zu communicators paired with NCCL streams by order of first use", ncomm);
    /* per lane, the k-th event against the k-th kernel: first check, then give */
    size_t *ev = malloc(nc->n * sizeof *ev), *op = malloc((ops->n ? ops->n : 1) * sizeof *op);
    if (!ev || !op) {
        free(ev);
        free(op);
        return GPUFL_ENOMEM;
    }
    for (size_t lane = 0; lane < ncomm; lane++) {
        size_t ne = 0, no = 0;
        for (size_t i = 0; i < nc->n; i++)
            if (nc->comm_hash[i] == comm[lane])
                ev[ne++] = i;
        for (size_t j = 0; j < ops->n; j++)
            if (ops->op[j].stream_row == stream[lane])
                op[no++] = j;
        if (ne != no) {
            note(ops,
                 "communicator %016" PRIx64 ": %zu collectives recorded but %zu NCCL kernels on its stream "
                 "(grouped calls share a kernel, or tracing missed some): no bytes for it",
                 comm[lane], ne, no);
            continue;
        }
        size_t bad = SIZE_MAX;
        for (size_t k = 0; k < ne && bad == SIZE_MAX; k++)
            if (!agrees(gpufl__nccl_coll_of_func(gpufl_trace_string(t, nc->func[ev[k]])), ops->op[op[k]].kind.coll))
                bad = k;
        if (bad != SIZE_MAX) {
            note(ops,
                 "communicator %016" PRIx64 ": its collective #%zu is %s but kernel #%zu of its stream is %s: "
                 "no bytes for it",
                 comm[lane], bad + 1, gpufl_trace_string(t, nc->func[ev[bad]]), bad + 1,
                 gpufl__nccl_coll_name(ops->op[op[bad]].kind.coll));
            continue;
        }
        for (size_t k = 0; k < ne; k++) {
            gpufl__nccl_op *o = &ops->op[op[k]];
            size_t i = ev[k];
            o->api_coll = (uint8_t)gpufl__nccl_coll_of_func(gpufl_trace_string(t, nc->func[i]));
            o->nranks = nc->nranks[i];
            if (nc->bytes_known[i]) {
                o->bytes = nc->bytes[i];
                o->has_bytes = 1;
                ops->matched++;
            }
        }
        size_t unknown = ne;
        for (size_t k = 0; k < ne; k++)
            unknown -= ops->op[op[k]].has_bytes;
        if (unknown)
            note(ops, "communicator %016" PRIx64 ": %zu collective(s) of an unknown datatype have no bytes", comm[lane],
                 unknown);
    }
    free(ev);
    free(op);
    return 0;
}
