/*
 * The timeline view's lines (see view_text.h). Each line is first laid out
 * as one glyph per display column, then written with colour changes only
 * where the colour changes and trailing blanks dropped. Single-threaded;
 * the cost is the lines times the width.
 */
#include "present/view/view_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/names.h"
#include "present/report/summary_text.h"
#include "present/view/view.h"

/* ---- the buffer ---------------------------------------------------------- */

void gpufl__vbuf_add(gpufl__vbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

/* ---- colours ---------------------------------------------------------------- */

enum {
    C_NONE,
    C_BOLD,
    C_DIM,
    C_UTIL,
    C_COPY,
    C_MEMSET,
    C_OTHER,
    C_PALETTE, /* GPUFL__VIEW_LETTERS colours from here: legend letters, scope names */
    C_COUNT = C_PALETTE + GPUFL__VIEW_LETTERS
};

static const char *const sgr[C_COUNT] = {"0",  "1",  "2",  "32", "91", "90", "37", "36", "33",
                                         "35", "34", "32", "96", "93", "95", "94", "92"};
_Static_assert(sizeof sgr / sizeof sgr[0] == C_COUNT, "a colour for each");

/* ---- one line, a glyph per column ------------------------------------------ */

typedef struct glyph {
    char b[4];
    uint8_t n; /* bytes in b */
    uint8_t color;
} glyph;

typedef struct line {
    glyph *g;
    unsigned width;
} line;

static void line_clear(line *l)
{
    for (unsigned i = 0; i < l->width; i++)
        l->g[i] = (glyph){{' '}, 1, C_NONE};
}

static void line_put(line *l, unsigned col, const char *utf8, uint8_t color)
{
    if (col >= l->width)
        return;
    size_t n = strlen(utf8);
    glyph *g = &l->g[col];
    memcpy(g->b, utf8, n > 4 ? 4 : n);
    g->n = (uint8_t)(n > 4 ? 4 : n);
    g->color = color;
}

/* Length in bytes of the character at s (1 .. 4), 0 when it is not valid
 * UTF-8 or a control character (drawn as '?'). */
static size_t char_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return s[0] >= 0x20 && s[0] != 0x7f;
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4   ? 4
               : s[0] >= 0xe0 && s[0] <= 0xef ? 3
               : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
                                              : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xc2 && s[1] < 0xa0))
        return 0; /* overlong, or a C1 control character */
    return n;
}

static unsigned text_cols(const char *s)
{
    unsigned n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; n++) {
        size_t k = char_len(p);
        p += k ? k : 1;
    }
    return n;
}

/* Draws s from col on, in at most max columns (cut with an ellipsis).
 * Returns the columns used. */
static unsigned line_text(line *l, unsigned col, const char *s, unsigned max, uint8_t color)
{
    unsigned cols = text_cols(s), used = 0;
    unsigned keep = cols <= max ? cols : max ? max - 1 : 0;
    const unsigned char *p = (const unsigned char *)s;
    for (; used < keep; used++) {
        size_t k = char_len(p);
        char c[5] = "?";
        if (k) {
            memcpy(c, p, k);
            c[k] = '\0';
        }
        line_put(l, col + used, c, color);
        p += k ? k : 1;
    }
    if (cols > max && max) {
        line_put(l, col + used, "\xe2\x80\xa6", color); /* … */
        used++;
    }
    return used;
}

static void line_emit(const line *l, bool color, gpufl__vbuf *out)
{
    unsigned end = l->width;
    while (end > 0 && l->g[end - 1].n == 1 && l->g[end - 1].b[0] == ' ')
        end--;
    uint8_t cur = C_NONE;
    for (unsigned i = 0; i < end; i++) {
        const glyph *g = &l->g[i];
        uint8_t want = g->n == 1 && g->b[0] == ' ' ? cur : g->color; /* blanks keep the colour */
        if (color && want != cur) {
            char seq[16];
            int n = snprintf(seq, sizeof seq, "\x1b[%sm", want == C_NONE ? "0" : sgr[want]);
            if (cur != C_NONE && want != C_NONE)
                gpufl__vbuf_add(out, "\x1b[0m", 4); /* a bold or dim must not carry over */
            gpufl__vbuf_add(out, seq, (size_t)n);
            cur = want;
        }
        gpufl__vbuf_add(out, g->b, g->n);
    }
    if (color && cur != C_NONE)
        gpufl__vbuf_add(out, "\x1b[0m", 4);
    gpufl__vbuf_add(out, "\n", 1);
}

