/*
 * The job analyses (src/analyze/ana_job.h) on rank digests built by hand:
 * alignment onto the first rank's clock, collectives matched rank to rank,
 * stragglers and load imbalance.
 *
 * Why: a job report is only as right as the time line it puts the ranks
 * on and the collectives it pairs up. A shift of the wrong sign, an NTP
 * error left out of the bound, an NCCL residual applied to a rank of the
 * first rank's host (where CLOCK_MONOTONIC is exact and the residual is
 * only a check), a collective paired with the wrong one after a kind
 * mismatch, or a straggler counted on the rank that waited all make a
 * plausible report that blames the wrong rank. The digests here carry
 * values chosen so every expected number is exact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "analyze/ana_job.h"
#include "analyze/ana_nccl.h"

#define MS 1000000ull
#define US 1000ull

/* A rank's digest with its strings as gpufl__job_rank_digest leaves them. */
static void mk_rank(gpufl__job_rank *r, int64_t rank, const char *host)
{
    memset(r, 0, sizeof *r);
    r->str = malloc(sizeof *r->str);
    assert_non_null(r->str);
    r->str[0] = strdup("");
    r->nstr = 1;
    r->path = strdup("/nowhere");
    r->host = strdup(host);
    r->job_id = strdup("job");
    r->launcher = strdup("torchrun");
    r->session_id = strdup("s");
    r->rank = rank;
    r->local_rank = r->world_size = -1;
    r->ntp_maxerror_ns = GPUFL_JOB_UNKNOWN_ERROR;
}

static void free_ranks(gpufl__job_rank *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gpufl__job_rank_free(&r[i]);
}

static gpufl__job_coll *add_coll(gpufl__job_rank *r, uint32_t stream, uint8_t coll, uint64_t start, uint64_t end)
{
    gpufl__job_coll *q = realloc(r->coll, (r->ncoll + 1) * sizeof *q);
    assert_non_null(q);
    r->coll = q;
    q[r->ncoll] = (gpufl__job_coll){.start_ns = start, .end_ns = end, .stream = stream, .coll = coll};
    r->nccl_kernels = r->ncoll + 1;
    return &q[r->ncoll++];
}

static void add_kt(gpufl__job_rank *r, const char *name, uint64_t total)
{
    gpufl__job_kernel_time *q = realloc(r->kt, (r->nkt + 1) * sizeof *q);
    assert_non_null(q);
    r->kt = q;
    uint32_t id = gpufl__job_str(r, name);
    assert_true(id != 0);
    q[r->nkt++] = (gpufl__job_kernel_time){.name = id, .count = 1, .total_ns = total};
}

/* ---- alignment -------------------------------------------------------------- */

static void align_same_host(void **state)
{
    (void)state;
    gpufl__job_rank r[2];
    mk_rank(&r[0], 0, "node-a");
    mk_rank(&r[1], 1, "node-a");
    r[0].has_mono = r[1].has_mono = true;
    r[0].mono_offset_ns = 1000;
    r[0].clock_uncertainty_ns = 100;
    r[1].mono_offset_ns = 5 * (int64_t)MS;
    r[1].clock_uncertainty_ns = 200;
    /* wall offsets and NTP are ignored on one host */
    r[0].wall_offset_ns = 77;
    r[1].wall_offset_ns = 999999999;
    r[1].ntp_maxerror_ns = 4 * MS;
    gpufl__job_align(r, 2);
    assert_int_equal(r[0].shift_ns, 0);
    assert_int_equal(r[0].align_error_ns, 0);
    assert_string_equal(r[0].align_method, "reference");
    assert_int_equal(r[1].shift_ns, 5 * (int64_t)MS - 1000);
    assert_int_equal(r[1].align_error_ns, 300);
    assert_string_equal(r[1].align_method, "same host: CLOCK_MONOTONIC");
    assert_int_equal(r[1].nccl_matched, 0);
    assert_false(r[1].nccl_applied);
    free_ranks(r, 2);
}

