/*
 * The text report's hardware counters (range profiler): per scope or NVTX
 * range name, what the GPU's counters said about the work it enclosed.
 * One column per metric under a short label; summed metrics (bytes, GPU
 * time, conflicts) are totals, the others means weighted by GPU time.
 */
#include <stdio.h>
#include <string.h>

#include "present/report/report_text_util.h"

#define MAX_ROWS 15
#define NAME_WIDTH 24
#define COL 11

/* One metric value as its unit says ("1.2 GiB", "12.30 ms", "61.3 %"). */
static rt_num value(double v, int unit)
{
    rt_num n;
    switch (unit) {
    case GPUFL__HW_BYTES: return gpufl__rt_bytes(v > 0 ? (uint64_t)(v + 0.5) : 0);
    case GPUFL__HW_NS: return gpufl__rt_dur(v > 0 ? (uint64_t)(v + 0.5) : 0);
    case GPUFL__HW_PCT: return gpufl__rt_pct(v);
    case GPUFL__HW_RATE: snprintf(n.s, sizeof n.s, "%.3g/s", v); return n;
    default:
        if (v >= 0 && v < 1e15 && v == (double)(uint64_t)v)
            return gpufl__rt_count((uint64_t)v);
        snprintf(n.s, sizeof n.s, "%.4g", v);
        return n;
    }
}

/* The metric's column label: its short one, or "m<k>" (the metrics list
 * under the table names every column). */
static void label_of(const rt *c, const gpufl__ana_hw *hw, uint32_t k, char *buf, size_t len)
{
    int unit;
    const char *name = gpufl__rt_str(c, hw->metrics[k]);
    const char *label = gpufl__ana_hw_label(name, &unit);
    if (label == name) {
        snprintf(buf, len, "m%u", k + 1);
    } else {
        snprintf(buf, len, "%s", label);
    }
}

static void row(const rt *c, const gpufl__ana_hw *hw, const gpufl__ana_hw_row *r, const char *name)
{
    char fit[NAME_WIDTH + 1];
    gpufl__rt_fit(name, NAME_WIDTH, fit);
    fprintf(c->out, "  %-*s %7s", NAME_WIDTH, fit, gpufl__rt_count(r->ranges).s);
    for (uint32_t k = 0; k < hw->nmetrics; k++) {
        int unit;
        (void)gpufl__ana_hw_label(gpufl__rt_str(c, hw->metrics[k]), &unit);
        fprintf(c->out, " %*s", COL, r->has[k] ? value(r->values[k], unit).s : "-");
    }
    fputc('\n', c->out);
}

void gpufl__rt_section_hw(const rt *c)
{
    const gpufl__ana_hw *hw = &c->r->counters.ranges;
    if (!hw->session.ranges)
        return;
    gpufl__rt_title(c, "Hardware counters per scope (range profiler)");
    fprintf(c->out,
            "  %s ranges: the GPU work of each scope instance with no scope open inside it; totals for bytes, "
            "time and\n  counts, means weighted by GPU time for the rest\n\n",
            gpufl__rt_count(hw->session.ranges).s);
    fprintf(c->out, "  %-*s %7s", NAME_WIDTH, "scope", "ranges");
    for (uint32_t k = 0; k < hw->nmetrics; k++) {
        char label[64];
        label_of(c, hw, k, label, sizeof label);
        fprintf(c->out, " %*.*s", COL, COL, label);
    }
    fputc('\n', c->out);
    for (uint32_t i = 0; i < hw->nrows && i < MAX_ROWS; i++)
        row(c, hw, &hw->rows[i], gpufl__rt_str(c, hw->rows[i].name));
    if (hw->nrows > MAX_ROWS)
        fprintf(c->out, "  (%u more names)\n", hw->nrows - MAX_ROWS);
    row(c, hw, &hw->session, "(all ranges)");
    fprintf(c->out, "\n  metrics:");
    for (uint32_t k = 0; k < hw->nmetrics; k++) {
        char label[64];
        label_of(c, hw, k, label, sizeof label);
        fprintf(c->out, "%s\n    %-11s %s (%s)", k ? "," : "", label, gpufl__rt_str(c, hw->metrics[k]),
                hw->summed[k] ? "total" : "mean");
    }
    fputc('\n', c->out);
}
