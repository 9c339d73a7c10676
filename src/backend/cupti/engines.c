/*
 * The engines above Trace and the choice between them (see engines.h).
 */
#include "backend/cupti/engines.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "backend/cupti/cubin_store.h"
#include "backend/cupti/driver_api.h"
#include "backend/cupti/pc_sampling.h"
#include "backend/cupti/pm_source.h"
#include "backend/cupti/range_profiler.h"
#include "backend/cupti/sass_metrics.h"

static struct {
    const gpufl_plugin_host *host;
    const gfl_cupti_api *api;
    gpufl_engine ran;      /* the engine now recording */
    _Atomic bool stepping; /* a step down under way, from a callback */
} E;

static bool wants_pcs(gpufl_engine e) { return e == GPUFL_ENGINE_PC_SAMPLING || e == GPUFL_ENGINE_DEEP; }
static bool wants_rp(void) { return E.ran == GPUFL_ENGINE_RANGE_PROFILER; }
static bool wants_sass(gpufl_engine e) { return e == GPUFL_ENGINE_SASS_METRICS || e == GPUFL_ENGINE_DEEP; }

/* The session records with `engine` from now on, for `reason`. */
static void step_down(gpufl_engine engine, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step_down(gpufl_engine engine, const char *fmt, ...)
{
    char reason[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    E.ran = engine;
    const gpufl_plugin_host *h = E.host;
    if (h->size >= offsetof(gpufl_plugin_host, engine_ran) + sizeof h->engine_ran && h->engine_ran)
        h->engine_ran(engine, reason);
    else
        h->log(GFL_LOG_WARN, reason);
}

void gfl_engines_init(const gpufl_plugin_host *host, const gfl_cupti_api *api)
{
    E.host = host;
    E.api = api;
    E.ran = host->options->profiling_engine;
    atomic_store(&E.stepping, false);
    /* the files line info names, for the session's sources/ copy */
    void (*note)(const char *) = NULL;
    if (host->options->enable_source_collection &&
        host->size >= offsetof(gpufl_plugin_host, source_file) + sizeof host->source_file)
        note = host->source_file;
    gfl_cubins_init(api, host->log, note);
}

bool gfl_engines_serial_kernels(void) { return wants_sass(E.ran); }

bool gfl_engines_worker_may_flush(void) { return !atomic_load(&gfl_sass_metrics_on); }

bool gfl_engines_unflushed(gpufl_engine e) { return wants_sass(e); }

int gfl_engines_callbacks(const gfl_cupti_api *api, CUpti_SubscriberHandle sub, char *err, size_t err_len)
{
    if (wants_rp()) {
        /* the first context is the one profiled; its ranges are decoded before it goes */
        static const CUpti_CallbackId rp_ids[] = {CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                                  CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING};
        for (size_t i = 0; i < sizeof rp_ids / sizeof *rp_ids; i++) {
            CUptiResult rc = api->cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, rp_ids[i]);
            if (rc != CUPTI_SUCCESS) {
                snprintf(err, err_len, "cannot follow CUDA contexts for the range profiler: %s",
                         gfl_cupti_error(api, rc));
                return -1;
            }
        }
        return 0;
    }
    if (!wants_pcs(E.ran) && !wants_sass(E.ran))
        return 0;
    /* SASS metrics need only the modules (source lines): contexts are
     * enabled at their first launch, and the plugin follows their end */
    static const CUpti_CallbackId ids[] = {CUPTI_CBID_RESOURCE_MODULE_LOADED, CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                           CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING};
    size_t n = wants_pcs(E.ran) ? sizeof ids / sizeof *ids : 1;
    for (size_t i = 0; i < n; i++) {
        CUptiResult rc = api->cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, ids[i]);
        if (rc != CUPTI_SUCCESS) {
            snprintf(err, err_len, "cannot follow CUDA contexts and modules for %s: %s",
                     wants_pcs(E.ran) ? "PC sampling" : "SASS metrics", gfl_cupti_error(api, rc));
            return -1;
        }
    }
    return 0;
}

/* A context SASS metrics cannot measure (the launching thread): the
 * session steps down, deep to pc_sampling, sass_metrics to trace. */
