/*
 * The JSON report's pieces that live in files of their own
 * (report_json.c writes the document and calls them in order).
 */
#ifndef GPUFL_PRESENT_REPORT_REPORT_JSON_PARTS_H
#define GPUFL_PRESENT_REPORT_REPORT_JSON_PARTS_H

#include <stdint.h>

#include "analyze/analysis.h"
#include "gpufl/trace.h"
#include "present/report/jwriter.h"

/* An array `key` of allocations (docs/REPORT.md, "memory"). */
void gpufl__rj_allocations(jw *w, const gpufl_trace *t, const char *key, uint32_t n, const gpufl__ana_allocation *list);

/* The flight recorder's members (report_json_flight.c): "triggers",
 * "trace_windows" (arrays, empty when the session has none) and
 * "incident" (null when the session neither crashed nor ran out of
 * memory): the same figures as the text report's sections. */
void gpufl__rj_flight(jw *w, const gpufl_trace *t, const gpufl__ana_report *r);

#endif /* GPUFL_PRESENT_REPORT_REPORT_JSON_PARTS_H */
