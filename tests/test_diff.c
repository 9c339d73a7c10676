/*
 * `gpufl diff` (src/analyze/ana_diff.c, src/present/diff_*.c,
 * src/cli/cmd_diff.c): two sessions compared per kernel, scope and device.
 *
 * Why: diff gates CI, so a wrong verdict either lets a slowdown through or
 * fails builds on noise. Checked on hand-written NDJSON sessions whose
 * answers are known: a kernel slower per launch, one faster, one launched
 * more often, a new and a vanished one, one whose launch configuration
 * changed, a noisy kernel whose total moved within its noise, a tiny kernel
 * under the impact floor, a change under the threshold, a slower scope, new
 * and vanished scopes, longer wall and idle time; the text against golden
 * text; the JSON parsed back; the command's exit codes (0, 1, 2) and its
 * errors; a pair that differs only by noise, and the recorded sample diffed
 * with itself, give no regression. Launches are matched by their place in
 * the program; on copies of the recorded sample, its largest GEMM (three
 * sizes in one launch configuration) made 20 % slower is a regression with
 * none, 2, 2 % or 10 % of its launches missing, and +-10 % of random noise
 * on every launch is none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/ana_diff.h"
#include "analyze/ana_diff_pairs.h"
#include "analyze/analysis.h"
#include "core/event.h"
#include "gpufl/trace.h"
#include "present/diff/diff_json.h"
#include "present/diff/diff_text.h"
#include "session_file.h"
#include "test_util.h"

#define T0 1000000000ull /* session start */
#define STEPS 10

TU_TEMP_DIR_FIXTURES(work, "diff")

/* ---- hand-written sessions --------------------------------------------------- */

/* A kernel of a session: `launches` launches whose durations cycle through
 * dur + jitter * {-2, -1, 0, 1, 2}, or through the reverse of that cycle:
 * against the other session's launch by launch, a long one then meets a
 * short one, as with noise that differs from run to run. */
typedef struct kspec {
    const char *name;
    unsigned launches;
    uint64_t dur, jitter;
    unsigned grid;
    bool reverse;
} kspec;

/* The scopes of a session: STEPS instances of "step" (step_ns apart, each
 * step_ns - 10 us long), each with a "forward" child of forward_ns and, if
 * extra is set, a child of that name of 500 us. */
typedef struct sspec {
    uint64_t step_ns, forward_ns;
    const char *extra;
} sspec;

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void add(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char line[1024];
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof line);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->len + (size_t)n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    memcpy(t->s + t->len, line, (size_t)n + 1);
    t->len += (size_t)n;
}

static void session_start(text *t, const char *channel)
{
    add(t,
        "{\"type\":\"session_start\",\"ts_ns\":%llu,\"wall_ns\":1790000000000000000,\"session_id\":"
        "\"d-1\",\"app_name\":\"trainer\",\"pid\":7,\"host\":\"h\",\"channel\":\"%s\",\"part\":0,"
        "\"format_version\":1,\"gpufl_version\":\"0.1.0\"}\n",
        (unsigned long long)T0, channel);
}

static void session_end(text *t, uint64_t end)
{
    add(t,
        "{\"type\":\"session_end\",\"ts_ns\":%llu,\"wall_ns\":%llu,\"session_id\":\"d-1\",\"app_name\":"
        "\"trainer\",\"lines\":1,\"lost\":0}\n",
        (unsigned long long)end, (unsigned long long)(1790000000000000000ull + end - T0));
}

static void scope_lines(text *t, uint64_t id, uint64_t parent, int depth, const char *name, uint64_t begin,
                        uint64_t end)
{
    add(t,
        "{\"type\":\"scope_begin\",\"ts_ns\":%llu,\"tid\":1,\"id\":%llu,\"parent\":%llu,\"depth\":%d,"
        "\"name\":\"%s\"}\n",
        (unsigned long long)begin, (unsigned long long)id, (unsigned long long)parent, depth, name);
    add(t,
        "{\"type\":\"scope_end\",\"ts_ns\":%llu,\"tid\":1,\"id\":%llu,\"parent\":%llu,\"depth\":%d,"
        "\"name\":\"%s\",\"begin_ns\":%llu,\"dur_ns\":%llu}\n",
        (unsigned long long)end, (unsigned long long)id, (unsigned long long)parent, depth, name,
        (unsigned long long)begin, (unsigned long long)(end - begin));
}

/* Writes the session <work>/<name> (device.log, scope.log): the kernels
 * back to back on one stream from T0 + 100 us, gap_ns apart; returns its
 * path (malloc'd). */
