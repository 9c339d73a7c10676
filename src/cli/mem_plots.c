/*
 * SVG plots of a session's memory (mem_plots.h).
 *
 * Every plot is one frame: a title, an x and a y axis with their ends
 * labelled, and marks scaled into a fixed 800 x 420 box. Layers over time:
 * one polyline per recorded series, against seconds since the session's
 * start. A repeated scope: one dot per repetition (the warm-up's grey), the
 * fitted line over the fitted ones. Names from the trace are escaped, and
 * file names keep only [A-Za-z0-9._-] of them.
 */
#include "cli/mem_plots.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define W 800.0
#define H 440.0
#define LEFT 90.0
#define RIGHT 20.0
#define TOP 60.0 /* the title, then a line of legend above the plot */
#define BOTTOM 50.0
#define PW (W - LEFT - RIGHT)
#define PH (H - TOP - BOTTOM)

static const char *const colors[GPUFL__ANA_MEM_SERIES] = {"#7f7f7f", "#1f77b4", "#d62728", "#2ca02c",
                                                          "#9467bd", "#ff7f0e", "#8c564b", "#17becf"};

static void escaped(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* "1.50 GiB" */
static void bytes_text(double b, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (fabs(b) >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.2f %s" : "%.0f %s", b, unit[u]);
}

static void frame(FILE *f, const char *title, const char *x0, const char *x1, const char *xname, double ymax)
{
    char top[32];
    bytes_text(ymax, top, sizeof top);
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%.0f\" y=\"22\" font-size=\"15\">",
            W, H, W, H, LEFT);
    escaped(f, title);
    fprintf(f,
            "</text>\n<g stroke=\"black\"><line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>"
            "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/></g>\n",
            LEFT, TOP + PH, LEFT + PW, TOP + PH, LEFT, TOP, LEFT, TOP + PH);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n", LEFT - 6, TOP + 4, top);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0 B</text>\n", LEFT - 6, TOP + PH + 4);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"start\">%s</text>\n", LEFT, TOP + PH + 18, x0);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>\n", LEFT + PW, TOP + PH + 18, x1);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n", LEFT + PW / 2, TOP + PH + 38, xname);
}

static double px(double x, double x0, double x1) { return LEFT + (x1 > x0 ? (x - x0) / (x1 - x0) : 0) * PW; }
static double py(double y, double ymax) { return TOP + PH - (ymax > 0 ? y / ymax : 0) * PH; }

/* The ceiling of the y axis: the highest value, with a margin. */
static double ceiling(double top) { return top > 0 ? top * 1.05 : 1; }

