/*
 * `gpufl fleet regress` (fleet_regress.h). Each period is read as rows of
 * (session, kind, name, time); rows are sorted by (kind, name), each name's
 * times spread over the period's sessions (0 where it did not run), and
 * the two periods merged by name.
 */
#include "serve/fleet_regress.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ana_diff.h"
#include "analyze/ana_util.h"
#include "gpufl/gpufl.h"
#include "present/report/summary_text.h"
#include "serve/serve_pg.h"

enum { KERNEL = 0, SCOPE = 1 };

typedef struct row {
    uint8_t kind;
    const char *name; /* in the period's result */
    uint32_t session;
    uint64_t ns, count;
} row;

typedef struct period {
    PGresult *sessions, *events;
    uint32_t n;            /* sessions */
    uint32_t used;         /* of them, those with steps (all without --per-step) */
    const char **ids;      /* sorted, for the lookup of rows' sessions */
    uint64_t *wall, *busy; /* per session (index in ids): wall time, kernel time */
    uint64_t *steps;       /* per session: instances of the step scope (1 without --per-step) */
    row *rows;
    size_t nrows;
} period;

typedef struct item {
    uint8_t kind;
    const char *name;
    gpufl__diff_change ch;
} item;

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int cmp_row(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    return strcmp(a->name, b->name);
}

static void period_free(period *p)
{
    PQclear(p->sessions);
    PQclear(p->events);
    free(p->ids);
    free(p->wall);
    free(p->busy);
    free(p->steps);
    free(p->rows);
    memset(p, 0, sizeof *p);
}

#define FILTER_SQL                                                                                                     \
    "s.workspace_id = (SELECT id FROM workspaces WHERE name = $1) AND ($2::text IS NULL OR s.host = $2) AND "          \
    "($3::text IS NULL OR s.app = $3) AND ($4::text IS NULL OR s.job = $4) AND s.start_wall_ns >= $5 AND "             \
    "s.start_wall_ns < $6"

static int period_load(PGconn *conn, const gpufl__fleet_filter *f, const char *step, int64_t from, int64_t to,
                       period *p, char *why, size_t why_len)
{
    char a[24], b[24];
    snprintf(a, sizeof a, "%" PRId64, from);
    snprintf(b, sizeof b, "%" PRId64, to);
    const char *v[6] = {f->workspace, f->host, f->app, f->job, a, b};
    p->sessions = PQexecParams(conn,
                               "SELECT s.session_id, greatest(coalesce(s.end_wall_ns - s.start_wall_ns, 0), 0) "
                               "FROM sessions s WHERE " FILTER_SQL,
                               6, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(p->sessions) != PGRES_TUPLES_OK) {
        gpufl__serve_pg_why(conn, p->sessions, "finding the sessions", why, why_len);
        return GPUFL_EIO;
    }
    p->events =
        PQexecParams(conn,
                     "SELECT s.session_id, e.type, coalesce(e.name, ''), sum(coalesce(e.dur_ns, 0)), count(*) FROM "
                     "events e JOIN sessions s ON s.workspace_id = e.workspace_id AND s.session_id = "
                     "e.session_id WHERE e.workspace_id = (SELECT id FROM workspaces WHERE name = $1) AND "
                     "e.type IN ('kernel', 'scope_end') AND " FILTER_SQL " GROUP BY 1, 2, 3",
                     6, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(p->events) != PGRES_TUPLES_OK) {
        gpufl__serve_pg_why(conn, p->events, "summing the sessions' time", why, why_len);
        return GPUFL_EIO;
    }
    p->n = (uint32_t)PQntuples(p->sessions);
    p->nrows = (size_t)PQntuples(p->events);
    p->ids = calloc(p->n ? p->n : 1, sizeof *p->ids);
    p->wall = calloc(p->n ? p->n : 1, sizeof *p->wall);
    p->busy = calloc(p->n ? p->n : 1, sizeof *p->busy);
    p->steps = calloc(p->n ? p->n : 1, sizeof *p->steps);
    p->rows = calloc(p->nrows ? p->nrows : 1, sizeof *p->rows);
    if (!p->ids || !p->wall || !p->busy || !p->steps || !p->rows)
        return GPUFL_ENOMEM;
    for (uint32_t i = 0; i < p->n; i++)
        p->ids[i] = PQgetvalue(p->sessions, (int)i, 0);
    qsort(p->ids, p->n, sizeof *p->ids, cmp_str);
    for (uint32_t i = 0; i < p->n; i++) {
        const char *id = PQgetvalue(p->sessions, (int)i, 0);
        const char **at = bsearch(&id, p->ids, p->n, sizeof *p->ids, cmp_str);
        p->wall[at - p->ids] = strtoull(PQgetvalue(p->sessions, (int)i, 1), NULL, 10);
    }
    for (size_t i = 0; i < p->nrows; i++) {
        const char *id = PQgetvalue(p->events, (int)i, 0);
        const char **at = bsearch(&id, p->ids, p->n, sizeof *p->ids, cmp_str);
        row *r = &p->rows[i];
        r->kind = strcmp(PQgetvalue(p->events, (int)i, 1), "kernel") ? SCOPE : KERNEL;
        r->name = PQgetvalue(p->events, (int)i, 2);
        r->session = (uint32_t)(at - p->ids);
        r->ns = strtoull(PQgetvalue(p->events, (int)i, 3), NULL, 10);
        r->count = strtoull(PQgetvalue(p->events, (int)i, 4), NULL, 10);
        if (r->kind == KERNEL)
            p->busy[r->session] += r->ns;
        else if (step && !strcmp(r->name, step))
            p->steps[r->session] = r->count;
    }
    for (uint32_t i = 0; i < p->n; i++) {
        if (!step)
            p->steps[i] = 1;
        p->used += p->steps[i] > 0;
    }
    qsort(p->rows, p->nrows, sizeof *p->rows, cmp_row);
    return 0;
}