static char *write_session(const char *name, const kspec *ks, size_t nk, const sspec *ss, uint64_t gap_ns)
{
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s/%s", work, name);
    assert_int_equal(mkdir(dir, 0755), 0);
    uint64_t end = T0 + STEPS * ss->step_ns + 100000;

    text dev = {0};
    session_start(&dev, "device");
    add(&dev,
        "{\"type\":\"device_info\",\"ts_ns\":%llu,\"device\":0,\"name\":\"NVIDIA H200\","
        "\"uuid\":\"GPU-1\",\"pci_bus_id\":\"00000000:19:00.0\",\"compute_capability\":\"9.0\","
        "\"sm_count\":132,\"memory_total_bytes\":150754820096}\n",
        (unsigned long long)T0 + 10);
    uint64_t at = T0 + 100000;
    unsigned corr = 1;
    for (size_t k = 0; k < nk; k++)
        for (unsigned i = 0; i < ks[k].launches; i++) {
            uint64_t step = ks[k].reverse ? 4 - i % 5 : i % 5;
            uint64_t d = ks[k].dur + ks[k].jitter * step - 2 * ks[k].jitter;
            add(&dev,
                "{\"type\":\"kernel\",\"start_ns\":%llu,\"end_ns\":%llu,\"dur_ns\":%llu,\"device\":0,"
                "\"context\":1,\"stream\":7,\"corr\":%u,\"tid\":1,\"name\":\"%s\",\"grid\":[%u,1,1],"
                "\"block\":[256,1,1],\"regs\":32,\"smem_static\":0,\"smem_dynamic\":0,\"local_mem\":0}\n",
                (unsigned long long)at, (unsigned long long)(at + d), (unsigned long long)d, corr++, ks[k].name,
                ks[k].grid ? ks[k].grid : 128);
            at += d + gap_ns;
        }
    assert_true(at < end);
    session_end(&dev, end);
    snprintf(path, sizeof path, "%s/device.log", dir);
    tu_write_file(path, dev.s);
    free(dev.s);

    text sc = {0};
    session_start(&sc, "scope");
    for (uint64_t i = 0; i < STEPS; i++) {
        uint64_t b = T0 + 50000 + i * ss->step_ns, id = 1 + i * 10;
        scope_lines(&sc, id, 0, 0, "step", b, b + ss->step_ns - 10000);
        scope_lines(&sc, id + 1, id, 1, "forward", b + 1000, b + 1000 + ss->forward_ns);
        if (ss->extra)
            scope_lines(&sc, id + 2, id, 1, ss->extra, b + 2000 + ss->forward_ns, b + 2000 + ss->forward_ns + 500000);
    }
    session_end(&sc, end);
    snprintf(path, sizeof path, "%s/scope.log", dir);
    tu_write_file(path, sc.s);
    free(sc.s);
    return strdup(dir);
}

static const kspec base_kernels[] = {
    {"gemm_slower", 100, 100000, 1000, 0, false}, /* -> 130 us: +30 % per launch */
    {"relu_faster", 100, 50000, 500, 0, false},   /* -> 35 us: -30 % */
    {"noisy", 40, 100000, 40000, 0, false},       /* -> +8 %, inside its noise */
    {"steady", 100, 20000, 0, 0, false},          /* -> +2 %: under the threshold */
    {"launched_more", 50, 20000, 0, 0, false},    /* -> 80 launches */
    {"vanished", 10, 60000, 0, 0, false},         /* -> gone */
    {"tiny", 5, 1000, 0, 0, false},               /* -> 2 us: +100 %, 5 us in all */
    {"conv", 20, 50000, 0, 128, false},           /* -> grid 256, same time */
};

static const kspec cand_kernels[] = {
    {"gemm_slower", 100, 130000, 1000, 0, false},
    {"relu_faster", 100, 35000, 500, 0, false},
    {"noisy", 40, 108000, 40000, 0, true},
    {"steady", 100, 20400, 0, 0, false},
    {"launched_more", 80, 20000, 0, 0, false},
    {"appeared", 10, 80000, 0, 0, false},
    {"tiny", 5, 2000, 0, 0, false},
    {"conv", 20, 50000, 0, 256, false},
};

/* Like base_kernels, every kernel a little slower or faster, or within its
 * noise. */
static const kspec jitter_kernels[] = {
    {"gemm_slower", 100, 103000, 1000, 0, false},
    {"relu_faster", 100, 49000, 500, 0, false},
    {"noisy", 40, 108000, 40000, 0, true},
    {"steady", 100, 20400, 0, 0, false},
    {"launched_more", 50, 20200, 0, 0, false},
    {"vanished", 10, 60000, 0, 0, false},
    {"tiny", 5, 1000, 0, 0, false},
    {"conv", 20, 50000, 0, 128, false},
};

static const sspec base_scopes = {8000000, 1000000, "backward"};
static const sspec cand_scopes = {9600000, 1000000, "optimizer"};  /* step +20 % */
static const sspec jitter_scopes = {8160000, 1000000, "backward"}; /* step +2 % */

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char *base_path, *cand_path, *jitter_path;

static void write_sessions(void)
{
    if (base_path)
        return;
    base_path = write_session("base", base_kernels, N(base_kernels), &base_scopes, 0);
    cand_path = write_session("cand", cand_kernels, N(cand_kernels), &cand_scopes, 2000);
    jitter_path = write_session("jitter", jitter_kernels, N(jitter_kernels), &jitter_scopes, 0);
}

