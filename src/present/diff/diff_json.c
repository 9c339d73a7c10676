/*
 * `gpufl diff --format json` (diff_json.h): the result built with jansson.
 * Building stops at the first failed allocation: every helper returns NULL
 * then, and the caller frees what it had. Names and paths go through
 * gpufl__json_text(): they need not be UTF-8, and json_string() would fail
 * on them as if memory had run out.
 */
#include "present/diff/diff_json.h"

#include <stdint.h>

#include "core/utf8.h"
#include "present/diff/diff_pm.h"

/* json_object_set_new() that remembers a failure (a NULL value or a failed
 * set) in *ok. */
static void put(json_t *o, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(o, key, v) != 0)
        *ok = false;
}

static json_t *jint(int64_t v) { return json_integer((json_int_t)v); }

static json_t *ju64(uint64_t v) { return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v); }

/* delta in % of base, null when base is 0 */
static json_t *jpct(int64_t delta, uint64_t base)
{
    if (base == 0)
        return delta == 0 ? json_real(0.0) : json_null();
    return json_real((double)delta * 100.0 / (double)base);
}

static int64_t sdelta(uint64_t base, uint64_t cand)
{
    return cand >= base ? (int64_t)(cand - base) : -(int64_t)(base - cand);
}

static uint64_t nonneg(int64_t v) { return v > 0 ? (uint64_t)v : 0; }

static json_t *value(const gpufl__diff_value *v)
{
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok) {
        put(o, "baseline", ju64(v->base), &ok);
        put(o, "candidate", ju64(v->cand), &ok);
        put(o, "change_pct", jpct(sdelta(v->base, v->cand), v->base), &ok);
        put(o, "verdict", json_string(gpufl__diff_verdict_name(v->verdict)), &ok);
    }
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

static json_t *dist(const gpufl__ana_dist *d)
{
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok) {
        put(o, "n", ju64(d->n), &ok);
        put(o, "total_ns", jint(d->total), &ok);
        put(o, "mean_ns", json_real(d->mean), &ok);
        put(o, "min_ns", jint(d->min), &ok);
        put(o, "max_ns", jint(d->max), &ok);
        put(o, "p50_ns", jint(d->p50), &ok);
        put(o, "p95_ns", jint(d->p95), &ok);
    }
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

static json_t *flags(uint8_t f)
{
    static const struct {
        uint8_t bit;
        const char *name;
    } names[] = {{GPUFL__DIFF_F_COUNT, "count"},
                 {GPUFL__DIFF_F_CONFIG, "config"},
                 {GPUFL__DIFF_F_NOISE, "noise"},
                 {GPUFL__DIFF_F_SMALL, "small"}};
    json_t *a = json_array();
    for (size_t i = 0; a && i < sizeof names / sizeof names[0]; i++)
        if ((f & names[i].bit) && json_array_append_new(a, json_string(names[i].name)) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* The CHANGE fields of diff_json.h, into o. */
static void change(json_t *o, const gpufl__diff_change *ch, bool *ok)
{
    bool both = ch->presence == GPUFL__DIFF_BOTH;
    put(o, "presence", json_string(gpufl__diff_presence_name(ch->presence)), ok);
    put(o, "verdict", json_string(gpufl__diff_verdict_name(ch->verdict)), ok);
    put(o, "per_item", json_string(gpufl__diff_per_item_name(ch->per_item)), ok);
    put(o, "flags", flags(ch->flags), ok);
    put(o, "baseline", ch->presence != GPUFL__DIFF_NEW ? dist(&ch->base) : json_null(), ok);
    put(o, "candidate", ch->presence != GPUFL__DIFF_GONE ? dist(&ch->cand) : json_null(), ok);
    put(o, "total_change_ns", jint(ch->total_ns), ok);
    put(o, "total_change_pct", jpct(ch->total_ns, nonneg(ch->base.total)), ok);
    put(o, "p50_change_ns", both ? jint(ch->p50_ns) : json_null(), ok);
    put(o, "p50_change_pct", both ? jpct(ch->p50_ns, nonneg(ch->base.p50)) : json_null(), ok);
    put(o, "noise_ns", ch->noise_known ? ju64(ch->noise_ns) : json_null(), ok);
    put(o, "per_item_change_pct", both ? json_real(ch->item_pct) : json_null(), ok);
    put(o, "per_item_noise_pct", both && ch->noise_known ? json_real(ch->item_noise_pct) : json_null(), ok);
}

static json_t *config(const gpufl__ana_launch_config *c)
{
    return json_pack("{s:[I,I,I],s:[I,I,I],s:I,s:I,s:I,s:I}", "grid", (json_int_t)c->grid[0], (json_int_t)c->grid[1],
                     (json_int_t)c->grid[2], "block", (json_int_t)c->block[0], (json_int_t)c->block[1],
                     (json_int_t)c->block[2], "registers", (json_int_t)c->registers, "static_smem",
                     (json_int_t)c->static_smem, "dynamic_smem", (json_int_t)c->dynamic_smem, "local_mem",
                     (json_int_t)c->local_mem);
}

static json_t *kernel(const gpufl__diff_kernel *k)
{
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok) {
        put(o, "name", gpufl__json_text(k->name), &ok);
        change(o, &k->time, &ok);
        put(o, "matched_configs", ju64(k->matched_configs), &ok);
        put(o, "paired_configs", ju64(k->paired_configs), &ok);
        put(o, "paired_launches", ju64(k->paired_launches), &ok);
        put(o, "baseline_config", k->time.presence != GPUFL__DIFF_NEW ? config(&k->base_config) : json_null(), &ok);
        put(o, "candidate_config", k->time.presence != GPUFL__DIFF_GONE ? config(&k->cand_config) : json_null(), &ok);
    }
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

static json_t *scope(const gpufl__diff_scope *s)
{
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok) {
        put(o, "tree", json_string(s->tree == GPUFL__ANA_TREE_NVTX ? "nvtx" : "scopes"), &ok);
        put(o, "path", gpufl__json_text(s->path), &ok);
        put(o, "domain", gpufl__json_text(s->domain), &ok);
        put(o, "baseline_gpu_ns", ju64(s->base_gpu_ns), &ok);
        put(o, "candidate_gpu_ns", ju64(s->cand_gpu_ns), &ok);
        change(o, &s->wall, &ok);
    }
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

static json_t *device(const gpufl__diff_device *dv)
{
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok) {
        put(o, "device", ju64(dv->device), &ok);
        put(o, "name", gpufl__json_text(dv->name), &ok);
        put(o, "presence", json_string(gpufl__diff_presence_name(dv->presence)), &ok);
        put(o, "busy_ns", value(&dv->busy_ns), &ok);
        put(o, "idle_ns", value(&dv->idle_ns), &ok);
        put(o, "kernels", value(&dv->kernels), &ok);
    }
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

/* An array of n items made by make(items + i * size); NULL on failure. */
static json_t *array(const void *items, uint32_t n, size_t size, json_t *(*make)(const void *))
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, make((const char *)items + i * size)) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *pct_or_null(double v) { return v < 0 ? json_null() : json_real(v); }

static json_t *stall(const gpufl__diff_stall *s)
{
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok) {
        put(o, "kernel", s->kernel ? gpufl__json_text(s->kernel) : json_null(), &ok);
        put(o, "reason", gpufl__json_text(s->reason), &ok);
        put(o, "baseline_pct", pct_or_null(s->base_pct), &ok);
        put(o, "candidate_pct", pct_or_null(s->cand_pct), &ok);
        put(o, "baseline_top", s->kernel ? gpufl__json_text(s->base_top) : json_null(), &ok);
        put(o, "candidate_top", s->kernel ? gpufl__json_text(s->cand_top) : json_null(), &ok);
    }
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

static json_t *counter(const gpufl__diff_counter *k)
{
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok) {
        put(o, "scope", k->scope ? gpufl__json_text(k->scope) : json_null(), &ok);
        put(o, "metric", gpufl__json_text(k->metric), &ok);
        put(o, "baseline", json_real(k->base), &ok);
        put(o, "candidate", json_real(k->cand), &ok);
    }
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

static json_t *sass_row(const gpufl__diff_sass_row *s)
{
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok) {
        put(o, "kernel", gpufl__json_text(s->kernel), &ok);
        put(o, "metric", gpufl__json_text(s->metric), &ok);
        put(o, "baseline_pct", pct_or_null(s->base_pct), &ok);
        put(o, "candidate_pct", pct_or_null(s->cand_pct), &ok);
    }
    if (!ok)
        json_decref(o);
    return ok ? o : NULL;
}

