/*
 * Two sessions' analyses compared (ana_diff.h says what is compared and how
 * a change is judged).
 *
 * Rows of the two reports are matched by text, since string ids differ
 * between traces: each side's rows get a key (kernel name; scope tree, path
 * and domain), both key lists are sorted, and one merge pass pairs them.
 */
#include "analyze/ana_diff.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/ana_diff_configs.h"
#include "gpufl/gpufl.h"
#include "read/rows.h"

/* Spread of a normal distribution from its p50-p95 distance, and the
 * standard error of a median in units of sigma / sqrt(n). */
#define P95_SIGMAS 1.645
#define MEDIAN_SE 1.2533
#define NOISE_SES 2.0 /* the noise is this many standard errors: about 95 % */

/* ':' would be ambiguous in names; 0x1f (unit separator) sorts before every
 * printable character, so a parent's key sorts right before its children's. */
#define PATH_SEP "\x1f"

void gpufl__diff_options_default(gpufl__diff_options *o)
{
    o->threshold_pct = GPUFL__DIFF_DEFAULT_THRESHOLD_PCT;
    o->min_impact_pct = GPUFL__DIFF_DEFAULT_MIN_IMPACT_PCT;
}

const char *gpufl__diff_presence_name(uint8_t presence)
{
    switch (presence) {
    case GPUFL__DIFF_NEW: return "new";
    case GPUFL__DIFF_GONE: return "gone";
    default: return "both";
    }
}

const char *gpufl__diff_verdict_name(uint8_t verdict)
{
    switch (verdict) {
    case GPUFL__DIFF_REGRESSED: return "regressed";
    case GPUFL__DIFF_IMPROVED: return "improved";
    default: return "same";
    }
}

const char *gpufl__diff_per_item_name(uint8_t per_item)
{
    switch (per_item) {
    case GPUFL__DIFF_SLOWER: return "slower";
    case GPUFL__DIFF_FASTER: return "faster";
    default: return "steady";
    }
}

/* ---- judging ----------------------------------------------------------------- */

/* to is more than pct % above from (anything above 0 when from is 0). */
static bool grew_past(uint64_t from, uint64_t to, double pct)
{
    return to > from && (double)(to - from) * 100.0 > pct * (double)from;
}

/* to is more than pct % below from. */
static bool shrank_past(uint64_t from, uint64_t to, double pct)
{
    return to < from && (double)(from - to) * 100.0 > pct * (double)from;
}

static uint64_t nonneg(int64_t v) { return v > 0 ? (uint64_t)v : 0; }

/* min_impact_pct of a baseline figure, in ns. */
static uint64_t floor_of(uint64_t base_ns, double pct) { return (uint64_t)((double)base_ns * pct / 100.0); }

static double median_variance(const gpufl__ana_dist *d)
{
    double s = (double)(d->p95 - d->p50) / P95_SIGMAS;
    double se = MEDIAN_SE * s;
    return se * se / (double)d->n;
}

static double pct_of(double v, int64_t base) { return v * 100.0 / (double)(base > 0 ? base : 1); }

/* The name-level (or scope) medians: p50_ns, noise_ns, and the per-item
 * evidence from them. */
static void median_change(gpufl__diff_change *ch)
{
    const gpufl__ana_dist *b = &ch->base, *c = &ch->cand;
    ch->p50_ns = c->p50 - b->p50;
    ch->noise_known = b->n >= 2 && c->n >= 2;
    if (ch->noise_known)
        ch->noise_ns = (uint64_t)llround(NOISE_SES * sqrt(median_variance(b) + median_variance(c)));
    ch->item_pct = pct_of((double)ch->p50_ns, b->p50);
    ch->item_noise_pct = pct_of((double)ch->noise_ns, b->p50);
}

/* Judges ch (both sides present) from its totals, counts and per-item
 * evidence (item_pct, item_noise_pct). counts_judged: a count that grew
 * (shrank) past the threshold makes a growth (shrinkage) real. */
