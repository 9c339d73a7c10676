/*
 * `gpufl merge` and `gpufl report` of a job of many ranks (issue 16): a
 * synthetic job (job_gen.c: RANKS sessions of EVENTS events, NCCL
 * collectives matching across ranks, clock pairs, two hosts) written to a
 * temporary directory, then the real CLI run on it as a child process:
 * `gpufl merge DIR -o JOB`, `gpufl report JOB` and `gpufl report JOB
 * --format json`, 3 rounds, wall time and peak RSS (wait4's ru_maxrss),
 * median [min-max].
 *
 * Baseline (the bound on memory): one rank's gpufl_trace_open() in a
 * process of its own, its wall time and peak RSS. And where the time goes:
 * every rank opened, digested (gpufl__job_rank_digest) and closed in turn
 * in one process, as cli/job_load.c does, each phase timed.
 *
 *   bench_job [RANKS [EVENTS]]   64 ranks of 1 M events by default
 *
 * The files go under $BENCH_DIR (else /tmp) and are removed at the end,
 * unless BENCH_KEEP is set.
 *
 * Target: report ≤ 10 s; peak memory that of about one rank, not RANKS.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/ana_job.h"
#include "bench_util.h"
#include "fs_util.h"
#include "gpufl/trace.h"
#include "job_gen.h"

#ifndef GFL_CLI
#define GFL_CLI "gpufl"
#endif

#define ROUNDS 3

typedef struct child_run {
    double wall_s, maxrss_mib;
    int status;
} child_run;

/* A child's ru_maxrss starts at its parent's resident size when it forks
 * (Linux carries the high-water mark across fork and exec), so the
 * children are started by a spawner forked at the start, while this
 * process is small, not by this process once it has generated a job. */
#define MAX_ARGS 8
typedef struct spawn_req {
    int argc;
    char out[4300]; /* stdout to this file; "" /dev/null */
    char argv[MAX_ARGS][4300];
} spawn_req;

static int to_spawner = -1, from_spawner = -1;

static void xfer(int fd, void *buf, size_t n, bool rd)
{
    for (size_t done = 0; done < n;) {
        ssize_t k = rd ? read(fd, (char *)buf + done, n - done) : write(fd, (char *)buf + done, n - done);
        if (k <= 0) {
            if (k < 0 && errno == EINTR)
                continue;
            if (rd && k == 0)
                _exit(0); /* the benchmark is done */
            perror("bench_job: spawner pipe");
            _exit(1);
        }
        done += (size_t)k;
    }
}

static child_run spawn_one(const spawn_req *q)
{
    child_run r = {0};
    char *argv[MAX_ARGS + 1];
    for (int i = 0; i < q->argc; i++)
        argv[i] = (char *)q->argv[i];
    argv[q->argc] = NULL;
    uint64_t t0 = bench_now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        r.status = -1;
        return r;
    }
    if (pid == 0) {
        int fd = open(q->out[0] ? q->out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0)
            _exit(127);
        execv(argv[0], argv);
        fprintf(stderr, "bench_job: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    struct rusage ru;
    while (wait4(pid, &r.status, 0, &ru) != pid)
        if (errno != EINTR) {
            r.status = -1;
            return r;
        }
    r.wall_s = (double)(bench_now_ns() - t0) / 1e9;
    r.maxrss_mib = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
    return r;
}

static void start_spawner(void)
{
    int a[2], b[2];
    if (pipe(a) != 0 || pipe(b) != 0) {
        perror("bench_job: pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench_job: fork");
        exit(1);
    }
    if (pid == 0) {
        close(a[1]);
        close(b[0]);
        static spawn_req q;
        for (;;) {
            xfer(a[0], &q, sizeof q, true);
            child_run r = spawn_one(&q);
            xfer(b[1], &r, sizeof r, false);
        }
    }
    close(a[0]);
    close(b[1]);
    to_spawner = a[1];
    from_spawner = b[0];
}

/* argv (NULL-terminated) run as a child, stdout to out (NULL: /dev/null). */
static child_run run_child(char *const *argv, const char *out)
{
    static spawn_req q;
    memset(&q, 0, sizeof q);
    while (argv[q.argc] && q.argc < MAX_ARGS) {
        snprintf(q.argv[q.argc], sizeof q.argv[0], "%s", argv[q.argc]);
        q.argc++;
    }
    snprintf(q.out, sizeof q.out, "%s", out ? out : "");
    xfer(to_spawner, &q, sizeof q, false);
    child_run r;
    xfer(from_spawner, &r, sizeof r, true);
    if (r.status != 0) {
        fprintf(stderr, "bench_job: %s %s failed (status %d)\n", argv[0], argv[1] ? argv[1] : "", r.status);
        exit(1);
    }
    return r;
}

/* Child mode --open PATH: one rank's session opened and closed, nothing else. */
static int open_one(const char *path)
{
    gpufl_trace *t;
    char err[1024];
    if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "bench_job: %s\n", err);
        return 1;
    }
    printf("%zu kernels\n", gpufl_trace_get_kernels(t)->n);
    gpufl_trace_close(t);
    return 0;
}

