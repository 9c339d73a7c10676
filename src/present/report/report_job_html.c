/*
 * The job report as one HTML page (report_job.h): the text report's
 * sections as tables (ranks side by side, alignment, NCCL per rank,
 * stragglers, imbalance) and a timeline of every rank on the job's time
 * line (report_job_html_timeline.c), in the session report's style (its
 * stylesheet, report.css, and its escapes and output file, html_out.h).
 *
 * The page has no script: the timeline is a static SVG, decimated as it
 * is written, so the page reads the same with JavaScript off and needs no
 * data block. Its Content-Security-Policy forbids every fetch, as the
 * session report's does. Every string from a digest (hosts, paths, job
 * ids, kernel and step names) goes through gpufl__hout_text().
 * Single-threaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_nccl.h"
#include "gpufl/gpufl.h"
#include "present/report/report_html_parts.h"
#include "present/report/report_job.h"

static void td_rank(gpufl__hout *o, const gpufl__job_report *r, size_t i)
{
    char rn[24];
    gpufl__job_rank_name(&r->ranks[i], i, rn, sizeof rn);
    gpufl__hout_printf(o, "<td class=n data-v=\"%zu\">%s</td>", i, rn);
}

static void td_ns(gpufl__hout *o, uint64_t ns) { gpufl__html_td_ns(o, (int64_t)ns); }

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

static bool any_nccl(const gpufl__job_report *r)
{
    for (size_t i = 0; i < r->nranks; i++)
        if (r->ranks[i].ncoll)
            return true;
    return false;
}

static size_t hosts(const gpufl__job_report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nranks; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = !strcmp(r->ranks[k].host, r->ranks[i].host);
        n += !seen;
    }
    return n;
}

static void page_head(gpufl__hout *o, const gpufl__job_report *r)
{
    const gpufl__job_rank *first = &r->ranks[0];
    const char *id = first->job_id[0] ? first->job_id : "(no job id)";
    gpufl__hout_raw(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                       "style-src 'unsafe-inline'\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<title>gpufl job report: ");
    gpufl__hout_text(o, id);
    gpufl__hout_raw(o, "</title>\n<style>\n");
    gpufl__hout_raw(o, gpufl__html_css);
    /* the tables share the session report's markup, but this page has no script to sort them */
    gpufl__hout_raw(o, "table.sortable thead th{cursor:default}\n#job-tl{display:block}\n");
    gpufl__hout_raw(o, "</style></head>\n<body>\n<header><h1>gpufl job report: ");
    gpufl__hout_text(o, id);
    gpufl__hout_raw(o, "</h1>\n<nav><a href=\"#ranks\">ranks</a><a href=\"#timeline\">timeline</a>"
                       "<a href=\"#alignment\">alignment</a>");
    if (any_nccl(r))
        gpufl__hout_raw(o, "<a href=\"#nccl\">NCCL</a>");
    gpufl__hout_raw(o, "<a href=\"#stragglers\">stragglers</a>");
    if (r->imbalance.n)
        gpufl__hout_raw(o, "<a href=\"#imbalance\">imbalance</a>");
    gpufl__hout_raw(o, "</nav></header>\n<main>\n");
}

static void facts(gpufl__hout *o, const gpufl__job_report *r)
{
    const gpufl__job_rank *first = &r->ranks[0];
    gpufl__hout_raw(o, "<section id=job><h2>Job</h2>\n<table class=facts>\n<tr><th>job</th><td>");
    gpufl__hout_text(o, first->job_id[0] ? first->job_id : "(no job id)");
    gpufl__hout_raw(o, "</td></tr>\n<tr><th>launcher</th><td>");
    gpufl__hout_text(o, first->launcher[0] ? first->launcher : "-");
    gpufl__hout_printf(o,
                       "</td></tr>\n<tr><th>ranks</th><td>%zu on %zu host(s)</td></tr>\n"
                       "<tr><th>collectives matched</th><td>%zu</td></tr>\n</table>\n</section>\n",
                       r->nranks, hosts(r), r->matches.n);
}

