/*
 * The dependency graph and the what-if as outputs (issue 18): `gpufl graph`
 * writes the graph as Graphviz dot or JSON (graph_out.c), `gpufl whatif`
 * the prediction as text or JSON and the critical path (whatif_out.c).
 * Inferred edges are marked (JSON `inferred`, dot dashed). Times are session
 * nanoseconds, as in the JSON report.
 *
 * Threads: the caller's. Each returns 0, or GPUFL_EIO when out could not be
 * written, GPUFL_ENOMEM.
 */
#ifndef GPUFL_PRESENT_REPORT_WHATIF_OUT_H
#define GPUFL_PRESENT_REPORT_WHATIF_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/ana_whatif_run.h"

/* The nodes whose [start, end] meets [from, to] and the edges between them. */
int gpufl__graph_write_json(const gpufl__graph *g, uint64_t from, uint64_t to, FILE *out)
    __attribute__((warn_unused_result));
int gpufl__graph_write_dot(const gpufl__graph *g, uint64_t from, uint64_t to, FILE *out)
    __attribute__((warn_unused_result));

/* c: the change the figures were made with (for the heading). */
int gpufl__whatif_write_text(const gpufl__whatif *w, const gpufl__whatif_change *c, FILE *out)
    __attribute__((warn_unused_result));
int gpufl__whatif_write_json(const gpufl__whatif *w, const gpufl__whatif_change *c, FILE *out)
    __attribute__((warn_unused_result));

/* The critical path's rows (at most `top`) as text lines, indented two
 * spaces: what the report's section and gpufl whatif print
 * (report_text_critpath.c, in libgpufl with the text report). */
void gpufl__critpath_write_text(const gpufl_trace *t, const gpufl__critpath *cp, size_t top, FILE *out);
/* An item's name: a kernel's, a copy's kind, "" for the others. */
const char *gpufl__cp_item_name(const gpufl_trace *t, const gpufl__cp_item *it);

#endif /* GPUFL_PRESENT_REPORT_WHATIF_OUT_H */
