/*
 * Every figure the HTML report shows against the JSON report of the same
 * session: `gpufl report --format html` and `gpufl report --format json`,
 * on the hand-written sessions of report_fixture.h, on a session recorded
 * with the synthetic device plugin and on the real PyTorch session in
 * samples/train_sample.
 *
 * Why: the HTML renderer formats the analyses' results on its own
 * (src/present/report/report_html_tables.c), and once printed one session's
 * memsets with the copies' bytes and time (two formatted values sharing one
 * buffer) while the text and JSON reports were right. The JSON report is
 * the contract (docs/REPORT.md, checked by test_report_golden), so the page
 * is read back as a browser shows it (tests/support/html_text.c: every
 * heading, paragraph and cell), each figure converted back from its units
 * and compared with the JSON value within the precision it was printed
 * with. A figure the page shows that this test does not check fails it
 * too: a new column or sentence comes with its check here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/names.h"
#include "figure_match.h"
#include "html_text.h"
#include "present/report/report_html.h"
#include "record.h"
#include "report_fixture.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(dir, "report-figures")

/* ---- the JSON report --------------------------------------------------------------- */

static json_t *jget(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        fail_msg("the JSON report has no \"%s\"", key);
    return v;
}

static int64_t ji(json_t *o, const char *key)
{
    json_t *v = jget(o, key);
    if (!json_is_integer(v))
        fail_msg("JSON \"%s\" is not an integer", key);
    return (int64_t)json_integer_value(v);
}

static double jr(json_t *o, const char *key)
{
    json_t *v = jget(o, key);
    if (!json_is_number(v))
        fail_msg("JSON \"%s\" is not a number", key);
    return json_number_value(v);
}

