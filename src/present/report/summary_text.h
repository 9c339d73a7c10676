/*
 * The text form of a session summary: what gpufl_generate_report() writes
 * and `gpufl summary` prints.
 */
#ifndef GPUFL_PRESENT_REPORT_SUMMARY_TEXT_H
#define GPUFL_PRESENT_REPORT_SUMMARY_TEXT_H

#include <stdio.h>

#include "collect/summary.h"

void gpufl__summary_render_text(const gpufl__summary *s, FILE *out);
/* Its first lines only: the session, its duration and directory, what it
 * counted, dropped and wrote (`gpufl run` shows this for each of several
 * processes). */
void gpufl__summary_render_overview(const gpufl__summary *s, FILE *out);

/* "1.234 s", "12.3 ms", "45.6 us", "789 ns" */
void gpufl__format_duration(uint64_t ns, char *buf, size_t len);
/* "812 B", "1.5 KiB", "12.0 MiB", "3.21 GiB" */
void gpufl__format_bytes(uint64_t bytes, char *buf, size_t len);
/* A PM metric's value in its unit (GPUFL__PM_UNIT_*, analysis.h): "45.2 %",
 * "1.23 GB/s" and "4.5 k/s" (powers of 1000), else "%.4g". */
void gpufl__format_pm_value(double v, int unit, char *buf, size_t len);

#endif /* GPUFL_PRESENT_REPORT_SUMMARY_TEXT_H */
