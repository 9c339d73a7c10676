/*
 * The job report as HTML (src/present/report/report_job_html*.c): pages
 * written from jobs whose rank digests are filled by hand, then put
 * through gpufl__job_report_build() as `gpufl report JOB` does.
 *
 * Why: the page must show every rank (a lane each on the timeline, a row
 * each in the tables), name the straggler the analysis found, stay safe
 * whatever a session's strings hold (host names, paths, job ids and kernel
 * names are anyone's), and stay a page of a few megabytes for a big job,
 * which only holds if the timeline merges what is closer than a pixel.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "analyze/ana_job.h"
#include "analyze/ana_nccl.h"
#include "export_fixture.h"
#include "flight_fixture.h"
#include "fs_util.h"
#include "gpufl/gpufl.h"
#include "present/report/report_html_parts.h"
#include "present/report/report_job.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(tmp, "report-job-html")

#define MS 1000000ull
#define US 1000ull

static char *dup(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    return d;
}

/* A rank's digest with ncoll collectives and nsteps steps to fill in. */
static void rank_init(gpufl__job_rank *k, int64_t rank, const char *host, size_t ncoll, size_t nsteps)
{
    memset(k, 0, sizeof *k);
    char path[64];
    snprintf(path, sizeof path, "/runs/job/rank%lld", (long long)rank);
    k->path = dup(path);
    k->rank = rank;
    k->local_rank = rank;
    k->host = dup(host);
    k->job_id = dup("j<b>42</b>");
    k->launcher = dup("torchrun");
    k->session_id = dup(path + 10);
    k->pid = 100 + (int32_t)rank;
    k->has_mono = true; /* one host, offsets equal: shift 0 on the same host */
    k->ntp_maxerror_ns = GPUFL_JOB_UNKNOWN_ERROR;
    k->str = malloc(sizeof *k->str);
    assert_non_null(k->str);
    k->str[0] = dup("");
    k->nstr = 1;
    if (ncoll)
        assert_non_null(k->coll = calloc(ncoll, sizeof *k->coll));
    k->ncoll = k->nccl_kernels = ncoll;
    if (nsteps)
        assert_non_null(k->steps = calloc(nsteps, sizeof *k->steps));
    k->nsteps = nsteps;
}

static void ranks_free(gpufl__job_rank *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gpufl__job_rank_free(&k[i]);
}

/* The tags from <html> to the end, each closed by its own end tag in
 * order (void elements and <x .../> stand alone): the page's sections can
 * not leak into each other. Returns the first problem, NULL if none. */