/* A line of text, cut to the width. */
static void text_line(line *l, const char *s, uint8_t color, bool use_color, gpufl__vbuf *out)
{
    line_clear(l);
    line_text(l, 0, s, l->width, color);
    line_emit(l, use_color, out);
}

/* ---- the time axis ---------------------------------------------------------- */

typedef struct axis_fmt {
    uint64_t unit; /* ns per unit: 1e9 (s), 1e6 (ms), 1e3 (us) or 1 (ns) */
    unsigned decimals;
} axis_fmt;

static int axis_label(char *buf, size_t len, uint64_t ns, axis_fmt f)
{
    const char *suffix = f.unit == 1000000000ull ? "s" : f.unit == 1000000ull ? "ms" : f.unit == 1000ull ? "us" : "ns";
    uint64_t scale = f.unit;
    for (unsigned d = 0; d < f.decimals; d++)
        scale /= 10;
    if (!f.decimals)
        return snprintf(buf, len, "%" PRIu64 "%s", ns / f.unit, suffix);
    return snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 "%s", ns / f.unit, (int)f.decimals, ns % f.unit / scale, suffix);
}

static axis_fmt axis_format(uint64_t step, uint64_t to_rel)
{
    axis_fmt f = {1, 0};
    if (to_rel >= 1000000000ull)
        f.unit = 1000000000ull;
    else if (to_rel >= 1000000ull)
        f.unit = 1000000ull;
    else if (to_rel >= 1000ull)
        f.unit = 1000ull;
    for (uint64_t q = f.unit; q > 1 && step % q != 0; q /= 10)
        f.decimals++;
    return f;
}

static void axis(const gpufl__view_layout *lo, unsigned lw, line *l, bool color, gpufl__vbuf *out)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(lo->ix->src.t);
    uint64_t from_rel = lo->from - info->start_ns, to_rel = lo->to - info->start_ns;
    uint64_t span = lo->to - lo->from, step = 1;
    axis_fmt f = {1, 0};
    /* the smallest 1, 2, 5 x 10^k ns step whose labels fit between ticks */
    for (uint64_t p = 1;; p *= 10) {
        static const unsigned m[3] = {1, 2, 5};
        bool done = false;
        for (int i = 0; i < 3 && !done; i++) {
            step = m[i] * p;
            f = axis_format(step, to_rel);
            char buf[64];
            int len = axis_label(buf, sizeof buf, to_rel / step * step, f);
            done = (unsigned __int128)step * lo->ncols >= (unsigned __int128)span * (unsigned)(len + 2);
        }
        if (done || p >= 1000000000000000000ull)
            break;
    }
    line labels = *l, ticks = {l->g + l->width, l->width};
    line_clear(&labels);
    line_clear(&ticks);
    for (unsigned c = 0; c < lo->ncols; c++)
        line_put(&ticks, lw + 1 + c, "-", C_DIM);
    unsigned free_col = 0;
    for (uint64_t t = (from_rel + step - 1) / step * step; t < to_rel; t += step) {
        unsigned c = (unsigned)((unsigned __int128)(t - from_rel) * lo->ncols / span);
        if (c >= lo->ncols)
            break;
        line_put(&ticks, lw + 1 + c, "|", C_DIM);
        char buf[64];
        unsigned len = (unsigned)axis_label(buf, sizeof buf, t, f);
        if (c >= free_col && c + len <= lo->ncols) {
            line_text(&labels, lw + 1 + c, buf, len, C_NONE);
            free_col = c + len + 1;
        }
        if (t > UINT64_MAX - step)
            break;
    }
    line_emit(&labels, color, out);
    line_emit(&ticks, color, out);
}

/* ---- rows --------------------------------------------------------------------- */

static uint8_t kernel_color(uint32_t key)
{
    return (uint8_t)(C_PALETTE + (key - GPUFL__VG_KERNEL) % GPUFL__VIEW_LETTERS);
}

static uint8_t name_color(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return (uint8_t)(C_PALETTE + h % GPUFL__VIEW_LETTERS);
}

