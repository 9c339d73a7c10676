/*
 * The pieces of the HTML report (report_html.h) that report_html.c puts
 * together: the page's CSS and script (report.css, report.js), the plain HTML
 * tables (report_html_tables.c, report_html_flight.c, report_html_memory.c, their
 * cells in report_html_cells.c) and the timeline and chart data as JSON
 * (report_html_data.c). Single-threaded.
 */
#ifndef GPUFL_PRESENT_REPORT_REPORT_HTML_PARTS_H
#define GPUFL_PRESENT_REPORT_REPORT_HTML_PARTS_H

#include <stdint.h>

#include "analyze/ana_job.h"
#include "analyze/analysis.h"
#include "gpufl/trace.h"
#include "present/report/html_out.h"
#include "read/rows.h"

/*
 * The page's stylesheet and script, inline in the page: it must open with no
 * network access. They are hand-written files beside this one, report.css
 * and report.js, that the build embeds byte for byte as these NUL-terminated
 * arrays (gpufl_embed_text(), cmake/gpufl_embed.cmake); the files hold no
 * comment of their own about this because every byte of them is the page's.
 *
 * The script reads the JSON in <script id="gfl-data"> (report_html_data.c),
 * lays out one SVG row per lane row with the group (device, thread) headers
 * and labels, and draws the marks in view: slices narrower than a pixel, and
 * marks that hold merged slices, are merged with their neighbours within
 * half a pixel into one rect whose opacity says how busy it was, so a draw
 * makes at most about one node per pixel column per row. Zoom: wheel (at
 * the cursor) and buttons; drag pans; double-click resets. Tooltips give
 * names, starts and durations (set with textContent: names are never
 * parsed as markup; the SVG it builds as text goes through esc()). The
 * charts of the NVML samples, then of the PM metrics (one per device and
 * metric, values in the unit the metric's name gives), share the time
 * axis, decimated to a min and max per pixel column. Tables with class "sortable" sort by a click on a
 * header (numbers by their data-v).
 *
 * Self-check for the tests: what it decoded and drew (lanes, rows, marks,
 * slices per kind, chart points; PM series and points decoded, PM charts
 * and their polyline points drawn) and any error caught (window.onerror, or
 * an exception while drawing) go into <pre id="gfl-selfcheck"> as JSON.
 */
extern const char gpufl__html_css[];
extern const char gpufl__html_script[];

/* Table cells (report_html_cells.c): text, a count, a size ("1.50 GiB"),
 * and a session time as the time since the session's start, as the text
 * report gives it; the numbers sortable by their data-v. */
void gpufl__html_td_text(gpufl__hout *o, const char *s);
void gpufl__html_td_u64(gpufl__hout *o, uint64_t v);
void gpufl__html_td_bytes(gpufl__hout *o, uint64_t v);
void gpufl__html_td_since(gpufl__hout *o, const gpufl_trace *t, uint64_t ns);
/* A duration (negative ones with a "-"), and a percentage. */
void gpufl__html_td_ns(gpufl__hout *o, int64_t ns);
void gpufl__html_td_pct(gpufl__hout *o, double pct);
/* A sortable table's start with its header row (id NULL: none), and its end. */
void gpufl__html_table_head(gpufl__hout *o, const char *id, const char *const *cols);
void gpufl__html_table_end(gpufl__hout *o);

/* The timeline and chart data as one JSON object (the page's script reads
 * it from <script type="application/json" id="gfl-data">). Returns 0 or
 * GPUFL_ENOMEM (what was written so far is left in o; the caller aborts). */
int gpufl__html_data(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
    __attribute__((warn_unused_result));

/* The tables, each a <section>: summary, hotspots, scopes, PyTorch ops
 * (with op ranges), idle, copies, launches, memory. */
void gpufl__html_tables(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);

/* The memory sections (report_html_memory.c): the layers and their gaps
 * (id=mem-layers, with a framework, NVML or driver layer), the leak
 * verdicts (id=leaks) and the allocations replayed (id=memory, with
 * allocations recorded). */
void gpufl__html_memory(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);

/* Warp stalls from PC samples (report_html_stalls.c, <section id=stalls>),
 * only when the session has them: by reason, kernel, source line, scope. */
void gpufl__html_stalls(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);

/* Hardware counters per scope from the range profiler (report_html_hw.c,
 * <section id=hw>), only when the session has range metrics. */
void gpufl__html_hw(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);
/* SASS metrics per kernel and line with the findings (report_html_sass.c,
 * <section id=sass>); nothing without sass_metric rows. */
void gpufl__html_sass(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);

/* NCCL time per GPU and per collective (report_html_nccl.c, <section id=nccl>); nothing without NCCL
 * kernels. */
void gpufl__html_nccl(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);
/* report_html_critpath.c: only with a repeated step */
void gpufl__html_critpath(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);

/* The flight recorder's sections (report_html_flight.c), each only when
 * the session has it: what came before a crash or an out-of-memory
 * (<section id=incident>, first on the page), then the triggers
 * (id=triggers) and the trace windows (id=windows). */
void gpufl__html_incident(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);
void gpufl__html_flight(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);

/* PM sampling (report_html_pm.c), only when the session has PM samples:
 * the metrics' table (<section id=pm>: GPU, metric, samples, time, mean,
 * max, each value in the unit its name gives), and the charts' data, the
 * member ",\n\"pm\":[...]" that gpufl__html_data() appends: per device and
 * metric its unit, samples, mean and max, and at most GPUFL__HTML_MAX_POINTS
 * points (t from t0, v each run's mean weighted by sample length). The
 * data returns 0 or GPUFL_ENOMEM (o may hold part of it); the table, on
 * failure, leaves itself out. */
void gpufl__html_pm(gpufl__hout *o, const gpufl_trace *t);
int gpufl__html_pm_data(gpufl__hout *o, const gpufl_trace *t, const gpufl__rows *r, uint64_t t0)
    __attribute__((warn_unused_result));

/* A job's timeline (report_job_html_timeline.c, inside the job page's
 * <section id=timeline>): one static SVG, no script, a lane per rank on
 * the job's time line with its NCCL kernels, its steps and marks where it
 * arrived late at a collective. Drawn GPUFL__JOB_TL_PLOT_PX wide and
 * decimated to it: work closer than a pixel is merged into one mark whose
 * opacity says how busy it was, so a lane has at most a few hundred
 * marks whatever the job's size. Returns 0 or GPUFL_ENOMEM (o may hold
 * part of it; the caller aborts). */
#define GPUFL__JOB_TL_PLOT_PX 1000u
int gpufl__html_job_timeline(gpufl__hout *o, const gpufl__job_report *r) __attribute__((warn_unused_result));
/* The timeline's 0: the earliest time it draws on the job's time line
 * (a session's start, or a kernel or step before it). The page gives its
 * times from there. */
int64_t gpufl__html_job_origin(const gpufl__job_report *r);

/* "GPU 0 · NVIDIA H100" as a JSON string (report_html_data.c). */
void gpufl__html_device_label(gpufl__hout *o, const gpufl__rows *r, uint32_t dev);

#endif /* GPUFL_PRESENT_REPORT_REPORT_HTML_PARTS_H */
