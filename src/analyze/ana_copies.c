/*
 * The copies analysis (analysis.h): copies per device and direction, their
 * sizes and achieved bandwidth against what the link or the memory can do.
 *
 * One pass adds up per (device, kind); a second gathers each row's sizes
 * grouped by row (a counting sort) for the percentiles. Rows: at most
 * devices x 6.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_peaks.h"
#include "analyze/ana_util.h"
#include "analyze/trace_access.h"
#include "core/event.h"

#define KINDS GFL_COPY_KIND_COUNT

static bool pageable(const gpufl_trace_transfers *x, size_t i)
{
    return ta_x_src_kind(x, i) == GFL_MEM_PAGEABLE || ta_x_dst_kind(x, i) == GFL_MEM_PAGEABLE;
}

/* What a row's bandwidth is compared with: the host link for copies that
 * cross it, the memory for copies inside the device; nothing for peer and
 * host-to-host copies, whose path (NVLink, PCIe switch, host memory) the
 * trace does not say. */
static void peak_of(const ta *a, gpufl__ana_copy_row *r)
{
    const gpufl_trace_device *d = gpufl__ta_device(a, r->device);
    const char *name = d ? gpufl_trace_string(a->t, d->name) : NULL;
    const ana_gpu_row *g = gpufl__ana_gpu_lookup(name);
    if (r->kind == GFL_COPY_HTOD || r->kind == GFL_COPY_DTOH) {
        uint32_t gen, width;
        gpufl__ta_device_pcie(a, r->device, &gen, &width);
        if ((!gen || !width) && g && g->pcie_gen) {
            gen = g->pcie_gen; /* the trace lacks the link: the table's */
            width = g->pcie_width;
            r->peak_table = g->match;
        }
        double lane = gpufl__ana_pcie_lane_gbps(gen);
        if (lane > 0 && width) {
            r->peak_gbps = lane * width;
            r->peak_source = GPUFL__ANA_PEAK_PCIE;
            r->pcie_gen = gen;
            r->pcie_width = width;
        } else {
            r->peak_table = NULL;
        }
    } else if (r->kind == GFL_COPY_DTOD) {
        const char *row;
        double gbps = gpufl__ana_hbm_gbps(name, &row);
        if (gbps > 0) {
            r->peak_gbps = gbps;
            r->peak_source = GPUFL__ANA_PEAK_HBM;
            r->peak_table = row;
        }
    }
    if (r->peak_gbps > 0)
        r->pct_of_peak = r->gbps / r->peak_gbps * 100.0;
}

static int by_device_kind(const void *x, const void *y)
{
    const gpufl__ana_copy_row *p = x, *q = y;
    if (p->device != q->device)
        return p->device < q->device ? -1 : 1;
    return (p->kind > q->kind) - (p->kind < q->kind);
}

/* The sizes of every row, grouped by row, sorted: the size distributions. */
static int sizes(const ta *a, const uint32_t *row_of, gpufl__ana_copy_row *rows, uint32_t n)
{
    const gpufl_trace_transfers *x = a->cp;
    size_t *fill = calloc(n + 1, sizeof *fill);
    uint64_t *v = malloc((x->n ? x->n : 1) * sizeof *v);
    int rc = GPUFL_ENOMEM;
    if (!fill || !v)
        goto out;
    for (uint32_t r = 0; r < n; r++)
        fill[r + 1] = fill[r] + rows[r].count;
    for (size_t i = 0; i < x->n; i++)
        v[fill[row_of[i]]++] = ta_x_bytes(x, i);
    /* fill[r] has moved to the end of row r's sizes */
    for (uint32_t r = 0; r < n; r++) {
        size_t start = r ? fill[r - 1] : 0;
        if ((rc = gpufl__ana_sort_u64(v + start, fill[r] - start, NULL)) != 0)
            goto out;
        gpufl__ana_dist_sorted(v + start, fill[r] - start, &rows[r].size);
    }
    rc = 0;
out:
    free(fill);
    free(v);
    return rc;
}

int gpufl__analyze_copies(const gpufl_trace *t, gpufl__ana_copies *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    ta a;
    gpufl__ta_open(&a, t);
    const gpufl_trace_transfers *x = a.cp;
    ana_map row_of_key = {0};
    uint32_t *row_of = malloc((x->n ? x->n : 1) * sizeof *row_of);
    gpufl__ana_copy_row *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = row_of ? 0 : GPUFL_ENOMEM;
    for (size_t i = 0; i < x->n && rc == 0; i++) {
        uint32_t dev = ta_stream_device(&a, ta_x_stream_row(x, i));
        uint8_t kind = ta_x_kind(x, i) < KINDS ? ta_x_kind(x, i) : GFL_COPY_UNKNOWN;
        uint32_t r;
        int put = gpufl__ana_map_put(&row_of_key, dev, kind, (uint32_t)n, &r);
        if (put < 0 || (put == 0 && gpufl__ana_grow(&rows, &cap, n + 1, sizeof *rows) != 0)) {
            rc = GPUFL_ENOMEM;
            break;
        }
        if (put == 0)
            rows[n++] = (gpufl__ana_copy_row){.device = dev, .kind = kind};
        gpufl__ana_copy_row *row = &rows[r];
        uint64_t bytes = ta_x_bytes(x, i), dur = ta_x_dur(x, i);
        row->count++;
        row->bytes += bytes;
        row->ns += dur;
        if (pageable(x, i)) {
            row->pageable_count++;
            row->pageable_bytes += bytes;
        }
        row_of[i] = r;
    }
    gpufl__ana_map_free(&row_of_key);
    if (rc == 0)
        rc = sizes(&a, row_of, rows, (uint32_t)n);
    free(row_of);
    if (rc != 0) {
        free(rows);
        return rc;
    }
    for (size_t r = 0; r < n; r++) {
        rows[r].gbps = rows[r].ns ? (double)rows[r].bytes / (double)rows[r].ns : 0;
        peak_of(&a, &rows[r]);
        out->count += rows[r].count;
        out->bytes += rows[r].bytes;
        out->ns += rows[r].ns;
    }
    if (n)
        qsort(rows, n, sizeof *rows, by_device_kind);
    out->rows = rows;
    out->n = (uint32_t)n;
    for (size_t i = 0; i < a.ms->n; i++) {
        out->memsets++;
        out->memset_bytes += ta_x_bytes(a.ms, i);
        out->memset_ns += ta_x_dur(a.ms, i);
    }
    return 0;
}

void gpufl__ana_copies_free(gpufl__ana_copies *c)
{
    if (!c)
        return;
    free(c->rows);
    memset(c, 0, sizeof *c);
}
