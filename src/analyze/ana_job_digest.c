/*
 * A rank's digest (ana_job.h): what the job analyses need of its session,
 * taken in one pass over its kernels, so that the session can be closed
 * before the next rank's is opened.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_job.h"
#include "analyze/ana_nccl.h"
#include "analyze/ana_util.h"
#include "gpufl/gpufl.h"

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

uint32_t gpufl__job_str(gpufl__job_rank *r, const char *s)
{
    if (!s || !*s)
        return 0;
    for (size_t i = 1; i < r->nstr; i++) /* a rank's names are few hundred; lookups are per name, not per row */
        if (!strcmp(r->str[i], s))
            return (uint32_t)i;
    char **q = realloc(r->str, (r->nstr + 1) * sizeof *q);
    if (!q)
        return 0;
    r->str = q;
    if (!(r->str[r->nstr] = strdup(s)))
        return 0;
    return (uint32_t)r->nstr++;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t median_i64(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    return v[n / 2];
}

/* Session clock to CLOCK_MONOTONIC and CLOCK_REALTIME: the median over the
 * clock pairs (one pair taken while the clock was being stepped does not
 * move it); without pairs (an older gpufl) the session's start. */
static int read_clocks(const gpufl_trace *t, gpufl__job_rank *r)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    const gpufl_trace_clocks *c = gpufl_trace_get_clocks(t);
    r->ntp_maxerror_ns = GPUFL_JOB_UNKNOWN_ERROR;
    if (!c || c->n == 0) {
        r->wall_offset_ns = (int64_t)(info->start_wall_ns - info->start_ns);
        r->clock_uncertainty_ns = 1000000; /* start_wall_ns and start_ns are not read together */
        return 0;
    }
    int64_t *mono = malloc(c->n * sizeof *mono), *wall = malloc(c->n * sizeof *wall);
    if (!mono || !wall) {
        free(mono);
        free(wall);
        return GPUFL_ENOMEM;
    }
    for (size_t i = 0; i < c->n; i++) {
        mono[i] = (int64_t)(c->mono_ns[i] - c->ts_ns[i]);
        wall[i] = (int64_t)(c->wall_ns[i] - c->ts_ns[i]);
        if (c->uncertainty_ns[i] > r->clock_uncertainty_ns)
            r->clock_uncertainty_ns = c->uncertainty_ns[i];
        const char *ntp = gpufl_trace_string(t, c->ntp[i]);
        if (!strcmp(ntp, "synchronised")) {
            r->ntp_synchronised = true;
            if (r->ntp_maxerror_ns == GPUFL_JOB_UNKNOWN_ERROR || c->ntp_maxerror_ns[i] > r->ntp_maxerror_ns)
                r->ntp_maxerror_ns = c->ntp_maxerror_ns[i];
        }
    }
    r->has_mono = true;
    r->mono_offset_ns = median_i64(mono, c->n);
    r->wall_offset_ns = median_i64(wall, c->n);
    free(mono);
    free(wall);
    return 0;
}

static int read_identity(const gpufl_trace *t, const char *path, gpufl__job_rank *r)
{
    const gpufl_trace_info *info = gpufl_trace_get_info(t);
    const gpufl_trace_job *j = gpufl_trace_get_job(t);
    r->rank = r->local_rank = r->world_size = -1;
    if (j->present) {
        if (j->has & GPUFL_TRACE_JOB_RANK)
            r->rank = j->rank;
        if (j->has & GPUFL_TRACE_JOB_LOCAL_RANK)
            r->local_rank = j->local_rank;
        if (j->has & GPUFL_TRACE_JOB_WORLD_SIZE)
            r->world_size = j->world_size;
    }
    const char *host = j->present && j->host ? gpufl_trace_string(t, j->host) : gpufl_trace_string(t, info->host);
    r->path = strdup(path);
    r->host = dup_or_empty(host);
    r->job_id = dup_or_empty(j->present ? gpufl_trace_string(t, j->id) : "");
    r->launcher = dup_or_empty(j->present ? gpufl_trace_string(t, j->launcher) : "");
    r->session_id = dup_or_empty(gpufl_trace_string(t, info->session_id));
    r->pid = info->pid;
    r->start_ns = info->start_ns;
    r->end_ns = info->end_ns ? info->end_ns : info->last_ns;
    r->start_wall_ns = info->start_wall_ns;
    return r->path && r->host && r->job_id && r->launcher && r->session_id ? 0 : GPUFL_ENOMEM;
}

static bool names_step(const char *s)
{
    for (; *s; s++)
        if (tolower((unsigned char)s[0]) == 's' && !strncasecmp(s, "step", 4))
            return true;
    return false;
}

static int by_begin(const void *a, const void *b)
{
    const gpufl__job_step *x = a, *y = b;
    return (x->begin_ns > y->begin_ns) - (x->begin_ns < y->begin_ns);
}