/* ---- the pure comparison ---------------------------------------------------------- */

typedef struct loaded {
    gpufl_trace *t;
    gpufl__ana_report r;
} loaded;

static void load(const char *path, loaded *l)
{
    l->t = tu_trace_open(path);
    gpufl__ana_options o;
    gpufl__ana_options_default(&o);
    o.top_kernels = UINT32_MAX;
    assert_int_equal(gpufl__analyze_report(l->t, &o, &l->r), 0);
}

static void unload(loaded *l)
{
    gpufl__ana_report_free(&l->r);
    gpufl_trace_close(l->t);
}

/* Loads base_path (into *b) and cand (into *c), one of the written
 * sessions, and diffs them with the default options. */
static void diff_loaded(const char *cand, loaded *b, loaded *c, gpufl__diff *d)
{
    load(base_path, b);
    load(cand, c);
    assert_int_equal(gpufl__diff_reports(b->t, &b->r, c->t, &c->r, NULL, d), 0);
}

static void diff_free_all(gpufl__diff *d, loaded *b, loaded *c)
{
    gpufl__diff_free(d);
    unload(b);
    unload(c);
}

static const gpufl__diff_kernel *kernel(const gpufl__diff *d, const char *name)
{
    for (uint32_t i = 0; i < d->nkernels; i++)
        if (!strcmp(d->kernels[i].name, name))
            return &d->kernels[i];
    fail_msg("no kernel %s in the diff", name);
    return NULL;
}

static const gpufl__diff_scope *scope(const gpufl__diff *d, const char *path)
{
    for (uint32_t i = 0; i < d->nscopes; i++)
        if (!strcmp(d->scopes[i].path, path))
            return &d->scopes[i];
    fail_msg("no scope %s in the diff", path);
    return NULL;
}

static void expect(const gpufl__diff_change *ch, uint8_t presence, uint8_t verdict, uint8_t per_item, uint8_t flags)
{
    assert_int_equal(ch->presence, presence);
    assert_int_equal(ch->verdict, verdict);
    assert_int_equal(ch->per_item, per_item);
    assert_int_equal(ch->flags, flags);
}

