/*
 * Perfetto and Chrome JSON exports of a job (src/present/export/export_job.h):
 * the sessions of several ranks in one trace file, a process per rank.
 *
 * Why: a job's trace is only useful when every rank stays apart (its own
 * process, pid, name and order) and its events sit where the job's time
 * line puts them. Ranks that share track uuids, flow ids or interned names
 * are silently merged or mislabelled by the Perfetto UI, and a shift that
 * underflows puts a rank's kernels near 2^64 ns. Three ranks (two copies
 * of the export fixture, export_fixture.h, and the flight recorder's
 * session, flight_fixture.h) are exported with different shifts; the
 * Chrome file is parsed with jansson (every event in one of the ranks'
 * pids, process names and sort indices, each kernel at its session time
 * plus its rank's shift, flows unique across ranks); the Perfetto file is
 * decoded by the small wire-format reader below (a process descriptor per
 * rank with pid, label and sort index, uuids unique across the file, a
 * sequence per rank that clears its incremental state and interns its own
 * names, one clock snapshot, kernels at shifted times, flows that pair up
 * within a rank). Also: a shift that takes times below 0 clamps and counts
 * them; a rank whose session cannot be opened, or two ranks with one pid,
 * fail naming the problem and leave no output (nor a temporary) behind.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export_fixture.h"
#include "flight_fixture.h"
#include "gpufl/gpufl.h"
#include "present/export/export_job.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(work, "export-job")

#define NRANKS 3
#define FLIGHT_GEMM_NS 2000000ull /* flight_fixture.h: kernel "gemm" 2-3 ms */
#define FLIGHT_GEMM_END_NS 3000000ull

/* The job: rank 0 and 1 are the export fixture, rank 2 the flight session. */
typedef struct job {
    char paths[NRANKS][4200];
    char labels[NRANKS][64];
    gpufl__export_rank ranks[NRANKS];
} job;

static const int64_t shifts[NRANKS] = {0, -250000000, 999000000};

static void make_job(job *j)
{
    for (int i = 0; i < 2; i++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/r%d", work, i);
        assert_int_equal(mkdir(dir, 0755), 0);
        char *s = tu_export_fixture(dir);
        snprintf(j->paths[i], sizeof j->paths[i], "%s", s);
        free(s);
    }
    char flight[4096];
    ff_write(work, "r2", flight);
    snprintf(j->paths[2], sizeof j->paths[2], "%s", flight);
    for (int i = 0; i < NRANKS; i++) {
        snprintf(j->labels[i], sizeof j->labels[i], "rank %d (node%d, pid %d)", i, i, 4242 + i);
        j->ranks[i] = (gpufl__export_rank){j->paths[i], (uint32_t)i + 1, j->labels[i], i, shifts[i]};
    }
}

/* The kernel that every rank has, at its session time. */
static const char *gemm_name(int rank) { return rank < 2 ? "gemm<float, 128>" : "gemm"; }
static uint64_t gemm_ns(int rank) { return rank < 2 ? FIX_US(250) : FLIGHT_GEMM_NS; }
static uint64_t gemm_end_ns(int rank) { return rank < 2 ? FIX_US(350) : FLIGHT_GEMM_END_NS; }

/* No file in dir whose name holds ".tmp." (an export's temporary). */
static void assert_no_temporary(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp."))
            fail_msg("a temporary was left behind: %s/%s", dir, e->d_name);
    closedir(d);
}

/* ---- Chrome JSON ------------------------------------------------------------ */

static uint64_t ns_of(json_t *ev, const char *key)
{
    json_t *v = json_object_get(ev, key);
    assert_true(json_is_number(v));
    double ns = json_number_value(v) * 1000.0;
    assert_true(ns >= 0);
    return (uint64_t)(ns + 0.5);
}

static int rank_of_pid(json_int_t pid)
{
    for (int i = 0; i < NRANKS; i++)
        if (pid == i + 1)
            return i;
    return -1;
}