static void ranks_table(gpufl__hout *o, const gpufl__job_report *r)
{
    static const char *const cols[] = {"rank",    "host", "pid",    "kernels", "GPU busy", "compute", "NCCL",
                                       "overlap", "late", "waited", "steps",   "session",  NULL};
    gpufl__hout_raw(o, "<section id=ranks><h2>Ranks</h2>\n");
    gpufl__html_table_head(o, "job-ranks", cols);
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        const gpufl__job_rank_lateness *l = &r->stragglers.per_rank[i];
        gpufl__hout_raw(o, "<tr>");
        td_rank(o, r, i);
        gpufl__html_td_text(o, k->host);
        gpufl__html_td_u64(o, (uint64_t)(int64_t)k->pid);
        gpufl__html_td_u64(o, k->kernels);
        td_ns(o, k->busy_ns);
        td_ns(o, k->compute_ns);
        td_ns(o, k->comm_ns);
        gpufl__html_td_pct(o, pct(k->overlap_ns, k->comm_ns));
        gpufl__html_td_u64(o, l->times_late);
        td_ns(o, l->waited_ns);
        gpufl__html_td_u64(o, k->nsteps);
        gpufl__html_td_text(o, k->path);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    char thr[32];
    gpufl__hout_printf(o,
                       "<p class=note>overlap: NCCL time during which other kernels ran on the same GPU; late: "
                       "collectives the rank reached %s or more after every other rank; waited: what the rank "
                       "waited at matched collectives for the last to arrive.</p>\n</section>\n",
                       gpufl__hfmt_ns(thr, sizeof thr, r->stragglers.threshold_ns));
}

static int timeline(gpufl__hout *o, const gpufl__job_report *r)
{
    gpufl__hout_raw(o, "<section id=timeline><h2>Timeline</h2>\n<p class=note>Every rank on the job's time line "
                       "(the first rank's session clock; the alignment below says how each got there), from the "
                       "earliest time any rank recorded: the times on this page count from there. "
                       "<span style=\"color:#8a8f98\">&#9644;</span> the session, "
                       "<span style=\"color:#2a9d8f\">&#9632;</span> steps, "
                       "<span style=\"color:#dd8a1e\">&#9632;</span> NCCL kernels (lighter: busy part of the "
                       "time), <span style=\"color:#c1121f\">&#9660;</span> late arrivals at collectives. "
                       "Work closer than a pixel is drawn as one mark; hover for what a mark holds.</p>\n");
    int rc = gpufl__html_job_timeline(o, r);
    gpufl__hout_raw(o, "</section>\n");
    return rc;
}

static void alignment(gpufl__hout *o, const gpufl__job_report *r)
{
    static const char *const cols[] = {"rank",        "method",  "shift",   "error", "NCCL residual",
                                       "NCCL spread", "matched", "applied", NULL};
    gpufl__hout_raw(o, "<section id=alignment><h2>Alignment</h2>\n<p>Onto the first rank's clock.</p>\n");
    gpufl__html_table_head(o, "job-alignment", cols);
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        gpufl__hout_raw(o, "<tr>");
        td_rank(o, r, i);
        gpufl__html_td_text(o, k->align_method ? k->align_method : "");
        gpufl__html_td_ns(o, k->shift_ns);
        if (k->align_error_ns == GPUFL_JOB_UNKNOWN_ERROR)
            gpufl__html_td_text(o, "unknown (no NTP state)");
        else
            td_ns(o, k->align_error_ns);
        if (k->nccl_matched) {
            gpufl__html_td_ns(o, k->nccl_residual_ns);
            td_ns(o, k->nccl_spread_ns);
        } else {
            gpufl__html_td_text(o, "-");
            gpufl__html_td_text(o, "-");
        }
        gpufl__html_td_u64(o, k->nccl_matched);
        gpufl__html_td_text(o, k->nccl_applied ? "yes" : "no");
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    if (r->matches.note[0]) {
        gpufl__hout_raw(o, "<p class=note>");
        gpufl__hout_text(o, r->matches.note);
        gpufl__hout_raw(o, "</p>\n");
    }
    gpufl__hout_raw(o, "</section>\n");
}

static const char *or_dash(const char *s) { return s[0] ? s : "-"; }

