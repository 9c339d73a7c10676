/*
 * Every analysis of one trace (gpufl__analyze_report), and the options'
 * defaults. The scope trees are built once and shared by the hotspots, the
 * ops and the scopes analyses, so the hotspots' node indices are the
 * scopes' own.
 *
 * Threads: the report runs in two halves at once, on the calling thread
 * and one more: the scope trees with the scopes, hotspots and ops, and the other
 * analyses; at 10 M events (bench_analyze) they cost about the same. Each
 * analysis only reads the trace and writes its own part of the result, so
 * the result is the one a single thread gets, byte for byte. With one CPU,
 * or when no thread can be started, the halves run one after the other.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "analyze/ana_critpath.h"
#include "analyze/ana_internal.h"
#include "analyze/ana_mem_series.h"
#include "analyze/ana_nccl.h"
#include "analyze/ana_util.h"

void gpufl__ana_options_default(gpufl__ana_options *o)
{
    o->top_kernels = 20;
    o->top_scopes = 3;
    o->top_stacks = 3;
    o->max_allocations = 20;
}

static int scopes_and_hotspots(const gpufl_trace *t, gpufl__ana_report *r)
{
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    ana_attr x;
    int rc = gpufl__ana_attr_open(&x, &a);
    if (rc != 0)
        return rc;
    rc = gpufl__ana_hotspots_with(&x, &r->options, &r->hotspots); /* reads the trees: before they move */
    if (rc == 0)
        rc = gpufl__ana_ops_with(&x, &r->ops);
    if (rc == 0)
        rc = gpufl__ana_scopes_with(&x, &r->scopes);
    gpufl__ana_attr_close(&x);
    return rc;
}

int gpufl__analyze_memory_views(const gpufl_trace *t, const gpufl__ana_leak_options *lo, gpufl__ana_report *r)
{
    gpufl__rows a;
    gpufl__rows_open(&a, t);
    ana_mem_set m;
    int rc = gpufl__ana_mem_set_build(&a, &m);
    if (rc != 0)
        return rc;
    rc = gpufl__ana_mem_layers_with(&m, 0, &r->mem_layers);
    if (rc == 0)
        rc = gpufl__ana_mem_peaks_with(&m, &r->mem_peaks);
    if (rc == 0)
        rc = gpufl__ana_leaks_with(&m, lo, &r->leaks);
    gpufl__ana_mem_set_free(&m);
    return rc;
}

/* The half of the report that does not need the scope trees. */
typedef struct rest_job {
    const gpufl_trace *t;
    gpufl__ana_report *r;
    int rc;
} rest_job;

static void *run_rest(void *arg)
{
    rest_job *j = arg;
    gpufl__ana_report *r = j->r;
    int rc = gpufl__analyze_summary(j->t, &r->summary);
    if (rc == 0)
        rc = gpufl__nccl_report_of(j->t, &r->summary, &r->nccl); /* reads the summary's busy time */
    if (rc == 0)
        rc = gpufl__analyze_copies(j->t, &r->copies);
    if (rc == 0)
        rc = gpufl__analyze_idle(j->t, &r->idle);
    if (rc == 0)
        rc = gpufl__analyze_launches(j->t, &r->launches);
    if (rc == 0)
        rc = gpufl__analyze_memory(j->t, &r->options, &r->memory);
    if (rc == 0)
        rc = gpufl__analyze_counters(j->t, &r->counters);
    if (rc == 0)
        rc = gpufl__analyze_flight(j->t, &r->flight);
    if (rc == 0)
        rc = gpufl__analyze_sass(j->t, &r->sass);
    if (rc == 0)
        rc = gpufl__analyze_memory_views(j->t, NULL, r);
    if (rc == 0)
        rc = gpufl__ana_critpath_of(j->t, &r->critpath);
    j->rc = rc;
    return NULL;
}

int gpufl__analyze_report(const gpufl_trace *t, const gpufl__ana_options *o, gpufl__ana_report *out)
{
    if (!ana_args_ok(t, out, sizeof *out))
        return GPUFL_EINVAL;
    gpufl__ana_options_fill(o, &out->options);
    rest_job rest = {t, out, 0};
    pthread_t th;
    bool threaded = sysconf(_SC_NPROCESSORS_ONLN) > 1 && pthread_create(&th, NULL, run_rest, &rest) == 0;
    int rc = scopes_and_hotspots(t, out);
    if (threaded)
        pthread_join(th, NULL);
    else
        run_rest(&rest);
    if (rc == 0)
        rc = rest.rc;
    if (rc != 0) {
        gpufl__ana_report_free(out);
        return rc;
    }
    return 0;
}

void gpufl__ana_report_free(gpufl__ana_report *r)
{
    if (!r)
        return;
    gpufl__ana_summary_free(&r->summary);
    gpufl__ana_scopes_free(&r->scopes);
    gpufl__ana_hotspots_free(&r->hotspots);
    gpufl__ana_copies_free(&r->copies);
    gpufl__ana_idle_free(&r->idle);
    gpufl__ana_launches_free(&r->launches);
    gpufl__ana_memory_free(&r->memory);
    gpufl__ana_counters_free(&r->counters);
    gpufl__ana_sass_free(&r->sass);
    gpufl__ana_ops_free(&r->ops);
    gpufl__ana_mem_layers_free(&r->mem_layers);
    gpufl__ana_mem_peaks_free(&r->mem_peaks);
    gpufl__ana_leaks_free(&r->leaks);
    gpufl__nccl_report_free(r->nccl);
    gpufl__ana_critpath_free(r->critpath);
    memset(r, 0, sizeof *r);
}
