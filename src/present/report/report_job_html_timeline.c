/*
 * The job page's timeline (report_html_parts.h): a static SVG, so it needs
 * no script and its size is known before it is written. A lane per rank,
 * on the job's time line (each rank's session times plus its shift_ns):
 *
 *   - the steps, each its own bar while it is at least 2 px wide; narrower
 *     neighbours are merged into one lighter bar saying which steps it holds;
 *   - the NCCL kernels, rasterised into pixel columns (what fraction of
 *     each column some NCCL kernel ran, kernels and their time starting
 *     there), then runs of covered columns drawn as one bar each, its
 *     opacity the busy fraction: kernels closer than a pixel merge, and a
 *     lane holds at most PLOT/2 bars however many kernels the rank ran;
 *   - a mark at each late arrival (the straggler list's events), at most
 *     one per 3 px, all of a lane's in one <path>.
 *
 * A lane is therefore at most a few hundred elements: 64 ranks of 50 000
 * collectives each stay a page of a few megabytes. The rasterisation is
 * O(kernels + pixels) per rank (a difference array for the columns a
 * kernel covers whole), so a rank's collectives need not be sorted.
 * Single-threaded.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "present/report/report_html_parts.h"

#define PLOT GPUFL__JOB_TL_PLOT_PX
#define LW 190   /* label column */
#define AH 24    /* time axis */
#define LH 32    /* lane */
#define RIGHT 40 /* room for the last tick's label */
#define NCCL_COLOR "#dd8a1e"
#define STEP_COLOR "#2a9d8f"
#define LATE_COLOR "#c1121f"

typedef struct span {
    int64_t t0; /* job time of the plot's left edge */
    double ns;  /* what it covers (> 0) */
} span;

static double px(const span *s, int64_t t)
{
    double x = (double)(t - s->t0) * PLOT / s->ns; /* the difference first: clocks pass 2^53 ns */
    return x < 0 ? 0 : x > PLOT ? PLOT : x;
}

static void widen(int64_t *lo, int64_t *hi, bool *any, int64_t a, int64_t b)
{
    if (!*any || a < *lo)
        *lo = a;
    if (!*any || b > *hi)
        *hi = b;
    *any = true;
}

/* From the earliest to the latest thing drawn, over every rank. */
static span job_span(const gpufl__job_report *r)
{
    int64_t lo = 0, hi = 0;
    bool any = false;
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        if (k->end_ns > k->start_ns)
            widen(&lo, &hi, &any, (int64_t)k->start_ns + k->shift_ns, (int64_t)k->end_ns + k->shift_ns);
        for (size_t j = 0; j < k->ncoll; j++)
            widen(&lo, &hi, &any, (int64_t)k->coll[j].start_ns + k->shift_ns, (int64_t)k->coll[j].end_ns + k->shift_ns);
        for (size_t j = 0; j < k->nsteps; j++)
            widen(&lo, &hi, &any, (int64_t)k->steps[j].begin_ns + k->shift_ns,
                  (int64_t)k->steps[j].end_ns + k->shift_ns);
    }
    return (span){.t0 = lo, .ns = hi > lo ? (double)(hi - lo) : 1.0};
}

/* Ticks at 1, 2 or 5 times a power of ten, at most ten of them. */
static void axis(gpufl__hout *o, const span *s, int height)
{
    double base = pow(10, floor(log10(s->ns / 10))), step = base;
    for (int m = 1; m <= 10 && s->ns / step > 10; m = m == 1 ? 2 : m == 2 ? 5 : 10)
        step = base * m;
    gpufl__hout_raw(o, "<g class=\"axis\">");
    for (double t = 0; t <= s->ns; t += step) {
        double x = LW + t * PLOT / s->ns;
        char buf[32];
        gpufl__hout_printf(o, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d8dde6\"/>", x, AH - 4, x,
                           height);
        gpufl__hout_printf(o, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", x, AH - 8,
                           gpufl__hfmt_ns(buf, sizeof buf, (uint64_t)llround(t)));
    }
    gpufl__hout_raw(o, "</g>\n");
}