/* The distribution of the values v[0..p->n) per session (changed in
 * place) over the period's items: each session's value, or with
 * --per-step its value per step, sessions without steps left out. Its
 * total is the mean per item, as the judge compares totals. */
static int per_item(const period *p, uint64_t *v, gpufl__ana_dist *d)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->n; i++)
        if (p->steps[i])
            v[k++] = v[i] / p->steps[i];
    if (gpufl__ana_dist_of(v, k, false, d) != 0)
        return GPUFL_ENOMEM;
    d->total = k ? llround(d->mean) : 0;
    return 0;
}

/* The distribution over the period's sessions of rows[0..n) (one name).
 * scratch: p->n values. */
static int dist_of(const period *p, const row *rows, size_t n, uint64_t *scratch, gpufl__ana_dist *d)
{
    memset(scratch, 0, p->n * sizeof *scratch);
    for (size_t i = 0; i < n; i++)
        scratch[rows[i].session] += rows[i].ns;
    return per_item(p, scratch, d);
}

/* Rows of one (kind, name) from rows[at]: how many. */
static size_t group_len(const row *rows, size_t n, size_t at)
{
    size_t e = at + 1;
    while (e < n && !cmp_row(&rows[at], &rows[e]))
        e++;
    return e - at;
}

static uint64_t abs64(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

static int cmp_item(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    uint64_t da = abs64(a->ch.total_ns), db = abs64(b->ch.total_ns);
    if (da != db)
        return da > db ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Every (kind, name) of either period, judged. */
static int compare(const period *b, const period *c, const gpufl__fleet_regress_opts *o, uint64_t kernel_floor,
                   uint64_t scope_floor, item **out, size_t *nout)
{
    size_t cap = b->nrows + c->nrows + 1, n = 0;
    item *items = calloc(cap, sizeof *items);
    uint64_t *scratch = calloc((b->n > c->n ? b->n : c->n) + 1, sizeof *scratch);
    if (!items || !scratch) {
        free(items);
        free(scratch);
        return GPUFL_ENOMEM;
    }
    size_t i = 0, j = 0;
    int rc = 0;
    while (rc == 0 && (i < b->nrows || j < c->nrows)) {
        int order = i == b->nrows ? 1 : j == c->nrows ? -1 : cmp_row(&b->rows[i], &c->rows[j]);
        item *it = &items[n++];
        const row *r = order <= 0 ? &b->rows[i] : &c->rows[j];
        it->kind = r->kind;
        it->name = r->name;
        it->ch.presence = order == 0 ? GPUFL__DIFF_BOTH : order < 0 ? GPUFL__DIFF_GONE : GPUFL__DIFF_NEW;
        if (order <= 0) {
            size_t k = group_len(b->rows, b->nrows, i);
            rc |= dist_of(b, &b->rows[i], k, scratch, &it->ch.base);
            i += k;
        }
        if (order >= 0) {
            size_t k = group_len(c->rows, c->nrows, j);
            rc |= dist_of(c, &c->rows[j], k, scratch, &it->ch.cand);
            j += k;
        }
        gpufl__diff_judge_medians(&it->ch, o->threshold_pct, it->kind == KERNEL ? kernel_floor : scope_floor,
                                  it->kind == KERNEL);
    }
    free(scratch);
    if (rc != 0) {
        free(items);
        return GPUFL_ENOMEM;
    }
    qsort(items, n, sizeof *items, cmp_item);
    *out = items;
    *nout = n;
    return 0;
}

/* ---- text ----------------------------------------------------------------------- */

static const char *dur(uint64_t ns, char *buf, size_t len)
{
    gpufl__format_duration(ns, buf, len);
    return buf;
}

static uint64_t nonneg(int64_t v) { return v > 0 ? (uint64_t)v : 0; }

static void pct(int64_t delta, uint64_t base, char *buf, size_t len)
{
    if (delta == 0)
        snprintf(buf, len, "0.0 %%");
    else if (base == 0)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%+.1f %%", (double)delta * 100.0 / (double)base);
}

static bool worth_listing(const gpufl__diff_change *ch)
{
    return ch->verdict != GPUFL__DIFF_SAME || ch->presence != GPUFL__DIFF_BOTH || ch->flags ||
           ch->per_item != GPUFL__DIFF_STEADY;
}

static void change_row(FILE *out, const gpufl__diff_change *ch, const char *name, const char *item_word)
{
    const gpufl__ana_dist *b = &ch->base, *c = &ch->cand;
    bool both = ch->presence == GPUFL__DIFF_BOTH;
    bool has_b = ch->presence != GPUFL__DIFF_NEW, has_c = ch->presence != GPUFL__DIFF_GONE;
    char mb[32], mc[32], chg[32], nb[32], nc[32], pb[32], pc[32], item[32], noise[32], notes[160] = "";
    if (both)
        pct(ch->total_ns, nonneg(b->total), chg, sizeof chg);
    else
        snprintf(chg, sizeof chg, "%s", has_c ? "new" : "gone");
    if (!both)
        snprintf(noise, sizeof noise, "-");
    else if (!ch->noise_known)
        snprintf(noise, sizeof noise, "n/a");
    else
        snprintf(noise, sizeof noise, "%.1f %%", ch->item_noise_pct);
    if (!both)
        snprintf(item, sizeof item, "-");
    else if (ch->item_pct == 0)
        snprintf(item, sizeof item, "0.0 %%");
    else
        snprintf(item, sizeof item, "%+.1f %%", ch->item_pct);
    size_t at = 0;
    if (ch->per_item != GPUFL__DIFF_STEADY)
        at += (size_t)snprintf(notes + at, sizeof notes - at, "%s per %s", gpufl__diff_per_item_name(ch->per_item),
                               item_word);
    if ((ch->flags & GPUFL__DIFF_F_NOISE) && at < sizeof notes)
        at += (size_t)snprintf(notes + at, sizeof notes - at, "%swithin noise", at ? "; " : "");
    if ((ch->flags & GPUFL__DIFF_F_SMALL) && at < sizeof notes)
        at += (size_t)snprintf(notes + at, sizeof notes - at, "%sbelow min impact", at ? "; " : "");
    fprintf(out, "  %-9s %10s %10s %9s %8s %8s %10s %10s %9s %7s  %s%s%s%s\n",
            ch->verdict == GPUFL__DIFF_SAME ? "" : gpufl__diff_verdict_name(ch->verdict),
            has_b ? dur(nonneg(b->total), mb, sizeof mb) : "-", has_c ? dur(nonneg(c->total), mc, sizeof mc) : "-", chg,
            has_b ? (snprintf(nb, sizeof nb, "%" PRIu64, b->n), nb) : "-",
            has_c ? (snprintf(nc, sizeof nc, "%" PRIu64, c->n), nc) : "-",
            has_b ? dur(nonneg(b->p50), pb, sizeof pb) : "-", has_c ? dur(nonneg(c->p50), pc, sizeof pc) : "-", item,
            noise, name, notes[0] ? "  (" : "", notes, notes[0] ? ")" : "");
}

static void table(FILE *out, const item *items, size_t n, uint8_t kind, bool all, const char *item_word)
{
    size_t total = 0, hidden = 0;
    for (size_t i = 0; i < n; i++)
        if (items[i].kind == kind) {
            total++;
            hidden += !all && !worth_listing(&items[i].ch);
        }
    const char *noun = kind == KERNEL ? "kernel" : "scope";
    fprintf(out, "\n%ss: %zu name%s\n", kind == KERNEL ? "Kernel" : "Scope", total, total == 1 ? "" : "s");
    if (hidden == total) {
        if (hidden)
            fprintf(out, "  none changed (--all lists the %zu)\n", hidden);
        return;
    }
    fprintf(out, "  %-9s %10s %10s %9s %8s %8s %10s %10s %9s %7s  %s%s)\n", "verdict", "mean base", "mean cand",
            "change", "base n", "cand n", "p50 base", "p50 cand", "change", "noise",
            kind == KERNEL ? "kernel (GPU time per " : "scope (wall time per ", item_word);
    for (size_t i = 0; i < n; i++)
        if (items[i].kind == kind && (all || worth_listing(&items[i].ch)))
            change_row(out, &items[i].ch, items[i].name, item_word);
    if (hidden)
        fprintf(out, "  ... and %zu unchanged %s%s (--all lists them)\n", hidden, noun, hidden == 1 ? "" : "s");
}

typedef struct totals {
    gpufl__diff_change wall, busy;
    unsigned regressions, improvements;
} totals;

static void text(FILE *out, const gpufl__fleet_filter *f, const gpufl__fleet_regress_opts *o, const period *b,
                 const period *c, const totals *t, const item *items, size_t n)
{
    char x[32], y[32], z[32];
    const char *w = o->step ? "step" : "session";
    fprintf(out, "gpufl fleet regress\n");
    fprintf(out, "  app        %s%s%s\n", f->app ? f->app : "(any)", f->host ? ", host " : "", f->host ? f->host : "");
    fprintf(out, "  baseline   %s: %u session%s\n", o->before_text, b->used, b->used == 1 ? "" : "s");
    fprintf(out, "  candidate  %s: %u session%s\n", o->after_text, c->used, c->used == 1 ? "" : "s");
    if (o->step)
        fprintf(out, "  per step   each session's time divided by its '%s' scopes (sessions without one left out)\n",
                o->step);
    fprintf(out, "  threshold  %.1f %%, min impact %.1f %%\n\n", o->threshold_pct, o->min_impact_pct);
    if (t->regressions)
        fprintf(out, "Result: REGRESSION: %u regression%s", t->regressions, t->regressions == 1 ? "" : "s");
    else
        fprintf(out, "Result: no regression");
    if (t->improvements)
        fprintf(out, "%s%u improvement%s", t->regressions ? ", " : " (", t->improvements,
                t->improvements == 1 ? "" : "s");
    fprintf(out, "%s\n", t->improvements && !t->regressions ? ")" : "");
    fprintf(out, "\nPer %-7s %*s %12s %12s %10s\n", w, 18, "", "baseline", "candidate", "change");
    const gpufl__diff_change *rows[2] = {&t->wall, &t->busy};
    const char *labels[2] = {"wall time (mean)", "kernel time (mean)"};
    for (int i = 0; i < 2; i++) {
        const gpufl__diff_change *ch = rows[i];
        pct(ch->total_ns, nonneg(ch->base.total), z, sizeof z);
        fprintf(out, "  %-30s %12s %12s %10s%s%s\n", labels[i], dur(nonneg(ch->base.total), x, sizeof x),
                dur(nonneg(ch->cand.total), y, sizeof y), z, ch->verdict ? "  " : "",
                ch->verdict ? gpufl__diff_verdict_name(ch->verdict) : "");
    }
    table(out, items, n, KERNEL, o->all, w);
    table(out, items, n, SCOPE, o->all, w);
    fprintf(out,
            "\nHow changes are judged (as gpufl diff, with a session as the item)\n"
            "  mean       time per %s, over the period's sessions (0 where a name did not run)\n"
            "  change     after p50: of the median session; noise: 2 standard errors of that change,\n"
            "             from each period's p50-p95 distance; n/a with a single session\n"
            "  slower     the change per %s is past the threshold and past the noise (faster: down)\n"
            "  regressed  the mean moved past the threshold and by at least min impact (of the\n"
            "             baseline's kernel time per %s for kernels, wall time for scopes), and\n"
            "             the median moved past the noise; a kernel only in the candidate, by at least\n"
            "             min impact (improved: down, or gone)\n",
            w, w, w);
}

/* ---- JSON ----------------------------------------------------------------------- */

static json_t *dist_json(const gpufl__ana_dist *d)
{
    return json_pack("{s:I,s:I,s:I,s:I}", "items", (json_int_t)d->n, "mean_ns", (json_int_t)d->total, "p50_ns",
                     (json_int_t)d->p50, "p95_ns", (json_int_t)d->p95);
}

static json_t *change_json(const char *name, const gpufl__diff_change *ch)
{
    json_t *j =
        json_pack("{s:s,s:s,s:s,s:s}", "name", name, "presence", gpufl__diff_presence_name(ch->presence), "verdict",
                  gpufl__diff_verdict_name(ch->verdict), "per_item", gpufl__diff_per_item_name(ch->per_item));
    if (!j)
        return NULL;
    if (ch->presence != GPUFL__DIFF_NEW)
        json_object_set_new(j, "baseline", dist_json(&ch->base));
    if (ch->presence != GPUFL__DIFF_GONE)
        json_object_set_new(j, "candidate", dist_json(&ch->cand));
    json_object_set_new(j, "mean_change_ns", json_integer(ch->total_ns));
    if (ch->presence == GPUFL__DIFF_BOTH) {
        json_object_set_new(j, "p50_change_pct", json_real(ch->item_pct));
        json_object_set_new(j, "noise_pct", ch->noise_known ? json_real(ch->item_noise_pct) : json_null());
    }
    json_object_set_new(j, "within_noise", json_boolean(ch->flags & GPUFL__DIFF_F_NOISE));
    json_object_set_new(j, "below_min_impact", json_boolean(ch->flags & GPUFL__DIFF_F_SMALL));
    return j;
}

static void json_out(FILE *out, const gpufl__fleet_filter *f, const gpufl__fleet_regress_opts *o, const period *b,
                     const period *c, const totals *t, const item *items, size_t n)
{
    json_t *k = json_array(), *s = json_array();
    for (size_t i = 0; i < n; i++)
        if (o->all || worth_listing(&items[i].ch))
            json_array_append_new(items[i].kind == KERNEL ? k : s, change_json(items[i].name, &items[i].ch));
    json_t *root = json_pack(
        "{s:s?,s:s?,s:s,s:s?,s:{s:s,s:I},s:{s:s,s:I},s:f,s:f,s:I,s:I,s:o,s:o,s:o,s:o}", "app", f->app, "host", f->host,
        "item", o->step ? "step" : "session", "step_scope", o->step, "baseline", "period", o->before_text, "sessions",
        (json_int_t)b->used, "candidate", "period", o->after_text, "sessions", (json_int_t)c->used, "threshold_pct",
        o->threshold_pct, "min_impact_pct", o->min_impact_pct, "regressions", (json_int_t)t->regressions,
        "improvements", (json_int_t)t->improvements, "wall_time", change_json("wall time", &t->wall), "kernel_time",
        change_json("kernel time", &t->busy), "kernels", k, "scopes", s);
    if (root)
        json_dumpf(root, out, JSON_INDENT(2));
    fputc('\n', out);
    json_decref(root);
}

/* ---- the command ------------------------------------------------------------------ */

int gpufl__fleet_regress(PGconn *conn, const gpufl__fleet_filter *f, const gpufl__fleet_regress_opts *o, FILE *out,
                         unsigned *regressions, char *why, size_t why_len)
{
    period b = {0}, c = {0};
    item *items = NULL;
    size_t n = 0;
    totals t = {0};
    int rc = period_load(conn, f, o->step, o->before_from, o->before_to, &b, why, why_len);
    if (rc == 0)
        rc = period_load(conn, f, o->step, o->after_from, o->after_to, &c, why, why_len);
    if (rc == 0 && (!b.n || !c.n)) {
        snprintf(why, why_len, "no session%s%s%s started in %s (the %s period): nothing to compare",
                 f->app ? " of app '" : "", f->app ? f->app : "", f->app ? "'" : "",
                 !b.n ? o->before_text : o->after_text, !b.n ? "--before" : "--after");
        rc = GPUFL_ENOTFOUND;
    } else if (rc == 0 && (!b.used || !c.used)) {
        snprintf(why, why_len, "none of the %u session%s started in %s (the %s period) has a scope '%s' (--per-step)",
                 !b.used ? b.n : c.n, (!b.used ? b.n : c.n) == 1 ? "" : "s", !b.used ? o->before_text : o->after_text,
                 !b.used ? "--before" : "--after", o->step);
        rc = GPUFL_ENOTFOUND;
    }
    if (rc == 0) {
        t.wall.presence = t.busy.presence = GPUFL__DIFF_BOTH;
        rc = per_item(&b, b.wall, &t.wall.base) | per_item(&c, c.wall, &t.wall.cand) |
             per_item(&b, b.busy, &t.busy.base) | per_item(&c, c.busy, &t.busy.cand);
    }
    if (rc == 0) {
        uint64_t kfloor = (uint64_t)((double)nonneg(t.busy.base.total) * o->min_impact_pct / 100.0);
        uint64_t sfloor = (uint64_t)((double)nonneg(t.wall.base.total) * o->min_impact_pct / 100.0);
        gpufl__diff_judge_medians(&t.wall, o->threshold_pct, 0, false);
        gpufl__diff_judge_medians(&t.busy, o->threshold_pct, 0, false);
        t.busy.verdict = GPUFL__DIFF_SAME; /* shown, not judged: the kernels judge it in detail */
        rc = compare(&b, &c, o, kfloor, sfloor, &items, &n);
    }
    if (rc == 0) {
        t.regressions = t.wall.verdict == GPUFL__DIFF_REGRESSED;
        t.improvements = t.wall.verdict == GPUFL__DIFF_IMPROVED;
        for (size_t i = 0; i < n; i++) {
            t.regressions += items[i].ch.verdict == GPUFL__DIFF_REGRESSED;
            t.improvements += items[i].ch.verdict == GPUFL__DIFF_IMPROVED;
        }
        *regressions = t.regressions;
        if (o->json)
            json_out(out, f, o, &b, &c, &t, items, n);
        else
            text(out, f, o, &b, &c, &t, items, n);
    } else if (rc == GPUFL_ENOMEM) {
        snprintf(why, why_len, "out of memory");
    }
    free(items);
    period_free(&b);
    period_free(&c);
    return rc;
}