/* Steps: the outermost scope name that repeats most, one whose name says
 * "step" first (a training loop's "train_step" over a one-off "setup"). */
static int read_steps(const gpufl_trace *t, gpufl__job_rank *r)
{
    const gpufl_trace_scopes *s = gpufl_trace_get_scopes(t);
    if (!s || !s->n)
        return 0;
    /* outermost scopes as (name, row), sorted: each name's run gives its count and its first row */
    uint64_t *key = malloc(s->n * sizeof *key);
    if (!key)
        return GPUFL_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->depth[i] == 0)
            key[m++] = (uint64_t)s->name[i] << 32 | (uint32_t)i;
    if (gpufl__ana_sort_u64(key, m, NULL) != 0) {
        free(key);
        return GPUFL_ENOMEM;
    }
    uint32_t best = 0;
    size_t best_n = 0, best_first = SIZE_MAX;
    bool best_step = false;
    for (size_t i = 0; i < m;) {
        uint32_t name = (uint32_t)(key[i] >> 32);
        size_t first = (uint32_t)key[i], end = i;
        while (end < m && (uint32_t)(key[end] >> 32) == name)
            end++;
        size_t cnt = end - i;
        i = end;
        bool step = names_step(gpufl_trace_string(t, name));
        /* a name that says "step" first, then the most repeated, then the first to appear */
        if (cnt >= 2 &&
            ((step && !best_step) || (step == best_step && (cnt > best_n || (cnt == best_n && first < best_first))))) {
            best = name;
            best_n = cnt;
            best_first = first;
            best_step = step;
        }
    }
    free(key);
    if (!best)
        return 0;
    if (!(r->steps = malloc(best_n * sizeof *r->steps)))
        return GPUFL_ENOMEM;
    for (size_t i = 0; i < s->n; i++)
        if (s->depth[i] == 0 && s->name[i] == best)
            r->steps[r->nsteps++] = (gpufl__job_step){s->begin_ns[i], s->end_ns[i]};
    qsort(r->steps, r->nsteps, sizeof *r->steps, by_begin);
    r->step_name = gpufl__job_str(r, gpufl_trace_string(t, best));
    return 0;
}

