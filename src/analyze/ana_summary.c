/*
 * The executive summary (analysis.h): the session's span, totals of GPU
 * work, host waits, scopes and allocations, what was lost, and per device
 * its busy time (the union of its work's intervals), NVML utilization and
 * memory peaks.
 *
 * One merged walk over GPU work in start order (gpufl__ops) gives every
 * device's busy union with one open interval per device; one pass over the
 * NVML samples gives the rest. Memory: per device and per stream row.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/analysis.h"
#include "read/rows.h"

/* The open busy stretch of one device during the walk. */
typedef struct busy_run {
    uint64_t s, e;
    bool open;
} busy_run;

typedef struct summary_build {
    gpufl__rows a;
    ana_map slot_of_dev; /* device index -> slot in devs */
    gpufl__ana_device_summary *devs;
    size_t ndevs, cap;
    busy_run *runs;        /* per slot */
    uint32_t *stream_slot; /* per stream row */
} summary_build;

static int dev_slot(summary_build *b, uint32_t dev, uint32_t *slot)
{
    int rc = gpufl__ana_map_put(&b->slot_of_dev, dev, 0, (uint32_t)b->ndevs, slot);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (gpufl__ana_grow(&b->devs, &b->cap, b->ndevs + 1, sizeof *b->devs) != 0)
        return GPUFL_ENOMEM;
    gpufl__ana_device_summary *d = &b->devs[b->ndevs++];
    memset(d, 0, sizeof *d);
    d->device = dev;
    const gpufl_trace_device *info = gpufl__rows_device(&b->a, dev);
    if (info) {
        d->name = info->name;
        d->mem_total_bytes = info->memory_total_bytes;
    }
    return 0;
}

/* Clips [s, e) to the session: work recorded outside it (a clock skew, a
 * session that ended before its last buffer) must not make busy > wall. */
static void busy_add(const gpufl__rows *a, busy_run *r, gpufl__ana_device_summary *d, uint64_t s, uint64_t e)
{
    s = s < a->start_ns ? a->start_ns : s;
    e = e > a->end_ns ? a->end_ns : e;
    if (e <= s)
        return;
    if (r->open && s <= r->e) {
        if (e > r->e)
            r->e = e;
        return;
    }
    if (r->open)
        d->busy_ns += r->e - r->s;
    *r = (busy_run){s, e, true};
}

static int walk_work(summary_build *b, gpufl__ana_summary *out)
{
    const gpufl__rows *a = &b->a;
    size_t nst = gpufl__streams_n(a);
    b->stream_slot = malloc((nst ? nst : 1) * sizeof *b->stream_slot);
    if (!b->stream_slot)
        return GPUFL_ENOMEM;
    for (size_t s = 0; s < nst; s++)
        b->stream_slot[s] = GPUFL__ANA_NONE;
    gpufl__ops it;
    gpufl__op op;
    gpufl__ops_begin(&it, a);
    while (gpufl__ops_next(&it, &op)) {
        uint32_t slot = b->stream_slot[op.stream_row];
        if (slot == GPUFL__ANA_NONE) {
            size_t before = b->ndevs;
            int rc = dev_slot(b, gpufl__stream_device(a, op.stream_row), &slot);
            if (rc != 0)
                return rc;
            b->stream_slot[op.stream_row] = slot;
            if (b->ndevs > before) { /* a device first seen here */
                busy_run *runs = realloc(b->runs, b->ndevs * sizeof *runs);
                if (!runs)
                    return GPUFL_ENOMEM;
                b->runs = runs;
                memset(&runs[slot], 0, sizeof *runs);
            }
        }
        gpufl__ana_device_summary *d = &b->devs[slot];
        uint64_t dur = op.end - op.start;
        if (op.table == GPUFL__TBL_KERNEL) {
            d->kernels++;
            d->kernel_ns += dur;
        } else {
            const gpufl_trace_transfers *x = op.table == GPUFL__TBL_COPY ? a->copies : a->memsets;
            uint64_t bytes = gpufl__x_bytes(x, op.row);
            if (op.table == GPUFL__TBL_COPY) {
                d->copies++;
                d->copy_bytes += bytes;
                d->copy_ns += dur;
            } else {
                d->memsets++;
                d->memset_bytes += bytes;
                d->memset_ns += dur;
            }
        }
        if (d->kernels + d->copies + d->memsets == 1 || op.start < d->first_ns)
            d->first_ns = op.start;
        if (op.end > d->last_ns)
            d->last_ns = op.end;
        busy_add(a, &b->runs[slot], d, op.start, op.end);
    }
    for (size_t i = 0; i < b->ndevs; i++) {
        gpufl__ana_device_summary *d = &b->devs[i];
        if (b->runs && b->runs[i].open)
            d->busy_ns += b->runs[i].e - b->runs[i].s;
        out->kernels += d->kernels;
        out->kernel_ns += d->kernel_ns;
        out->copies += d->copies;
        out->copy_bytes += d->copy_bytes;
        out->copy_ns += d->copy_ns;
        out->memsets += d->memsets;
        out->memset_bytes += d->memset_bytes;
        out->memset_ns += d->memset_ns;
    }
    return 0;
}

