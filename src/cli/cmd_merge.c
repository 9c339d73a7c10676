/*
 * `gpufl merge SESSIONS... -o JOB [--mixed] [--no-trace]`: the sessions of
 * one distributed job (each a session, or a directory of them as `gpufl
 * run` leaves a launcher's ranks) made one job directory:
 *
 *   JOB/rank-<R>/           each rank's session, hard-linked (copied
 *                           across file systems), so JOB stands alone
 *   JOB/job.json            the job report (`gpufl report JOB --format
 *                           json`): ranks, alignment, stragglers, NCCL
 *   JOB/job.html            the same as one page, a timeline lane per rank
 *   JOB/job.perfetto-trace  one trace, a process per rank, on one time line
 *   JOB/job.digest          every rank's digest, so that reading JOB again
 *                           opens no session (analyze/ana_job_digest_file.h)
 *
 * The sessions are read one at a time (analyze/ana_job_load.h), so memory holds
 * one rank's session, whatever the number of ranks. Every reader that
 * takes a job (report, export) reads JOB again, the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "analyze/ana_job_digest_file.h"
#include "cli/job_output.h"
#include "core/os.h"

/* A hard link, else a copy (another file system). */
static int copy_file(const char *from, const char *to)
{
    if (link(from, to) == 0)
        return 0;
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    char buf[1 << 16];
    ssize_t n = 0;
    while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (gpufl__write_all(out, buf, (size_t)n) != (size_t)n) {
            n = -1;
            break;
        }
    int saved = errno;
    close(in);
    if (out < 0 || close(out) != 0 || n < 0) {
        errno = saved;
        return -1;
    }
    return 0;
}

/* The regular files of the directory src into the existing directory dst;
 * a session's top directory (top) also brings its sources/ (the source
 * files its reports quote), whose entries must themselves be regular
 * files, not links to them. */
static int copy_dir(const char *src, const char *dst, bool top)
{
    DIR *d = opendir(src);
    if (!d)
        return -1;
    struct dirent *e;
    struct stat st;
    char from[PATH_MAX], to[PATH_MAX];
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(from, sizeof from, "%s/%s", src, e->d_name) >= (int)sizeof from ||
            snprintf(to, sizeof to, "%s/%s", dst, e->d_name) >= (int)sizeof to) {
            errno = ENAMETOOLONG;
            rc = -1;
        } else if ((top ? stat(from, &st) : lstat(from, &st)) == 0 && S_ISREG(st.st_mode)) {
            rc = copy_file(from, to);
        } else if (top && !strcmp(e->d_name, "sources") && lstat(from, &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = mkdir(to, 0755) == 0 ? copy_dir(from, to, false) : -1;
        }
    }
    closedir(d);
    return rc;
}

/* The session at src (a directory's files and its sources/, or one file
 * and the session.json beside it) into the new directory dst. */
static int copy_session(const char *src, const char *dst)
{
    if (mkdir(dst, 0755) != 0)
        return -1;
    struct stat st;
    if (stat(src, &st) != 0)
        return -1;
    char from[PATH_MAX], to[PATH_MAX];
    if (!S_ISDIR(st.st_mode)) {
        const char *base = strrchr(src, '/');
        base = base ? base + 1 : src;
        size_t len = strlen(base);
        /* a lone .gflt is read as the session's trace.gflt */
        snprintf(to, sizeof to, "%s/%s", dst, len > 5 && !strcmp(base + len - 5, ".gflt") ? "trace.gflt" : base);
        if (copy_file(src, to) != 0)
            return -1;
        snprintf(from, sizeof from, "%.*ssession.json", (int)(base - src), src);
        snprintf(to, sizeof to, "%s/session.json", dst);
        return stat(from, &st) == 0 ? copy_file(from, to) : 0;
    }
    return copy_dir(src, dst, true);
}

static bool empty_or_missing(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT;
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)))
        empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
    closedir(d);
    return empty;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT ? 0 : -1;
}

/* After a failed merge: everything under job_dir, which was empty or
 * missing when the merge began, so all of it is the merge's (hard links to
 * the sessions, copies, job.*), and job_dir itself when the merge made it.
 * The sessions merged from are never touched: only links to them go. */
static void undo_merge(const char *job_dir, bool made_dir)
{
    DIR *d = opendir(job_dir);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            (size_t)snprintf(path, sizeof path, "%s/%s", job_dir, e->d_name) < sizeof path)
            (void)nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    closedir(d);
    if (made_dir)
        (void)rmdir(job_dir);
    fprintf(stderr, "gpufl merge: removed what it had written under %s\n", job_dir);
}

