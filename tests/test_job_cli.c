/*
 * Jobs through the command line (src/cli/cmd_merge.c, analyze/ana_job_load.c,
 * job_output.c; report and export of a job directory): real session
 * directories of two ranks written on disk, merged, reported and exported
 * by the built `gpufl`.
 *
 * Why: a user's first contact with a job is `gpufl merge r0 r1 -o JOB`
 * then `gpufl report JOB`. The ranks must come out in rank order with
 * their own kernel counts, the clocks must be read from the sessions'
 * clock pairs (ranks 0 and 1 share a host, rank 1's session clock runs
 * 2 ms behind rank 0's), and the straggler built in (rank 1 reaches the
 * AllReduce of every 5th step 20 ms late) must be found on the right
 * steps with the right lateness. Wrong input (two sessions of one rank,
 * sessions of two jobs, an output directory in use, a directory without
 * sessions) must fail with exit 1 and name what is wrong. The library's
 * gpufl_job_report() (what Python's gpufl.report.job_report calls) must
 * give the command's bytes and refuse what the command refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ana_fixture.h"
#include "gpufl/gpufl.h"
#include "gpufl/trace.h"
#include "test_util.h"

TU_TEMP_DIR_FIXTURES(dir, "job-cli")

#define MS 1000000ull
#define US 1000ull
#define STEPS 10
#define STEP_NS (50 * MS)
#define SHIFT1 (2 * (int64_t)MS)     /* rank 1's session clock + SHIFT1 = rank 0's */
#define MONO0 5000000000ull          /* rank 0: CLOCK_MONOTONIC - session clock */
#define WALL0 1790000000000000000ull /* and CLOCK_REALTIME - session clock */
#define NCCL_NAME "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"

static int gpufl(const char *cmd, const char *const *args, char **out, char **err)
{
    return tu_run_subcommand(GFL_CLI, cmd, args, out, err);
}

/* Writes f as the NDJSON session directory path (a session_start per
 * channel, session_end at end_ns) and session.json with job_json (NULL:
 * no job). Frees f's text. */
static void write_session(af *f, const char *path, const char *sid, const char *host, int pid, uint64_t end_ns,
                          const char *job_json)
{
    static const char *const chans[3] = {"device", "scope", "system"};
    assert_int_equal(mkdir(path, 0755), 0);
    char file[4300];
    for (int c = 0; c < 3; c++) {
        snprintf(file, sizeof file, "%s/%s.log", path, chans[c]);
        FILE *out = fopen(file, "w");
        assert_non_null(out);
        fprintf(out,
                "{\"type\":\"session_start\",\"ts_ns\":%llu,\"wall_ns\":%llu,\"session_id\":\"%s\","
                "\"app_name\":\"train\",\"pid\":%d,\"host\":\"%s\",\"channel\":\"%s\",\"part\":0,"
                "\"format_version\":1,\"gpufl_version\":\"0.1.0\"}\n",
                AF_START, (unsigned long long)(AF_START + WALL0), sid, pid, host, chans[c]);
        if (f->ch[c].s)
            fputs(f->ch[c].s, out);
        fprintf(out,
                "{\"type\":\"session_end\",\"ts_ns\":%llu,\"wall_ns\":%llu,\"session_id\":\"%s\","
                "\"app_name\":\"train\",\"lines\":1,\"lost\":0}\n",
                (unsigned long long)end_ns, (unsigned long long)(end_ns + WALL0), sid);
        assert_int_equal(fclose(out), 0);
        free(f->ch[c].s);
        f->ch[c] = (af_text){0};
    }
    snprintf(file, sizeof file, "%s/session.json", path);
    char json[2048];
    snprintf(json, sizeof json, "{\"session_id\":\"%s\",\"app_name\":\"train\",\"pid\":%d,\"host\":\"%s\"%s%s}\n", sid,
             pid, host, job_json ? ",\"job\":" : "", job_json ? job_json : "");
    tu_write_file(file, json);
}