static void test_verdicts(void **state)
{
    (void)state;
    write_sessions();
    loaded b, c;
    gpufl__diff d;
    diff_loaded(cand_path, &b, &c, &d);

    const gpufl__diff_kernel *k = kernel(&d, "gemm_slower");
    expect(&k->time, GPUFL__DIFF_BOTH, GPUFL__DIFF_REGRESSED, GPUFL__DIFF_SLOWER, 0);
    assert_int_equal(k->time.total_ns, 100 * 30000);
    assert_int_equal(k->time.p50_ns, 30000);
    assert_true(k->time.noise_known);
    /* launch by launch, the ratios are 128/98 to 132/102: the noise is well under 1 % */
    assert_int_equal(k->matched_configs, 1);
    assert_int_equal(k->paired_configs, 1);
    assert_true(k->time.item_pct > 29 && k->time.item_pct < 31);
    assert_true(k->time.item_noise_pct > 0 && k->time.item_noise_pct < 1);
    expect(&kernel(&d, "relu_faster")->time, GPUFL__DIFF_BOTH, GPUFL__DIFF_IMPROVED, GPUFL__DIFF_FASTER, 0);
    /* +8 % in total and per launch, but the same work took from 28/180 to
     * 188/20 of its time: a noise (from the MAD of those ratios) of ~55 % */
    k = kernel(&d, "noisy");
    expect(&k->time, GPUFL__DIFF_BOTH, GPUFL__DIFF_SAME, GPUFL__DIFF_STEADY, GPUFL__DIFF_F_NOISE);
    assert_true(k->time.item_pct > 7.99 && k->time.item_pct < 8.01);
    assert_true(k->time.item_noise_pct > 40 && k->time.item_noise_pct < 70);
    expect(&kernel(&d, "steady")->time, GPUFL__DIFF_BOTH, GPUFL__DIFF_SAME, GPUFL__DIFF_STEADY, 0);
    expect(&kernel(&d, "launched_more")->time, GPUFL__DIFF_BOTH, GPUFL__DIFF_REGRESSED, GPUFL__DIFF_STEADY,
           GPUFL__DIFF_F_COUNT);
    expect(&kernel(&d, "vanished")->time, GPUFL__DIFF_GONE, GPUFL__DIFF_IMPROVED, GPUFL__DIFF_STEADY,
           GPUFL__DIFF_F_COUNT);
    expect(&kernel(&d, "appeared")->time, GPUFL__DIFF_NEW, GPUFL__DIFF_REGRESSED, GPUFL__DIFF_STEADY,
           GPUFL__DIFF_F_COUNT);
    /* twice as slow, but 5 us in all: under 0.5 % of ~23.6 ms */
    expect(&kernel(&d, "tiny")->time, GPUFL__DIFF_BOTH, GPUFL__DIFF_SAME, GPUFL__DIFF_SLOWER, GPUFL__DIFF_F_SMALL);
    k = kernel(&d, "conv");
    expect(&k->time, GPUFL__DIFF_BOTH, GPUFL__DIFF_SAME, GPUFL__DIFF_STEADY, GPUFL__DIFF_F_CONFIG);
    assert_int_equal(k->base_config.grid[0], 128);
    assert_int_equal(k->cand_config.grid[0], 256);
    assert_int_equal(d.nkernels, 9);
    /* largest change first */
    assert_string_equal(d.kernels[0].name, "gemm_slower");
    assert_false(d.kernels_partial);
    assert_int_equal(d.new_kernels, 1);
    assert_int_equal(d.gone_kernels, 1);
    assert_int_equal(d.count_changes, 1);

    const gpufl__diff_scope *s = scope(&d, "step");
    expect(&s->wall, GPUFL__DIFF_BOTH, GPUFL__DIFF_REGRESSED, GPUFL__DIFF_SLOWER, 0);
    assert_int_equal(s->wall.p50_ns, 1600000);
    expect(&scope(&d, "step/forward")->wall, GPUFL__DIFF_BOTH, GPUFL__DIFF_SAME, GPUFL__DIFF_STEADY, 0);
    expect(&scope(&d, "step/backward")->wall, GPUFL__DIFF_GONE, GPUFL__DIFF_SAME, GPUFL__DIFF_STEADY,
           GPUFL__DIFF_F_COUNT);
    expect(&scope(&d, "step/optimizer")->wall, GPUFL__DIFF_NEW, GPUFL__DIFF_SAME, GPUFL__DIFF_STEADY,
           GPUFL__DIFF_F_COUNT);
    assert_int_equal(d.nscopes, 4);
    /* a parent before its children */
    assert_string_equal(d.scopes[0].path, "step");

    assert_int_equal(d.wall_ns.base, STEPS * 8000000 + 100000);
    assert_int_equal(d.wall_ns.cand, STEPS * 9600000 + 100000);
    assert_int_equal(d.wall_ns.verdict, GPUFL__DIFF_REGRESSED);
    assert_int_equal(d.ndevices, 1);
    assert_string_equal(d.devices[0].name, "NVIDIA H200");
    assert_int_equal(d.devices[0].idle_ns.base, 0);
    /* 2 us between each of the candidate's 455 kernels */
    assert_int_equal(d.devices[0].idle_ns.cand, 454 * 2000);
    assert_int_equal(d.devices[0].idle_ns.verdict, GPUFL__DIFF_REGRESSED);
    assert_int_equal(d.launches.base, 425);
    assert_int_equal(d.launches.cand, 425 - 50 - 10 + 80 + 10);
    /* gemm, launched_more, appeared, step, wall, idle; relu, vanished */
    assert_int_equal(d.regressions, 6);
    assert_int_equal(d.improvements, 2);
    gpufl__diff_free(&d);

    /* a higher threshold lets the +30 % and +20 % changes pass */
    gpufl__diff_options o = {.threshold_pct = 50, .min_impact_pct = 0.5};
    assert_int_equal(gpufl__diff_reports(b.t, &b.r, c.t, &c.r, &o, &d), 0);
    assert_int_equal(kernel(&d, "gemm_slower")->time.verdict, GPUFL__DIFF_SAME);
    assert_int_equal(kernel(&d, "launched_more")->time.verdict, GPUFL__DIFF_REGRESSED);
    assert_int_equal(scope(&d, "step")->wall.verdict, GPUFL__DIFF_SAME);
    assert_int_equal(d.wall_ns.verdict, GPUFL__DIFF_SAME);
    gpufl__diff_free(&d);

    o.threshold_pct = -1;
    assert_int_equal(gpufl__diff_reports(b.t, &b.r, c.t, &c.r, &o, &d), GPUFL_EINVAL);
    assert_null(d.kernels);
    gpufl__diff_free(&d); /* a zeroed result is fine */
    unload(&b);
    unload(&c);
}

/* Changes under the threshold, or within the noise, are no regression. */
static void test_noise_only(void **state)
{
    (void)state;
    write_sessions();
    loaded b, c;
    gpufl__diff d;
    diff_loaded(jitter_path, &b, &c, &d);
    assert_int_equal(d.regressions, 0);
    assert_int_equal(d.improvements, 0);
    assert_int_equal(kernel(&d, "noisy")->time.flags, GPUFL__DIFF_F_NOISE);
    assert_int_equal(kernel(&d, "gemm_slower")->time.per_item, GPUFL__DIFF_STEADY);
    diff_free_all(&d, &b, &c);
}

