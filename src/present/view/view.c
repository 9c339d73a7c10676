/*
 * The terminal timeline (see view.h): times as the command line writes
 * them, the window, and the three stages (lanes, layout, text) in order.
 */
#include "present/view/view.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "present/view/view_index.h"
#include "present/view/view_layout.h"
#include "present/view/view_text.h"

#define NS_PER_S 1000000000ull

static const struct {
    const char *suffix;
    uint64_t ns;
} units[] = {{"s", NS_PER_S}, {"ms", 1000000ull}, {"us", 1000ull}, {"ns", 1ull}};

int gpufl__view_parse_time(const char *text, uint64_t *ns)
{
    const char *p = text;
    uint64_t whole = 0, frac = 0, frac_scale = 1;
    if (*p < '0' || *p > '9')
        return GPUFL_EINVAL;
    for (; *p >= '0' && *p <= '9'; p++)
        if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, (uint64_t)(*p - '0'), &whole))
            return GPUFL_EINVAL;
    bool dot = *p == '.';
    if (dot) {
        p++;
        if (*p < '0' || *p > '9')
            return GPUFL_EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (frac_scale >= NS_PER_S) { /* finer than 1 ns in any unit: only zeros may follow */
                if (*p != '0')
                    return GPUFL_EINVAL;
                continue;
            }
            frac = frac * 10 + (uint64_t)(*p - '0');
            frac_scale *= 10;
        }
    }
    uint64_t unit = 0;
    if (*p == '\0' && !dot)
        unit = 1; /* a plain number: ns */
    for (size_t i = 0; i < sizeof units / sizeof units[0] && *p; i++)
        if (!strcmp(p, units[i].suffix))
            unit = units[i].ns;
    if (!unit)
        return GPUFL_EINVAL;
    /* frac / frac_scale of a unit must be whole ns */
    if (frac && (unit < frac_scale ? frac % (frac_scale / unit) != 0 : false))
        return GPUFL_EINVAL;
    uint64_t part = unit >= frac_scale ? frac * (unit / frac_scale) : frac / (frac_scale / unit);
    uint64_t v;
    if (__builtin_mul_overflow(whole, unit, &v) || __builtin_add_overflow(v, part, &v))
        return GPUFL_EINVAL;
    *ns = v;
    return 0;
}

void gpufl__view_format_time(uint64_t ns, char *buf, size_t len)
{
    size_t u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && ns < units[u].ns)
        u++;
    if (ns == 0)
        u = 0;
    uint64_t unit = units[u].ns, frac = ns % unit;
    int decimals = 0;
    for (uint64_t q = unit; q > 1 && frac % q != 0; q /= 10)
        decimals++;
    if (!decimals) {
        snprintf(buf, len, "%" PRIu64 "%s", ns / unit, units[u].suffix);
        return;
    }
    uint64_t scale = unit;
    for (int d = 0; d < decimals; d++)
        scale /= 10;
    snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 "%s", ns / unit, decimals, frac / scale, units[u].suffix);
}

/* The window in the session's timebase. Returns 0, or GPUFL_EINVAL with a
 * message in err. */
static int window(const gpufl__view_index *ix, const gpufl__view_opts *o, uint64_t *from, uint64_t *to, char *err,
                  size_t err_len)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(ix->src.t);
    uint64_t start = info->start_ns;
    uint64_t end = ix->last_ns > start ? ix->last_ns : start + NS_PER_S; /* an empty session: 1 s */
    char a[48], b[48];
    if (__builtin_add_overflow(start, o->from_ns, from) || (o->has_to && __builtin_add_overflow(start, o->to_ns, to))) {
        snprintf(err, err_len, "the window goes past the end of time");
        return GPUFL_EINVAL;
    }
    if (!o->has_to)
        *to = end;
    if (*to <= *from) {
        gpufl__view_format_time(o->from_ns, a, sizeof a);
        gpufl__view_format_time(*to - start, b, sizeof b);
        snprintf(err, err_len, "the window is empty: --from %s is not before %s %s", a,
                 o->has_to ? "--to" : "the session's end,", b);
        return GPUFL_EINVAL;
    }
    return 0;
}

int gpufl__view_render(const gpufl_trace *t, const gpufl__view_opts *o, char **out, char *err, size_t err_len)
{
    *out = NULL;
    if (o->width < GPUFL__VIEW_MIN_WIDTH || o->width > GPUFL__VIEW_MAX_WIDTH) {
        snprintf(err, err_len, "the width must be %d to %d columns", GPUFL__VIEW_MIN_WIDTH, GPUFL__VIEW_MAX_WIDTH);
        return GPUFL_EINVAL;
    }
    gpufl__view_index ix;
    int rc = gpufl__view_index_build(&ix, t);
    if (rc != 0) {
        snprintf(err, err_len, "%s", rc == GPUFL_ENOMEM ? "out of memory" : "a table of 2^29 rows or more");
        return rc;
    }
    uint64_t from, to;
    if ((rc = window(&ix, o, &from, &to, err, err_len)) != 0) {
        gpufl__view_index_free(&ix);
        return rc;
    }
    unsigned ncols = o->width - gpufl__view_label_width(o->width) - 1;
    gpufl__view_layout lo;
    if ((rc = gpufl__view_layout_build(&lo, &ix, from, to, ncols)) != 0) {
        gpufl__view_index_free(&ix);
        snprintf(err, err_len, "out of memory");
        return rc;
    }
    gpufl__vbuf text = {0};
    gpufl__view_text(&lo, o->width, o->color, &text);
    gpufl__view_layout_free(&lo);
    gpufl__view_index_free(&ix);
    if (text.failed || !text.s) {
        free(text.s);
        snprintf(err, err_len, "out of memory");
        return GPUFL_ENOMEM;
    }
    *out = text.s;
    return 0;
}
