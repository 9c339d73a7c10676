/*
 * A session's place in its job as words (see job_text.h).
 */
#include "present/report/job_text.h"

#include <stdio.h>

bool gpufl__job_text(const gpufl_trace *t, char *buf, size_t len)
{
    const gpufl_trace_job *j = gpufl_trace_get_job(t);
    buf[0] = '\0';
    if (!j->present || !len)
        return false;
    size_t n = 0;
#define ADD(...)                                                                                                       \
    do {                                                                                                               \
        if (n < len)                                                                                                   \
            n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);                                                      \
    } while (0)
    if (j->has & GPUFL_TRACE_JOB_RANK)
        ADD("rank %u", j->rank);
    else
        ADD("rank unknown");
    if (j->has & GPUFL_TRACE_JOB_WORLD_SIZE)
        ADD(" of %u", j->world_size);
    if (j->has & GPUFL_TRACE_JOB_LOCAL_RANK) {
        ADD(" (local rank %u", j->local_rank);
        if (j->has & GPUFL_TRACE_JOB_LOCAL_WORLD_SIZE)
            ADD(" of %u", j->local_world_size);
        ADD(")");
    }
    ADD(", %s", gpufl_trace_string(t, j->launcher));
    if (j->id)
        ADD(" job %s", gpufl_trace_string(t, j->id));
    if (j->step)
        ADD(" step %s", gpufl_trace_string(t, j->step));
#undef ADD
    return true;
}