static json_t *chrome_job(const job *j, const char *out, gpufl__export_result *r)
{
    char err[1024];
    if (gpufl__export_chrome_job(j->ranks, NRANKS, out, r, err, sizeof err) != 0)
        fail_msg("chrome job export: %s", err);
    json_error_t e;
    json_t *doc = json_load_file(out, 0, &e);
    if (!doc)
        fail_msg("%s is not JSON: line %d: %s", out, e.line, e.text);
    return doc;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_chrome(void **state)
{
    (void)state;
    job j;
    make_job(&j);
    char out[4200];
    snprintf(out, sizeof out, "%s/job.json", work);
    gpufl__export_result r;
    json_t *doc = chrome_job(&j, out, &r);
    assert_int_equal(r.clamped, 0);
    json_t *events = json_object_get(doc, "traceEvents");
    assert_true(json_is_array(events));
    assert_int_equal(json_array_size(events), r.packets);

    int named[NRANKS] = {0}, sorted[NRANKS] = {0}, gemms[NRANKS] = {0}, streams[NRANKS] = {0};
    size_t nflows = 0, nends = 0;
    uint64_t *flows = calloc(json_array_size(events), sizeof *flows);
    uint64_t *ends = calloc(json_array_size(events), sizeof *ends);
    assert_true(flows && ends);
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        json_int_t pid = tu_int(ev, "pid");
        int rank = rank_of_pid(pid);
        if (rank < 0)
            fail_msg("event %zu has pid %lld, not a rank's", i, (long long)pid);
        const char *ph = tu_str(ev, "ph"), *name = tu_str(ev, "name");
        json_t *args = json_object_get(ev, "args");
        if (!strcmp(ph, "M") && !strcmp(name, "process_name")) {
            assert_string_equal(tu_str(args, "name"), j.labels[rank]);
            named[rank]++;
        } else if (!strcmp(ph, "M") && !strcmp(name, "thread_name") &&
                   !strcmp(tu_str(args, "name"), "GPU 0 stream 7")) {
            /* the rank's GPU is threads of its process, named in full */
            streams[rank]++;
        } else if (!strcmp(ph, "M") && !strcmp(name, "process_sort_index")) {
            assert_int_equal(tu_int(args, "sort_index"), rank);
            sorted[rank]++;
        } else if (!strcmp(ph, "X") && !strcmp(name, gemm_name(rank))) {
            /* its session time plus its rank's shift, exact to the ns */
            assert_int_equal(ns_of(ev, "ts"), gemm_ns(rank) + (uint64_t)shifts[rank]);
            assert_int_equal(ns_of(ev, "dur"), gemm_end_ns(rank) - gemm_ns(rank));
            gemms[rank]++;
        } else if (!strcmp(ph, "s")) {
            flows[nflows++] = (uint64_t)tu_int(ev, "id");
        } else if (!strcmp(ph, "f")) {
            ends[nends++] = (uint64_t)tu_int(ev, "id");
        }
    }
    for (int k = 0; k < NRANKS; k++) {
        assert_int_equal(named[k], 1);
        assert_int_equal(sorted[k], 1);
        assert_int_equal(gemms[k], 1);
        assert_int_equal(streams[k], 1);
    }
    /* the fixture's 4 launches twice, the flight session's 2: every flow
     * once, and each ends where one starts */
    assert_int_equal(nflows, 2 * FIX_FLOWS + 2);
    assert_int_equal(nends, nflows);
    qsort(flows, nflows, sizeof *flows, cmp_u64);
    qsort(ends, nends, sizeof *ends, cmp_u64);
    for (size_t f = 0; f < nflows; f++) {
        assert_true(f == 0 || flows[f] != flows[f - 1]);
        assert_int_equal(flows[f], ends[f]);
    }
    free(flows);
    free(ends);

    /* otherData lists the ranks: their session and shift */
    json_t *ranks = json_object_get(json_object_get(doc, "otherData"), "ranks");
    assert_int_equal(json_array_size(ranks), NRANKS);
    for (int k = 0; k < NRANKS; k++) {
        json_t *rk = json_array_get(ranks, (size_t)k);
        assert_int_equal(tu_int(rk, "pid"), k + 1);
        assert_string_equal(tu_str(rk, "label"), j.labels[k]);
        assert_int_equal(tu_int(rk, "shift_ns"), shifts[k]);
    }
    assert_string_equal(tu_str(json_array_get(ranks, 0), "session_id"), "fixture-1");
    assert_string_equal(tu_str(json_array_get(ranks, 0), "host"), "node1");
    json_decref(doc);
}

