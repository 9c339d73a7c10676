/*
 * A job's report (ana_job.h): the ranks aligned, then what is found
 * across them. Apart from ana_job_cross.c because alignment itself uses the
 * matching there.
 */
#include <string.h>

#include "analyze/ana_job.h"

int gpufl__job_report_build(gpufl__job_rank *ranks, size_t n, gpufl__job_report *out)
{
    memset(out, 0, sizeof *out);
    out->ranks = ranks;
    out->nranks = n;
    gpufl__job_align(ranks, n);
    int rc = gpufl__job_match_collectives(ranks, n, &out->matches);
    if (rc == 0)
        rc = gpufl__job_find_stragglers(ranks, n, &out->matches, GPUFL_JOB_STRAGGLER_NS, &out->stragglers);
    if (rc == 0)
        rc = gpufl__job_find_imbalance(ranks, n, &out->imbalance);
    if (rc != 0)
        gpufl__job_report_free(out);
    return rc;
}

void gpufl__job_report_free(gpufl__job_report *r)
{
    gpufl__job_matches_free(&r->matches);
    gpufl__job_stragglers_free(&r->stragglers);
    gpufl__job_imbalance_free(&r->imbalance);
}
