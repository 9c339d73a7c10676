/*
 * The session report as text: what `gpufl report` prints and
 * gpufl_generate_report() writes. It renders the results of the analyses
 * (src/analyze/analysis.h) of one trace, in this order: the session
 * (app, host, devices, duration), an executive summary, the scope trees,
 * PyTorch's ops (when the session has op ranges), the hotspots with their
 * launch configurations, scopes, ops and launching stacks, occupancy,
 * copies, idle time, launch statistics, memory, and the sections whose
 * data later profiling engines record.
 *
 * The text depends only on the trace and the results: the same session
 * gives the same bytes on every machine (no path of the reader's machine,
 * no local time), so tests compare it with golden files.
 *
 * Threads: any; nothing shared. Sizes: the results are small (tens of
 * kernels, hundreds of scope nodes), rendering costs microseconds.
 */
#ifndef GPUFL_PRESENT_REPORT_REPORT_TEXT_H
#define GPUFL_PRESENT_REPORT_REPORT_TEXT_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/analysis.h"
#include "gpufl/trace.h"
#include "read/stack_table.h"

/* Names one recorded stack frame (module path, offset in its ELF file;
 * module NULL for code in no file) into buf, NUL-terminated. */
typedef void (*gpufl__report_frame_fn)(void *ctx, const char *module, uint64_t offset, char *buf, size_t len);

typedef struct gpufl__report_text_opts {
    /* The session's CPU stacks (read/stack_table.h), or NULL: stacks are
     * listed by id, with the hint to resolve them with `gpufl stacks`. */
    const gpufl__stack_table *stacks;
    /* Names frames (e.g. through read/symbolize.h); NULL: module+offset. */
    gpufl__report_frame_fn name_frame;
    void *frame_ctx;
    /* One line printed under the hotspots when they show frames, e.g. why
     * they are module+offset; NULL: none. */
    const char *frames_note;
    uint32_t max_frames; /* frames shown per stack; 0: 6 */
} gpufl__report_text_opts;

/* Writes the report of t, whose analyses are r, to out; o may be NULL (no
 * stacks). Returns 0, or GPUFL_EIO when writing to out failed. */
int gpufl__report_text(const gpufl_trace *t, const gpufl__ana_report *r, const gpufl__report_text_opts *o, FILE *out)
    __attribute__((warn_unused_result));

/* The report's memory section alone (layers and gaps, peaks, leaks, the
 * allocations replayed), for `gpufl mem analyze`: r needs only summary,
 * memory, mem_layers, mem_peaks and leaks filled. Returns 0 or GPUFL_EIO. */
int gpufl__report_text_memory(const gpufl_trace *t, const gpufl__ana_report *r, const gpufl__report_text_opts *o,
                              FILE *out) __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_REPORT_REPORT_TEXT_H */