/* Launches are matched by their place in the program, not by index: a
 * configuration launched at three places per step (100, 500 and 10 us of
 * work) over 4 steps, against a candidate 10 % slower that lacks one launch
 * of step 1 and runs a new kernel (9) after the first launch of step 3.
 * By index, every launch after the missing one would meet other work. */
static void test_pairs_by_program_point(void **state)
{
    (void)state;
    const uint64_t at12 = GPUFL__DIFF_POINT(1, 2), at23 = GPUFL__DIFF_POINT(2, 3), at31 = GPUFL__DIFF_POINT(3, 1);
    gpufl__diff_launch b[12], c[12];
    size_t nb = 0, nc = 0;
    for (int step = 0; step < 4; step++) {
        const uint64_t pts[] = {at12, at23, at31}, durs[] = {100000, 500000, 10000};
        for (int k = 0; k < 3; k++) {
            b[nb++] = (gpufl__diff_launch){durs[k], pts[k]};
            if (step == 1 && k == 1)
                continue;
            uint64_t pt = step == 3 && k == 0 ? GPUFL__DIFF_POINT(1, 9) : pts[k];
            c[nc++] = (gpufl__diff_launch){durs[k] * 11 / 10, pt};
        }
    }
    gpufl__diff_pairs p = {0};
    assert_int_equal(gpufl__diff_pairs_match(&p, b, nb, c, nc), 0);
    /* (1,2): 3 pairs; (2,3): 3; (3,1): 4; then by previous configuration, 1: the launch before 9 */
    assert_int_equal(p.n, 11);
    assert_int_equal(p.ngroups, 4);
    const size_t sizes[] = {3, 3, 4, 1};
    for (size_t g = 0; g < p.ngroups; g++)
        assert_int_equal(p.at[g + 1] - p.at[g], sizes[g]);
    assert_int_equal(p.weight[0], 3 * 100000);
    assert_int_equal(p.weight[1], 3 * 500000);
    for (size_t i = 0; i < p.n; i++)
        assert_int_equal(p.ratio[i], GPUFL__DIFF_RATIO_ONE * 11 / 10);
    /* again, into the same scratch: nothing in common but the configuration */
    for (size_t i = 0; i < nc; i++)
        c[i].point = GPUFL__DIFF_POINT(7, 8);
    assert_int_equal(gpufl__diff_pairs_match(&p, b, nb, c, nc), 0);
    assert_int_equal(p.n, 0);
    gpufl__diff_pairs_free(&p);
}

/* ---- text and JSON -------------------------------------------------------------- */

/* The golden text; GPUFL_UPDATE_GOLDEN=1 rewrites it (then review the
 * change with git diff). */
#define GOLDEN GFL_SOURCE_DIR "/tests/golden/diff.txt"

static char *render_text(const gpufl__diff *d, bool all)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gpufl__diff_text_opts o = {.baseline = "base", .candidate = "cand", .all = all};
    assert_int_equal(gpufl__diff_text(d, &o, f), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void test_text(void **state)
{
    (void)state;
    write_sessions();
    loaded b, c;
    gpufl__diff d;
    diff_loaded(cand_path, &b, &c, &d);
    char *s = render_text(&d, false);
    if (getenv("GPUFL_UPDATE_GOLDEN"))
        tu_write_file(GOLDEN, s);
    char *golden = tu_read_file(GOLDEN, NULL);
    assert_non_null(golden);
    if (strcmp(s, golden) != 0) {
        fprintf(stderr, "---- got ----\n%s---- end ----\n", s);
        fail_msg("the text differs from %s", GOLDEN);
    }
    free(golden);
    free(s);
    /* --all adds the unchanged rows */
    s = render_text(&d, true);
    assert_non_null(strstr(s, "  steady\n"));
    assert_null(strstr(s, "unchanged kernel"));
    free(s);
    diff_free_all(&d, &b, &c);
}

static json_t *jget(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        fail_msg("no %s in the JSON", key);
    return v;
}

static json_t *jfind(json_t *a, const char *key, const char *value)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) if (!strcmp(json_string_value(jget(v, key)), value)) return v;
    fail_msg("no %s %s in the JSON", key, value);
    return NULL;
}

