/*
 * A session's place in its job (gpufl_trace_get_job) as one line of words,
 * the same in the text and HTML reports' headers: "rank 1 of 2 (local rank
 * 1 of 2), torchrun job r42". Any thread.
 */
#ifndef GPUFL_PRESENT_REPORT_JOB_TEXT_H
#define GPUFL_PRESENT_REPORT_JOB_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "gpufl/trace.h"

/* Writes the line into buf (NUL-terminated, cut to len); false, with buf
 * "", when the session has no job facts. */
bool gpufl__job_text(const gpufl_trace *t, char *buf, size_t len);

#endif /* GPUFL_PRESENT_REPORT_JOB_TEXT_H */