/* A shift that takes a rank's first times below 0 writes them as 0 and
 * counts them; the rest keep their shifted times. */
static void test_clamped(void **state)
{
    (void)state;
    job j;
    make_job(&j);
    /* rank 1's time 300 µs becomes 0: its "gemm" (250..350 µs) starts
     * before, "relu" (300..380 µs) exactly there */
    j.ranks[1].shift_ns = -(int64_t)FIX_US(300);
    char out[4200];
    snprintf(out, sizeof out, "%s/clamped.json", work);
    gpufl__export_result r;
    json_t *doc = chrome_job(&j, out, &r);
    assert_true(r.clamped > 0);
    size_t i;
    json_t *ev;
    int seen = 0;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, ev)
    {
        if (tu_int(ev, "pid") != 2 || strcmp(tu_str(ev, "ph"), "X"))
            continue;
        if (!strcmp(tu_str(ev, "name"), "gemm<float, 128>")) {
            assert_int_equal(ns_of(ev, "ts"), 0);
            assert_int_equal(ns_of(ev, "dur"), 50000); /* its end, 350 µs, is 50 µs after */
            seen++;
        } else if (!strcmp(tu_str(ev, "name"), "relu")) {
            assert_int_equal(ns_of(ev, "ts"), 0);
            assert_int_equal(ns_of(ev, "dur"), 80000);
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    json_decref(doc);

    /* the same in Perfetto, and a one-session export clamps nothing */
    snprintf(out, sizeof out, "%s/clamped.perfetto-trace", work);
    char err[1024];
    gpufl__export_result rp;
    assert_int_equal(gpufl__export_perfetto_job(j.ranks, NRANKS, out, &rp, err, sizeof err), 0);
    assert_int_equal(rp.clamped, r.clamped);
}

/* ---- Perfetto: a minimal protobuf wire-format reader -------------------------
 * Enough of https://protobuf.dev/programming-guides/encoding/ for the fields
 * checked here: varints, fixed64 and length-delimited fields, read in place. */

typedef struct pbm {
    const uint8_t *p;
    size_t n;
} pbm;

typedef struct pbf {
    uint32_t field;
    unsigned wire;
    uint64_t v; /* varint or fixed64 */
    pbm sub;    /* length-delimited: its bytes */
} pbf;

static uint64_t pb_varint(const pbm *m, size_t *off)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*off >= m->n)
            fail_msg("protobuf: varint runs past its message");
        uint8_t b = m->p[(*off)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    fail_msg("protobuf: varint longer than 10 bytes");
    return 0;
}

/* The field at *off into *f; 0 at the message's end. */
static int pb_next(const pbm *m, size_t *off, pbf *f)
{
    if (*off >= m->n)
        return 0;
    uint64_t tag = pb_varint(m, off);
    memset(f, 0, sizeof *f);
    f->field = (uint32_t)(tag >> 3);
    f->wire = (unsigned)(tag & 7);
    switch (f->wire) {
    case 0: f->v = pb_varint(m, off); break;
    case 1:
        assert_true(*off + 8 <= m->n);
        for (int i = 0; i < 8; i++)
            f->v |= (uint64_t)m->p[*off + (size_t)i] << (8 * i);
        *off += 8;
        break;
    case 2: {
        uint64_t len = pb_varint(m, off);
        assert_true(len <= m->n - *off);
        f->sub = (pbm){m->p + *off, (size_t)len};
        *off += (size_t)len;
        break;
    }
    default: fail_msg("protobuf: wire type %u", f->wire);
    }
    return 1;
}

/* The first field number `field` of m: 1 with it in *f, or 0. */
static int pb_get(pbm m, uint32_t field, pbf *f)
{
    size_t off = 0;
    while (pb_next(&m, &off, f))
        if (f->field == field)
            return 1;
    return 0;
}

static uint64_t pb_num(pbm m, uint32_t field, uint64_t absent)
{
    pbf f;
    return pb_get(m, field, &f) ? f.v : absent;
}

static int pb_str_is(pbm m, uint32_t field, const char *s)
{
    pbf f;
    return pb_get(m, field, &f) && f.sub.n == strlen(s) && !memcmp(f.sub.p, s, f.sub.n);
}

/* What the checks keep of a track and of each sequence. */
typedef struct ptrack {
    uint64_t uuid;
    uint32_t seq;
} ptrack;