static void align_other_hosts(void **state)
{
    (void)state;
    gpufl__job_rank r[4];
    mk_rank(&r[0], 0, "node-a");
    mk_rank(&r[1], 1, "node-b");
    mk_rank(&r[2], 2, "node-c");
    mk_rank(&r[3], 3, "node-d");
    for (int i = 0; i < 3; i++)
        r[i].has_mono = true;
    r[0].wall_offset_ns = 1700000000 * (int64_t)1000000000;
    r[0].mono_offset_ns = 5;
    r[0].clock_uncertainty_ns = 100;
    r[0].ntp_maxerror_ns = 1 * MS;
    r[0].ntp_synchronised = true;
    /* node-b: NTP says 2 ms */
    r[1].wall_offset_ns = r[0].wall_offset_ns + 40 * (int64_t)MS;
    r[1].mono_offset_ns = 123456; /* another host's CLOCK_MONOTONIC tells nothing */
    r[1].clock_uncertainty_ns = 50;
    r[1].ntp_maxerror_ns = 2 * MS;
    r[1].ntp_synchronised = true;
    /* node-c: no NTP state */
    r[2].wall_offset_ns = r[0].wall_offset_ns - 3 * (int64_t)MS;
    r[2].clock_uncertainty_ns = 10;
    /* node-d: an older session without clock pairs */
    r[3].wall_offset_ns = r[0].wall_offset_ns + 1;
    r[3].clock_uncertainty_ns = MS;
    r[3].ntp_maxerror_ns = 0;
    gpufl__job_align(r, 4);
    assert_int_equal(r[1].shift_ns, 40 * (int64_t)MS);
    assert_int_equal(r[1].align_error_ns, 3 * MS + 150);
    assert_string_equal(r[1].align_method, "other host: CLOCK_REALTIME (NTP)");
    assert_int_equal(r[2].shift_ns, -3 * (int64_t)MS);
    assert_true(r[2].align_error_ns == GPUFL_JOB_UNKNOWN_ERROR);
    assert_string_equal(r[2].align_method, "other host: CLOCK_REALTIME (NTP)");
    assert_int_equal(r[3].shift_ns, 1);
    assert_int_equal(r[3].align_error_ns, 1 * MS + 0 + MS + 100);
    assert_string_equal(r[3].align_method, "session start (wall clock)");
    for (int i = 1; i < 4; i++)
        assert_false(r[i].nccl_applied);
    free_ranks(r, 4);
}

/* Rank 0 and 1 on node-a, rank 2 on node-b. Their collectives' ends are
 * rank 0's plus a residual and a deviation per collective: the median
 * deviation 0, the median absolute deviation 10 ns. */
static void align_nccl_refines_other_hosts_only(void **state)
{
    (void)state;
    static const int64_t dev[5] = {0, 10, -10, 20, -30};
    const int64_t s1 = 2 * (int64_t)MS, s2 = 500 * (int64_t)MS, res1 = 3000, res2 = 7000;
    gpufl__job_rank r[3];
    mk_rank(&r[0], 0, "node-a");
    mk_rank(&r[1], 1, "node-a");
    mk_rank(&r[2], 2, "node-b");
    for (int i = 0; i < 3; i++)
        r[i].has_mono = true;
    r[1].mono_offset_ns = s1;
    r[1].clock_uncertainty_ns = 40;
    r[2].wall_offset_ns = s2;
    r[2].ntp_maxerror_ns = 5 * MS;
    r[0].ntp_maxerror_ns = 5 * MS;
    for (int k = 0; k < 5; k++) {
        uint64_t end0 = 1000 * MS + (uint64_t)k * 10 * MS;
        add_coll(&r[0], 0, GFL_NCCL_ALL_REDUCE, end0 - 100 * US, end0);
        uint64_t e1 = (uint64_t)((int64_t)end0 - s1 + res1 + dev[k]);
        add_coll(&r[1], 0, GFL_NCCL_ALL_REDUCE, e1 - 100 * US, e1);
        uint64_t e2 = (uint64_t)((int64_t)end0 - s2 + res2 + dev[(k + 2) % 5]);
        add_coll(&r[2], 0, GFL_NCCL_ALL_REDUCE, e2 - 100 * US, e2);
    }
    gpufl__job_align(r, 3);
    /* node-a: CLOCK_MONOTONIC stands, NCCL only reported */
    assert_int_equal(r[1].shift_ns, s1);
    assert_int_equal(r[1].align_error_ns, 40);
    assert_string_equal(r[1].align_method, "same host: CLOCK_MONOTONIC");
    assert_int_equal(r[1].nccl_residual_ns, res1);
    assert_int_equal(r[1].nccl_spread_ns, 10);
    assert_int_equal(r[1].nccl_matched, 5);
    assert_false(r[1].nccl_applied);
    /* node-b: the residual taken off, the spread its error */
    assert_int_equal(r[2].shift_ns, s2 - res2);
    assert_int_equal(r[2].nccl_residual_ns, res2);
    assert_int_equal(r[2].nccl_spread_ns, 10);
    assert_int_equal(r[2].nccl_matched, 5);
    assert_true(r[2].nccl_applied);
    assert_int_equal(r[2].align_error_ns, 10);
    assert_string_equal(r[2].align_method, "other host: CLOCK_REALTIME, refined by NCCL");
    /* after it, rank 2's ends sit on rank 0's to within the deviation */
    for (int k = 0; k < 5; k++) {
        int64_t d = (int64_t)r[2].coll[k].end_ns + r[2].shift_ns - (int64_t)r[0].coll[k].end_ns;
        assert_int_equal(d, dev[(k + 2) % 5]);
    }
    assert_false(r[0].nccl_applied);
    assert_int_equal(r[0].shift_ns, 0);
    free_ranks(r, 3);
}

