/*
 * Loading a job's ranks (job_load.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/job_digest_file.h"
#include "cli/job_load.h"
#include "gpufl/trace.h"
#include "read/job_find.h"

static int by_rank(const void *a, const void *b)
{
    const gpufl__job_rank *x = a, *y = b;
    if (x->rank != y->rank) /* ranks without a number last, in path order */
        return x->rank < 0 ? 1 : y->rank < 0 ? -1 : (x->rank > y->rank) - (x->rank < y->rank);
    return strcmp(x->path, y->path);
}

static int check_ranks(const char *cmd, const gpufl__job *j, int mixed_ok)
{
    for (size_t i = 1; i < j->n; i++) {
        const gpufl__job_rank *a = &j->ranks[i - 1], *b = &j->ranks[i];
        for (size_t k = 0; k < i; k++)
            if (!strcmp(j->ranks[k].session_id, b->session_id) && b->session_id[0]) {
                fprintf(stderr, "gpufl %s: %s and %s are the same session (%s)\n", cmd, j->ranks[k].path, b->path,
                        b->session_id);
                return GFL_EXIT_FAIL;
            }
        if (a->rank >= 0 && a->rank == b->rank) {
            fprintf(stderr, "gpufl %s: %s and %s are both rank %lld: give the sessions of one run of the job\n", cmd,
                    a->path, b->path, (long long)a->rank);
            return GFL_EXIT_FAIL;
        }
        if (!mixed_ok && strcmp(j->ranks[0].job_id, b->job_id) != 0) {
            fprintf(stderr,
                    "gpufl %s: %s is of job '%s' and %s of job '%s': these are not one job "
                    "(--mixed reads them together anyway)\n",
                    cmd, j->ranks[0].path, j->ranks[0].job_id, b->path, b->job_id);
            return GFL_EXIT_FAIL;
        }
    }
    return 0;
}

/* The job directory's kept digests (cli/job_digest_file.h) when they are
 * of exactly the sessions found there, none changed since; else false,
 * saying why on stderr when there was a digest file to use. */
static bool from_digest(const char *cmd, const char *dir, const gpufl__job_paths *found, gpufl__job *out)
{
    char err[1024];
    gpufl__job_rank *r = NULL;
    size_t n = 0;
    if (!gpufl__job_digest_read(dir, &r, &n, err, sizeof err)) {
        if (err[0])
            fprintf(stderr, "gpufl %s: %s; reading the sessions\n", cmd, err);
        return false;
    }
    bool same = n == found->n;
    for (size_t i = 0; same && i < n; i++) {
        bool there = false;
        for (size_t k = 0; k < found->n && !there; k++)
            there = !strcmp(r[i].path, found->path[k]);
        same = there;
    }
    if (!same) {
        fprintf(stderr, "gpufl %s: %s/job.digest is not of the sessions there now; reading the sessions\n", cmd, dir);
        for (size_t i = 0; i < n; i++)
            gpufl__job_rank_free(&r[i]);
        free(r);
        return false;
    }
    out->ranks = r;
    out->n = n;
    return true;
}

int gpufl__job_load(const char *cmd, const char *const *paths, size_t n, int mixed_ok, gpufl__job *out)
{
    memset(out, 0, sizeof *out);
    char err[1024];
    gpufl__job_paths found;
    if (gpufl__job_find(paths, n, &found, err, sizeof err) != 0) {
        fprintf(stderr, "gpufl %s: %s\n", cmd, err);
        return GFL_EXIT_FAIL;
    }
    if (n == 1 && from_digest(cmd, paths[0], &found, out)) {
        gpufl__job_paths_free(&found);
        goto loaded;
    }
    if (!(out->ranks = calloc(found.n, sizeof *out->ranks))) {
        fprintf(stderr, "gpufl %s: out of memory\n", cmd);
        gpufl__job_paths_free(&found);
        return GFL_EXIT_FAIL;
    }
    for (size_t i = 0; i < found.n; i++) {
        gpufl_trace *t = NULL;
        if (gpufl_trace_open(found.path[i], &t, err, sizeof err) != 0) {
            fprintf(stderr, "gpufl %s: %s\n", cmd, err);
            goto fail;
        }
        int rc = gpufl__job_rank_digest(t, found.path[i], &out->ranks[out->n]);
        out->n++;
        gpufl_trace_close(t);
        if (rc != 0) {
            fprintf(stderr, "gpufl %s: out of memory reading %s\n", cmd, found.path[i]);
            goto fail;
        }
    }
    gpufl__job_paths_free(&found);
loaded:
    qsort(out->ranks, out->n, sizeof *out->ranks, by_rank);
    if (check_ranks(cmd, out, mixed_ok) != 0) {
        gpufl__job_free(out);
        return GFL_EXIT_FAIL;
    }
    return 0;
fail:
    gpufl__job_paths_free(&found);
    gpufl__job_free(out);
    return GFL_EXIT_FAIL;
}

void gpufl__job_free(gpufl__job *j)
{
    for (size_t i = 0; i < j->n; i++)
        gpufl__job_rank_free(&j->ranks[i]);
    free(j->ranks);
    memset(j, 0, sizeof *j);
}