static int walk_samples(summary_build *b)
{
    const gpufl__rows *a = &b->a;
    uint32_t slot = GPUFL__ANA_NONE, slot_dev = 0;
    double *util_sum = NULL;
    size_t util_cap = 0;
    int rc = 0;
    for (size_t i = 0; i < gpufl__d_n(a); i++) {
        uint32_t dev = gpufl__d_device(a, i);
        if (slot == GPUFL__ANA_NONE || dev != slot_dev) {
            if ((rc = dev_slot(b, dev, &slot)) != 0)
                goto out;
            slot_dev = dev;
            size_t old = util_cap;
            if ((rc = gpufl__ana_grow(&util_sum, &util_cap, b->ndevs, sizeof *util_sum)) != 0)
                goto out;
            for (size_t j = old; j < util_cap; j++)
                util_sum[j] = 0;
        }
        gpufl__ana_device_summary *d = &b->devs[slot];
        uint32_t valid = gpufl__d_valid(a, i);
        d->samples++;
        if (valid & GPUFL__DS_GPU_UTIL) {
            uint32_t u = gpufl__d_util(a, i);
            d->util_samples++;
            util_sum[slot] += u;
            if (u > d->util_peak_pct)
                d->util_peak_pct = u;
        }
        if (valid & GPUFL__DS_MEMORY) {
            uint64_t used = gpufl__d_mem_used(a, i);
            if (d->mem_samples++ == 0 || used > d->mem_used_peak_bytes) {
                d->mem_used_peak_bytes = used;
                d->mem_used_peak_ns = gpufl__d_ts(a, i);
            }
            if (!gpufl__rows_device(a, dev) && gpufl__d_mem_total(a, i) > d->mem_total_bytes)
                d->mem_total_bytes = gpufl__d_mem_total(a, i);
        }
        if (valid & GPUFL__DS_PROC_MEM) {
            d->proc_mem_samples++;
            if (gpufl__d_proc_mem(a, i) > d->proc_mem_peak_bytes)
                d->proc_mem_peak_bytes = gpufl__d_proc_mem(a, i);
        }
    }
    for (size_t j = 0; j < b->ndevs && j < util_cap; j++)
        if (b->devs[j].util_samples)
            b->devs[j].util_mean_pct = util_sum[j] / (double)b->devs[j].util_samples;
out:
    free(util_sum);
    return rc;
}

static int by_device(const void *x, const void *y)
{
    uint32_t a = ((const gpufl__ana_device_summary *)x)->device;
    uint32_t b = ((const gpufl__ana_device_summary *)y)->device;
    return (a > b) - (a < b);
}

static void count_rows(const gpufl__rows *a, gpufl__ana_summary *out)
{
    for (size_t i = 0; i < gpufl__y_n(a); i++) {
        out->syncs++;
        out->sync_ns += gpufl__span(gpufl__y_start(a, i), gpufl__y_end(a, i));
    }
    out->scopes = a->scopes->n;
    for (size_t i = 0; i < a->nvtx->n; i++) {
        if (gpufl__s_instant(a->nvtx, i))
            out->nvtx_marks++;
        else
            out->nvtx_ranges++;
    }
    for (size_t i = 0; i < gpufl__m_n(a); i++) {
        if (gpufl__m_is_free(a, i))
            out->frees++;
        else if (gpufl__m_failed(a, i)) /* a failed one allocated nothing */
            out->failed_allocations++;
        else
            out->allocations++;
    }
    const gpufl_trace_info *info = a->info;
    for (int r = 0; r < 16; r++) {
        out->dropped[r] = info->dropped[r];
        out->dropped_total += info->dropped[r];
    }
    out->skipped_bytes = info->skipped_bytes;
    out->skipped_lines = info->skipped_lines;
    out->skipped_chunks = info->skipped_chunks;
}

int gpufl__analyze_summary(const gpufl_trace *t, gpufl__ana_summary *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    summary_build b;
    memset(&b, 0, sizeof b);
    gpufl__rows_open(&b.a, t);
    out->start_ns = b.a.start_ns;
    out->end_ns = b.a.end_ns;
    out->wall_ns = gpufl__span(b.a.start_ns, b.a.end_ns);
    out->ended = b.a.ended;
    int rc = 0;
    for (uint32_t i = 0; i < b.a.info->ndevices && rc == 0; i++) {
        uint32_t slot;
        rc = dev_slot(&b, b.a.info->devices[i].index, &slot);
    }
    if (rc == 0) {
        busy_run *runs = calloc(b.ndevs ? b.ndevs : 1, sizeof *runs);
        if (!runs)
            rc = GPUFL_ENOMEM;
        b.runs = runs;
    }
    if (rc == 0)
        rc = walk_work(&b, out);
    if (rc == 0)
        rc = walk_samples(&b);
    free(b.runs);
    free(b.stream_slot);
    gpufl__ana_map_free(&b.slot_of_dev);
    if (rc != 0) {
        free(b.devs);
        memset(out, 0, sizeof *out);
        return rc;
    }
    count_rows(&b.a, out);
    if (b.ndevs) /* qsort wants a non-NULL array even when empty */
        qsort(b.devs, b.ndevs, sizeof *b.devs, by_device);
    for (size_t i = 0; i < b.ndevs; i++)
        b.devs[i].busy_pct = out->wall_ns ? (double)b.devs[i].busy_ns * 100.0 / (double)out->wall_ns : 0;
    out->ndevices = (uint32_t)b.ndevs;
    out->devices = b.devs;
    return 0;
}

void gpufl__ana_summary_free(gpufl__ana_summary *s)
{
    if (!s)
        return;
    free(s->devices);
    memset(s, 0, sizeof *s);
}