static void judge_present(gpufl__diff_change *ch, double thr, uint64_t impact_ns, bool counts_judged)
{
    const gpufl__ana_dist *b = &ch->base, *c = &ch->cand;
    uint64_t bt = nonneg(b->total), ct = nonneg(c->total);
    if (b->n != c->n)
        ch->flags |= GPUFL__DIFF_F_COUNT;
    /* Without a noise estimate (0) any move is past it, so the threshold
     * alone decides. */
    bool up_real = ch->item_pct > 0 && ch->item_pct > ch->item_noise_pct;
    bool down_real = ch->item_pct < 0 && -ch->item_pct > ch->item_noise_pct;
    if (up_real && ch->item_pct > thr)
        ch->per_item = GPUFL__DIFF_SLOWER;
    else if (down_real && -ch->item_pct > thr)
        ch->per_item = GPUFL__DIFF_FASTER;

    uint64_t delta = ct > bt ? ct - bt : bt - ct;
    bool real;
    if (grew_past(bt, ct, thr))
        real = (counts_judged && grew_past(b->n, c->n, thr)) || up_real;
    else if (shrank_past(bt, ct, thr))
        real = (counts_judged && shrank_past(b->n, c->n, thr)) || down_real;
    else
        return;
    if (!real)
        ch->flags |= GPUFL__DIFF_F_NOISE;
    else if (delta < impact_ns)
        ch->flags |= GPUFL__DIFF_F_SMALL;
    else
        ch->verdict = ct > bt ? GPUFL__DIFF_REGRESSED : GPUFL__DIFF_IMPROVED;
}

/* Fills the deltas and the judgment of ch (base, cand and presence set;
 * with both sides, the per-item evidence too). judge_one_sided: whether a
 * row on one side only is judged at all. */
static void judge_counts(gpufl__diff_change *ch, double thr, uint64_t impact_ns, bool judge_one_sided,
                         bool counts_judged)
{
    ch->total_ns = ch->cand.total - ch->base.total;
    if (ch->presence == GPUFL__DIFF_BOTH) {
        judge_present(ch, thr, impact_ns, counts_judged);
        return;
    }
    ch->flags |= GPUFL__DIFF_F_COUNT;
    uint64_t t = nonneg(ch->presence == GPUFL__DIFF_NEW ? ch->cand.total : ch->base.total);
    if (!judge_one_sided || t == 0)
        return;
    if (t < impact_ns)
        ch->flags |= GPUFL__DIFF_F_SMALL;
    else
        ch->verdict = ch->presence == GPUFL__DIFF_NEW ? GPUFL__DIFF_REGRESSED : GPUFL__DIFF_IMPROVED;
}

static void judge(gpufl__diff_change *ch, double thr, uint64_t impact_ns, bool judge_one_sided)
{
    judge_counts(ch, thr, impact_ns, judge_one_sided, true);
}

void gpufl__diff_judge_medians(gpufl__diff_change *ch, double threshold_pct, uint64_t impact_ns, bool judge_one_sided)
{
    if (ch->presence == GPUFL__DIFF_BOTH)
        median_change(ch);
    judge_counts(ch, threshold_pct, impact_ns, judge_one_sided, false);
}

/* ---- matching by text ------------------------------------------------------------ */

typedef struct key {
    uint8_t tree;
    const char *text;   /* kernel name or scope path (PATH_SEP between elements) */
    const char *domain; /* "" for kernels and scopes */
    uint32_t index;     /* in the report's list */
    char *owned;        /* text, when allocated here */
} key;

static int key_cmp_text(const key *a, const key *b)
{
    if (a->tree != b->tree)
        return a->tree < b->tree ? -1 : 1;
    int r = strcmp(a->text, b->text);
    return r ? r : strcmp(a->domain, b->domain);
}

static int key_cmp(const void *pa, const void *pb)
{
    const key *a = pa, *b = pb;
    int r = key_cmp_text(a, b);
    if (r)
        return r;
    return a->index < b->index ? -1 : a->index > b->index;
}

