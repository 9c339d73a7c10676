/*
 * The crash of a session (gpufl_trace_get_crash), for people and programs:
 * one renderer shared by `gpufl info`, `gpufl summary` and the report, so
 * that they say the same thing. Frames are printed as module + offset
 * (what the recording machine's files resolve with addr2line or
 * `gpufl stacks`); the reader side does not symbolize here.
 */
#ifndef GPUFL_PRESENT_REPORT_CRASH_TEXT_H
#define GPUFL_PRESENT_REPORT_CRASH_TEXT_H

#include <jansson.h>
#include <stdio.h>

#include "gpufl/trace.h"
#include "present/report/jwriter.h"

/* "crashed  SIGSEGV (SEGV_MAPERR) at 0x0 on thread 1234, +1.234 s; then the
 * default action", then the stack and the open scopes by thread, each line
 * indented by `indent` spaces. Nothing when the session did not crash. */
void gpufl__crash_render_text(const gpufl_trace *t, FILE *out, const char *label, int indent);

/* The crash as the object `key` of w (null when the session did not
 * crash): docs/REPORT.md lists its fields. */
void gpufl__crash_render_json(const gpufl_trace *t, jw *w, const char *key);

/* The same object as a jansson value (json null when the session did not
 * crash, NULL when out of memory), for the commands that build their JSON
 * with jansson. */
json_t *gpufl__crash_json(const gpufl_trace *t);

#endif /* GPUFL_PRESENT_REPORT_CRASH_TEXT_H */
