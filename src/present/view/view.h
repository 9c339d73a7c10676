/*
 * The terminal timeline of a recorded session (`gpufl view`): a time axis,
 * per device a utilization sparkline and one lane per stream, per thread
 * its scopes and NVTX ranges by depth, a legend of the kernels with the
 * most time, and a footer. A pure function from a trace, a window and a
 * width to text, so that tests compare it with golden output.
 *
 * view_index.c groups the rows into lanes, view_layout.c decides what each
 * column shows, view_text.c writes the lines. Any thread; nothing global.
 */
#ifndef GPUFL_PRESENT_VIEW_VIEW_H
#define GPUFL_PRESENT_VIEW_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"

#define GPUFL__VIEW_MIN_WIDTH 20
#define GPUFL__VIEW_MAX_WIDTH 4096

typedef struct gpufl__view_opts {
    uint64_t from_ns; /* window start, ns after the session's start */
    uint64_t to_ns;   /* window end, ns after the session's start */
    bool has_to;      /* false: the window ends where the session does */
    unsigned width;   /* columns of every line, GPUFL__VIEW_MIN_WIDTH .. _MAX_WIDTH */
    bool color;       /* ANSI colours */
} gpufl__view_opts;

/*
 * Parses a time after the session's start: "1.5s", "250ms", "40us", "12ns",
 * or a plain number of ns ("12345"); decimals are allowed with a unit, down
 * to the nanosecond. Returns 0 with *ns set, or GPUFL_EINVAL (*ns unchanged)
 * for anything else (a sign, no digits, an unknown unit, finer than 1 ns,
 * beyond 2^64 ns).
 */
int gpufl__view_parse_time(const char *text, uint64_t *ns) __attribute__((warn_unused_result));

/* Writes ns as the shortest time parse_time reads back exactly ("1.5s",
 * "250ms", "0s"). */
void gpufl__view_format_time(uint64_t ns, char *buf, size_t len);

/*
 * Renders t. Returns 0 with *out the text (malloc'd, NUL-terminated, lines
 * ending in '\n'); GPUFL_EINVAL with a message in err when the window is
 * empty (from at or after to, or after the session's end with no --to);
 * GPUFL_ENOMEM; GPUFL_EUNSUPPORTED for a table of 2^29 rows or more. On
 * failure *out is NULL.
 */
int gpufl__view_render(const gpufl_trace *t, const gpufl__view_opts *o, char **out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_VIEW_VIEW_H */
