/*
 * The job report as text (report_job.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_nccl.h"
#include "present/report/report_job.h"

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

static void header(const gpufl__job_report *r, FILE *out)
{
    const gpufl__job_rank *first = &r->ranks[0];
    size_t hosts = 0;
    for (size_t i = 0; i < r->nranks; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = !strcmp(r->ranks[k].host, r->ranks[i].host);
        hosts += !seen;
    }
    fprintf(out, "gpufl job report\n");
    fprintf(out, "  job        %s%s%s\n", first->job_id[0] ? first->job_id : "(no job id)",
            first->launcher[0] ? ", launched by " : "", first->launcher);
    fprintf(out, "  ranks      %zu on %zu host(s)\n", r->nranks, hosts);
}

static void ranks_table(const gpufl__job_report *r, FILE *out)
{
    fprintf(out, "\nRanks\n");
    fprintf(out, "  %-5s %-16s %8s %9s %11s %11s %11s %8s %11s %6s %6s  %s\n", "rank", "host", "pid", "kernels",
            "GPU busy", "compute", "NCCL", "overlap", "waited", "late", "steps", "session");
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        const gpufl__job_rank_lateness *l = &r->stragglers.per_rank[i];
        char rn[24];
        gpufl__job_rank_name(k, i, rn, sizeof rn);
        fprintf(out,
                "  %-5s %-16.16s %8d %9" PRIu64 " %8.2f ms %8.2f ms %8.2f ms %7.1f%% %8.2f ms %6" PRIu64 " %6zu  %s\n",
                rn, k->host, k->pid, k->kernels, ms(k->busy_ns), ms(k->compute_ns), ms(k->comm_ns),
                pct(k->overlap_ns, k->comm_ns), ms(l->waited_ns), l->times_late, k->nsteps, k->path);
    }
    fprintf(out,
            "  (overlap: NCCL time during which other kernels ran on the same GPU; waited: from the rank's arrival at "
            "each collective to the last rank's; late: collectives the rank reached %.1f ms or more after every "
            "other rank)\n",
            ms(r->stragglers.threshold_ns));
}

static void alignment(const gpufl__job_report *r, FILE *out)
{
    char first[24];
    gpufl__job_rank_name(&r->ranks[0], 0, first, sizeof first); /* the lowest rank given, not always rank 0 */
    fprintf(out, "\nAlignment (onto rank %s's clock)\n", first);
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        char rn[24], err[48], nccl[160] = "";
        gpufl__job_rank_name(k, i, rn, sizeof rn);
        if (k->align_error_ns == GPUFL_JOB_UNKNOWN_ERROR)
            snprintf(err, sizeof err, "error unknown (no NTP state)");
        else
            snprintf(err, sizeof err, "within %.3f us", (double)k->align_error_ns / 1e3);
        if (k->nccl_matched)
            snprintf(nccl, sizeof nccl, "; NCCL ends %s %+.3f us (spread %.3f us, %zu collectives)",
                     k->nccl_applied ? "moved it by" : "agree to within", (double)k->nccl_residual_ns / 1e3,
                     (double)k->nccl_spread_ns / 1e3, k->nccl_matched);
        fprintf(out, "  rank %-5s %-45s shift %+.3f ms, %s%s\n", rn, k->align_method, (double)k->shift_ns / 1e6, err,
                nccl);
    }
    if (r->matches.note[0])
        fprintf(out, "  note: %s\n", r->matches.note);
}

static void nccl(const gpufl__job_report *r, FILE *out)
{
    bool any = false;
    for (size_t i = 0; i < r->nranks && !any; i++)
        any = r->ranks[i].ncoll > 0;
    if (!any)
        return;
    fprintf(out, "\nNCCL per rank (kinds from kernel names: see docs/REPORT.md on what a name can tell)\n");
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        gpufl__job_coll_time *v = NULL;
        size_t n = gpufl__job_coll_times(k, &v);
        char rn[24];
        gpufl__job_rank_name(k, i, rn, sizeof rn);
        fprintf(out, "  rank %s: %" PRIu64 " NCCL kernels, %.2f ms, %.1f %% overlapped with compute\n", rn,
                k->nccl_kernels, ms(k->comm_ns), pct(k->overlap_ns, k->comm_ns));
        for (size_t j = 0; j < n; j++) {
            fprintf(out, "    %-14s %-8s %-7s %8" PRIu64 " x %10.3f ms  (mean %.1f us)",
                    gpufl__nccl_coll_name(v[j].coll), gpufl__nccl_algo_name(v[j].algo),
                    gpufl__nccl_proto_name(v[j].proto), v[j].count, ms(v[j].total_ns),
                    (double)v[j].total_ns / 1e3 / (double)v[j].count);
            if (v[j].bytes_known) {
                fprintf(out, "  %.3f MB", (double)v[j].bytes / 1e6);
                if (v[j].bytes_known < v[j].count)
                    fprintf(out, " in %" PRIu64 " of them", v[j].bytes_known);
                if (v[j].bw_ns)
                    fprintf(out, ", alg bw %.2f GB/s, bus bw %.2f GB/s", v[j].alg_bytes / (double)v[j].bw_ns,
                            v[j].bus_bytes / (double)v[j].bw_ns);
            }
            fputc('\n', out);
        }
        if (k->bytes_note)
            fprintf(out, "    (%s)\n", k->str[k->bytes_note]);
        free(v);
    }
    fprintf(out, "  (bytes: count x datatype size from NCCL's profiler plugin, MB = 1e6 bytes; alg bw: size / kernel "
                 "time, the size x n for AllGather and ReduceScatter; bus bw: alg bw x 2(n-1)/n for AllReduce, "
                 "(n-1)/n for AllGather and ReduceScatter, 1 for Broadcast, Reduce, Send and Recv, as nccl-tests)\n");
}