/* Child mode --phases DIR RANKS: cli/job_load.c's loop over the ranks,
 * each phase's seconds summed over them. */
static int phases(const char *dir, int ranks)
{
    double open_s = 0, digest_s = 0, close_s = 0;
    gpufl__job_rank *d = calloc((size_t)ranks, sizeof *d);
    for (int r = 0; r < ranks && d; r++) {
        char path[4200], err[1024];
        snprintf(path, sizeof path, "%s/rank-%02d", dir, r);
        gpufl_trace *t;
        uint64_t t0 = bench_now_ns();
        if (gpufl_trace_open(path, &t, err, sizeof err) != 0) {
            fprintf(stderr, "bench_job: %s\n", err);
            return 1;
        }
        uint64_t t1 = bench_now_ns();
        if (gpufl__job_rank_digest(t, path, &d[r]) != 0) {
            fprintf(stderr, "bench_job: digest of %s failed\n", path);
            return 1;
        }
        uint64_t t2 = bench_now_ns();
        gpufl_trace_close(t);
        uint64_t t3 = bench_now_ns();
        open_s += (double)(t1 - t0) / 1e9;
        digest_s += (double)(t2 - t1) / 1e9;
        close_s += (double)(t3 - t2) / 1e9;
    }
    for (int r = 0; r < ranks && d; r++)
        gpufl__job_rank_free(&d[r]);
    free(d);
    printf("%.3f %.3f %.3f\n", open_s, digest_s, close_s);
    return 0;
}

static void summary(const char *what, const child_run *runs, size_t n)
{
    double wall[ROUNDS], rss[ROUNDS];
    char a[64], b[64];
    for (size_t i = 0; i < n; i++) {
        wall[i] = runs[i].wall_s;
        rss[i] = runs[i].maxrss_mib;
    }
    printf("  %-34s %s s   peak RSS %s MiB\n", what, bench_spread(wall, n, 1, 2, a, sizeof a),
           bench_spread(rss, n, 1, 1, b, sizeof b));
}

