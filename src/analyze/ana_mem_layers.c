/*
 * The layers of a process's GPU memory and the gaps between them
 * (analysis.h, "memory layers"): each series' peak, the values of all of
 * them at the process's peak, and a timeline decimated to a few hundred
 * points for plots.
 *
 * The timeline is a merge of the device's series by time: every time at
 * which some series has a point is one change; the changes are cut into at most max_points
 * runs of equal length, and a run's point keeps each series' maximum over
 * it (the value carried into the run included), so no peak is lost to the
 * decimation. O(changes x series) time, no memory per change.
 *
 * Threads: any. Sizes: a change per NVML sample, allocator state or
 * allocation event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_mem_series.h"
#include "analyze/ana_util.h"

static const struct {
    const char *key, *label;
} series_names[GPUFL__ANA_MEM_SERIES] = {
    [GPUFL__ANA_MEM_DEVICE] = {"device_used", "device used (NVML, all processes)"},
    [GPUFL__ANA_MEM_PROCESS] = {"process_used", "this process (NVML)"},
    [GPUFL__ANA_MEM_DRIVER] = {"driver", "driver allocations live"},
    [GPUFL__ANA_MEM_RESERVED] = {"reserved", "framework reserved"},
    [GPUFL__ANA_MEM_ACTIVE] = {"active", "framework active"},
    [GPUFL__ANA_MEM_ALLOCATED] = {"allocated", "framework allocated"},
    [GPUFL__ANA_MEM_INACTIVE_SPLIT] = {"inactive_split", "inactive split (fragmentation)"},
    [GPUFL__ANA_MEM_LARGEST_FREE] = {"largest_free", "largest free block"},
};

const char *gpufl__ana_mem_key(uint8_t s) { return s < GPUFL__ANA_MEM_SERIES ? series_names[s].key : "?"; }
const char *gpufl__ana_mem_label(uint8_t s) { return s < GPUFL__ANA_MEM_SERIES ? series_names[s].label : "?"; }

/* The layers that nest, outermost first; the gaps are between neighbours. */
static const uint8_t chain[] = {GPUFL__ANA_MEM_DEVICE, GPUFL__ANA_MEM_PROCESS, GPUFL__ANA_MEM_DRIVER,
                                GPUFL__ANA_MEM_RESERVED, GPUFL__ANA_MEM_ALLOCATED};
#define NCHAIN (sizeof chain / sizeof chain[0])

/* What lies between chain[i] and chain[i + 1]. */
static const char *const step_why[NCHAIN - 1] = {
    "other processes on the GPU",
    "the CUDA context, module images, cuBLAS/cuDNN workspaces and allocations made before "
    "recording started",
    "driver allocations outside the framework's allocator (libraries, NCCL, the program's own "
    "cudaMalloc)",
    "cached by the allocator: free for reuse, not leaked (inactive split: fragmentation)",
};

static size_t chain_pos(uint8_t layer)
{
    for (size_t i = 0; i < NCHAIN; i++)
        if (chain[i] == layer)
            return i;
    return NCHAIN;
}

const char *gpufl__ana_mem_gap_why(uint8_t upper, uint8_t lower, char *buf, size_t len)
{
    size_t u = chain_pos(upper), l = chain_pos(lower), n = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = u; i < l && l < NCHAIN && n < len; i++) {
        int w = snprintf(buf + n, len - n, "%s%s", i > u ? "; " : "", step_why[i]);
        n += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

const char *gpufl__ana_mem_gap_key(uint8_t upper, uint8_t lower, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%s", gpufl__ana_mem_key(upper), gpufl__ana_mem_key(lower));
    return buf;
}

/* The timeline of one device: a merge of its series by time. */
typedef struct merge {
    ana_mem_dev *d;
    size_t next[GPUFL__ANA_MEM_SERIES]; /* per series: its next point */
    uint64_t cur[GPUFL__ANA_MEM_SERIES];
    uint32_t valid;
} merge;

/* Takes the earliest next point of any series; false when none is left. */
static bool merge_step(merge *g, uint64_t *ts)
{
    unsigned best = GPUFL__ANA_MEM_SERIES;
    for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++) {
        const ana_series *x = &g->d->s[s];
        if (g->next[s] < x->n && (best == GPUFL__ANA_MEM_SERIES || x->ts[g->next[s]] < g->d->s[best].ts[g->next[best]]))
            best = s;
    }
    if (best == GPUFL__ANA_MEM_SERIES)
        return false;
    const ana_series *x = &g->d->s[best];
    *ts = x->ts[g->next[best]];
    g->cur[best] = x->v[g->next[best]++];
    g->valid |= GPUFL__ANA_MEM_BIT(best);
    return true;
}

/* Changes at one time (an NVML sample gives two series) are one. */
static uint64_t count_changes(ana_mem_dev *d)
{
    merge g = {.d = d};
    uint64_t ts, prev = 0, n = 0;
    while (merge_step(&g, &ts)) {
        n += !n || ts != prev;
        prev = ts;
    }
    return n;
}

