/*
 * Binding a trace's tables (rows.h): the session's end, the device_info
 * lookups and the merged walk over GPU work.
 *
 * Threads: any; only reads the trace.
 */
#include "read/rows.h"

#include <string.h>

static const gpufl_trace_kernels no_kernels;
static const gpufl_trace_transfers no_transfers;
static const gpufl_trace_syncs no_syncs;
static const gpufl_trace_memory no_memory;
static const gpufl_trace_scopes no_scopes;
static const gpufl_trace_device_samples no_samples;
static const gpufl_trace_launch_configs no_configs;
static const gpufl_trace_streams no_streams;
static const gpufl_trace_callers no_callers;
static const gpufl_trace_host_samples no_host;
static const gpufl_trace_info no_info;
static const gpufl_trace_triggers no_triggers;
static const gpufl_trace_windows no_windows;
static const gpufl_trace_allocator no_allocator;
static const gpufl_trace_pm_samples no_pm_samples;
static const gpufl_trace_range_metrics no_range_metrics;
static const gpufl_trace_sass_metrics no_sass;
static const gpufl_trace_clocks no_clocks;
static const gpufl_trace_nccl_collectives no_nccl;

#define OR(p, empty) ((p) ? (p) : &(empty))

static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

void gpufl__rows_open(gpufl__rows *a, const gpufl_trace *t)
{
    memset(a, 0, sizeof *a);
    a->t = t;
    a->info = OR(gpufl_trace_get_info(t), no_info);
    a->kernels = OR(gpufl_trace_get_kernels(t), no_kernels);
    a->copies = OR(gpufl_trace_get_copies(t), no_transfers);
    a->memsets = OR(gpufl_trace_get_memsets(t), no_transfers);
    a->syncs = OR(gpufl_trace_get_syncs(t), no_syncs);
    a->memory = OR(gpufl_trace_get_memory(t), no_memory);
    a->scopes = OR(gpufl_trace_get_scopes(t), no_scopes);
    a->nvtx = OR(gpufl_trace_get_nvtx(t), no_scopes);
    a->dev = OR(gpufl_trace_get_device_samples(t), no_samples);
    a->host = OR(gpufl_trace_get_host_samples(t), no_host);
    a->configs = OR(gpufl_trace_get_launch_configs(t), no_configs);
    a->streams = OR(gpufl_trace_get_streams(t), no_streams);
    a->callers = OR(gpufl_trace_get_callers(t), no_callers);
    a->triggers = OR(gpufl_trace_get_triggers(t), no_triggers);
    a->windows = OR(gpufl_trace_get_trace_windows(t), no_windows);
    a->allocator = OR(gpufl_trace_get_allocator(t), no_allocator);
    a->pm_samples = OR(gpufl_trace_get_pm_samples(t), no_pm_samples);
    a->range_metrics = OR(gpufl_trace_get_range_metrics(t), no_range_metrics);
    a->sass = OR(gpufl_trace_get_sass_metrics(t), no_sass);
    a->clocks = OR(gpufl_trace_get_clocks(t), no_clocks);
    a->nccl = OR(gpufl_trace_get_nccl_collectives(t), no_nccl);
    a->start_ns = a->info->start_ns;
    a->ended = a->info->end_ns != 0;
    /* a session that did not end (a crash) ends at its last recorded time,
     * where the trace also ended its unended scopes and ranges */
    a->end_ns = a->ended ? max64(a->info->end_ns, a->start_ns) : max64(a->info->last_ns, a->start_ns);
}

const gpufl_trace_device *gpufl__rows_device(const gpufl__rows *a, uint32_t dev)
{
    for (uint32_t i = 0; i < a->info->ndevices; i++)
        if (a->info->devices[i].index == dev)
            return &a->info->devices[i];
    return NULL;
}

void gpufl__rows_device_pcie(const gpufl__rows *a, uint32_t dev, uint32_t *gen, uint32_t *width)
{
    const gpufl_trace_device *d = gpufl__rows_device(a, dev);
    *gen = d ? d->pcie_max_gen : 0;
    *width = d ? d->pcie_max_width : 0;
}

static void op_transfer(const gpufl_trace_transfers *x, uint8_t table, size_t i, gpufl__op *op)
{
    op->table = table;
    op->row = i;
    op->start = gpufl__x_start(x, i);
    op->end = op->start + gpufl__x_dur(x, i);
    op->stream_row = gpufl__x_stream_row(x, i);
    op->caller = gpufl__x_caller(x, i);
    op->api_start = gpufl__x_api_start(x, i);
}

/* The next start of table j, or false when it has no rows left. */
static bool next_start(const gpufl__ops *it, int j, uint64_t *t)
{
    const gpufl__rows *a = it->r;
    size_t i = it->next[j];
    if (j == GPUFL__TBL_KERNEL && i < a->kernels->n)
        *t = a->kernels->start_ns[i];
    else if (j == GPUFL__TBL_COPY && i < a->copies->n)
        *t = a->copies->start_ns[i];
    else if (j == GPUFL__TBL_MEMSET && i < a->memsets->n)
        *t = a->memsets->start_ns[i];
    else
        return false;
    return true;
}

bool gpufl__ops_next_slow(gpufl__ops *it, gpufl__op *op)
{
    uint64_t start[3];
    bool has[3];
    int best = -1;
    for (int j = 0; j < 3; j++) {
        has[j] = next_start(it, j, &start[j]);
        if (has[j] && (best < 0 || start[j] < start[best]))
            best = j; /* strict: on equal starts the earlier table wins */
    }
    if (best < 0)
        return false;
    /* kernels win ties, so a run of them goes on while the next one starts
     * no later than the other tables' next rows */
    it->kernel_run = best == GPUFL__TBL_KERNEL;
    it->upto = UINT64_MAX;
    for (int j = GPUFL__TBL_COPY; j <= GPUFL__TBL_MEMSET && it->kernel_run; j++)
        if (has[j] && start[j] < it->upto)
            it->upto = start[j];
    size_t i = it->next[best]++;
    if (best == GPUFL__TBL_KERNEL)
        gpufl__op_kernel(it->r, i, op);
    else
        op_transfer(best == GPUFL__TBL_COPY ? it->r->copies : it->r->memsets, (uint8_t)best, i, op);
    return true;
}