static void keys_free(key *k, size_t n)
{
    for (size_t i = 0; k && i < n; i++)
        free(k[i].owned);
    free(k);
}

/* The keys of a report's kernels, sorted; NULL when out of memory (n > 0). */
static key *kernel_keys(const gpufl_trace *t, const gpufl__ana_hotspots *h)
{
    key *k = calloc(h->n ? h->n : 1, sizeof *k);
    if (!k)
        return NULL;
    for (uint32_t i = 0; i < h->n; i++)
        k[i] = (key){.text = gpufl_trace_string(t, h->kernels[i].name), .domain = "", .index = i};
    qsort(k, h->n, sizeof *k, key_cmp);
    return k;
}

static size_t scope_count(const gpufl__ana_scopes *s)
{
    size_t n = 0;
    for (int tr = 0; tr < GPUFL__ANA_TREE_COUNT; tr++)
        n += s->trees[tr].n;
    return n;
}

/* The keys of a report's scopes of both trees, sorted; index counts the
 * nodes of the first tree, then of the second. NULL when out of memory. */
static key *scope_keys(const gpufl_trace *t, const gpufl__ana_scopes *s)
{
    size_t n = scope_count(s), at = 0;
    key *k = calloc(n ? n : 1, sizeof *k);
    if (!k)
        return NULL;
    for (int tr = 0; tr < GPUFL__ANA_TREE_COUNT; tr++) {
        const gpufl__ana_scope_tree *tree = &s->trees[tr];
        for (uint32_t i = 0; i < tree->n; i++, at++) {
            char small[256];
            size_t len = gpufl__ana_scope_path(t, tree, i, PATH_SEP, small, sizeof small);
            char *text = malloc(len + 1);
            if (!text) {
                keys_free(k, at);
                return NULL;
            }
            if (len < sizeof small)
                memcpy(text, small, len + 1);
            else
                gpufl__ana_scope_path(t, tree, i, PATH_SEP, text, len + 1);
            k[at] = (key){.tree = (uint8_t)tr,
                          .text = text,
                          .owned = text,
                          .index = (uint32_t)at,
                          .domain = gpufl_trace_string(t, tree->nodes[i].domain)};
        }
    }
    qsort(k, n, sizeof *k, key_cmp);
    return k;
}

/* Calls pair(ctx, b, c) for every match of the two sorted key lists, with
 * NULL for the side that lacks a key. Returns the first non-zero result of
 * pair, or 0. */
static int merge_keys(const key *kb, size_t nb, const key *kc, size_t nc,
                      int (*pair)(void *ctx, const key *b, const key *c), void *ctx)
{
    size_t i = 0, j = 0;
    while (i < nb || j < nc) {
        int r = i == nb ? 1 : j == nc ? -1 : key_cmp_text(&kb[i], &kc[j]);
        int rc = pair(ctx, r <= 0 ? &kb[i] : NULL, r >= 0 ? &kc[j] : NULL);
        if (rc)
            return rc;
        i += r <= 0;
        j += r >= 0;
    }
    return 0;
}

static uint8_t presence_of(const void *b, const void *c)
{
    return b && c ? GPUFL__DIFF_BOTH : b ? GPUFL__DIFF_GONE : GPUFL__DIFF_NEW;
}

/* ---- kernels ------------------------------------------------------------------ */

typedef struct kernel_ctx {
    gpufl__diff *d;
    const gpufl__ana_hotspots *hb, *hc;
} kernel_ctx;

static bool same_config(const gpufl__ana_launch_config *a, const gpufl__ana_launch_config *b)
{
    for (int i = 0; i < 3; i++)
        if (a->grid[i] != b->grid[i] || a->block[i] != b->block[i])
            return false;
    return a->registers == b->registers && a->static_smem == b->static_smem && a->dynamic_smem == b->dynamic_smem &&
           a->local_mem == b->local_mem;
}