static void print_file(const char *path, int max_lines)
{
    FILE *f = fopen(path, "r");
    char line[512];
    for (int i = 0; f && i < max_lines && fgets(line, sizeof line, f); i++)
        printf("    | %s", line);
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--open"))
        return open_one(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "--phases"))
        return phases(argv[2], atoi(argv[3]));
    int ranks = argc > 1 ? atoi(argv[1]) : 64;
    uint64_t events = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000ull;
    if (ranks < 1 || ranks > 100 || events < 100) {
        fprintf(stderr, "usage: bench_job [RANKS (1-100) [EVENTS (>= 100)]]\n");
        return 2;
    }
    start_spawner();
    char machine[256], fs[64], self[4200], cli[] = GFL_CLI;
    bench_machine(machine, sizeof machine);
    ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sn <= 0) {
        perror("bench_job: /proc/self/exe");
        return 1;
    }
    self[sn] = 0;
    char *tmp = bench_tmpdir(), sessions[4200], out[4200];
    bench_fs_type(tmp, fs, sizeof fs);
    snprintf(sessions, sizeof sessions, "%s/sessions", tmp);
    if (mkdir(sessions, 0755) != 0) {
        perror("bench_job: mkdir");
        return 1;
    }
    printf("bench_job: %d ranks x %llu events, %s; files on %s (%s)\n", ranks, (unsigned long long)events, machine, tmp,
           fs);

    uint64_t t0 = bench_now_ns(), bytes = 0, nccl = 0, kernels = 0, clocks = 0;
    for (int r = 0; r < ranks; r++) {
        char dir[4300];
        snprintf(dir, sizeof dir, "%s/rank-%02d", sessions, r);
        job_gen_stats st;
        job_gen_rank(dir, r, ranks, events, &st);
        bytes += st.gflt_bytes;
        nccl += st.nccl_kernels;
        kernels += st.kernels;
        clocks += st.clocks;
    }
    printf("  written in %.1f s: %.0f MiB of .gflt; per rank %llu kernels of which %llu NCCL (%.1f %%), %llu clock "
           "events; rank %d late at 1 collective in %d\n",
           (double)(bench_now_ns() - t0) / 1e9, (double)bytes / 1048576.0, (unsigned long long)(kernels / ranks),
           (unsigned long long)(nccl / ranks), 100.0 * (double)nccl / (double)kernels,
           (unsigned long long)(clocks / ranks), job_gen_late_rank(ranks), JOB_GEN_LATE_EVERY);

    /* the floor: what any child of the spawner starts at */
    char true_path[] = "/bin/true";
    char *true_argv[] = {true_path, NULL};
    child_run floor_run = run_child(true_argv, NULL);

    /* baselines: one rank's open alone; the job loader's phases */
    child_run open_runs[ROUNDS], merge_runs[ROUNDS], text_runs[ROUNDS], json_runs[ROUNDS], phase_runs[ROUNDS];
    char rank0[4300], nranks[16], phase_out[4300];
    snprintf(rank0, sizeof rank0, "%s/rank-00", sessions);
    snprintf(nranks, sizeof nranks, "%d", ranks);
    snprintf(phase_out, sizeof phase_out, "%s/phases.txt", tmp);
    double open_s[ROUNDS], digest_s[ROUNDS], close_s[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
        char *open_argv[] = {self, "--open", rank0, NULL};
        open_runs[k] = run_child(open_argv, NULL);
        char *phase_argv[] = {self, "--phases", sessions, nranks, NULL};
        phase_runs[k] = run_child(phase_argv, phase_out);
        char *text = tu_read_file(phase_out, NULL);
        if (!text || sscanf(text, "%lf %lf %lf", &open_s[k], &digest_s[k], &close_s[k]) != 3) {
            fprintf(stderr, "bench_job: no phase times\n");
            return 1;
        }
        free(text);
    }

    /* the CLI: merge, then report and report --format json of what it wrote */
    for (int k = 0; k < ROUNDS; k++) {
        char job[4300], merge_out[4300], report_out[4300];
        snprintf(job, sizeof job, "%s/job-%d", tmp, k);
        snprintf(merge_out, sizeof merge_out, "%s/merge-%d.txt", tmp, k);
        snprintf(report_out, sizeof report_out, "%s/report-%d.txt", tmp, k);
        char *merge_argv[] = {cli, "merge", sessions, "-o", job, NULL};
        merge_runs[k] = run_child(merge_argv, merge_out);
        char *text_argv[] = {cli, "report", job, NULL};
        text_runs[k] = run_child(text_argv, report_out);
        char *json_argv[] = {cli, "report", job, "--format", "json", NULL};
        snprintf(out, sizeof out, "%s/report-%d.json", tmp, k);
        json_runs[k] = run_child(json_argv, out);
        if (k == 0) {
            char trace[4400];
            struct stat sb;
            snprintf(trace, sizeof trace, "%s/job.perfetto-trace", job);
            printf("  merge said:\n");
            print_file(merge_out, 3);
            printf("  job.perfetto-trace: %.1f MiB\n", stat(trace, &sb) == 0 ? (double)sb.st_size / 1048576.0 : 0);
            printf("  report (first lines):\n");
            print_file(report_out, 40);
        }
        if (k > 0) /* keep the first job, for a look */
            tu_rm_rf(job);
    }

    char a[64], b[64], c[64];
    printf("  %d runs each, median [min-max]; peak RSS = wait4's ru_maxrss of the process (/bin/true: %.1f MiB)\n",
           ROUNDS, floor_run.maxrss_mib);
    summary("baseline: one rank's trace_open", open_runs, ROUNDS);
    summary("loader loop (open+digest+close)", phase_runs, ROUNDS);
    printf("    of which: open %s s, digest %s s, close %s s (summed over %d ranks)\n",
           bench_spread(open_s, ROUNDS, 1, 2, a, sizeof a), bench_spread(digest_s, ROUNDS, 1, 2, b, sizeof b),
           bench_spread(close_s, ROUNDS, 1, 2, c, sizeof c), ranks);
    summary("gpufl merge DIR -o JOB", merge_runs, ROUNDS);
    summary("gpufl report JOB", text_runs, ROUNDS);
    summary("gpufl report JOB --format json", json_runs, ROUNDS);
    double rep[ROUNDS], one[ROUNDS], peak[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
        rep[k] = text_runs[k].wall_s;
        one[k] = open_runs[k].maxrss_mib;
        peak[k] = text_runs[k].maxrss_mib > json_runs[k].maxrss_mib ? text_runs[k].maxrss_mib : json_runs[k].maxrss_mib;
        if (merge_runs[k].maxrss_mib > peak[k])
            peak[k] = merge_runs[k].maxrss_mib;
    }
    double rep_med = bench_median(rep, ROUNDS), one_med = bench_median(one, ROUNDS),
           peak_med = bench_median(peak, ROUNDS);
    printf("  target: report <= 10 s: %s (%.2f s); peak RSS of merge/report %.2f x one rank's open (%d ranks)\n",
           rep_med <= 10.0 ? "met" : "MISSED", rep_med, peak_med / one_med, ranks);
    if (getenv("BENCH_KEEP"))
        printf("  files kept in %s (BENCH_KEEP)\n", tmp);
    else
        tu_rm_rf(tmp);
    free(tmp);
    return 0;
}