/* The step holding time ts, from 1; 0 none. */
static uint32_t step_at(const gpufl__job_rank *r, uint64_t ts)
{
    size_t lo = 0, hi = r->nsteps;
    while (lo < hi) { /* the last step beginning at or before ts */
        size_t mid = (lo + hi) / 2;
        if (r->steps[mid].begin_ns <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && ts < r->steps[lo - 1].end_ns ? (uint32_t)lo : 0;
}

uint64_t gpufl__job_step_gap(const gpufl__job_rank *r, uint32_t step)
{
    if (step < 2 || step > r->nsteps)
        return 0;
    const gpufl__job_step *prev = &r->steps[step - 2], *cur = &r->steps[step - 1];
    return cur->begin_ns > prev->end_ns ? cur->begin_ns - prev->end_ns : 0;
}

typedef struct device_walk {
    uint64_t busy_start, busy_end; /* the current run of overlapping kernels */
    uint64_t compute_end;          /* latest end of a non-NCCL kernel so far */
    uint32_t compute_name;         /* its config row + 1 */
} device_walk;

/* The digest string of launch configuration row's kernel name, interned
 * once per row (cache: 0 = not yet), not once per collective. */
static uint32_t config_name(const gpufl_trace *t, gpufl__job_rank *r, uint32_t *cache, size_t row)
{
    if (!cache[row])
        cache[row] = gpufl__job_str(r, gpufl_trace_string(t, gpufl_trace_get_launch_configs(t)->name[row]));
    return cache[row];
}

/* Kernels in start order: busy time, each NCCL kernel's idle gap and
 * step, and time per kernel name. */
static int walk_kernels(const gpufl_trace *t, const gpufl__nccl_ops *ops, gpufl__job_rank *r)
{
    const gpufl_trace_kernels *k = gpufl_trace_get_kernels(t);
    const gpufl_trace_streams *st = k->streams;
    const gpufl_trace_launch_configs *cf = k->configs;
    device_walk *dev = calloc(65536, sizeof *dev);
    uint64_t *per_config = calloc(cf->n ? cf->n : 1, 2 * sizeof *per_config);
    uint32_t *stream_no = malloc((st->n ? st->n : 1) * sizeof *stream_no);
    uint32_t *config_str = calloc(cf->n ? cf->n : 1, sizeof *config_str); /* digest string of each row's name */
    if (ops->n && !(r->coll = calloc(ops->n, sizeof *r->coll)))
        goto oom;
    if (!dev || !per_config || !stream_no || !config_str)
        goto oom;
    for (size_t i = 0; i < st->n; i++)
        stream_no[i] = UINT32_MAX;
    uint32_t nstreams = 0;
    size_t o = 0;
    for (size_t i = 0; i < k->n; i++) {
        uint64_t start = k->start_ns[i], end = gpufl_trace_kernel_end(k, i);
        device_walk *d = &dev[st->device[k->stream_row[i]]];
        if (start >= d->busy_end) {
            r->busy_ns += d->busy_end - d->busy_start;
            d->busy_start = start;
        }
        if (end > d->busy_end)
            d->busy_end = end;
        if (o < ops->n && ops->op[o].kernel_row == i) {
            const gpufl__nccl_op *op = &ops->op[o];
            gpufl__job_coll *c = &r->coll[o++];
            c->start_ns = start;
            c->end_ns = end;
            c->gpu_idle_before_ns = d->compute_end && start > d->compute_end ? start - d->compute_end : 0;
            if (d->compute_name)
                c->last_kernel = config_name(t, r, config_str, d->compute_name - 1);
            if (stream_no[op->stream_row] == UINT32_MAX)
                stream_no[op->stream_row] = nstreams++;
            c->stream = stream_no[op->stream_row];
            uint64_t api = gpufl_trace_kernel_api_start(k, i);
            c->api_ns = api;
            c->step = step_at(r, api ? api : start);
            c->coll = op->kind.coll;
            c->algo = op->kind.algo;
            c->proto = op->kind.proto;
            c->has_bytes = op->has_bytes;
            c->api_coll = op->api_coll;
            c->nranks = op->nranks;
            c->bytes = op->bytes;
            continue;
        }
        if (end > d->compute_end) {
            d->compute_end = end;
            d->compute_name = k->config_row[i] + 1;
        }
        per_config[2 * k->config_row[i]]++;
        per_config[2 * k->config_row[i] + 1] += end - start;
    }
    for (size_t i = 0; i < 65536; i++)
        r->busy_ns += dev[i].busy_end - dev[i].busy_start;
    r->ncoll = o;
    r->nccl_recorded = ops->recorded;
    if (ops->bytes_note[0] && !(r->bytes_note = gpufl__job_str(r, ops->bytes_note)))
        goto oom;
    r->kernels = k->n;
    r->nccl_kernels = o;
    /* per name: configurations of one kernel (other grids) fold together */
    for (size_t c = 0; c < cf->n; c++) {
        if (!per_config[2 * c])
            continue;
        uint32_t name = config_name(t, r, config_str, c);
        size_t at = 0;
        while (at < r->nkt && r->kt[at].name != name)
            at++;
        if (at == r->nkt) {
            gpufl__job_kernel_time *q = realloc(r->kt, (r->nkt + 1) * sizeof *q);
            if (!q)
                goto oom;
            r->kt = q;
            r->kt[r->nkt++] = (gpufl__job_kernel_time){.name = name};
        }
        r->kt[at].count += per_config[2 * c];
        r->kt[at].total_ns += per_config[2 * c + 1];
    }
    free(dev);
    free(per_config);
    free(stream_no);
    free(config_str);
    return 0;
oom:
    free(dev);
    free(per_config);
    free(stream_no);
    free(config_str);
    return GPUFL_ENOMEM;
}

static int read_overlap(const gpufl_trace *t, const gpufl__nccl_ops *ops, gpufl__job_rank *r)
{
    if (!ops->n) { /* every kernel computes */
        r->compute_ns = r->busy_ns;
        return 0;
    }
    gpufl__nccl_overlap *ov = NULL;
    size_t n = 0;
    int rc = gpufl__nccl_overlap_of(t, ops, &ov, &n);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        r->comm_ns += ov[i].comm_ns;
        r->compute_ns += ov[i].compute_ns;
        r->overlap_ns += ov[i].overlap_ns;
        r->span_ns += ov[i].span_ns;
    }
    free(ov);
    return 0;
}

int gpufl__job_rank_digest(const gpufl_trace *t, const char *path, gpufl__job_rank *r)
{
    memset(r, 0, sizeof *r);
    if (!(r->str = malloc(sizeof *r->str)) || !(r->str[0] = strdup("")))
        return GPUFL_ENOMEM;
    r->nstr = 1;
    gpufl__nccl_ops ops = {0};
    int rc = read_identity(t, path, r);
    if (rc == 0)
        rc = read_clocks(t, r);
    if (rc == 0)
        rc = read_steps(t, r);
    if (rc == 0)
        rc = gpufl__nccl_ops_of(t, &ops);
    if (rc == 0)
        rc = walk_kernels(t, &ops, r);
    if (rc == 0)
        rc = read_overlap(t, &ops, r);
    gpufl__nccl_ops_free(&ops);
    return rc;
}

void gpufl__job_rank_free(gpufl__job_rank *r)
{
    if (!r)
        return;
    free(r->path);
    free(r->host);
    free(r->job_id);
    free(r->launcher);
    free(r->session_id);
    free(r->coll);
    free(r->kt);
    free(r->steps);
    for (size_t i = 0; i < r->nstr; i++)
        free(r->str[i]);
    free(r->str);
    memset(r, 0, sizeof *r);
}