typedef struct pseq {
    int seen;       /* a packet of it came */
    pbm names[256]; /* interned event names by iid */
} pseq;

static void test_perfetto(void **state)
{
    (void)state;
    job j;
    make_job(&j);
    char out[4200], err[1024];
    snprintf(out, sizeof out, "%s/job.perfetto-trace", work);
    gpufl__export_result r;
    if (gpufl__export_perfetto_job(j.ranks, NRANKS, out, &r, err, sizeof err) != 0)
        fail_msg("perfetto job export: %s", err);
    assert_int_equal(r.clamped, 0);
    size_t len;
    char *data = tu_read_file(out, &len);
    assert_non_null(data);
    assert_int_equal(len, r.bytes);

    pbm trace = {(const uint8_t *)data, len};
    static pseq seqs[NRANKS + 1];
    memset(seqs, 0, sizeof seqs);
    ptrack *tracks = calloc(len, sizeof *tracks);
    uint64_t *flows = calloc(len, sizeof *flows), *ends = calloc(len, sizeof *ends);
    assert_true(tracks && flows && ends);
    size_t ntracks = 0, nflows = 0, nends = 0, npackets = 0, snapshots = 0;
    int processes[NRANKS] = {0}, gemms[NRANKS] = {0};
    size_t off = 0;
    pbf pk;
    while (pb_next(&trace, &off, &pk)) {
        assert_int_equal(pk.field, 1); /* Trace.packet */
        npackets++;
        pbm p = pk.sub;
        uint64_t seq = pb_num(p, 10, 0);
        if (seq < 1 || seq > NRANKS)
            fail_msg("packet %zu on sequence %llu, not a rank's", npackets, (unsigned long long)seq);
        int rank = (int)seq - 1;
        pseq *sq = &seqs[seq];
        if (!sq->seen) {
            /* each rank's sequence begins by clearing its incremental state */
            assert_int_equal(pb_num(p, 13, 0) & 1, 1);
            assert_int_equal(pb_num(p, 87, 0), 1);
            sq->seen = 1;
        }
        pbf f;
        if (pb_get(p, 6, &f)) {
            /* one clock snapshot, the first rank's: its start on the job's line */
            assert_int_equal(seq, 1);
            pbf c;
            assert_true(pb_get(f.sub, 1, &c));
            assert_int_equal(pb_num(c.sub, 1, 0), 3); /* MONOTONIC */
            assert_int_equal(pb_num(c.sub, 2, 0), FIX_START_NS + (uint64_t)shifts[0]);
            snapshots++;
        }
        if (pb_get(p, 12, &f)) { /* interned data: event names of this sequence */
            size_t o2 = 0;
            pbf e;
            while (pb_next(&f.sub, &o2, &e))
                if (e.field == 2) {
                    uint64_t iid = pb_num(e.sub, 1, 0);
                    pbf nm;
                    assert_true(iid > 0 && iid < 256 && pb_get(e.sub, 2, &nm));
                    assert_null(sq->names[iid].p); /* interned once per sequence */
                    sq->names[iid] = nm.sub;
                }
        }
        if (pb_get(p, 60, &f)) { /* a track descriptor */
            uint64_t uuid = pb_num(f.sub, 1, 0);
            assert_true(uuid != 0);
            for (size_t t = 0; t < ntracks; t++)
                if (tracks[t].uuid == uuid)
                    fail_msg("track uuid %llu described twice (ranks %u and %d)", (unsigned long long)uuid,
                             tracks[t].seq - 1, rank);
            uint64_t parent = pb_num(f.sub, 5, 0);
            if (parent) { /* described before, by the same rank */
                size_t t = 0;
                while (t < ntracks && tracks[t].uuid != parent)
                    t++;
                assert_true(t < ntracks);
                assert_int_equal(tracks[t].seq, seq);
            }
            tracks[ntracks++] = (ptrack){uuid, (uint32_t)seq};
            pbf pd, td;
            if (pb_get(f.sub, 3, &pd)) {
                assert_int_equal(pb_num(pd.sub, 1, 0), j.ranks[rank].pid);
                assert_int_equal(pb_num(pd.sub, 3, UINT64_MAX), (uint64_t)rank); /* legacy_sort_index */
                assert_true(pb_str_is(pd.sub, 6, j.labels[rank]));
                processes[rank]++;
            }
            if (pb_get(f.sub, 4, &td))
                assert_int_equal(pb_num(td.sub, 1, 0), j.ranks[rank].pid);
        }
        if (pb_get(p, 11, &f)) { /* a track event */
            uint64_t track = pb_num(f.sub, 11, 0);
            size_t t = 0;
            while (t < ntracks && tracks[t].uuid != track)
                t++;
            if (t == ntracks || tracks[t].seq != seq)
                fail_msg("rank %d: an event on track %llu, not one of its own", rank, (unsigned long long)track);
            uint64_t type = pb_num(f.sub, 9, 0);
            if (type == 1 || type == 3) {
                uint64_t iid = pb_num(f.sub, 10, 0);
                if (iid == 0 || iid >= 256 || !sq->names[iid].p)
                    fail_msg("rank %d: name iid %llu not interned on its sequence", rank, (unsigned long long)iid);
                pbm nm = sq->names[iid];
                const char *want = gemm_name(rank);
                if (type == 1 && nm.n == strlen(want) && !memcmp(nm.p, want, nm.n)) {
                    assert_int_equal(pb_num(p, 8, 0), gemm_ns(rank) + (uint64_t)shifts[rank]);
                    gemms[rank]++;
                }
            }
            size_t o2 = 0;
            pbf e;
            while (pb_next(&f.sub, &o2, &e)) {
                if (e.field == 47)
                    flows[nflows++] = e.v;
                else if (e.field == 48)
                    ends[nends++] = e.v;
            }
        }
    }
    assert_int_equal(npackets, r.packets);
    assert_int_equal(snapshots, 1);
    assert_int_equal(ntracks, r.timeline.tracks);
    for (int k = 0; k < NRANKS; k++) {
        assert_true(seqs[k + 1].seen);
        assert_int_equal(processes[k], 1);
        assert_int_equal(gemms[k], 1);
    }
    assert_int_equal(nflows, 2 * FIX_FLOWS + 2);
    assert_int_equal(nends, nflows);
    qsort(flows, nflows, sizeof *flows, cmp_u64);
    qsort(ends, nends, sizeof *ends, cmp_u64);
    for (size_t k = 0; k < nflows; k++) {
        assert_true(k == 0 || flows[k] != flows[k - 1]);
        assert_int_equal(flows[k], ends[k]);
    }
    free(tracks);
    free(flows);
    free(ends);
    free(data);
}

