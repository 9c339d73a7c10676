/*
 * A source line's code as the reports print it (report_text_stalls.c,
 * report_text_sass.c, the JSON and HTML reports): read through the
 * session's sources/ (read/source_text.h), trimmed, tabs made spaces and
 * control bytes '?' (a file's bytes must not drive the terminal), cut to
 * a width.
 */
#ifndef GPUFL_PRESENT_REPORT_SOURCE_CODE_H
#define GPUFL_PRESENT_REPORT_SOURCE_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"
#include "present/report/jwriter.h"
#include "read/source_text.h"

/* A cache over the session t was read from (NULL when out of memory:
 * gpufl__report_code then finds nothing). */
gpufl__source_cache *gpufl__report_code_cache(const gpufl_trace *t);

/* The code of file:line cut to width bytes (buf holds width + 1), and
 * where it came from; GPUFL__SOURCE_NONE with buf "" when unknown or
 * blank. */
gpufl__source_from gpufl__report_code(gpufl__source_cache *c, const char *file, uint32_t line, size_t width, char *buf);

/* "copy", "file" (unchanged since the session), "file_now" (the session
 * kept no copy), or NULL for none: the JSON report's code_from. */
const char *gpufl__report_code_from(gpufl__source_from from);

/* The JSON report's "code" (the line's code, trimmed, at most 200 bytes,
 * or null) and "code_from" (gpufl__report_code_from, or null); line 0
 * gives both null. */
void gpufl__report_code_json(jw *w, gpufl__source_cache *c, const char *file, uint32_t line);

#endif /* GPUFL_PRESENT_REPORT_SOURCE_CODE_H */
