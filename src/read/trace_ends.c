/*
 * Where what never ended ends (gpufl__trace_end_open, trace_internal.h).
 *
 * A program that dies inside a scope or an NVTX range leaves a begin with
 * no end. Every output has to draw, measure and count such an interval, and
 * used to choose its end on its own (the session's end, the last row of
 * some tables, the interval's own begin), so a crashed session read
 * differently in each. The trace decides it once, here: the interval ends
 * at the session's last recorded time, the latest time any event of the
 * session holds, and is marked unended. Readers take end_ns as it is and
 * show the mark.
 *
 * Trace windows whose closing event was not read end there too.
 *
 * Runs once per load, on the loading thread, after the merge; one pass over
 * the scope, NVTX and trace window rows.
 */
#include <stdint.h>

#include "gpufl/gpufl.h"
#include "read/trace_internal.h"

/* The column's values, allocated (zero) for n rows if it had none. */
static void *values(gpufl__col *c, size_t n)
{
    if (!c->data && gpufl__col_alloc_rows(c, n) != 0)
        return NULL;
    return c->data;
}

static int end_table(gpufl__rows *R, uint64_t last)
{
    size_t n = R->t.n;
    const uint64_t *end = (const uint64_t *)(const void *)R->cols[SC_end_ns].data;
    const uint8_t *instant = R->cols[SC_instant].data;
    size_t open = 0;
    for (size_t i = 0; i < n; i++)
        open += (!end || !end[i]) && !(instant && instant[i]);
    if (!open)
        return 0;
    uint64_t *e = values(&R->cols[SC_end_ns], n);
    uint8_t *u = values(&R->cols[SC_unended], n);
    if (!e || !u)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!e[i] && !(instant && instant[i])) {
            e[i] = last;
            u[i] = 1;
        }
    return 0;
}

/* Trace windows that never closed: the program died while tracing, or was
 * still tracing when the file was read. */
static int end_windows(gpufl__rows *R, uint64_t last)
{
    size_t n = R->t.n;
    const uint64_t *end = (const uint64_t *)(const void *)R->cols[WC_end_ns].data;
    size_t open = 0;
    for (size_t i = 0; i < n; i++)
        open += !end || !end[i];
    if (!open)
        return 0;
    uint64_t *e = values(&R->cols[WC_end_ns], n);
    uint8_t *u = values(&R->cols[WC_unended], n);
    if (!e || !u)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!e[i]) {
            e[i] = last;
            u[i] = 1;
        }
    return 0;
}

int gpufl__trace_end_open(gpufl_trace *t)
{
    gpufl_trace_info *i = &t->info;
    /* the events' latest time came from the segments; the session's end
     * and start are recorded times too (an empty session lasts 0) */
    if (i->end_ns > i->last_ns)
        i->last_ns = i->end_ns;
    if (i->start_ns > i->last_ns)
        i->last_ns = i->start_ns;
    if (end_table(&t->rows[GFL_T_SCOPES], i->last_ns) != 0 || end_table(&t->rows[GFL_T_NVTX], i->last_ns) != 0 ||
        end_windows(&t->rows[GFL_T_TRACE_WINDOWS], i->last_ns) != 0)
        return GPUFL_ENOMEM;
    return 0;
}