static void test_json(void **state)
{
    (void)state;
    write_sessions();
    loaded b, c;
    gpufl__diff d;
    diff_loaded(cand_path, &b, &c, &d);
    json_t *made = gpufl__diff_json(&d, "base", "cand");
    assert_non_null(made);
    char *s = json_dumps(made, JSON_PRESERVE_ORDER);
    json_decref(made);
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        fail_msg("not JSON (%s): %.300s", e.text, s);
    free(s);

    assert_true(json_is_true(jget(j, "regressed")));
    assert_int_equal(tu_int(j, "regressions"), 6);
    assert_int_equal(tu_int(j, "improvements"), 2);
    assert_string_equal(tu_str(j, "baseline"), "base");
    assert_true(json_real_value(jget(j, "threshold_pct")) == 5.0);
    json_t *wall = jget(jget(j, "session"), "wall_ns");
    assert_int_equal(tu_int(wall, "baseline"), STEPS * 8000000 + 100000);
    assert_string_equal(tu_str(wall, "verdict"), "regressed");
    assert_in_range((unsigned long long)(json_real_value(jget(wall, "change_pct")) * 1000), 19970, 19980);

    json_t *k = jfind(jget(j, "kernels"), "name", "gemm_slower");
    assert_string_equal(tu_str(k, "verdict"), "regressed");
    assert_string_equal(tu_str(k, "per_item"), "slower");
    const gpufl__diff_kernel *dk = kernel(&d, "gemm_slower");
    assert_int_equal(tu_int(jget(k, "baseline"), "p50_ns"), dk->time.base.p50);
    assert_int_equal(tu_int(jget(k, "candidate"), "p50_ns"), dk->time.cand.p50);
    assert_int_equal(tu_int(jget(k, "baseline"), "n"), 100);
    assert_int_equal(tu_int(k, "total_change_ns"), dk->time.total_ns);
    assert_true(json_real_value(jget(k, "per_item_change_pct")) == dk->time.item_pct);
    assert_true(json_is_integer(jget(k, "noise_ns")));
    assert_int_equal(tu_int(k, "paired_configs"), 1);

    k = jfind(jget(j, "kernels"), "name", "appeared");
    assert_string_equal(tu_str(k, "presence"), "new");
    assert_true(json_is_null(jget(k, "baseline")));
    assert_true(json_is_null(jget(k, "total_change_pct")));
    assert_string_equal(json_string_value(json_array_get(jget(k, "flags"), 0)), "count");

    k = jfind(jget(j, "kernels"), "name", "conv");
    assert_int_equal(json_integer_value(json_array_get(jget(jget(k, "candidate_config"), "grid"), 0)), 256);
    assert_string_equal(json_string_value(json_array_get(jget(k, "flags"), 0)), "config");

    json_t *sc = jfind(jget(j, "scopes"), "path", "step");
    assert_string_equal(tu_str(sc, "tree"), "scopes");
    assert_string_equal(tu_str(sc, "verdict"), "regressed");
    json_t *dev = json_array_get(jget(j, "devices"), 0);
    assert_string_equal(tu_str(jget(dev, "idle_ns"), "verdict"), "regressed");
    assert_true(json_is_null(jget(jget(dev, "idle_ns"), "change_pct")));
    json_decref(j);
    diff_free_all(&d, &b, &c);
}

/* ---- the command -------------------------------------------------------------- */

static void test_command(void **state)
{
    (void)state;
    write_sessions();
    char *out, *err;
    const char *regressed[] = {GFL_CLI, "diff", base_path, cand_path, NULL};
    assert_int_equal(tu_run(regressed, &out, &err), 1);
    assert_non_null(strstr(out, "Result: REGRESSION: 6 regressions, 2 improvements\n"));
    free(out);
    free(err);

    const char *noise[] = {GFL_CLI, "diff", base_path, jitter_path, NULL};
    assert_int_equal(tu_run(noise, &out, &err), 0);
    assert_non_null(strstr(out, "Result: no regression\n"));
    free(out);
    free(err);

    const char *self[] = {GFL_CLI, "diff", cand_path, cand_path, "--format", "json", NULL};
    assert_int_equal(tu_run(self, &out, &err), 0);
    json_error_t e;
    json_t *j = json_loads(out, 0, &e);
    if (!j)
        fail_msg("not JSON (%s): %.300s", e.text, out);
    assert_true(json_is_false(jget(j, "regressed")));
    assert_int_equal(json_array_size(jget(j, "kernels")), N(cand_kernels));
    json_decref(j);
    free(out);
    free(err);

    /* --threshold 50: the count change and the new kernel remain */
    const char *high[] = {GFL_CLI, "diff", "--threshold", "50%", base_path, cand_path, "--format", "json", NULL};
    assert_int_equal(tu_run(high, &out, &err), 1);
    j = json_loads(out, 0, &e);
    assert_non_null(j);
    assert_true(json_real_value(jget(j, "threshold_pct")) == 50.0);
    json_decref(j);
    free(out);
    free(err);
}

