/*
 * The report as JSON (see report_json.h; schema: docs/REPORT.md). One
 * function per section, in the order of the document; names are written
 * as text (never as string ids, which mean nothing outside the trace).
 */
#include "present/report/report_json.h"

#include <stdlib.h>

#include "core/event.h"
#include "present/report/crash_text.h"
#include "present/report/jwriter.h"
#include "present/report/report_json_parts.h"

/* Decimals of the real numbers: fractions (share) and percentages. */
#define FRAC_DECIMALS 6
#define PCT_DECIMALS 3
#define GBPS_DECIMALS 3

typedef struct jctx {
    jw w;
    const gpufl_trace *t;
    const gpufl__ana_report *r;
} jctx;

static const char *str(const jctx *c, uint32_t id) { return gpufl_trace_string(c->t, id); }
/* a string id as text, or null for "none" */
static void jstr_id(jctx *c, const char *key, uint32_t id)
{
    if (id)
        gpufl__jw_str(&c->w, key, str(c, id));
    else
        gpufl__jw_null(&c->w, key);
}

static void dist(jctx *c, const char *key, const gpufl__ana_dist *d)
{
    gpufl__jw_obj(&c->w, key);
    gpufl__jw_u64(&c->w, "n", d->n);
    gpufl__jw_i64(&c->w, "total", d->total);
    gpufl__jw_i64(&c->w, "min", d->min);
    gpufl__jw_i64(&c->w, "max", d->max);
    gpufl__jw_i64(&c->w, "p50", d->p50);
    gpufl__jw_i64(&c->w, "p95", d->p95);
    gpufl__jw_real(&c->w, "mean", d->mean, 1);
    gpufl__jw_obj_end(&c->w);
}

/* ---- session ------------------------------------------------------------------ */

