/*
 * Which loader reads a session into a trace: the files of the session are
 * found as the event sources find them (event_source.h), then a .gflt file
 * goes to the parallel chunk loader (gflt_load.c) and NDJSON logs to the
 * parallel line range loader (ndjson_load.c). trace_build.c, which reads
 * any event source on one thread, is the reference they are tested against.
 */
#include <stdio.h>

#include "gpufl/gpufl.h"
#include "read/event_source.h"
#include "read/loaders.h"
#include "read/trace_internal.h"
#include "read/work_pool.h"

/* path: what was opened, for its session.json; NULL for bytes in memory */
static int load_files(gpufl__session_files *f, const char *path, unsigned nthreads, gpufl_trace **out, char *err,
                      size_t err_len)
{
    if (nthreads == 0)
        nthreads = gpufl__read_threads();
    int rc;
    if (f->gflt) {
        f->has_input = false; /* the loader takes it over */
        rc = gpufl__gflt_load(&f->in, nthreads, out, err, err_len);
    } else {
        rc = gpufl__ndjson_load((const char *const *)f->paths, f->npaths, &f->in, f->what, nthreads, out, err, err_len);
    }
    if (rc == 0) {
        gpufl_trace *t = *out;
        snprintf(t->read_files, sizeof t->read_files, "%s", f->read_files);
        snprintf(t->read_why, sizeof t->read_why, "%s", f->read_why);
        t->read_pub = (gpufl_trace_read){sizeof t->read_pub, f->gflt ? GPUFL_TRACE_GFLT : GPUFL_TRACE_NDJSON,
                                         t->read_files, t->read_why, f->copies ? f->copies : 1};
        rc = gpufl__trace_read_job(t, path);
        if (rc != 0) {
            snprintf(err, err_len, "out of memory reading the job facts");
            gpufl__trace_free(t);
            *out = NULL;
        }
    }
    gpufl__session_files_free(f);
    return rc;
}

int gpufl__trace_open(const char *path, unsigned nthreads, gpufl_trace **out, char *err, size_t err_len)
{
    *out = NULL;
    gpufl__session_files f;
    int rc = gpufl__session_files_open(path, &f, err, err_len);
    return rc ? rc : load_files(&f, path, nthreads, out, err, err_len);
}

int gpufl__trace_open_memory(const void *data, size_t n, const char *name, unsigned nthreads, gpufl_trace **out,
                             char *err, size_t err_len)
{
    *out = NULL;
    gpufl__session_files f;
    int rc = gpufl__session_files_memory(data, n, name, &f, err, err_len);
    return rc ? rc : load_files(&f, NULL, nthreads, out, err, err_len);
}
