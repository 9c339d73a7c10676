/*
 * The job loop of the Perfetto and Chrome exports (export_job.h): each
 * rank's session opened, written by the format's per-session writer as a
 * process of its own (export_proc.h), and closed before the next is
 * opened, so that memory is bounded by the largest rank. Also the process
 * of a one-session export. Single-threaded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "present/export/export_proc.h"
#include "present/timeline/timeline_walk.h"

void gpufl__export_proc_single(gpufl__export_proc *p, const gpufl__rows *x)
{
    memset(p, 0, sizeof *p);
    p->pid = x->info->pid > 0 ? (uint32_t)x->info->pid : 1;
    p->clock = 1;
    p->sequence = 1;
}

/* GPUFL_EINVAL with a message when ranks cannot be a job: none, a rank
 * without a session or a label, two with one pid (Perfetto and Chrome
 * would show them as one process). */
static int check_ranks(const gpufl__export_rank *ranks, size_t n, const char *path, char *err, size_t err_len)
{
    if (n == 0) {
        snprintf(err, err_len, "cannot write %s: a job export needs at least one rank", path);
        return GPUFL_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!ranks[i].path || !ranks[i].label) {
            snprintf(err, err_len, "cannot write %s: rank %zu has no %s", path, i,
                     ranks[i].path ? "label" : "session path");
            return GPUFL_EINVAL;
        }
        /* quadratic, for the few hundred ranks a job has at most */
        for (size_t j = 0; j < i; j++)
            if (ranks[j].pid == ranks[i].pid) {
                snprintf(err, err_len, "cannot write %s: ranks %s and %s have the same pid %u", path, ranks[j].path,
                         ranks[i].path, ranks[i].pid);
                return GPUFL_EINVAL;
            }
    }
    return 0;
}

int gpufl__export_ranks(gpufl__xout *o, const gpufl__export_rank *ranks, size_t n, gpufl__export_session_fn fn,
                        void *ctx, gpufl__export_result *r, char *err, size_t err_len)
{
    int rc = check_ranks(ranks, n, o->path, err, err_len);
    if (rc != 0)
        return rc;
    uint64_t uuid_base = 0, flow_base = 0;
    for (size_t i = 0; i < n; i++) {
        gpufl_trace *t;
        char why[1024];
        rc = gpufl_trace_open(ranks[i].path, &t, why, sizeof why);
        if (rc != 0) {
            snprintf(err, err_len, "cannot read the session of rank %zu, %s: %s", i, ranks[i].path, why);
            return rc;
        }
        gpufl__rows x;
        gpufl__rows_open(&x, t);
        gpufl__export_proc p = {
            .pid = ranks[i].pid,
            .label = ranks[i].label,
            .sort_index = ranks[i].sort_index,
            .shift_ns = ranks[i].shift_ns,
            .job = 1,
            .clock = i == 0,
            .sequence = (uint32_t)i + 1,
            .uuid_base = uuid_base,
            .uuid_end = uuid_base,
            .flow_base = flow_base,
        };
        rc = fn(ctx, o, &x, &p, r);
        uint64_t flows = gpufl__tl_flow_ids(&x);
        gpufl_trace_close(t);
        if (rc != 0 || o->err) {
            if (rc == GPUFL_ENOMEM || o->err == ENOMEM) {
                snprintf(err, err_len, "cannot write %s: out of memory", o->path);
                return GPUFL_ENOMEM;
            }
            snprintf(err, err_len, "cannot write %s: %s", o->path, strerror(o->err ? o->err : EIO));
            return GPUFL_EIO;
        }
        uuid_base = p.uuid_end;
        flow_base += flows;
    }
    return 0;
}