static const char *unbalanced(const char *page, char *why, size_t len)
{
    static const char *const voids[] = {"meta", "br", "img", "hr", "input", "link", "col", NULL};
    char stack[256][16];
    size_t depth = 0;
    const char *p = strstr(page, "<html");
    if (!p)
        return "no <html>";
    while ((p = strchr(p, '<')) != NULL) {
        const char *end = strchr(p, '>');
        if (!end)
            return "a tag is not closed by >";
        bool closing = p[1] == '/';
        const char *name = p + 1 + closing;
        size_t n = strcspn(name, " \t\n/>");
        char tag[16];
        if (n == 0 || n >= sizeof tag) {
            snprintf(why, len, "bad tag at %.30s", p);
            return why;
        }
        memcpy(tag, name, n);
        tag[n] = 0;
        for (char *c = tag; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
        bool self = end[-1] == '/';
        bool is_void = false;
        for (const char *const *v = voids; *v; v++)
            is_void |= !strcmp(*v, tag);
        if (closing) {
            if (!depth || strcmp(stack[depth - 1], tag)) {
                snprintf(why, len, "</%s> closes <%s>", tag, depth ? stack[depth - 1] : "(nothing)");
                return why;
            }
            depth--;
        } else if (!self && !is_void) {
            if (depth == 256)
                return "nested too deep";
            strcpy(stack[depth++], tag);
            if (!strcmp(tag, "style")) { /* CSS holds > but no tags */
                end = strstr(end, "</style>");
                if (!end)
                    return "<style> not closed";
                end--;
            }
        }
        p = end + 1;
    }
    if (depth) {
        snprintf(why, len, "<%s> never closed", stack[depth - 1]);
        return why;
    }
    return NULL;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* The text of <section id=ID>, malloc'd; fails the test when absent. */
static char *section(const char *page, const char *id)
{
    char open[64];
    snprintf(open, sizeof open, "<section id=%s>", id);
    const char *a = strstr(page, open);
    assert_non_null(a);
    const char *b = strstr(a, "</section>");
    assert_non_null(b);
    return strndup(a, (size_t)(b - a));
}

/* The lane of rank index i in the timeline, malloc'd. */
static char *lane(const char *page, size_t i)
{
    char open[64];
    snprintf(open, sizeof open, "<g class=\"lane\" data-rank=\"%zu\">", i);
    const char *a = strstr(page, open);
    assert_non_null(a);
    const char *b = strstr(a, "</g>\n");
    assert_non_null(b);
    return strndup(a, (size_t)(b - a));
}

static char *write_page(const gpufl__job_report *r, uint32_t top, const char *name, size_t *len)
{
    char path[4200], err[1024] = "";
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    int rc = gpufl__report_job_html(r, top, path, err, sizeof err);
    if (rc != 0)
        fail_msg("gpufl__report_job_html: %d %s", rc, err);
    char *page = tu_read_file(path, len);
    assert_non_null(page);
    return page;
}

/* Three ranks on one host with four AllReduces each; rank 2 reaches the
 * third 2.4 ms after the others. Rank 1's host name is a script. */
static void three_ranks(gpufl__job_rank *k)
{
    static const char *const hosts[] = {"node-a", "<script>alert(1)</script>", "node-b"};
    for (size_t r = 0; r < 3; r++) {
        rank_init(&k[r], (int64_t)r, hosts[r], 4, 4);
        k[r].kernels = 10;
        k[r].busy_ns = 9 * MS;
        k[r].compute_ns = 6 * MS;
        k[r].comm_ns = 4 * MS;
        k[r].overlap_ns = 1 * MS;
        k[r].step_name = gpufl__job_str(&k[r], "train<step>");
        for (size_t j = 0; j < 4; j++) {
            gpufl__job_coll *c = &k[r].coll[j];
            uint64_t base = 10 * MS * (j + 1);
            c->start_ns = base + (r == 2 && j == 2 ? 2400 * US : 100 * US);
            c->end_ns = base + 3 * MS;
            c->coll = GFL_NCCL_ALL_REDUCE;
            c->algo = GFL_NCCL_ALGO_RING;
            c->step = (uint32_t)j + 1;
            k[r].steps[j] =
                (gpufl__job_step){.begin_ns = 10 * MS * (j + 1) - 5 * MS, .end_ns = 10 * MS * (j + 2) - 5 * MS};
        }
        k[r].coll[2].gpu_idle_before_ns = r == 2 ? 2 * MS : 0;
        k[r].coll[2].last_kernel = gpufl__job_str(&k[r], "void slow<float>(T&)");
        /* the same kernel, longer on rank 2: the imbalance's first row */
        assert_non_null(k[r].kt = calloc(1, sizeof *k[r].kt));
        k[r].kt[0] = (gpufl__job_kernel_time){
            .name = gpufl__job_str(&k[r], "gemm<a&b>"), .count = 4, .total_ns = (r == 2 ? 9 : 3) * MS};
        k[r].nkt = 1;
    }
}

static void test_page(void **state)
{
    (void)state;
    gpufl__job_rank k[3];
    three_ranks(k);
    gpufl__job_report r;
    assert_int_equal(gpufl__job_report_build(k, 3, &r), 0);
    assert_int_equal(r.stragglers.nlate, 1); /* the fixture is what the test thinks */
    size_t len;
    char *page = write_page(&r, 10, "job.html", &len);

    char why[200];
    const char *bad = unbalanced(page, why, sizeof why);
    if (bad)
        fail_msg("page not well formed: %s", bad);
    for (const char *id = "job\0ranks\0timeline\0alignment\0nccl\0stragglers\0imbalance\0"; *id; id += strlen(id) + 1)
        free(section(page, id));

    /* one lane per rank, and a row per rank in the ranks and alignment tables */
    assert_int_equal(count(page, "<g class=\"lane\""), 3);
    char *ranks = section(page, "ranks"), *align = section(page, "alignment");
    assert_int_equal(count(ranks, "<tr>"), 1 + 3);
    assert_int_equal(count(align, "<tr>"), 1 + 3);
    free(ranks);
    free(align);

    /* hostile strings are text: no script at all on this page */
    assert_null(strcasestr(page, "<script"));
    assert_null(strstr(page, "<b>42"));
    assert_non_null(strstr(page, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(page, "j&lt;b&gt;42&lt;/b&gt;"));
    assert_non_null(strstr(page, "gemm&lt;a&amp;b&gt;"));
    assert_non_null(strstr(page, "train&lt;step&gt; 3"));

    /* the straggler: rank 2, 2.30 ms after rank 1 (2.4 ms against 0.1 ms)
     * at AllReduce #3, listed with the kernel its GPU idled after */
    char *st = section(page, "stragglers");
    assert_non_null(strstr(st, "<tr><td class=n data-v=\"2\">2</td><td class=n data-v=\"2300000\">2.30 ms</td>"
                               "<td>AllReduce</td><td class=n data-v=\"3\">3</td>"));
    assert_non_null(strstr(st, "void slow&lt;float&gt;(T&amp;)"));
    assert_int_equal(count(st, "<tr><td class=n data-v=\"0\">"), 0); /* rank 0 was never last */
    free(st);
    /* and marked on its lane only */
    for (size_t i = 0; i < 3; i++) {
        char *l = lane(page, i);
        assert_int_equal(count(l, "fill=\"#c1121f\""), i == 2);
        assert_int_equal(count(l, "NCCL kernel"), 4); /* 4 collectives 10 ms apart: 4 bars at 1000 px */
        free(l);
    }
    char *im = section(page, "imbalance");
    assert_non_null(strstr(im, "<td class=kname>gemm&lt;a&amp;b&gt;</td>"));
    free(im);
    free(page);
    gpufl__job_report_free(&r);
    ranks_free(k, 3);
}

/* --top caps the late arrivals listed, and a rank without a rank number
 * (a session outside a launcher) is named by its place. */
static void test_top_and_unranked(void **state)
{
    (void)state;
    gpufl__job_rank k[3];
    three_ranks(k);
    for (size_t j = 0; j < 4; j++)
        k[1].coll[j].start_ns = 10 * MS * (j + 1) + 2 * MS; /* rank 1 late everywhere but at #3 (rank 2 later) */
    k[2].rank = -1;
    gpufl__job_report r;
    assert_int_equal(gpufl__job_report_build(k, 3, &r), 0);
    assert_true(r.stragglers.nlate >= 3);
    char *page = write_page(&r, 2, "top.html", NULL);
    char *st = section(page, "stragglers");
    assert_non_null(strstr(st, "Latest arrivals (2 of "));
    free(st);
    assert_non_null(strstr(page, ">session #2<"));
    assert_non_null(strstr(page, "<td class=n data-v=\"2\">#2</td>"));
    free(page);
    gpufl__job_report_free(&r);
    ranks_free(k, 3);
}

/* 64 ranks of 50 000 collectives and 1000 steps each, a late arrival
 * every 100th collective: the page stays small because the timeline draws
 * at most a few hundred marks a lane. The collectives come in bursts of
 * 100, one burst every 4 ms over 2 s: each burst falls in one pixel column
 * with an empty one after it, the most bars a lane can take. */
static void test_big_job_stays_small(void **state)
{
    (void)state;
    enum { NR = 64, NC = 50000, NS = 1000 };
    gpufl__job_rank *k = calloc(NR, sizeof *k);
    assert_non_null(k);
    for (size_t r = 0; r < NR; r++) {
        rank_init(&k[r], (int64_t)r, "node-a", NC, NS);
        for (size_t j = 0; j < NC; j++) {
            gpufl__job_coll *c = &k[r].coll[j];
            bool late = j % 100 == 50 && (j / 100) % NR == r;
            c->start_ns = 4 * MS * (j / 100) + 2 * US * (j % 100) + (late ? 1200 * US : 0);
            c->end_ns = c->start_ns + 1 * US + 100 * (j % 5);
            c->coll = GFL_NCCL_ALL_REDUCE;
        }
        for (size_t j = 0; j < NS; j++)
            k[r].steps[j] = (gpufl__job_step){.begin_ns = 2 * MS * j, .end_ns = 2 * MS * (j + 1)};
    }
    gpufl__job_report r;
    assert_int_equal(gpufl__job_report_build(k, NR, &r), 0);
    assert_int_equal(r.stragglers.nlate, NC / 100);
    size_t len;
    char *page = write_page(&r, 10, "big.html", &len);
    char why[200];
    const char *bad = unbalanced(page, why, sizeof why);
    if (bad)
        fail_msg("page not well formed: %s", bad);
    assert_int_equal(count(page, "<g class=\"lane\""), NR);
    /* bars per lane are bounded by the plot's width, not by the collectives */
    size_t rects = count(page, "<rect");
    if (rects > NR * (GPUFL__JOB_TL_PLOT_PX + 2))
        fail_msg("%zu rects for %d lanes", rects, NR);
    if (len > 5u << 20)
        fail_msg("page of %zu bytes", len);
    print_message("big job page: %zu bytes, %zu rects\n", len, rects);
    free(page);
    gpufl__job_report_free(&r);
    ranks_free(k, NR);
    free(k);
}

static void test_cli_needs_output(void **state)
{
    (void)state;
    const char *args[] = {"a", "b", "--format", "html", NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(tu_run_subcommand(GFL_CLI, "report", args, &out, &err), 64); /* a usage error */
    assert_non_null(strstr(err, "-o FILE"));
    free(out);
    free(err);
}

/* `gpufl report SESSIONS... --format html -o FILE` on two recorded
 * sessions (the export fixture's and the flight fixture's) writes the
 * page, a lane for each. */
static void test_cli_writes_page(void **state)
{
    (void)state;
    char dir[4200], flight[4096], out_path[4200];
    snprintf(dir, sizeof dir, "%s/r0", tmp);
    assert_int_equal(mkdir(dir, 0755), 0);
    char *s0 = tu_export_fixture(dir);
    ff_write(tmp, "r1", flight);
    snprintf(out_path, sizeof out_path, "%s/job.html", tmp);
    const char *args[] = {s0, flight, "--mixed", "--format", "html", "-o", out_path, NULL};
    char *out = NULL, *err = NULL;
    int rc = tu_run_subcommand(GFL_CLI, "report", args, &out, &err);
    if (rc != 0)
        fail_msg("gpufl report exited %d: %s", rc, err);
    char *page = tu_read_file(out_path, NULL);
    assert_non_null(page);
    char why[200];
    const char *bad = unbalanced(page, why, sizeof why);
    if (bad)
        fail_msg("page not well formed: %s", bad);
    assert_int_equal(count(page, "<g class=\"lane\""), 2);
    assert_int_equal(count(page, "<title>session: "), 2);    /* each session's span, its lane's only mark */
    assert_non_null(strstr(page, "<section id=imbalance>")); /* kernels that ran on one rank only */
    free(page);
    free(out);
    free(err);
    free(s0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_top_and_unranked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_job_stays_small, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_needs_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_writes_page, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
