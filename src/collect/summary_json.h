/*
 * Session summaries as JSON: the "summary" object of session.json, and
 * loading a summary back from a session directory (for the CLI).
 */
#ifndef GPUFL_COLLECT_SUMMARY_JSON_H
#define GPUFL_COLLECT_SUMMARY_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "collect/summary.h"

/* The crash of a summary that has one, as session.json's top-level "crash"
 * object (docs/FORMAT.md); NULL when out of memory. */
json_t *gpufl__crash_to_json(const gpufl__summary *s);

/* A new reference, or NULL when out of memory. */
json_t *gpufl__summary_to_json(const gpufl__summary *s);

/* Reads <dir>/session.json (or the file itself when path names one).
 * Returns 0, or a negative gpufl_err with a message naming the file and the
 * problem in err and *out empty. */
int gpufl__summary_load(const char *path, gpufl__summary *out, char *err, size_t err_len)
    __attribute__((warn_unused_result));

#endif /* GPUFL_COLLECT_SUMMARY_JSON_H */