static int pair_kernel(void *vctx, const key *b, const key *c)
{
    kernel_ctx *x = vctx;
    gpufl__diff_kernel *k = &x->d->kernels[x->d->nkernels++];
    const gpufl__ana_hotspot *hb = b ? &x->hb->kernels[b->index] : NULL;
    const gpufl__ana_hotspot *hc = c ? &x->hc->kernels[c->index] : NULL;
    k->name = b ? b->text : c->text;
    k->time.presence = presence_of(hb, hc);
    if (hb) {
        k->time.base = hb->dur;
        k->base_config = hb->config;
        k->base_configs = hb->configs;
    }
    if (hc) {
        k->time.cand = hc->dur;
        k->cand_config = hc->config;
        k->cand_configs = hc->configs;
    }
    if (hb && hc)
        median_change(&k->time);
    if (hb && hc && !same_config(&hb->config, &hc->config))
        k->time.flags |= GPUFL__DIFF_F_CONFIG;
    return 0;
}

static uint64_t abs64(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

static uint64_t larger_total(const gpufl__diff_change *ch)
{
    return nonneg(ch->base.total > ch->cand.total ? ch->base.total : ch->cand.total);
}

/* By |change of total| descending, then size, then name. */
static int kernel_row_cmp(const void *pa, const void *pb)
{
    const gpufl__diff_kernel *a = pa, *b = pb;
    uint64_t da = abs64(a->time.total_ns), db = abs64(b->time.total_ns);
    if (da != db)
        return da > db ? -1 : 1;
    /* equal changes (none, on a steady run): the larger kernel first */
    uint64_t sa = larger_total(&a->time), sb = larger_total(&b->time);
    if (sa != sb)
        return sa > sb ? -1 : 1;
    int r = strcmp(a->name, b->name);
    return r ? r : (int)a->time.presence - (int)b->time.presence;
}

/* ---- kernels, configuration by configuration ------------------------------------ */

/* A launch configuration of a trace, for matching across traces. */
typedef struct cfg_key {
    const char *name;
    gpufl__ana_launch_config c;
    uint32_t row; /* in the trace's table and in gpufl__diff_configs */
} cfg_key;

static int cfg_cmp(const void *pa, const void *pb)
{
    const cfg_key *a = pa, *b = pb;
    int r = strcmp(a->name, b->name);
    if (r)
        return r;
    const gpufl__ana_launch_config *x = &a->c, *y = &b->c;
    uint64_t kx[] = {x->grid[0],  x->grid[1],   x->grid[2],     x->block[0],     x->block[1],
                     x->block[2], x->registers, x->static_smem, x->dynamic_smem, x->local_mem};
    uint64_t ky[] = {y->grid[0],  y->grid[1],   y->grid[2],     y->block[0],     y->block[1],
                     y->block[2], y->registers, y->static_smem, y->dynamic_smem, y->local_mem};
    for (size_t i = 0; i < sizeof kx / sizeof kx[0]; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* The configurations of t (n of them), sorted; NULL when n is 0 or out of
 * memory. */
static cfg_key *cfg_keys(const gpufl_trace *t, size_t n)
{
    cfg_key *k = n ? calloc(n, sizeof *k) : NULL;
    if (!k)
        return NULL;
    gpufl__rows r;
    gpufl__rows_open(&r, t);
    for (size_t i = 0; i < n; i++) {
        gpufl__config_row g;
        gpufl__config_row_get(&r, (uint32_t)i, &g);
        k[i].name = gpufl__rows_str(&r, gpufl__cfg_name(&r, (uint32_t)i));
        for (int j = 0; j < 3; j++) {
            k[i].c.grid[j] = g.grid[j];
            k[i].c.block[j] = (uint16_t)g.block[j];
        }
        k[i].c.registers = (uint16_t)g.registers;
        k[i].c.static_smem = g.static_smem;
        k[i].c.dynamic_smem = g.dynamic_smem;
        k[i].c.local_mem = g.local_mem;
        k[i].row = (uint32_t)i;
    }
    qsort(k, n, sizeof *k, cfg_cmp);
    return k;
}

/* The row of d->kernels (in name order) named name, or NULL. */
static gpufl__diff_kernel *row_named(gpufl__diff *d, const char *name)
{
    size_t lo = 0, hi = d->nkernels;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(d->kernels[mid].name, name);
        if (r == 0)
            return &d->kernels[mid];
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Per kernel in both sessions: sums over its matched configurations. */
typedef struct like_acc {
    double w, wr, w2n2; /* weights, weighted changes (%), squared weighted noises (%^2) */
} like_acc;

/* Adds configuration row rb of cb, matched with rc of cc, to its kernel's
 * sums (gpufl__diff_config_change_of says how it is compared). */
static int like_add(gpufl__diff *d, like_acc *acc, gpufl__diff_compare *x, const char *name,
                    const gpufl__diff_configs *cb, uint32_t rb, const gpufl__diff_configs *cc, uint32_t rc)
{
    gpufl__diff_kernel *k = row_named(d, name);
    if (!k || k->time.presence != GPUFL__DIFF_BOTH || cb->at[rb + 1] - cb->at[rb] < 2 ||
        cc->at[rc + 1] - cc->at[rc] < 2)
        return 0;
    gpufl__diff_config_change ch;
    int err = gpufl__diff_config_change_of(x, cb, rb, cc, rc, &ch);
    if (err)
        return err;
    if (ch.pairs) {
        k->paired_configs++;
        k->paired_launches += ch.pairs;
    }
    double w = (double)cb->total[rb];
    like_acc *a = &acc[k - d->kernels];
    a->w += w;
    a->wr += w * ch.pct;
    a->w2n2 += w * w * ch.noise_pct * ch.noise_pct;
    k->matched_configs++;
    return 0;
}

/* c2b[r]: the row of kb's trace matching row r of kc's (UINT32_MAX none);
 * kb, kc: the configurations of the two traces, sorted. */
static void match_rows(const cfg_key *kb, size_t nb, const cfg_key *kc, size_t nc, uint32_t *c2b)
{
    for (size_t j = 0; j < nc; j++)
        c2b[j] = UINT32_MAX;
    for (size_t i = 0, j = 0; i < nb && j < nc;) {
        int r = cfg_cmp(&kb[i], &kc[j]);
        if (r == 0)
            c2b[kc[j].row] = kb[i].row;
        i += r <= 0;
        j += r >= 0;
    }
}

/* The configurations of one trace, on a thread of its own. */
typedef struct configs_job {
    const gpufl_trace *t;
    gpufl__diff_configs *out;
    int rc;
} configs_job;

static void *run_configs(void *arg)
{
    configs_job *j = arg;
    j->rc = gpufl__diff_configs_of(j->t, j->out);
    return NULL;
}

/* Replaces the per-launch evidence of kernels that both sessions launched
 * with configurations they share by the like-for-like one. Returns 0 or
 * GPUFL_ENOMEM. */
static int like_for_like(gpufl__diff *d, const gpufl_trace *bt, const gpufl_trace *ct)
{
    gpufl__diff_configs cb, cc;
    gpufl__diff_compare x = {0};
    /* the two traces' launches are bucketed at once: a pass over each,
     * memory-bound, the bulk of the work on a large session */
    configs_job job = {ct, &cc, 0};
    pthread_t th;
    bool threaded = sysconf(_SC_NPROCESSORS_ONLN) > 1 && pthread_create(&th, NULL, run_configs, &job) == 0;
    int rb = gpufl__diff_configs_of(bt, &cb);
    if (threaded)
        pthread_join(th, NULL);
    else
        run_configs(&job);
    int rc = job.rc;
    cfg_key *kb = cfg_keys(bt, cb.n), *kc = cfg_keys(ct, cc.n);
    uint32_t *c2b = malloc((cc.n ? cc.n : 1) * sizeof *c2b);
    like_acc *acc = calloc(d->nkernels ? d->nkernels : 1, sizeof *acc);
    int status = rb ? rb : rc ? rc : acc && c2b && (kb || !cb.n) && (kc || !cc.n) ? 0 : GPUFL_ENOMEM;
    if (status == 0) {
        match_rows(kb, cb.n, kc, cc.n, c2b);
        gpufl__diff_configs_renumber(&cc, c2b, cb.n);
    }
    for (size_t j = 0; status == 0 && j < cc.n; j++) {
        uint32_t row = kc[j].row;
        if (c2b[row] != UINT32_MAX)
            status = like_add(d, acc, &x, kc[j].name, &cb, c2b[row], &cc, row);
    }
    for (uint32_t i = 0; status == 0 && i < d->nkernels; i++) {
        gpufl__diff_change *ch = &d->kernels[i].time;
        if (d->kernels[i].matched_configs == 0 || acc[i].w <= 0)
            continue;
        ch->item_pct = acc[i].wr / acc[i].w;
        ch->item_noise_pct = sqrt(acc[i].w2n2) / acc[i].w;
        /* the noise judged, in ns of the baseline's median */
        ch->noise_ns = (uint64_t)llround(ch->item_noise_pct * (double)nonneg(ch->base.p50) / 100.0);
    }
    gpufl__diff_compare_free(&x);
    free(acc);
    free(c2b);
    free(kb);
    free(kc);
    gpufl__diff_configs_free(&cb);
    gpufl__diff_configs_free(&cc);
    return status;
}

static int diff_kernels(gpufl__diff *d, const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                        const gpufl__ana_report *c)
{
    const gpufl__ana_hotspots *hb = &b->hotspots, *hc = &c->hotspots;
    d->kernels_partial = hb->n < hb->distinct || hc->n < hc->distinct;
    size_t most = (size_t)hb->n + hc->n;
    d->kernels = calloc(most ? most : 1, sizeof *d->kernels);
    key *kb = kernel_keys(bt, hb), *kc = kernel_keys(ct, hc);
    int rc = GPUFL_ENOMEM;
    if (d->kernels && kb && kc) {
        kernel_ctx x = {d, hb, hc};
        rc = merge_keys(kb, hb->n, kc, hc->n, pair_kernel, &x);
    }
    keys_free(kb, 0);
    keys_free(kc, 0);
    /* the rows are in name order here, which like_for_like() searches */
    if (rc == 0)
        rc = like_for_like(d, bt, ct);
    if (rc != 0)
        return rc;
    uint64_t impact_ns = floor_of(b->summary.kernel_ns, d->options.min_impact_pct);
    for (uint32_t i = 0; i < d->nkernels; i++)
        judge(&d->kernels[i].time, d->options.threshold_pct, impact_ns, true);
    qsort(d->kernels, d->nkernels, sizeof *d->kernels, kernel_row_cmp);
    return 0;
}

/* ---- scopes -------------------------------------------------------------------- */

typedef struct scope_ctx {
    gpufl__diff *d;
    const gpufl__ana_scopes *sb, *sc;
    uint64_t impact_ns;
} scope_ctx;

/* The node that key index i of s names (both trees counted in a row). */
static const gpufl__ana_scope_node *scope_node(const gpufl__ana_scopes *s, uint32_t i)
{
    for (int tr = 0; tr < GPUFL__ANA_TREE_COUNT; tr++) {
        if (i < s->trees[tr].n)
            return &s->trees[tr].nodes[i];
        i -= s->trees[tr].n;
    }
    return NULL;
}

static int pair_scope(void *vctx, const key *b, const key *c)
{
    scope_ctx *x = vctx;
    const key *k = b ? b : c;
    size_t len = strlen(k->text);
    char *path = malloc(len + 1);
    if (!path)
        return GPUFL_ENOMEM;
    for (size_t i = 0; i <= len; i++)
        path[i] = k->text[i] == PATH_SEP[0] ? '/' : k->text[i];
    gpufl__diff_scope *s = &x->d->scopes[x->d->nscopes++];
    s->tree = k->tree;
    s->path = path;
    s->domain = k->domain;
    const gpufl__ana_scope_node *nb = b ? scope_node(x->sb, b->index) : NULL;
    const gpufl__ana_scope_node *nc = c ? scope_node(x->sc, c->index) : NULL;
    s->wall.presence = presence_of(nb, nc);
    if (nb) {
        s->wall.base = nb->wall;
        s->base_gpu_ns = nb->gpu_ns;
    }
    if (nc) {
        s->wall.cand = nc->wall;
        s->cand_gpu_ns = nc->gpu_ns;
    }
    if (nb && nc)
        median_change(&s->wall);
    judge(&s->wall, x->d->options.threshold_pct, x->impact_ns, false);
    return 0;
}

static int diff_scopes(gpufl__diff *d, const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                       const gpufl__ana_report *c)
{
    size_t nb = scope_count(&b->scopes), nc = scope_count(&c->scopes);
    d->scopes = calloc(nb + nc ? nb + nc : 1, sizeof *d->scopes);
    key *kb = scope_keys(bt, &b->scopes), *kc = scope_keys(ct, &c->scopes);
    int rc = GPUFL_ENOMEM;
    if (d->scopes && kb && kc) {
        scope_ctx x = {d, &b->scopes, &c->scopes, floor_of(b->summary.wall_ns, d->options.min_impact_pct)};
        rc = merge_keys(kb, nb, kc, nc, pair_scope, &x);
    }
    keys_free(kb, nb);
    keys_free(kc, nc);
    return rc;
}

/* ---- session and devices --------------------------------------------------------- */

static const gpufl__ana_idle_row *device_idle(const gpufl__ana_idle *idle, uint32_t device)
{
    for (uint32_t i = 0; i < idle->n; i++)
        if (idle->rows[i].device == device && idle->rows[i].stream == GPUFL__ANA_ALL_STREAMS)
            return &idle->rows[i];
    return NULL;
}

static uint8_t judge_value(uint64_t b, uint64_t c, double thr, uint64_t impact_ns)
{
    uint64_t delta = c > b ? c - b : b - c;
    if (delta < impact_ns)
        return GPUFL__DIFF_SAME;
    if (grew_past(b, c, thr))
        return GPUFL__DIFF_REGRESSED;
    if (shrank_past(b, c, thr))
        return GPUFL__DIFF_IMPROVED;
    return GPUFL__DIFF_SAME;
}

static void fill_device(gpufl__diff_device *dv, const gpufl_trace *t, const gpufl__ana_device_summary *s,
                        const gpufl__ana_idle *idle, bool cand)
{
    const gpufl__ana_idle_row *row = device_idle(idle, s->device);
    uint64_t idle_ns = row ? row->idle_ns : 0;
    if (!dv->name || !dv->name[0])
        dv->name = gpufl_trace_string(t, s->name);
    *(cand ? &dv->busy_ns.cand : &dv->busy_ns.base) = s->busy_ns;
    *(cand ? &dv->idle_ns.cand : &dv->idle_ns.base) = idle_ns;
    *(cand ? &dv->kernels.cand : &dv->kernels.base) = s->kernels;
}

static int diff_devices(gpufl__diff *d, const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                        const gpufl__ana_report *c)
{
    const gpufl__ana_summary *sb = &b->summary, *sc = &c->summary;
    size_t most = (size_t)sb->ndevices + sc->ndevices;
    d->devices = calloc(most ? most : 1, sizeof *d->devices);
    if (!d->devices)
        return GPUFL_ENOMEM;
    uint64_t impact_ns = floor_of(sb->wall_ns, d->options.min_impact_pct);
    uint32_t i = 0, j = 0;
    while (i < sb->ndevices || j < sc->ndevices) {
        const gpufl__ana_device_summary *db = i < sb->ndevices ? &sb->devices[i] : NULL;
        const gpufl__ana_device_summary *dc = j < sc->ndevices ? &sc->devices[j] : NULL;
        if (db && dc && db->device != dc->device) {
            if (db->device < dc->device)
                dc = NULL;
            else
                db = NULL;
        }
        gpufl__diff_device *dv = &d->devices[d->ndevices++];
        dv->device = db ? db->device : dc->device;
        dv->presence = presence_of(db, dc);
        if (db)
            fill_device(dv, bt, db, &b->idle, false);
        if (dc)
            fill_device(dv, ct, dc, &c->idle, true);
        if (db && dc)
            dv->idle_ns.verdict = judge_value(dv->idle_ns.base, dv->idle_ns.cand, d->options.threshold_pct, impact_ns);
        i += db != NULL;
        j += dc != NULL;
    }
    return 0;
}

static void count_verdict(gpufl__diff *d, uint8_t verdict)
{
    d->regressions += verdict == GPUFL__DIFF_REGRESSED;
    d->improvements += verdict == GPUFL__DIFF_IMPROVED;
}

static void count_rows(gpufl__diff *d)
{
    count_verdict(d, d->wall_ns.verdict);
    for (uint32_t i = 0; i < d->ndevices; i++)
        count_verdict(d, d->devices[i].idle_ns.verdict);
    for (uint32_t i = 0; i < d->nkernels; i++) {
        const gpufl__diff_change *ch = &d->kernels[i].time;
        count_verdict(d, ch->verdict);
        d->new_kernels += ch->presence == GPUFL__DIFF_NEW;
        d->gone_kernels += ch->presence == GPUFL__DIFF_GONE;
        d->count_changes += ch->presence == GPUFL__DIFF_BOTH && (ch->flags & GPUFL__DIFF_F_COUNT);
    }
    for (uint32_t i = 0; i < d->nscopes; i++)
        count_verdict(d, d->scopes[i].wall.verdict);
}

int gpufl__diff_reports(const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                        const gpufl__ana_report *c, const gpufl__diff_options *o, gpufl__diff *out)
{
    if (!out)
        return GPUFL_EINVAL;
    memset(out, 0, sizeof *out);
    if (!bt || !b || !ct || !c)
        return GPUFL_EINVAL;
    gpufl__diff_options_default(&out->options);
    if (o) {
        /* !(x >= 0) also refuses NaN */
        if (!(o->threshold_pct >= 0) || !(o->min_impact_pct >= 0))
            return GPUFL_EINVAL;
        out->options = *o;
    }
    const gpufl__ana_summary *sb = &b->summary, *sc = &c->summary;
    out->wall_ns = (gpufl__diff_value){sb->wall_ns, sc->wall_ns, GPUFL__DIFF_SAME};
    out->wall_ns.verdict = judge_value(sb->wall_ns, sc->wall_ns, out->options.threshold_pct, 0);
    out->kernel_ns = (gpufl__diff_value){sb->kernel_ns, sc->kernel_ns, GPUFL__DIFF_SAME};
    out->launches = (gpufl__diff_value){sb->kernels, sc->kernels, GPUFL__DIFF_SAME};
    int rc = diff_devices(out, bt, b, ct, c);
    if (rc == 0)
        rc = diff_kernels(out, bt, b, ct, c);
    if (rc == 0)
        rc = diff_scopes(out, bt, b, ct, c);
    if (rc == 0)
        rc = gpufl__diff_stalls(out, bt, b, ct, c);
    if (rc == 0)
        rc = gpufl__diff_counters(out, bt, b, ct, c);
    if (rc == 0)
        rc = gpufl__diff_pm(out, bt, ct);
    if (rc == 0)
        rc = gpufl__diff_sass(out, bt, b, ct, c);
    if (rc != 0) {
        gpufl__diff_free(out);
        return rc;
    }
    count_rows(out);
    return 0;
}

void gpufl__diff_free(gpufl__diff *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; d->scopes && i < d->nscopes; i++)
        free(d->scopes[i].path);
    free(d->scopes);
    free(d->stalls);
    free(d->counters);
    free(d->pm);
    free(d->sass);
    free(d->kernels);
    free(d->devices);
    memset(d, 0, sizeof *d);
}
