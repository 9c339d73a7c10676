/*
 * The flight recorder's part of the report (analysis.h, "flight recorder"):
 * how much of the session the trace windows covered, and, when the session
 * holds a crash or an out-of-memory, what led up to it: the last events on
 * the thread and device concerned, and for an out-of-memory the allocation
 * that failed and those live at that moment.
 *
 * The incident is the crash when there is one (it ended the program), else
 * the first failed allocation (its bytes and device are known), else the
 * first trigger of kind "oom" (a rule that saw the device full). Cost: one
 * pass over the work, scope and memory rows up to the incident, run only
 * when there is one. Threads: any; reads the trace only.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_live_at.h"
#include "analyze/ana_util.h"
#include "analyze/analysis.h"
#include "read/rows.h"

#define NO_DEVICE UINT32_MAX

static void windows(const gpufl__rows *a, gpufl__ana_flight *out)
{
    const gpufl_trace_windows *w = a->windows;
    uint64_t covered = 0, upto = a->start_ns; /* rows come by begin: the union, in one pass */
    for (size_t i = 0; i < w->n; i++) {
        gpufl__window_row r;
        gpufl__window_row_get(a, i, &r);
        uint64_t b = r.begin > upto ? r.begin : upto, e = r.end < a->end_ns ? r.end : a->end_ns;
        if (e > b) {
            covered += e - b;
            upto = e;
        }
    }
    out->nwindows = w->n;
    out->traced_ns = covered;
    out->session_ns = gpufl__span(a->start_ns, a->end_ns);
}

/* Finds the incident; false when the session has none. */
static bool incident(const gpufl__rows *a, gpufl__ana_flight *out)
{
    const gpufl_trace_crash *c = gpufl_trace_get_crash(a->t);
    out->incident_device = NO_DEVICE;
    if (c) {
        out->incident = GPUFL__ANA_INCIDENT_CRASH;
        out->incident_ns = c->ts_ns;
        out->incident_tid = c->tid;
        return true;
    }
    for (size_t i = 0; i < gpufl__m_n(a); i++)
        if (gpufl__m_failed(a, i)) {
            out->incident = GPUFL__ANA_INCIDENT_OOM;
            out->incident_ns = gpufl__m_ts(a, i);
            out->incident_tid = gpufl__caller_tid(a, gpufl__m_caller(a, i));
            out->incident_device = gpufl__m_device(a, i);
            out->has_failed = true;
            out->failed_bytes = gpufl__m_bytes(a, i);
            out->failed_ns = out->incident_ns;
            return true;
        }
    for (size_t i = 0; i < a->triggers->n; i++)
        if (!strcmp(gpufl__rows_str(a, a->triggers->kind[i]), "oom")) {
            out->incident = GPUFL__ANA_INCIDENT_OOM;
            out->incident_ns = a->triggers->ts_ns[i];
            out->incident_tid = a->triggers->tid[i];
            return true;
        }
    return false;
}

typedef struct cand {
    gpufl__ana_last_event ev;
    uint64_t seq; /* ties keep table, then row order */
} cand;

typedef struct cands {
    cand *v;
    size_t n, cap;
} cands;

static int cand_cmp(const void *x, const void *y)
{
    const cand *p = x, *q = y;
    if (p->ev.ts_ns != q->ev.ts_ns)
        return p->ev.ts_ns < q->ev.ts_ns ? -1 : 1;
    return (p->seq > q->seq) - (p->seq < q->seq);
}

static bool concerned(const gpufl__ana_flight *f, uint32_t tid, uint32_t device)
{
    return (f->incident_tid && tid == f->incident_tid) ||
           (f->incident_device != NO_DEVICE && device == f->incident_device);
}

static int add(cands *c, const gpufl__ana_last_event *ev)
{
    if (gpufl__ana_grow(&c->v, &c->cap, c->n + 1, sizeof *c->v) != 0)
        return GPUFL_ENOMEM;
    c->v[c->n].ev = *ev;
    c->v[c->n].seq = c->n;
    c->n++;
    return 0;
}