/* ---- matching --------------------------------------------------------------- */

/* Two streams interleaved in the coll arrays; stream 0's third collective
 * is an AllGather on rank 0 and a ReduceScatter on rank 1. */
static void match_per_stream_until_kinds_differ(void **state)
{
    (void)state;
    gpufl__job_rank r[2];
    mk_rank(&r[0], 0, "h");
    mk_rank(&r[1], 1, "h");
    const uint8_t AR = GFL_NCCL_ALL_REDUCE, AG = GFL_NCCL_ALL_GATHER, RS = GFL_NCCL_REDUCE_SCATTER,
                  BC = GFL_NCCL_BROADCAST;
    /* rank 0: s0 AR, s1 BC, s0 AR, s1 BC, s0 AG, s1 BC, s0 AR */
    add_coll(&r[0], 0, AR, 1, 2);
    add_coll(&r[0], 1, BC, 3, 4);
    add_coll(&r[0], 0, AR, 5, 6);
    add_coll(&r[0], 1, BC, 7, 8);
    add_coll(&r[0], 0, AG, 9, 10);
    add_coll(&r[0], 1, BC, 11, 12);
    add_coll(&r[0], 0, AR, 13, 14);
    /* rank 1: s1 BC, s0 AR, s0 AR, s1 BC, s0 RS, s0 AR (two BCs only) */
    add_coll(&r[1], 1, BC, 1, 2);
    add_coll(&r[1], 0, AR, 3, 4);
    add_coll(&r[1], 0, AR, 5, 6);
    add_coll(&r[1], 1, BC, 7, 8);
    add_coll(&r[1], 0, RS, 9, 10);
    add_coll(&r[1], 0, AR, 11, 12);
    gpufl__job_matches m;
    assert_int_equal(gpufl__job_match_collectives(r, 2, &m), 0);
    assert_int_equal(m.nranks, 2);
    assert_int_equal(m.n, 4);
    static const uint32_t stream[4] = {0, 0, 1, 1}, seq[4] = {0, 1, 0, 1};
    static const size_t at0[4] = {0, 2, 1, 3}, at1[4] = {1, 2, 0, 3};
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal(m.m[k].stream, stream[k]);
        assert_int_equal(m.m[k].seq, seq[k]);
        assert_int_equal(m.m[k].at[0], at0[k]);
        assert_int_equal(m.m[k].at[1], at1[k]);
        assert_int_equal(r[0].coll[m.m[k].at[0]].coll, r[1].coll[m.m[k].at[1]].coll);
    }
    assert_non_null(strstr(m.note, "NCCL stream 0"));
    assert_non_null(strstr(m.note, "collective 3"));
    assert_non_null(strstr(m.note, "rank 1"));
    gpufl__job_matches_free(&m);

    /* one rank: nothing to match; kinds that agree: no note */
    assert_int_equal(gpufl__job_match_collectives(r, 1, &m), 0);
    assert_int_equal(m.n, 0);
    gpufl__job_matches_free(&m);
    r[1].coll[4].coll = AG;
    assert_int_equal(gpufl__job_match_collectives(r, 2, &m), 0);
    assert_int_equal(m.n, 6); /* stream 0: 4; stream 1: 2 (rank 1 has 2) */
    assert_string_equal(m.note, "");
    gpufl__job_matches_free(&m);
    free_ranks(r, 2);
}

/* Every stream's first collective differs in kind: nothing matches, which
 * is no error (a stream that matched nothing once grew no storage, and a
 * second such stream freed it through realloc(p, 0)). */