static void rank_label(const gpufl__job_rank *k, size_t i, char *buf, size_t len)
{
    if (k->rank >= 0)
        snprintf(buf, len, "rank %lld", (long long)k->rank);
    else
        snprintf(buf, len, "session #%zu", i);
}

/* The host, cut to fit the label column (at a UTF-8 character's start). */
static void short_host(const char *host, char *buf, size_t len)
{
    size_t n = strlen(host);
    if (n < len) {
        memcpy(buf, host, n + 1);
        return;
    }
    n = len - 4;
    while (n && ((unsigned char)host[n] & 0xc0) == 0x80)
        n--;
    memcpy(buf, host, n);
    memcpy(buf + n, "...", 4);
}

static void label(gpufl__hout *o, const gpufl__job_rank *k, size_t i, int y)
{
    char name[48], host[28];
    rank_label(k, i, name, sizeof name);
    short_host(k->host, host, sizeof host);
    gpufl__hout_printf(o, "<text class=\"grp\" x=\"6\" y=\"%d\">%s<title>", y + 13, name);
    gpufl__hout_text(o, k->host);
    gpufl__hout_printf(o, ", pid %d: ", k->pid);
    gpufl__hout_text(o, k->path);
    gpufl__hout_printf(o, "</title></text><text class=\"lbl\" x=\"6\" y=\"%d\">", y + 26);
    gpufl__hout_text(o, host);
    gpufl__hout_raw(o, "</text>\n");
}

static void step_bar(gpufl__hout *o, const gpufl__job_rank *k, int y, double a, double b, size_t first, size_t last,
                     const span *s)
{
    const char *name = k->str[k->step_name][0] ? k->str[k->step_name] : "step";
    bool merged = last > first;
    double w = b - a >= 2 ? b - a - 1 : b - a < 0.5 ? 0.5 : b - a; /* a gap between wide neighbours */
    char at[32], len[32];
    uint64_t ns = k->steps[last].end_ns - k->steps[first].begin_ns;
    gpufl__hout_printf(o, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"7\"%s><title>", LW + a, y + 3, w,
                       merged ? " fill-opacity=\"0.45\"" : "");
    gpufl__hout_text(o, name);
    if (merged)
        gpufl__hout_printf(o, " %zu to %zu", first + 1, last + 1);
    else
        gpufl__hout_printf(o, " %zu", first + 1);
    gpufl__hout_printf(o, ": %s, at %s</title></rect>", gpufl__hfmt_ns(len, sizeof len, ns),
                       gpufl__hfmt_ns(at, sizeof at, (uint64_t)llround(a * s->ns / PLOT)));
}

static void steps(gpufl__hout *o, const gpufl__job_rank *k, int y, const span *s)
{
    if (!k->nsteps)
        return;
    gpufl__hout_raw(o, "<g fill=\"" STEP_COLOR "\">");
    double ra = 0, rb = 0;
    size_t first = 0;
    bool narrow = false; /* the run so far is of steps under 2 px */
    for (size_t j = 0; j < k->nsteps; j++) {
        double a = px(s, (int64_t)k->steps[j].begin_ns + k->shift_ns);
        double b = px(s, (int64_t)k->steps[j].end_ns + k->shift_ns);
        if (j > 0 && narrow && b - a < 2 && a - rb < 1) { /* narrow neighbours merge; a wide step stands alone */
            if (b > rb)
                rb = b;
            continue;
        }
        if (j > 0)
            step_bar(o, k, y, ra, rb, first, j - 1, s);
        ra = a;
        rb = b;
        first = j;
        narrow = b - a < 2;
    }
    step_bar(o, k, y, ra, rb, first, k->nsteps - 1, s);
    gpufl__hout_raw(o, "</g>");
}

