/*
 * The range profiler's hardware counters by scope or NVTX range name
 * (analysis.h, gpufl__ana_hw). A session has one range per scope instance
 * on the profiled thread (a training step of a few scopes makes a few
 * ranges), each with about ten metric rows: two passes over the rows, the
 * first for each range's GPU time (the weight of its means), the second to
 * sum; names are grouped through a hash map.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/analysis.h"

#define TIME_METRIC "gpu__time_duration.sum"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The index of metric id m in hw, added when new; -1 past the maximum. */
static int metric_index(const gpufl_trace *t, gpufl__ana_hw *hw, uint32_t m)
{
    for (uint32_t i = 0; i < hw->nmetrics; i++)
        if (hw->metrics[i] == m)
            return (int)i;
    if (hw->nmetrics == GPUFL__ANA_HW_MAX_METRICS)
        return -1;
    const char *name = gpufl_trace_string(t, m);
    hw->metrics[hw->nmetrics] = m;
    hw->summed[hw->nmetrics] = name && ends_with(name, ".sum");
    return (int)hw->nmetrics++;
}

/* Adds one value of range weight w to row r's metric k (means are sums
 * of value x weight until finish()). */
static void add(gpufl__ana_hw_row *r, const gpufl__ana_hw *hw, int k, double v, double w, double *wsum)
{
    r->values[k] += hw->summed[k] ? v : v * w;
    r->has[k] = 1;
    if (!hw->summed[k])
        wsum[k] += w;
}

static void finish(gpufl__ana_hw_row *r, const gpufl__ana_hw *hw, const double *wsum)
{
    for (uint32_t k = 0; k < hw->nmetrics; k++)
        if (!hw->summed[k])
            r->values[k] = wsum[k] > 0 ? r->values[k] / wsum[k] : 0;
}

static const gpufl_trace *sort_trace;
static int by_time(const void *a, const void *b)
{
    const gpufl__ana_hw_row *x = a, *y = b;
    if (x->gpu_ns != y->gpu_ns)
        return x->gpu_ns < y->gpu_ns ? 1 : -1;
    if (x->ranges != y->ranges)
        return x->ranges < y->ranges ? 1 : -1;
    return gpufl__ana_strcmp(sort_trace, x->name, y->name);
}

int gpufl__analyze_hw(const gpufl_trace *t, gpufl__ana_hw *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    const gpufl_trace_range_metrics *r = gpufl_trace_get_range_metrics(t);
    if (!r || !r->n)
        return 0;
    uint32_t time_id = 0, max_range = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (r->range[i] > max_range)
            max_range = r->range[i];
        const char *m = time_id ? NULL : gpufl_trace_string(t, r->metric[i]);
        if (m && !strcmp(m, TIME_METRIC))
            time_id = r->metric[i];
    }
    /* each range's GPU time, by its number (numbers run from 1 in a session) */
    double *weight = calloc((size_t)max_range + 1, sizeof *weight);
    uint8_t *seen = calloc((size_t)max_range + 1, 1);
    ana_map names = {0};
    double *wsums = NULL; /* per row then metric; the session's last */
    size_t cap = 0;
    int rc = GPUFL_ENOMEM;
    if (!weight || !seen)
        goto out;
    for (size_t i = 0; time_id && i < r->n; i++)
        if (r->metric[i] == time_id)
            weight[r->range[i]] = r->value[i];
    double session_w[GPUFL__ANA_HW_MAX_METRICS] = {0};
    for (size_t i = 0; i < r->n; i++) {
        int k = metric_index(t, out, r->metric[i]);
        if (k < 0)
            continue;
        uint32_t row;
        int found = gpufl__ana_map_put(&names, r->name[i], 0, out->nrows, &row);
        if (found < 0)
            goto out;
        if (!found) {
            size_t rcap = cap;
            if (gpufl__ana_grow(&out->rows, &rcap, out->nrows + 1, sizeof *out->rows) != 0 ||
                gpufl__ana_grow(&wsums, &cap, out->nrows + 1, sizeof(double) * GPUFL__ANA_HW_MAX_METRICS) != 0)
                goto out;
            memset(&out->rows[row], 0, sizeof *out->rows);
            memset(&wsums[(size_t)row * GPUFL__ANA_HW_MAX_METRICS], 0, sizeof(double) * GPUFL__ANA_HW_MAX_METRICS);
            out->rows[row].name = r->name[i];
            out->nrows++;
        }
        gpufl__ana_hw_row *g = &out->rows[row];
        double w = time_id ? weight[r->range[i]] : 1.0;
        if (!seen[r->range[i]]) {
            seen[r->range[i]] = 1;
            g->ranges++;
            g->gpu_ns += time_id ? w : 0;
            out->session.ranges++;
            out->session.gpu_ns += time_id ? w : 0;
        }
        add(g, out, k, r->value[i], w, &wsums[(size_t)row * GPUFL__ANA_HW_MAX_METRICS]);
        add(&out->session, out, k, r->value[i], w, session_w);
    }
    for (uint32_t i = 0; i < out->nrows; i++)
        finish(&out->rows[i], out, &wsums[(size_t)i * GPUFL__ANA_HW_MAX_METRICS]);
    finish(&out->session, out, session_w);
    sort_trace = t;
    if (out->nrows) /* qsort takes no NULL base, even for 0 rows */
        qsort(out->rows, out->nrows, sizeof *out->rows, by_time);
    rc = 0;
out:
    free(weight);
    free(seen);
    free(wsums);
    gpufl__ana_map_free(&names);
    if (rc != 0)
        gpufl__ana_hw_free(out);
    return rc;
}

static const struct {
    const char *metric, *label;
} labels[] = {
    {TIME_METRIC, "GPU elapsed"},
    {"dram__bytes_read.sum", "DRAM read"},
    {"dram__bytes_write.sum", "DRAM write"},
    {"dram__bytes.sum", "DRAM bytes"},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM thru"},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy"},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM thru"},
    {"lts__t_sector_hit_rate.pct", "L2 hit"},
    {"l1tex__t_sector_hit_rate.pct", "L1 hit"},
    {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "smem confl"},
    {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "tensor"},
};

const char *gpufl__ana_hw_label(const char *metric, int *unit)
{
    *unit = !strcmp(metric, TIME_METRIC)                           ? GPUFL__HW_NS
            : strstr(metric, ".per_second")                        ? GPUFL__HW_RATE
            : strstr(metric, ".pct")                               ? GPUFL__HW_PCT
            : strstr(metric, "bytes") && ends_with(metric, ".sum") ? GPUFL__HW_BYTES
                                                                   : GPUFL__HW_COUNT;
    for (size_t i = 0; i < sizeof labels / sizeof *labels; i++)
        if (!strcmp(labels[i].metric, metric))
            return labels[i].label;
    return metric;
}

const gpufl__ana_hw_row *gpufl__ana_hw_find(const gpufl__ana_hw *hw, uint32_t name)
{
    for (uint32_t i = 0; i < hw->nrows; i++)
        if (hw->rows[i].name == name)
            return &hw->rows[i];
    return NULL;
}

void gpufl__ana_hw_free(gpufl__ana_hw *hw)
{
    if (!hw)
        return;
    free(hw->rows);
    memset(hw, 0, sizeof *hw);
}
