/*
 * The metrics endpoint's aggregates (metrics_agg.h). Collector thread.
 */
#include "collect/metrics_agg.h"

#include <stdlib.h>

#include "core/record.h"

const uint64_t gpufl__metrics_bounds_ns[GFL_METRICS_BUCKETS] = {
    1000ull,       10000ull,      100000ull,      1000000ull,     5000000ull,     10000000ull,
    25000000ull,   50000000ull,   100000000ull,   250000000ull,   500000000ull,   1000000000ull,
    2500000000ull, 5000000000ull, 10000000000ull, 30000000000ull, 60000000000ull, 300000000000ull,
};

#define NAME_SLOTS (4 * GFL_METRICS_MAX_SCOPES)

gpufl__metrics_agg *gpufl__metrics_agg_new(void) { return calloc(1, sizeof(gpufl__metrics_agg)); }

/* The row of scope name id: found, made while there is room, else
 * "(other)". The table is four times the cap, so probes stay short. */
static uint16_t find_row(gpufl__metrics_agg *a, uint32_t name)
{
    uint32_t h = (name * 2654435761u) & (NAME_SLOTS - 1);
    for (;; h = (h + 1) & (NAME_SLOTS - 1)) {
        if (a->row_of[h] == 0)
            break;
        if (a->key_of[h] == name)
            return (uint16_t)(a->row_of[h] - 1);
    }
    if (a->nscopes == GFL_METRICS_MAX_SCOPES)
        return GPUFL__METRICS_OTHER;
    uint16_t row = (uint16_t)a->nscopes++;
    a->rows[row].name = name;
    a->key_of[h] = name;
    a->row_of[h] = (uint16_t)(row + 1);
    return row;
}

/* find_row, for the name looked up last without a probe. */
static uint16_t row_of_name(gpufl__metrics_agg *a, uint32_t name)
{
    if (name == a->last_name && name)
        return a->last_row;
    uint16_t row = find_row(a, name);
    a->last_name = name;
    a->last_row = row;
    return row;
}

/* A thread's scope ids are consecutive (core/record.h: producer index
 * above, sequence below), so its sequence number picks the slot: one
 * thread's last GFL_METRICS_RECENT scopes all stay, and its writes walk
 * the table in order (a cache line holds 8 of them, where a hash spread
 * every scope begin onto a line of its own). Each thread's walk starts
 * elsewhere, a multiple of a large odd number apart. */
static uint32_t recent_slot(uint64_t scope_id)
{
    uint64_t thread = scope_id >> GFL_SCOPE_SEQ_BITS;
    return (uint32_t)((scope_id + thread * 40503u) & (GFL_METRICS_RECENT - 1));
}

static void add_scope_end(gpufl__metrics_agg *a, const gfl_event *ev)
{
    gpufl__metrics_scope *r = &a->rows[row_of_name(a, ev->u.scope.name)];
    uint64_t dur = ev->h.ts > ev->u.scope.begin_ts ? ev->h.ts - ev->u.scope.begin_ts : 0;
    unsigned b = 0;
    while (b < GFL_METRICS_BUCKETS && dur > gpufl__metrics_bounds_ns[b])
        b++;
    r->bucket[b]++;
    r->count++;
    r->sum_ns += dur;
}

static void add_kernel(gpufl__metrics_agg *a, const gfl_event *ev)
{
    uint64_t id = ev->u.kernel.scope_id;
    unsigned row = GPUFL__METRICS_NO_SCOPE;
    if (id) {
        uint32_t slot = recent_slot(id);
        row = a->recent_id[slot] == id ? a->recent_row[slot] : GPUFL__METRICS_UNKNOWN;
    }
    a->rows[row].kernels++;
    a->rows[row].kernel_ns += ev->u.kernel.end_ts > ev->h.ts ? ev->u.kernel.end_ts - ev->h.ts : 0;
}

static void add_trigger(gpufl__metrics_agg *a, const gfl_event *ev)
{
    const gfl_trigger_payload *t = &ev->u.trigger;
    if (t->outcome >= GFL_TRIGGER_OUTCOME_COUNT)
        return; /* no outcome this build writes */
    gpufl__metrics_trigger *row = &a->triggers[GFL_METRICS_MAX_TRIGGERS];
    for (uint32_t i = 0; i < a->ntriggers; i++)
        if (a->triggers[i].kind == t->kind)
            row = &a->triggers[i];
    if (row == &a->triggers[GFL_METRICS_MAX_TRIGGERS] && a->ntriggers < GFL_METRICS_MAX_TRIGGERS) {
        row = &a->triggers[a->ntriggers++];
        row->kind = t->kind;
    }
    row->count[t->outcome]++;
}

void gpufl__metrics_agg_add(gpufl__metrics_agg *a, const gfl_event *ev)
{
    switch (ev->h.type) {
    case GFL_EV_SCOPE_BEGIN: {
        uint32_t slot = recent_slot(ev->u.scope.id);
        a->recent_id[slot] = ev->u.scope.id;
        a->recent_row[slot] = row_of_name(a, ev->u.scope.name);
        break;
    }
    case GFL_EV_SCOPE_END: add_scope_end(a, ev); break;
    case GFL_EV_KERNEL: add_kernel(a, ev); break;
    case GFL_EV_TRIGGER: add_trigger(a, ev); break;
    default: break;
    }
}
