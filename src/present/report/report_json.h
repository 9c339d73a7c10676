/*
 * The session report as JSON: the same results as the text report
 * (src/analyze/analysis.h), as one document whose schema docs/REPORT.md
 * describes field by field. Its "schema_version" changes only when a field
 * is renamed, retyped or removed; fields are added within a version.
 *
 * Like the text, the document depends only on the trace and the results
 * (no path or clock of the reading machine). Threads: any.
 */
#ifndef GPUFL_PRESENT_REPORT_REPORT_JSON_H
#define GPUFL_PRESENT_REPORT_REPORT_JSON_H

#include <stdio.h>

#include "analyze/analysis.h"
#include "gpufl/trace.h"

#define GPUFL_REPORT_JSON_SCHEMA "gpufl-report"
#define GPUFL_REPORT_JSON_VERSION 1

/* Writes the report of t, whose analyses are r, to out. Returns 0,
 * GPUFL_ENOMEM (nothing written), or GPUFL_EIO when writing failed. */
int gpufl__report_json(const gpufl_trace *t, const gpufl__ana_report *r, FILE *out) __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_REPORT_REPORT_JSON_H */