static int layers_plot(FILE *f, const gpufl_trace *t, const gpufl__ana_mem_layers_dev *d)
{
    uint64_t start = gpufl_trace_get_info(t)->start_ns;
    double t0 = 0, t1 = 0, top = 0;
    for (uint32_t i = 0; i < d->npoints; i++) {
        double s = (double)(d->points[i].ts_ns > start ? d->points[i].ts_ns - start : 0) / 1e9;
        t0 = i ? fmin(t0, s) : s;
        t1 = i ? fmax(t1, s) : s;
    }
    for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++)
        if ((d->known & GPUFL__ANA_MEM_BIT(s)) && (double)d->peak[s] > top)
            top = (double)d->peak[s];
    double ymax = ceiling(top);
    char title[128], x0[32], x1[32];
    snprintf(title, sizeof title, "GPU %u: memory layers over the session", d->device);
    snprintf(x0, sizeof x0, "%.3f s", t0);
    snprintf(x1, sizeof x1, "%.3f s", t1);
    frame(f, title, x0, x1, "seconds since the session's start", ymax);
    double legend_x = 0;
    for (unsigned s = 0; s < GPUFL__ANA_MEM_SERIES; s++) {
        if (!(d->known & GPUFL__ANA_MEM_BIT(s)))
            continue;
        /* a step function: a value holds until the next point */
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", colors[s]);
        double prev = -1;
        for (uint32_t i = 0; i < d->npoints; i++) {
            const gpufl__ana_mem_point *p = &d->points[i];
            if (!(p->valid & GPUFL__ANA_MEM_BIT(s)))
                continue;
            double x = px((double)(p->ts_ns > start ? p->ts_ns - start : 0) / 1e9, t0, t1);
            double y = py((double)p->v[s], ymax);
            if (prev >= 0)
                fprintf(f, "%.1f,%.1f ", x, prev);
            fprintf(f, "%.1f,%.1f ", x, y);
            prev = y;
        }
        /* the legend: one line above the plot, about 6.5 px a character */
        const char *label = gpufl__ana_mem_label((uint8_t)s);
        fprintf(f, "\"/>\n<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">", LEFT + legend_x, TOP - 14, colors[s]);
        escaped(f, label);
        fputs("</text>\n", f);
        legend_x += 6.5 * (double)strlen(label) + 18;
    }
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

static int leak_plot(FILE *f, const gpufl_trace *t, const gpufl__ana_leak *l)
{
    double top = 0;
    for (uint32_t i = 0; i < l->repetitions; i++)
        top = fmax(top, (double)l->live[i]);
    double last = l->intercept + l->slope * (l->repetitions - 1);
    double ymax = ceiling(fmax(top, last));
    char title[512], x1[32], slope[32];
    bytes_text(l->slope, slope, sizeof slope);
    snprintf(title, sizeof title, "%s (%s, GPU %u): %s, %s a repetition, r² %.2f, p %.2g",
             gpufl_trace_string(t, l->name), l->tree == GPUFL__ANA_TREE_SCOPES ? "scope" : "NVTX", l->device,
             l->detected ? "LEAK" : "no leak", slope, l->r_squared, l->p_value);
    snprintf(x1, sizeof x1, "%u", l->repetitions - 1);
    frame(f, title, "0", x1, "repetition (grey: warm-up, left out of the fit)", ymax);
    double n1 = l->repetitions - 1;
    for (uint32_t i = 0; i < l->repetitions; i++)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px(i, 0, n1),
                py((double)l->live[i], ymax), i < l->warmup ? "#aaaaaa" : "#1f77b4");
    double xa = l->warmup, xb = n1;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
            px(xa, 0, n1), py(fmax(0, l->intercept + l->slope * xa), ymax), px(xb, 0, n1),
            py(fmax(0, l->intercept + l->slope * xb), ymax), l->detected ? "#d62728" : "#2ca02c");
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">%s after each repetition; the line: least squares</text>\n", LEFT, TOP - 14,
            gpufl__ana_mem_label(l->series));
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

/* [A-Za-z0-9._-] of name, the rest as '_', at most 60 characters. */
static void file_part(const char *name, char *buf, size_t len)
{
    size_t n = 0;
    for (; name && *name && n + 1 < len && n < 60; name++) {
        char c = *name;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                  c == '_';
        buf[n++] = ok ? c : '_';
    }
    buf[n] = '\0';
}

typedef int (*plot_fn)(FILE *f, const gpufl_trace *t, const void *what);

static int plot_layers(FILE *f, const gpufl_trace *t, const void *what) { return layers_plot(f, t, what); }
static int plot_leak(FILE *f, const gpufl_trace *t, const void *what) { return leak_plot(f, t, what); }

static int write_one(const char *dir, const char *file, plot_fn fn, const gpufl_trace *t, const void *what, char *err,
                     size_t err_len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "we");
    if (!f) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        return GPUFL_EIO;
    }
    int bad = fn(f, t, what);
    if (fclose(f) != 0 || bad) {
        snprintf(err, err_len, "writing %s failed", path);
        return GPUFL_EIO;
    }
    return 0;
}

int gpufl__mem_plots_write(const char *dir, const gpufl_trace *t, const gpufl__ana_mem_layers *layers,
                           const gpufl__ana_leaks *leaks, unsigned *written, char *err, size_t err_len)
{
    unsigned n = 0;
    int rc = 0;
    for (uint32_t k = 0; k < layers->n && rc == 0; k++) {
        char file[64];
        snprintf(file, sizeof file, "memory_layers_gpu%u.svg", layers->devices[k].device);
        if ((rc = write_one(dir, file, plot_layers, t, &layers->devices[k], err, err_len)) == 0)
            n++;
    }
    for (uint32_t i = 0; i < leaks->n && rc == 0; i++) {
        const gpufl__ana_leak *l = &leaks->rows[i];
        char part[64], file[128];
        file_part(gpufl_trace_string(t, l->name), part, sizeof part);
        /* the index keeps names that differ only in what was replaced apart */
        snprintf(file, sizeof file, "leak_%02u_%s_gpu%u.svg", i + 1, part, l->device);
        if ((rc = write_one(dir, file, plot_leak, t, l, err, err_len)) == 0)
            n++;
    }
    if (written)
        *written = n;
    return rc;
}