static void stream_cell(line *l, unsigned col, const gpufl__vcell *c)
{
    char g[2] = {' ', '\0'};
    uint8_t color = C_NONE;
    if (c->key >= GPUFL__VG_KERNEL && c->key < GPUFL__VG_OTHER) {
        g[0] = (char)((c->idle ? 'a' : 'A') + (c->key - GPUFL__VG_KERNEL));
        color = kernel_color(c->key);
    } else if (c->key == GPUFL__VG_OTHER) {
        g[0] = c->idle ? '.' : '+';
        color = C_OTHER;
    } else if (c->key >= GPUFL__VG_COPY && c->key < GPUFL__VG_MEMSET) {
        g[0] = gpufl__copy_kind((uint8_t)(c->key - GPUFL__VG_COPY))->glyph;
        color = C_COPY;
    } else if (c->key == GPUFL__VG_MEMSET) {
        g[0] = '~';
        color = C_MEMSET;
    }
    line_put(l, col, g, color);
}

/* A scope's row: runs of columns of one scope drawn as [name...] bars.
 * Returns how many of them never ended. */
static size_t scope_cells(const gpufl__view_layout *lo, const gpufl__vrow *r, line *l, unsigned x0)
{
    const gpufl__view_index *ix = lo->ix;
    size_t unended = 0;
    for (unsigned c = 0; c < lo->ncols;) {
        uint32_t key = r->cell[c].key;
        unsigned end = c + 1;
        while (end < lo->ncols && r->cell[end].key == key)
            end++;
        if (key) {
            uint32_t e = ix->row[r->lane->first + key - 1];
            unsigned table = GPUFL__VROW_TABLE(e);
            size_t i = GPUFL__VROW_INDEX(e);
            const char *name = gpufl__rows_str(&ix->src, gpufl__row_name(&ix->src, table, i));
            uint8_t color = name_color(name);
            unsigned w = end - c;
            /* drawn to the session's last recorded time, where the trace
             * ended it, and marked '>' there (the footer says why) */
            bool open = gpufl__row_unended(&ix->src, table, i);
            unended += open;
            if (w == 1) {
                line_put(l, x0 + c, open ? ">" : "|", color);
            } else {
                /* '<' and '>': the window cuts it, or it never ended */
                bool starts = gpufl__row_start(&ix->src, table, i) >= lo->from;
                bool ends = !open && gpufl__view_entry_end(ix, e) <= lo->to;
                line_put(l, x0 + c, starts ? "[" : "<", color);
                for (unsigned k = c + 1; k + 1 < end; k++)
                    line_put(l, x0 + k, "-", color);
                line_put(l, x0 + end - 1, ends ? "]" : ">", color);
                if (w >= 6 || (w > 2 && text_cols(name) <= w - 2))
                    line_text(l, x0 + c + 1, name, w - 2, color);
            }
        }
        c = end;
    }
    return unended;
}

/* A row's label; where the full one does not fit the label column (narrow
 * views), a short one, so that two streams never both read "stream…". */
static void row_label(const gpufl__vrow *r, unsigned lw, char *buf, size_t len)
{
    const char *indent = lw >= 10 ? "  " : "";
    static const char *const full[] = {
        [GPUFL__VR_STREAM] = "stream", [GPUFL__VR_SCOPE] = "scope", [GPUFL__VR_NVTX] = "nvtx"};
    static const char *const brief[] = {[GPUFL__VR_STREAM] = "s", [GPUFL__VR_SCOPE] = "sc", [GPUFL__VR_NVTX] = "nv"};
    if (r->kind == GPUFL__VR_UTIL) {
        snprintf(buf, len, "%s%s", indent, r->nvml ? "util" : "busy");
        return;
    }
    uint32_t n = r->kind == GPUFL__VR_STREAM ? r->stream : r->level;
    int w = snprintf(buf, len, "%s%s %" PRIu32, indent, full[r->kind], n);
    if (w > (int)lw)
        snprintf(buf, len, "%s%" PRIu32, brief[r->kind], n);
}

static const char *device_name(const gpufl_trace *t, uint32_t device)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    for (uint32_t i = 0; i < info->ndevices; i++)
        if (info->devices[i].index == device)
            return gpufl_trace_string(t, info->devices[i].name);
    return "";
}