/* Each rank's session into JOB/rank-<R>; paths then name the copies. */
static int place_ranks(const char *job_dir, gpufl__job *job)
{
    for (size_t i = 0; i < job->n; i++) {
        gpufl__job_rank *k = &job->ranks[i];
        char dst[PATH_MAX];
        if (k->rank >= 0)
            snprintf(dst, sizeof dst, "%s/rank-%lld", job_dir, (long long)k->rank);
        else
            snprintf(dst, sizeof dst, "%s/session-%zu", job_dir, i);
        if (copy_session(k->path, dst) != 0) {
            fprintf(stderr, "gpufl merge: cannot copy %s into %s: %s\n", k->path, dst, strerror(errno));
            return GFL_EXIT_FAIL;
        }
        char *p = strdup(dst);
        if (!p) {
            fprintf(stderr, "gpufl merge: out of memory\n");
            return GFL_EXIT_FAIL;
        }
        free(k->path);
        k->path = p;
    }
    return 0;
}

static int merge(const char *const *paths, size_t n, const char *job_dir, bool mixed, bool trace)
{
    if (!empty_or_missing(job_dir)) {
        fprintf(stderr, "gpufl merge: %s exists and is not empty: name a new directory\n", job_dir);
        return GFL_EXIT_FAIL;
    }
    gpufl__job job;
    if (gpufl__job_load_cmd("merge", paths, n, mixed, &job) != 0)
        return GFL_EXIT_FAIL;
    int rc = GFL_EXIT_FAIL;
    gpufl__job_report r = {0};
    bool made_dir = mkdir(job_dir, 0755) == 0;
    if (!made_dir && errno != EEXIST) {
        fprintf(stderr, "gpufl merge: cannot create %s: %s\n", job_dir, strerror(errno));
        goto done;
    }
    if (place_ranks(job_dir, &job) != 0)
        goto done;
    if (gpufl__job_report_build(job.ranks, job.n, &r) != 0) {
        fprintf(stderr, "gpufl merge: out of memory analyzing the job\n");
        goto done;
    }
    char file[PATH_MAX], err[512];
    if (gpufl__job_digest_write(job_dir, job.ranks, job.n, err, sizeof err) != 0) /* only slower to read again */
        fprintf(stderr, "gpufl merge: %s; `gpufl report %s` will read the sessions instead\n", err, job_dir);
    snprintf(file, sizeof file, "%s/job.json", job_dir);
    if (gpufl__job_write_report("merge", &r, GFL_JOB_JSON, 50, file) != 0)
        goto done;
    snprintf(file, sizeof file, "%s/job.html", job_dir);
    if (gpufl__job_write_report("merge", &r, GFL_JOB_HTML, 50, file) != 0)
        goto done;
    if (trace) {
        snprintf(file, sizeof file, "%s/job.perfetto-trace", job_dir);
        if (gpufl__job_export_trace("merge", &r, GFL_JOB_PERFETTO, file) != 0)
            goto done;
    }
    printf("merged %zu rank(s) into %s (%zu collectives matched, %zu late arrivals); `gpufl report %s` tells more\n",
           job.n, job_dir, r.matches.n, r.stragglers.nlate, job_dir);
    rc = GFL_EXIT_OK;
done:
    if (rc != GFL_EXIT_OK)
        undo_merge(job_dir, made_dir);
    gpufl__job_report_free(&r);
    gpufl__job_free(&job);
    return rc;
}

int gpufl_cmd_merge(int argc, char **argv)
{
    enum { O_MIXED = 1, O_NO_TRACE };
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"mixed", no_argument, 0, O_MIXED},
                                         {"no-trace", no_argument, 0, O_NO_TRACE},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *out = NULL;
    bool mixed = false, trace = true;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case O_MIXED: mixed = true; break;
        case O_NO_TRACE: trace = false; break;
        case 'h': return gpufl__cli_help("merge");
        default:
            return gpufl__cli_usage_error("merge", "bad argument '%s'",
                                          optind > 0 && optind <= argc ? argv[optind - 1] : "");
        }
    }
    if (optind >= argc)
        return gpufl__cli_usage_error("merge", "which SESSIONS?");
    if (!out || !*out)
        return gpufl__cli_usage_error("merge", "name the job directory to write with -o JOB");
    return merge((const char *const *)argv + optind, (size_t)(argc - optind), out, mixed, trace);
}
