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
#include "read/stack_table.h"

/* An array `key` of allocations (docs/REPORT.md, "memory"). */
void gpufl__rj_allocations(jw *w, const gpufl_trace *t, const char *key, uint32_t n, const gpufl__ana_allocation *list);

/* The member "memory" (docs/REPORT.md): the allocations replayed per
 * device and space. */
void gpufl__rj_memory(jw *w, const gpufl_trace *t, const gpufl__ana_memory *m);

/* The flight recorder's members (report_json_flight.c): "triggers",
 * "trace_windows" (arrays, empty when the session has none) and
 * "incident" (null when the session neither crashed nor ran out of
 * memory): the same figures as the text report's sections. */
void gpufl__rj_flight(jw *w, const gpufl_trace *t, const gpufl__ana_report *r);

/* The layers of memory, their peaks and the leak verdicts
 * (report_json_memory.c): "memory_layers" (an array per device),
 * "memory_peaks" and "leaks" (objects). stacks: the session's stacks, to
 * give each group of allocations that grew its frames; NULL writes them
 * as null (the report: `gpufl stacks` names them). */
void gpufl__rj_memory_layers(jw *w, const gpufl_trace *t, const gpufl__ana_mem_layers *l);
void gpufl__rj_memory_peaks(jw *w, const gpufl_trace *t, const gpufl__ana_mem_peaks *p);
void gpufl__rj_leaks(jw *w, const gpufl_trace *t, const gpufl__ana_leaks *l, const gpufl__stack_table *stacks);

/* The member "stalls" of "counters" (report_json_stalls.c): the
 * section's status, engine and rows, and the PC sampling figures. */
void gpufl__rj_stalls(jw *w, const gpufl_trace *t, const gpufl__ana_section *sec, const gpufl__ana_stalls *s);

/* The member "hw" of "counters" (report_json_hw.c): the section's status
 * and, with range profiler rows, the metrics per scope name. */
void gpufl__rj_hw(jw *w, const gpufl_trace *t, const gpufl__ana_section *sec, const gpufl__ana_hw *hw);

/* The member "pm_sampling" (report_json_pm.c): per device and metric of
 * the session's PM samples, their count, time, time-weighted mean and
 * maximum; an empty array without PM samples. Out of memory fails w. */
void gpufl__rj_pm(jw *w, const gpufl_trace *t);
/* The member "sass" of "counters" (report_json_sass.c): the section's
 * status, engine and rows, every kernel and line row, the findings. */
void gpufl__rj_sass(jw *w, const gpufl_trace *t, const gpufl__ana_section *sec, const gpufl__ana_sass *s);

/* The member "nccl" (report_json_nccl.c): NCCL time per device and per collective, algorithm and protocol;
 * left out of the report for a session without NCCL kernels (r->nccl NULL). */
void gpufl__rj_nccl(jw *w, const gpufl__ana_report *r);
/* report_json_critpath.c: `critical_path`, only for a session with a repeated step */
void gpufl__rj_critpath(jw *w, const gpufl_trace *t, const gpufl__ana_report *r);

#endif /* GPUFL_PRESENT_REPORT_REPORT_JSON_PARTS_H */