/* A name: "" for null, as the page shows a name the trace does not have. */
static const char *js(json_t *o, const char *key)
{
    json_t *v = jget(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* ---- reading a section of the page in order ------------------------------------------- */

typedef struct sec {
    ht_item **it;
    size_t n, i;
    char where[160];
} sec;

static void sec_open(sec *s, ht_page *page, const char *id)
{
    s->it = calloc(page->n + 1, sizeof *s->it);
    assert_non_null(s->it);
    s->n = s->i = 0;
    for (size_t i = 0; i < page->n; i++)
        if (!strcmp(page->items[i].section, id))
            s->it[s->n++] = &page->items[i];
    if (!s->n)
        fail_msg("the page has no section \"%s\"", id);
    snprintf(s->where, sizeof s->where, "section %s", id);
}

static void sec_close(sec *s)
{
    if (s->i < s->n)
        fail_msg("%s: more on the page than this test reads: \"%s\"", s->where, s->it[s->i]->text);
    free(s->it);
}

static ht_item *peek(sec *s) { return s->i < s->n ? s->it[s->i] : NULL; }

static ht_item *next(sec *s, ht_kind kind)
{
    ht_item *it = peek(s);
    if (!it)
        fail_msg("%s: ends early", s->where);
    if (it->kind != kind)
        fail_msg("%s: \"%s\" (<%s>) where another kind of item was expected", s->where, it->text, it->tag);
    s->i++;
    it->checked = true;
    return it;
}

static void expect_text(sec *s, ht_kind kind, const char *text)
{
    ht_item *it = next(s, kind);
    if (strcmp(it->text, text))
        fail_msg("%s: \"%s\" where \"%s\" was expected", s->where, it->text, text);
}

/* Prose with no figure in it (an explanation, "None recorded."). */
static void prose(sec *s, ht_kind kind)
{
    ht_item *it = next(s, kind);
    if (ht_has_digit(it->text))
        fail_msg("%s: a figure this test does not check: \"%s\"", s->where, it->text);
}

/* A table's header row must name exactly these columns. */
static void head(sec *s, const char *const *cols)
{
    for (size_t c = 0; cols[c]; c++) {
        ht_item *it = next(s, HT_HEAD);
        if (strcmp(it->text, cols[c]) || it->col != (int)c)
            fail_msg("%s: column %zu is \"%s\", not \"%s\"", s->where, c, it->text, cols[c]);
    }
    ht_item *it = peek(s);
    if (it && it->kind == HT_HEAD)
        fail_msg("%s: a column this test does not check: \"%s\"", s->where, it->text);
}

/* The next cell, which must be column col of a table row; a cursor over it. */
static void cell(sec *s, int col, const char *name, fm_cursor *m)
{
    ht_item *it = next(s, HT_CELL);
    if (it->col != col)
        fail_msg("%s: cell \"%s\" is in column %d, not %d (%s)", s->where, it->text, it->col, col, name);
    static char where[400];
    snprintf(where, sizeof where, "%s, row %d, %s", s->where, it->row, name);
    fm_begin(m, it->text, where);
}

static void cell_int(sec *s, int col, const char *name, int64_t v)
{
    fm_cursor m;
    cell(s, col, name, &m);
    fm_int(&m, v);
    fm_end(&m);
}

static void cell_ns(sec *s, int col, const char *name, double v, double tol)
{
    fm_cursor m;
    cell(s, col, name, &m);
    fm_ns(&m, v, tol);
    fm_end(&m);
}

static void cell_bytes(sec *s, int col, const char *name, double v)
{
    fm_cursor m;
    cell(s, col, name, &m);
    fm_bytes(&m, v);
    fm_end(&m);
}

static void cell_pct(sec *s, int col, const char *name, double v, double tol)
{
    fm_cursor m;
    cell(s, col, name, &m);
    fm_pct(&m, v, tol, " %");
    fm_end(&m);
}

static void cell_text(sec *s, int col, const char *name, const char *v)
{
    fm_cursor m;
    cell(s, col, name, &m);
    fm_lit(&m, v);
    fm_end(&m);
}

/* Precisions of the JSON report's reals (docs/REPORT.md). */
#define SHARE_TOL 5e-7 /* fractions: 6 decimals */
#define PCT_TOL 5e-4   /* *_pct and gbps: 3 decimals */
/* A mean: the page shows it rounded to a whole ns, the JSON with 1 decimal. */
#define MEAN_TOL 0.55

/* ---- summary ------------------------------------------------------------------------- */

typedef struct sess {
    json_t *j;          /* the JSON report */
    const char *source; /* the path given to both commands */
} sess;

static void fact_value(sec *s, const char *key, const char *value, const sess *x)
{
    json_t *se = jget(x->j, "session");
    fm_cursor m;
    char where[300];
    snprintf(where, sizeof where, "%s, fact \"%s\"", s->where, key);
    fm_begin(&m, value, where);
    if (!strcmp(key, "application")) {
        fm_lit(&m, js(se, "app_name"));
    } else if (!strcmp(key, "host")) {
        fm_lit(&m, js(se, "host"));
    } else if (!strcmp(key, "pid")) {
        fm_int(&m, ji(se, "pid"));
    } else if (!strcmp(key, "session")) {
        fm_lit(&m, js(se, "session_id"));
    } else if (!strcmp(key, "started")) {
        time_t secs = (time_t)(ji(se, "start_wall_ns") / 1000000000);
        struct tm tm;
        char when[64];
        assert_non_null(gmtime_r(&secs, &tm));
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
        fm_lit(&m, when);
    } else if (!strcmp(key, "duration")) {
        fm_ns(&m, (double)ji(se, "wall_ns"), 0);
        if (!json_is_true(jget(se, "ended"))) { /* a note in words after it */
            if (!*m.p || ht_has_digit(m.p))
                fail_msg("%s: an unended session's duration needs its note, in words: \"%s\"", where, value);
            m.p += strlen(m.p);
        }
    } else if (!strcmp(key, "gpufl version")) {
        fm_lit(&m, js(se, "gpufl_version"));
    } else if (!strcmp(key, "engine")) {
        json_t *en = jget(se, "engine");
        fm_lit(&m, js(en, "ran"));
        if (json_is_string(jget(en, "plugin"))) {
            fm_lit(&m, " (plugin ");
            fm_lit(&m, js(en, "plugin"));
            fm_lit(&m, ")");
        }
    } else if (!strcmp(key, "engine asked for")) {
        fm_lit(&m, js(jget(se, "engine"), "requested"));
    } else if (!strcmp(key, "engine note")) {
        fm_lit(&m, js(jget(se, "engine"), "reason"));
    } else if (!strcmp(key, "driver")) {
        fm_lit(&m, js(se, "driver_version"));
    } else if (!strcmp(key, "CUDA driver")) {
        fm_lit(&m, js(se, "cuda_driver_version"));
    } else if (!strcmp(key, "read from")) {
        /* the JSON leaves the reading machine's paths out on purpose: the
         * path given, and for a directory the trace.gflt read in it */
        fm_lit(&m, x->source);
        size_t n = strlen(x->source);
        if (!strcmp(js(se, "source_format"), "gflt") && (n < 5 || strcmp(x->source + n - 5, ".gflt")))
            fm_lit(&m, "/trace.gflt");
    } else {
        fail_msg("%s: a fact this test does not check", where);
    }
    fm_end(&m);
}

static void facts(sec *s, const sess *x)
{
    json_t *se = jget(x->j, "session");
    bool seen_driver = false, seen_cuda = false, seen_started = false, seen_engine = false, seen_why = false;
    int n = 0;
    while (peek(s) && peek(s)->kind == HT_KEY && !strcmp(peek(s)->table_class, "facts")) {
        ht_item *k = next(s, HT_KEY), *v = next(s, HT_CELL);
        if (v->row != k->row)
            fail_msg("%s: fact \"%s\" has no value", s->where, k->text);
        seen_driver |= !strcmp(k->text, "driver");
        seen_cuda |= !strcmp(k->text, "CUDA driver");
        seen_started |= !strcmp(k->text, "started");
        seen_engine |= !strcmp(k->text, "engine");
        seen_why |= !strcmp(k->text, "engine note");
        fact_value(s, k->text, v->text, x);
        n++;
    }
    /* the optional facts are there exactly when the JSON has them */
    assert_int_equal(seen_driver, json_is_string(jget(se, "driver_version")));
    assert_int_equal(seen_cuda, json_is_string(jget(se, "cuda_driver_version")));
    assert_int_equal(seen_started, ji(se, "start_wall_ns") != 0);
    assert_int_equal(seen_engine, json_is_string(jget(jget(se, "engine"), "ran")));
    assert_int_equal(seen_why, json_is_string(jget(jget(se, "engine"), "reason")));
    assert_int_equal(n, 7 + seen_driver + seen_cuda + seen_started + seen_engine + 2 * seen_why);
}

static void warnings(sec *s, const sess *x)
{
    json_t *su = jget(x->j, "summary"), *se = jget(x->j, "session");
    bool dropped = false, skipped = false, stopped = false;
    while (peek(s) && peek(s)->kind == HT_PARA) {
        ht_item *it = next(s, HT_PARA);
        fm_cursor m;
        char where[300];
        snprintf(where, sizeof where, "%s, warning", s->where);
        fm_begin(&m, it->text, where);
        if (strstr(it->text, "events were lost")) {
            dropped = true;
            fm_int(&m, ji(su, "dropped_total"));
            fm_lit(&m, " events were lost:");
            json_t *by = jget(su, "dropped");
            size_t named = 0;
            /* the page's words for each reason are the names table's label
             * of the JSON's key */
            for (uint8_t r = 0; r < GFL_DROP_REASON_COUNT; r++) {
                json_t *v = json_object_get(by, gpufl__drop_reason(r)->key);
                if (!v)
                    continue;
                named++;
                fm_lit(&m, " ");
                fm_lit(&m, gpufl__drop_reason(r)->label);
                fm_lit(&m, " ");
                fm_int(&m, (int64_t)json_integer_value(v));
                fm_lit(&m, ";");
            }
            /* a reason this gpufl does not name is "other" on the page */
            for (size_t r = named; r < json_object_size(by); r++)
                fail_msg("%s: the JSON has a drop reason this test does not know", where);
            fm_lit(&m, " figures below undercount.");
        } else if (!strncmp(it->text, "The reader skipped", 18)) {
            skipped = true;
            fm_lit(&m, "The reader skipped ");
            fm_int(&m, ji(su, "skipped_bytes"));
            fm_lit(&m, " bytes of a torn end, ");
            fm_int(&m, ji(su, "skipped_lines"));
            fm_lit(&m, " events and ");
            fm_int(&m, ji(su, "skipped_chunks"));
            fm_lit(&m, " chunks of unknown types.");
        } else if (!strncmp(it->text, "Recording stopped early", 23)) {
            stopped = true;
            fm_lit(&m, "Recording stopped early: ");
            fm_lit(&m, js(se, "stop_reason"));
            fm_lit(&m, " (");
            fm_lit(&m, js(se, "stop_detail"));
            fm_lit(&m, ").");
        } else if (ht_has_digit(it->text)) {
            fail_msg("%s: a figure this test does not check: \"%s\"", s->where, it->text);
        } else {
            m.p += strlen(m.p);
        }
        fm_end(&m);
    }
    assert_int_equal(dropped, ji(su, "dropped_total") != 0);
    assert_int_equal(skipped, ji(su, "skipped_bytes") || ji(su, "skipped_lines") || ji(su, "skipped_chunks"));
    assert_int_equal(stopped, json_is_string(jget(se, "stop_reason")));
}

static void totals(sec *s, const sess *x)
{
    json_t *su = jget(x->j, "summary");
    static const char *const cols[] = {"what", "count", "time", "bytes", NULL};
    static const char *const rows[][4] = {
        {"kernels", "kernels", "kernel_ns", NULL},
        {"copies", "copies", "copy_ns", "copy_bytes"},
        {"memsets", "memsets", "memset_ns", "memset_bytes"},
        {"syncs (host waiting)", "syncs", "sync_ns", NULL},
        {"gpufl scopes", "scopes", NULL, NULL},
        {"NVTX ranges", "nvtx_ranges", NULL, NULL},
        {"NVTX marks", "nvtx_marks", NULL, NULL},
        {"allocations", "allocations", NULL, NULL},
        {"frees", "frees", NULL, NULL},
    };
    head(s, cols);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        cell_text(s, 0, "what", rows[r][0]);
        cell_int(s, 1, rows[r][0], ji(su, rows[r][1]));
        if (rows[r][2])
            cell_ns(s, 2, rows[r][2], (double)ji(su, rows[r][2]), 0);
        else
            cell_text(s, 2, "time", "");
        if (rows[r][3])
            cell_bytes(s, 3, rows[r][3], (double)ji(su, rows[r][3]));
        else
            cell_text(s, 3, "bytes", "");
    }
}

static void gpus(sec *s, const sess *x)
{
    json_t *devs = jget(jget(x->j, "summary"), "devices"), *d;
    size_t i;
    if (!json_array_size(devs))
        return;
    expect_text(s, HT_HEADING, "GPUs");
    static const char *const cols[] = {
        "GPU",    "name",      "busy",      "busy time",   "kernels", "kernel time",         "copies",
        "copied", "util mean", "util peak", "memory peak", "memory",  "process memory peak", NULL};
    head(s, cols);
    json_array_foreach(devs, i, d)
    {
        cell_int(s, 0, "GPU", ji(d, "device"));
        cell_text(s, 1, "name", js(d, "name"));
        cell_pct(s, 2, "busy", jr(d, "busy_pct"), PCT_TOL);
        cell_ns(s, 3, "busy time", (double)ji(d, "busy_ns"), 0);
        cell_int(s, 4, "kernels", ji(d, "kernels"));
        cell_ns(s, 5, "kernel time", (double)ji(d, "kernel_ns"), 0);
        cell_int(s, 6, "copies", ji(d, "copies"));
        cell_bytes(s, 7, "copied", (double)ji(d, "copy_bytes"));
        if (ji(d, "util_samples")) {
            cell_pct(s, 8, "util mean", jr(d, "util_mean_pct"), PCT_TOL);
            cell_pct(s, 9, "util peak", jr(d, "util_peak_pct"), PCT_TOL);
        } else {
            cell_text(s, 8, "util mean", "");
            cell_text(s, 9, "util peak", "");
        }
        if (ji(d, "mem_samples"))
            cell_bytes(s, 10, "memory peak", (double)ji(d, "mem_used_peak_bytes"));
        else
            cell_text(s, 10, "memory peak", "");
        if (ji(d, "mem_total_bytes"))
            cell_bytes(s, 11, "memory", (double)ji(d, "mem_total_bytes"));
        else
            cell_text(s, 11, "memory", "");
        if (ji(d, "proc_mem_samples"))
            cell_bytes(s, 12, "process memory peak", (double)ji(d, "proc_mem_peak_bytes"));
        else
            cell_text(s, 12, "process memory peak", "");
    }
}

static void check_summary(ht_page *page, const sess *x)
{
    sec s;
    sec_open(&s, page, "summary");
    expect_text(&s, HT_HEADING, "Summary");
    facts(&s, x);
    warnings(&s, x);
    totals(&s, x);
    gpus(&s, x);
    sec_close(&s);
}

/* ---- hotspots -------------------------------------------------------------------------- */

static void dims(fm_cursor *m, json_t *a)
{
    for (size_t i = 0; i < 3; i++) {
        if (i)
            fm_lit(m, "\xc3\x97"); /* &times; */
        fm_int(m, (int64_t)json_integer_value(json_array_get(a, i)));
    }
}

/* "name 60%; name 40%": NVTX ranges first (frameworks' names), then scopes. */
static void launched_in(fm_cursor *m, json_t *k)
{
    static const char *const trees[] = {"nvtx", "scopes"};
    bool any = false;
    for (size_t t = 0; t < 2; t++) {
        json_t *nodes = jget(jget(k, trees[t]), "nodes"), *n;
        size_t i;
        json_array_foreach(nodes, i, n)
        {
            if (any)
                fm_lit(m, "; ");
            any = true;
            fm_lit(m, js(n, "name"));
            fm_lit(m, " ");
            fm_pct(m, jr(n, "share") * 100, SHARE_TOL * 100, "%");
        }
    }
}

static void check_hotspots(ht_page *page, const sess *x)
{
    json_t *h = jget(x->j, "hotspots"), *ks = jget(h, "kernels"), *k;
    size_t i;
    sec s;
    sec_open(&s, page, "hotspots");
    expect_text(&s, HT_HEADING, "Kernel hotspots");
    fm_cursor m;
    fm_begin(&m, next(&s, HT_PARA)->text, "hotspots: paragraph");
    fm_int(&m, ji(h, "launches"));
    fm_lit(&m, " launches of ");
    fm_int(&m, ji(h, "distinct"));
    fm_lit(&m, " distinct kernels, ");
    fm_ns(&m, (double)ji(h, "total_ns"), 0);
    fm_lit(&m, " of GPU time");
    if ((int64_t)json_array_size(ks) < ji(h, "distinct")) {
        fm_lit(&m, "; the ");
        fm_int(&m, (int64_t)json_array_size(ks));
        fm_lit(&m, " with the most GPU time");
    }
    fm_lit(&m, ".");
    fm_end(&m);
    if (!json_array_size(ks)) {
        expect_text(&s, HT_PARA, "No kernels were recorded.");
        sec_close(&s);
        return;
    }
    static const char *const cols[] = {
        "#",    "kernel", "launches",  "GPU time",      "share",     "mean",    "p50",         "p95", "max",
        "grid", "block",  "registers", "shared memory", "occupancy", "configs", "launched in", NULL};
    head(&s, cols);
    json_array_foreach(ks, i, k)
    {
        json_t *dur = jget(k, "dur"), *c = jget(k, "config");
        cell_int(&s, 0, "#", (int64_t)i + 1);
        cell_text(&s, 1, "kernel", js(k, "name"));
        cell_int(&s, 2, "launches", ji(dur, "n"));
        cell_ns(&s, 3, "GPU time", (double)ji(dur, "total"), 0);
        cell_pct(&s, 4, "share", jr(k, "share") * 100, SHARE_TOL * 100);
        cell_ns(&s, 5, "mean", jr(dur, "mean"), MEAN_TOL);
        cell_ns(&s, 6, "p50", (double)ji(dur, "p50"), 0);
        cell_ns(&s, 7, "p95", (double)ji(dur, "p95"), 0);
        cell_ns(&s, 8, "max", (double)ji(dur, "max"), 0);
        cell(&s, 9, "grid", &m);
        dims(&m, jget(c, "grid"));
        fm_end(&m);
        cell(&s, 10, "block", &m);
        dims(&m, jget(c, "block"));
        fm_end(&m);
        cell_int(&s, 11, "registers", ji(c, "registers"));
        cell_bytes(&s, 12, "shared memory", (double)(ji(c, "static_smem") + ji(c, "dynamic_smem")));
        cell(&s, 13, "occupancy", &m);
        if (json_is_number(jget(c, "occupancy"))) {
            fm_pct(&m, jr(c, "occupancy") * 100, 5e-5 * 100, " %"); /* 4 decimals in the JSON */
            json_t *lim = jget(c, "limiter");
            if (json_is_string(lim)) {
                char name[64];
                snprintf(name, sizeof name, "%s", json_string_value(lim));
                for (char *p = name; *p; p++)
                    if (*p == '_')
                        *p = ' ';
                fm_lit(&m, ", ");
                fm_lit(&m, name);
            }
        }
        fm_end(&m);
        cell_int(&s, 14, "configs", ji(k, "configs"));
        cell(&s, 15, "launched in", &m);
        launched_in(&m, k);
        fm_end(&m);
    }
    sec_close(&s);
}

/* ---- scopes ---------------------------------------------------------------------------- */

static void scope_tree(sec *s, json_t *tree, const char *title)
{
    json_t *nodes = jget(tree, "nodes"), *n;
    expect_text(s, HT_HEADING, title);
    if (!json_array_size(nodes)) {
        expect_text(s, HT_PARA, "None recorded.");
        return;
    }
    fm_cursor m;
    fm_begin(&m, next(s, HT_PARA)->text, title);
    fm_int(&m, ji(tree, "instances"));
    fm_lit(&m, " instances in ");
    fm_int(&m, (int64_t)json_array_size(nodes));
    fm_lit(&m, " paths. GPU work launched inside them: ");
    fm_ns(&m, (double)ji(tree, "attributed_ns"), 0);
    fm_lit(&m, "; outside any: ");
    fm_ns(&m, (double)ji(tree, "unattributed_ns"), 0);
    fm_lit(&m, ".");
    if (json_array_size(nodes) > GPUFL__HTML_MAX_NODES) {
        fm_lit(&m, " The first ");
        fm_int(&m, GPUFL__HTML_MAX_NODES);
        fm_lit(&m, " paths are listed (of ");
        fm_int(&m, (int64_t)json_array_size(nodes));
        fm_lit(&m, ", in tree order).");
    }
    fm_end(&m);
    static const char *const cols[] = {"path",      "count",    "threads",         "wall time", "mean",    "p95", "max",
                                       "of parent", "GPU time", "GPU time (self)", "GPU ops",   "unended", NULL};
    head(s, cols);
    size_t i;
    json_array_foreach(nodes, i, n)
    {
        if (i == GPUFL__HTML_MAX_NODES)
            break;
        json_t *wall = jget(n, "wall");
        cell(s, 0, "path", &m);
        fm_lit(&m, js(n, "name"));
        if (json_is_string(jget(n, "domain"))) {
            fm_lit(&m, " [");
            fm_lit(&m, js(n, "domain"));
            fm_lit(&m, "]");
        }
        fm_end(&m);
        cell_int(s, 1, "count", ji(n, "count"));
        cell_int(s, 2, "threads", ji(n, "threads"));
        cell_ns(s, 3, "wall time", (double)ji(wall, "total"), 0);
        cell_ns(s, 4, "mean", jr(wall, "mean"), MEAN_TOL);
        cell_ns(s, 5, "p95", (double)ji(wall, "p95"), 0);
        cell_ns(s, 6, "max", (double)ji(wall, "max"), 0);
        cell_pct(s, 7, "of parent", jr(n, "share_of_parent") * 100, SHARE_TOL * 100);
        cell_ns(s, 8, "GPU time", (double)ji(n, "gpu_ns"), 0);
        cell_ns(s, 9, "GPU time (self)", (double)ji(n, "gpu_self_ns"), 0);
        cell_int(s, 10, "GPU ops", ji(n, "gpu_ops"));
        cell_int(s, 11, "unended", ji(n, "unended"));
    }
}

static void check_scopes(ht_page *page, const sess *x)
{
    json_t *sc = jget(x->j, "scopes");
    sec s;
    sec_open(&s, page, "scopes");
    expect_text(&s, HT_HEADING, "Scopes and NVTX ranges");
    scope_tree(&s, jget(sc, "scopes"), "gpufl scopes");
    scope_tree(&s, jget(sc, "nvtx"), "NVTX ranges");
    if (ji(sc, "nvtx_marks")) {
        fm_cursor m;
        fm_begin(&m, next(&s, HT_PARA)->text, "scopes: NVTX marks");
        fm_int(&m, ji(sc, "nvtx_marks"));
        fm_lit(&m, " NVTX marks (instants, on the timeline).");
        fm_end(&m);
    }
    sec_close(&s);
}

/* ---- idle, copies, launches, memory --------------------------------------------------- */

static void check_idle(ht_page *page, const sess *x)
{
    json_t *rows = jget(x->j, "idle"), *r;
    sec s;
    sec_open(&s, page, "idle");
    expect_text(&s, HT_HEADING, "GPU idle time");
    prose(&s, HT_PARA);
    if (!json_array_size(rows)) {
        expect_text(&s, HT_PARA, "No GPU work was recorded.");
        sec_close(&s);
        return;
    }
    static const char *const cols[] = {"GPU",  "stream", "ops",   "busy",         "idle",       "idle %", "gaps",
                                       "host", "sync",   "other", "before first", "after last", NULL};
    head(&s, cols);
    size_t i;
    json_array_foreach(rows, i, r)
    {
        cell_int(&s, 0, "GPU", ji(r, "device"));
        if (json_is_null(jget(r, "stream")))
            cell_text(&s, 1, "stream", "all");
        else
            cell_int(&s, 1, "stream", ji(r, "stream"));
        cell_int(&s, 2, "ops", ji(r, "ops"));
        cell_ns(&s, 3, "busy", (double)ji(r, "busy_ns"), 0);
        cell_ns(&s, 4, "idle", (double)ji(r, "idle_ns"), 0);
        int64_t span = ji(r, "last_ns") - ji(r, "first_ns");
        cell_pct(&s, 5, "idle %", span > 0 ? (double)ji(r, "idle_ns") * 100.0 / (double)span : 0, 0);
        cell_int(&s, 6, "gaps", ji(r, "gaps"));
        cell_ns(&s, 7, "host", (double)ji(r, "host_ns"), 0);
        cell_ns(&s, 8, "sync", (double)ji(r, "sync_ns"), 0);
        cell_ns(&s, 9, "other", (double)ji(r, "other_ns"), 0);
        cell_ns(&s, 10, "before first", (double)ji(r, "lead_ns"), 0);
        cell_ns(&s, 11, "after last", (double)ji(r, "tail_ns"), 0);
    }
    sec_close(&s);
}

static void check_copies(ht_page *page, const sess *x)
{
    json_t *c = jget(x->j, "copies"), *rows = jget(c, "rows"), *r;
    sec s;
    sec_open(&s, page, "copies");
    expect_text(&s, HT_HEADING, "Copies");
    fm_cursor m;
    fm_begin(&m, next(&s, HT_PARA)->text, "copies: paragraph");
    fm_int(&m, ji(c, "count"));
    fm_lit(&m, " copies, ");
    fm_bytes(&m, (double)ji(c, "bytes"));
    fm_lit(&m, " in ");
    fm_ns(&m, (double)ji(c, "ns"), 0);
    fm_lit(&m, "; ");
    fm_int(&m, ji(c, "memsets"));
    fm_lit(&m, " memsets, ");
    fm_bytes(&m, (double)ji(c, "memset_bytes"));
    fm_lit(&m, " in ");
    fm_ns(&m, (double)ji(c, "memset_ns"), 0);
    fm_lit(&m, ".");
    fm_end(&m);
    if (!json_array_size(rows)) {
        sec_close(&s);
        return;
    }
    static const char *const cols[] = {"GPU",  "kind",      "count",   "bytes",     "time",     "size p50",
                                       "GB/s", "peak GB/s", "of peak", "peak from", "pageable", NULL};
    head(&s, cols);
    size_t i;
    json_array_foreach(rows, i, r)
    {
        cell_int(&s, 0, "GPU", ji(r, "device"));
        cell_text(&s, 1, "kind", js(r, "kind"));
        cell_int(&s, 2, "count", ji(r, "count"));
        cell_bytes(&s, 3, "bytes", (double)ji(r, "bytes"));
        cell_ns(&s, 4, "time", (double)ji(r, "ns"), 0);
        cell_bytes(&s, 5, "size p50", (double)ji(jget(r, "size"), "p50"));
        cell(&s, 6, "GB/s", &m);
        fm_real(&m, jr(r, "gbps"), PCT_TOL);
        fm_end(&m);
        if (json_is_string(jget(r, "peak_source"))) {
            cell(&s, 7, "peak GB/s", &m);
            fm_real(&m, jr(r, "peak_gbps"), PCT_TOL);
            fm_end(&m);
            cell_pct(&s, 8, "of peak", jr(r, "pct_of_peak"), PCT_TOL);
            cell(&s, 9, "peak from", &m);
            if (!strcmp(js(r, "peak_source"), "pcie")) {
                fm_lit(&m, "PCIe gen ");
                fm_int(&m, ji(r, "pcie_gen"));
                fm_lit(&m, " x");
                fm_int(&m, ji(r, "pcie_width"));
            } else {
                assert_string_equal(js(r, "peak_source"), "memory");
                fm_lit(&m, "memory: ");
                fm_lit(&m, js(r, "peak_table"));
            }
            fm_end(&m);
        } else {
            cell_text(&s, 7, "peak GB/s", "");
            cell_text(&s, 8, "of peak", "");
            cell_text(&s, 9, "peak from", "unknown");
        }
        cell(&s, 10, "pageable", &m);
        fm_int(&m, ji(r, "pageable_count"));
        fm_lit(&m, " (");
        fm_bytes(&m, (double)ji(r, "pageable_bytes"));
        fm_lit(&m, ")");
        fm_end(&m);
    }
    sec_close(&s);
}

static void dist_row(sec *s, const char *label, json_t *d)
{
    cell_text(s, 0, "", label);
    cell_int(s, 1, "n", ji(d, "n"));
    cell_ns(s, 2, "mean", jr(d, "mean"), MEAN_TOL);
    cell_ns(s, 3, "min", (double)ji(d, "min"), 0);
    cell_ns(s, 4, "p50", (double)ji(d, "p50"), 0);
    cell_ns(s, 5, "p95", (double)ji(d, "p95"), 0);
    cell_ns(s, 6, "max", (double)ji(d, "max"), 0);
}

static void check_launches(ht_page *page, const sess *x)
{
    json_t *l = jget(x->j, "launches");
    sec s;
    sec_open(&s, page, "launches");
    expect_text(&s, HT_HEADING, "Kernel launches");
    fm_cursor m;
    fm_begin(&m, next(&s, HT_PARA)->text, "launches: paragraph");
    fm_int(&m, ji(l, "with_api"));
    fm_lit(&m, " of ");
    fm_int(&m, ji(l, "kernels"));
    fm_lit(&m, " kernels have the times of their launch call. ");
    fm_int(&m, ji(l, "short_kernels"));
    fm_lit(&m, " ran shorter than their own launch call (");
    fm_ns(&m, (double)ji(l, "short_kernel_ns"), 0);
    fm_lit(&m, " of GPU time): back to back, such kernels keep the GPU waiting for the CPU.");
    fm_end(&m);
    if (ji(l, "with_api")) {
        static const char *const cols[] = {"", "n", "mean", "min", "p50", "p95", "max", NULL};
        head(&s, cols);
        dist_row(&s, "latency: call to kernel start", jget(l, "latency"));
        dist_row(&s, "queue: call return to kernel start", jget(l, "queue"));
        dist_row(&s, "launch call", jget(l, "call"));
    }
    sec_close(&s);
}

/* A signed size ("-1.00 MiB"). */
static void cell_sbytes(sec *s, int col, const char *name, double v)
{
    fm_cursor m;
    cell(s, col, name, &m);
    if (v < 0)
        fm_lit(&m, "-");
    fm_bytes(&m, v < 0 ? -v : v);
    fm_end(&m);
}

static bool has_section(ht_page *page, const char *id)
{
    for (size_t i = 0; i < page->n; i++)
        if (!strcmp(page->items[i].section, id))
            return true;
    return false;
}

/* The label the page gives a layer key of the JSON report. */
static const char *layer_label(const char *key)
{
    static const char *const pairs[][2] = {{"device_used", "device used (NVML, all processes)"},
                                           {"process_used", "this process (NVML)"},
                                           {"driver", "driver allocations live"},
                                           {"reserved", "framework reserved"},
                                           {"active", "framework active"},
                                           {"allocated", "framework allocated"},
                                           {"inactive_split", "inactive split (fragmentation)"},
                                           {"largest_free", "largest free block"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (!strcmp(pairs[i][0], key))
            return pairs[i][1];
    fail_msg("unknown layer \"%s\"", key);
    return "";
}

static void check_mem_layers(ht_page *page, const sess *x)
{
    json_t *devs = jget(x->j, "memory_layers"), *d, *e;
    if (!json_array_size(devs)) {
        if (has_section(page, "mem-layers"))
            fail_msg("the page has a layers section for a session without memory layers");
        return;
    }
    int64_t start = ji(jget(x->j, "session"), "start_ns");
    sec s;
    sec_open(&s, page, "mem-layers");
    expect_text(&s, HT_HEADING, "Memory layers");
    prose(&s, HT_PARA);
    static const char *const cols[] = {"GPU", "layer", "at the process's peak", "peak", "peak at", NULL};
    head(&s, cols);
    size_t i, k;
    json_array_foreach(devs, i, d) json_array_foreach(jget(d, "layers"), k, e)
    {
        cell_int(&s, 0, "GPU", ji(d, "device"));
        cell_text(&s, 1, "layer", layer_label(js(e, "layer")));
        json_t *at = jget(e, "at_peak_bytes");
        if (json_is_null(at))
            cell_text(&s, 2, "at the process's peak", "-");
        else
            cell_bytes(&s, 2, "at the process's peak", (double)json_integer_value(at));
        cell_bytes(&s, 3, "peak", (double)ji(e, "peak_bytes"));
        cell_ns(&s, 4, "peak at", (double)(ji(e, "peak_ns") - start), 0);
    }
    static const char *const gap_cols[] = {"GPU", "gap", "bytes", "what usually explains it", NULL};
    head(&s, gap_cols);
    json_array_foreach(devs, i, d) json_array_foreach(jget(d, "gaps"), k, e)
    {
        char pair[128];
        snprintf(pair, sizeof pair, "%s - %s", js(e, "upper"), js(e, "lower"));
        cell_int(&s, 0, "GPU", ji(d, "device"));
        cell_text(&s, 1, "gap", pair);
        cell_sbytes(&s, 2, "bytes", (double)ji(e, "bytes"));
        cell_text(&s, 3, "what usually explains it", js(e, "why"));
    }
    sec_close(&s);
}

static void check_leaks(ht_page *page, const sess *x)
{
    json_t *lk = jget(x->j, "leaks"), *r;
    if (!json_array_size(jget(x->j, "memory_layers")) && !json_is_true(jget(jget(x->j, "memory"), "recorded"))) {
        if (has_section(page, "leaks"))
            fail_msg("the page has a leaks section for a session without memory");
        return;
    }
    sec s;
    sec_open(&s, page, "leaks");
    expect_text(&s, HT_HEADING, "Leaks");
    fm_cursor m;
    fm_begin(&m, next(&s, HT_PARA)->text, "leaks: paragraph");
    fm_lit(&m, "Each scope or NVTX range repeated at least ");
    fm_int(&m, ji(lk, "min_steps"));
    fm_lit(&m, " times is a step: live memory after each repetition, a line through them after a warm-up, a leak "
               "when it rises steadily (p below 0.01, r² at least 0.5, a MiB or more).");
    fm_end(&m);
    if (!json_array_size(jget(lk, "rows"))) {
        expect_text(&s, HT_PARA, "Nothing was repeated often enough.");
        sec_close(&s);
        return;
    }
    static const char *const cols[] = {"scope or range", "kind",     "GPU",      "layer", "repetitions", "fitted",
                                       "verdict",        "per step", "increase", "r²",    "p",           NULL};
    head(&s, cols);
    size_t i;
    json_array_foreach(jget(lk, "rows"), i, r)
    {
        cell_text(&s, 0, "scope or range", js(r, "scope"));
        cell_text(&s, 1, "kind", strcmp(js(r, "kind"), "scope") ? "NVTX" : "scope");
        cell_int(&s, 2, "GPU", ji(r, "device"));
        cell_text(&s, 3, "layer", layer_label(js(r, "layer")));
        cell_int(&s, 4, "repetitions", ji(r, "repetitions"));
        cell_int(&s, 5, "fitted", ji(r, "repetitions") - ji(r, "warmup"));
        cell_text(&s, 6, "verdict", json_is_true(jget(r, "detected")) ? js(r, "severity") : "no leak");
        cell_sbytes(&s, 7, "per step", jr(r, "slope_bytes_per_step"));
        cell_sbytes(&s, 8, "increase", jr(r, "memory_increase_mb") * 1048576.0);
        fm_cursor c;
        cell(&s, 9, "r²", &c);
        fm_real(&c, jr(r, "r_squared"), 5e-7);
        fm_end(&c);
        cell(&s, 10, "p", &c);
        if (jr(r, "p_value") < 0.0001)
            fm_lit(&c, "< 0.0001");
        else
            fm_real(&c, jr(r, "p_value"), 5e-10);
        fm_end(&c);
    }
    sec_close(&s);
}

/* How the page reads a row's never_freed_why. */
static const char *held_text(const char *why)
{
    if (!strcmp(why, "no_frees"))
        return "held: no free recorded (a caching allocator)";
    if (!strcmp(why, "unended"))
        return "not freed yet: the session did not end";
    return "leak candidates";
}

static void check_memory(ht_page *page, const sess *x)
{
    json_t *mem = jget(x->j, "memory"), *r;
    if (!json_is_true(jget(mem, "recorded"))) {
        if (has_section(page, "memory"))
            fail_msg("the page has a memory section for a session without allocations");
        return;
    }
    sec s;
    sec_open(&s, page, "memory");
    expect_text(&s, HT_HEADING, "Memory allocations");
    static const char *const cols[] = {
        "GPU",         "space",       "allocations",       "allocated",       "frees",           "peak", "live at peak",
        "live at end", "never freed", "never freed bytes", "unmatched frees", "never freed are", NULL};
    head(&s, cols);
    size_t i;
    json_array_foreach(jget(mem, "rows"), i, r)
    {
        cell_int(&s, 0, "GPU", ji(r, "device"));
        cell_text(&s, 1, "space", js(r, "space"));
        cell_int(&s, 2, "allocations", ji(r, "allocs"));
        cell_bytes(&s, 3, "allocated", (double)ji(r, "alloc_bytes"));
        cell_int(&s, 4, "frees", ji(r, "frees"));
        cell_bytes(&s, 5, "peak", (double)ji(r, "peak_bytes"));
        cell_int(&s, 6, "live at peak", ji(r, "live_at_peak"));
        cell_bytes(&s, 7, "live at end", (double)ji(r, "end_bytes"));
        cell_int(&s, 8, "never freed", ji(r, "never_freed"));
        cell_bytes(&s, 9, "never freed bytes", (double)ji(r, "never_freed_bytes"));
        cell_int(&s, 10, "unmatched frees", ji(r, "unmatched_frees"));
        cell_text(&s, 11, "never freed are", held_text(js(r, "never_freed_why")));
    }
    sec_close(&s);
}

/* The critical path of the step (JSON critical_path, present only with a
 * repeated step). */
static void check_critpath(ht_page *page, const sess *x)
{
    json_t *c = json_object_get(x->j, "critical_path"), *e;
    if (!c) {
        if (has_section(page, "critpath"))
            fail_msg("the page has a critical path section for a session without one");
        return;
    }
    sec s;
    sec_open(&s, page, "critpath");
    expect_text(&s, HT_HEADING, "Critical path");
    fm_cursor m;
    fm_begin(&m, next(&s, HT_PARA)->text, "critpath: paragraph");
    fm_lit(&m, strcmp(js(c, "step_kind"), "nvtx") ? "Scope " : "NVTX range ");
    fm_lit(&m, js(c, "step"));
    fm_lit(&m, ", its median-long occurrence (");
    fm_int(&m, ji(c, "occurrence"));
    fm_lit(&m, " of ");
    fm_int(&m, ji(c, "steps"));
    fm_lit(&m, ", ");
    fm_ns(&m, (double)(ji(c, "end_ns") - ji(c, "begin_ns")), 0);
    fm_lit(&m, "): what it ran through, back from its end. host: the thread's own work between its calls; "
               "call: inside launch calls; launch latency: from a call to when its work could start; queue: "
               "work ready but not started; sync: waiting for the GPU. The timeline's first lane holds the "
               "path's GPU work. gpufl whatif re-schedules the session with a change.");
    fm_end(&m);
    static const char *const cols[] = {"on the path", "name", "time", "share", "pieces", NULL};
    head(&s, cols);
    size_t i;
    json_array_foreach(jget(c, "items"), i, e)
    {
        cell_text(&s, 0, "on the path", js(e, "kind"));
        json_t *name = jget(e, "name");
        cell_text(&s, 1, "name", json_is_null(name) ? "-" : json_string_value(name));
        cell_ns(&s, 2, "time", (double)ji(e, "ns"), 0);
        cell_pct(&s, 3, "share", jr(e, "share") * 100.0, SHARE_TOL * 100.0);
        cell_int(&s, 4, "pieces", ji(e, "pieces"));
    }
    sec_close(&s);
}

/* ---- the whole page --------------------------------------------------------------------- */

static void check_page(ht_page *page, const sess *x)
{
    /* the title and the header name the application */
    const char *app = js(jget(x->j, "session"), "app_name");
    char title[1024];
    snprintf(title, sizeof title, "gpufl report: %s", *app ? app : "session");
    size_t titles = 0;
    for (size_t i = 0; i < page->n; i++) {
        ht_item *it = &page->items[i];
        if (it->kind == HT_TITLE || (it->kind == HT_HEADING && !strcmp(it->tag, "h1"))) {
            assert_string_equal(it->text, title);
            it->checked = true;
            titles++;
        }
    }
    assert_int_equal(titles, 2);
    check_summary(page, x);
    check_hotspots(page, x);
    check_scopes(page, x);
    check_idle(page, x);
    check_copies(page, x);
    check_launches(page, x);
    check_critpath(page, x);
    check_mem_layers(page, x);
    check_leaks(page, x);
    check_memory(page, x);
    /* anything else on the page (navigation, the timeline's controls, a
     * section this test does not know) shows no figure */
    for (size_t i = 0; i < page->n; i++) {
        const ht_item *it = &page->items[i];
        if (!it->checked && ht_has_digit(it->text))
            fail_msg("a figure this test does not check, in %s%s <%s>: \"%s\"", it->section[0] ? "section " : "",
                     it->section[0] ? it->section : "the page", it->tag, it->text);
    }
}

/* Both reports of the session at path, then every figure of the page. */
static void compare_reports(const char *path, const char *name)
{
    char html[4300];
    snprintf(html, sizeof html, "%s/%s.html", dir, name);
    char *out = NULL, *err = NULL;
    int rc = tu_run_subcommand(GFL_CLI, "report", (const char *[]){path, "--format", "json", NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl report --format json %s: exit %d: %s", path, rc, err);
    json_error_t e;
    sess x = {.j = json_loads(out, 0, &e), .source = path};
    if (!x.j)
        fail_msg("the JSON report of %s does not parse: %s (line %d)", path, e.text, e.line);
    free(out);
    free(err);
    rc = tu_run_subcommand(GFL_CLI, "report", (const char *[]){path, "--format", "html", "-o", html, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl report --format html %s: exit %d: %s", path, rc, err);
    free(out);
    free(err);
    char *text = tu_read_file(html, NULL);
    assert_non_null(text);
    ht_page page;
    ht_parse(text, &page);
    check_page(&page, &x);
    ht_free(&page);
    free(text);
    json_decref(x.j);
}

static void hand_written_session(void **state)
{
    (void)state;
    char path[4096];
    rf_write(dir, "full", path);
    compare_reports(path, "full");
}

static void crashed_session(void **state)
{
    (void)state;
    char path[4096];
    rf_write(dir, "crashed", path);
    compare_reports(path, "crashed");
}

/* A session recorded by the library, with the synthetic device plugin: it
 * says which engine recorded, and has two GPUs' samples. */
static void recorded_session(void **state)
{
    (void)state;
    char log_path[4200];
    snprintf(log_path, sizeof log_path, "%s/recorded", dir);
    char *d = tu_record_synthetic(log_path, "figures", GPUFL_LOG_GFLT, 0);
    compare_reports(d, "recorded");
    free(d);
}

static void sample_session(void **state)
{
    (void)state;
    compare_reports(GFL_SOURCE_DIR "/samples/train_sample", "sample");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_written_session),
        cmocka_unit_test(crashed_session),
        cmocka_unit_test(recorded_session),
        cmocka_unit_test(sample_session),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
