/*
 * The job facts of a trace (gpufl_trace_get_job): session.json's `job`
 * object (collect/session_json.c, docs/FORMAT.md), read from the session
 * directory opened or the one holding the file opened. The events do not
 * carry them: they are the session's, fixed at its start, and session.json
 * is where the session's other facts of that kind (host, devices) are.
 *
 * On the loading thread, once per open, after the trace is built; a
 * missing or unreadable session.json, or one without a job, leaves the
 * facts absent (present 0), never an error.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/regular_file.h"
#include "gpufl/gpufl.h"
#include "read/session_json_path.h"
#include "read/trace_internal.h"

/* The string id of obj[key] when it is a string (0 otherwise); -1 out of memory. */
static int text(gpufl_trace *t, json_t *obj, const char *key, uint32_t *id)
{
    const char *s = json_string_value(json_object_get(obj, key));
    *id = 0;
    if (!s || !*s)
        return 0;
    return gpufl__strtab_intern(&t->strings, s, strlen(s), id) == 0 ? 0 : -1;
}

static void count(json_t *obj, const char *key, uint32_t bit, uint32_t *field, uint32_t *has)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= INT32_MAX) {
        *field = (uint32_t)json_integer_value(v);
        *has |= bit;
    }
}

int gpufl__trace_read_job(gpufl_trace *t, const char *path)
{
    gpufl_trace_job *j = &t->job_pub;
    memset(j, 0, sizeof *j);
    j->struct_size = sizeof *j;
    if (!path)
        return 0;
    char file[4200];
    gpufl__session_json_of(path, file, sizeof file);
    json_error_t jerr;
    json_t *root = gpufl__json_load_regular(file, 0, &jerr);
    json_t *job = root ? json_object_get(root, "job") : NULL;
    int rc = 0;
    if (json_is_object(job) && json_is_string(json_object_get(job, "launcher"))) {
        j->present = 1;
        count(job, "rank", GPUFL_TRACE_JOB_RANK, &j->rank, &j->has);
        count(job, "local_rank", GPUFL_TRACE_JOB_LOCAL_RANK, &j->local_rank, &j->has);
        count(job, "world_size", GPUFL_TRACE_JOB_WORLD_SIZE, &j->world_size, &j->has);
        count(job, "local_world_size", GPUFL_TRACE_JOB_LOCAL_WORLD_SIZE, &j->local_world_size, &j->has);
        if (text(t, job, "launcher", &j->launcher) || text(t, job, "id", &j->id) ||
            text(t, job, "id_from", &j->id_from) || text(t, job, "step", &j->step) ||
            text(t, job, "master", &j->master) || text(t, job, "host", &j->host) ||
            text(t, job, "cuda_visible_devices", &j->cuda_visible_devices))
            rc = GPUFL_ENOMEM;
    }
    json_decref(root);
    return rc;
}
