/*
 * oom.json: an out-of-memory diagnosed (analyze/ana_oom.h) as the JSON
 * document docs/FORMAT.md defines, with the classification explained in
 * words. The session writes it into every dump of an "oom" trigger; `gpufl
 * mem diagnose` prints it, or computes it for a dump or session without one.
 *
 * Threads: any; one call per document. Sizes: a few KB.
 */
#ifndef GPUFL_PRESENT_REPORT_OOM_JSON_H
#define GPUFL_PRESENT_REPORT_OOM_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/ana_oom.h"
#include "gpufl/trace.h"
#include "read/stack_table.h"

#define GPUFL_OOM_JSON "oom.json" /* its name in a dump */

/* Renders o (found) of trace t; stacks (NULL: none) names the live
 * allocations' frames. *text (malloc'd, NUL-terminated, *len bytes) is the
 * document. Returns 0, or GPUFL_ENOMEM / GPUFL_EINVAL with nothing to free. */
int gpufl__oom_json(const gpufl_trace *t, const gpufl__ana_oom *o, const gpufl__stack_table *stacks, char **text,
                    size_t *len) __attribute__((warn_unused_result));

/* The way from a session or dump (path: its directory, session.json, a log
 * or a .gflt file, as gpufl_trace_open takes): reads it and its stacks,
 * diagnoses and renders. *found false and *text NULL when it holds no
 * out-of-memory. Returns 0, or a negative gpufl_err with err naming the
 * file and the problem. */
int gpufl__oom_json_of(const char *path, char **text, size_t *len, bool *found, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_REPORT_OOM_JSON_H */