/* Pixel columns of one rank's NCCL kernels. */
typedef struct columns {
    double *busy;  /* PLOT + 1: fraction of the column some kernel covers (summed, so may pass 1) */
    double *whole; /* PLOT + 2: difference array of the columns covered whole */
    uint32_t *n;   /* PLOT + 1: kernels starting in the column */
    uint64_t *ns;  /* PLOT + 1: their time */
    uint8_t *late; /* PLOT + 1: a late arrival starts in the column */
} columns;

static void rasterise(columns *c, const gpufl__job_rank *k, const span *s)
{
    memset(c->busy, 0, (PLOT + 1) * sizeof *c->busy);
    memset(c->whole, 0, (PLOT + 2) * sizeof *c->whole);
    memset(c->n, 0, (PLOT + 1) * sizeof *c->n);
    memset(c->ns, 0, (PLOT + 1) * sizeof *c->ns);
    for (size_t j = 0; j < k->ncoll; j++) {
        const gpufl__job_coll *e = &k->coll[j];
        double a = px(s, (int64_t)e->start_ns + k->shift_ns), b = px(s, (int64_t)e->end_ns + k->shift_ns);
        size_t ca = (size_t)a, cb = (size_t)b;
        c->n[ca]++;
        c->ns[ca] += e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
        if (ca == cb) {
            c->busy[ca] += b - a;
            continue;
        }
        c->busy[ca] += (double)(ca + 1) - a;
        c->busy[cb] += b - (double)cb;
        c->whole[ca + 1] += 1;
        c->whole[cb] -= 1;
    }
    double run = 0;
    for (size_t x = 0; x <= PLOT; x++) {
        run += c->whole[x];
        c->busy[x] += run;
    }
}

static void nccl_bars(gpufl__hout *o, const columns *c, int y, const span *s)
{
    gpufl__hout_raw(o, "<g fill=\"" NCCL_COLOR "\">");
    for (size_t x = 0; x < PLOT;) {
        if (!c->n[x] && c->busy[x] <= 0) {
            x++;
            continue;
        }
        size_t x0 = x;
        double busy = 0;
        uint64_t n = 0, ns = 0;
        for (; x < PLOT && (c->n[x] || c->busy[x] > 0); x++) {
            busy += c->busy[x] > 1 ? 1 : c->busy[x];
            n += c->n[x];
            ns += c->ns[x];
        }
        if (x == PLOT) { /* kernels ending at the right edge */
            n += c->n[PLOT];
            ns += c->ns[PLOT];
        }
        double op = busy / (double)(x - x0);
        char at[32], len[32];
        gpufl__hout_printf(o, "<rect x=\"%zu\" y=\"%d\" width=\"%zu\" height=\"12\"", LW + x0, y + 12, x - x0);
        if (op < 0.95)
            gpufl__hout_printf(o, " fill-opacity=\"%.2f\"", op < 0.3 ? 0.3 : op);
        gpufl__hout_printf(o, "><title>%" PRIu64 " NCCL kernel%s, %s, from %s</title></rect>", n, n == 1 ? "" : "s",
                           gpufl__hfmt_ns(len, sizeof len, ns),
                           gpufl__hfmt_ns(at, sizeof at, (uint64_t)llround((double)x0 * s->ns / PLOT)));
    }
    gpufl__hout_raw(o, "</g>");
}

static void late_marks(gpufl__hout *o, const columns *c, const gpufl__job_rank_lateness *l, int y, const char *name)
{
    if (!l->times_late)
        return;
    char tot[32], mx[32];
    gpufl__hout_raw(o, "<path fill=\"" LATE_COLOR "\" d=\"");
    size_t last = 0;
    bool any = false;
    for (size_t x = 0; x <= PLOT; x++) {
        if (!c->late[x] || (any && x - last < 3))
            continue;
        gpufl__hout_printf(o, "M%zu %dl-4 -7h8z", LW + x, y + 12);
        last = x;
        any = true;
    }
    gpufl__hout_printf(
        o, "\"><title>%s was last at %" PRIu64 " collective%s: %s in all, at most %s late</title></path>", name,
        l->times_late, l->times_late == 1 ? "" : "s", gpufl__hfmt_ns(tot, sizeof tot, l->total_late_ns),
        gpufl__hfmt_ns(mx, sizeof mx, l->max_late_ns));
}