static void session(jctx *c)
{
    const gpufl_trace_info *in = gpufl_trace_get_info(c->t);
    const gpufl__ana_summary *s = &c->r->summary;
    jw *w = &c->w;
    gpufl__jw_obj(w, "session");
    jstr_id(c, "session_id", in->session_id);
    jstr_id(c, "app_name", in->app_name);
    gpufl__jw_i64(w, "pid", in->pid);
    jstr_id(c, "host", in->host);
    jstr_id(c, "gpufl_version", in->gpufl_version);
    gpufl__jw_str(w, "source_format", in->source_format == GPUFL_TRACE_GFLT ? "gflt" : "ndjson");
    gpufl__jw_u64(w, "format_version", in->format_version);
    gpufl__jw_u64(w, "start_ns", s->start_ns);
    gpufl__jw_u64(w, "start_wall_ns", in->start_wall_ns);
    gpufl__jw_u64(w, "end_ns", s->end_ns);
    gpufl__jw_u64(w, "wall_ns", s->wall_ns);
    gpufl__jw_bool(w, "ended", s->ended);
    jstr_id(c, "driver_version", in->driver_version);
    jstr_id(c, "cuda_driver_version", in->cuda_driver_version);
    jstr_id(c, "stop_reason", in->stop_reason);
    jstr_id(c, "stop_detail", in->stop_detail);
    const gpufl_trace_job *job = gpufl_trace_get_job(c->t);
    if (job->present) { /* the launcher's facts (docs/FORMAT.md, session.json's job) */
        gpufl__jw_obj(w, "job");
        jstr_id(c, "launcher", job->launcher);
        const struct {
            const char *key;
            uint32_t bit, value;
        } nums[] = {{"rank", GPUFL_TRACE_JOB_RANK, job->rank},
                    {"local_rank", GPUFL_TRACE_JOB_LOCAL_RANK, job->local_rank},
                    {"world_size", GPUFL_TRACE_JOB_WORLD_SIZE, job->world_size},
                    {"local_world_size", GPUFL_TRACE_JOB_LOCAL_WORLD_SIZE, job->local_world_size}};
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
            if (job->has & nums[k].bit)
                gpufl__jw_u64(w, nums[k].key, nums[k].value);
            else
                gpufl__jw_null(w, nums[k].key);
        jstr_id(c, "id", job->id);
        jstr_id(c, "step", job->step);
        jstr_id(c, "master", job->master);
        gpufl__jw_obj_end(w);
    } else {
        gpufl__jw_null(w, "job");
    }
    gpufl__jw_obj(w, "engine");
    jstr_id(c, "requested", in->engine_requested);
    jstr_id(c, "ran", in->engine);
    jstr_id(c, "plugin", in->engine_plugin);
    jstr_id(c, "reason", in->engine_reason);
    gpufl__jw_obj_end(w);
    gpufl__jw_arr(w, "devices");
    for (uint32_t i = 0; i < in->ndevices; i++) {
        const gpufl_trace_device *d = &in->devices[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "index", d->index);
        jstr_id(c, "name", d->name);
        jstr_id(c, "uuid", d->uuid);
        jstr_id(c, "pci_bus_id", d->pci_bus_id);
        if (d->cc_major >= 0) {
            char cc[32];
            snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
            gpufl__jw_str(w, "compute_capability", cc);
        } else {
            gpufl__jw_null(w, "compute_capability");
        }
        gpufl__jw_u64(w, "sm_count", d->sm_count);
        gpufl__jw_u64(w, "memory_total_bytes", d->memory_total_bytes);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}

static void options(jctx *c)
{
    const gpufl__ana_options *o = &c->r->options;
    gpufl__jw_obj(&c->w, "options");
    gpufl__jw_u64(&c->w, "top_kernels", o->top_kernels);
    gpufl__jw_u64(&c->w, "top_scopes", o->top_scopes);
    gpufl__jw_u64(&c->w, "top_stacks", o->top_stacks);
    gpufl__jw_u64(&c->w, "max_allocations", o->max_allocations);
    gpufl__jw_obj_end(&c->w);
}

/* ---- summary ------------------------------------------------------------------ */

static void device_summary(jctx *c, const gpufl__ana_device_summary *d)
{
    jw *w = &c->w;
    gpufl__jw_obj(w, NULL);
    gpufl__jw_u64(w, "device", d->device);
    jstr_id(c, "name", d->name);
    gpufl__jw_u64(w, "busy_ns", d->busy_ns);
    gpufl__jw_real(w, "busy_pct", d->busy_pct, PCT_DECIMALS);
    gpufl__jw_u64(w, "kernels", d->kernels);
    gpufl__jw_u64(w, "kernel_ns", d->kernel_ns);
    gpufl__jw_u64(w, "copies", d->copies);
    gpufl__jw_u64(w, "copy_bytes", d->copy_bytes);
    gpufl__jw_u64(w, "copy_ns", d->copy_ns);
    gpufl__jw_u64(w, "memsets", d->memsets);
    gpufl__jw_u64(w, "memset_bytes", d->memset_bytes);
    gpufl__jw_u64(w, "memset_ns", d->memset_ns);
    gpufl__jw_u64(w, "first_ns", d->first_ns);
    gpufl__jw_u64(w, "last_ns", d->last_ns);
    gpufl__jw_u64(w, "samples", d->samples);
    gpufl__jw_u64(w, "util_samples", d->util_samples);
    gpufl__jw_real(w, "util_mean_pct", d->util_mean_pct, PCT_DECIMALS);
    gpufl__jw_u64(w, "util_peak_pct", d->util_peak_pct);
    gpufl__jw_u64(w, "mem_samples", d->mem_samples);
    gpufl__jw_u64(w, "mem_used_peak_bytes", d->mem_used_peak_bytes);
    gpufl__jw_u64(w, "mem_used_peak_ns", d->mem_used_peak_ns);
    gpufl__jw_u64(w, "mem_total_bytes", d->mem_total_bytes);
    gpufl__jw_u64(w, "proc_mem_samples", d->proc_mem_samples);
    gpufl__jw_u64(w, "proc_mem_peak_bytes", d->proc_mem_peak_bytes);
    gpufl__jw_obj_end(w);
}

static void summary(jctx *c)
{
    const gpufl__ana_summary *s = &c->r->summary;
    jw *w = &c->w;
    gpufl__jw_obj(w, "summary");
    gpufl__jw_u64(w, "kernels", s->kernels);
    gpufl__jw_u64(w, "kernel_ns", s->kernel_ns);
    gpufl__jw_u64(w, "copies", s->copies);
    gpufl__jw_u64(w, "copy_bytes", s->copy_bytes);
    gpufl__jw_u64(w, "copy_ns", s->copy_ns);
    gpufl__jw_u64(w, "memsets", s->memsets);
    gpufl__jw_u64(w, "memset_bytes", s->memset_bytes);
    gpufl__jw_u64(w, "memset_ns", s->memset_ns);
    gpufl__jw_u64(w, "syncs", s->syncs);
    gpufl__jw_u64(w, "sync_ns", s->sync_ns);
    gpufl__jw_u64(w, "scopes", s->scopes);
    gpufl__jw_u64(w, "nvtx_ranges", s->nvtx_ranges);
    gpufl__jw_u64(w, "nvtx_marks", s->nvtx_marks);
    gpufl__jw_u64(w, "allocations", s->allocations);
    gpufl__jw_u64(w, "frees", s->frees);
    gpufl__jw_u64(w, "failed_allocations", s->failed_allocations);
    gpufl__jw_u64(w, "traced_ns", c->r->flight.traced_ns);
    gpufl__jw_u64(w, "dropped_total", s->dropped_total);
    gpufl__jw_obj(w, "dropped");
    for (unsigned i = 0; i < 16; i++) {
        if (!s->dropped[i])
            continue;
        char other[16];
        snprintf(other, sizeof other, "reason_%u", i);
        gpufl__jw_u64(w, i < GFL_DROP_REASON_COUNT ? gpufl__drop_reason_name((uint8_t)i) : other, s->dropped[i]);
    }
    gpufl__jw_obj_end(w);
    gpufl__jw_u64(w, "skipped_bytes", s->skipped_bytes);
    gpufl__jw_u64(w, "skipped_lines", s->skipped_lines);
    gpufl__jw_u64(w, "skipped_chunks", s->skipped_chunks);
    gpufl__jw_arr(w, "devices");
    for (uint32_t i = 0; i < s->ndevices; i++)
        device_summary(c, &s->devices[i]);
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}

/* ---- scopes -------------------------------------------------------------------- */

static void scope_path(jctx *c, const char *key, const gpufl__ana_scope_tree *tr, uint32_t i)
{
    char small[512];
    size_t n = gpufl__ana_scope_path(c->t, tr, i, "/", small, sizeof small);
    if (n < sizeof small) {
        gpufl__jw_str(&c->w, key, small);
        return;
    }
    char *big = malloc(n + 1);
    if (!big) {
        c->w.failed = true;
        return;
    }
    gpufl__ana_scope_path(c->t, tr, i, "/", big, n + 1);
    gpufl__jw_str(&c->w, key, big);
    free(big);
}

static void scope_node(jctx *c, const gpufl__ana_scope_tree *tr, uint32_t i)
{
    const gpufl__ana_scope_node *nd = &tr->nodes[i];
    jw *w = &c->w;
    gpufl__jw_obj(w, NULL);
    gpufl__jw_u64(w, "index", i);
    scope_path(c, "path", tr, i);
    jstr_id(c, "name", nd->name);
    jstr_id(c, "domain", nd->domain);
    if (nd->parent == GPUFL__ANA_NONE)
        gpufl__jw_null(w, "parent");
    else
        gpufl__jw_u64(w, "parent", nd->parent);
    gpufl__jw_u64(w, "depth", nd->depth);
    gpufl__jw_u64(w, "children", nd->children);
    gpufl__jw_u64(w, "count", nd->count);
    gpufl__jw_u64(w, "unended", nd->unended);
    gpufl__jw_u64(w, "threads", nd->threads);
    dist(c, "wall", &nd->wall);
    gpufl__jw_real(w, "share_of_parent", nd->share_of_parent, FRAC_DECIMALS);
    gpufl__jw_u64(w, "gpu_ns", nd->gpu_ns);
    gpufl__jw_u64(w, "gpu_self_ns", nd->gpu_self_ns);
    gpufl__jw_u64(w, "gpu_ops", nd->gpu_ops);
    gpufl__jw_u64(w, "gpu_self_ops", nd->gpu_self_ops);
    gpufl__jw_obj_end(w);
}

static void scope_tree(jctx *c, const char *key, const gpufl__ana_scope_tree *tr)
{
    jw *w = &c->w;
    gpufl__jw_obj(w, key);
    gpufl__jw_u64(w, "instances", tr->instances);
    gpufl__jw_u64(w, "roots", tr->roots);
    gpufl__jw_u64(w, "attributed_ns", tr->attributed_ns);
    gpufl__jw_u64(w, "attributed_ops", tr->attributed_ops);
    gpufl__jw_u64(w, "unattributed_ns", tr->unattributed_ns);
    gpufl__jw_u64(w, "unattributed_ops", tr->unattributed_ops);
    gpufl__jw_arr(w, "nodes");
    for (uint32_t i = 0; i < tr->n; i++)
        scope_node(c, tr, i);
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}

static void scopes(jctx *c)
{
    const gpufl__ana_scopes *s = &c->r->scopes;
    gpufl__jw_obj(&c->w, "scopes");
    scope_tree(c, "scopes", &s->trees[GPUFL__ANA_TREE_SCOPES]);
    scope_tree(c, "nvtx", &s->trees[GPUFL__ANA_TREE_NVTX]);
    gpufl__jw_u64(&c->w, "nvtx_marks", s->nvtx_marks);
    gpufl__jw_obj_end(&c->w);
}

/* ---- hotspots -------------------------------------------------------------------- */

static void launch_config(jctx *c, const gpufl__ana_launch_config *g)
{
    jw *w = &c->w;
    gpufl__jw_obj(w, "config");
    gpufl__jw_arr(w, "grid");
    for (int d = 0; d < 3; d++)
        gpufl__jw_u64(w, NULL, g->grid[d]);
    gpufl__jw_arr_end(w);
    gpufl__jw_arr(w, "block");
    for (int d = 0; d < 3; d++)
        gpufl__jw_u64(w, NULL, g->block[d]);
    gpufl__jw_arr_end(w);
    gpufl__jw_u64(w, "registers", g->registers);
    gpufl__jw_u64(w, "static_smem", g->static_smem);
    gpufl__jw_u64(w, "dynamic_smem", g->dynamic_smem);
    gpufl__jw_u64(w, "local_mem", g->local_mem);
    if (g->occupancy_x10000)
        gpufl__jw_real(w, "occupancy", g->occupancy_x10000 / 10000.0, 4);
    else
        gpufl__jw_null(w, "occupancy");
    if (g->limiter)
        gpufl__jw_str(w, "limiter", gpufl__limiter_name(g->limiter));
    else
        gpufl__jw_null(w, "limiter");
    gpufl__jw_obj_end(w);
}

static void hot_scopes(jctx *c, const char *key, const gpufl__ana_hotspot *h, int tree)
{
    const gpufl__ana_scope_tree *tr = &c->r->scopes.trees[tree];
    jw *w = &c->w;
    gpufl__jw_obj(w, key);
    gpufl__jw_arr(w, "nodes");
    for (uint32_t i = 0; i < h->nscopes[tree]; i++) {
        const gpufl__ana_hot_scope *s = &h->scopes[tree][i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "node", s->node);
        if (s->node < tr->n)
            scope_path(c, "path", tr, s->node);
        else
            gpufl__jw_null(w, "path");
        jstr_id(c, "name", s->name);
        gpufl__jw_u64(w, "launches", s->launches);
        gpufl__jw_u64(w, "gpu_ns", s->gpu_ns);
        gpufl__jw_real(w, "share", s->share, FRAC_DECIMALS);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_u64(w, "unscoped_ns", h->unscoped_ns[tree]);
    gpufl__jw_obj_end(w);
}

/* a module range's name as its path ("Net.fc"), or null for none */
static void jmodule(jctx *c, const char *key, uint32_t module)
{
    if (module)
        gpufl__jw_str(&c->w, key, gpufl__ana_module_path(str(c, module)));
    else
        gpufl__jw_null(&c->w, key);
}

static void hot_ops(jctx *c, const gpufl__ana_hotspot *h)
{
    jw *w = &c->w;
    gpufl__jw_obj(w, "ops");
    gpufl__jw_arr(w, "ops");
    for (uint32_t i = 0; i < h->nops; i++) {
        const gpufl__ana_hot_op *o = &h->ops[i];
        gpufl__jw_obj(w, NULL);
        jstr_id(c, "name", o->name);
        jmodule(c, "module", o->module);
        gpufl__jw_bool(w, "backward_only", o->backward_only);
        gpufl__jw_u64(w, "launches", o->launches);
        gpufl__jw_u64(w, "gpu_ns", o->gpu_ns);
        gpufl__jw_real(w, "share", o->share, FRAC_DECIMALS);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_u64(w, "outside_ns", h->unop_ns);
    gpufl__jw_obj_end(w);
}

static void hotspot(jctx *c, const gpufl__ana_hotspot *h)
{
    jw *w = &c->w;
    gpufl__jw_obj(w, NULL);
    jstr_id(c, "name", h->name);
    jstr_id(c, "mangled", h->mangled);
    dist(c, "dur", &h->dur);
    gpufl__jw_real(w, "share", h->share, FRAC_DECIMALS);
    launch_config(c, &h->config);
    gpufl__jw_u64(w, "config_launches", h->config_launches);
    gpufl__jw_u64(w, "configs", h->configs);
    gpufl__jw_u64(w, "devices", h->devices);
    gpufl__jw_u64(w, "streams", h->streams);
    hot_scopes(c, "scopes", h, GPUFL__ANA_TREE_SCOPES);
    hot_scopes(c, "nvtx", h, GPUFL__ANA_TREE_NVTX);
    hot_ops(c, h);
    gpufl__jw_arr(w, "stacks");
    for (uint32_t i = 0; i < h->nstacks; i++) {
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "stack", h->stacks[i].stack);
        gpufl__jw_u64(w, "launches", h->stacks[i].launches);
        gpufl__jw_u64(w, "gpu_ns", h->stacks[i].gpu_ns);
        gpufl__jw_real(w, "share", h->stacks[i].share, FRAC_DECIMALS);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_u64(w, "distinct_stacks", h->distinct_stacks);
    gpufl__jw_u64(w, "no_stack_launches", h->no_stack_launches);
    gpufl__jw_obj_end(w);
}

static void hotspots(jctx *c)
{
    const gpufl__ana_hotspots *hs = &c->r->hotspots;
    jw *w = &c->w;
    gpufl__jw_obj(w, "hotspots");
    gpufl__jw_u64(w, "distinct", hs->distinct);
    gpufl__jw_u64(w, "launches", hs->launches);
    gpufl__jw_u64(w, "total_ns", hs->total_ns);
    gpufl__jw_bool(w, "stack_frames", hs->stack_frames);
    gpufl__jw_arr(w, "kernels");
    for (uint32_t i = 0; i < hs->n; i++)
        hotspot(c, &hs->kernels[i]);
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}

/* ---- PyTorch ops ------------------------------------------------------------------ */

static void op_sums(jctx *c, const gpufl__ana_op *o)
{
    jw *w = &c->w;
    jstr_id(c, "name", o->name);
    gpufl__jw_bool(w, "backward_only", o->backward_only);
    gpufl__jw_u64(w, "calls", o->calls);
    gpufl__jw_u64(w, "backward_calls", o->backward_calls);
    gpufl__jw_u64(w, "kernels", o->kernels);
    gpufl__jw_u64(w, "work", o->work);
    gpufl__jw_u64(w, "forward_ns", o->forward_ns);
    gpufl__jw_u64(w, "backward_ns", o->backward_ns);
    gpufl__jw_u64(w, "total_ns", o->total_ns);
    gpufl__jw_u64(w, "allocs", o->allocs);
    gpufl__jw_u64(w, "alloc_bytes", o->alloc_bytes);
    gpufl__jw_real(w, "share", o->share, FRAC_DECIMALS);
}

static void ops(jctx *c)
{
    const gpufl__ana_ops *o = &c->r->ops;
    jw *w = &c->w;
    gpufl__jw_obj(w, "ops");
    gpufl__jw_u64(w, "op_ranges", o->op_ranges);
    gpufl__jw_u64(w, "backward_ranges", o->backward_ranges);
    gpufl__jw_u64(w, "module_ranges", o->module_ranges);
    gpufl__jw_u64(w, "work", o->work);
    gpufl__jw_u64(w, "work_ns", o->work_ns);
    gpufl__jw_u64(w, "in_ops", o->in_ops);
    gpufl__jw_u64(w, "in_ops_ns", o->in_ops_ns);
    gpufl__jw_u64(w, "forward_ns", o->forward_ns);
    gpufl__jw_u64(w, "backward_ns", o->backward_ns);
    gpufl__jw_u64(w, "outside", o->outside);
    gpufl__jw_u64(w, "outside_ns", o->outside_ns);
    gpufl__jw_u64(w, "allocs", o->allocs);
    gpufl__jw_u64(w, "alloc_bytes", o->alloc_bytes);
    gpufl__jw_u64(w, "outside_allocs", o->outside_allocs);
    gpufl__jw_u64(w, "outside_alloc_bytes", o->outside_alloc_bytes);
    gpufl__jw_arr(w, "ops");
    for (uint32_t i = 0; i < o->n; i++) {
        gpufl__jw_obj(w, NULL);
        op_sums(c, &o->ops[i]);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_arr(w, "modules");
    for (uint32_t m = 0; m < o->nmodules; m++) {
        const gpufl__ana_op_module *md = &o->modules[m];
        gpufl__jw_obj(w, NULL);
        jmodule(c, "module", md->module);
        gpufl__jw_u64(w, "kernels", md->kernels);
        gpufl__jw_u64(w, "work", md->work);
        gpufl__jw_u64(w, "forward_ns", md->forward_ns);
        gpufl__jw_u64(w, "backward_ns", md->backward_ns);
        gpufl__jw_u64(w, "total_ns", md->total_ns);
        gpufl__jw_u64(w, "allocs", md->allocs);
        gpufl__jw_u64(w, "alloc_bytes", md->alloc_bytes);
        gpufl__jw_real(w, "share", md->share, FRAC_DECIMALS);
        gpufl__jw_arr(w, "ops");
        for (uint32_t i = 0; i < md->nops; i++) {
            gpufl__jw_obj(w, NULL);
            op_sums(c, &o->module_ops[md->first + i]);
            gpufl__jw_obj_end(w);
        }
        gpufl__jw_arr_end(w);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}

/* ---- copies, idle, launches ------------------------------------------------------- */

static const char *peak_source_name(uint8_t s)
{
    switch (s) {
    case GPUFL__ANA_PEAK_PCIE: return "pcie";
    case GPUFL__ANA_PEAK_HBM: return "memory";
    default: return NULL;
    }
}

static void copies(jctx *c)
{
    const gpufl__ana_copies *cp = &c->r->copies;
    jw *w = &c->w;
    gpufl__jw_obj(w, "copies");
    gpufl__jw_u64(w, "count", cp->count);
    gpufl__jw_u64(w, "bytes", cp->bytes);
    gpufl__jw_u64(w, "ns", cp->ns);
    gpufl__jw_u64(w, "memsets", cp->memsets);
    gpufl__jw_u64(w, "memset_bytes", cp->memset_bytes);
    gpufl__jw_u64(w, "memset_ns", cp->memset_ns);
    gpufl__jw_arr(w, "rows");
    for (uint32_t i = 0; i < cp->n; i++) {
        const gpufl__ana_copy_row *r = &cp->rows[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "device", r->device);
        gpufl__jw_str(w, "kind", gpufl__copy_kind_name(r->kind));
        gpufl__jw_u64(w, "count", r->count);
        gpufl__jw_u64(w, "bytes", r->bytes);
        gpufl__jw_u64(w, "ns", r->ns);
        dist(c, "size", &r->size);
        gpufl__jw_real(w, "gbps", r->gbps, GBPS_DECIMALS);
        gpufl__jw_u64(w, "pageable_count", r->pageable_count);
        gpufl__jw_u64(w, "pageable_bytes", r->pageable_bytes);
        gpufl__jw_real(w, "peak_gbps", r->peak_gbps, GBPS_DECIMALS);
        gpufl__jw_str(w, "peak_source", peak_source_name(r->peak_source));
        gpufl__jw_u64(w, "pcie_gen", r->pcie_gen);
        gpufl__jw_u64(w, "pcie_width", r->pcie_width);
        gpufl__jw_str(w, "peak_table", r->peak_table);
        gpufl__jw_real(w, "pct_of_peak", r->pct_of_peak, PCT_DECIMALS);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}

static void idle(jctx *c)
{
    const gpufl__ana_idle *id = &c->r->idle;
    jw *w = &c->w;
    gpufl__jw_arr(w, "idle");
    for (uint32_t i = 0; i < id->n; i++) {
        const gpufl__ana_idle_row *r = &id->rows[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "device", r->device);
        if (r->stream == GPUFL__ANA_ALL_STREAMS)
            gpufl__jw_null(w, "stream");
        else
            gpufl__jw_u64(w, "stream", r->stream);
        gpufl__jw_u64(w, "ops", r->ops);
        gpufl__jw_u64(w, "first_ns", r->first_ns);
        gpufl__jw_u64(w, "last_ns", r->last_ns);
        gpufl__jw_u64(w, "busy_ns", r->busy_ns);
        gpufl__jw_u64(w, "idle_ns", r->idle_ns);
        gpufl__jw_u64(w, "gaps", r->gaps);
        gpufl__jw_u64(w, "host_ns", r->host_ns);
        gpufl__jw_u64(w, "sync_ns", r->sync_ns);
        gpufl__jw_u64(w, "other_ns", r->other_ns);
        gpufl__jw_u64(w, "lead_ns", r->lead_ns);
        gpufl__jw_u64(w, "tail_ns", r->tail_ns);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

static void launches(jctx *c)
{
    const gpufl__ana_launches *l = &c->r->launches;
    jw *w = &c->w;
    gpufl__jw_obj(w, "launches");
    gpufl__jw_u64(w, "kernels", l->kernels);
    gpufl__jw_u64(w, "with_api", l->with_api);
    dist(c, "latency", &l->latency);
    dist(c, "queue", &l->queue);
    dist(c, "call", &l->call);
    gpufl__jw_u64(w, "short_kernels", l->short_kernels);
    gpufl__jw_u64(w, "short_kernel_ns", l->short_kernel_ns);
    gpufl__jw_obj_end(w);
}

/* ---- memory and counters ------------------------------------------------------------ */

void gpufl__rj_allocations(jw *w, const gpufl_trace *t, const char *key, uint32_t n, const gpufl__ana_allocation *list)
{
    gpufl__jw_arr(w, key);
    for (uint32_t i = 0; i < n; i++) {
        const gpufl__ana_allocation *a = &list[i];
        char addr[24];
        snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)a->address);
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "ts_ns", a->ts_ns);
        gpufl__jw_str(w, "address", addr);
        gpufl__jw_u64(w, "bytes", a->bytes);
        gpufl__jw_str(w, "kind", gpufl__mem_kind_name(a->kind));
        gpufl__jw_u64(w, "tid", a->tid);
        gpufl__jw_u64(w, "scope", a->scope);
        if (a->nvtx)
            gpufl__jw_str(w, "nvtx", gpufl_trace_string(t, a->nvtx));
        else
            gpufl__jw_null(w, "nvtx");
        gpufl__jw_u64(w, "stack", a->stack);
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
}

void gpufl__rj_memory(jw *w, const gpufl_trace *t, const gpufl__ana_memory *m)
{
    gpufl__jw_obj(w, "memory");
    gpufl__jw_bool(w, "recorded", m->recorded);
    gpufl__jw_arr(w, "rows");
    for (uint32_t i = 0; i < m->n; i++) {
        const gpufl__ana_mem_row *r = &m->rows[i];
        gpufl__jw_obj(w, NULL);
        gpufl__jw_u64(w, "device", r->device);
        gpufl__jw_str(w, "space", gpufl__ana_space_name(r->space));
        gpufl__jw_u64(w, "allocs", r->allocs);
        gpufl__jw_u64(w, "alloc_bytes", r->alloc_bytes);
        gpufl__jw_u64(w, "frees", r->frees);
        gpufl__jw_u64(w, "free_bytes", r->free_bytes);
        gpufl__jw_u64(w, "peak_bytes", r->peak_bytes);
        gpufl__jw_u64(w, "peak_ns", r->peak_ns);
        gpufl__jw_u64(w, "live_at_peak", r->live_at_peak);
        gpufl__rj_allocations(w, t, "live", r->nlive, r->live);
        gpufl__jw_u64(w, "end_bytes", r->end_bytes);
        gpufl__jw_u64(w, "never_freed", r->never_freed);
        gpufl__jw_u64(w, "never_freed_bytes", r->never_freed_bytes);
        gpufl__rj_allocations(w, t, "leaks", r->nleaks, r->leaks);
        gpufl__jw_u64(w, "unmatched_frees", r->unmatched_frees);
        gpufl__jw_u64(w, "unmatched_free_bytes", r->unmatched_free_bytes);
        gpufl__jw_str(w, "never_freed_why", gpufl__ana_never_freed_key(r->never_freed_why));
        gpufl__jw_obj_end(w);
    }
    gpufl__jw_arr_end(w);
    gpufl__jw_obj_end(w);
}

static void counters(jctx *c)
{
    const gpufl__ana_counters *k = &c->r->counters;
    gpufl__jw_obj(&c->w, "counters");
    gpufl__rj_stalls(&c->w, c->t, &k->stalls, &k->pcs);
    gpufl__rj_sass(&c->w, c->t, &k->sass, &c->r->sass);
    gpufl__rj_hw(&c->w, c->t, &k->hw, &k->ranges);
    gpufl__jw_obj_end(&c->w);
}

int gpufl__report_json(const gpufl_trace *t, const gpufl__ana_report *r, FILE *out)
{
    jctx c = {.t = t, .r = r};
    gpufl__jw_init(&c.w);
    gpufl__jw_obj(&c.w, NULL);
    gpufl__jw_str(&c.w, "schema", GPUFL_REPORT_JSON_SCHEMA);
    gpufl__jw_u64(&c.w, "schema_version", GPUFL_REPORT_JSON_VERSION);
    session(&c);
    gpufl__crash_render_json(t, &c.w, "crash");
    options(&c);
    summary(&c);
    scopes(&c);
    ops(&c);
    hotspots(&c);
    copies(&c);
    idle(&c);
    launches(&c);
    gpufl__rj_memory(&c.w, t, &r->memory);
    counters(&c);
    gpufl__rj_flight(&c.w, t, r);
    gpufl__rj_memory_layers(&c.w, t, &r->mem_layers);
    gpufl__rj_memory_peaks(&c.w, t, &r->mem_peaks);
    gpufl__rj_leaks(&c.w, t, &r->leaks, NULL);
    gpufl__rj_pm(&c.w, t);
    gpufl__rj_nccl(&c.w, r);
    gpufl__rj_critpath(&c.w, t, r);
    gpufl__jw_obj_end(&c.w);
    int rc = gpufl__jw_finish(&c.w);
    if (rc == 0 && (fwrite(c.w.buf, 1, c.w.n, out) != c.w.n || fflush(out) != 0))
        rc = GPUFL_EIO;
    gpufl__jw_free(&c.w);
    return rc;
}