/* Every event of the thread or device concerned up to the incident. */
static int collect(const gpufl__rows *a, const gpufl__ana_flight *f, cands *c)
{
    uint64_t at = f->incident_ns;
    static const unsigned work[] = {GPUFL__TBL_KERNEL, GPUFL__TBL_COPY, GPUFL__TBL_MEMSET};
    static const uint8_t what[] = {GPUFL__ANA_LAST_KERNEL, GPUFL__ANA_LAST_COPY, GPUFL__ANA_LAST_MEMSET};
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < gpufl__rows_n(a, work[k]) && gpufl__row_start(a, work[k], i) <= at; i++) {
            uint32_t tid = gpufl__row_tid(a, work[k], i), dev = gpufl__row_device(a, work[k], i);
            if (!concerned(f, tid, dev))
                continue;
            gpufl__ana_last_event ev = {
                .ts_ns = gpufl__row_start(a, work[k], i),
                .end_ns = gpufl__row_end(a, work[k], i),
                .what = what[k],
                .name = work[k] == GPUFL__TBL_KERNEL ? gpufl__k_name(a, i) : 0,
                .bytes = work[k] == GPUFL__TBL_KERNEL ? 0 : gpufl__x_bytes(gpufl__rows_xfers(a, work[k]), i),
                .device = dev,
                .tid = tid};
            if (add(c, &ev) != 0)
                return GPUFL_ENOMEM;
        }
    const gpufl_trace_scopes *s = a->scopes;
    for (size_t i = 0; i < s->n; i++) {
        uint64_t end = gpufl__s_end(s, i);
        if (gpufl__s_unended(s, i) || end > at || !f->incident_tid || gpufl__s_tid(s, i) != f->incident_tid)
            continue;
        gpufl__ana_last_event ev = {.ts_ns = end,
                                    .end_ns = end,
                                    .what = GPUFL__ANA_LAST_SCOPE_END,
                                    .name = gpufl__s_name(s, i),
                                    .device = NO_DEVICE,
                                    .tid = gpufl__s_tid(s, i)};
        if (add(c, &ev) != 0)
            return GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < gpufl__m_n(a) && gpufl__m_ts(a, i) <= at; i++) {
        uint32_t tid = gpufl__caller_tid(a, gpufl__m_caller(a, i)), dev = gpufl__m_device(a, i);
        if (!concerned(f, tid, dev))
            continue;
        gpufl__ana_last_event ev = {.ts_ns = gpufl__m_ts(a, i),
                                    .end_ns = gpufl__m_ts(a, i),
                                    .what = gpufl__m_failed(a, i)    ? GPUFL__ANA_LAST_FAILED_ALLOC
                                            : gpufl__m_is_free(a, i) ? GPUFL__ANA_LAST_FREE
                                                                     : GPUFL__ANA_LAST_ALLOC,
                                    .bytes = gpufl__m_bytes(a, i),
                                    .device = dev,
                                    .tid = tid};
        if (add(c, &ev) != 0)
            return GPUFL_ENOMEM;
    }
    return 0;
}

static int last_events(const gpufl__rows *a, gpufl__ana_flight *f)
{
    cands c = {0};
    int rc = collect(a, f, &c);
    if (rc == 0 && c.n) {
        qsort(c.v, c.n, sizeof *c.v, cand_cmp);
        size_t from = c.n > GPUFL__ANA_LAST_EVENTS ? c.n - GPUFL__ANA_LAST_EVENTS : 0;
        for (size_t i = from; i < c.n; i++)
            f->last[f->nlast++] = c.v[i].ev;
    }
    free(c.v);
    return rc;
}

/* The allocations live on the failed allocation's device when it failed. */
static int live_at_failure(const gpufl__rows *a, gpufl__ana_flight *f)
{
    size_t n = gpufl__m_n(a);
    uint8_t *live;
    int rc = gpufl__ana_live_at(a, f->incident_device, f->failed_ns, false, &live);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!live[i])
            continue;
        f->live_count++;
        f->live_bytes += gpufl__m_bytes(a, i);
        /* insertion into the few largest, largest first, earlier first on ties */
        uint32_t k = f->nlargest < GPUFL__ANA_OOM_LARGEST ? f->nlargest++ : GPUFL__ANA_OOM_LARGEST;
        while (k > 0 && f->largest[k - 1].bytes < gpufl__m_bytes(a, i)) {
            if (k < GPUFL__ANA_OOM_LARGEST)
                f->largest[k] = f->largest[k - 1];
            k--;
        }
        if (k < GPUFL__ANA_OOM_LARGEST) {
            uint32_t c = gpufl__m_caller(a, i);
            f->largest[k] = (gpufl__ana_allocation){.ts_ns = gpufl__m_ts(a, i),
                                                    .address = gpufl__m_address(a, i),
                                                    .bytes = gpufl__m_bytes(a, i),
                                                    .kind = gpufl__m_kind(a, i),
                                                    .tid = gpufl__caller_tid(a, c)};
        }
    }
    free(live);
    return rc;
}

int gpufl__analyze_flight(const gpufl_trace *t, gpufl__ana_flight *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    windows(&a, out);
    if (!incident(&a, out))
        return 0;
    int rc = last_events(&a, out);
    if (rc == 0 && out->has_failed)
        rc = live_at_failure(&a, out);
    return rc;
}

static const struct {
    const char *key, *label;
} last_kinds[GPUFL__ANA_LAST_KIND_COUNT] = {
    [GPUFL__ANA_LAST_KERNEL] = {"kernel", "kernel"},
    [GPUFL__ANA_LAST_COPY] = {"copy", "copy"},
    [GPUFL__ANA_LAST_MEMSET] = {"memset", "memset"},
    [GPUFL__ANA_LAST_SCOPE_END] = {"scope_end", "scope end"},
    [GPUFL__ANA_LAST_ALLOC] = {"alloc", "alloc"},
    [GPUFL__ANA_LAST_FREE] = {"free", "free"},
    [GPUFL__ANA_LAST_FAILED_ALLOC] = {"failed_alloc", "FAILED alloc"},
};

const char *gpufl__ana_last_key(uint8_t what)
{
    return what < GPUFL__ANA_LAST_KIND_COUNT ? last_kinds[what].key : "unknown";
}

const char *gpufl__ana_last_label(uint8_t what)
{
    return what < GPUFL__ANA_LAST_KIND_COUNT ? last_kinds[what].label : "?";
}