static void test_command_errors(void **state)
{
    (void)state;
    write_sessions();
    char *err;
    const char *one[] = {GFL_CLI, "diff", base_path, NULL};
    assert_int_equal(tu_run(one, NULL, &err), 2);
    assert_non_null(strstr(err, "usage: gpufl diff"));
    free(err);
    const char *three[] = {GFL_CLI, "diff", base_path, base_path, base_path, NULL};
    assert_int_equal(tu_run(three, NULL, &err), 2);
    free(err);
    const char *bad_thr[] = {GFL_CLI, "diff", base_path, base_path, "--threshold", "-3", NULL};
    assert_int_equal(tu_run(bad_thr, NULL, &err), 2);
    assert_non_null(strstr(err, "bad --threshold '-3'"));
    free(err);
    const char *bad_fmt[] = {GFL_CLI, "diff", base_path, base_path, "--format", "xml", NULL};
    assert_int_equal(tu_run(bad_fmt, NULL, &err), 2);
    assert_non_null(strstr(err, "bad --format 'xml'"));
    free(err);
    const char *missing[] = {GFL_CLI, "diff", base_path, "/nonexistent/session", NULL};
    char *out;
    assert_int_equal(tu_run(missing, &out, &err), 2);
    assert_non_null(strstr(err, "/nonexistent/session"));
    assert_string_equal(out, "");
    free(out);
    free(err);
    /* a damaged line in the middle of a log names the file */
    char dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s/broken", work);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/device.log", dir);
    text t = {0};
    session_start(&t, "device");
    add(&t, "{\"type\":\"kernel\",\"start_ns\":oops}\n");
    session_end(&t, T0 + 1000);
    tu_write_file(path, t.s);
    free(t.s);
    const char *broken[] = {GFL_CLI, "diff", dir, base_path, NULL};
    assert_int_equal(tu_run(broken, NULL, &err), 2);
    assert_non_null(strstr(err, "device.log"));
    free(err);
    const char *help[] = {GFL_CLI, "help", NULL};
    assert_int_equal(tu_run(help, &out, NULL), 0);
    assert_non_null(strstr(out, "gpufl diff BASELINE CANDIDATE"));
    free(out);
}

/* The recorded training sample against itself: nothing changed. */
static void test_sample_with_itself(void **state)
{
    (void)state;
    const char *sample = GFL_SOURCE_DIR "/samples/train_sample";
    char *out, *err;
    const char *argv[] = {GFL_CLI, "diff", sample, sample, "--format", "json", NULL};
    assert_int_equal(tu_run(argv, &out, &err), 0);
    json_error_t e;
    json_t *j = json_loads(out, 0, &e);
    if (!j)
        fail_msg("not JSON (%s): %.300s", e.text, out);
    assert_true(json_is_false(jget(j, "regressed")));
    assert_int_equal(tu_int(j, "improvements"), 0);
    assert_int_equal(tu_int(j, "new_kernels"), 0);
    assert_int_equal(tu_int(j, "gone_kernels"), 0);
    assert_int_equal(tu_int(j, "count_changes"), 0);
    assert_false(json_is_true(jget(j, "kernels_partial")));
    json_t *kernels = jget(j, "kernels");
    assert_true(json_array_size(kernels) > 10);
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k)
    {
        assert_string_equal(tu_str(k, "verdict"), "same");
        assert_int_equal(tu_int(k, "total_change_ns"), 0);
        assert_int_equal(json_array_size(jget(k, "flags")), 0);
    }
    json_decref(j);
    free(out);
    free(err);
    const char *text_argv[] = {GFL_CLI, "diff", sample, sample, NULL};
    assert_int_equal(tu_run(text_argv, &out, &err), 0);
    assert_non_null(strstr(out, "Result: no regression\n"));
    free(out);
    free(err);
}

/* ---- the recorded sample, edited ----------------------------------------------------- */

#define SAMPLE GFL_SOURCE_DIR "/samples/train_sample"
/* The sample's largest kernel of a single launch configuration: 540
 * launches of three sizes (about 138, 180 and 700 us), so that the spread
 * of its durations says nothing about noise. */
#define BIG_GEMM                                                                                                       \
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_"               \
    "execute_kernel__5x_cublas"
#define BIG_GEMM_LAUNCHES 540

/* What a copy of the sample changes. Random choices come from a seeded
 * generator, so each copy is the same on every run. */
typedef struct sample_edit {
    double scale;  /* BIG_GEMM's durations times this */
    unsigned drop; /* of its launches, this many removed at random positions */
    double jitter; /* every kernel's duration times a uniform factor in 1 +- jitter */
    uint64_t rng;  /* xorshift64* state: the seed */
    unsigned seen, dropped;
} sample_edit;

static double uniform(uint64_t *s) /* in [0, 1) */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

static bool edit_sample(void *vctx, gfl_event *ev, const gpufl__string_lookup *strings)
{
    sample_edit *x = vctx;
    if (ev->h.type != GFL_EV_KERNEL)
        return true;
    uint32_t len;
    const char *name = gpufl__lookup(strings, ev->u.kernel.name, &len);
    double factor = 1.0;
    if (!strcmp(name, BIG_GEMM)) {
        /* selection sampling: each launch goes with probability
         * (still to drop) / (still to see), so exactly `drop` go */
        unsigned left = BIG_GEMM_LAUNCHES - x->seen++;
        assert_true(left > 0);
        if (uniform(&x->rng) * left < x->drop - x->dropped) {
            x->dropped++;
            return false;
        }
        factor = x->scale;
    }
    if (x->jitter > 0)
        factor *= 1.0 + x->jitter * (2.0 * uniform(&x->rng) - 1.0);
    uint64_t dur = ev->u.kernel.end_ts - ev->h.ts;
    ev->u.kernel.end_ts = ev->h.ts + (uint64_t)llround((double)dur * factor);
    return true;
}