#define TRACED_GLYPH "\xe2\x96\x88"  /* full block: device tracing was on */
#define TRIGGER_GLYPH "\xe2\x96\xbc" /* down-pointing triangle: a trigger fired */

/* The "traced" row (a block where a trace window covers the column) or
 * the "triggers" row (a triangle where one fired, a digit where several). */
static void flight_row(const gpufl__vrow *r, unsigned ncols, unsigned lw, line *l)
{
    bool traced = r->kind == GPUFL__VR_TRACED;
    line_text(l, 0, traced ? "traced" : "triggers", lw, C_NONE);
    for (unsigned c = 0; c < ncols; c++) {
        uint32_t k = r->cell[c].key;
        if (!k)
            continue;
        if (traced)
            line_put(l, lw + 1 + c, TRACED_GLYPH, C_UTIL);
        else if (k == 1)
            line_put(l, lw + 1 + c, TRIGGER_GLYPH, C_COPY);
        else
            line_put(l, lw + 1 + c, (char[2]){k < 10 ? (char)('0' + k) : '+', '\0'}, C_COPY);
    }
}

/* Returns how many scopes and NVTX ranges drawn never ended. */
static size_t rows(const gpufl__view_layout *lo, unsigned lw, line *l, bool color, gpufl__vbuf *out)
{
    size_t unended = 0;
    static const char *const spark[9] = {" ",
                                         "\xe2\x96\x81",
                                         "\xe2\x96\x82",
                                         "\xe2\x96\x83",
                                         "\xe2\x96\x84",
                                         "\xe2\x96\x85",
                                         "\xe2\x96\x86",
                                         "\xe2\x96\x87",
                                         "\xe2\x96\x88"};
    for (size_t ri = 0; ri < lo->nrows; ri++) {
        const gpufl__vrow *r = &lo->row[ri];
        char buf[512];
        if (r->kind == GPUFL__VR_DEVICE) {
            const char *name = device_name(lo->ix->src.t, r->device);
            snprintf(buf, sizeof buf, "gpu %" PRIu32 "%s%s", r->device, name[0] ? "  " : "", name);
            text_line(l, buf, C_BOLD, color, out);
            continue;
        }
        if (r->kind == GPUFL__VR_THREAD) {
            snprintf(buf, sizeof buf, "thread %" PRIu32, r->tid);
            text_line(l, buf, C_BOLD, color, out);
            continue;
        }
        line_clear(l);
        unsigned x0 = lw + 1;
        if (r->kind == GPUFL__VR_TRACED || r->kind == GPUFL__VR_TRIGGERS) {
            flight_row(r, lo->ncols, lw, l);
            line_emit(l, color, out);
            continue;
        }
        row_label(r, lw, buf, sizeof buf);
        line_text(l, 0, buf, lw, C_NONE);
        if (r->kind == GPUFL__VR_UTIL)
            for (unsigned c = 0; c < lo->ncols; c++)
                line_put(l, x0 + c, spark[r->cell[c].key <= 8 ? r->cell[c].key : 8], C_UTIL);
        else if (r->kind == GPUFL__VR_STREAM)
            for (unsigned c = 0; c < lo->ncols; c++)
                stream_cell(l, x0 + c, &r->cell[c]);
        else
            unended += scope_cells(lo, r, l, x0);
        line_emit(l, color, out);
    }
    return unended;
}

/* ---- legend and footer -------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

/* Lines of items joined by ", ", wrapped at the width; continuation lines
 * indented by two. */
static void wrapped(line *l, const char *const *items, size_t n, bool color, gpufl__vbuf *out)
{
    line_clear(l);
    unsigned col = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned w = text_cols(items[i]);
        if (col > 0 && col + 2 + w > l->width) {
            line_emit(l, color, out);
            line_clear(l);
            col = 2;
        } else if (col > 0) {
            col += line_text(l, col, ", ", 2, C_NONE);
        }
        col += line_text(l, col, items[i], l->width > col ? l->width - col : 0, C_NONE);
    }
    line_emit(l, color, out);
}

/* A kernel's name as the legend shows it: a demangled C++ name without
 * its leading "void " and its parameter list. */