static void sass_refused(const char *why)
{
    if (atomic_exchange(&E.stepping, true))
        return;
    gfl_sass_metrics_stop_here();
    if (E.ran == GPUFL_ENGINE_DEEP)
        step_down(GPUFL_ENGINE_PC_SAMPLING, "deep: %s; recording pc_sampling from here on", why);
    else
        step_down(GPUFL_ENGINE_TRACE, "%s; recording as trace from here on", why);
    atomic_store(&E.stepping, false); /* deep's PC sampling may still step down to trace */
}

/* The SASS metrics engine, for sass_metrics or deep. Returns false when
 * it cannot run, the session stepped down. */
static bool start_sass(void)
{
    char err[512];
    if (gfl_sass_metrics_start(E.api, E.host, sass_refused, err, sizeof err) == 0)
        return true;
    if (E.ran == GPUFL_ENGINE_DEEP)
        step_down(GPUFL_ENGINE_PC_SAMPLING, "deep: %s; recording pc_sampling", err);
    else
        step_down(GPUFL_ENGINE_TRACE, "%s; recording as trace", err);
    return false;
}

/* Whether CUDA contexts exist already (gpufl started after the program's
 * first CUDA call): a primary context is active, or the calling thread has
 * a context current (one made with cuCtxCreate). */
static bool contexts_exist(void)
{
    const gfl_driver_api *d = gfl_driver();
    int n = 0;
    if (!d || d->cuDeviceGetCount(&n) != CUDA_SUCCESS)
        return false;
    for (int i = 0; i < n; i++) {
        CUdevice dev;
        unsigned flags = 0;
        int active = 0;
        if (d->cuDeviceGet(&dev, i) == CUDA_SUCCESS &&
            d->cuDevicePrimaryCtxGetState(dev, &flags, &active) == CUDA_SUCCESS && active)
            return true;
    }
    CUcontext c = NULL;
    return d->cuCtxGetCurrent(&c) == CUDA_SUCCESS && c;
}

static void start_pcs(bool resumed)
{
    const gpufl_options *o = E.host->options;
    gfl_pcs_config cfg = {
        .host = E.host,
        .api = E.api,
        .period = o->pc_sampling_period,
        .source_lines = o->enable_source_collection,
    };
    bool late = false;
    char err[512];
    if (gfl_pcs_start(&cfg, &late, err, sizeof err) != 0) {
        if (E.ran == GPUFL_ENGINE_DEEP)
            gfl_sass_metrics_stop(false);
        step_down(GPUFL_ENGINE_TRACE, "%s; recording as trace", err);
        return;
    }
    if (late && !resumed && o->enable_source_collection)
        E.host->log(GFL_LOG_INFO, "PC sampling started after the program's first CUDA context: kernels of "
                                  "modules loaded before gpufl started have no source lines");
}

/* Called under the range profiler's lock, at most once a start. */
static void rp_failed(const char *reason)
{
    if (!atomic_exchange(&E.stepping, true))
        step_down(GPUFL_ENGINE_TRACE, "%s; recording as trace from here on", reason);
}

static void start_rp(bool resumed)
{
    const gpufl_options *o = E.host->options;
    if (gfl_pm_source_wanted(o)) {
        step_down(GPUFL_ENGINE_TRACE, "range_profiler: PM sampling (pm_sampling_metrics) and the range profiler "
                                      "both need the GPU's performance counters; PM sampling was asked for and "
                                      "keeps them: recording as trace");
        return;
    }
    atomic_store(&E.stepping, false);
    gfl_rp_config cfg = {
        .host = E.host,
        .api = E.api,
        .metrics = o->range_profiler_metrics,
        .nvtx = o->range_profiler_nvtx,
        .failed = rp_failed,
    };
    char err[640];
    if (gfl_rp_start(&cfg, !resumed && contexts_exist(), err, sizeof err) != 0)
        step_down(GPUFL_ENGINE_TRACE, "%s; recording as trace", err);
}

