/*
 * The launches analysis (analysis.h): how long kernel launch calls take,
 * and how long kernels wait after them.
 *
 * One pass counts; then one buffer of 64-bit values (one per kernel with
 * API times) is filled and sorted three times, for the three
 * distributions, so the memory is one column's worth whatever the size.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_util.h"
#include "analyze/trace_access.h"

enum { LATENCY, QUEUE, CALL };

static int dist_of(const ta *a, uint64_t *v, int what, gpufl__ana_dist *d)
{
    size_t m = 0;
    for (size_t i = 0; i < ta_k_n(a); i++) {
        int64_t lead, call;
        if (!ta_k_launch(a, i, &lead, &call))
            continue;
        int64_t x = what == LATENCY ? lead : what == CALL ? call : lead - call;
        v[m++] = (uint64_t)x;
    }
    return ana_dist_of(v, m, true, d);
}

int gpufl__analyze_launches(const gpufl_trace *t, gpufl__ana_launches *out)
{
    if (!out)
        return GPUFL_EINVAL;
    memset(out, 0, sizeof *out);
    if (!t)
        return GPUFL_EINVAL;
    ta a;
    ta_open(&a, t);
    out->kernels = ta_k_n(&a);
    for (size_t i = 0; i < ta_k_n(&a); i++) {
        int64_t lead, call;
        if (!ta_k_launch(&a, i, &lead, &call))
            continue;
        out->with_api++;
        uint64_t dur = ta_k_dur(&a, i);
        if (call > 0 && dur < (uint64_t)call) {
            out->short_kernels++;
            out->short_kernel_ns += dur;
        }
    }
    if (!out->with_api)
        return 0;
    uint64_t *v = malloc(out->with_api * sizeof *v);
    if (!v) {
        memset(out, 0, sizeof *out);
        return GPUFL_ENOMEM;
    }
    int rc = dist_of(&a, v, LATENCY, &out->latency);
    if (rc == 0)
        rc = dist_of(&a, v, QUEUE, &out->queue);
    if (rc == 0)
        rc = dist_of(&a, v, CALL, &out->call);
    free(v);
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc;
}

void gpufl__ana_launches_free(gpufl__ana_launches *l)
{
    if (l)
        memset(l, 0, sizeof *l);
}