static void short_name(const char *s, char *buf, size_t len)
{
    if (!strncmp(s, "void ", 5))
        s += 5;
    size_t n = strlen(s);
    if (n && s[n - 1] == ')') {
        int depth = 0;
        for (size_t i = n; i-- > 0;) {
            if (s[i] == ')') {
                depth++;
            } else if (s[i] == '(' && --depth == 0) {
                if (i > 0)
                    n = i;
                break;
            }
        }
    }
    snprintf(buf, len, "%.*s", (int)n, s);
}

#define LEGEND_FULL_WIDTH 48 /* 32 columns of figures, 16 of name */

static void legend(const gpufl__view_layout *lo, line *l, bool color, gpufl__vbuf *out)
{
    bool seen[GPUFL__VG_COUNT] = {false};
    for (size_t ri = 0; ri < lo->nrows; ri++)
        if (lo->row[ri].kind == GPUFL__VR_STREAM)
            for (unsigned c = 0; c < lo->ncols; c++)
                seen[lo->row[ri].cell[c].key] = true;
    if (lo->nlegend)
        text_line(l, "kernels by time (a lowercase letter: mostly idle)", C_NONE, color, out);
    for (size_t i = 0; i < lo->nlegend; i++) {
        const gpufl__vlegend *g = &lo->legend[i];
        char dur[32], buf[128];
        gpufl__format_duration(g->ns, dur, sizeof dur);
        /* time and count only where they leave room for a name */
        int n = l->width >= LEGEND_FULL_WIDTH
                    ? snprintf(buf, sizeof buf, "  %c %5.1f%% %10s %7" PRIu64 "x  ", 'A' + (int)i,
                               pct(g->ns, lo->kernel_ns), dur, g->count)
                    : snprintf(buf, sizeof buf, "  %c %5.1f%%  ", 'A' + (int)i, pct(g->ns, lo->kernel_ns));
        line_clear(l);
        unsigned col = line_text(l, 0, buf, l->width, C_NONE);
        line_put(l, 2, (char[2]){(char)('A' + i), '\0'}, kernel_color(GPUFL__VG_KERNEL + (uint32_t)i));
        if (col == (unsigned)n) {
            char name[1024];
            short_name(gpufl__rows_str(&lo->ix->src, g->name), name, sizeof name);
            line_text(l, col, name, l->width - col, C_NONE);
        }
        line_emit(l, color, out);
    }
    char items[GPUFL__VG_COUNT + 1][64];
    const char *ptr[GPUFL__VG_COUNT + 1];
    size_t n = 0;
    if (lo->other_names) {
        uint64_t legend_ns = 0;
        for (size_t i = 0; i < lo->nlegend; i++)
            legend_ns += lo->legend[i].ns;
        snprintf(items[n], sizeof items[n], "+ %zu other kernel%s (%.1f%%)", lo->other_names,
                 lo->other_names == 1 ? "" : "s", pct(lo->kernel_ns - legend_ns, lo->kernel_ns));
        ptr[n] = items[n];
        n++;
    }
    for (unsigned k = 0; k < GPUFL__VIEW_COPY_KINDS; k++)
        if (seen[GPUFL__VG_COPY + k]) {
            snprintf(items[n], sizeof items[n], "%c %s copy", gpufl__copy_kind((uint8_t)k)->glyph,
                     gpufl__copy_kind((uint8_t)k)->view);
            ptr[n] = items[n];
            n++;
        }
    if (seen[GPUFL__VG_MEMSET]) {
        snprintf(items[n], sizeof items[n], "~ memset");
        ptr[n] = items[n];
        n++;
    }
    if (n)
        wrapped(l, ptr, n, color, out);
}

