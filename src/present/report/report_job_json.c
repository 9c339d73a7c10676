/*
 * The job report as JSON (report_job.h; fields in docs/REPORT.md, "Job
 * reports"). Times in ns; job_time_ns is on the job's time line (the first
 * rank's session clock).
 */
#include <stdio.h>
#include <stdlib.h>

#include "analyze/ana_nccl.h"
#include "present/report/jwriter.h"
#include "present/report/report_job.h"

static void rank_id(jw *w, const char *key, const gpufl__job_rank *r)
{
    if (r->rank >= 0)
        gpufl__jw_i64(w, key, r->rank);
    else
        gpufl__jw_null(w, key);
}

static void align(jw *w, const gpufl__job_rank *k)
{
    gpufl__jw_obj(w, "align");
    gpufl__jw_str(w, "method", k->align_method);
    gpufl__jw_i64(w, "shift_ns", k->shift_ns);
    if (k->align_error_ns == GPUFL_JOB_UNKNOWN_ERROR)
        gpufl__jw_null(w, "error_ns");
    else
        gpufl__jw_u64(w, "error_ns", k->align_error_ns);
    gpufl__jw_u64(w, "nccl_matched", k->nccl_matched);
    gpufl__jw_i64(w, "nccl_residual_ns", k->nccl_residual_ns);
    gpufl__jw_u64(w, "nccl_spread_ns", k->nccl_spread_ns);
    gpufl__jw_bool(w, "nccl_applied", k->nccl_applied);
    gpufl__jw_obj_end(w);
}

static void collectives(jw *w, const gpufl__job_rank *k)
{
    gpufl__job_coll_time *v = NULL;
    size_t n = gpufl__job_coll_times(k, &v);
    gpufl__jw_arr(w, "collectives");
    for (size_t j = 0; j < n; j++) {
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "collective", gpufl__nccl_coll_name(v[j].coll));
        gpufl__jw_str(w, "algorithm", gpufl__nccl_algo_name(v[j].algo));
        gpufl__jw_str(w, "protocol", gpufl__nccl_proto_name(v[j].proto));
        gpufl__jw_u64(w, "count", v[j].count);
        gpufl__jw_u64(w, "total_ns", v[j].total_ns);
        if (v[j].bytes_known)
            gpufl__jw_u64(w, "bytes", v[j].bytes);
        else
            gpufl__jw_null(w, "bytes");
        gpufl__jw_u64(w, "bytes_known", v[j].bytes_known);
        if (v[j].bw_ns) { /* GB/s over the collectives with bytes (ana_nccl.h, gpufl__nccl_bw_bytes) */
            gpufl__jw_real(w, "algbw_gbps", v[j].alg_bytes / (double)v[j].bw_ns, 3);
            gpufl__jw_real(w, "busbw_gbps", v[j].bus_bytes / (double)v[j].bw_ns, 3);
        } else {
            gpufl__jw_null(w, "algbw_gbps");
            gpufl__jw_null(w, "busbw_gbps");
        }
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    free(v);
    gpufl__jw_u64(w, "nccl_recorded", k->nccl_recorded);
    gpufl__jw_str(w, "bytes_note", k->str[k->bytes_note]);
}

