/*
 * The HTML report (`gpufl report --format html`): one self-contained page,
 * no network access (no CDN, fonts or scripts from elsewhere: its CSS and
 * JavaScript are hand-written files, embedded at build time and inlined),
 * holding
 *
 *   - the summary, the hotspot table, the scope trees (gpufl scopes and
 *     NVTX), the idle breakdown, the copies, launches and memory tables, as
 *     plain HTML, so they read with JavaScript off (report_html_tables.c);
 *   - a timeline of devices and streams (kernels, copies, memsets) and, per
 *     thread, its gpufl scopes, NVTX ranges and syncs, and charts of
 *     utilization, memory, power and temperature from the NVML samples and
 *     of each PM sampling metric (report_html_pm.c), on one time axis, drawn as SVG by the page's script from compact JSON in
 *     a <script type="application/json"> (report_html_data.c), with zoom
 *     (wheel, buttons), drag to pan and tooltips (report.js, report.css).
 *
 * Big sessions stay responsive: the data is capped (work shorter than a
 * resolution chosen to keep about GPUFL__HTML_SLICE_BUDGET slices is merged
 * into marks that say how many slices they hold; overlapping slices past
 * GPUFL__HTML_MAX_ROWS rows of a lane are drawn on its last row, and the
 * page says so), and the page merges what is narrower than a pixel at the
 * current zoom, so it draws at most a few marks per pixel column per row.
 *
 * Every string from the trace is escaped (html_out.h). The page's script
 * writes what it drew, and any error it caught, into a hidden
 * <pre id="gfl-selfcheck"> (tests read it through headless Chromium).
 *
 * Single-threaded; the trace and the report are only read.
 */
#ifndef GPUFL_PRESENT_REPORT_REPORT_HTML_H
#define GPUFL_PRESENT_REPORT_REPORT_HTML_H

#include <stddef.h>

#include "analyze/analysis.h"
#include "gpufl/trace.h"

#define GPUFL__HTML_SLICE_BUDGET 250000u /* slices embedded, about 15 bytes each */
#define GPUFL__HTML_MAX_ROWS 12u         /* rows of one lane (nesting depth, overlaps) */
#define GPUFL__HTML_MAX_POINTS 4000u     /* chart points per device and metric */
#define GPUFL__HTML_MAX_NODES 400u       /* scope tree rows per tree */

/* Writes the report of t (analyses r of the same trace) to path, through a
 * temporary renamed when complete. Returns 0, or a negative gpufl_err with
 * a message naming the file in err and nothing left under path. */
int gpufl__report_html(const gpufl_trace *t, const gpufl__ana_report *r, const char *path, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_REPORT_REPORT_HTML_H */