static void footer(const gpufl__view_layout *lo, size_t unended, line *l, bool color, gpufl__vbuf *out)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(lo->ix->src.t);
    char a[48], b[48], d[32], w[32];
    char items[8][160];
    const char *ptr[8];
    gpufl__view_format_time(lo->from - info->start_ns, a, sizeof a);
    gpufl__view_format_time(lo->to - info->start_ns, b, sizeof b);
    gpufl__format_duration(lo->to - lo->from, d, sizeof d);
    if (lo->to - lo->from >= lo->ncols)
        gpufl__format_duration((lo->to - lo->from) / lo->ncols, w, sizeof w);
    else /* a window of fewer ns than columns */
        snprintf(w, sizeof w, "%.2f ns", (double)(lo->to - lo->from) / lo->ncols);
    snprintf(items[0], sizeof items[0], "window %s to %s (%s)", a, b, d);
    snprintf(items[1], sizeof items[1], "%u columns of %s", lo->ncols, w);
    ptr[0] = items[0];
    ptr[1] = items[1];
    wrapped(l, ptr, 2, color, out);
    for (size_t i = 0; i < lo->ndevices; i++) {
        const gpufl__vdevice *g = &lo->device[i];
        size_t n = 0;
        snprintf(items[n++], sizeof items[0], "gpu %" PRIu32 ": busy %.1f%%", g->device,
                 pct(g->busy_ns, lo->to - lo->from));
        if (g->nvml)
            snprintf(items[n++], sizeof items[0], "util %u%% (NVML, %zu samples)", g->util_mean, g->samples);
        snprintf(items[n++], sizeof items[0], "%zu kernel%s", g->kernels, g->kernels == 1 ? "" : "s");
        snprintf(items[n++], sizeof items[0], "%zu cop%s", g->copies, g->copies == 1 ? "y" : "ies");
        snprintf(items[n++], sizeof items[0], "%zu memset%s", g->memsets, g->memsets == 1 ? "" : "s");
        for (size_t k = 0; k < n; k++)
            ptr[k] = items[k];
        wrapped(l, ptr, n, color, out);
    }
    if (lo->ix->nwindows || lo->ix->ntriggers) {
        size_t n = 0;
        if (lo->ix->nwindows)
            snprintf(items[n++], sizeof items[0],
                     TRACED_GLYPH " traced: %zu of %zu trace window%s, %s (%.1f%%); device work only inside them",
                     lo->windows, lo->ix->nwindows, lo->ix->nwindows == 1 ? "" : "s",
                     (gpufl__format_duration(lo->traced_ns, d, sizeof d), d), pct(lo->traced_ns, lo->to - lo->from));
        if (lo->ix->ntriggers)
            snprintf(items[n++], sizeof items[0], TRIGGER_GLYPH " %zu of %zu trigger%s (a digit: several in a column)",
                     lo->triggers, lo->ix->ntriggers, lo->ix->ntriggers == 1 ? "" : "s");
        for (size_t k = 0; k < n; k++)
            ptr[k] = items[k];
        wrapped(l, ptr, n, color, out);
    }
    if (lo->threads) {
        snprintf(items[0], sizeof items[0], "%zu thread%s: %zu scope%s", lo->threads, lo->threads == 1 ? "" : "s",
                 lo->scopes, lo->scopes == 1 ? "" : "s");
        snprintf(items[1], sizeof items[1], "%zu NVTX range%s", lo->nvtx, lo->nvtx == 1 ? "" : "s");
        ptr[0] = items[0];
        ptr[1] = items[1];
        size_t n = 2;
        if (lo->ix->deep) {
            snprintf(items[2], sizeof items[2], "%zu deeper than %d levels not drawn", lo->ix->deep,
                     GPUFL__VIEW_MAX_LEVELS);
            ptr[n++] = items[2];
        }
        if (unended) {
            snprintf(items[n], sizeof items[n],
                     "%zu never ended (>: the program died or was still running), drawn to the last recorded time",
                     unended);
            ptr[n] = items[n];
            n++;
        }
        wrapped(l, ptr, n, color, out);
    }
}

unsigned gpufl__view_label_width(unsigned width) { return width >= 60 ? 14 : width / 4; }

void gpufl__view_text(const gpufl__view_layout *lo, unsigned width, bool color, gpufl__vbuf *out)
{
    glyph *g = malloc(2 * (size_t)width * sizeof *g);
    if (!g) {
        out->failed = true;
        return;
    }
    line l = {g, width};
    unsigned lw = gpufl__view_label_width(width);
    const gpufl_trace_info *info = gpufl_trace_get_info(lo->ix->src.t);
    char buf[600];
    snprintf(buf, sizeof buf, "%s", gpufl_trace_string(lo->ix->src.t, info->session_id));
    if (buf[0])
        text_line(&l, buf, C_BOLD, color, out);
    axis(lo, lw, &l, color, out);
    size_t unended = rows(lo, lw, &l, color, out);
    if (lo->nrows == 0)
        text_line(&l, "nothing was recorded in this window", C_NONE, color, out);
    legend(lo, &l, color, out);
    footer(lo, unended, &l, color, out);
    free(g);
}