static void clock_pair(af *f, uint64_t ts, int64_t mono_off, const char *point)
{
    af_line(f, AF_SYSTEM,
            "{\"type\":\"clock\",\"ts_ns\":%llu,\"mono_ns\":%llu,\"wall_ns\":%llu,\"uncertainty_ns\":200,"
            "\"point\":\"%s\",\"ntp\":\"synchronised\",\"ntp_offset_ns\":0,\"ntp_maxerror_ns\":1000000,"
            "\"ntp_esterror_ns\":0,\"ntp_status\":0}",
            (unsigned long long)ts, (unsigned long long)((int64_t)ts + mono_off),
            (unsigned long long)((int64_t)ts + (int64_t)WALL0 + (mono_off - (int64_t)MONO0)), point);
}

/* Where rank r reaches step k's AllReduce on the job's time line (rank
 * 0's session clock): 20 ms into the step, rank 1 20 us later, or 20 ms
 * later on every 5th step. */
static uint64_t job_step(int k) { return AF_START + 10 * MS + (uint64_t)k * STEP_NS; }
static uint64_t arrival(int r, int k)
{
    if (r == 0)
        return job_step(k) + 20 * MS;
    return job_step(k) + 20 * MS + (k % 5 == 4 ? 20 * MS : 20 * US);
}
#define LATE_NS (20 * MS)

/* Rank r of job id: STEPS "train_step" scopes, each a gemm on stream 7
 * and an AllReduce on stream 13 that ends 1 ms after the latest rank
 * reaches it; rank 1 also runs "extra" 3 times. Times on the rank's own
 * session clock (job time - its shift). */
static void write_rank(const char *path, int r, const char *id, const char *sid)
{
    af f = {0};
    uint64_t shift = r ? (uint64_t)SHIFT1 : 0;
    int64_t mono_off = (int64_t)MONO0 + (r ? SHIFT1 : 0);
    uint64_t end = AF_START + 10 * MS + STEPS * STEP_NS + 5 * MS;
    clock_pair(&f, AF_START, mono_off, "start");
    for (int k = 0; k < STEPS; k++) {
        uint64_t s = job_step(k) - shift;
        af_scope(&f, 1, (uint64_t)k + 1, 0, 0, "train_step", s, s + STEP_NS - 1 * MS);
        af_kernel(&f, (af_k){.stream = 7, .start = s + 1 * MS, .end = s + 11 * MS, .name = "gemm"});
        uint64_t a = arrival(r, k) - shift, e = arrival(1, k) + 1 * MS - shift;
        af_kernel(&f, (af_k){.stream = 13, .start = a, .end = e, .name = NCCL_NAME});
        if (r == 1 && k < 3)
            af_kernel(&f, (af_k){.stream = 7, .start = s + 12 * MS, .end = s + 14 * MS, .name = "extra"});
    }
    clock_pair(&f, end, mono_off, "end");
    char job[512];
    snprintf(job, sizeof job,
             "{\"launcher\":\"torchrun\",\"rank\":%d,\"local_rank\":%d,\"world_size\":2,\"id\":\"%s\","
             "\"host\":\"node-a\"}",
             r, r, id);
    write_session(&f, path, sid, "node-a", 4000 + r, end, job);
}

static void paths(char *r0, char *r1, size_t len)
{
    snprintf(r0, len, "%s/r0", dir);
    snprintf(r1, len, "%s/r1", dir);
    write_rank(r0, 0, "jobA", "sess-0");
    write_rank(r1, 1, "jobA", "sess-1");
}