static void nccl(gpufl__hout *o, const gpufl__job_report *r)
{
    static const char *const cols[] = {"rank", "collective", "algorithm", "protocol", "kernels", "time",
                                       "mean", "bytes",      "alg bw",    "bus bw",   NULL};
    if (!any_nccl(r))
        return;
    gpufl__hout_raw(o, "<section id=nccl><h2>NCCL per rank</h2>\n<p>Kinds from the kernels' names: NCCL names the "
                       "kernel it specialised (LL whatever protocol ran; since 2.19 Ring for every algorithm but "
                       "Tree). Bytes are count &times; datatype size from NCCL's profiler plugin; alg bw is the "
                       "size (&times; n for AllGather and ReduceScatter) over kernel time, bus bw alg bw &times; "
                       "2(n-1)/n for AllReduce, (n-1)/n for AllGather and ReduceScatter, 1 for the rest, as "
                       "nccl-tests.</p>\n");
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank *k = &r->ranks[i];
        if (!k->bytes_note)
            continue;
        char rn[24];
        gpufl__job_rank_name(k, i, rn, sizeof rn);
        gpufl__hout_printf(o, "<p class=note>rank %s: ", rn);
        gpufl__hout_text(o, k->str[k->bytes_note]);
        gpufl__hout_raw(o, "</p>\n");
    }
    gpufl__html_table_head(o, "job-nccl", cols);
    for (size_t i = 0; i < r->nranks; i++) {
        gpufl__job_coll_time *v = NULL;
        size_t n = gpufl__job_coll_times(&r->ranks[i], &v);
        for (size_t j = 0; j < n; j++) {
            gpufl__hout_raw(o, "<tr>");
            td_rank(o, r, i);
            gpufl__html_td_text(o, or_dash(gpufl__nccl_coll_name(v[j].coll)));
            gpufl__html_td_text(o, or_dash(gpufl__nccl_algo_name(v[j].algo)));
            gpufl__html_td_text(o, or_dash(gpufl__nccl_proto_name(v[j].proto)));
            gpufl__html_td_u64(o, v[j].count);
            td_ns(o, v[j].total_ns);
            td_ns(o, v[j].total_ns / v[j].count);
            if (v[j].bytes_known)
                gpufl__html_td_bytes(o, v[j].bytes);
            else
                gpufl__html_td_text(o, "unknown"); /* the note above says why */
            char alg[32] = "-", bus[32] = "-";
            if (v[j].bw_ns) {
                snprintf(alg, sizeof alg, "%.2f GB/s", v[j].alg_bytes / (double)v[j].bw_ns);
                snprintf(bus, sizeof bus, "%.2f GB/s", v[j].bus_bytes / (double)v[j].bw_ns);
            }
            gpufl__html_td_text(o, alg);
            gpufl__html_td_text(o, bus);
            gpufl__hout_raw(o, "</tr>\n");
        }
        free(v);
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

static void late_rows(gpufl__hout *o, const gpufl__job_report *r, uint32_t top)
{
    static const char *const cols[] = {
        "rank",          "late", "collective", "#", "NCCL stream", "step", "first rank waited", "at", "GPU idle before",
        "kernel before", NULL};
    const gpufl__job_stragglers *s = &r->stragglers;
    int64_t origin = gpufl__html_job_origin(r);
    gpufl__hout_printf(o, "<h3>Latest arrivals (%zu of %zu)</h3>\n", s->nlate < top ? s->nlate : (size_t)top, s->nlate);
    gpufl__html_table_head(o, "job-late", cols);
    for (size_t i = 0; i < s->nlate && i < top; i++) {
        const gpufl__job_late *l = &s->late[i];
        const gpufl__job_rank *k = &r->ranks[l->rank];
        const gpufl__job_match *m = &r->matches.m[l->match];
        const gpufl__job_coll *c = &k->coll[m->at[l->rank]];
        gpufl__hout_raw(o, "<tr>");
        td_rank(o, r, l->rank);
        td_ns(o, l->late_ns);
        gpufl__html_td_text(o, or_dash(gpufl__nccl_coll_name(c->coll)));
        gpufl__html_td_u64(o, (uint64_t)m->seq + 1);
        gpufl__html_td_u64(o, m->stream);
        if (l->step) {
            gpufl__hout_printf(o, "<td data-v=\"%u\">", l->step);
            gpufl__hout_text(o, k->str[k->step_name]);
            gpufl__hout_printf(o, " %u</td>", l->step);
        } else {
            gpufl__html_td_text(o, "-");
        }
        td_ns(o, l->wait_ns);
        gpufl__html_td_ns(o, (int64_t)c->start_ns + k->shift_ns - origin);
        td_ns(o, c->gpu_idle_before_ns);
        gpufl__hout_raw(o, "<td class=kname>");
        gpufl__hout_text(o, or_dash(k->str[c->last_kernel]));
        gpufl__hout_raw(o, "</td></tr>\n");
    }
    gpufl__html_table_end(o);
}

static void stragglers(gpufl__hout *o, const gpufl__job_report *r, uint32_t top)
{
    static const char *const cols[] = {"rank", "times last", "late in all", "at most", NULL};
    const gpufl__job_stragglers *s = &r->stragglers;
    char thr[32];
    gpufl__hout_printf(o, "<section id=stragglers><h2>Stragglers</h2>\n<p>%zu collectives matched across ranks. ",
                       r->matches.n);
    if (r->nranks < 2) {
        gpufl__hout_raw(o, "One rank: nothing to compare.</p>\n</section>\n");
        return;
    }
    if (!s->nlate) {
        gpufl__hout_printf(o, "No rank reached a collective %s or more after all the others.</p>\n</section>\n",
                           gpufl__hfmt_ns(thr, sizeof thr, s->threshold_ns));
        return;
    }
    gpufl__hout_printf(o, "A rank is a straggler at a collective it reached %s or more after the next-latest.</p>\n",
                       gpufl__hfmt_ns(thr, sizeof thr, s->threshold_ns));
    gpufl__html_table_head(o, "job-stragglers", cols);
    for (size_t i = 0; i < r->nranks; i++) {
        const gpufl__job_rank_lateness *l = &s->per_rank[i];
        if (!l->times_late)
            continue;
        gpufl__hout_raw(o, "<tr>");
        td_rank(o, r, i);
        gpufl__html_td_u64(o, l->times_late);
        td_ns(o, l->total_late_ns);
        td_ns(o, l->max_late_ns);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    late_rows(o, r, top);
    gpufl__hout_raw(o, "</section>\n");
}

static void imbalance(gpufl__hout *o, const gpufl__job_report *r, uint32_t top)
{
    static const char *const cols[] = {"kernel", "mean", "max", "on rank", "min", "on rank", "ranks", NULL};
    const gpufl__job_imbalance *b = &r->imbalance;
    if (!b->n)
        return;
    gpufl__hout_raw(o, "<section id=imbalance><h2>Load imbalance</h2>\n<p>Kernel time per rank (NCCL's "
                       "excluded), largest excess of the maximum over the mean first.</p>\n");
    gpufl__html_table_head(o, "job-imbalance", cols);
    for (size_t i = 0; i < b->n && i < top; i++) {
        const gpufl__job_imbalance_row *w = &b->row[i];
        gpufl__hout_raw(o, "<tr><td class=kname>");
        gpufl__hout_text(o, w->name);
        gpufl__hout_raw(o, "</td>");
        td_ns(o, w->mean_ns);
        td_ns(o, w->max_ns);
        td_rank(o, r, w->max_rank);
        td_ns(o, w->min_ns);
        td_rank(o, r, w->min_rank);
        gpufl__html_td_u64(o, w->on_ranks);
        gpufl__hout_raw(o, "</tr>\n");
    }
    gpufl__html_table_end(o);
    gpufl__hout_raw(o, "</section>\n");
}

int gpufl__report_job_html(const gpufl__job_report *r, uint32_t top, const char *path, char *err, size_t err_len)
{
    if (!r || !r->nranks || !path) {
        snprintf(err, err_len, "job HTML report: no ranks or no output path");
        return GPUFL_EINVAL;
    }
    if (!top)
        top = 1;
    gpufl__hout o;
    int rc = gpufl__hout_open(&o, path, err, err_len);
    if (rc != 0)
        return rc;
    page_head(&o, r);
    facts(&o, r);
    ranks_table(&o, r);
    if (timeline(&o, r) != 0) {
        snprintf(err, err_len, "cannot write %s: out of memory drawing the timeline", path);
        gpufl__hout_abort(&o);
        return GPUFL_ENOMEM;
    }
    alignment(&o, r);
    nccl(&o, r);
    stragglers(&o, r, top);
    imbalance(&o, r, top);
    gpufl__hout_raw(&o, "</main>\n</body></html>\n");
    return gpufl__hout_commit(&o, err, err_len);
}
