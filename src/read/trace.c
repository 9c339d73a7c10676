/*
 * The public reader API (include/gpufl/trace.h) over the event sources and
 * the trace builder. Everything after gpufl_trace_open() only reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "read/event_source.h"
#include "read/trace_internal.h"

void gpufl__trace_free(gpufl_trace *t)
{
    if (!t)
        return;
    gpufl__table *tables[] = {&t->scopes.t, &t->nvtx.t, &t->kernels.t, &t->copies.t,
                              &t->memsets.t, &t->syncs.t, &t->memory.t, &t->device_samples.t,
                              &t->host_samples.t};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        gpufl__table_free(tables[i]);
    if (t->zero)
        munmap(t->zero, t->zero_bytes);
    gpufl__strtab_free(&t->strings);
    free(t->devices);
    free(t);
}

static void set_err(char *err, size_t err_len, const char *msg)
{
    if (err && err_len)
        snprintf(err, err_len, "%s", msg);
}

GPUFL_API int gpufl_trace_open(const char *path, gpufl_trace **out, char *err, size_t err_len)
{
    char msg[1024] = "";
    if (!out) {
        set_err(err, err_len, "gpufl_trace_open: out is NULL");
        return GPUFL_EINVAL;
    }
    *out = NULL;
    gpufl__event_source *src;
    int rc = gpufl__source_open(path, &src, msg, sizeof msg);
    if (rc == 0) {
        rc = gpufl__trace_build(src, out, msg, sizeof msg);
        gpufl__source_close(src);
    }
    if (rc != 0)
        set_err(err, err_len, msg);
    return rc;
}

GPUFL_API void gpufl_trace_close(gpufl_trace *t) { gpufl__trace_free(t); }

GPUFL_API const gpufl_trace_info *gpufl_trace_get_info(const gpufl_trace *t) { return &t->info; }

GPUFL_API const char *gpufl_trace_string(const gpufl_trace *t, uint32_t id)
{
    return gpufl__strtab_str(&t->strings, id, NULL);
}

GPUFL_API const gpufl_trace_scopes *gpufl_trace_get_scopes(const gpufl_trace *t)
{
    return &t->scopes.pub;
}

GPUFL_API const gpufl_trace_scopes *gpufl_trace_get_nvtx(const gpufl_trace *t) { return &t->nvtx.pub; }

GPUFL_API const gpufl_trace_kernels *gpufl_trace_get_kernels(const gpufl_trace *t)
{
    return &t->kernels.pub;
}

GPUFL_API const gpufl_trace_transfers *gpufl_trace_get_copies(const gpufl_trace *t)
{
    return &t->copies.pub;
}

GPUFL_API const gpufl_trace_transfers *gpufl_trace_get_memsets(const gpufl_trace *t)
{
    return &t->memsets.pub;
}

GPUFL_API const gpufl_trace_syncs *gpufl_trace_get_syncs(const gpufl_trace *t) { return &t->syncs.pub; }

GPUFL_API const gpufl_trace_memory *gpufl_trace_get_memory(const gpufl_trace *t)
{
    return &t->memory.pub;
}

GPUFL_API const gpufl_trace_device_samples *gpufl_trace_get_device_samples(const gpufl_trace *t)
{
    return &t->device_samples.pub;
}

GPUFL_API const gpufl_trace_host_samples *gpufl_trace_get_host_samples(const gpufl_trace *t)
{
    return &t->host_samples.pub;
}

GPUFL_API size_t gpufl_trace_event_count(const gpufl_trace *t, unsigned event_type)
{
    return event_type < 256 ? (size_t)t->counts[event_type] : 0;
}

GPUFL_API size_t gpufl_trace_memory_bytes(const gpufl_trace *t)
{
    const gpufl__table *tables[] = {&t->scopes.t, &t->nvtx.t, &t->kernels.t, &t->copies.t,
                                    &t->memsets.t, &t->syncs.t, &t->memory.t,
                                    &t->device_samples.t, &t->host_samples.t};
    size_t bytes = sizeof *t + gpufl__strtab_memory(&t->strings) +
                   t->info.ndevices * sizeof *t->devices;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        bytes += gpufl__table_memory(tables[i]);
    return bytes;
}