static void mark_late(columns *c, const gpufl__job_report *r, size_t rank, const span *s)
{
    memset(c->late, 0, PLOT + 1);
    const gpufl__job_rank *k = &r->ranks[rank];
    for (size_t i = 0; i < r->stragglers.nlate; i++) {
        const gpufl__job_late *l = &r->stragglers.late[i];
        if (l->rank != rank)
            continue;
        const gpufl__job_coll *e = &k->coll[r->matches.m[l->match].at[rank]];
        c->late[(size_t)px(s, (int64_t)e->start_ns + k->shift_ns)] = 1;
    }
}

int64_t gpufl__html_job_origin(const gpufl__job_report *r) { return job_span(r).t0; }

/* The session's recorded span, a thin line under the lane's marks. */
static void session_line(gpufl__hout *o, const gpufl__job_rank *k, int y, const span *s)
{
    if (k->end_ns <= k->start_ns)
        return;
    double a = px(s, (int64_t)k->start_ns + k->shift_ns), b = px(s, (int64_t)k->end_ns + k->shift_ns);
    char from[32], len[32];
    gpufl__hout_printf(o,
                       "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"2\" fill=\"#8a8f98\"><title>session: "
                       "%s from %s</title></rect>",
                       LW + a, y + 27, b - a < 0.5 ? 0.5 : b - a,
                       gpufl__hfmt_ns(len, sizeof len, k->end_ns - k->start_ns),
                       gpufl__hfmt_ns(from, sizeof from, (uint64_t)llround(a * s->ns / PLOT)));
}

int gpufl__html_job_timeline(gpufl__hout *o, const gpufl__job_report *r)
{
    columns c = {.busy = malloc((PLOT + 1) * sizeof *c.busy),
                 .whole = malloc((PLOT + 2) * sizeof *c.whole),
                 .n = malloc((PLOT + 1) * sizeof *c.n),
                 .ns = malloc((PLOT + 1) * sizeof *c.ns),
                 .late = malloc(PLOT + 1)};
    int rc = GPUFL_ENOMEM;
    if (!c.busy || !c.whole || !c.n || !c.ns || !c.late)
        goto out;
    span s = job_span(r);
    int height = AH + (int)r->nranks * LH + 4;
    gpufl__hout_printf(o,
                       "<svg id=\"job-tl\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                       "viewBox=\"0 0 %d %d\">\n",
                       LW + PLOT + RIGHT, height, LW + PLOT + RIGHT, height);
    axis(o, &s, height);
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        int y = AH + (int)i * LH;
        char name[48];
        rank_label(k, i, name, sizeof name);
        gpufl__hout_printf(o, "<g class=\"lane\" data-rank=\"%zu\">", i);
        if (i % 2)
            gpufl__hout_printf(o, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f5f7fa\"/>", y,
                               LW + PLOT + RIGHT, LH);
        label(o, k, i, y);
        session_line(o, k, y, &s);
        steps(o, k, y, &s);
        rasterise(&c, k, &s);
        nccl_bars(o, &c, y, &s);
        mark_late(&c, r, i, &s);
        late_marks(o, &c, &r->stragglers.per_rank[i], y, name);
        gpufl__hout_raw(o, "</g>\n");
    }
    gpufl__hout_raw(o, "</svg>\n");
    rc = 0;
out:
    free(c.busy);
    free(c.whole);
    free(c.n);
    free(c.ns);
    free(c.late);
    return rc;
}