static void match_nothing_on_two_streams(void **state)
{
    (void)state;
    gpufl__job_rank r[2];
    mk_rank(&r[0], 0, "h");
    mk_rank(&r[1], 1, "h");
    add_coll(&r[0], 0, GFL_NCCL_ALL_REDUCE, 1, 2);
    add_coll(&r[0], 1, GFL_NCCL_BROADCAST, 3, 4);
    add_coll(&r[1], 0, GFL_NCCL_ALL_GATHER, 1, 2);
    add_coll(&r[1], 1, GFL_NCCL_REDUCE_SCATTER, 3, 4);
    gpufl__job_matches m;
    assert_int_equal(gpufl__job_match_collectives(r, 2, &m), 0);
    assert_int_equal(m.n, 0);
    assert_non_null(strstr(m.note, "NCCL stream 0: collective 1"));
    gpufl__job_matches_free(&m);
    gpufl__job_report rep;
    assert_int_equal(gpufl__job_report_build(r, 2, &rep), 0);
    assert_int_equal(rep.stragglers.nlate, 0);
    gpufl__job_report_free(&rep);
    free_ranks(r, 2);
}

/* ---- stragglers ------------------------------------------------------------- */

#define NCOLL 50

/* When rank r reaches collective k on the job's time line: within 0.1 ms
 * of k * 50 ms, and rank 2 20 ms later on every 5th. */
static int64_t arrival(size_t r, int k)
{
    int64_t t = (int64_t)k * 50 * (int64_t)MS + (int64_t)r * 30 * (int64_t)US + (k % 3) * 10 * (int64_t)US;
    if (r == 2 && k % 5 == 4)
        t += 20 * (int64_t)MS;
    return t;
}

static void stragglers_every_fifth(void **state)
{
    (void)state;
    static const int64_t shift[3] = {0, -7 * (int64_t)MS, 900 * (int64_t)MS};
    gpufl__job_rank r[3];
    for (size_t i = 0; i < 3; i++) {
        mk_rank(&r[i], (int64_t)i, "h");
        r[i].shift_ns = shift[i];
        for (int k = 0; k < NCOLL; k++) {
            /* session times: the job's minus the rank's shift */
            uint64_t start = (uint64_t)(arrival(i, k) + 1000 * (int64_t)MS - shift[i]);
            gpufl__job_coll *c = add_coll(&r[i], 0, GFL_NCCL_ALL_REDUCE, start, start + 200 * US);
            c->step = (uint32_t)k + 1;
            /* launched 300 us before it started; the late rank's queue added 2 ms on top of its launch */
            c->api_ns = start - 300 * US - (i == 2 && k % 5 == 4 ? 2 * MS : 0);
        }
    }
    gpufl__job_matches m;
    assert_int_equal(gpufl__job_match_collectives(r, 3, &m), 0);
    assert_int_equal(m.n, NCOLL);
    gpufl__job_stragglers s;
    assert_int_equal(gpufl__job_find_stragglers(r, 3, &m, GPUFL_JOB_STRAGGLER_NS, &s), 0);
    assert_int_equal(s.threshold_ns, GPUFL_JOB_STRAGGLER_NS);
    assert_int_equal(s.nlate, NCOLL / 5);
    for (size_t i = 0; i < s.nlate; i++) {
        const gpufl__job_late *l = &s.late[i];
        int k = (int)m.m[l->match].seq;
        assert_int_equal(l->rank, 2);
        assert_int_equal(k % 5, 4);
        int64_t next = arrival(0, k) > arrival(1, k) ? arrival(0, k) : arrival(1, k);
        int64_t first = arrival(0, k) < arrival(1, k) ? arrival(0, k) : arrival(1, k);
        assert_int_equal(l->late_ns, (uint64_t)(arrival(2, k) - next));
        assert_int_equal(l->wait_ns, (uint64_t)(arrival(2, k) - first));
        assert_true(l->late_ns > 20 * MS - 100 * US && l->late_ns < 20 * MS + 100 * US);
        assert_int_equal(l->step, (uint32_t)k + 1);
        assert_int_equal(l->launch_late_ns, l->late_ns - 2 * MS);   /* the launch calls, compared the same way */
        assert_true(i == 0 || s.late[i - 1].late_ns >= l->late_ns); /* largest first */
    }
    /* per rank: only rank 2 late; waited = the latest arrival minus its own, summed */
    uint64_t waited[3] = {0};
    for (int k = 0; k < NCOLL; k++) {
        int64_t last = arrival(0, k);
        for (size_t i = 1; i < 3; i++)
            if (arrival(i, k) > last)
                last = arrival(i, k);
        for (size_t i = 0; i < 3; i++)
            waited[i] += (uint64_t)(last - arrival(i, k));
    }
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(s.per_rank[i].waited_ns, waited[i]);
        assert_int_equal(s.per_rank[i].times_late, i == 2 ? NCOLL / 5 : 0);
    }
    uint64_t total = 0, max = 0;
    for (size_t i = 0; i < s.nlate; i++) {
        total += s.late[i].late_ns;
        max = s.late[i].late_ns > max ? s.late[i].late_ns : max;
    }
    assert_int_equal(s.per_rank[2].total_late_ns, total);
    assert_int_equal(s.per_rank[2].max_late_ns, max);
    gpufl__job_stragglers_free(&s);
    gpufl__job_matches_free(&m);
    free_ranks(r, 3);
}