/* ---- failures ----------------------------------------------------------------- */

typedef int (*job_exporter)(const gpufl__export_rank *, size_t, const char *, gpufl__export_result *, char *, size_t);

static void test_missing_rank(void **state)
{
    (void)state;
    job j;
    make_job(&j);
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/no-such-session", work);
    j.ranks[1].path = missing; /* the first rank is written before it fails */
    static const job_exporter fns[2] = {gpufl__export_perfetto_job, gpufl__export_chrome_job};
    for (int k = 0; k < 2; k++) {
        char out[4200], err[1024] = "";
        snprintf(out, sizeof out, "%s/missing-%d.out", work, k);
        gpufl__export_result r;
        assert_true(fns[k](j.ranks, NRANKS, out, &r, err, sizeof err) < 0);
        if (!strstr(err, missing))
            fail_msg("the message does not name %s: %s", missing, err);
        assert_false(tu_exists(out));
    }
    assert_no_temporary(work);
}

static void test_bad_ranks(void **state)
{
    (void)state;
    job j;
    make_job(&j);
    char out[4200], err[1024];
    snprintf(out, sizeof out, "%s/bad.json", work);
    gpufl__export_result r;
    j.ranks[2].pid = j.ranks[0].pid; /* two ranks would be one process */
    assert_int_equal(gpufl__export_chrome_job(j.ranks, NRANKS, out, &r, err, sizeof err), GPUFL_EINVAL);
    assert_non_null(strstr(err, "same pid"));
    assert_false(tu_exists(out));
    assert_int_equal(gpufl__export_perfetto_job(j.ranks, 0, out, &r, err, sizeof err), GPUFL_EINVAL);
    assert_false(tu_exists(out));
    assert_no_temporary(work);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_chrome, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clamped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_perfetto, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_ranks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