static void ranks(jw *w, const gpufl__job_report *r)
{
    gpufl__jw_arr(w, "ranks");
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        const gpufl__job_rank_lateness *l = &r->stragglers.per_rank[i];
        gpufl__jw_obj(w, NULL);
        rank_id(w, "rank", k);
        if (k->local_rank >= 0)
            gpufl__jw_i64(w, "local_rank", k->local_rank);
        else
            gpufl__jw_null(w, "local_rank");
        gpufl__jw_str(w, "host", k->host);
        gpufl__jw_i64(w, "pid", k->pid);
        gpufl__jw_str(w, "session_id", k->session_id);
        gpufl__jw_str(w, "path", k->path);
        align(w, k);
        gpufl__jw_u64(w, "kernels", k->kernels);
        gpufl__jw_u64(w, "nccl_kernels", k->nccl_kernels);
        gpufl__jw_u64(w, "gpu_busy_ns", k->busy_ns);
        gpufl__jw_u64(w, "compute_ns", k->compute_ns);
        gpufl__jw_u64(w, "nccl_ns", k->comm_ns);
        gpufl__jw_u64(w, "overlap_ns", k->overlap_ns);
        gpufl__jw_real(w, "overlap_pct", k->comm_ns ? 100.0 * (double)k->overlap_ns / (double)k->comm_ns : 0, 2);
        gpufl__jw_str(w, "step_name", k->str[k->step_name]);
        gpufl__jw_u64(w, "steps", k->nsteps);
        gpufl__jw_obj(w, "late");
        gpufl__jw_u64(w, "times", l->times_late);
        gpufl__jw_u64(w, "total_ns", l->total_late_ns);
        gpufl__jw_u64(w, "max_ns", l->max_late_ns);
        gpufl__jw_obj_end(w);
        gpufl__jw_u64(w, "waited_ns", l->waited_ns);
        collectives(w, k);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

static void stragglers(jw *w, const gpufl__job_report *r, uint32_t top)
{
    const gpufl__job_stragglers *s = &r->stragglers;
    gpufl__jw_obj(w, "stragglers");
    gpufl__jw_u64(w, "threshold_ns", s->threshold_ns);
    gpufl__jw_u64(w, "matched_collectives", r->matches.n);
    gpufl__jw_str(w, "matching_note", r->matches.note[0] ? r->matches.note : NULL);
    gpufl__jw_u64(w, "late_count", s->nlate);
    gpufl__jw_arr(w, "late");
    for (size_t i = 0; i < s->nlate && i < top; i++) {
        const gpufl__job_late *l = &s->late[i];
        const gpufl__job_rank *k = &r->ranks[l->rank];
        const gpufl__job_match *m = &r->matches.m[l->match];
        const gpufl__job_coll *c = &k->coll[m->at[l->rank]];
        gpufl__jw_obj(w, NULL);
        rank_id(w, "rank", k);
        gpufl__jw_str(w, "collective", gpufl__nccl_coll_name(c->coll));
        gpufl__jw_u64(w, "stream", m->stream);
        gpufl__jw_u64(w, "seq", m->seq + 1);
        gpufl__jw_u64(w, "step", l->step);
        gpufl__jw_u64(w, "late_ns", l->late_ns);
        gpufl__jw_u64(w, "wait_ns", l->wait_ns);
        gpufl__jw_u64(w, "launch_late_ns", l->launch_late_ns);
        gpufl__jw_i64(w, "job_time_ns", (int64_t)c->start_ns + k->shift_ns);
        gpufl__jw_u64(w, "step_gap_ns", gpufl__job_step_gap(k, l->step));
        gpufl__jw_u64(w, "gpu_idle_before_ns", c->gpu_idle_before_ns);
        gpufl__jw_str(w, "kernel_before", c->last_kernel ? k->str[c->last_kernel] : NULL);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}

static void imbalance(jw *w, const gpufl__job_report *r, uint32_t top)
{
    gpufl__jw_arr(w, "imbalance");
    for (size_t i = 0; i < r->imbalance.n && i < top; i++) {
        const gpufl__job_imbalance_row *b = &r->imbalance.row[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_str(w, "kernel", b->name);
        gpufl__jw_u64(w, "mean_ns", b->mean_ns);
        gpufl__jw_u64(w, "max_ns", b->max_ns);
        rank_id(w, "max_rank", &r->ranks[b->max_rank]);
        gpufl__jw_u64(w, "min_ns", b->min_ns);
        rank_id(w, "min_rank", &r->ranks[b->min_rank]);
        gpufl__jw_u64(w, "on_ranks", b->on_ranks);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

int gpufl__report_job_json(const gpufl__job_report *r, uint32_t top, FILE *out)
{
    if (!top)
        top = 1;
    jw w;
    gpufl__jw_init(&w);
    gpufl__jw_obj(&w, NULL);
    gpufl__jw_obj(&w, "job");
    gpufl__jw_str(&w, "id", r->ranks[0].job_id[0] ? r->ranks[0].job_id : NULL);
    gpufl__jw_str(&w, "launcher", r->ranks[0].launcher[0] ? r->ranks[0].launcher : NULL);
    gpufl__jw_u64(&w, "ranks", r->nranks);
    gpufl__jw_obj_end(&w);
    ranks(&w, r);
    stragglers(&w, r, top);
    imbalance(&w, r, top);
    gpufl__jw_obj_end(&w);
    int rc = gpufl__jw_finish(&w);
    if (rc == 0 && fwrite(w.buf, 1, w.n, out) != w.n)
        rc = -1;
    gpufl__jw_free(&w);
    return rc;
}
