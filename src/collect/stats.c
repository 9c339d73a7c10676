/*
 * Session aggregates (see stats.h).
 */
#include "collect/stats.h"

#include <stdlib.h>
#include <string.h>

void gpufl__stats_init(gpufl__stats *s) { memset(s, 0, sizeof *s); }

static void table_free(gpufl__name_table *t)
{
    free(t->items);
    free(t->slot_of_id);
    memset(t, 0, sizeof *t);
}

void gpufl__stats_free(gpufl__stats *s)
{
    table_free(&s->scopes);
    table_free(&s->kernels);
    memset(s, 0, sizeof *s);
}

/* The record for name id, created on first sight; NULL when out of memory. */
static gpufl__name_stats *table_get(gpufl__name_table *t, uint32_t id)
{
    if (id >= t->ids_cap) {
        size_t cap = t->ids_cap ? t->ids_cap : 256;
        while (cap <= id)
            cap *= 2;
        uint32_t *bigger = realloc(t->slot_of_id, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        memset(bigger + t->ids_cap, 0, (cap - t->ids_cap) * sizeof *bigger);
        t->slot_of_id = bigger;
        t->ids_cap = cap;
    }
    if (t->slot_of_id[id])
        return &t->items[t->slot_of_id[id] - 1];
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        gpufl__name_stats *bigger = realloc(t->items, cap * sizeof *bigger);
        if (!bigger)
            return NULL;
        t->items = bigger;
        t->cap = cap;
    }
    gpufl__name_stats *e = &t->items[t->n++];
    memset(e, 0, sizeof *e);
    e->name = id;
    e->min_ns = UINT64_MAX;
    t->slot_of_id[id] = (uint32_t)t->n;
    return e;
}

static void add_duration(gpufl__stats *s, gpufl__name_table *t, uint32_t id, uint64_t dur)
{
    gpufl__name_stats *e = table_get(t, id);
    if (!e) {
        s->out_of_memory = true;
        return;
    }
    e->count++;
    e->total_ns += dur;
    if (dur < e->min_ns)
        e->min_ns = dur;
    if (dur > e->max_ns)
        e->max_ns = dur;
}

static void add_host(gpufl__host_stats *h, const gfl_host_metrics_payload *m)
{
    h->samples++;
    h->cpu_count = m->cpu_count;
    if (m->valid & GFL_HOST_PROC_CPU) {
        h->proc_cpu_samples++;
        h->proc_cpu_sum_x100 += m->proc_cpu_pct_x100;
        if (m->proc_cpu_pct_x100 > h->proc_cpu_max_x100)
            h->proc_cpu_max_x100 = m->proc_cpu_pct_x100;
    }
    if (m->valid & GFL_HOST_SYS_CPU) {
        h->sys_cpu_samples++;
        h->sys_cpu_sum_x100 += m->sys_cpu_pct_x100;
        if (m->sys_cpu_pct_x100 > h->sys_cpu_max_x100)
            h->sys_cpu_max_x100 = m->sys_cpu_pct_x100;
    }
    if ((m->valid & GFL_HOST_RSS) && m->proc_rss_bytes > h->rss_max)
        h->rss_max = m->proc_rss_bytes;
    if (m->valid & GFL_HOST_RAM) {
        if (m->ram_used_bytes > h->ram_used_max)
            h->ram_used_max = m->ram_used_bytes;
        h->ram_total = m->ram_total_bytes;
    }
}

static void add_device(gpufl__stats *s, uint16_t device, const gfl_device_metrics_payload *m)
{
    if (device >= GFL_STATS_MAX_DEVICES)
        return;
    if (device + 1u > s->ndev)
        s->ndev = device + 1u;
    gpufl__device_stats *d = &s->dev[device];
    d->samples++;
    if (m->valid & GFL_DEV_GPU_UTIL) {
        d->util_samples++;
        d->util_sum += m->gpu_util_pct;
        if (m->gpu_util_pct > d->util_max)
            d->util_max = m->gpu_util_pct;
    }
    if (m->valid & GFL_DEV_MEM) {
        if (m->mem_used_bytes > d->mem_used_max)
            d->mem_used_max = m->mem_used_bytes;
        d->mem_total = m->mem_total_bytes;
    }
    if (m->valid & GFL_DEV_TEMP && (!d->has_temp || m->temp_c > d->temp_max)) {
        d->has_temp = true;
        d->temp_max = m->temp_c;
    }
    if ((m->valid & GFL_DEV_POWER) && m->power_mw > d->power_max_mw)
        d->power_max_mw = m->power_mw;
    if (m->valid & GFL_DEV_ENERGY) {
        if (!d->has_energy)
            d->energy_first_mj = m->energy_mj;
        d->has_energy = true;
        d->energy_last_mj = m->energy_mj;
    }
}

void gpufl__stats_add(gpufl__stats *s, const gfl_event *ev)
{
    if (ev->h.type >= GFL_EV_TYPE_COUNT)
        return;
    s->events[ev->h.type]++;
    if (!s->first_ts || ev->h.ts < s->first_ts)
        s->first_ts = ev->h.ts;
    if (ev->h.ts > s->last_ts)
        s->last_ts = ev->h.ts;
    switch (ev->h.type) {
    case GFL_EV_SCOPE_END:
        add_duration(s, &s->scopes, ev->u.scope.name,
                     ev->h.ts > ev->u.scope.begin_ts ? ev->h.ts - ev->u.scope.begin_ts : 0);
        break;
    case GFL_EV_KERNEL: {
        uint64_t dur = ev->u.kernel.end_ts > ev->h.ts ? ev->u.kernel.end_ts - ev->h.ts : 0;
        add_duration(s, &s->kernels, ev->u.kernel.name, dur);
        s->kernel_total_ns += dur;
        if (ev->u.kernel.end_ts > s->last_ts)
            s->last_ts = ev->u.kernel.end_ts;
        break;
    }
    case GFL_EV_MEMCPY: {
        const gfl_memcpy_payload *m = &ev->u.memcpy;
        gpufl__copy_stats *c = &s->copies[m->copy_kind < GFL_COPY_KIND_COUNT ? m->copy_kind : 0];
        c->count++;
        c->bytes += m->bytes;
        c->total_ns += m->end_ts > ev->h.ts ? m->end_ts - ev->h.ts : 0;
        break;
    }
    case GFL_EV_HOST_METRICS: add_host(&s->host, &ev->u.host); break;
    case GFL_EV_DEVICE_METRICS: add_device(s, ev->h.device, &ev->u.dev); break;
    case GFL_EV_DROPPED:
        /* counted by the collector when it creates the event */
        break;
    case GFL_EV_ENGINE:
        s->has_engine = true;
        s->engine = ev->u.engine;
        break;
    case GFL_EV_CRASH:
        if (!s->crashed) {
            s->crashed = true;
            s->crash_tid = ev->h.tid;
            s->crash_ts = ev->h.ts;
            s->crash = ev->u.crash;
        }
        break;
    default: break;
    }
}

void gpufl__stats_drop(gpufl__stats *s, unsigned reason, unsigned channel, uint64_t n)
{
    if (reason < GFL_DROP_REASON_COUNT && channel < GFL_CHANNEL_COUNT)
        s->dropped[reason][channel] += n;
}

uint64_t gpufl__stats_dropped_total(const gpufl__stats *s)
{
    uint64_t total = 0;
    for (int r = 0; r < GFL_DROP_REASON_COUNT; r++)
        for (int c = 0; c < GFL_CHANNEL_COUNT; c++)
            total += s->dropped[r][c];
    return total;
}
