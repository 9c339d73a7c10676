/*
 * What the fuzz targets check beyond "no crash": the parallel loader
 * (gpufl__trace_open_memory on several threads: gflt_load.c, ndjson_load.c) must
 * come to the same end as the reference (one event source into one
 * segment, trace_build.c): both load, with the same rows and events, or
 * both fail with the same error. String ids are not compared: a fuzzed
 * .gflt may define one text twice, which the reference interns once.
 */
#ifndef GPUFL_FUZZ_COMPARE_H
#define GPUFL_FUZZ_COMPARE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/gflt_format.h"
#include "gpufl/trace.h"
#include "read/trace_internal.h"

/* Whether gpufl__trace_open_memory() takes the bytes for a .gflt file
 * (read/event_source.c: they start like one). */
static int fuzz_looks_gflt(const void *data, size_t size, int named_gflt)
{
    if (size == 0)
        return named_gflt;
    return memcmp(data, GFLT_MAGIC, size < GFLT_MAGIC_LEN ? size : GFLT_MAGIC_LEN) == 0;
}

static void fuzz_differs(const char *what, const char *a, const char *b)
{
    fprintf(stderr, "fuzz: the parallel loader and the reference differ: %s (%s | %s)\n", what, a, b);
    abort();
}

/* ref_rc and ref (NULL unless ref_rc is 0) from the reference; loads the
 * same bytes in parallel and compares. Frees ref. */
static void fuzz_compare(int ref_rc, gpufl_trace *ref, const char *ref_err, const void *data, size_t size,
                         const char *name)
{
    gpufl_trace *t;
    char err[1024] = "";
    int rc = gpufl__trace_open_memory(data, size, name, 2, &t, err, sizeof err);
    if (rc != ref_rc)
        fuzz_differs("result", ref_err, err);
    if (rc != 0) {
        if (strcmp(err, ref_err) != 0)
            fuzz_differs("message", ref_err, err);
        return;
    }
    for (unsigned ty = 0; ty < 256; ty++)
        if (gpufl_trace_event_count(t, ty) != gpufl_trace_event_count(ref, ty))
            fuzz_differs("event counts", "", "");
    const gpufl_trace_kernels *ka = gpufl_trace_get_kernels(ref), *kb = gpufl_trace_get_kernels(t);
    if (ka->n != kb->n || (ka->n && memcmp(ka->start_ns, kb->start_ns, ka->n * 8) != 0) || ka->nexact != kb->nexact ||
        gpufl_trace_get_scopes(ref)->n != gpufl_trace_get_scopes(t)->n ||
        gpufl_trace_get_nvtx(ref)->n != gpufl_trace_get_nvtx(t)->n ||
        gpufl_trace_get_launch_configs(ref)->n < gpufl_trace_get_launch_configs(t)->n)
        fuzz_differs("rows", "", "");
    const gpufl_trace_info *ia = gpufl_trace_get_info(ref), *ib = gpufl_trace_get_info(t);
    if (ia->skipped_bytes != ib->skipped_bytes || ia->skipped_lines != ib->skipped_lines || ia->end_ns != ib->end_ns ||
        memcmp(ia->dropped, ib->dropped, sizeof ia->dropped) != 0)
        fuzz_differs("session facts", "", "");
    (void)gpufl_trace_memory_bytes(t);
    gpufl_trace_close(t);
}

#endif /* GPUFL_FUZZ_COMPARE_H */