/* Writes <work>/<name>.gflt, the sample edited by x; returns its path. */
static char *edited_sample(const char *name, sample_edit *x)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s.gflt", work, name);
    tu_copy_session(SAMPLE, path, edit_sample, x);
    assert_int_equal(x->seen, BIG_GEMM_LAUNCHES);
    assert_int_equal(x->dropped, x->drop);
    return strdup(path);
}

/* `gpufl diff SAMPLE cand --format json`: its exit code into *rc, the JSON. */
static json_t *diff_sample(const char *cand, int *rc)
{
    char *out, *err;
    const char *argv[] = {GFL_CLI, "diff", SAMPLE, cand, "--format", "json", NULL};
    *rc = tu_run(argv, &out, &err);
    json_error_t e;
    json_t *j = json_loads(out, 0, &e);
    if (!j)
        fail_msg("not JSON (%s): %.300s %s", e.text, out, err);
    free(out);
    free(err);
    return j;
}

/* The same +20 % on the big GEMM is a regression whether all of its
 * launches are in the candidate or 2 of them, 2 % or 10 % are missing,
 * with or without +-10 % of random noise on every launch of every kernel:
 * the noise it is judged against must not depend on the launch counts
 * matching, nor come from the spread of its three sizes. */
static void test_sample_slower_with_missing_launches(void **state)
{
    (void)state;
    const unsigned drops[] = {0, 2, BIG_GEMM_LAUNCHES * 2 / 100, BIG_GEMM_LAUNCHES * 10 / 100};
    const double jitters[] = {0, 0.10};
    for (size_t i = 0; i < N(drops) * N(jitters); i++) {
        unsigned drop = drops[i % N(drops)];
        double jitter = jitters[i / N(drops)];
        char name[64];
        snprintf(name, sizeof name, "gemm-slower-drop%u-jitter%.0f", drop, jitter * 100);
        sample_edit x = {.scale = 1.2, .drop = drop, .jitter = jitter, .rng = 0x9E3779B97F4A7C15ull + i};
        char *cand = edited_sample(name, &x);
        int rc;
        json_t *j = diff_sample(cand, &rc);
        json_t *k = NULL, *v;
        size_t at;
        json_array_foreach(jget(j, "kernels"), at, v) if (!strcmp(tu_str(v, "name"), BIG_GEMM)) k = v;
        assert_non_null(k);
        double pct = json_real_value(jget(k, "per_item_change_pct"));
        double noise = json_real_value(jget(k, "per_item_noise_pct"));
        fprintf(stderr,
                "  %u of %u launches missing, noise +-%.0f %%: %s, per launch %+.2f %% (noise %.2f %%), "
                "exit %d\n",
                drop, BIG_GEMM_LAUNCHES, jitter * 100, tu_str(k, "verdict"), pct, noise, rc);
        assert_string_equal(tu_str(k, "verdict"), "regressed");
        assert_string_equal(tu_str(k, "per_item"), "slower");
        assert_true(pct > 18.0 && pct < 22.0);
        assert_true(noise < 5.0);
        assert_int_equal(tu_int(jget(k, "candidate"), "n"), BIG_GEMM_LAUNCHES - drop);
        /* nothing else changed */
        assert_int_equal(tu_int(j, "regressions"), 1);
        assert_int_equal(rc, 1);
        json_decref(j);
        free(cand);
    }
}

/* +-10 % of random noise on every launch of every kernel, and nothing
 * else: no regression, whatever the seed. */
static void test_sample_noise_is_no_regression(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        char name[64];
        snprintf(name, sizeof name, "noise-%u", (unsigned)seed);
        sample_edit x = {.scale = 1.0, .jitter = 0.10, .rng = seed * 0x9E3779B97F4A7C15ull};
        char *cand = edited_sample(name, &x);
        int rc;
        json_t *j = diff_sample(cand, &rc);
        json_t *v;
        size_t at;
        json_array_foreach(jget(j, "kernels"), at, v) if (strcmp(tu_str(v, "verdict"), "same"))
            fprintf(stderr, "  seed %u: %s %s\n", (unsigned)seed, tu_str(v, "verdict"), tu_str(v, "name"));
        assert_int_equal(tu_int(j, "regressions"), 0);
        assert_int_equal(tu_int(j, "improvements"), 0);
        assert_int_equal(rc, 0);
        json_decref(j);
        free(cand);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_noise_only),
        cmocka_unit_test(test_pairs_by_program_point),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_command),
        cmocka_unit_test(test_command_errors),
        cmocka_unit_test(test_sample_with_itself),
        cmocka_unit_test(test_sample_slower_with_missing_launches),
        cmocka_unit_test(test_sample_noise_is_no_regression),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    free(base_path);
    free(cand_path);
    free(jitter_path);
    return rc;
}