static void merged(char *job, size_t len)
{
    char r0[4200], r1[4200];
    paths(r0, r1, sizeof r0);
    snprintf(job, len, "%s/JOB", dir);
    char *out, *err;
    int rc = gpufl("merge", (const char *[]){r0, r1, "-o", job, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl merge: exit %d: %s", rc, err);
    assert_non_null(strstr(out, "merged 2 rank(s)"));
    free(out);
    free(err);
}

static void test_merge_writes_the_job(void **state)
{
    (void)state;
    char job[4200], p[4400];
    merged(job, sizeof job);
    static const char *const parts[] = {
        "rank-0", "rank-1", "job.json", "job.perfetto-trace", "rank-0/device.log", "rank-1/session.json"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", job, parts[i]);
        if (!tu_exists(p))
            fail_msg("gpufl merge left no %s", p);
    }
    /* job.json is the JSON report of the job */
    snprintf(p, sizeof p, "%s/job.json", job);
    json_error_t e;
    json_t *doc = json_load_file(p, 0, &e);
    if (!doc)
        fail_msg("%s: line %d: %s", p, e.line, e.text);
    assert_int_equal(tu_int(json_object_get(doc, "job"), "ranks"), 2);
    json_decref(doc);
}

static void test_report_json(void **state)
{
    (void)state;
    char job[4200];
    merged(job, sizeof job);
    char *out, *err;
    int rc = gpufl("report", (const char *[]){job, "--format", "json", NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl report --format json: exit %d: %s", rc, err);
    json_error_t e;
    json_t *doc = json_loads(out, 0, &e);
    if (!doc)
        fail_msg("report is not JSON: line %d: %s\n%s", e.line, e.text, out);
    json_t *jobo = json_object_get(doc, "job");
    assert_string_equal(tu_str(jobo, "id"), "jobA");
    assert_string_equal(tu_str(jobo, "launcher"), "torchrun");
    json_t *ranks = json_object_get(doc, "ranks");
    assert_int_equal(json_array_size(ranks), 2);
    for (int r = 0; r < 2; r++) {
        json_t *k = json_array_get(ranks, (size_t)r);
        assert_int_equal(tu_int(k, "rank"), r);
        assert_int_equal(tu_int(k, "local_rank"), r);
        assert_int_equal(tu_int(k, "pid"), 4000 + r);
        assert_string_equal(tu_str(k, "host"), "node-a");
        assert_int_equal(tu_int(k, "kernels"), 2 * STEPS + (r ? 3 : 0));
        assert_int_equal(tu_int(k, "nccl_kernels"), STEPS);
        assert_string_equal(tu_str(k, "step_name"), "train_step");
        assert_int_equal(tu_int(k, "steps"), STEPS);
        json_t *al = json_object_get(k, "align");
        /* one host: CLOCK_MONOTONIC, exact to the pairs' uncertainty */
        assert_int_equal(tu_int(al, "shift_ns"), r ? SHIFT1 : 0);
        assert_int_equal(tu_int(al, "error_ns"), r ? 400 : 0);
        assert_string_equal(tu_str(al, "method"), r ? "same host: CLOCK_MONOTONIC" : "reference");
        if (r) {
            assert_int_equal(tu_int(al, "nccl_matched"), STEPS);
            assert_int_equal(tu_int(al, "nccl_residual_ns"), 0); /* the ends were built equal */
            assert_false(json_is_true(json_object_get(al, "nccl_applied")));
        }
        json_t *coll = json_array_get(json_object_get(k, "collectives"), 0);
        assert_string_equal(tu_str(coll, "collective"), "AllReduce");
        assert_string_equal(tu_str(coll, "algorithm"), "Ring");
        assert_string_equal(tu_str(coll, "protocol"), "LL");
        assert_int_equal(tu_int(coll, "count"), STEPS);
        json_t *late = json_object_get(k, "late");
        assert_int_equal(tu_int(late, "times"), r ? 2 : 0);
        assert_int_equal(tu_int(late, "max_ns"), r ? (long long)LATE_NS : 0);
    }
    json_t *s = json_object_get(doc, "stragglers");
    assert_int_equal(tu_int(s, "matched_collectives"), STEPS);
    assert_true(json_is_null(json_object_get(s, "matching_note")));
    assert_int_equal(tu_int(s, "late_count"), 2);
    json_t *late = json_object_get(s, "late");
    assert_int_equal(json_array_size(late), 2);
    int steps_seen = 0;
    for (size_t i = 0; i < 2; i++) {
        json_t *l = json_array_get(late, i);
        assert_int_equal(tu_int(l, "rank"), 1);
        assert_string_equal(tu_str(l, "collective"), "AllReduce");
        assert_int_equal(tu_int(l, "late_ns"), LATE_NS);
        long long step = tu_int(l, "step");
        assert_true(step == 5 || step == 10);
        steps_seen |= step == 5 ? 1 : 2;
        assert_int_equal(tu_int(l, "seq"), step);
        int k = (int)step - 1;
        assert_int_equal(tu_int(l, "job_time_ns"), arrival(1, k));
        /* its gemm ended 11 ms into the step; the AllReduce came at 40 ms */
        assert_int_equal(tu_int(l, "gpu_idle_before_ns"), 29 * MS);
        assert_string_equal(tu_str(l, "kernel_before"), "gemm");
    }
    assert_int_equal(steps_seen, 3);
    /* "extra" ran on rank 1 only: rank 0 its minimum, 0 */
    json_t *imb = json_object_get(doc, "imbalance");
    int found = 0;
    for (size_t i = 0; i < json_array_size(imb); i++) {
        json_t *b = json_array_get(imb, i);
        if (strcmp(tu_str(b, "kernel"), "extra") != 0)
            continue;
        found = 1;
        assert_int_equal(tu_int(b, "max_rank"), 1);
        assert_int_equal(tu_int(b, "max_ns"), 6 * MS);
        assert_int_equal(tu_int(b, "min_rank"), 0);
        assert_int_equal(tu_int(b, "min_ns"), 0);
        assert_int_equal(tu_int(b, "on_ranks"), 1);
    }
    assert_true(found);
    json_decref(doc);
    free(out);
    free(err);
}

static void test_report_text(void **state)
{
    (void)state;
    char job[4200];
    merged(job, sizeof job);
    char *out, *err;
    int rc = gpufl("report", (const char *[]){job, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl report: exit %d: %s", rc, err);
    if (!strstr(out, "rank 1 was last 2 time(s), 40.00 ms in all, at most 20.00 ms") ||
        !strstr(out, "rank 1 20.00 ms late at AllReduce #5 of NCCL stream 0 in train_step 5") ||
        !strstr(out, "ranks      2 on 1 host(s)"))
        fail_msg("the text report misses the straggler:\n%s", out);
    free(out);
    free(err);
}

/* A job of ranks 1 alone (a subset of a job): its time line is rank 1's. */
static void test_report_of_a_later_rank(void **state)
{
    (void)state;
    char r0[4200], r1[4200], job[4200];
    paths(r0, r1, sizeof r0);
    snprintf(job, sizeof job, "%s/ONE", dir);
    char *out, *err;
    int rc = gpufl("merge", (const char *[]){r1, "-o", job, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl merge: exit %d: %s", rc, err);
    free(out);
    free(err);
    rc = gpufl("report", (const char *[]){job, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl report: exit %d: %s", rc, err);
    if (!strstr(out, "Alignment (onto rank 1's clock)") || !strstr(out, "one rank: nothing to compare"))
        fail_msg("the report of rank 1 alone:\n%s", out);
    free(out);
    free(err);
}

static void test_export_chrome(void **state)
{
    (void)state;
    char job[4200], file[4300];
    merged(job, sizeof job);
    snprintf(file, sizeof file, "%s/x.json", dir);
    char *out, *err;
    int rc = gpufl("export", (const char *[]){job, "-f", "chrome", "-o", file, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl export: exit %d: %s", rc, err);
    json_error_t e;
    json_t *doc = json_load_file(file, 0, &e);
    if (!doc)
        fail_msg("%s: line %d: %s", file, e.line, e.text);
    json_t *evs = json_object_get(doc, "traceEvents");
    int named[2] = {0}, nccl[2] = {0};
    size_t i;
    json_t *ev;
    json_array_foreach(evs, i, ev)
    {
        long long pid = tu_int(ev, "pid");
        if (pid != 1 && pid != 2)
            fail_msg("event %zu has pid %lld: not one of the 2 ranks'", i, pid);
        const char *name = tu_str(ev, "name"), *ph = tu_str(ev, "ph");
        if (!strcmp(ph, "M") && !strcmp(name, "process_name")) {
            char want[64];
            snprintf(want, sizeof want, "rank %lld (node-a, pid %lld)", pid - 1, 4000 + pid - 1);
            assert_string_equal(tu_str(json_object_get(ev, "args"), "name"), want);
            named[pid - 1]++;
        } else if (!strcmp(ph, "X") && !strcmp(name, NCCL_NAME)) {
            nccl[pid - 1]++;
        }
    }
    for (int r = 0; r < 2; r++) {
        assert_int_equal(named[r], 1);
        assert_int_equal(nccl[r], STEPS);
    }
    json_decref(doc);
    free(out);
    free(err);
}

/* Exit 1 and every needle in stderr. */
/* `gpufl report JOB` reads the digests merge kept, and gives what reading
 * the sessions gives; a damaged digest file, or a session changed since,
 * is said and the sessions are read instead. */
static void test_report_from_kept_digests(void **state)
{
    (void)state;
    char job[4200], digest[4400];
    merged(job, sizeof job);
    snprintf(digest, sizeof digest, "%s/job.digest", job);
    assert_true(tu_exists(digest));
    char *kept, *err;
    assert_int_equal(gpufl("report", (const char *[]){job, "--format", "json", NULL}, &kept, &err), 0);
    assert_string_equal(err, ""); /* nothing to say: the digests were used */
    free(err);
    /* damaged: one byte changed */
    FILE *f = fopen(digest, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 200, SEEK_SET), 0);
    int c = fgetc(f);
    assert_int_equal(fseek(f, 200, SEEK_SET), 0);
    fputc(c ^ 0x5a, f);
    fclose(f);
    char *read, *err2;
    assert_int_equal(gpufl("report", (const char *[]){job, "--format", "json", NULL}, &read, &err2), 0);
    if (!strstr(err2, "job.digest is damaged; reading the sessions"))
        fail_msg("a damaged job.digest was not said: %s", err2);
    assert_string_equal(read, kept); /* the same report either way */
    free(read);
    free(err2);
    /* a session changed after the merge (a file's time moved): the sessions are read */
    char job2[4300];
    snprintf(job2, sizeof job2, "%s2", job);
    assert_int_equal(gpufl("merge", (const char *[]){job, "-o", job2, "--no-trace", NULL}, &read, &err2), 0);
    free(read);
    free(err2);
    char later[4400];
    snprintf(later, sizeof later, "%s/rank-1/session.json", job2);
    struct timespec when[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    assert_int_equal(utimensat(AT_FDCWD, later, when, 0), 0);
    assert_int_equal(gpufl("report", (const char *[]){job2, "--format", "json", NULL}, &read, &err2), 0);
    if (!strstr(err2, "changed after the merge; reading the sessions"))
        fail_msg("a session changed after the merge was not said: %s", err2);
    free(read);
    free(err2);
    free(kept);
}

static void fails_naming(const char *cmd, const char *const *args, const char *n1, const char *n2)
{
    char *out, *err;
    int rc = gpufl(cmd, args, &out, &err);
    if (rc != 1 || !strstr(err, n1) || (n2 && !strstr(err, n2)))
        fail_msg("gpufl %s: exit %d, expected 1 naming %s%s%s: %s", cmd, rc, n1, n2 ? " and " : "", n2 ? n2 : "", err);
    free(out);
    free(err);
}

static void test_errors(void **state)
{
    (void)state;
    char r0[4200], r1[4200], again[4200], other[4200], job[4200], empty[4200], used[4200], file[4300];
    paths(r0, r1, sizeof r0);
    snprintf(again, sizeof again, "%s/r0-again", dir);
    write_rank(again, 0, "jobA", "sess-0b");
    snprintf(other, sizeof other, "%s/r1-other", dir);
    write_rank(other, 1, "jobB", "sess-1b");
    snprintf(job, sizeof job, "%s/J", dir);

    /* two sessions of rank 0 */
    fails_naming("merge", (const char *[]){r0, again, "-o", job, NULL}, r0, again);
    assert_false(tu_exists(job));
    /* sessions of two jobs, unless --mixed */
    fails_naming("merge", (const char *[]){r0, other, "-o", job, NULL}, r0, other);
    assert_false(tu_exists(job));
    fails_naming("report", (const char *[]){r0, other, NULL}, "jobB", "--mixed");
    char *out, *err;
    int rc = gpufl("merge", (const char *[]){r0, other, "--mixed", "-o", job, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl merge --mixed: exit %d: %s", rc, err);
    free(out);
    free(err);
    /* an output directory in use */
    snprintf(used, sizeof used, "%s/used", dir);
    assert_int_equal(mkdir(used, 0755), 0);
    snprintf(file, sizeof file, "%s/keep", used);
    tu_write_file(file, "mine\n");
    fails_naming("merge", (const char *[]){r0, r1, "-o", used, NULL}, used, "not empty");
    assert_true(tu_exists(file));
    /* a directory without sessions */
    snprintf(empty, sizeof empty, "%s/empty", dir);
    assert_int_equal(mkdir(empty, 0755), 0);
    snprintf(job, sizeof job, "%s/J2", dir);
    fails_naming("merge", (const char *[]){empty, "-o", job, NULL}, empty, "neither a session nor a job directory");
    fails_naming("merge", (const char *[]){r0, empty, "-o", job, NULL}, empty, NULL);
    assert_false(tu_exists(job));
}

/* A rank's sources/ (the source files its reports quote) comes along
 * into the job, so a merged job's reports still show the code. */
static void test_merge_keeps_sources(void **state)
{
    (void)state;
    char r0[4200], r1[4200], job[4200], p[4400];
    paths(r0, r1, sizeof r0);
    snprintf(p, sizeof p, "%s/sources", r0);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/sources/0001-k.cu", r0);
    tu_write_file(p, "__global__ void k() {}\n");
    snprintf(p, sizeof p, "%s/sources/index.json", r0);
    tu_write_file(p, "{\"version\":1,\"files\":[]}\n");
    snprintf(job, sizeof job, "%s/JOB", dir);
    char *out, *err;
    int rc = gpufl("merge", (const char *[]){r0, r1, "-o", job, NULL}, &out, &err);
    if (rc != 0)
        fail_msg("gpufl merge: exit %d: %s", rc, err);
    free(out);
    free(err);
    snprintf(p, sizeof p, "%s/rank-0/sources/0001-k.cu", job);
    char *text = tu_read_file(p, NULL);
    assert_non_null(text);
    assert_string_equal(text, "__global__ void k() {}\n");
    free(text);
    snprintf(p, sizeof p, "%s/rank-0/sources/index.json", job);
    assert_true(tu_exists(p));
    snprintf(p, sizeof p, "%s/rank-1/sources", job);
    assert_false(tu_exists(p));
}

/* A merge that fails part way (here: files limited to 2 KiB, so job.html
 * cannot be written) leaves no half-made job directory, and the sessions
 * it merged from as they were. */
static void test_failed_merge_leaves_nothing(void **state)
{
    (void)state;
    char r0[4200], r1[4200], job[4200], cmd[13000], file[4300];
    paths(r0, r1, sizeof r0);
    snprintf(job, sizeof job, "%s/J", dir);
    snprintf(cmd, sizeof cmd, "(trap '' XFSZ; ulimit -f 4; exec '%s' merge '%s' '%s' -o '%s') >/dev/null 2>&1", GFL_CLI,
             r0, r1, job);
    int status = system(cmd);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    assert_false(tu_exists(job));
    snprintf(file, sizeof file, "%s/session.json", r1);
    assert_true(tu_exists(file));
}

/* gpufl_job_report(paths, format) against `gpufl report paths --format format`. */
static void same_as_command(const char *const *paths, size_t n, const char *format)
{
    const char *args[8];
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        args[k++] = paths[i];
    args[k++] = "--format";
    args[k++] = format;
    args[k] = NULL;
    char *out, *err;
    int rc = gpufl("report", args, &out, &err);
    if (rc != 0)
        fail_msg("gpufl report: exit %d: %s", rc, err);
    char *text = NULL, why[1024] = "";
    size_t len = 0;
    rc = gpufl_job_report(paths, n, format, 0, 0, &text, &len, why, sizeof why);
    if (rc != 0)
        fail_msg("gpufl_job_report: %d: %s", rc, why);
    assert_int_equal(len, strlen(text));
    if (strcmp(text, out) != 0)
        fail_msg("gpufl_job_report (%s) differs from gpufl report:\n%s\n---\n%s", format, text, out);
    gpufl_trace_free_text(text);
    free(out);
    free(err);
}

static void test_library_report(void **state)
{
    (void)state;
    char r0[4200], r1[4200], job[4200], other[4200];
    merged(job, sizeof job);
    snprintf(r0, sizeof r0, "%s/r0", dir);
    snprintf(r1, sizeof r1, "%s/r1", dir);
    same_as_command((const char *[]){job}, 1, "text");
    same_as_command((const char *[]){job}, 1, "json");
    same_as_command((const char *[]){r0, r1}, 2, "text");

    char *text = NULL, why[1024];
    size_t len = 0;
    /* sessions of two jobs: refused, naming them, unless GPUFL_JOB_MIXED */
    snprintf(other, sizeof other, "%s/r1-other", dir);
    write_rank(other, 1, "jobB", "sess-1b");
    const char *mixed[] = {r0, other};
    assert_int_equal(gpufl_job_report(mixed, 2, "text", 0, 0, &text, &len, why, sizeof why), GPUFL_EINVAL);
    assert_null(text);
    assert_non_null(strstr(why, "jobB"));
    assert_non_null(strstr(why, other));
    assert_int_equal(gpufl_job_report(mixed, 2, "text", 0, GPUFL_JOB_MIXED, &text, &len, why, sizeof why), 0);
    assert_non_null(strstr(text, "ranks      2"));
    gpufl_trace_free_text(text);
    /* bad arguments and a path that is no session */
    const char *one[] = {job};
    assert_int_equal(gpufl_job_report(one, 1, "html", 0, 0, &text, &len, why, sizeof why), GPUFL_EINVAL);
    assert_non_null(strstr(why, "html"));
    assert_int_equal(gpufl_job_report(one, 1, "text", 10001, 0, &text, &len, why, sizeof why), GPUFL_EINVAL);
    assert_int_equal(gpufl_job_report(one, 1, "text", 0, 8, &text, &len, why, sizeof why), GPUFL_EINVAL);
    assert_int_equal(gpufl_job_report(one, 0, "text", 0, 0, &text, &len, why, sizeof why), GPUFL_EINVAL);
    char missing[4300];
    snprintf(missing, sizeof missing, "%s/no-such-session", dir);
    const char *gone[] = {missing};
    assert_int_equal(gpufl_job_report(gone, 1, "text", 0, 0, &text, &len, why, sizeof why), GPUFL_EINVAL);
    assert_non_null(strstr(why, missing));
    assert_null(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_merge_writes_the_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_of_a_later_rank, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export_chrome, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_from_kept_digests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_library_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_merge_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_keeps_sources, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