/* ---- imbalance -------------------------------------------------------------- */

static void imbalance_with_missing_ranks(void **state)
{
    (void)state;
    gpufl__job_rank r[3];
    for (size_t i = 0; i < 3; i++)
        mk_rank(&r[i], (int64_t)i, "h");
    /* kt sorted by name on each rank, as the digest leaves it */
    add_kt(&r[0], "gemm", 100);
    add_kt(&r[0], "relu", 10);
    add_kt(&r[1], "relu", 10);
    add_kt(&r[2], "gemm", 300);
    add_kt(&r[2], "only_here", 50);
    add_kt(&r[2], "relu", 40);
    gpufl__job_imbalance b;
    assert_int_equal(gpufl__job_find_imbalance(r, 3, &b), 0);
    assert_int_equal(b.n, 3);
    /* excess over the mean: gemm 300 - 133, only_here 50 - 16, relu 40 - 20 */
    assert_string_equal(b.row[0].name, "gemm");
    assert_int_equal(b.row[0].mean_ns, 133);
    assert_int_equal(b.row[0].max_ns, 300);
    assert_int_equal(b.row[0].max_rank, 2);
    assert_int_equal(b.row[0].min_ns, 0);
    assert_int_equal(b.row[0].min_rank, 1); /* the rank that never ran it */
    assert_int_equal(b.row[0].on_ranks, 2);
    assert_string_equal(b.row[1].name, "only_here");
    assert_int_equal(b.row[1].mean_ns, 16);
    assert_int_equal(b.row[1].max_rank, 2);
    assert_int_equal(b.row[1].min_ns, 0);
    assert_int_equal(b.row[1].min_rank, 0);
    assert_int_equal(b.row[1].on_ranks, 1);
    assert_string_equal(b.row[2].name, "relu");
    assert_int_equal(b.row[2].mean_ns, 20);
    assert_int_equal(b.row[2].max_ns, 40);
    assert_int_equal(b.row[2].max_rank, 2);
    assert_int_equal(b.row[2].min_ns, 10);
    assert_int_equal(b.row[2].min_rank, 0);
    assert_int_equal(b.row[2].on_ranks, 3);
    gpufl__job_imbalance_free(&b);
    /* one rank: nothing to compare */
    assert_int_equal(gpufl__job_find_imbalance(r, 1, &b), 0);
    assert_int_equal(b.n, 0);
    gpufl__job_imbalance_free(&b);
    free_ranks(r, 3);
}

/* The whole analysis in one call, as the CLI makes it. */
static void report_build_runs_all(void **state)
{
    (void)state;
    gpufl__job_rank r[2];
    mk_rank(&r[0], 0, "h");
    mk_rank(&r[1], 1, "h");
    r[0].has_mono = r[1].has_mono = true;
    r[1].mono_offset_ns = 10 * (int64_t)MS;
    add_coll(&r[0], 0, GFL_NCCL_ALL_REDUCE, 100 * MS, 105 * MS);
    /* rank 1 reaches it 3 ms later on the job's time line */
    add_coll(&r[1], 0, GFL_NCCL_ALL_REDUCE, 93 * MS, 95 * MS);
    add_kt(&r[0], "k", 5);
    add_kt(&r[1], "k", 7);
    gpufl__job_report rep;
    assert_int_equal(gpufl__job_report_build(r, 2, &rep), 0);
    assert_int_equal(r[1].shift_ns, 10 * (int64_t)MS);
    assert_int_equal(rep.matches.n, 1);
    assert_int_equal(rep.stragglers.nlate, 1);
    assert_int_equal(rep.stragglers.late[0].rank, 1);
    assert_int_equal(rep.stragglers.late[0].late_ns, 3 * MS);
    assert_int_equal(rep.imbalance.n, 1);
    gpufl__job_report_free(&rep);
    free_ranks(r, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(align_same_host),
        cmocka_unit_test(align_other_hosts),
        cmocka_unit_test(align_nccl_refines_other_hosts_only),
        cmocka_unit_test(match_per_stream_until_kinds_differ),
        cmocka_unit_test(match_nothing_on_two_streams),
        cmocka_unit_test(stragglers_every_fifth),
        cmocka_unit_test(imbalance_with_missing_ranks),
        cmocka_unit_test(report_build_runs_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