static json_t *make_stall(const void *p) { return stall(p); }
static json_t *make_counter(const void *p) { return counter(p); }
static json_t *make_sass(const void *p) { return sass_row(p); }
static json_t *make_kernel(const void *p) { return kernel(p); }
static json_t *make_scope(const void *p) { return scope(p); }
static json_t *make_device(const void *p) { return device(p); }

json_t *gpufl__diff_json(const gpufl__diff *d, const char *baseline, const char *candidate)
{
    json_t *o = json_object(), *s = json_object();
    bool ok = o && s;
    if (ok) {
        put(o, "baseline", gpufl__json_text(baseline), &ok);
        put(o, "candidate", gpufl__json_text(candidate), &ok);
        put(o, "threshold_pct", json_real(d->options.threshold_pct), &ok);
        put(o, "min_impact_pct", json_real(d->options.min_impact_pct), &ok);
        put(o, "regressed", json_boolean(d->regressions > 0), &ok);
        put(o, "regressions", ju64(d->regressions), &ok);
        put(o, "improvements", ju64(d->improvements), &ok);
        put(o, "new_kernels", ju64(d->new_kernels), &ok);
        put(o, "gone_kernels", ju64(d->gone_kernels), &ok);
        put(o, "count_changes", ju64(d->count_changes), &ok);
        put(o, "kernels_partial", json_boolean(d->kernels_partial), &ok);
        put(s, "wall_ns", value(&d->wall_ns), &ok);
        put(s, "kernel_ns", value(&d->kernel_ns), &ok);
        put(s, "launches", value(&d->launches), &ok);
        put(o, "session", json_incref(s), &ok);
        put(o, "devices", array(d->devices, d->ndevices, sizeof *d->devices, make_device), &ok);
        put(o, "kernels", array(d->kernels, d->nkernels, sizeof *d->kernels, make_kernel), &ok);
        put(o, "scopes", array(d->scopes, d->nscopes, sizeof *d->scopes, make_scope), &ok);
        put(o, "stalls", d->stalls_compared ? array(d->stalls, d->nstalls, sizeof *d->stalls, make_stall) : json_null(),
            &ok);
        put(o, "counters",
            d->counters_compared ? array(d->counters, d->ncounters, sizeof *d->counters, make_counter) : json_null(),
            &ok);
        put(o, "pm", gpufl__diff_json_pm(d), &ok);
        put(o, "sass", d->sass_compared ? array(d->sass, d->nsass, sizeof *d->sass, make_sass) : json_null(), &ok);
    }
    json_decref(s);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}
