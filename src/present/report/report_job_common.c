/*
 * What the job report's renderers share (report_job.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "analyze/ana_nccl.h"
#include "present/report/report_job.h"

static int by_total(const void *a, const void *b)
{
    const gpufl__job_coll_time *x = a, *y = b;
    return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
}

size_t gpufl__job_coll_times(const gpufl__job_rank *r, gpufl__job_coll_time **out)
{
    *out = NULL;
    if (!r->ncoll)
        return 0;
    gpufl__job_coll_time *v = NULL;
    size_t n = 0;
    for (size_t i = 0; i < r->ncoll; i++) {
        const gpufl__job_coll *c = &r->coll[i];
        size_t k = 0;
        while (k < n && !(v[k].coll == c->coll && v[k].algo == c->algo && v[k].proto == c->proto))
            k++;
        if (k == n) {
            gpufl__job_coll_time *q = realloc(v, (n + 1) * sizeof *q);
            if (!q) {
                free(v);
                return 0;
            }
            v = q;
            v[n++] = (gpufl__job_coll_time){.coll = c->coll, .algo = c->algo, .proto = c->proto};
        }
        uint64_t dur = c->end_ns - c->start_ns;
        v[k].count++;
        v[k].total_ns += dur;
        double alg, bus;
        if (c->has_bytes) {
            v[k].bytes += c->bytes;
            v[k].bytes_known++;
            if (gpufl__nccl_bw_bytes(c->api_coll ? c->api_coll : c->coll, c->bytes, c->nranks, &alg, &bus)) {
                v[k].bw_ns += dur;
                v[k].alg_bytes += alg;
                v[k].bus_bytes += bus;
            }
        }
    }
    qsort(v, n, sizeof *v, by_total);
    *out = v;
    return n;
}

void gpufl__job_rank_name(const gpufl__job_rank *r, size_t i, char *buf, size_t len)
{
    if (r->rank >= 0)
        snprintf(buf, len, "%lld", (long long)r->rank);
    else
        snprintf(buf, len, "#%zu", i);
}