static void stragglers(const gpufl__job_report *r, uint32_t top, FILE *out)
{
    const gpufl__job_stragglers *s = &r->stragglers;
    fprintf(out, "\nStragglers (%zu collectives matched across ranks)\n", r->matches.n);
    if (r->nranks < 2) {
        fprintf(out, "  one rank: nothing to compare\n");
        return;
    }
    if (!s->nlate) {
        fprintf(out, "  no rank reached a collective %.1f ms or more after all the others\n", ms(s->threshold_ns));
        return;
    }
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank_lateness *l = &s->per_rank[i];
        if (!l->times_late)
            continue;
        char rn[24];
        gpufl__job_rank_name(&r->ranks[i], i, rn, sizeof rn);
        fprintf(out, "  rank %s was last %" PRIu64 " time(s), %.2f ms in all, at most %.2f ms\n", rn, l->times_late,
                ms(l->total_late_ns), ms(l->max_late_ns));
    }
    fprintf(out, "  latest arrivals:\n");
    for (size_t i = 0; i < s->nlate && i < top; i++) {
        const gpufl__job_late *l = &s->late[i];
        const gpufl__job_rank *k = &r->ranks[l->rank];
        const gpufl__job_match *m = &r->matches.m[l->match];
        const gpufl__job_coll *c = &k->coll[m->at[l->rank]];
        char rn[24], step[96] = "";
        gpufl__job_rank_name(k, l->rank, rn, sizeof rn);
        if (l->step)
            snprintf(step, sizeof step, " in %s %u", k->str[k->step_name], l->step);
        fprintf(out, "    rank %s %.2f ms late at %s #%u of NCCL stream %u%s (the first rank waited %.2f ms)", rn,
                ms(l->late_ns), gpufl__nccl_coll_name(c->coll), m->seq + 1, m->stream, step, ms(l->wait_ns));
        if (l->launch_late_ns)
            fprintf(out, "; it launched it %.2f ms late", ms(l->launch_late_ns));
        uint64_t gap = gpufl__job_step_gap(k, l->step);
        if (gap)
            fprintf(out, "; its %s %u began %.2f ms after the previous one ended", k->str[k->step_name], l->step,
                    ms(gap));
        if (c->gpu_idle_before_ns)
            fprintf(out, "; before it its GPU was idle %.2f ms%s%s", ms(c->gpu_idle_before_ns),
                    c->last_kernel ? " after " : "", k->str[c->last_kernel]);
        fputc('\n', out);
    }
}

static void imbalance(const gpufl__job_report *r, uint32_t top, FILE *out)
{
    const gpufl__job_imbalance *b = &r->imbalance;
    if (!b->n)
        return;
    fprintf(out, "\nLoad imbalance (kernel time per rank, largest excess over the mean first)\n");
    fprintf(out, "  %11s %11s %-6s %11s %-6s %6s  %s\n", "mean", "max", "rank", "min", "rank", "ranks", "kernel");
    for (size_t i = 0; i < b->n && i < top; i++) {
        const gpufl__job_imbalance_row *w = &b->row[i];
        char mx[24], mn[24];
        gpufl__job_rank_name(&r->ranks[w->max_rank], w->max_rank, mx, sizeof mx);
        gpufl__job_rank_name(&r->ranks[w->min_rank], w->min_rank, mn, sizeof mn);
        fprintf(out, "  %8.3f ms %8.3f ms %-6s %8.3f ms %-6s %6zu  %.100s\n", ms(w->mean_ns), ms(w->max_ns), mx,
                ms(w->min_ns), mn, w->on_ranks, w->name);
    }
}

int gpufl__report_job_text(const gpufl__job_report *r, uint32_t top, FILE *out)
{
    if (!top)
        top = 1;
    header(r, out);
    ranks_table(r, out);
    alignment(r, out);
    nccl(r, out);
    stragglers(r, top, out);
    imbalance(r, top, out);
    return ferror(out) ? -1 : 0;
}