void gfl_engines_start(bool resumed)
{
    gpufl_engine asked = E.ran;
    if (asked == GPUFL_ENGINE_RANGE_PROFILER) {
        start_rp(resumed);
        return;
    }
    /* Deep started late steps down to its production-safe half, as the
     * profiler-API engines of the tool gpufl follows do: instrumenting a
     * running program's kernels would count them from the middle of its
     * work on. (sass_metrics alone does start late: on an H100 CUPTI
     * counted a context that existed before the profiler was initialized,
     * and refused cuptiProfilerInitialize before any context existed,
     * counting all the same.) */
    if (asked == GPUFL_ENGINE_DEEP && !resumed && contexts_exist())
        step_down(GPUFL_ENGINE_PC_SAMPLING, "deep: gpufl started after the program's first CUDA context, so SASS "
                                            "metrics would miss the kernels before; recording pc_sampling");
    /* PC sampling and SASS metrics together used to hang the program's
     * first kernel launch inside libcupti (H100, CUDA 13.0, driver 580):
     * the worker's own periodic flush deadlocked against SASS metrics'
     * patching (gfl_engines_worker_may_flush). Without that flush, 24 of
     * 24 runs of the two deep GPU tests ran both halves (2026-11-27). */
    if (wants_sass(E.ran))
        (void)start_sass(); /* else stepped down: deep to pc_sampling, sass_metrics to trace */
    if (wants_pcs(E.ran))
        start_pcs(resumed);
    /* Said where the user reads it, as the session starts: the crash is
     * CUPTI's (cuptiPCSamplingGetData duplicating a null function name,
     * on gpufl's worker), gpufl cannot catch it without leaving CUPTI's
     * locks held, and the crash record names it when it happens. */
    if (E.ran == GPUFL_ENGINE_DEEP)
        E.host->log(GFL_LOG_WARN,
                    "deep: with PC sampling and SASS metrics both on, CUPTI (13.0.1, H100) crashed the program in "
                    "5 of 62 ResNet-50 sessions (SIGSEGV inside cuptiPCSamplingGetData); use deep for a few "
                    "steps you can run again, never on a job you cannot lose");
}

void gfl_engines_resource(CUpti_CallbackId cbid, const void *data)
{
    const CUpti_ResourceData *r = data;
    if (r && wants_rp()) {
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
            gfl_rp_context_created(r->context);
        else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
            gfl_rp_context_destroying(r->context);
        return;
    }
    if (!r || (!wants_pcs(E.ran) && !wants_sass(E.ran)))
        return;
    switch (cbid) {
    case CUPTI_CBID_RESOURCE_MODULE_LOADED: {
        const CUpti_ModuleResourceData *m = r->resourceDescriptor;
        if (m && E.host->options->enable_source_collection)
            (void)gfl_cubins_add(m->pCubin, m->cubinSize);
        break;
    }
    case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
        if (wants_pcs(E.ran))
            gfl_pcs_collect_context(r->context, false);
        break;
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
        gfl_sass_metrics_context_destroying(r->context);
        if (wants_pcs(E.ran))
            gfl_pcs_context_destroying(r->context);
        break;
    case CUPTI_CBID_RESOURCE_CONTEXT_CREATED: {
        char err[512];
        if (wants_pcs(E.ran) && gfl_pcs_context_created(r->context, err, sizeof err) != 0 &&
            !atomic_exchange(&E.stepping, true)) {
            gfl_pcs_stop(true);
            gfl_sass_metrics_stop_here();
            step_down(GPUFL_ENGINE_TRACE, "%s; recording as trace from here on", err);
        }
        break;
    }
    default: break;
    }
}

void gfl_engines_collect(void)
{
    if (wants_pcs(E.ran))
        gfl_pcs_collect_all(true);
}

void gfl_engines_scope(bool begin, uint64_t scope_id, uint32_t name)
{
    if (wants_rp())
        gfl_rp_scope(begin, scope_id, name);
}

void gfl_engines_nvtx(bool push, uint32_t name)
{
    if (wants_rp())
        gfl_rp_nvtx(push, name);
}

void gfl_engines_stop(bool disable_too)
{
    gfl_pcs_stop(disable_too);
    gfl_rp_stop();
    gfl_sass_metrics_stop(!disable_too);
}

void gfl_engines_end(void)
{
    size_t n = 0, bytes = 0;
    gfl_cubins_stats(&n, &bytes);
    if (n) {
        char msg[160];
        snprintf(msg, sizeof msg, "source lines: %zu modules (%.1f MiB) were kept for PC sampling and SASS metrics", n,
                 (double)bytes / 1048576.0);
        E.host->log(GFL_LOG_DEBUG, msg);
    }
    gfl_cubins_clear();
}
