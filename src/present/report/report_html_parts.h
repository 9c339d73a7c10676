/*
 * The pieces of the HTML report (report_html.h) that report_html.c puts
 * together: the page's CSS and script (report_html_page.c), the plain HTML
 * tables (report_html_tables.c) and the timeline and chart data as JSON
 * (report_html_data.c). Single-threaded.
 */
#ifndef GPUFL_PRESENT_REPORT_REPORT_HTML_PARTS_H
#define GPUFL_PRESENT_REPORT_REPORT_HTML_PARTS_H

#include <stdint.h>

#include "analyze/analysis.h"
#include "gpufl/trace.h"
#include "present/report/html_out.h"

extern const char gpufl__html_css[];
extern const char gpufl__html_script[];

/* The timeline and chart data as one JSON object (the page's script reads
 * it from <script type="application/json" id="gfl-data">). Returns 0 or
 * GPUFL_ENOMEM (what was written so far is left in o; the caller aborts). */
int gpufl__html_data(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r)
    __attribute__((warn_unused_result));

/* The tables, each a <section>: summary, hotspots, scopes, idle, copies,
 * launches, memory. */
void gpufl__html_tables(gpufl__hout *o, const gpufl_trace *t, const gpufl__ana_report *r);

#endif /* GPUFL_PRESENT_REPORT_REPORT_HTML_PARTS_H */