static int timeline(ana_mem_dev *d, uint32_t max_points, gpufl__ana_mem_layers_dev *out)
{
    uint64_t changes = count_changes(d);
    out->changes = changes;
    if (!changes)
        return 0;
    uint64_t npoints = changes < max_points ? changes : max_points;
    out->points = calloc(npoints, sizeof *out->points);
    if (!out->points)
        return GPUFL_ENOMEM;
    merge g = {.d = d};
    uint64_t ts, prev = 0, k = 0;
    gpufl__ana_mem_point *p = NULL;
    uint64_t at_point = UINT64_MAX;
    while (merge_step(&g, &ts)) {
        if (k == 0 || ts != prev)
            k++;
        prev = ts;
        uint64_t idx = (k - 1) * npoints / changes; /* runs of equal numbers of changes */
        if (idx != at_point) {
            at_point = idx;
            p = &out->points[idx];
            p->ts_ns = ts;
        }
        for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++)
            if ((g.valid & GPUFL__ANA_MEM_BIT(s)) && g.cur[s] >= p->v[s]) {
                p->v[s] = g.cur[s];
                p->valid |= GPUFL__ANA_MEM_BIT(s);
            }
    }
    out->npoints = (uint32_t)npoints;
    return 0;
}

/* The peaks, and every series at the peak of the outermost layer of the
 * process that is known. */
static void at_peak(ana_mem_dev *d, gpufl__ana_mem_layers_dev *out)
{
    for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++) {
        const ana_series *x = &d->s[s];
        for (size_t k = 0; k < x->n; k++)
            if (x->v[k] > out->peak[s] || k == 0) {
                out->peak[s] = x->v[k];
                out->peak_ns[s] = x->ts[k];
            }
    }
    static const uint8_t order[] = {GPUFL__ANA_MEM_PROCESS, GPUFL__ANA_MEM_DRIVER, GPUFL__ANA_MEM_RESERVED,
                                    GPUFL__ANA_MEM_ALLOCATED, GPUFL__ANA_MEM_DEVICE};
    uint8_t layer = GPUFL__ANA_MEM_SERIES;
    for (size_t i = 0; i < sizeof order && layer == GPUFL__ANA_MEM_SERIES; i++)
        if (out->known & GPUFL__ANA_MEM_BIT(order[i]))
            layer = order[i];
    if (layer == GPUFL__ANA_MEM_SERIES)
        return;
    out->at_layer = layer;
    out->at_ns = out->peak_ns[layer];
    for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++)
        if (gpufl__ana_series_at(&d->s[s], out->at_ns, &out->at[s]))
            out->at_valid |= GPUFL__ANA_MEM_BIT(s);
    int prev = -1;
    for (size_t i = 0; i < NCHAIN; i++) {
        if (!(out->at_valid & GPUFL__ANA_MEM_BIT(chain[i])))
            continue;
        if (prev >= 0)
            out->gaps[out->ngaps++] = (gpufl__ana_mem_gap){
                .upper = (uint8_t)prev, .lower = chain[i], .bytes = (int64_t)(out->at[prev] - out->at[chain[i]])};
        prev = chain[i];
    }
}

int gpufl__ana_mem_layers_with(ana_mem_set *m, uint32_t max_points, gpufl__ana_mem_layers *out)
{
    memset(out, 0, sizeof *out);
    if (!max_points)
        max_points = GPUFL__ANA_MEM_MAX_POINTS;
    if (!m->n)
        return 0;
    out->devices = calloc(m->n, sizeof *out->devices);
    if (!out->devices)
        return GPUFL_ENOMEM;
    out->n = m->n;
    for (uint32_t k = 0; k < m->n; k++) {
        ana_mem_dev *d = &m->devs[k];
        gpufl__ana_mem_layers_dev *o = &out->devices[k];
        o->device = d->device;
        o->total_bytes = d->total_bytes;
        o->framework_source = d->framework_source;
        o->framework = d->framework;
        o->driver_frees = d->driver_frees > 0;
        for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++)
            if (ana_series_known(&d->s[s]))
                o->known |= GPUFL__ANA_MEM_BIT(s);
        at_peak(d, o);
        if (timeline(d, max_points, o) != 0) {
            gpufl__ana_mem_layers_free(out);
            return GPUFL_ENOMEM;
        }
    }
    return 0;
}

int gpufl__analyze_mem_layers(const gpufl_trace *t, uint32_t max_points, gpufl__ana_mem_layers *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    ana_mem_set m;
    int rc = gpufl__ana_mem_set_build(&a, &m);
    if (rc != 0)
        return rc;
    rc = gpufl__ana_mem_layers_with(&m, max_points, out);
    gpufl__ana_mem_set_free(&m);
    return rc;
}

void gpufl__ana_mem_layers_free(gpufl__ana_mem_layers *l)
{
    if (!l)
        return;
    for (uint32_t k = 0; k < l->n && l->devices; k++)
        free(l->devices[k].points);
    free(l->devices);
    memset(l, 0, sizeof *l);
}
